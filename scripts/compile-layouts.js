#!/usr/bin/env node
// Compiles every `.sol` file under ROOT_DIR (each keyed by its path relative to ROOT_DIR, so
// imports such as `@openzeppelin/...` or `./interfaces/...` resolve among them) in one
// standard-JSON compilation with solc-js, selecting the AST and each contract's
// `storageLayout` (and `transientStorageLayout` from solc 0.8.27): what
// tests/live/ast_layouts.rs compares chaintrace's layouts computed from the AST with.
// Writes the compiler's output to OUT_FILE; exits non-zero on a compilation error.
//
//   node scripts/compile-layouts.js SOLC_JS_DIR ROOT_DIR OUT_FILE
const fs = require("fs");
const path = require("path");

const [solcDir, root, outFile] = process.argv.slice(2);
const solc = require(path.resolve(solcDir, "node_modules", "solc"));

function sol(dir, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sol(p, acc);
    else if (e.name.endsWith(".sol")) acc.push(p);
  }
  return acc;
}

const sources = {};
for (const f of sol(root, []).sort()) {
  sources[path.relative(root, f).split(path.sep).join("/")] = { content: fs.readFileSync(f, "utf8") };
}
const [major, minor, patch] = solc.version().split("+")[0].split(".").map(Number);
const transient = major > 0 || minor > 8 || (minor === 8 && patch >= 27);
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: false },
    outputSelection: {
      "*": {
        "": ["ast"],
        "*": transient ? ["storageLayout", "transientStorageLayout"] : ["storageLayout"],
      },
    },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  console.error(errors.map((e) => e.formattedMessage || e.message).join("\n"));
  process.exit(1);
}
fs.writeFileSync(outFile, JSON.stringify(output));
console.error(`compile-layouts: solc ${solc.version()}: ${Object.keys(sources).length} sources`);
