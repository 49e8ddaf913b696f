#!/usr/bin/env node
// A `solc` stand-in over solc-js: `solc --version` and `solc --standard-json`, as a native
// solc answers them (all chaintrace and forge ask of a compiler). Copied as `solc` beside a
// node_modules/solc by scripts/install-test-tools.sh and scripts/crosscheck-srcmap-forge.sh.
const solc = require(require("path").join(__dirname, "node_modules", "solc"));
const args = process.argv.slice(2);
if (args.includes("--version")) {
  console.log("solc, the solidity compiler commandline interface");
  console.log("Version: " + solc.version().replace("Emscripten.clang", "Linux.g++"));
} else if (args.includes("--standard-json")) {
  let input = "";
  process.stdin.on("data", (d) => (input += d));
  process.stdin.on("end", () => process.stdout.write(solc.compile(input)));
} else {
  console.error("this solc stand-in answers only --version and --standard-json");
  process.exit(1);
}
