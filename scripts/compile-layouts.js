#!/usr/bin/env node
// Compiles every `.sol` file under ROOT_DIR (each keyed by its path relative to ROOT_DIR, so
// imports such as `@openzeppelin/...` or `./interfaces/...` resolve among them) in one
// standard-JSON compilation with solc-js, selecting the AST and each contract's
// `storageLayout` (and `transientStorageLayout` from solc 0.8.27): what
// tests/live/ast_layouts.rs compares chaintrace's layouts computed from the AST with.
// With FULL (comma-separated keys), the compilation is of those sources and what they import,
// and they also get their ABI, bytecodes and metadata: a build chaintrace reads with `--abi`
// (tests/live/oz_world.rs). (solc generates code for every contract once any is asked for, and
// some of OpenZeppelin's need viaIR.) Symbolic links to directories
// are followed (a node_modules package linked in). Writes the compiler's output to OUT_FILE;
// exits non-zero on a compilation error.
//
//   node scripts/compile-layouts.js SOLC_JS_DIR ROOT_DIR OUT_FILE [FULL]
const fs = require("fs");
const path = require("path");

const [solcDir, root, outFile, full] = process.argv.slice(2);
const solc = require(path.resolve(solcDir, "node_modules", "solc"));

function sol(dir, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (fs.statSync(p).isDirectory()) sol(p, acc);
    else if (e.name.endsWith(".sol")) acc.push(p);
  }
  return acc;
}

const sources = {};
for (const f of sol(root, []).sort()) {
  sources[path.relative(root, f).split(path.sep).join("/")] = { content: fs.readFileSync(f, "utf8") };
}
// The sources `keys` import, transitively (`import "./x.sol"`, `import {A} from "@scope/y.sol"`).
function closure(keys) {
  const seen = new Set();
  const todo = [...keys];
  while (todo.length > 0) {
    const key = todo.pop();
    if (seen.has(key) || !sources[key]) continue;
    seen.add(key);
    for (const m of sources[key].content.matchAll(/^\s*import\s+(?:[^"';]*\sfrom\s+)?["']([^"']+)["']/gm)) {
      const p = m[1];
      todo.push(p.startsWith(".") ? path.posix.normalize(path.posix.join(path.posix.dirname(key), p)) : p);
    }
  }
  for (const key of Object.keys(sources)) if (!seen.has(key)) delete sources[key];
}
if (full) closure(full.split(","));

const [major, minor, patch] = solc.version().split("+")[0].split(".").map(Number);
const transient = major > 0 || minor > 8 || (minor === 8 && patch >= 27);
const layouts = transient ? ["storageLayout", "transientStorageLayout"] : ["storageLayout"];
const outputSelection = { "*": { "": ["ast"], "*": layouts } };
for (const key of full ? full.split(",") : []) {
  outputSelection[key] = {
    "*": [
      ...layouts, "abi", "metadata", "evm.bytecode.object", "evm.bytecode.sourceMap",
      "evm.deployedBytecode.object", "evm.deployedBytecode.sourceMap",
      "evm.deployedBytecode.immutableReferences",
    ],
  };
}
const input = { language: "Solidity", sources, settings: { optimizer: { enabled: false }, outputSelection } };
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  console.error(errors.map((e) => e.formattedMessage || e.message).join("\n"));
  process.exit(1);
}
fs.writeFileSync(outFile, JSON.stringify(output));
console.error(`compile-layouts: solc ${solc.version()}: ${Object.keys(sources).length} sources`);
