#!/usr/bin/env python3
"""Struct-log (opcodeTracer) benchmark: chaintrace vs anvil 1.7.1, side by side in one run.

Workloads, deployed with anvil_setCode on two fresh local anvils running the same transactions
(chaintrace reads a plain one; anvil's own struct logs need --steps-tracing, which slows every
tx-related answer of that node, so the peer answers from a second one):
  A  arithmetic loop, 40,000 iterations: ~1.04M gas, ~280k opcodes (stack only, no storage);
  B  storage + memory loop, 175,000 iterations: ~25.7M gas, ~2.6M opcodes (SSTORE to 8 slots,
     MSTORE), traced with stack and storage, and once more with memory.

1. One run per trace with the struct logs going to a file: wall time and peak RSS of
   `chaintrace tx HASH --tracer opcodeTracer --json` (a whole process: RPC fetch, replay,
   output) and the output's size.
2. Workload A in BENCH_PAIRS (default 7) interleaved rounds, each writing to a file and to
   /dev/null: chaintrace as above, and anvil's own debug_traceTransaction (the HTTP call, its
   answer streamed into the file or read and dropped). Medians, the ratio, chaintrace's peak
   RSS over all its runs, and whether every chaintrace file is byte-identical.

Targets (issue 23): chaintrace >= 5x anvil on workload A with both writing to a file, peak RSS
<= 32 MB there; <= 64 MB on every workload. Nothing is asserted: figures are printed.
CHAINTRACE_BIN runs another build (e.g. an older one, for a before/after table).
"""
import hashlib, json, os, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANVIL = os.environ.get("CHAINTRACE_ANVIL", os.path.join(ROOT, ".tools/bin/anvil"))
BIN = os.environ.get("CHAINTRACE_BIN", os.path.join(ROOT, "target/release/chaintrace"))
PAIRS = int(os.environ.get("BENCH_PAIRS", "7"))


def rpc(url, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        out = json.load(r)
    if "error" in out:
        raise SystemExit(f"{method}: {out['error']}")
    return out["result"]


def loop_a(n):
    return "62%06x5b600190038060045700" % n


def loop_b(n):
    return "62%06x5b805f5280806007165560019003806004" % n + "5700"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def run_measured(cmd, stdout_path):
    """Runs cmd with stdout to a file; returns (seconds, peak RSS MB, exit code). The peak is
    GNU time's: the rusage of a child of this script would include the forked Python image,
    whose peak Linux keeps across exec."""
    with open(stdout_path, "wb") as out, tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd, stdout=out,
                           stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        peak = rss.read().split()
    err = p.stderr.decode()
    code = p.returncode
    if code not in (0, 3):
        raise SystemExit(f"{' '.join(cmd)} failed ({code}): {err}")
    return dt, int(peak[-1]) / 1024.0 if peak else 0.0, code


def anvil_trace_to(url, h, path):
    """anvil's debug_traceTransaction for h, its answer streamed into path; returns seconds."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction", "params": [h, {}]}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r, open(path, "wb") as out:
        shutil.copyfileobj(r, out, 1 << 20)
    return time.perf_counter() - t0


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pairs(url, peer_url, h, tmp):
    """Workload A, PAIRS interleaved rounds to a file and to /dev/null, both tools."""
    cmd = [BIN, "tx", h, "--rpc-url", url, "--json", "--no-cache", "--hardfork", "prague", "--tracer", "opcodeTracer"]
    t = {k: [] for k in ("ours_file", "anvil_file", "ours_null", "anvil_null")}
    rss, digests = [], set()
    ours_path, anvil_path = os.path.join(tmp, "pair-ours.json"), os.path.join(tmp, "pair-anvil.json")
    for _ in range(PAIRS):
        dt, r, _ = run_measured(cmd, ours_path)
        t["ours_file"].append(dt)
        rss.append(r)
        digests.add(digest(ours_path))
        t["anvil_file"].append(anvil_trace_to(peer_url, h, anvil_path))
        dt, r, _ = run_measured(cmd, os.devnull)
        t["ours_null"].append(dt)
        rss.append(r)
        t["anvil_null"].append(anvil_trace_to(peer_url, h, os.devnull))
    med = {k: statistics.median(v) for k, v in t.items()}
    lines = [f"\nworkload A, {PAIRS} interleaved pairs (median seconds; min-max):"]
    for dest in ("file", "null"):
        o, a = t[f"ours_{dest}"], t[f"anvil_{dest}"]
        label = "to a file" if dest == "file" else "to /dev/null"
        lines.append(f"  {label:13} chaintrace {med[f'ours_{dest}']:.3f} ({min(o):.3f}-{max(o):.3f})"
                     f"  anvil {med[f'anvil_{dest}']:.3f} ({min(a):.3f}-{max(a):.3f})"
                     f"  ratio {med[f'anvil_{dest}'] / med[f'ours_{dest}']:.2f}x")
    lines.append(f"  chaintrace peak RSS over its {2 * PAIRS} runs: {max(rss):.1f} MB (target <= 32 MB);"
                 f" its {PAIRS} files {'are byte-identical' if len(digests) == 1 else 'DIFFER'}"
                 f" ({os.path.getsize(ours_path) / 1e6:.1f} MB)")
    lines.append(f"  target: chaintrace >= 5x anvil with both writing to a file: "
                 f"{med['anvil_file'] / med['ours_file']:.2f}x")
    os.remove(ours_path)
    os.remove(anvil_path)
    return lines


def start_anvil(extra):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Prague: Osaka's EIP-7825 caps a transaction at 2^24 gas, too little for workload B.
    proc = subprocess.Popen([ANVIL, "--host", "127.0.0.1", "--port", str(port), "--silent", "--hardfork", "prague"]
                            + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            rpc(url, "eth_chainId", [])
            return proc, url
        except Exception:
            time.sleep(0.05)
    raise SystemExit("anvil did not start")


def run_workloads(url):
    sender = rpc(url, "eth_accounts", [])[0]
    hashes = {}
    for name, addr, code, gas in [("A", "0x" + "00" * 18 + "c0de", loop_a(40_000), 2_000_000),
                                  ("B", "0x" + "00" * 18 + "c0df", loop_b(175_000), 29_000_000)]:
        rpc(url, "anvil_setCode", [addr, "0x" + code])
        h = rpc(url, "eth_sendTransaction", [{"from": sender, "to": addr, "gas": hex(gas)}])
        r = None
        for _ in range(400):
            r = rpc(url, "eth_getTransactionReceipt", [h])
            if r is not None:
                break
            time.sleep(0.05)
        if r is None:
            raise SystemExit(f"workload {name}: transaction {h} was not mined")
        hashes[name] = (h, int(r["gasUsed"], 16))
    return hashes


def main():
    if not os.path.exists(BIN):
        subprocess.check_call(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    print(f"chaintrace: {BIN}")
    # Two anvils run the same deterministic transactions (same accounts, code and nonces, so the
    # same hashes). anvil 1.7.1 returns struct logs only with --steps-tracing, which records every
    # step while mining and makes each of its tx-related RPC answers ~70 ms slower; chaintrace
    # reads from the plain one, the peer answers from its own. Each tool gets the node it needs.
    plain, url = start_anvil([])
    peer, peer_url = start_anvil(["--steps-tracing"])
    anvil = peer
    try:
        hashes = run_workloads(url)
        peer_hashes = run_workloads(peer_url)
        if hashes != peer_hashes:
            raise SystemExit(f"the two anvils disagree: {hashes} vs {peer_hashes}")
        tmp = tempfile.mkdtemp(prefix="chaintrace-bench-")
        rows = []
        for name, cfg in [("A", {}), ("B", {}), ("B", {"enableMemory": True})]:
            h, gas = hashes[name]
            path = os.path.join(tmp, f"{name}.json")
            cmd = [BIN, "tx", h, "--rpc-url", url, "--json", "--no-cache", "--hardfork", "prague", "--tracer", "opcodeTracer",
                   "--tracer-config", json.dumps(cfg)]
            dt, rss, _ = run_measured(cmd, path)
            size = os.path.getsize(path)
            rows.append((f"chaintrace {name} {json.dumps(cfg)}", gas, None, dt, rss, size))
            if name != "A":
                os.remove(path)
        # Before anything large is read into this process (a large parent would inflate the
        # children's peak RSS, which counts the forked image before exec).
        h, gas = hashes["A"]
        pair_lines = pairs(url, peer_url, h, tmp) if PAIRS > 0 else []
        # The peer: anvil's own struct logs for workload A.
        before = vm_hwm_kb(anvil.pid)
        t0 = time.perf_counter()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction", "params": [h, {}]}).encode()
        req = urllib.request.Request(peer_url, body, {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            data = r.read()
        dt_anvil = time.perf_counter() - t0
        after = vm_hwm_kb(anvil.pid)
        # Parsed only now: a large parent process would inflate the children's peak RSS, which
        # counts the forked image before exec.
        reply = json.loads(data)
        if "error" in reply:
            raise SystemExit(f"anvil debug_traceTransaction: {reply['error']}")
        steps_anvil = len(reply["result"]["structLogs"])
        with open(os.path.join(tmp, "A.json")) as f:
            rows[0] = rows[0][:2] + (len(json.load(f)["structLogs"]),) + rows[0][3:]
        rows.append(("anvil debug_traceTransaction A {}", gas, steps_anvil, dt_anvil, after / 1024.0, len(data)))
        print(f"{'run':44} {'gas':>10} {'steps':>9} {'seconds':>8} {'peak RSS MB':>12} {'output MB':>10}")
        for label, gas, steps, dt, rss, size in rows:
            print(f"{label:44} {gas:>10} {steps if steps is not None else '':>9} {dt:>8.3f} {rss:>12.1f} {size / 1e6:>10.1f}")
        ours_a = rows[0][3]
        print(f"\nworkload A: chaintrace is {dt_anvil / ours_a:.2f}x faster than anvil (target >= 3x);"
              f" anvil's peak RSS {after / 1024.0:.1f} MB (steps recorded while mining)")
        worst = max(r[4] for r in rows[:3])
        print(f"chaintrace peak RSS, worst of the three runs: {worst:.1f} MB (target <= 64 MB)")
        for line in pair_lines:
            print(line)
        shutil.rmtree(tmp, ignore_errors=True)
    finally:
        for p in (plain, peer):
            p.terminate()
            p.wait()


if __name__ == "__main__":
    main()
