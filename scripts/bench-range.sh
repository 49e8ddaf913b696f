#!/usr/bin/env bash
# Benchmark: `chaintrace block A..B` (sequential, parallel, parallel into parquet partitions)
# against anvil's own debug_traceBlockByNumber over the same blocks, callTracer, with and
# without RPC latency.
#
# A local anvil 1.7.1 gets BLOCKS (default 200) blocks of contract traffic: each block holds an
# ERC-20 transfer between 5 holders, a nested call chain with static calls and value (Hub.deep),
# a DELEGATECALL (Hub.delegate), a log-heavy call (Logger.logAll), a reverting call
# (Reverter.failString) and a plain transfer — the contracts of tests/contracts/. The
# latency-injecting proxy (examples/rpc_proxy.rs) sits in front of it with DELAYS ms (default
# "0 20") added to every request.
#
#   seq       CHAINTRACE_JOBS=1 chaintrace block A..B --json          (NDJSON to /dev/null)
#   par       CHAINTRACE_JOBS=<cores> chaintrace block A..B --json, and CHAINTRACE_JOBS=$WIDE (8)
#   par→pq    the same with --out DIR --format parquet
#   anvil     one debug_traceBlockByNumber(callTracer) per block, sequentially, the node
#             doing the tracing (a Python client; its RSS is not the node's and is not shown)
#
# Peak RSS is the client process's maximum resident set (/usr/bin/time -v, else
# /proc/<pid>/status VmHWM sampled).
#
#   bash scripts/bench-range.sh             # uses target/release if built, else target/debug
#   PROFILE=release BLOCKS=300 DELAYS="0 20 50" bash scripts/bench-range.sh
set -euo pipefail

BLOCKS="${BLOCKS:-200}"
DELAYS="${DELAYS:-0 20}"
WIDE="${WIDE:-8}"   # a worker count above the cores: replay waits on the node, not the CPU
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "bench-range: ERROR: $*" >&2; exit 1; }
log() { echo "bench-range: $*" >&2; }
[ "$BLOCKS" -ge 1 ] 2>/dev/null || die "BLOCKS must be a positive number"

bash "$ROOT/scripts/install-test-tools.sh"
ANVIL="$ROOT/.tools/bin/anvil"

PROFILE="${PROFILE:-}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
if [ -z "$PROFILE" ]; then
    if [ -x "$TARGET/release/chaintrace" ] && [ -x "$TARGET/release/examples/rpc_proxy" ]; then
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
CT="$TARGET/$PROFILE/chaintrace"
PROXY="$TARGET/$PROFILE/examples/rpc_proxy"
CORES="$(nproc)"
log "chaintrace: $CT ($PROFILE build), $CORES cores"

WORK="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$ANVIL" --host 127.0.0.1 --port "$PORT" --silent --gas-limit 60000000 >"$WORK/anvil.log" 2>&1 &
PIDS+=($!)
NODE="http://127.0.0.1:$PORT"

# ---- traffic -------------------------------------------------------------------------------
log "generating $BLOCKS blocks of contract traffic"
RANGE="$(python3 - "$NODE" "$BLOCKS" "$ROOT/tests/contracts/artifacts.json" <<'EOF'
import json, sys, time, urllib.request
node, blocks, artifacts = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))["contracts"]
def rpc(method, params):
    req = urllib.request.Request(node, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
        "params": params}).encode(), {"content-type": "application/json"})
    r = json.load(urllib.request.urlopen(req))
    if "error" in r:
        raise SystemExit(f"{method}: {r['error']}")
    return r["result"]
for _ in range(100):
    try:
        rpc("eth_chainId", []); break
    except Exception:
        time.sleep(0.1)
accts = rpc("eth_accounts", [])
word = lambda v: format(v, "064x")
addr = lambda a: word(int(a, 16))
def code(name): return artifacts[name]["bytecode"].removeprefix("0x")
def sel(name, sig): return artifacts[name]["methodIdentifiers"][sig]
def send(tx):
    tx.setdefault("from", accts[0]); tx.setdefault("gas", hex(2_000_000))
    return rpc("eth_sendTransaction", [tx])
def receipt(h):
    for _ in range(200):
        r = rpc("eth_getTransactionReceipt", [h])
        if r:
            return r
        time.sleep(0.05)
    raise SystemExit(f"no receipt for {h}")
def deploy(data, value=0):
    h = send({"data": "0x" + data, "value": hex(value), "gas": hex(8_000_000)})
    r = receipt(h)
    if r["status"] != "0x1" or not r["contractAddress"]:
        raise SystemExit(f"deployment {h} failed")
    return r["contractAddress"]
c = {n: deploy(code(n)) for n in ["Logger", "DelegateTarget", "Reverter", "Burner"]}
hub = deploy(code("Hub") + "".join(addr(c[n]) for n in
             ["Logger", "DelegateTarget", "Reverter", "Burner"]), 10**18)
token = deploy(code("Token") + word(10**30))
for a in accts[1:5]:
    receipt(send({"to": token, "data": "0x" + sel("Token", "transfer(address,uint256)") + addr(a) + word(10**24)}))
first = int(rpc("eth_blockNumber", []), 16) + 1
rpc("evm_setAutomine", [False])
for b in range(blocks):
    s, r = accts[b % 5], accts[(b + 1) % 5]
    send({"from": s, "to": token, "data": "0x" + sel("Token", "transfer(address,uint256)") + addr(r) + word(1000 + b)})
    send({"from": accts[5], "to": hub, "data": "0x" + sel("Hub", "deep(uint256)") + word(2 + b % 3)})
    send({"from": accts[6], "to": hub, "data": "0x" + sel("Hub", "delegate(uint256)") + word(b)})
    send({"from": accts[7], "to": c["Logger"], "data": "0x" + sel("Logger", "logAll(uint256)") + word(b)})
    send({"from": accts[8], "to": c["Reverter"], "data": "0x" + sel("Reverter", "failString()"), "gas": hex(100_000)})
    send({"from": accts[9], "to": accts[(b % 4) + 1], "value": hex(10**15), "gas": hex(21_000)})
    rpc("evm_mine", [])
last = int(rpc("eth_blockNumber", []), 16)
rpc("evm_setAutomine", [True])
txs = sum(len(rpc("eth_getBlockByNumber", [hex(n), False])["transactions"]) for n in range(first, last + 1))
print(f"{first} {last} {txs}")
EOF
)"
read -r FIRST LAST TXS <<<"$RANGE"
NBLOCKS=$(( LAST - FIRST + 1 ))
log "range $FIRST..$LAST: $NBLOCKS blocks, $TXS transactions"
[ "$NBLOCKS" -ge "$BLOCKS" ] || die "only $NBLOCKS blocks generated"

# ---- measurements --------------------------------------------------------------------------
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
TIME_V=""
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then TIME_V=/usr/bin/time; fi

# measure DELAY MODE -- COMMAND... : wall ms, peak RSS KiB, exit code
measure() {
    local delay="$1" mode="$2"; shift 3
    local t0 t1 code=0 rss=""
    t0=$(date +%s%3N)
    if [ -n "$TIME_V" ]; then
        "$TIME_V" -v -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || code=$?
        rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/time")
    else
        "$@" >"$WORK/out" 2>"$WORK/err" &
        local pid=$! peak=0 v
        while kill -0 "$pid" 2>/dev/null; do
            v=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null || true)
            [ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
            sleep 0.05
        done
        wait "$pid" || code=$?
        rss=$peak
    fi
    t1=$(date +%s%3N)
    [ "$code" = 0 ] || { log "$mode (delay $delay) exited $code: $(tail -c 400 "$WORK/err")"; }
    printf '%s\t%s\t%s\t%s\t%s\n' "$delay" "$mode" "$(( t1 - t0 ))" "${rss:-0}" "$code" >>"$RESULTS"
}

ANVIL_CLIENT="$WORK/anvil_trace.py"
cat >"$ANVIL_CLIENT" <<'EOF'
import json, sys, urllib.request
url, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(first, last + 1):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": n,
        "method": "debug_traceBlockByNumber", "params": [hex(n), {"tracer": "callTracer"}]}).encode(),
        {"content-type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=120))
    if "error" in r:
        raise SystemExit(f"block {n}: {r['error']}")
    for t in r["result"]:
        print(json.dumps(t))
EOF

# One untimed pass first, so the node's own caches are as warm for every measured run.
CHAINTRACE_JOBS=1 "$CT" block "$FIRST..$LAST" --rpc-url "$NODE" --json --quiet >/dev/null 2>&1 ||
    die "chaintrace failed over $FIRST..$LAST"

for delay in $DELAYS; do
    "$PROXY" --upstream "$NODE" --delay-ms "$delay" >"$WORK/proxy.out" 2>/dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$WORK/proxy.out" ] && break; sleep 0.05; done
    URL="$(sed -n 's/^listening //p' "$WORK/proxy.out" | head -n1)"
    [ -n "$URL" ] || die "the proxy did not start"
    log "delay $delay ms"
    measure "$delay" "chaintrace seq (JOBS=1)" -- env CHAINTRACE_JOBS=1 \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --json --quiet
    measure "$delay" "chaintrace par (JOBS=$CORES)" -- env CHAINTRACE_JOBS="$CORES" \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --json --quiet
    measure "$delay" "chaintrace par (JOBS=$WIDE)" -- env CHAINTRACE_JOBS="$WIDE" \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --json --quiet
    rm -rf "$WORK/pq"
    measure "$delay" "chaintrace par → parquet" -- env CHAINTRACE_JOBS="$CORES" \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --quiet --out "$WORK/pq" --partition-size 100
    measure "$delay" "anvil debug_traceBlockByNumber" -- python3 "$ANVIL_CLIENT" "$URL" "$FIRST" "$LAST"
    kill "${PIDS[-1]}" 2>/dev/null || true
    : >"$WORK/proxy.out"
done

python3 - "$RESULTS" "$NBLOCKS" "$TXS" "$PROFILE" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
blocks, txs, profile = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"{blocks} blocks, {txs} transactions, chaintrace {profile} build")
print()
print("| RPC delay | run | wall s | blocks/s | txs/s | peak RSS MiB | exit |")
print("|---:|---|---:|---:|---:|---:|---:|")
for d, mode, ms, rss, code in rows:
    s = max(int(ms), 1) / 1000
    rss_mib = f"{int(rss) / 1024:.0f}" if mode.startswith("chaintrace") else "—"
    print(f"| {d} ms | {mode} | {s:.2f} | {blocks / s:.1f} | {txs / s:.1f} | {rss_mib} | {code} |")
EOF
