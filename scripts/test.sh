#!/usr/bin/env bash
# The test command (README, .ci/run): installs the pinned test tools, checks formatting, builds
# every target with Clippy's lints, builds without the JS engine, then runs every test — the JS
# suites a second time with the native JS evaluator off, and the native-vs-boa generator over
# many more scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
# A from-scratch run gains nothing from incremental state, which would add gigabytes to the target
# directory (a cold CI target once ran out of disk); a caller may still set it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/install-test-tools.sh
echo "== cargo fmt --check" >&2
cargo fmt --all -- --check

# Clippy inside the build. `cargo clippy` type-checks every dependency a second time, in check
# mode, beside the build the tests need: on a cold target that was 430 of CI's ~1,500 seconds.
# Here clippy-driver is the compiler of this package's own targets (cargo's workspace wrapper,
# the way `cargo clippy` runs it); the dependencies are compiled by rustc once. clippy-driver is
# rustc with Clippy's lints registered; for the crates it compiles it turns MIR optimisations and
# the debug-build null/alignment pointer checks off (Clippy's driver does so to lint unoptimised
# MIR). Every cargo command below keeps the wrapper, or cargo would rebuild the package without it.
CLIPPY_DRIVER="$(rustc --print sysroot)/bin/clippy-driver"
if [ ! -x "$CLIPPY_DRIVER" ]; then
    echo "scripts/test.sh: $CLIPPY_DRIVER is missing: install it with 'rustup component add clippy'" >&2
    exit 2
fi
export RUSTC_WORKSPACE_WRAPPER="$CLIPPY_DRIVER"
# cargo-clippy's way of passing `-- -D warnings` to the driver.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
echo "== cargo clippy --all-targets -- -D warnings, in the test build of every target" >&2
cargo test --locked --no-run --all-targets
# --examples brings the dev-dependencies in (boa and parquet among them, Cargo.toml says why), so
# every dependency's features unify as in the build above and none is compiled again; linted the
# same way, at opt-level 0: it is only compiled, never run.
echo "== the core without the JS engine or parquet (--no-default-features), linted" >&2
cargo build --locked --no-default-features --lib --examples \
    --config 'profile.dev.package.chaintrace.opt-level=0'

# The test binaries are run directly where two run side by side: two cargo commands would wait on
# each other's lock of the target directory.
lib_tests=$(cargo test --locked --lib --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
[ -x "$lib_tests" ] || { echo "scripts/test.sh: no library test binary found" >&2; exit 2; }

echo "== JS suites with the native evaluator off" >&2
CHAINTRACE_JS_FAST=0 cargo test --locked --test js
CHAINTRACE_JS_FAST=0 cargo test --locked --test offline failed_steps::

# Each seed's runs are one thread of CPU with no deadline to meet: the two seeds run side by side.
echo "== native JS evaluator vs boa: 2 x 3000 generated scripts, 2 x 1000 early-return prefixes, 2 x 1000 enter/exit hooks" >&2
agree() {
    local seed=$1
    JS_FAST_SEED=$seed JS_FAST_ROUNDS=3000 "$lib_tests" generated_scripts_agree_with_boa &&
        JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 "$lib_tests" early_returns_decided_natively_agree_with_boa &&
        JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 "$lib_tests" generated_frame_hooks_agree_with_boa
}
agree_log=$(mktemp -d)
trap 'rm -rf "$agree_log"' EXIT
agree 1 > "$agree_log/1" 2>&1 &
seed1=$!
agree 2 > "$agree_log/2" 2>&1 &
seed2=$!
failed=0
wait $seed1 || failed=1
wait $seed2 || failed=1
cat "$agree_log/1" "$agree_log/2"
[ $failed = 0 ] || { echo "scripts/test.sh: the native evaluator and boa disagree (above)" >&2; exit 1; }

echo "== cargo test" >&2
cargo test --locked "$@"
