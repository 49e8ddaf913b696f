//! `chaintrace block A..B`: trace every transaction of an inclusive block range, streaming one
//! NDJSON line per transaction (`{"block","txHash","result"}`) in chain order.
//!
//! The blocks run on the library's ranges engine ([`chaintrace::replay::range`]: workers, four
//! per core, at most 32, `CHAINTRACE_JOBS=N` overrides, 1 is sequential, each replaying a
//! stretch of contiguous blocks on one carried state); each worker renders its blocks' lines,
//! and finished blocks are written in chain order, so the output is a sequential run's. A progress bar (blocks, txs/s, ETA) goes to stderr only when stderr is a terminal and
//! `--quiet` is not given.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use chaintrace::names::Names;
use chaintrace::render::json::write_trace;
use chaintrace::render::state_changes::{storage_change_rows, StorageChangeRow};
use chaintrace::replay::range::{default_jobs, Range, RangeBlock};
use chaintrace::replay::TracedTx;
use chaintrace::source::rpc::RpcSource;
use chaintrace::trace::TracerSpec;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use super::common::finish;
use super::common::{exit, CliError};

/// Parses `A..B` (decimal or 0x hex, inclusive). `None` when `s` is not a range.
pub fn parse_range(s: &str) -> Option<Result<(u64, u64), CliError>> {
    let (a, b) = s.trim().split_once("..")?;
    let num = |t: &str| {
        let t = t.trim();
        match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
    };
    Some(match (num(a), num(b)) {
        (Some(a), Some(b)) if a <= b => Ok((a, b)),
        _ => Err(CliError::input(format!(
            "malformed block range {s:?}: expected A..B with numbers A <= B (inclusive)"
        ))),
    })
}

/// One block replayed by a worker: its NDJSON lines already rendered, its traces kept for the
/// receipt self-check (and the columnar tables), which run on the writing thread so stderr and
/// the output stay in chain order.
pub struct Done {
    pub number: u64,
    pub lines: Vec<u8>,
    pub traces: Vec<TracedTx>,
    receipts: Vec<Value>,
    passes: usize,
    /// Each trace's comparison with the node's post-state (chains that splice, splice.rs).
    states: Vec<Option<(usize, Vec<String>)>>,
    /// Each transaction's asset changes, with `--assets` (empty otherwise).
    pub assets: Vec<chaintrace::replay::assets::AssetChanges>,
    /// Each transaction's storage changes by variable as `storage_changes` rows, with names
    /// that have storage layouts (empty otherwise).
    pub storage: Vec<Vec<StorageChangeRow>>,
    /// What naming them noted (a malformed layout), for stderr once per range.
    notes: Vec<String>,
}

/// Where finished blocks go, in chain order: stdout, or partitions (`cli/columnar.rs`).
pub trait Sink {
    fn block(&mut self, done: &Done) -> Result<(), CliError>;
    /// After the last block (not called when the range fails).
    fn finish(&mut self) -> Result<(), CliError>;
}

/// NDJSON on stdout, flushed after every block.
pub struct Stdout;

impl Sink for Stdout {
    fn block(&mut self, done: &Done) -> Result<(), CliError> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        out.write_all(&done.lines)?;
        out.flush()?;
        Ok(())
    }
    fn finish(&mut self) -> Result<(), CliError> {
        Ok(())
    }
}

/// What a range writes besides each transaction's trace.
#[derive(Clone, Copy, Default)]
pub struct Extras<'a> {
    /// Asset changes (`--assets`).
    pub assets: bool,
    /// Storage changes by variable, named by these names' storage layouts (`--abi`).
    pub storage: Option<&'a Names>,
}

/// What a worker makes of one block: its NDJSON lines, with `--assets` its asset changes, and
/// with names to give them its storage changes (one more local run of the block under the
/// access inspector, on the state its replay already fetched: `state_changes::of_block`).
fn replay_one(b: RangeBlock<'_>, extras: Extras<'_>, source: &RpcSource) -> Result<Done, CliError> {
    let mut done = Done {
        number: b.block.info.number,
        lines: Vec::new(),
        traces: Vec::new(),
        receipts: b.receipts,
        passes: b.passes,
        states: Vec::new(),
        assets: Vec::new(),
        storage: Vec::new(),
        notes: Vec::new(),
    };
    let Some(r) = b.replay else {
        return Ok(done);
    };
    for t in &r.traces {
        write!(
            done.lines,
            "{{\"block\":{},\"txHash\":\"{:?}\",\"result\":",
            done.number, t.hash
        )?;
        write_trace(&mut done.lines, &t.result)?;
        done.lines.extend_from_slice(b"}\n");
    }
    if extras.assets {
        let parent = source.parent_at(&b.block.info);
        done.assets = super::assets::block_assets(
            r,
            b.env,
            &b.block.txs,
            Some((source, &parent)),
            &mut done.passes,
        )?;
    }
    if let Some(names) = extras.storage {
        // On the block's pre-state as the replay fetched it (carried from the block before in
        // a stretch): it comes back filled further, and is carried on as before.
        let parent = source.parent_at(&b.block.info);
        let taken = std::mem::take(&mut r.snapshot);
        let (runs, snap, n) = super::state_changes::of_block(
            names,
            source,
            &b.block.txs,
            b.env,
            &parent,
            taken,
            &|_| {},
        )?;
        r.snapshot = snap;
        done.passes += n;
        for keyed in &runs {
            let c = names.state_changes(&r.snapshot, keyed);
            for n in c.notes.iter() {
                if !done.notes.contains(n) {
                    done.notes.push(n.clone());
                }
            }
            done.storage.push(storage_change_rows(&c));
        }
    }
    done.states = (0..r.traces.len()).map(|k| r.state_check(k)).collect();
    done.traces = std::mem::take(&mut r.traces);
    Ok(done)
}

/// The progress bar of a block range on stderr (blocks, a message, ETA): drawn only on a
/// terminal and without `--quiet`.
pub(super) fn progress(blocks: u64, quiet: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(blocks),
        if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    pb.set_style(
        ProgressStyle::with_template("{bar:30} block {pos}/{len} {msg} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

#[allow(clippy::too_many_arguments)]
/// Traces the blocks of `segments` (inclusive ranges, ascending) into `sink` in chain order;
/// returns the exit code (4 if any tx diverged) and the state passes.
///
/// Workers claim block positions in order, fetch and replay the blocks, and render their lines;
/// the calling thread hands finished blocks to the sink in chain order from a reorder buffer. A
/// worker waits while its next block is [`window`] blocks past the next one to write, so memory
/// stays bounded. The first failing block stops the range after every block before it has been
/// written.
pub fn run(
    source: &RpcSource,
    chain_id: u64,
    segments: &[(u64, u64)],
    spec: &TracerSpec,
    hardfork: Option<SpecId>,
    quiet: bool,
    extras: Extras<'_>,
    sink: &mut dyn Sink,
) -> Result<(u8, usize), CliError> {
    let len: u64 = segments.iter().map(|(a, b)| b - a + 1).sum();
    let pb = progress(len, quiet);
    let started = Instant::now();
    let mut code = exit::OK;
    let mut passes = 0;
    let mut txs = 0u64;
    let range = Range {
        source,
        chain_id,
        segments,
        spec,
        hardfork,
        jobs: default_jobs(),
        max_stretch: None,
        max_fetching: None,
        growth: None,
    };
    let work = |b: RangeBlock<'_>| replay_one(b, extras, source);
    let mut noted: Vec<String> = Vec::new();
    chaintrace::replay::range::run(&range, &|f| f(), &work, &mut |done: Done| {
        for n in &done.notes {
            if !noted.contains(n) {
                note!("note: {n}");
                noted.push(n.clone());
            }
        }
        sink.block(&done)?;
        for (k, (t, receipt)) in done.traces.iter().zip(&done.receipts).enumerate() {
            let state = done.states.get(k).and_then(Option::as_ref);
            if finish(t.hash, &t.outcome, Some(receipt), true, state) == exit::DIVERGED {
                code = exit::DIVERGED;
            }
        }
        passes += done.passes;
        txs += done.traces.len() as u64;
        pb.inc(1);
        let rate = txs as f64 / started.elapsed().as_secs_f64().max(1e-3);
        pb.set_message(format!("{txs} txs, {rate:.1} txs/s"));
        Ok(true)
    })?;
    sink.finish()?;
    pb.finish_and_clear();
    if code == exit::OK && !quiet {
        let (a, b) = (
            segments.first().map_or(0, |s| s.0),
            segments.last().map_or(0, |s| s.1),
        );
        note!("self-check: {txs} transactions in blocks {a}..{b} match their receipts");
    }
    Ok((code, passes))
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn ranges_are_inclusive_and_checked() {
        assert_eq!(parse_range("3..5").unwrap().unwrap(), (3, 5));
        assert_eq!(parse_range("0x10..0x11").unwrap().unwrap(), (16, 17));
        assert!(parse_range("7").is_none());
        assert!(parse_range("5..3").unwrap().is_err());
        assert!(parse_range("a..3").unwrap().is_err());
    }
}
