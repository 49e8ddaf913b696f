//! The debugger's checkpoints (`chaintrace::replay::checkpoint`) on geth's own fixtures: with a
//! checkpoint every few steps, the machine at every step read by resuming from the checkpoint
//! before it is the machine read by replaying from the transaction's start — creates, inner
//! reverts, out-of-gas, self-destructs, precompile calls, logs, deep call stacks, the journal's
//! entries and logs shared between checkpoints in chunks of two — and recording with
//! checkpoints changes neither the recorded steps nor the outcome.

use std::path::Path;

use chaintrace::debug::Target;
use chaintrace::replay::checkpoint::Checkpoints;
use chaintrace::replay::{fixture_env, fixture_snapshot, fixture_tx};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::steps::StepLog;

/// Steps between checkpoints: small and odd, so that they fall on every kind of step (a prime
/// a hundred times larger on the 572k steps of `big_slow.json`).
const SPACING: u32 = 13;
const SPACING_LONG: u32 = 1301;

/// At most this many steps are compared per fixture, spread over the whole run (a tenth of it
/// on a long one: each replays from the start).
const COMPARED: usize = 120;
const LONG: usize = 20_000;

/// The machine at step `i` resumed from `cps` is the machine replayed from the start.
fn same_view(target: &Target, i: usize, log: &StepLog, cps: &Checkpoints, what: &str) {
    let none = Checkpoints::new(u32::MAX, usize::MAX);
    let from_start = target.capture(i, None, log, &none).unwrap();
    let resumed = target.capture(i, None, log, cps).unwrap();
    assert_eq!(
        format!("{resumed:?}"),
        format!("{from_start:?}"),
        "{what}: step {i}"
    );
}

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
    assert!(none.is_empty());
    let long = plain.log.len() > LONG;
    let spacing = if long { SPACING_LONG } else { SPACING };
    let (stepped, cps, again) = target
        .record(None, Checkpoints::new(spacing, usize::MAX).with_chunk(2))
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
        same_view(&target, i, log, &cps, &name);
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

/// A frame reverting drops the journal's entries back below the checkpoint before it, and the
/// frame that goes on writes new entries where they were: a later checkpoint must not share the
/// old chunk. T delegate-calls M; M calls D, which writes slots 0–2 and reverts; M writes T's
/// slots 5–7 (its entries where D's were) and reverts; T reads slots 5–7, which M's revert set
/// back to zero only if the journal it reverted with is M's. Chunks of one entry.
#[test]
fn a_checkpoint_after_a_revert_does_not_share_the_entries_it_dropped() {
    use alloy_primitives::{address, Address, TxKind};
    use chaintrace::replay::EvmEnv;
    use chaintrace::source::StateSnapshot;
    use revm::primitives::hardfork::SpecId;

    use crate::offline::{account, block, tx};

    const SENDER: Address = address!("00000000000000000000000000000000000000f0");
    const T: Address = address!("00000000000000000000000000000000000000a0");
    // CALL(gas, to, 0, 0, 0, 0, 0); POP
    let call = |to: u8| format!("6000600060006000600060{to:02x}5af150");
    let sstore = |slot: u8, v: u8| format!("60{v:02x}60{slot:02x}55");
    let d = format!("{}{}{}60006000fd", sstore(0, 1), sstore(1, 1), sstore(2, 1));
    let m = format!(
        "{}{}{}{}60006000fd",
        call(0xd0),
        sstore(5, 7),
        sstore(6, 7),
        sstore(7, 7)
    );
    // DELEGATECALL(gas, M, 0, 0, 0, 0): M writes T's storage.
    let t = "600060006000600060b05af450 600554600654600754 00";
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(20), 0, ""));
    snap.insert_account(T, account(0, 0, t));
    snap.insert_account(
        address!("00000000000000000000000000000000000000b0"),
        account(0, 0, &m),
    );
    snap.insert_account(
        address!("00000000000000000000000000000000000000d0"),
        account(0, 0, &d),
    );
    let mut tx = tx(SENDER, TxKind::Call(T));
    tx.env.gas_limit = 1_000_000;
    let target = Target {
        snapshot: snap,
        pre: Default::default(),
        env: EvmEnv::new(SpecId::PRAGUE, 1, &block(1, Some(0))),
        tx,
        index: None,
    };
    let (plain, none, _) = target
        .record(None, Checkpoints::new(u32::MAX, usize::MAX))
        .unwrap();
    let log = &plain.log;
    let last = log.len() - 1;
    let end = target.capture(last, None, log, &none).unwrap();
    assert_eq!(end.stack.len(), 3, "T's three SLOADs: {:?}", end.stack);
    assert!(end.stack.iter().all(|w| w.is_zero()), "{:?}", end.stack);
    // Spacings that put a checkpoint among M's writes with none between D's revert and them.
    for spacing in 2..=24 {
        let (_, cps, _) = target
            .record(None, Checkpoints::new(spacing, usize::MAX).with_chunk(1))
            .unwrap();
        assert_eq!(cps.len(), last / spacing as usize);
        for i in 0..log.len() {
            same_view(&target, i, log, &cps, &format!("spacing {spacing}"));
        }
    }
}
