#!/usr/bin/env bash
# The test command (README, .ci/run): installs the pinned test tools, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-tools.sh
cargo test --locked "$@"
