#!/usr/bin/env bash
# Benchmark: requests, round trips and wall time of a remote trace, chaintrace vs `cast run`.
#
# A latency-injecting, request-counting JSON-RPC proxy (examples/rpc_proxy.rs) sits on loopback
# in front of a local anvil 1.7.1, adding 0, 20 and 50 ms to every request. Two transactions:
#   revert-deep  a reverting tx, last of a busy block (40 earlier txs from 4 senders)
#   many-slots   a >= 1M-gas tx reading and writing 200 storage slots
# are traced by chaintrace (fast path: --state-source prestate; rpc path: --state-source rpc;
# warm cache: the same run a second time) and by `cast run` 1.7.1 (npm @foundry-rs/cast-linux-amd64,
# pinned by sha1, installed into .tools/; FOUNDRY_OFFLINE=true, a fresh HOME so no foundry cache).
#
#   bash scripts/bench-remote.sh            # uses target/release if built, else target/debug
#   PROFILE=release bash scripts/bench-remote.sh
#
# Round trips are counted by the proxy as periods with at least one request in flight, so
# requests a client sends concurrently count once. Ratios are cast / chaintrace (higher = better).
set -euo pipefail

CAST_VERSION="1.7.1"
CAST_PKG="@foundry-rs/cast-linux-amd64"
CAST_TGZ_SHA1="e625e24080f1e8a3cbc1ed9dbba11c9aec05c121"
DELAYS="${DELAYS:-0 20 50}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
die() { echo "bench-remote: ERROR: $*" >&2; exit 1; }
log() { echo "bench-remote: $*" >&2; }

# ---- tools ---------------------------------------------------------------------------------
bash "$ROOT/scripts/install-test-tools.sh"
ANVIL="$TOOLS/bin/anvil"
CAST="$TOOLS/cast-$CAST_VERSION/cast"
if ! [ -x "$CAST" ] || ! "$CAST" --version 2>/dev/null | grep -q "$CAST_VERSION"; then
    log "fetching $CAST_PKG@$CAST_VERSION from the npm registry"
    TMP="$(mktemp -d)"
    ( cd "$TMP" && npm pack --silent "$CAST_PKG@$CAST_VERSION" >/dev/null ) || die "npm pack failed"
    TGZ="$(ls "$TMP"/*.tgz | head -n1)"
    [ "$(sha1sum "$TGZ" | cut -d' ' -f1)" = "$CAST_TGZ_SHA1" ] || die "sha1 mismatch for $TGZ"
    tar -xzf "$TGZ" -C "$TMP"
    mkdir -p "$TOOLS/cast-$CAST_VERSION"
    install -m 0755 "$TMP/package/bin/cast" "$CAST"
    rm -rf "$TMP"
fi

PROFILE="${PROFILE:-}"
if [ -z "$PROFILE" ]; then
    if [ -x "$ROOT/target/release/chaintrace" ] && [ -x "$ROOT/target/release/examples/rpc_proxy" ]; then
        PROFILE=release
    else
        PROFILE=debug
    fi
fi
if [ "$PROFILE" = release ]; then
    (cd "$ROOT" && cargo build --release --bin chaintrace --example rpc_proxy >&2)
else
    (cd "$ROOT" && cargo build --bin chaintrace --example rpc_proxy >&2)
fi
CT="$ROOT/target/$PROFILE/chaintrace"
PROXY="$ROOT/target/$PROFILE/examples/rpc_proxy"
log "chaintrace: $CT ($PROFILE build); cast: $("$CAST" --version | head -n1)"

# ---- node and transactions -----------------------------------------------------------------
WORK="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$ANVIL" --host 127.0.0.1 --port "$PORT" --silent --gas-limit 60000000 >"$WORK/anvil.log" 2>&1 &
PIDS+=($!)
NODE="http://127.0.0.1:$PORT"

rpc() { # rpc METHOD PARAMS_JSON -> result JSON
    curl -s -H 'content-type: application/json' \
        -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}" "$NODE" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps(r.get("result", r.get("error"))))'
}
for _ in $(seq 100); do rpc eth_chainId '[]' >/dev/null 2>&1 && break; sleep 0.1; done
ACCTS=($(rpc eth_accounts '[]' | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)))'))
FROM="${ACCTS[0]}"
unq() { python3 -c 'import json,sys; print(json.load(sys.stdin))'; }
send() { rpc eth_sendTransaction "[$1]" | unq; }
receipt() { rpc eth_getTransactionReceipt "[\"$1\"]"; }

# Counter: for i < calldata[0]: slot[i] += 1. Reverter: reads 4 of its slots, calls the
# counter, then REVERTs.
COUNTER_RUNTIME="60003560005b81811015601a57805460010181556001016005565b00"
deploy() {
    local runtime="$1" len
    len=$(printf '%02x' $(( ${#runtime} / 2 )))
    local init="60${len}600c60003960${len}6000f3${runtime}"
    local h; h=$(send "{\"from\":\"$FROM\",\"data\":\"0x$init\",\"gas\":\"0x100000\"}")
    receipt "$h" | python3 -c 'import json,sys; print(json.load(sys.stdin)["contractAddress"])'
}
COUNTER=$(deploy "$COUNTER_RUNTIME")
C20=${COUNTER#0x}
REVERTER=$(deploy "73${C20}6000545060015450600254506003545060006000600060006000855af150600080fd")
word() { printf '%064x' "$1"; }
# Seed 200 slots (first writes are expensive), then the measured >= 1M-gas tx rewrites them.
H=$(send "{\"from\":\"$FROM\",\"to\":\"$COUNTER\",\"data\":\"0x$(word 200)\",\"gas\":\"0x989680\"}")
receipt "$H" >/dev/null
MANY=$(send "{\"from\":\"$FROM\",\"to\":\"$COUNTER\",\"data\":\"0x$(word 200)\",\"gas\":\"0x989680\"}")
MANY_GAS=$(receipt "$MANY" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["gasUsed"],16))')
[ "$MANY_GAS" -ge 1000000 ] || die "many-slots tx used only $MANY_GAS gas"

# A busy block: 40 txs from 4 senders (transfers and counter calls), then the reverting tx.
rpc evm_setAutomine '[false]' >/dev/null
for i in $(seq 0 39); do
    s="${ACCTS[$(( i % 4 ))]}"
    if (( i % 2 )); then
        send "{\"from\":\"$s\",\"to\":\"$COUNTER\",\"data\":\"0x$(word $(( 3 + i % 5 )))\",\"gas\":\"0x200000\"}" >/dev/null
    else
        send "{\"from\":\"$s\",\"to\":\"${ACCTS[$(( 5 + i % 4 ))]}\",\"value\":\"0x3e8\"}" >/dev/null
    fi
done
REVERT=$(send "{\"from\":\"${ACCTS[4]}\",\"to\":\"$REVERTER\",\"gas\":\"0x100000\",\"gasPrice\":\"0x3b9aca00\",\"maxPriorityFeePerGas\":\"0x0\"}")
rpc evm_mine '[]' >/dev/null
rpc evm_setAutomine '[true]' >/dev/null
IDX=$(receipt "$REVERT" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(int(r["transactionIndex"],16), r["status"])')
log "many-slots tx $MANY ($MANY_GAS gas); reverting tx $REVERT (index, status: $IDX)"

# ---- measurements --------------------------------------------------------------------------
now_ms() { date +%s%3N; }
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
measure() { # measure DELAY TX_LABEL TOOL URL -- COMMAND...
    local delay="$1" label="$2" tool="$3" url="$4"; shift 5
    curl -s "$url/reset" >/dev/null
    local t0 t1 code=0
    t0=$(now_ms)
    "$@" >"$WORK/out" 2>"$WORK/err" || code=$?
    t1=$(now_ms)
    local stats; stats=$(curl -s "$url/stats")
    local req rt
    req=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
    rt=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["roundTrips"])')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$delay" "$label" "$tool" "$req" "$rt" "$(( t1 - t0 ))" "$code" >>"$RESULTS"
}

for delay in $DELAYS; do
    "$PROXY" --upstream "$NODE" --delay-ms "$delay" >"$WORK/proxy.out" 2>/dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$WORK/proxy.out" ] && break; sleep 0.05; done
    URL="$(sed -n 's/^listening //p' "$WORK/proxy.out" | head -n1)"
    for pair in "revert-deep:$REVERT" "many-slots:$MANY"; do
        label="${pair%%:*}"; hash="${pair#*:}"
        CACHE="$WORK/cache-$delay-$label"
        measure "$delay" "$label" "chaintrace fast path" "$URL" -- \
            "$CT" tx "$hash" --rpc-url "$URL" --json --no-cache --state-source prestate
        measure "$delay" "$label" "chaintrace rpc path" "$URL" -- \
            "$CT" tx "$hash" --rpc-url "$URL" --json --no-cache --state-source rpc
        "$CT" tx "$hash" --rpc-url "$URL" --json --cache-dir "$CACHE" >/dev/null 2>&1 || true
        measure "$delay" "$label" "chaintrace warm cache" "$URL" -- \
            "$CT" tx "$hash" --rpc-url "$URL" --json --cache-dir "$CACHE"
        measure "$delay" "$label" "cast run $CAST_VERSION" "$URL" -- \
            env HOME="$WORK/home" FOUNDRY_OFFLINE=true "$CAST" run "$hash" --rpc-url "$URL"
    done
    kill "${PIDS[-1]}" 2>/dev/null || true
    : >"$WORK/proxy.out"
done

python3 - "$RESULTS" <<'EOF'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
cast = {(r[0], r[1]): r for r in rows if r[2].startswith("cast run")}
print(f"{'delay':>5}  {'transaction':<12} {'tool':<24} {'requests':>8} {'round trips':>11} {'wall ms':>8} {'exit':>4}  {'cast/this (wall)':>16} {'cast/this (rt)':>14}")
for d, label, tool, req, rt, ms, code in rows:
    c = cast[(d, label)]
    rw = int(c[5]) / max(int(ms), 1)
    rr = int(c[4]) / max(int(rt), 1)
    print(f"{d:>5}  {label:<12} {tool:<24} {req:>8} {rt:>11} {ms:>8} {code:>4}  {rw:>15.1f}x {rr:>13.1f}x")
EOF
