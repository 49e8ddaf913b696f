#!/usr/bin/env bash
# Build tests/contracts/forge-world, a Foundry project on OpenZeppelin Contracts (Upgradeable)
# 5.7.0, with the pinned forge, offline, into OUT_DIR:
#
#   bash scripts/build-forge-world.sh [--defaults] OUT_DIR    # after scripts/install-test-tools.sh
#
# --defaults builds with forge's default artifacts instead: `extra_output` and `ast` dropped from
# foundry.toml, so the artifacts carry neither storageLayout nor AST (what most projects have;
# the bytecode is the same, those outputs do not enter the metadata).
#
# OUT_DIR (created if missing, else it must be empty) becomes a forge project of its own: the
# sources (src/, foundry.toml), the OpenZeppelin packages copied from .tools/js/node_modules into
# node_modules/@openzeppelin (so every source lies inside the project, as `npm install` would
# leave it), and what `forge build` leaves: out/<File>.sol/<Contract>.json artifacts (abi,
# bytecode and deployedBytecode with source maps, metadata, AST, storageLayout), out/build-info/
# and cache/solidity-files-cache.json. forge compiles with solc-js 0.8.30 behind
# .tools/js/solc (scripts/solc-standin.js, put there by install-test-tools.sh), whose absolute path is appended to OUT_DIR/foundry.toml as `solc`, so
# `forge build` run again in OUT_DIR needs no flags. Nothing is downloaded (`offline = true`,
# no compiler from svm). Logs go to stderr; stdout stays empty.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FORGE="$ROOT/.tools/bin/forge"
STANDIN="$ROOT/.tools/js/solc"
NODE_MODULES="$ROOT/.tools/js/node_modules"
SRC="$ROOT/tests/contracts/forge-world"
FORGE_VERSION="1.7.1"
SOLC_VERSION="0.8.30"
OZ_VERSION="5.7.0"

die() { echo "build-forge-world: ERROR: $*" >&2; exit 1; }
log() { echo "build-forge-world: $*" >&2; }

DEFAULTS=0
if [ "${1:-}" = "--defaults" ]; then
    DEFAULTS=1
    shift
fi
[ $# -eq 1 ] && [ -n "$1" ] || die "usage: $0 [--defaults] OUT_DIR"
OUT="$1"

[ -x "$FORGE" ] || die "no forge at $FORGE: run scripts/install-test-tools.sh"
"$FORGE" --version 2>/dev/null | head -n1 | grep -q "Version: $FORGE_VERSION\b" \
    || die "$FORGE is not forge $FORGE_VERSION: run scripts/install-test-tools.sh"
command -v node >/dev/null 2>&1 || die "node is required (solc-js runs on it)"
"$STANDIN" --version 2>/dev/null | grep -q "^Version: $SOLC_VERSION+" \
    || die "the solc stand-in does not answer solc $SOLC_VERSION (is solc-js $SOLC_VERSION in $NODE_MODULES? run scripts/install-test-tools.sh)"
for pkg in contracts contracts-upgradeable; do
    json="$NODE_MODULES/@openzeppelin/$pkg/package.json"
    [ -f "$json" ] && grep -q "\"version\": \"$OZ_VERSION\"" "$json" \
        || die "@openzeppelin/$pkg $OZ_VERSION is not in $NODE_MODULES: run scripts/install-test-tools.sh"
done

mkdir -p "$OUT" || die "cannot create $OUT"
[ -z "$(ls -A "$OUT")" ] || die "$OUT is not empty"
OUT="$(cd "$OUT" && pwd)"

cp -R "$SRC/." "$OUT/" || die "cannot copy $SRC to $OUT"
mkdir -p "$OUT/node_modules/@openzeppelin"
cp -R "$NODE_MODULES/@openzeppelin/contracts" "$NODE_MODULES/@openzeppelin/contracts-upgradeable" \
    "$OUT/node_modules/@openzeppelin/" || die "cannot copy the OpenZeppelin packages to $OUT"
if [ "$DEFAULTS" = 1 ]; then
    sed -i -e '/^extra_output = /d' -e '/^ast = /d' "$OUT/foundry.toml"
fi
# The compiler, for this build and any later `forge build` in OUT: the last key of
# [profile.default], the file's only table.
printf '\n# Written by scripts/build-forge-world.sh: solc-js %s behind the stand-in.\nsolc = "%s"\n' \
    "$SOLC_VERSION" "$STANDIN" >>"$OUT/foundry.toml"

log "building $OUT with forge $FORGE_VERSION (offline, solc-js $SOLC_VERSION)"
BUILD_LOG="$(mktemp)"
trap 'rm -f "$BUILD_LOG"' EXIT
START=$(date +%s%N)
if ! ( cd "$OUT" && "$FORGE" build --offline ) >"$BUILD_LOG" 2>&1; then
    cat "$BUILD_LOG" >&2
    die "forge build failed in $OUT (its output above)"
fi
MS=$(( ($(date +%s%N) - START) / 1000000 ))

for a in Asset.sol/Asset Vault.sol/Vault Ledger.sol/Ledger Router.sol/Router ERC1967Proxy.sol/ERC1967Proxy; do
    f="$OUT/out/$a.json"
    [ -f "$f" ] || die "forge left no $f"
    grep -q '"metadata":' "$f" || die "$f lacks metadata"
    if [ "$DEFAULTS" = 1 ]; then
        ! grep -q '"storageLayout":\|"ast":' "$f" || die "$f has storageLayout or ast with --defaults"
    else
        grep -q '"storageLayout":' "$f" && grep -q '"ast":' "$f" || die "$f lacks storageLayout or ast"
    fi
done
[ -f "$OUT/cache/solidity-files-cache.json" ] || die "forge left no cache/solidity-files-cache.json"
log "built in ${MS} ms: $OUT/out ($(find "$OUT/out" -name '*.json' -not -path '*/build-info/*' | wc -l) artifacts)"
