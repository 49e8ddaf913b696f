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
#   default   chaintrace block A..B --json, no settings (NDJSON to /dev/null)
#   JOBS=N    the same with CHAINTRACE_JOBS=N: 1 (sequential), and each of $JOBS_ALSO
#   → parquet the defaults with --out DIR --format parquet
#   anvil ×1  one debug_traceBlockByNumber(callTracer) per block, sequentially, the node
#             doing the tracing (a Python client; its RSS is not the node's and is not shown)
#   anvil ×8  the same from 8 parallel clients, each a contiguous eighth of the range
#
# Peak RSS is the client process's maximum resident set (/usr/bin/time -v, else
# /proc/<pid>/status VmHWM sampled). Requests and round trips come from the proxy's counters
# (a round trip: a period with at least one request in flight, so concurrent requests count
# once): per block, they say what the node's latency costs.
#
#   bash scripts/bench-range.sh             # uses target/release if built, else target/debug
#   PROFILE=release BLOCKS=300 DELAYS="0 20 50" bash scripts/bench-range.sh
set -euo pipefail

BLOCKS="${BLOCKS:-200}"
DELAYS="${DELAYS:-0 20}"
JOBS_ALSO="${JOBS_ALSO:-}"   # more worker counts to measure beside the defaults and 1
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
# anvil keeps the states of its last 500 blocks in memory and a few thousand more on disk, and
# answers "BlockOutOfRangeError" for state older than that: keep every block's state in memory.
"$ANVIL" --host 127.0.0.1 --port "$PORT" --silent --gas-limit 60000000 \
    --prune-history "$(( BLOCKS + 100 ))" >"$WORK/anvil.log" 2>&1 &
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
stats() { python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$1"; }
measure() {
    local delay="$1" mode="$2"; shift 3
    local t0 t1 code=0 rss=""
    stats "$URL/reset" >/dev/null
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
    local st
    st="$(stats "$URL/stats")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$delay" "$mode" "$(( t1 - t0 ))" "${rss:-0}" "$code" "$st" >>"$RESULTS"
}

ANVIL_CLIENT="$WORK/anvil_trace.py"
cat >"$ANVIL_CLIENT" <<'EOF'
import json, sys, threading, urllib.request
url, first, last, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = {}
def run(lo, hi):
    for n in range(lo, hi + 1):
        req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": n,
            "method": "debug_traceBlockByNumber", "params": [hex(n), {"tracer": "callTracer"}]}).encode(),
            {"content-type": "application/json"})
        r = json.load(urllib.request.urlopen(req, timeout=120))
        if "error" in r:
            raise SystemExit(f"block {n}: {r['error']}")
        out[n] = "".join(json.dumps(t) + "\n" for t in r["result"])
total = last - first + 1
parts = [(first + total * i // clients, first + total * (i + 1) // clients - 1) for i in range(clients)]
threads = [threading.Thread(target=run, args=p) for p in parts if p[0] <= p[1]]
for t in threads: t.start()
for t in threads: t.join()
if len(out) != total:
    raise SystemExit("some blocks were not traced")
sys.stdout.write("".join(out[n] for n in range(first, last + 1)))
EOF

# One untimed pass first, so the node's own caches are as warm for every measured run.
CHAINTRACE_JOBS=1 "$CT" block "$FIRST..$LAST" --rpc-url "$NODE" --json --quiet >/dev/null 2>"$WORK/warm.err" ||
    die "chaintrace failed over $FIRST..$LAST: $(tail -c 2000 "$WORK/warm.err")"

for delay in $DELAYS; do
    "$PROXY" --upstream "$NODE" --delay-ms "$delay" >"$WORK/proxy.out" 2>/dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$WORK/proxy.out" ] && break; sleep 0.05; done
    URL="$(sed -n 's/^listening //p' "$WORK/proxy.out" | head -n1)"
    [ -n "$URL" ] || die "the proxy did not start"
    log "delay $delay ms"
    measure "$delay" "chaintrace (defaults)" -- env -u CHAINTRACE_JOBS \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --json --quiet
    for jobs in 1 $JOBS_ALSO; do
        measure "$delay" "chaintrace JOBS=$jobs" -- env CHAINTRACE_JOBS="$jobs" \
            "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --json --quiet
    done
    rm -rf "$WORK/pq"
    measure "$delay" "chaintrace → parquet (defaults)" -- env -u CHAINTRACE_JOBS \
        "$CT" block "$FIRST..$LAST" --rpc-url "$URL" --quiet --out "$WORK/pq" --partition-size 100
    measure "$delay" "anvil ×1 client" -- python3 "$ANVIL_CLIENT" "$URL" "$FIRST" "$LAST" 1
    measure "$delay" "anvil ×8 clients" -- python3 "$ANVIL_CLIENT" "$URL" "$FIRST" "$LAST" 8
    kill "${PIDS[-1]}" 2>/dev/null || true
    : >"$WORK/proxy.out"
done

python3 - "$RESULTS" "$NBLOCKS" "$TXS" "$PROFILE" <<'EOF'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
blocks, txs, profile = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"{blocks} blocks, {txs} transactions, chaintrace {profile} build")
print()
print("| RPC delay | run | wall s | blocks/s | txs/s | requests/block | round trips/block | peak RSS MiB | exit |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
rate = {}
for d, mode, ms, rss, code, st in rows:
    s = max(int(ms), 1) / 1000
    st = json.loads(st)
    rate[(d, mode)] = blocks / s
    rss_mib = f"{int(rss) / 1024:.0f}" if mode.startswith("chaintrace") else "—"
    print(f"| {d} ms | {mode} | {s:.2f} | {blocks / s:.1f} | {txs / s:.1f} | "
          f"{st['requests'] / blocks:.2f} | {st['roundTrips'] / blocks:.2f} | {rss_mib} | {code} |")
print()
for d in sorted({r[0] for r in rows}, key=int):
    ct = rate.get((d, "chaintrace (defaults)"))
    a1 = rate.get((d, "anvil ×1 client"))
    a8 = rate.get((d, "anvil ×8 clients"))
    pq = rate.get((d, "chaintrace → parquet (defaults)"))
    if ct and a1 and a8 and pq:
        print(f"{d} ms: defaults vs anvil ×1 {ct / a1:.2f}x, vs anvil ×8 {ct / a8:.2f}x; "
              f"parquet at {pq / ct * 100:.0f}% of the NDJSON rate")
EOF
