#!/usr/bin/env bash
# Cross-check of "Where it failed" against forge 1.7.1 (npm @foundry-rs/forge-linux-amd64),
# an independent implementation, on tests/contracts/srcmap/:
#
#  1. forge builds the contracts as a Foundry project (solc-js 0.8.30 behind a `solc` stand-in:
#     forge cannot download compilers here), leaving a real out/ + out/build-info/ + cache/;
#  2. `forge test` fails on Middle.midRevert(5) and Leaf.addUp(max, 1) and prints its backtrace;
#  3. the same contracts, deployed from forge's out/ on the pinned anvil, fail the same calls;
#     chaintrace, run inside the project (found without flags), must name the same functions
#     as forge's backtrace, in the same order, and locate the failure at the line of the
#     `require` / `a + b` found in the source text.
#
#   bash scripts/crosscheck-srcmap-forge.sh      # needs node, npm, .tools/bin/{anvil,cast}
set -euo pipefail

FORGE_VERSION="1.7.1"
SOLC_VERSION="0.8.30"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${CHAINTRACE_BIN:-$ROOT/target/debug/chaintrace}"
ANVIL="$ROOT/.tools/bin/anvil"
CAST="$ROOT/.tools/bin/cast"
die() { echo "crosscheck-srcmap-forge: FAIL: $*" >&2; exit 1; }
log() { echo "crosscheck-srcmap-forge: $*" >&2; }
[ -x "$BIN" ] || die "build chaintrace first (cargo build): $BIN"
[ -x "$ANVIL" ] && [ -x "$CAST" ] || die "run scripts/install-test-tools.sh first"

TMP="$(mktemp -d)"
ANVIL_PID=""
cleanup() { [ -n "$ANVIL_PID" ] && kill "$ANVIL_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

log "installing forge $FORGE_VERSION and solc-js $SOLC_VERSION into $TMP"
( cd "$TMP" && npm pack --silent "@foundry-rs/forge-linux-amd64@$FORGE_VERSION" >/dev/null \
    && mkdir x && tar -xzf foundry-rs-forge-linux-amd64-*.tgz -C x \
    && npm init -y >/dev/null 2>&1 \
    && npm install --silent --no-audit --no-fund --save-exact "solc@$SOLC_VERSION" >/dev/null ) \
    || die "could not install forge/solc from npm"
FORGE="$TMP/x/package/bin/forge"
"$FORGE" --version | head -n1 | grep -q "$FORGE_VERSION" || die "forge is not $FORGE_VERSION"
cp "$ROOT/scripts/solc-standin.js" "$TMP/solc"
chmod +x "$TMP/solc"

P="$TMP/project"
mkdir -p "$P/src" "$P/test"
for f in "$ROOT"/tests/contracts/srcmap/*.sol; do
    [ "$(basename "$f")" = ViaIr.sol ] || cp "$f" "$P/src/"
done
cat >"$P/foundry.toml" <<EOF2
[profile.default]
src = "src"
out = "out"
solc = "$TMP/solc"
offline = true
optimizer = true
optimizer_runs = 200
evm_version = "prague"
EOF2
cat >"$P/test/Fail.t.sol" <<'SOL'
// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;
import "../src/Middle.sol";
contract FailTest {
    function test_midRevert() public {
        Leaf leaf = new Leaf();
        new Middle(leaf).midRevert(5);
    }
    function test_addUp() public {
        new Leaf().addUp(type(uint256).max, 1);
    }
}
SOL
( cd "$P" && "$FORGE" build --offline >/dev/null 2>&1 ) || die "forge build failed"
( cd "$P" && "$FORGE" test --offline -vvv >"$TMP/forge.out" 2>&1 ) || true
[ -d "$P/out/build-info" ] && [ -f "$P/cache/solidity-files-cache.json" ] || die "forge left no build info/cache"

# forge's backtrace of one test: the `at X.f` lines, the test contract's own left out.
backtrace() {
    awk -v t="$1" '
        index($0, "] " t "()") { on = 1 }
        on && /^Backtrace:/ { bt = 1; next }
        on && bt && /^  at / { print $2; next }
        on && bt { exit }' "$TMP/forge.out" | grep -v '^FailTest\.'
}

PORT=$(( 20000 + RANDOM % 20000 ))
"$ANVIL" --port "$PORT" --silent >/dev/null 2>&1 &
ANVIL_PID=$!
RPC="http://127.0.0.1:$PORT"
for _ in $(seq 50); do "$CAST" chain-id --rpc-url "$RPC" >/dev/null 2>&1 && break; sleep 0.1; done
KEY=0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
deploy() { # bytecode → address
    "$CAST" send --rpc-url "$RPC" --private-key "$KEY" --json --create "$1" | sed -n 's/.*"contractAddress":"\(0x[0-9a-fA-F]*\)".*/\1/p'
}
obj() { sed -n 's/.*"bytecode":{"object":"\(0x[0-9a-fA-F_$]*\)".*/\1/p' "$P/out/$1"; }
MATH=$(deploy "$(obj MathLib.sol/MathLib.json)")
LEAF_CODE=$(obj Leaf.sol/Leaf.json)
PLACEHOLDER=$(grep -o '__\$[0-9a-f]\{34\}\$__' <<<"$LEAF_CODE" | head -n1)
LEAF=$(deploy "${LEAF_CODE//"$PLACEHOLDER"/${MATH#0x}}")
MID=$(deploy "$(obj Middle.sol/Middle.json)$("$CAST" abi-encode 'f(address)' "$LEAF" | cut -c3-)")
[ -n "$LEAF" ] && [ -n "$MID" ] || die "deployment failed"
fail_tx() { # to sig args… → tx hash of a failed transaction
    local to="$1"; shift
    "$CAST" send --rpc-url "$RPC" --private-key "$KEY" --gas-limit 300000 --json "$to" "$@" 2>/dev/null \
        | sed -n 's/.*"transactionHash":"\(0x[0-9a-f]*\)".*/\1/p'
}
line_of() { grep -n -F "$2" "$P/src/$1" | head -n1 | cut -d: -f1; }

check() { # test-name tx expected-first-stack-line-prefix
    local name="$1" tx="$2" want="$3"
    [ -n "$tx" ] || die "$name: no transaction"
    local out
    out=$(cd "$P" && CHAINTRACE_NO_CACHE=1 NO_COLOR=1 "$BIN" tx "$tx" --rpc-url "$RPC" 2>/dev/null || true)
    local ours forge
    ours=$(sed -n '/^Solidity stack trace:/,$p' <<<"$out" | sed -n 's/^  at \([^ ]*\) .*/\1/p')
    forge=$(backtrace "$name")
    log "$name: forge: $(echo $forge) | chaintrace: $(echo $ours)"
    # Every function of forge's backtrace appears in chaintrace's stack, in order.
    local rest="$ours"
    for f in $forge; do
        grep -qx -F "$f" <<<"$rest" || die "$name: forge names $f, chaintrace's stack is: $(echo $ours)"
        rest=$(sed -n "/^$(sed 's/\./\\./g' <<<"$f")\$/,\$p" <<<"$rest" | tail -n +2)
    done
    grep -q -F "  at $want" <<<"$out" || die "$name: expected '$want' in:
$out"
}
check test_midRevert "$(fail_tx "$MID" 'midRevert(uint256)' 5)" \
    "Leaf._check (src/Leaf.sol:$(line_of Leaf.sol 'require(x > 10'):"
check test_addUp "$(fail_tx "$LEAF" 'addUp(uint256,uint256)' \
    115792089237316195423570985008687907853269984665640564039457584007913129639935 1)" \
    "Leaf._add (src/Leaf.sol:$(line_of Leaf.sol 'return a + b'):"
log "ok: chaintrace agrees with forge $FORGE_VERSION's backtraces, on forge's own out/"
