#!/usr/bin/env python3
"""Trace a block range across a Dask distributed cluster, then query it with DuckDB.

The range A..B is cut into tasks of --task-blocks blocks (a multiple of --partition-size, so no
partition is split between tasks). Each task runs

    chaintrace block a..b --out OUT --format parquet --partition-size P --resume --quiet

on a worker. Tasks that fail (non-zero exit) are retried by Dask up to --retries times; thanks to
--resume a retry only writes the partitions its failed attempt did not finish. Every task writes
into the same OUT directory (chaintrace merges manifest entries under a lock file), so on a real
cluster OUT must be a filesystem every worker shares, and the chaintrace binary and --rpc-url
must be reachable from every worker.

Without --scheduler a LocalCluster of --workers worker processes is started here.

The last line on stdout is a JSON summary: tasks, retries, partitions, and the row counts DuckDB
reads back (txs = top-level frames of `calls`, calls, logs).

Example:
    python examples/dask/range.py --rpc-url http://127.0.0.1:8545 --range 0..9999 --out /data/t
    python examples/dask/range.py --scheduler tcp://10.0.0.5:8786 ...
"""

import argparse
import json
import os
import subprocess
import sys


def parse_range(s):
    a, _, b = s.partition("..")
    a, b = int(a, 0), int(b, 0)
    if not _ or a > b:
        raise SystemExit(f"malformed --range {s!r}: expected A..B with A <= B")
    return a, b


def tasks(a, b, task_blocks):
    """Sub-ranges of a..b cut at multiples of task_blocks (inclusive bounds)."""
    out = []
    start = a
    while start <= b:
        end = min((start // task_blocks + 1) * task_blocks - 1, b)
        out.append((start, end))
        start = end + 1
    return out


def run_task(binary, rpc_url, out, fmt, partition_size, first, last, extra, fail_marker):
    """One Dask task: chaintrace over first..last; raises on failure so Dask retries it."""
    if fail_marker and not os.path.exists(fail_marker):
        # Test hook: the first attempt of the task that owns the marker fails once.
        open(fail_marker, "w").close()
        raise RuntimeError(f"injected failure for {first}..{last}")
    cmd = [
        binary, "block", f"{first}..{last}", "--rpc-url", rpc_url, "--out", out,
        "--format", fmt, "--partition-size", str(partition_size), "--resume", "--quiet",
    ] + extra
    env = dict(os.environ, CHAINTRACE_JOBS=os.environ.get("CHAINTRACE_JOBS", "1"))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(
            f"chaintrace {first}..{last} exited {p.returncode}: {p.stderr.strip()[-2000:]}"
        )
    return (first, last)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rpc-url", required=True)
    ap.add_argument("--range", required=True, help="inclusive A..B")
    ap.add_argument("--out", required=True, help="output directory (shared by all workers)")
    ap.add_argument("--chaintrace", default="chaintrace", help="path of the chaintrace binary")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster workers (no --scheduler)")
    ap.add_argument("--partition-size", type=int, default=1000)
    ap.add_argument("--task-blocks", type=int, default=0,
                    help="blocks per task, a multiple of --partition-size (default: 1 partition)")
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--tracer-config", help="passed to chaintrace")
    ap.add_argument("--inject-failure", metavar="FILE",
                    help="testing: the first task fails once (marker FILE records it)")
    args = ap.parse_args()

    a, b = parse_range(args.range)
    size = args.partition_size
    task_blocks = args.task_blocks or size
    if size < 1 or task_blocks % size:
        raise SystemExit("--task-blocks must be a positive multiple of --partition-size")
    binary = os.path.abspath(args.chaintrace) if os.sep in args.chaintrace else args.chaintrace
    out = os.path.abspath(args.out)
    extra = ["--tracer-config", args.tracer_config] if args.tracer_config else []

    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               dashboard_address=None, processes=True)
        client = Client(cluster)
    try:
        parts = tasks(a, b, task_blocks)
        futures = [
            client.submit(run_task, binary, args.rpc_url, out, "parquet", size, first, last,
                          extra, args.inject_failure if i == 0 else None,
                          key=f"chaintrace-{first}-{last}", retries=args.retries, pure=False)
            for i, (first, last) in enumerate(parts)
        ]
        failed = []
        for f in as_completed(futures):
            if f.status == "error":
                failed.append(str(f.exception()))
        if failed:
            print("\n".join(failed), file=sys.stderr)
            raise SystemExit(f"{len(failed)} of {len(parts)} tasks failed after retries")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    summary = {"tasks": len(parts), "retried": 0, **read_back(out)}
    if args.inject_failure and os.path.exists(args.inject_failure):
        summary["retried"] = 1
    print(json.dumps(summary))


def read_back(out):
    """Row counts of the tables, read with DuckDB straight from the partition files."""
    import duckdb

    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    con = duckdb.connect()
    counts = {"partitions": len(manifest["partitions"])}
    for table in ("calls", "logs"):
        files = [
            os.path.join(out, e["file"])
            for p in manifest["partitions"] for e in p["files"] if e["table"] == table
        ]
        if not files:
            counts[table] = 0
            continue
        counts[table] = con.execute(
            "SELECT count(*) FROM read_parquet(?, hive_partitioning = true)", [files]
        ).fetchone()[0]
        if table == "calls":
            counts["txs"] = con.execute(
                "SELECT count(*) FROM read_parquet(?, hive_partitioning = true) WHERE depth = 0",
                [files],
            ).fetchone()[0]
            counts["reverted"] = con.execute(
                "SELECT count(*) FROM read_parquet(?, hive_partitioning = true) "
                "WHERE depth = 0 AND error IS NOT NULL",
                [files],
            ).fetchone()[0]
    return counts


if __name__ == "__main__":
    main()
