#!/usr/bin/env bash
# Source-position benchmark (issue 22 item 8): a reverting ~1M-gas transaction traced with and
# without source maps (same names), and gas by source vs the plain gas report, side by side on
# one anvil 1.7.1. See scripts/bench-srcmap.py for what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-tools.sh
cargo build --release --quiet
python3 scripts/bench-srcmap.py
