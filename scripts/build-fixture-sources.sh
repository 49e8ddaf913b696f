#!/usr/bin/env bash
# Regenerate fixtures/reverted-nested.build-info.json: the bundled fixture's contracts
# (tests/contracts/*.sol, which the fixture's transaction ran) compiled by a PINNED solc-js with
# exactly the settings of scripts/build-test-contracts.sh (so the code is byte for byte what the
# fixture deployed), as a build info: solc's standard-JSON input (the sources, inline) and
# output (ABIs, bytecode, source maps, ASTs). `tx --fixture fixtures/reverted-nested.json` reads
# it from beside the fixture, so the demo names functions and errors and shows where it failed.
#
#   bash scripts/build-fixture-sources.sh           # rewrite the build info
#   bash scripts/build-fixture-sources.sh --check   # fail if it would change
set -euo pipefail

SOLC_VERSION="0.8.30"
EVM_VERSION="prague"
OPTIMIZER_RUNS=200

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/tests/contracts"
OUT="$ROOT/fixtures/reverted-nested.build-info.json"
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1

die() { echo "build-fixture-sources: ERROR: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 || die "node is required"
command -v npm >/dev/null 2>&1 || die "npm is required"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "build-fixture-sources: installing solc@$SOLC_VERSION (solc-js) into $TMP" >&2
( cd "$TMP" && npm init -y >/dev/null 2>&1 \
    && npm install --silent --no-audit --no-fund --save-exact "solc@$SOLC_VERSION" >/dev/null ) \
    || die "npm install solc@$SOLC_VERSION failed"

cat >"$TMP/build.js" <<'JS'
const fs = require("fs");
const path = require("path");
const solc = require(path.join(process.env.TMPDIR_SOLC, "node_modules", "solc"));
const [srcDir, out, solcVersion, evmVersion, runs] = process.argv.slice(2);
const got = solc.version();
if (!got.startsWith(solcVersion + "+")) {
  console.error(`solc version mismatch: want ${solcVersion}, got ${got}`);
  process.exit(1);
}
const files = fs.readdirSync(srcDir).filter((f) => f.endsWith(".sol")).sort();
const sources = {};
for (const f of files) sources[f] = { content: fs.readFileSync(path.join(srcDir, f), "utf8") };
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: Number(runs) },
    evmVersion,
    // As scripts/build-test-contracts.sh: no CBOR metadata trailer.
    metadata: { appendCBOR: false, bytecodeHash: "none" },
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
const buildInfo = { _format: "hh-sol-build-info-1", solcVersion: got.split("+")[0], solcLongVersion: got, input, output };
fs.writeFileSync(out, JSON.stringify(buildInfo) + "\n");
JS

NEW="$TMP/build-info.json"
TMPDIR_SOLC="$TMP" node "$TMP/build.js" "$SRC_DIR" "$NEW" "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    || die "compilation failed"
if [ "$CHECK" = 1 ]; then
    cmp -s "$NEW" "$OUT" || die "$OUT is stale: run scripts/build-fixture-sources.sh"
    echo "build-fixture-sources: $OUT is up to date" >&2
else
    cp "$NEW" "$OUT"
    echo "build-fixture-sources: wrote $OUT" >&2
fi
