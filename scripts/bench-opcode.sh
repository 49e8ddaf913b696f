#!/usr/bin/env bash
# Struct-log benchmark (issue: opcodeTracer streamed with flat memory): chaintrace vs anvil 1.7.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-tools.sh
cargo build --release --quiet
python3 scripts/bench-opcode.py
