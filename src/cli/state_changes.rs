//! The "state changes" of `tx` and `call`: what the transaction changed in storage, by
//! variable (`names::state`), worked out by one more local run of it under the access
//! inspector (its writes with their values before and after, and the KECCAK256 preimages that
//! give mapping keys exactly) — on the state the trace already fetched, so no round trip — and
//! only where a loaded artifact has a `storageLayout`. Printed after the tree (and its asset
//! changes) or as `stateChanges` in `--json --decode` (`state_view.rs`).

use std::collections::BTreeMap;

use alloy_primitives::{Address, U256};
use chaintrace::names::state::{Namer, StateChanges};
use chaintrace::names::Names;
use chaintrace::replay::access::{trace_access_more, Access, Keyed};
use chaintrace::replay::driver::Frames;
use chaintrace::replay::mined::Mined;
use chaintrace::replay::remote::replay_with_frames_by;
use chaintrace::replay::{EvmEnv, ReplayTx};
use chaintrace::source::cache::Cache;
use chaintrace::source::rpc::RpcSource;
use chaintrace::source::{ReplayDb, StateSnapshot};
use chaintrace::trace::TracerSpec;

use super::common::{CliError, TraceArgs};

/// Whether state changes are shown: the call tree or `--json --decode` of it, and some loaded
/// artifact has a `storageLayout`.
pub fn wanted(args: &TraceArgs, spec: &TracerSpec, names: &Names) -> bool {
    matches!(spec, TracerSpec::Call(_))
        && !args.wants_gas()
        && (!args.json || args.decode)
        && names.has_layouts()
}

/// The storage changes of `mined`'s transaction, by variable; notes go to stderr.
pub fn of_mined(
    mined: &mut Mined,
    source: &RpcSource,
    cache: Option<&Cache>,
    names: &Names,
) -> Result<StateChanges, CliError> {
    let (keyed, _) = mined.run(source, cache, access(names))?;
    let changes = names.state_changes(&mined.snapshot, &keyed);
    for n in &changes.notes {
        note!("note: {n}");
    }
    Ok(changes)
}

/// The storage slots of `mined`'s prestateTracer diff (`slots`: address, slot, before, after),
/// each named by variable (`Namer::slot`: the variables whose bytes changed, decoded; raw,
/// with why, where no layout names it), keys exact from one more local run's preimages; notes
/// go to stderr.
pub fn of_prestate_diff(
    mined: &mut Mined,
    source: &RpcSource,
    cache: Option<&Cache>,
    names: &Names,
    slots: &[(Address, U256, U256, U256)],
) -> Result<StateChanges, CliError> {
    let (keyed, _) = mined.run(source, cache, access(names))?;
    Ok(diff_slots(names, &mined.snapshot, &keyed, slots))
}

/// A prestateTracer diff's slots (address, slot, before, after) named by variable on `state`,
/// keys exact from `keyed`'s preimages (the access run of the same transaction or call); notes
/// go to stderr.
pub fn diff_slots(
    names: &Names,
    state: &StateSnapshot,
    keyed: &Keyed,
    slots: &[(Address, U256, U256, U256)],
) -> StateChanges {
    let changes = name_diff_slots(names, state, keyed, slots);
    for n in &changes.notes {
        note!("note: {n}");
    }
    changes
}

fn name_diff_slots(
    names: &Names,
    state: &StateSnapshot,
    keyed: &Keyed,
    slots: &[(Address, U256, U256, U256)],
) -> StateChanges {
    let mut written: Vec<Address> = slots.iter().map(|s| s.0).collect();
    written.dedup();
    names.fetch_verified(state, &written);
    let mut namer = Namer::new(names, state, &keyed.preimages);
    let mut changes = Vec::new();
    for (address, slot, before, after) in slots {
        changes.extend(namer.slot(*address, *slot, *before, *after, true));
    }
    StateChanges {
        notes: namer.notes,
        changes,
        quiet_if_empty: false,
    }
}

/// A block's prestateTracer diffs for people, one per transaction (`slots`: each one's diff
/// slots, [`diff_slots`]), named on `state` (the block's pre-state) with the keys its own
/// access run hashed (`runs`, in the same order); notes go to stderr once.
pub fn block_diff_slots(
    names: &Names,
    state: &StateSnapshot,
    runs: &[Keyed],
    slots: &[Vec<(Address, U256, U256, U256)>],
) -> Vec<StateChanges> {
    noted_once(
        runs.iter()
            .zip(slots)
            .map(|(keyed, slots)| name_diff_slots(names, state, keyed, slots))
            .collect(),
    )
}

/// `out`, each of its notes written to stderr once (a block's transactions share artifacts).
fn noted_once(out: Vec<StateChanges>) -> Vec<StateChanges> {
    let mut notes: Vec<&String> = Vec::new();
    for n in out.iter().flat_map(|c| &c.notes) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    for n in notes {
        note!("note: {n}");
    }
    out
}

/// One transaction run under the access inspector: its rows, preimages and the slots its
/// long strings span that it did not touch (read after it, [`Names::span_values`]), and its
/// outcome.
pub fn access(
    names: &Names,
) -> impl Fn(
    &mut ReplayDb<'_>,
    &EvmEnv,
    &ReplayTx,
    u64,
) -> Result<(Keyed, chaintrace::replay::TxOutcome), chaintrace::replay::ReplayError>
       + '_ {
    move |db, env, tx, _| {
        trace_access_more(db, env, tx, &|s, r, p, read| {
            names.span_values(s, r, p, read)
        })
    }
}

/// Each of a block's transactions run again under the access inspector, on `snapshot` (the
/// state its replay already fetched: it comes back, filled further if anything was missing),
/// `prepare` applied before the first (a what-if's code). Their rows, the snapshot and the
/// round trips spent.
pub fn of_block(
    names: &Names,
    source: &RpcSource,
    txs: &[ReplayTx],
    env: &EvmEnv,
    parent: &str,
    snapshot: StateSnapshot,
    prepare: &dyn Fn(&mut ReplayDb<'_>),
) -> Result<(Vec<Keyed>, StateSnapshot, usize), CliError> {
    let run = access(names);
    let run = replay_with_frames_by(
        source,
        txs,
        env,
        0,
        parent,
        &|db, env, tx, offset, _| run(db, env, tx, offset),
        prepare,
        snapshot,
        Frames::Block(env.block_hash),
    )?;
    let keyed = run.traces.into_iter().map(|(k, _)| k).collect();
    Ok((keyed, run.snapshot, run.passes))
}

/// A block's state changes, one per transaction, named on `state` (the block's pre-state);
/// notes go to stderr once.
pub fn named(names: &Names, state: &StateSnapshot, runs: &[Keyed]) -> Vec<StateChanges> {
    noted_once(
        runs.iter()
            .map(|keyed| names.state_changes(state, keyed))
            .collect(),
    )
}

/// What-if: the variables whose value after the transaction differs between the mined run
/// and the patched one (`before`: the mined run's after, `after`: the patched run's), named
/// on `state` (the code on chain: the storage is the deployed contract's) with the keys either run hashed. A slot
/// one run wrote and the other only read ends at the value it had.
pub fn diff(names: &Names, state: &StateSnapshot, mined: &Keyed, patched: &Keyed) -> StateChanges {
    let ends = |rows: &[Access]| -> BTreeMap<(Address, U256), (U256, Option<usize>)> {
        rows.iter()
            .filter(|r| !r.transient)
            .filter_map(|r| Some(((r.address, r.slot?), (r.after, r.write_order))))
            .collect()
    };
    let (m, p) = (ends(&mined.rows), ends(&patched.rows));
    let mut preimages = mined.preimages.clone();
    preimages.extend(patched.preimages.iter().map(|(k, v)| (*k, v.clone())));
    // The slots either run wrote, in the order the patched run wrote them, then the mined's.
    type Order = (Option<usize>, Option<usize>, (Address, U256));
    let mut slots: Vec<Order> = Vec::new();
    for (k, (_, order)) in p.iter().chain(m.iter()) {
        if order.is_some() && !slots.iter().any(|s| s.2 == *k) {
            slots.push((p.get(k).and_then(|x| x.1), m.get(k).and_then(|x| x.1), *k));
        }
    }
    slots.sort_by_key(|(po, mo, _)| (po.is_none(), *po, *mo));
    let mut namer = Namer::new(names, state, &preimages);
    let mut changes = Vec::new();
    for (_, _, (addr, slot)) in slots {
        // A slot one run never touched ends where the other began.
        let start = |rows: &[Access]| {
            rows.iter()
                .find(|r| r.address == addr && r.slot == Some(slot) && !r.transient)
                .map(|r| r.before)
        };
        let before = start(&mined.rows)
            .or_else(|| start(&patched.rows))
            .unwrap_or_default();
        let mined_end = m.get(&(addr, slot)).map_or(before, |x| x.0);
        let patched_end = p.get(&(addr, slot)).map_or(before, |x| x.0);
        if mined_end != patched_end {
            changes.extend(namer.slot(addr, slot, mined_end, patched_end, true));
        }
    }
    StateChanges {
        changes,
        notes: namer.notes,
        quiet_if_empty: !names.layouts_declared(),
    }
}
