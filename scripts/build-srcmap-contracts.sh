#!/usr/bin/env bash
# Regenerate the standard-JSON outputs of tests/contracts/srcmap/*.sol with a PINNED solc-js
# (npm package `solc`), for the source-location tests (tests/live/sources_live.rs):
#
#   tests/contracts/srcmap/solc-output.json        every file but ViaIr.sol, legacy codegen
#   tests/contracts/srcmap/solc-output-viair.json  ViaIr.sol with viaIR
#
# Each is solc's own standard-JSON output (errors dropped): `sources` with ids and ASTs,
# `contracts` with abi, solc's metadata (each source's keccak256, which stale-source checks
# read), bytecode and deployed bytecode, their source maps, link and immutable references.
# Tests never need solc: they read the committed files.
#
#   bash scripts/build-srcmap-contracts.sh           # rewrite both files
#   bash scripts/build-srcmap-contracts.sh --check   # fail if either would change
set -euo pipefail

SOLC_VERSION="0.8.30"
EVM_VERSION="prague"
OPTIMIZER_RUNS=200

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/tests/contracts/srcmap"
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1

die() { echo "build-srcmap-contracts: ERROR: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 || die "node is required"
command -v npm >/dev/null 2>&1 || die "npm is required"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "build-srcmap-contracts: installing solc@$SOLC_VERSION (solc-js) into $TMP" >&2
( cd "$TMP" && npm init -y >/dev/null 2>&1 \
    && npm install --silent --no-audit --no-fund --save-exact "solc@$SOLC_VERSION" >/dev/null ) \
    || die "npm install solc@$SOLC_VERSION failed"

cat >"$TMP/build.js" <<'JS'
const fs = require("fs");
const path = require("path");
const solc = require(path.join(process.env.TMPDIR_SOLC, "node_modules", "solc"));
const [srcDir, out, solcVersion, evmVersion, runs, viaIR, ...files] = process.argv.slice(2);

const got = solc.version();
if (!got.startsWith(solcVersion + "+")) {
  console.error(`solc version mismatch: want ${solcVersion}, got ${got}`);
  process.exit(1);
}

const sources = {};
for (const f of files) sources[f] = { content: fs.readFileSync(path.join(srcDir, f), "utf8") };
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: Number(runs) },
    evmVersion,
    viaIR: viaIR === "true",
    outputSelection: {
      "*": {
        "": ["ast"],
        "*": [
          "abi", "metadata",
          "evm.bytecode.object", "evm.bytecode.sourceMap", "evm.bytecode.linkReferences",
          "evm.deployedBytecode.object", "evm.deployedBytecode.sourceMap",
          "evm.deployedBytecode.linkReferences", "evm.deployedBytecode.immutableReferences",
        ],
      },
    },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of output.errors || []) {
  if (e.severity === "error") failed = true;
  console.error(e.formattedMessage || e.message);
}
if (failed) process.exit(1);
delete output.errors;
fs.writeFileSync(out, JSON.stringify(output) + "\n");
JS

build() { # out viaIR files...
    local out="$1" via="$2"; shift 2
    TMPDIR_SOLC="$TMP" node "$TMP/build.js" "$SRC_DIR" "$TMP/$out" "$SOLC_VERSION" "$EVM_VERSION" \
        "$OPTIMIZER_RUNS" "$via" "$@" || die "compilation of $out failed"
    if [ "$CHECK" = 1 ]; then
        cmp -s "$TMP/$out" "$SRC_DIR/$out" || die "$SRC_DIR/$out is stale: run scripts/build-srcmap-contracts.sh"
        echo "build-srcmap-contracts: $out is up to date" >&2
    else
        cp "$TMP/$out" "$SRC_DIR/$out"
        echo "build-srcmap-contracts: wrote $SRC_DIR/$out" >&2
    fi
}

LEGACY=()
for f in $(cd "$SRC_DIR" && ls *.sol | sort); do
    [ "$f" = "ViaIr.sol" ] || LEGACY+=("$f")
done
build solc-output.json false "${LEGACY[@]}"
build solc-output-viair.json true ViaIr.sol
