#!/usr/bin/env bash
# Regenerate tests/contracts/artifacts.json from tests/contracts/*.sol with a
# PINNED solc-js (npm package `solc`), installed into a temporary directory.
# Tests never need solc: they read the committed artifacts.json.
#
#   bash scripts/build-test-contracts.sh           # rewrite artifacts.json
#   bash scripts/build-test-contracts.sh --check   # fail if it would change
set -euo pipefail

SOLC_VERSION="0.8.30"
EVM_VERSION="prague"
OPTIMIZER_RUNS=200

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/tests/contracts"
OUT="$SRC_DIR/artifacts.json"
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1

die() { echo "build-test-contracts: ERROR: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 || die "node is required"
command -v npm >/dev/null 2>&1 || die "npm is required"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "build-test-contracts: installing solc@$SOLC_VERSION (solc-js) into $TMP" >&2
( cd "$TMP" && npm init -y >/dev/null 2>&1 \
    && npm install --silent --no-audit --no-fund --save-exact "solc@$SOLC_VERSION" >/dev/null ) \
    || die "npm install solc@$SOLC_VERSION failed"

cat >"$TMP/build.js" <<'JS'
const fs = require("fs");
const path = require("path");
const solc = require(path.join(process.env.TMPDIR_SOLC, "node_modules", "solc"));
const [srcDir, out, solcVersion, evmVersion, runs] = process.argv.slice(2);

const want = solcVersion;
const got = solc.version();
if (!got.startsWith(want + "+")) {
  console.error(`solc version mismatch: want ${want}, got ${got}`);
  process.exit(1);
}

const files = fs.readdirSync(srcDir).filter((f) => f.endsWith(".sol")).sort();
const sources = {};
for (const f of files) sources[f] = { content: fs.readFileSync(path.join(srcDir, f), "utf8") };

const settings = {
  optimizer: { enabled: true, runs: Number(runs) },
  evmVersion,
  // No CBOR metadata trailer: bytecode stays stable across comment edits.
  metadata: { appendCBOR: false, bytecodeHash: "none" },
  outputSelection: {
    "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.methodIdentifiers", "evm.deployedBytecode.immutableReferences", "storageLayout"] },
  },
};
const input = { language: "Solidity", sources, settings };
const output = JSON.parse(solc.compile(JSON.stringify(input)));

let failed = false;
for (const e of output.errors || []) {
  if (e.severity === "error") failed = true;
  // Warnings (e.g. selfdestruct deprecation) are expected; print them anyway.
  console.error(e.formattedMessage || e.message);
}
if (failed) process.exit(1);

const contracts = {};
for (const file of Object.keys(output.contracts).sort()) {
  for (const name of Object.keys(output.contracts[file]).sort()) {
    if (contracts[name]) {
      console.error(`duplicate contract name ${name}`);
      process.exit(1);
    }
    const c = output.contracts[file][name];
    contracts[name] = {
      source: file,
      abi: c.abi,
      methodIdentifiers: c.evm.methodIdentifiers,
      bytecode: "0x" + c.evm.bytecode.object,
      deployedBytecode: "0x" + c.evm.deployedBytecode.object,
      immutableReferences: c.evm.deployedBytecode.immutableReferences,
      storageLayout: c.storageLayout,
    };
  }
}
const artifact = {
  compiler: { name: "solc-js", version: got, settings: { optimizer: settings.optimizer, evmVersion, metadata: settings.metadata } },
  contracts,
};
fs.writeFileSync(out, JSON.stringify(artifact, null, 2) + "\n");
JS

NEW="$TMP/artifacts.json"
TMPDIR_SOLC="$TMP" node "$TMP/build.js" "$SRC_DIR" "$NEW" "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    || die "compilation failed"

if [ "$CHECK" = 1 ]; then
    cmp -s "$NEW" "$OUT" || die "$OUT is stale: run scripts/build-test-contracts.sh"
    echo "build-test-contracts: $OUT is up to date" >&2
else
    cp "$NEW" "$OUT"
    echo "build-test-contracts: wrote $OUT" >&2
fi
