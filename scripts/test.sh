#!/usr/bin/env bash
# The test command (README, .ci/run): installs the pinned test tools, checks formatting and
# lints, builds without the JS engine, then runs every test — the JS suites a second time with
# the native JS evaluator off, and the native-vs-boa generator over many more scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
# A from-scratch run gains nothing from incremental state, which would add gigabytes to the target
# directory (a cold CI target once ran out of disk); a caller may still set it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/install-test-tools.sh
echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy --all-targets -- -D warnings" >&2
cargo clippy --locked --all-targets -- -D warnings
echo "== cargo check --no-default-features (the core without the JS engine or parquet)" >&2
cargo check --locked --no-default-features
echo "== JS suites with the native evaluator off" >&2
CHAINTRACE_JS_FAST=0 cargo test --locked --test js
CHAINTRACE_JS_FAST=0 cargo test --locked --test offline failed_steps::
echo "== native JS evaluator vs boa: 2 x 3000 generated scripts, 2 x 1000 early-return prefixes, 2 x 1000 enter/exit hooks" >&2
for seed in 1 2; do
    JS_FAST_SEED=$seed JS_FAST_ROUNDS=3000 cargo test --locked --lib generated_scripts_agree_with_boa
    JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 cargo test --locked --lib early_returns_decided_natively_agree_with_boa
    JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 cargo test --locked --lib generated_frame_hooks_agree_with_boa
done
echo "== cargo test" >&2
cargo test --locked "$@"
