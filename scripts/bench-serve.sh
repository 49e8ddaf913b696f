#!/usr/bin/env bash
# Benchmark: `chaintrace serve` vs anvil's own debug API, N concurrent clients tracing the same
# blocks (debug_traceBlockByNumber, callTracer): throughput, p50/p99 latency, peak RSS, ratios.
#
#   bash scripts/bench-serve.sh                  # uses target/release if built, else debug
#   PROFILE=release BLOCKS=200 CLIENTS=16 bash scripts/bench-serve.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install-test-tools.sh"
PROFILE="${PROFILE:-}"
if [ -z "$PROFILE" ]; then
    if [ -x "$ROOT/target/release/chaintrace" ]; then PROFILE=release; else PROFILE=debug; fi
fi
if [ "$PROFILE" = release ]; then
    (cd "$ROOT" && cargo build --release --bin chaintrace >&2)
else
    (cd "$ROOT" && cargo build --bin chaintrace >&2)
fi
echo "bench-serve: chaintrace $PROFILE build" >&2
exec python3 "$ROOT/scripts/bench-serve.py" \
    --chaintrace "$ROOT/target/$PROFILE/chaintrace" --anvil "$ROOT/.tools/bin/anvil"
