#!/usr/bin/env bash
# JavaScript tracer benchmark: chaintrace's boa host vs revm-inspectors' JsInspector (same
# process, same replay) and vs anvil 1.7.1's debug_traceTransaction (end to end). Prints the
# ratios measured in this run. Needs anvil (bash scripts/install-test-tools.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --bench js_tracers --features bench-peers "$@"
