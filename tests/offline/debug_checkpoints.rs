//! The debugger's checkpoints (`chaintrace::replay::checkpoint`) on geth's own fixtures: with a
//! checkpoint every few steps, the machine at every step read by resuming from the checkpoint
//! before it is the machine read by replaying from the transaction's start — creates, inner
//! reverts, out-of-gas, self-destructs, precompile calls, logs, deep call stacks — and recording
//! with checkpoints changes neither the recorded steps nor the outcome.

use std::path::Path;

use chaintrace::debug::Target;
use chaintrace::replay::checkpoint::Checkpoints;
use chaintrace::replay::{fixture_env, fixture_snapshot, fixture_tx};
use chaintrace::source::fixture::Fixture;

/// Steps between checkpoints: small and odd, so that they fall on every kind of step (a prime
/// a hundred times larger on the 572k steps of `big_slow.json`).
const SPACING: u32 = 13;
const SPACING_LONG: u32 = 1301;

/// At most this many steps are compared per fixture, spread over the whole run (a tenth of it
/// on a long one: each replays from the start).
const COMPARED: usize = 120;
const LONG: usize = 20_000;

fn check(path: &Path) -> (usize, usize) {
    let fx = Fixture::load(path.to_str().unwrap()).unwrap();
    let target = Target {
        env: fixture_env(&fx, None),
        tx: fixture_tx(&fx).unwrap(),
        snapshot: fixture_snapshot(&fx),
        pre: Default::default(),
        index: None,
    };
    let name = path.file_name().unwrap().to_string_lossy();
    let (plain, none, outcome) = target
        .record(None, Checkpoints::new(u32::MAX, usize::MAX))
        .unwrap();
    let long = plain.log.len() > LONG;
    let spacing = if long { SPACING_LONG } else { SPACING };
    let (stepped, cps, again) = target
        .record(None, Checkpoints::new(spacing, usize::MAX))
        .unwrap();
    assert_eq!(
        format!("{:?}", stepped.log),
        format!("{:?}", plain.log),
        "{name}: the recording"
    );
    assert_eq!(format!("{again:?}"), format!("{outcome:?}"), "{name}");
    let log = &plain.log;
    let n = log.len();
    assert_eq!(
        cps.len(),
        n.saturating_sub(1) / spacing as usize,
        "{name}: a checkpoint before every {spacing}th step"
    );
    let every = n
        .div_ceil(if long { COMPARED / 10 } else { COMPARED })
        .max(1);
    let mut compared = 0;
    for i in (0..n).filter(|i| i % every == 0 || i + 1 == n) {
        let from_start = target.capture(i, None, log, &none).unwrap();
        let resumed = target.capture(i, None, log, &cps).unwrap();
        assert_eq!(
            format!("{resumed:?}"),
            format!("{from_start:?}"),
            "{name}: step {i}"
        );
        compared += 1;
    }
    (n, compared)
}

#[test]
fn views_resumed_from_checkpoints_are_views_from_the_start_on_geths_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth");
    assert!(
        root.is_dir(),
        "../shared/conformance/geth is absent: geth's fixtures cannot be run"
    );
    let mut runs = 0;
    let (mut steps, mut compared) = (0, 0);
    for sub in ["call_tracer", "call_tracer_flat"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let (n, c) = check(&f);
            steps += n;
            compared += c;
            runs += 1;
        }
    }
    assert_eq!(
        runs, 31,
        "geth's 15 callTracer and 16 flat callTracer fixtures"
    );
    assert!(compared > 1_400, "{compared} steps compared of {steps}");
}
