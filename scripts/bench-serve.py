#!/usr/bin/env python3
"""Benchmark `chaintrace serve` against anvil's own debug API, side by side in one run.

A fresh anvil 1.7.1 gets BLOCKS blocks of contract traffic (TXS per block: counter calls that
write storage, and transfers). Then CLIENTS concurrent clients trace every block ROUNDS times
with debug_traceBlockByNumber (callTracer), first through `chaintrace serve --rpc-url anvil`,
then straight at anvil: once over every block (cold: serve has fetched nothing yet), once by one
client walking the blocks in order (walk: a second, fresh serve process), then ROUNDS times more
(repeated: pre-states and node answers fetched). Reported per target and phase:
throughput (calls/s), p50/p99 latency, peak RSS of the serving process, the CPU it used and
(behind serve) the CPU its node used; the bound that CPU puts on the walk on this machine's
cores; and the serve/anvil ratios of each phase. Every serve answer is checked to be a
result (not an error) with one item per transaction.

    python3 scripts/bench-serve.py --chaintrace target/release/chaintrace --anvil .tools/bin/anvil
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import namedtuple

COUNTER_RUNTIME = "60003560005b81811015601a57805460010181556001016005565b00"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(url, payload, timeout=300):
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def rpc(url, method, params):
    r = post(url, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    if "error" in r:
        raise RuntimeError(f"{method}: {r['error']}")
    return r["result"]


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


# One target's phase: throughput, latencies, peak RSS, the CPU the serving process used, the
# CPU its node used (None when the node serves itself), and the phase's wall time in seconds.
Row = namedtuple("Row", "tput p50 p99 rss calls server_cpu node_cpu wall")


def cpu_ms(pid):
    """CPU time (user + system) a process has used so far, in ms."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def generate(node, blocks, txs_per_block):
    accts = rpc(node, "eth_accounts", [])
    frm = accts[0]
    n = len(COUNTER_RUNTIME) // 2
    init = f"60{n:02x}600c60003960{n:02x}6000f3{COUNTER_RUNTIME}"
    h = rpc(node, "eth_sendTransaction", [{"from": frm, "data": "0x" + init, "gas": "0x100000"}])
    receipt = None
    for _ in range(200):
        receipt = rpc(node, "eth_getTransactionReceipt", [h])
        if receipt:
            break
        time.sleep(0.05)
    counter = receipt["contractAddress"]
    rpc(node, "evm_setAutomine", [False])
    first = int(rpc(node, "eth_blockNumber", []), 16) + 1
    for b in range(blocks):
        for i in range(txs_per_block):
            sender = accts[i % 4]
            if i % 3 == 2:
                tx = {"from": sender, "to": accts[5 + i % 4], "value": "0x3e8"}
            else:
                slots = 3 + (b + i) % 20
                tx = {"from": sender, "to": counter, "data": "0x" + f"{slots:064x}", "gas": "0x200000"}
            rpc(node, "eth_sendTransaction", [tx])
        rpc(node, "evm_mine", [])
    rpc(node, "evm_setAutomine", [True])
    return list(range(first, first + blocks))


def run_clients(url, blocks, clients, rounds, check):
    jobs = [b for _ in range(rounds) for b in blocks]
    lock = threading.Lock()
    latencies = []
    errors = []

    def worker(k):
        for j in range(k, len(jobs), clients):
            b = jobs[j]
            t0 = time.perf_counter()
            try:
                r = post(url, {"jsonrpc": "2.0", "id": j, "method": "debug_traceBlockByNumber",
                               "params": [hex(b), {"tracer": "callTracer"}]})
                dt = time.perf_counter() - t0
                problem = check(b, r)
            except Exception as e:  # noqa: BLE001 - reported below
                dt, problem = time.perf_counter() - t0, str(e)
            with lock:
                latencies.append(dt)
                if problem:
                    errors.append(problem)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return wall, latencies, errors


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chaintrace", required=True)
    ap.add_argument("--anvil", required=True)
    ap.add_argument("--blocks", type=int, default=int(os.environ.get("BLOCKS", 60)))
    ap.add_argument("--txs", type=int, default=int(os.environ.get("TXS", 6)))
    ap.add_argument("--clients", type=int, default=int(os.environ.get("CLIENTS", 8)))
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 2)))
    a = ap.parse_args()

    procs = []
    work = tempfile.mkdtemp(prefix="bench-serve-")
    try:
        port = free_port()
        anvil = subprocess.Popen(
            [a.anvil, "--host", "127.0.0.1", "--port", str(port), "--silent",
             "--gas-limit", "60000000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(anvil)
        node = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                rpc(node, "eth_chainId", [])
                break
            except Exception:  # noqa: BLE001 - anvil still starting
                time.sleep(0.05)
        blocks = generate(node, a.blocks, a.txs)
        counts = {b: len(rpc(node, "eth_getBlockByNumber", [hex(b), False])["transactions"])
                  for b in blocks}
        print(f"bench-serve: {len(blocks)} blocks, {sum(counts.values())} txs; "
              f"{a.clients} clients x {a.rounds} rounds", file=sys.stderr)

        def start_serve():
            p = subprocess.Popen(
                [a.chaintrace, "serve", "--rpc-url", node, "--listen", "127.0.0.1:0",
                 "--cache-dir", os.path.join(work, f"cache{len(procs)}"), "--queue", "100000"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            procs.append(p)
            return p, p.stdout.readline().strip().removeprefix("listening ")

        serve, url = start_serve()
        # The walk: one client asking every block in order of a server that has seen none of
        # them (a second server process), as an indexer walks the chain.
        walker, walk_url = start_serve()

        def check(b, r):
            if "error" in r:
                return f"block {b}: {r['error']}"
            if len(r["result"]) != counts[b]:
                return f"block {b}: {len(r['result'])} items, want {counts[b]}"
            return None

        # Three phases per target: every block asked once by CLIENTS clients (cold for serve:
        # nothing fetched yet), every block asked in order by one client (walk; for serve a
        # fresh server), then ROUNDS more times by CLIENTS clients (repeated: pre-states and
        # node answers already fetched).
        rows = {}
        targets = (("chaintrace serve", url, serve.pid, walk_url, walker.pid),
                   ("anvil", node, anvil.pid, node, anvil.pid))
        for name, target, pid, walk_target, walk_pid in targets:
            for phase, rounds, clients, at, at_pid in (
                    ("cold", 1, a.clients, target, pid),
                    ("walk", 1, 1, walk_target, walk_pid),
                    ("repeated", a.rounds, a.clients, target, pid)):
                cpu0 = (cpu_ms(at_pid), cpu_ms(anvil.pid))
                wall, lat, errors = run_clients(at, blocks, clients, rounds, check)
                cpu1 = (cpu_ms(at_pid), cpu_ms(anvil.pid))
                if errors:
                    print(f"bench-serve: {name} ({phase}): {len(errors)} failed calls, "
                          f"first: {errors[0]}", file=sys.stderr)
                    sys.exit(1)
                rows[(name, phase)] = Row(
                    len(lat) / wall, pct(lat, 50) * 1e3, pct(lat, 99) * 1e3,
                    peak_rss_kib(at_pid) / 1024, len(lat), cpu1[0] - cpu0[0],
                    cpu1[1] - cpu0[1] if at_pid != anvil.pid else None, wall)
        print("| target | blocks | calls | calls/s | p50 ms | p99 ms | peak RSS MiB "
              "| server CPU ms | node CPU ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (name, phase), r in rows.items():
            node = "-" if r.node_cpu is None else f"{r.node_cpu:.0f}"
            print(f"| {name} | {phase} | {r.calls} | {r.tput:.1f} | {r.p50:.1f} | {r.p99:.1f} "
                  f"| {r.rss:.0f} | {r.server_cpu:.0f} | {node} |")
        print()
        # What bounds the walk when serve and its node share this machine's cores: the CPU
        # both used for the walk, spread over every core, against anvil's own walk's wall time.
        cores = os.cpu_count() or 1
        s_walk, n_walk = rows[("chaintrace serve", "walk")], rows[("anvil", "walk")]
        busy = (s_walk.server_cpu + s_walk.node_cpu) / cores
        if busy > 0:
            print(f"walk: serve used {s_walk.server_cpu / len(blocks):.2f} ms of CPU a block and "
                  f"its node {s_walk.node_cpu / len(blocks):.2f} ms (anvil tracing a block itself: "
                  f"{n_walk.server_cpu / len(blocks):.2f} ms); on {cores} cores that CPU bounds "
                  f"the walk at {n_walk.wall * 1e3 / busy:.2f}x anvil")
        print()
        for phase in ("cold", "walk", "repeated"):
            s, n = rows[("chaintrace serve", phase)], rows[("anvil", phase)]
            print(f"ratios, {phase} blocks (serve / anvil): throughput {s.tput / n.tput:.2f}x, "
                  f"p50 {n.p50 / s.p50:.2f}x faster, p99 {n.p99 / s.p99:.2f}x faster")
        print("(anvil's RSS includes its whole chain; serve's is the tracer alone; anvil has "
              "every block in memory in both phases)")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
