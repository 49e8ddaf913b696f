#!/usr/bin/env python3
"""Source-position benchmark (issue 22 item 8): what "where it failed" costs a traced 1M-gas
transaction, and what gas by source costs a gas report.

One anvil 1.7.1 (Prague); LoopThenFail (tests/contracts/srcmap/GasProfile.sol, solc's committed standard-JSON
output) deployed; `runThenFail(n)` sent with n chosen so the transaction uses ~1M gas: a loop
of n internal calls, then a revert — one failed frame that ran every step, the path where the
call tracer records pcs and JUMPs and the stack is rebuilt from them.

Side by side, alternating, median of 21 runs each (BENCH_RUNS) (whole processes: RPC, replay, names, output):
  tree, maps      chaintrace tx H --abi solc-output.json            (source maps: locations, stack, values)
  tree, no values the same with CHAINTRACE_ARGUMENT_VALUES=0         (names alone)
  tree, no maps   chaintrace tx H --abi <the same output, sourceMap fields removed>  (same names)
  gas             chaintrace gas H --abi solc-output.json
  gas by source   chaintrace gas H --abi solc-output.json --by-line --by-function
The ratios "maps / no maps" (target <= 1.10), "values / names alone" (target <= 1.05) and
"by source / gas" are printed. Nothing is
asserted. The disk cache is used (its first run warms it), so the node's share is small and
equal on both sides.
"""
import json, os, socket, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANVIL = os.environ.get("CHAINTRACE_ANVIL", os.path.join(ROOT, ".tools/bin/anvil"))
BIN = os.path.join(ROOT, "target/release/chaintrace")
OUT = os.path.join(ROOT, "tests/contracts/srcmap/solc-output.json")
RUNS = int(os.environ.get("BENCH_RUNS", "21"))


def rpc(url, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        out = json.load(r)
    if "error" in out:
        raise SystemExit(f"{method}: {out['error']}")
    return out["result"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_receipt(url, h):
    for _ in range(600):
        r = rpc(url, "eth_getTransactionReceipt", [h])
        if r:
            return r
        time.sleep(0.05)
    raise SystemExit(f"no receipt for {h}")


def send(url, sender, to, data, gas):
    tx = {"from": sender, "data": data, "gas": hex(gas)}
    if to:
        tx["to"] = to
    h = rpc(url, "eth_sendTransaction", [tx])
    return h, wait_receipt(url, h)


def timed(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode()}")
    return dt, p.stdout.decode()


def main():
    out = json.load(open(OUT))
    gp = out["contracts"]["GasProfile.sol"]["LoopThenFail"]
    stripped = json.loads(json.dumps(out))
    for file in stripped["contracts"].values():
        for c in file.values():
            for part in ("bytecode", "deployedBytecode"):
                c.get("evm", {}).get(part, {}).pop("sourceMap", None)
    tmp = tempfile.mkdtemp(prefix="chaintrace-bench-srcmap-")
    no_maps = os.path.join(tmp, "solc-output-no-maps.json")
    json.dump(stripped, open(no_maps, "w"))

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    anvil = subprocess.Popen([ANVIL, "--host", "127.0.0.1", "--port", str(port), "--silent",
                              "--hardfork", "prague", "--gas-limit", "30000000"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                rpc(url, "eth_chainId", [])
                break
            except Exception:
                time.sleep(0.05)
        sender = rpc(url, "eth_accounts", [])[0]
        _, r = send(url, sender, None, "0x" + gp["evm"]["bytecode"]["object"], 3_000_000)
        addr = r["contractAddress"]
        selector = "0x" + gp["evm"].get("methodIdentifiers", {}).get("runThenFail(uint256)", "")
        if selector == "0x":
            # keccak256("runThenFail(uint256)")[:4], computed by the node's own web3_sha3.
            sig = "0x" + "runThenFail(uint256)".encode().hex()
            selector = rpc(url, "web3_sha3", [sig])[:10]

        def call_data(n):
            return selector + "%064x" % n

        _, r = send(url, sender, addr, call_data(1000), 5_000_000)
        per = int(r["gasUsed"], 16) / 1000
        n = int(1_000_000 / per)
        h, r = send(url, sender, addr, call_data(n), 5_000_000)
        assert r["status"] == "0x0", "runThenFail must revert"
        gas_used = int(r["gasUsed"], 16)

        env = dict(os.environ, CHAINTRACE_CACHE_DIR=os.path.join(tmp, "cache"), NO_COLOR="1")
        base = [BIN]
        variants = [
            ("tree, maps", ["tx", h, "--rpc-url", url, "--abi", OUT]),
            ("tree, no values", ["tx", h, "--rpc-url", url, "--abi", OUT]),
            ("tree, no maps", ["tx", h, "--rpc-url", url, "--abi", no_maps]),
            ("gas", ["gas", h, "--rpc-url", url, "--abi", OUT]),
            ("gas by source", ["gas", h, "--rpc-url", url, "--abi", OUT, "--by-line", "--by-function"]),
        ]
        # Warm the disk cache and check each output says what it should.
        outputs = {name: timed(base + args, env)[1] for name, args in variants}
        assert "Solidity stack trace" in outputs["tree, maps"], outputs["tree, maps"]
        assert "Solidity stack trace" not in outputs["tree, no maps"]
        assert "by line (execution gas)" in outputs["gas by source"]
        # "tree, no values": the same run with argument values off (names alone).
        envs = {name: env for name, _ in variants}
        envs["tree, no values"] = dict(env, CHAINTRACE_ARGUMENT_VALUES="0")
        outputs["tree, no values"] = timed(base + variants[1][1], envs["tree, no values"])[1]
        assert "runThenFail(n: " in outputs["tree, maps"], outputs["tree, maps"]
        assert "runThenFail(n)" in outputs["tree, no values"], outputs["tree, no values"]
        times = {name: [] for name, _ in variants}
        for _ in range(RUNS):
            for name, args in variants:
                times[name].append(timed(base + args, envs[name])[0])
    finally:
        anvil.kill()
        anvil.wait()

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"transaction: runThenFail({n}), gasUsed {gas_used:,}, reverted; median of {RUNS} runs")
    print(f"{'variant':<16} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, _ in variants:
        v = times[name]
        print(f"{name:<16} {med[name]:9.3f} {min(v):7.3f} {max(v):7.3f}")
    print(f"source positions: tree with maps / without = {med['tree, maps'] / med['tree, no maps']:.3f}x (target <= 1.10)")
    print(f"argument values: tree with values / names alone = {med['tree, maps'] / med['tree, no values']:.3f}x (target <= 1.05)")
    print(f"gas by source: --by-line --by-function / plain gas = {med['gas by source'] / med['gas']:.3f}x")


if __name__ == "__main__":
    sys.exit(main())
