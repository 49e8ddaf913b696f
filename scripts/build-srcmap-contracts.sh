#!/usr/bin/env bash
# Regenerate the standard-JSON outputs of tests/contracts/srcmap/*.sol with a PINNED solc-js
# (npm package `solc`), for the source-location tests (tests/live/sources_live.rs):
#
#   tests/contracts/srcmap/solc-output.json        every file but ViaIr.sol, legacy codegen
#   tests/contracts/srcmap/solc-output-viair.json  ViaIr.sol with viaIR
#   tests/contracts/srcmap/rebuilt/solc-output.json  Inference.sol with one constant changed
#   tests/contracts/oz/solc-output.json
#       Vault.sol with OpenZeppelin Contracts 5.4.0 (npm), legacy codegen: a realistic project
#   tests/contracts/oz/solc-output-viair.json  the same with viaIR
#   tests/contracts/oz/solc-output-fixed.json  VaultFixed.sol: that vault fixed, built alone
#   tests/contracts/oz/solc-output-state.json
#       State.sol (an OpenZeppelin ERC20, and storage of every kind) with solc's `storageLayout`:
#       the state-changes tests (tests/live/state_changes.rs)
#   tests/contracts/oz/solc-output-upgradeable.json
#       Upgradeable.sol (an OpenZeppelin Contracts Upgradeable 5.4.0 ERC20, its storage in
#       ERC-7201 namespaces, and OpenZeppelin's ERC1967Proxy) with `storageLayout`: the proxy
#       and namespace tests of tests/live/state_changes.rs
#   tests/contracts/oz/solc-output-spans.json
#       Spans.sol (a string and a bytes across slots, transient variables) with `storageLayout`
#       and `transientStorageLayout`: the spanning and transient tests of state_changes.rs
#   tests/contracts/edr/<case>/solc-output.json
#       cases of EDR's (Hardhat's) Solidity stack-trace suite, each c.sol built alone with the
#       optimizer off, EDR's default (tests/live/edr_cases.rs; provenance in the README there)
#   tests/contracts/edr/<case>/solc-output-viair.json  the same under EDR's viaIR configuration
#   tests/contracts/uniswap-v3-core/solc-output.json
#       Uniswap v3 core at its v1.0.0 tag (the files the tests deploy), built as Uniswap builds
#       it (hardhat.config.ts: solc 0.7.6, optimizer 800 runs, bytecodeHash none, Hardhat's
#       default EVM for 0.7.6, istanbul): optimized production code for the source-location tests
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

install_solc() { # version: solc-js into $TMP/solc-<version>
    local dir="$TMP/solc-$1"
    [ -d "$dir/node_modules/solc" ] && return 0
    echo "build-srcmap-contracts: installing solc@$1 (solc-js) into $dir" >&2
    mkdir -p "$dir"
    ( cd "$dir" && npm init -y >/dev/null 2>&1 \
        && npm install --silent --no-audit --no-fund --save-exact "solc@$1" >/dev/null ) \
        || die "npm install solc@$1 failed"
}

cat >"$TMP/build.js" <<'JS'
const fs = require("fs");
const path = require("path");
const solc = require(path.join(process.env.TMPDIR_SOLC, "node_modules", "solc"));
const [srcDir, out, solcVersion, evmVersion, runs, viaIR, bytecodeHash, ...files] =
  process.argv.slice(2);

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
    // "off": the optimizer disabled, as EDR's stack-trace suite compiles by default; viaIR
    // "edr": viaIR with the Yul optimizer's steps cut to "u", EDR's viaIR configuration.
    optimizer: runs === "off" ? { enabled: false } : {
      enabled: true, runs: Number(runs),
      ...(viaIR === "edr" ? { details: { yulDetails: { optimizerSteps: "u" } } } : {}),
    },
    evmVersion,
    // "none": a compiler older than the viaIR setting (0.7.6 refuses the key).
    ...(viaIR === "none" ? {} : { viaIR: viaIR === "true" || viaIR === "edr" }),
    ...(bytecodeHash === "default" ? {} : { metadata: { bytecodeHash } }),
    outputSelection: {
      "*": {
        "": ["ast"],
        "*": [
          "abi", "metadata",
          "evm.bytecode.object", "evm.bytecode.sourceMap", "evm.bytecode.linkReferences",
          "evm.deployedBytecode.object", "evm.deployedBytecode.sourceMap",
          "evm.deployedBytecode.linkReferences", "evm.deployedBytecode.immutableReferences",
          ...(process.env.STORAGE_LAYOUT === "1" ? ["storageLayout"] : []),
          ...(process.env.TRANSIENT_LAYOUT === "1" ? ["transientStorageLayout"] : []),
        ],
      },
    },
  },
};
// Imports the listed files make are read from the same directory, by source unit name.
const findImports = (p) => {
  try {
    return { contents: fs.readFileSync(path.join(srcDir, p), "utf8") };
  } catch (e) {
    return { error: `${p}: ${e.message}` };
  }
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
let failed = false;
for (const e of output.errors || []) {
  if (e.severity === "error") failed = true;
  console.error(e.formattedMessage || e.message);
}
if (failed) process.exit(1);
delete output.errors;
fs.writeFileSync(out, JSON.stringify(output) + "\n");
JS

build_in() { # dir out solc evm runs viaIR bytecodeHash files...
    local dir="$1" out="$2" solc="$3" evm="$4" runs="$5" via="$6" hash="$7"; shift 7
    install_solc "$solc"
    local tmp_out="$TMP/$(basename "$dir")-$out"
    TMPDIR_SOLC="$TMP/solc-$solc" node "$TMP/build.js" "$dir" "$tmp_out" "$solc" "$evm" \
        "$runs" "$via" "$hash" "$@" || die "compilation of $dir/$out failed"
    if [ "$CHECK" = 1 ]; then
        cmp -s "$tmp_out" "$dir/$out" || die "$dir/$out is stale: run scripts/build-srcmap-contracts.sh"
        echo "build-srcmap-contracts: $dir/$out is up to date" >&2
    else
        cp "$tmp_out" "$dir/$out"
        echo "build-srcmap-contracts: wrote $dir/$out" >&2
    fi
}

build() { # out viaIR files...
    local out="$1" via="$2"; shift 2
    build_in "$SRC_DIR" "$out" "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" "$via" default "$@"
}

LEGACY=()
for f in $(cd "$SRC_DIR" && ls *.sol | sort); do
    [ "$f" = "ViaIr.sol" ] || LEGACY+=("$f")
done
build solc-output.json false "${LEGACY[@]}"
build solc-output-viair.json true ViaIr.sol
# Inference.sol edited after a deployment (one constant): an artifact the deployed code no longer
# matches, for the "rebuilt since it was deployed?" note.
build_in "$SRC_DIR/rebuilt" solc-output.json "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    false default Inference.sol

# An OpenZeppelin project: OZ's files the vault imports, vendored from the pinned npm package
# (MIT: each file's SPDX header; the package ships no LICENSE file) so the tests read the texts
# the build compiled.
OZ_VERSION="5.4.0"
OZ_DIR="$ROOT/tests/contracts/oz"
OZ_FILES=(
    token/ERC20/utils/SafeERC20.sol token/ERC20/IERC20.sol token/ERC20/ERC20.sol
    token/ERC20/extensions/IERC20Metadata.sol interfaces/IERC1363.sol interfaces/IERC20.sol
    interfaces/IERC165.sol interfaces/draft-IERC6093.sol utils/introspection/IERC165.sol
    utils/Context.sol
    interfaces/IERC1967.sol proxy/ERC1967/ERC1967Proxy.sol proxy/ERC1967/ERC1967Utils.sol
    proxy/Proxy.sol proxy/beacon/IBeacon.sol utils/Address.sol utils/Errors.sol
    utils/StorageSlot.sol
)
OZ_UP_FILES=(
    access/OwnableUpgradeable.sol proxy/utils/Initializable.sol
    token/ERC20/ERC20Upgradeable.sol utils/ContextUpgradeable.sol
)
echo "build-srcmap-contracts: installing @openzeppelin/contracts@$OZ_VERSION" >&2
mkdir -p "$TMP/oz"
( cd "$TMP/oz" && npm init -y >/dev/null 2>&1 \
    && npm install --silent --no-audit --no-fund --save-exact "@openzeppelin/contracts@$OZ_VERSION" \
        "@openzeppelin/contracts-upgradeable@$OZ_VERSION" >/dev/null ) \
    || die "npm install @openzeppelin/contracts(-upgradeable)@$OZ_VERSION failed"
vendor() { # package files...
    local pkg="$1"; shift
    for f in "$@"; do
        src="$TMP/oz/node_modules/@openzeppelin/$pkg/$f"
        dst="$OZ_DIR/@openzeppelin/$pkg/$f"
        if [ "$CHECK" = 1 ]; then
            cmp -s "$src" "$dst" || die "$dst differs from @openzeppelin/$pkg@$OZ_VERSION"
        else
            mkdir -p "$(dirname "$dst")" && cp "$src" "$dst"
        fi
    done
}
vendor contracts "${OZ_FILES[@]}"
vendor contracts-upgradeable "${OZ_UP_FILES[@]}"
build_in "$OZ_DIR" solc-output.json "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    false default Vault.sol
# The same project with viaIR: the optimizer inlines across functions.
build_in "$OZ_DIR" solc-output-viair.json "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    true default Vault.sol
# The vault as fixed after a failed deposit, built alone: the what-if tests' artifact.
build_in "$OZ_DIR" solc-output-fixed.json "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
    false default VaultFixed.sol
# Storage read by variable: the build's own storageLayout selected.
STORAGE_LAYOUT=1 build_in "$OZ_DIR" solc-output-state.json "$SOLC_VERSION" "$EVM_VERSION" \
    "$OPTIMIZER_RUNS" false default State.sol
# ERC-7201 namespaces behind an ERC-1967 proxy, the same way.
STORAGE_LAYOUT=1 build_in "$OZ_DIR" solc-output-upgradeable.json "$SOLC_VERSION" "$EVM_VERSION" \
    "$OPTIMIZER_RUNS" false default Upgradeable.sol
# Values across slots and transient variables: both layouts selected.
STORAGE_LAYOUT=1 TRANSIENT_LAYOUT=1 build_in "$OZ_DIR" solc-output-spans.json "$SOLC_VERSION" \
    "$EVM_VERSION" "$OPTIMIZER_RUNS" false default Spans.sol

for dir in "$ROOT"/tests/contracts/edr/*/; do
    build_in "${dir%/}" solc-output.json "$SOLC_VERSION" "$EVM_VERSION" off false default c.sol
    build_in "${dir%/}" solc-output-viair.json "$SOLC_VERSION" "$EVM_VERSION" "$OPTIMIZER_RUNS" \
        edr default c.sol
done

UNI_DIR="$ROOT/tests/contracts/uniswap-v3-core"
build_in "$UNI_DIR" solc-output.json 0.7.6 istanbul 800 none none \
    contracts/UniswapV3Factory.sol contracts/test/TestERC20.sol \
    contracts/test/TestUniswapV3Callee.sol contracts/test/TestUniswapV3SwapPay.sol
