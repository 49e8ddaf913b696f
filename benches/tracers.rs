//! geth's flat and mux tracers against the callTracer they are built on, side by side in one
//! run, on ~1M-gas offline workloads (`benches/support/workloads.rs`):
//! - `loop`: 4,000 iterations of a storage loop (~1.0M gas, one frame);
//! - `calls`: 490 calls into a token that emits a `Transfer` each (~1.0M gas, 491 frames).
//!
//! Pairs, each timed interleaved (median of RUNS runs per side):
//! - flatCallTracer and Parity's `trace` entries vs callTracer (issue 30: at most 1.2×);
//! - muxTracer {callTracer, prestateTracer} vs callTracer then prestateTracer, two replays
//!   (issue 30: faster);
//! - 4byteTracer, keccak256PreimageTracer and noopTracer vs callTracer, for scale.
//!
//! Run: `cargo bench --bench tracers`. Prints medians and ratios; asserts nothing about time.

// Shared with benches/js_tracers.rs, which uses the parts this bench does not.
#[allow(dead_code)]
#[path = "support/workloads.rs"]
mod workloads;

use std::time::Duration;

use chaintrace::replay::trace;
use chaintrace::trace::{TracerKind, TracerSpec};
use serde_json::json;
use workloads::{median, setup, Setup, CALLER, LOOP};

const RUNS: usize = 31;

fn run(s: &Setup, spec: &TracerSpec) -> Duration {
    let t = std::time::Instant::now();
    let mut db = s.snap.db();
    let r = trace(&mut db, &s.env, &s.tx, spec, 0).unwrap();
    assert!(r.outcome.success);
    std::hint::black_box(r.result);
    t.elapsed()
}

/// Median time of `a` (one replay per run) and of `b` (the specs replayed one after the other
/// per run), interleaved.
fn pair(s: &Setup, a: &TracerSpec, b: &[&TracerSpec]) -> (Duration, Duration) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        ta.push(run(s, a));
        tb.push(b.iter().map(|spec| run(s, spec)).sum());
    }
    (median(ta), median(tb))
}

fn spec(name: &str, config: Option<serde_json::Value>) -> TracerSpec {
    TracerSpec::named(name, config.as_ref(), Duration::from_secs(60)).unwrap()
}

fn main() {
    let workloads = [
        setup("loop", LOOP, 4_000, 0),
        setup("calls", CALLER, 0, 490),
    ];
    let call = TracerSpec::new(TracerKind::Call, None).unwrap();
    let prestate = TracerSpec::new(TracerKind::Prestate, None).unwrap();
    println!(
        "{:<8} {:<42} {:>10} {:>12} {:>7}",
        "workload", "tracer vs peer", "tracer", "peer", "ratio"
    );
    for s in &workloads {
        let mut db = s.snap.db();
        let gas = trace(&mut db, &s.env, &s.tx, &call, 0)
            .unwrap()
            .outcome
            .gas_used;
        println!("# {}: {gas} gas", s.name);
        let rows: Vec<(&str, TracerSpec, Vec<&TracerSpec>)> = vec![
            (
                "flatCallTracer vs callTracer",
                spec("flatCallTracer", None),
                vec![&call],
            ),
            (
                "parity (trace_*) vs callTracer",
                spec("parity", None),
                vec![&call],
            ),
            (
                "mux{call,prestate} vs call + prestate",
                spec(
                    "muxTracer",
                    Some(json!({"callTracer": {}, "prestateTracer": {}})),
                ),
                vec![&call, &prestate],
            ),
            (
                "4byteTracer vs callTracer",
                spec("4byteTracer", None),
                vec![&call],
            ),
            (
                "keccak256PreimageTracer vs callTracer",
                spec("keccak256PreimageTracer", None),
                vec![&call],
            ),
            (
                "noopTracer vs callTracer",
                spec("noopTracer", None),
                vec![&call],
            ),
        ];
        for (label, a, b) in &rows {
            let (ta, tb) = pair(s, a, b);
            println!(
                "{:<8} {:<42} {:>8.2}ms {:>10.2}ms {:>6.2}x",
                s.name,
                label,
                ta.as_secs_f64() * 1e3,
                tb.as_secs_f64() * 1e3,
                ta.as_secs_f64() / tb.as_secs_f64()
            );
        }
    }
}
