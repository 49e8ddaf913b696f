#!/usr/bin/env node
// Compiles every case of EDR's Solidity stack-trace suite (tests/contracts/edr/0_8, EDR's
// `test-files/0_8`) with solc-js, as EDR's runner does (hardhat-tests' stack-traces
// compilation.ts): one standard-JSON compilation per case, its sources the case directory's
// `.sol` files plus the `imports` its test.json names, each keyed by its basename; the
// optimizer off. Writes OUT/<case>/build-info.json, the compiler's input and output together
// as Hardhat's build infos hold them (what EDR's runner gives EDR; errors kept when compilation
// fails), and skips a case whose input is unchanged since the last run (OUT/<case>/input.sha256).
//
//   node scripts/compile-edr-suite.js SUITE_DIR OUT_DIR SOLC_JS_DIR
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

const [suite, out, solcDir] = process.argv.slice(2);
const solc = require(path.resolve(solcDir, "node_modules", "solc"));
// Where EDR's 0_8 folder sits in its repository: test.json `imports` are paths relative to a
// case's folder there (`/../../…/console.sol`, EDR's hardhat-tests/console.sol), read from
// the copies beside the suite (tests/contracts/edr/0_8-imports/<path in EDR's repository>).
const EDR_0_8 = "hardhat-tests/test/internal/hardhat-network/stack-traces/test-files/0_8";
const importsDir = path.join(path.dirname(suite), "0_8-imports");

function cases(dir, rel, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) cases(path.join(dir, e.name), rel ? `${rel}/${e.name}` : e.name, acc);
  }
  if (fs.existsSync(path.join(dir, "test.json"))) acc.push(rel);
  return acc;
}

let compiled = 0;
for (const rel of cases(suite, "", []).sort()) {
  const dir = path.join(suite, rel);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".sol")).map((f) => path.join(dir, f));
  const test = JSON.parse(fs.readFileSync(path.join(dir, "test.json"), "utf8"));
  // EDR adds the first transaction's `imports` that has any.
  const withImports = test.transactions.find((tx) => tx.imports !== undefined);
  for (const p of withImports ? withImports.imports : []) {
    const inEdr = path.posix.normalize(`${EDR_0_8}/${rel}${p}`);
    files.push(
      inEdr.startsWith(EDR_0_8 + "/")
        ? path.join(suite, inEdr.slice(EDR_0_8.length + 1))
        : path.join(importsDir, inEdr)
    );
  }
  const sources = {};
  for (const f of files) sources[path.basename(f)] = { content: fs.readFileSync(f, "utf8") };
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: false },
      outputSelection: {
        "*": {
          "": ["ast"],
          "*": [
            "abi", "metadata", "evm.methodIdentifiers",
            "evm.bytecode.object", "evm.bytecode.sourceMap", "evm.bytecode.linkReferences",
            "evm.deployedBytecode.object", "evm.deployedBytecode.sourceMap",
            "evm.deployedBytecode.linkReferences", "evm.deployedBytecode.immutableReferences",
            // Not EDR's: tests/live/ast_layouts.rs compares the layouts chaintrace computes from
            // the AST with solc's own for every contract of the suite.
            "storageLayout",
          ],
        },
      },
    },
  };
  const text = JSON.stringify(input);
  const digest = crypto.createHash("sha256").update("build-info\n" + solc.version() + "\n" + text).digest("hex");
  const caseOut = path.join(out, rel);
  const stamp = path.join(caseOut, "input.sha256");
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === digest) continue;
  const output = JSON.parse(solc.compile(text));
  const errors = (output.errors || []).filter((e) => e.severity === "error");
  if (errors.length === 0) delete output.errors;
  fs.mkdirSync(caseOut, { recursive: true });
  const buildInfo = {
    _format: "hh-sol-build-info-1",
    id: digest.slice(0, 32),
    solcVersion: solc.version().split("+")[0],
    solcLongVersion: solc.version(),
    input,
    output,
  };
  fs.writeFileSync(path.join(caseOut, "build-info.json"), JSON.stringify(buildInfo) + "\n");
  fs.writeFileSync(stamp, digest);
  compiled++;
}
console.error(`compile-edr-suite: solc ${solc.version()}: ${compiled} case(s) compiled`);
