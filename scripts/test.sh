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
# The pinned test tools (npm, apt: mostly waiting on the registries) install while the build
# below compiles; the tests that need them wait for it (`tools_ready`).
tools_log=$(mktemp)
agree_log=$(mktemp -d)
trap 'rm -rf "$tools_log" "$agree_log"' EXIT
bash scripts/install-test-tools.sh > "$tools_log" 2>&1 &
tools=$!
# Each phase's header with the seconds since the start, for reading where CI's time goes.
phase() { echo "== [${SECONDS} s] $*" >&2; }
tools_ready() {
    local rc=0
    wait $tools || rc=$?
    cat "$tools_log" >&2
    [ $rc = 0 ] || { echo "scripts/test.sh: installing the test tools failed (above)" >&2; exit 1; }
}
phase "cargo fmt --check"
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
phase "cargo clippy --all-targets -- -D warnings, in the test build of every target"
cargo test --locked --no-run --all-targets
tools_ready
# --examples brings the dev-dependencies in (boa and parquet among them, Cargo.toml says why), so
# every dependency's features unify as in the build above and none is compiled again; linted the
# same way, at opt-level 0: it is only compiled, never run.
phase "the core without the JS engine or parquet (--no-default-features), linted"
cargo build --locked --no-default-features --lib --examples \
    --config 'profile.dev.package.chaintrace.opt-level=0'

# The test binaries are run directly where two run side by side: two cargo commands would wait on
# each other's lock of the target directory.
lib_tests=$(cargo test --locked --lib --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
[ -x "$lib_tests" ] || { echo "scripts/test.sh: no library test binary found" >&2; exit 2; }

phase "JS suites with the native evaluator off"
CHAINTRACE_JS_FAST=0 cargo test --locked --test js
CHAINTRACE_JS_FAST=0 cargo test --locked --test offline failed_steps::

# Each seed's runs are one thread of CPU with no deadline to meet: the two seeds run side by side.
phase "native JS evaluator vs boa: 2 x 3000 generated scripts, 2 x 1000 early-return prefixes, 2 x 1000 enter/exit hooks"
agree() {
    local seed=$1
    JS_FAST_SEED=$seed JS_FAST_ROUNDS=3000 "$lib_tests" generated_scripts_agree_with_boa &&
        JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 "$lib_tests" early_returns_decided_natively_agree_with_boa &&
        JS_FAST_SEED=$seed JS_FAST_ROUNDS=1000 "$lib_tests" generated_frame_hooks_agree_with_boa
}
agree 1 > "$agree_log/1" 2>&1 &
seed1=$!
agree 2 > "$agree_log/2" 2>&1 &
seed2=$!
failed=0
wait $seed1 || failed=1
wait $seed2 || failed=1
cat "$agree_log/1" "$agree_log/2"
[ $failed = 0 ] || { echo "scripts/test.sh: the native evaluator and boa disagree (above)" >&2; exit 1; }

phase "cargo test"
if [ $# -gt 0 ]; then
    cargo test --locked "$@"
    exit
fi
cargo test --locked --lib --bins --test js --test offline --test peers
cargo test --locked --doc
# The live suite waits on its anvils, solc-js and the network stack more than on the CPU: two
# threads kept it at ~110 % of one core (196 s in CI), four at ~185 % (98 s warm).
phase "the live-node suite, 4 threads"
cargo test --locked --test live -- --test-threads 4
phase "done"
