#!/usr/bin/env python3
"""What naming costs `chaintrace tx` (issue 44): the whole process, with and without the
project's names, side by side on one anvil.

An OpenZeppelin ERC20 (`Token` of tests/contracts/oz/State.sol, built by solc-js 0.8.30 into
tests/contracts/oz/solc-output-state.json, storage layouts included) is deployed on a fresh
anvil 1.7.1; the bench traces its `transferFrom` (balances and an allowance written) with

    bare:  chaintrace tx HASH --rpc-url URL --no-project
    named: chaintrace tx HASH --rpc-url URL --no-project --abi solc-output-state.json

(named: decoded calls and events, source locations, and the state changes by variable, keys
exact), alternating the two RUNS times each, nothing cached between runs (CHAINTRACE_NO_CACHE).
Reported: the median wall time and peak RSS of each, and what naming adds, in percent.

    python3 scripts/bench-naming.py --chaintrace target/release/chaintrace --anvil .tools/bin/anvil
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/contracts/oz/solc-output-state.json")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rpc(url, method, params):
    req = urllib.request.Request(
        url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        out = json.loads(r.read())
    if "error" in out:
        raise RuntimeError(f"{method}: {out['error']}")
    return out["result"]


def receipt(url, h):
    for _ in range(400):
        r = rpc(url, "eth_getTransactionReceipt", [h])
        if r:
            return r
        time.sleep(0.025)
    raise RuntimeError(f"no receipt for {h}")


def send(url, tx):
    r = receipt(url, rpc(url, "eth_sendTransaction", [tx]))
    if r["status"] != "0x1":
        raise RuntimeError(f"failed: {tx}")
    return r


def word(x):
    return f"{x:064x}"


def addr_word(a):
    return a[2:].lower().rjust(64, "0")


def scenario(url):
    """Deploys the token and sends approve + transferFrom; the transferFrom's hash."""
    out = json.load(open(OUT))
    code = out["contracts"]["State.sol"]["Token"]["evm"]["bytecode"]["object"]
    me, spender, to = rpc(url, "eth_accounts", [])[:3]
    supply = 10_000 * 10**18
    token = send(url, {"from": me, "data": "0x" + code + word(supply), "gas": "0x500000"})[
        "contractAddress"
    ]
    approve = "0x095ea7b3" + addr_word(spender) + word(500 * 10**18)
    send(url, {"from": me, "to": token, "data": approve})
    transfer_from = "0x23b872dd" + addr_word(me) + addr_word(to) + word(300 * 10**18)
    return send(url, {"from": spender, "to": token, "data": transfer_from})["transactionHash"]


def run(cmd):
    """Wall time (s) and peak RSS (KiB) of one run; its exit code must be 0."""
    env = dict(os.environ, CHAINTRACE_NO_CACHE="1", NO_COLOR="1")
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{cmd}: exit {code}: {err}")
    return wall, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chaintrace", required=True)
    ap.add_argument("--anvil", required=True)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    port = free_port()
    node = subprocess.Popen(
        [a.anvil, "--port", str(port), "--silent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                rpc(url, "eth_chainId", [])
                break
            except OSError:
                time.sleep(0.05)
        h = scenario(url)
        base = [a.chaintrace, "tx", h, "--rpc-url", url, "--no-project"]
        cmds = {"bare": base, "named": base + ["--abi", OUT]}
        got = {k: [] for k in cmds}
        run(cmds["bare"])  # warm the page cache
        for _ in range(a.runs):
            for k, c in cmds.items():
                got[k].append(run(c))
        med = {k: statistics.median(w for w, _ in v) for k, v in got.items()}
        rss = {k: statistics.median(r for _, r in v) for k, v in got.items()}
        for k in cmds:
            print(f"{k:6} median {med[k] * 1000:7.1f} ms  peak RSS {rss[k] / 1024:6.1f} MiB  "
                  f"({a.runs} runs)")
        added = (med["named"] / med["bare"] - 1) * 100
        print(f"naming adds {added:+.1f}% wall time, {(rss['named'] / rss['bare'] - 1) * 100:+.1f}% "
              f"peak RSS (issue 44 asks <= 10% wall time)")
    finally:
        node.terminate()
        node.wait()


if __name__ == "__main__":
    main()
