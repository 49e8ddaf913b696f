#!/usr/bin/env python3
"""What naming costs `chaintrace tx` (issue 44): the whole process, with and without the
project's names, side by side on one anvil, for two projects:

- `oz`: an OpenZeppelin ERC20 (`Token` of tests/contracts/oz/State.sol, built by solc-js 0.8.30
  into tests/contracts/oz/solc-output-state.json, storage layouts included, one 291 KiB file);
  traced: its `transferFrom` (balances and an allowance written), named with `--abi FILE`;
- `forge`: the Foundry project tests/contracts/forge-world built by the pinned forge
  (scripts/build-forge-world.sh: 42 artifacts, 3 MiB with their ASTs) and deployed by
  scripts/forge-world-demo.sh; traced: its `zap` (9 changes across an ERC20, an ERC4626 vault
  and an ERC-7201 ledger behind a proxy), named by running inside the project (its `out/` found
  by itself) — the issue's own bar.

    bare:  chaintrace tx HASH --rpc-url URL --no-project
    named: chaintrace tx HASH --rpc-url URL [--no-project --abi FILE | from inside the project]

(named: decoded calls and events, source locations, and the state changes by variable, keys
exact), alternating the two RUNS times each. Measured twice per project:

- `nothing kept`: CHAINTRACE_NO_CACHE=1, every run reads the project's artifacts afresh (a first
  run in a project just built);
- `project kept`: the default on-disk cache (CHAINTRACE_CACHE_DIR, a fresh directory in
  /dev/shm where there is one), its chain data deleted before every run (each run a transaction
  not seen before) and the project's artifacts, as loaded, kept between runs
  (names/artifacts/cached.rs: a tree, or an `--abi` file): a developer's next `tx` in a
  project already used. Both commands write the chain data they fetch, as by default; in memory, so
  that the disk's sync time (3-10 ms a run here, varying) does not swamp what is measured;
- with `--all-kept`, also `all kept`: the same cache, nothing deleted between runs (the same
  transaction traced again, its chain data read from the cache: the bare run is shortest, and
  naming's share of it largest).

Reported per project and way: the median wall time and peak RSS of each, and what naming adds,
in percent.

    python3 scripts/bench-naming.py --chaintrace target/release/chaintrace --anvil .tools/bin/anvil [--project oz|forge|both] [--all-kept]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
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


def forge_scenario(url, work):
    """Builds the forge project into WORK/forge-world and runs its demo on the node: the
    project's directory and the zap's hash."""
    project = os.path.join(work, "forge-world")
    subprocess.run(["bash", os.path.join(ROOT, "scripts/build-forge-world.sh"), project],
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run(["bash", os.path.join(ROOT, "scripts/forge-world-demo.sh"), url, project],
                         check=True, capture_output=True, text=True).stdout
    kv = dict(line.split("=", 1) for line in out.split())
    return project, kv["ZAP_TX"]


class Way:
    """How runs are made: `kept` = None: nothing cached; else the cache directory whose chain
    data is deleted before every run (the project's artifacts kept)."""

    def __init__(self, kept=None, wipe=True):
        self.kept = kept
        self.wipe = wipe

    def env(self):
        if self.kept is None:
            return dict(os.environ, CHAINTRACE_NO_CACHE="1", NO_COLOR="1")
        env = dict(os.environ, CHAINTRACE_CACHE_DIR=self.kept, NO_COLOR="1")
        env.pop("CHAINTRACE_NO_CACHE", None)
        return env

    def before(self):
        if self.kept is None or not self.wipe or not os.path.isdir(self.kept):
            return
        for d in os.listdir(self.kept):
            if d not in ("names", "layouts"):
                shutil.rmtree(os.path.join(self.kept, d), ignore_errors=True)


WAY = Way()
ALL_KEPT = False


def run(cmd, cwd=None):
    """Wall time (s) of one run; its exit code must be 0."""
    env = WAY.env()
    WAY.before()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd}: exit {p.returncode}: {p.stderr.decode()}")
    return wall


def peak_rss(cmd, cwd=None):
    """Peak RSS (KiB) of one run, as GNU time reports it. (Not the rusage of a child of this
    script: Linux keeps the peak of the forked Python image across exec, so every child
    would seem at least as large as Python.)"""
    env = WAY.env()
    WAY.before()
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        return int(f.read().split()[-1])


def measure(name, cmds, runs, work):
    """Both ways of `measure_way`."""
    global WAY
    WAY = Way()
    measure_way(f"{name}; nothing kept", cmds, runs)
    # In memory where the machine has it: each chain-data entry a run writes is synced to disk,
    # which on this machine's disk costs 3-10 ms a run, varying more than naming costs.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else work
    kept = tempfile.mkdtemp(prefix="chaintrace-kept-", dir=shm)
    WAY = Way(kept)
    try:
        measure_way(f"{name}; project kept", cmds, runs)
        if ALL_KEPT:
            WAY = Way(kept, wipe=False)
            measure_way(f"{name}; all kept", cmds, runs)
    finally:
        shutil.rmtree(kept, ignore_errors=True)
    WAY = Way()


def measure_way(name, cmds, runs):
    """Alternates the (argv, cwd) of each of `cmds` RUNS times; prints the medians."""
    got = {k: [] for k in cmds}
    run(*cmds["bare"])  # warm the page cache
    run(*cmds["named"])
    for _ in range(runs):
        for k, c in cmds.items():
            got[k].append(run(*c))
    med = {k: statistics.median(v) for k, v in got.items()}
    rss = {k: statistics.median(peak_rss(*c) for _ in range(5)) for k, c in cmds.items()}
    print(f"[{name}]")
    for k in cmds:
        print(f"{k:6} median {med[k] * 1000:7.1f} ms  peak RSS {rss[k] / 1024:6.1f} MiB  "
              f"({runs} runs; RSS: median of 5 under GNU time)")
    added = (med["named"] / med["bare"] - 1) * 100
    print(f"naming adds {added:+.1f}% wall time, {(rss['named'] / rss['bare'] - 1) * 100:+.1f}% "
          f"peak RSS (issue 44 asks <= 10% wall time)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chaintrace", required=True)
    ap.add_argument("--anvil", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--project", choices=["oz", "forge", "both"], default="both")
    ap.add_argument("--all-kept", action="store_true")
    a = ap.parse_args()
    global ALL_KEPT
    ALL_KEPT = a.all_kept
    chaintrace = os.path.abspath(a.chaintrace)
    port = free_port()
    node = subprocess.Popen(
        [a.anvil, "--port", str(port), "--silent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    work = tempfile.mkdtemp(prefix="bench-naming-")
    try:
        for _ in range(200):
            try:
                rpc(url, "eth_chainId", [])
                break
            except OSError:
                time.sleep(0.05)
        if a.project in ("oz", "both"):
            h = scenario(url)
            base = [chaintrace, "tx", h, "--rpc-url", url, "--no-project"]
            measure("oz: transferFrom, --abi FILE",
                    {"bare": (base, work), "named": (base + ["--abi", OUT], work)}, a.runs, work)
        if a.project in ("forge", "both"):
            project, h = forge_scenario(url, work)
            base = [chaintrace, "tx", h, "--rpc-url", url]
            # A tree written in the last two seconds is not kept (names/artifacts/cached.rs).
            time.sleep(2.5)
            measure("forge: zap, from inside the project",
                    {"bare": (base + ["--no-project"], work), "named": (base, project)}, a.runs,
                    work)
    finally:
        node.terminate()
        node.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
