//! `chaintrace block A..B`: trace every transaction of an inclusive block range, streaming one
//! NDJSON line per transaction (`{"block","txHash","result"}`) in chain order.
//!
//! Workers (four per core, at most 32; `CHAINTRACE_JOBS=N` overrides, 1 is sequential) each
//! claim a stretch of contiguous blocks, fetch its blocks and receipts in one batch and replay
//! them on one carried state ([`Stretch`]); finished blocks are written in chain order through
//! a bounded reorder window, so memory stays bounded and the output is the same as a sequential
//! run. A progress bar (blocks, txs/s, ETA) goes to stderr only when stderr is a terminal and
//! `--quiet` is not given.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use chaintrace::render::json::write_trace;
use chaintrace::replay::stretch::Stretch;
use chaintrace::replay::EvmEnv;
use chaintrace::replay::TracedTx;
use chaintrace::source::error::SourceError;
use chaintrace::source::rpc::{RpcBlock, RpcSource};
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

/// Blocks a worker may run ahead of the next block to be written (the reorder window): half the
/// workers a whole stretch ahead, and one more stretch. Finished blocks wait in it for the one
/// before them; at 4,000 blocks with 8 workers on 2 cores, a window for every worker a stretch
/// ahead held 14% more memory for 4% more speed (scripts/bench-range.sh).
fn window(workers: usize) -> u64 {
    ((workers / 2 + 1) * K_MAX) as u64
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

/// The blocks of a list of inclusive segments, addressed by position.
struct Blocks<'a> {
    segments: &'a [(u64, u64)],
    /// Position of each segment's first block.
    starts: Vec<u64>,
    len: u64,
}

impl<'a> Blocks<'a> {
    fn new(segments: &'a [(u64, u64)]) -> Self {
        let mut starts = Vec::with_capacity(segments.len());
        let mut len = 0u64;
        for &(a, b) in segments {
            starts.push(len);
            len += b - a + 1;
        }
        Blocks {
            segments,
            starts,
            len,
        }
    }
    fn at(&self, i: u64) -> u64 {
        let s = self.starts.partition_point(|&st| st <= i) - 1;
        self.segments[s].0 + (i - self.starts[s])
    }
}

/// Blocks fetched per batch, and so the length of a stretch a worker replays on one carried
/// state: it starts at [`K_START`], doubles after each batch the node answered, up to [`K_MAX`],
/// and halves when a batch fails as a whole (a node's batch or response size limit).
static K: AtomicUsize = AtomicUsize::new(K_START);
const K_START: usize = 8;
const K_MAX: usize = 32;

/// Blocks `numbers` and their receipts, in as few batches as the node takes: a batch that
/// fails as a whole is split in two and each half asked again (down to one block, whose
/// failure is the error), and [`K`] follows what worked. Each block has its own result.
#[allow(clippy::type_complexity)]
fn fetch_blocks(
    source: &RpcSource,
    numbers: &[u64],
) -> Result<Vec<Result<(RpcBlock, Vec<Value>), SourceError>>, SourceError> {
    match source.blocks_with_receipts(numbers) {
        Ok(v) => {
            let _ = K.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                (numbers.len() >= k).then(|| (k * 2).min(K_MAX))
            });
            Ok(v)
        }
        Err(_) if numbers.len() > 1 => {
            let half = numbers.len() / 2;
            let _ = K.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                Some(half.clamp(1, k))
            });
            let mut out = fetch_blocks(source, &numbers[..half])?;
            out.extend(fetch_blocks(source, &numbers[half..])?);
            Ok(out)
        }
        Err(e) => Err(e),
    }
}

/// Replays the contiguous blocks `numbers` on one carried state ([`Stretch`]), handing each
/// finished block (or the error that stopped the stretch) to `send` with its position.
#[allow(clippy::too_many_arguments)]
fn replay_stretch(
    source: &RpcSource,
    chain_id: u64,
    positions: std::ops::Range<u64>,
    blocks: &Blocks<'_>,
    spec: &TracerSpec,
    hardfork: Option<SpecId>,
    assets: bool,
    send: &dyn Fn(u64, Result<Done, CliError>) -> bool,
) {
    let numbers: Vec<u64> = positions.clone().map(|p| blocks.at(p)).collect();
    let fetched = match fetch_blocks(source, &numbers) {
        Ok(f) => f,
        Err(e) => {
            send(positions.start, Err(e.into()));
            return;
        }
    };
    // The blocks up to the first that could not be had; that one's error after them.
    let mut prepared = Vec::with_capacity(fetched.len());
    let mut failed: Option<(u64, CliError)> = None;
    for (pos, item) in positions.clone().zip(fetched) {
        let ready = item
            .map_err(CliError::from)
            .and_then(|(mut block, receipts)| {
                let spec_id = source.prepare_block(chain_id, &mut block.info, hardfork)?;
                let env = EvmEnv::new(spec_id, chain_id, &block.info);
                Ok((block, receipts, env))
            });
        match ready {
            Ok(r) => prepared.push(r),
            Err(e) => {
                failed = Some((pos, e));
                break;
            }
        }
    }
    // The chain's own rules mean state changes no block lists: nothing is carried there.
    let carry = prepared.iter().all(|(_, _, env)| env.rules.is_none());
    let mut stretch = Stretch::new(source, carry);
    let pairs: Vec<_> = prepared.iter().map(|(b, _, env)| (b, env)).collect();
    let mut first = match stretch.prefetch(&pairs) {
        Ok(()) => stretch.passes,
        Err(e) => {
            send(positions.start, Err(e.into()));
            return;
        }
    };
    for (pos, (block, receipts, env)) in positions.zip(prepared) {
        let item = replay_one(&mut stretch, &block, receipts, &env, spec, assets, source);
        let stop = item.is_err();
        let item = item.map(|mut d| {
            d.passes += std::mem::take(&mut first);
            d
        });
        if !send(pos, item) || stop {
            return;
        }
    }
    if let Some((pos, e)) = failed {
        send(pos, Err(e));
    }
}

fn replay_one(
    stretch: &mut Stretch<'_>,
    block: &RpcBlock,
    receipts: Vec<Value>,
    env: &EvmEnv,
    spec: &TracerSpec,
    assets: bool,
    source: &RpcSource,
) -> Result<Done, CliError> {
    let mut done = Done {
        number: block.info.number,
        lines: Vec::new(),
        traces: Vec::new(),
        receipts,
        passes: 0,
        states: Vec::new(),
        assets: Vec::new(),
    };
    if block.txs.is_empty() {
        stretch.skip_empty(block);
        return Ok(done);
    }
    let mut r = stretch.replay(block, env, spec)?;
    for t in &r.traces {
        write!(
            done.lines,
            "{{\"block\":{},\"txHash\":\"{:?}\",\"result\":",
            done.number, t.hash
        )?;
        write_trace(&mut done.lines, &t.result)?;
        done.lines.extend_from_slice(b"}\n");
    }
    done.passes = r.passes;
    if assets {
        let parent = source.parent_at(&block.info);
        done.assets = super::assets::block_assets(
            &r,
            env,
            &block.txs,
            Some((source, &parent)),
            &mut done.passes,
        )?;
    }
    done.states = (0..r.traces.len()).map(|k| r.state_check(k)).collect();
    stretch.carry_on(block, &mut r);
    done.traces = r.traces;
    Ok(done)
}

fn progress(blocks: u64, quiet: bool) -> ProgressBar {
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

/// Number of replay workers: `CHAINTRACE_JOBS` if set (1 = sequential), else four per core, at
/// most [`MAX_DEFAULT_WORKERS`]. A worker mostly waits on the node (scripts/bench-range.sh, 200
/// blocks at 20 ms per request: a sequential run took 1.65 s of wall time for 0.13 s of its own
/// CPU), so workers beyond the cores hide latency: on 2 cores, 8 workers ran the range in
/// 0.58 s against 0.73 s for 4, and 12 or 16 no faster than 8. Each holds at most one stretch.
fn workers() -> usize {
    std::env::var("CHAINTRACE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (4 * cores).min(MAX_DEFAULT_WORKERS)
        })
}

/// The default's bound: requests a range keeps in flight at once against one node.
const MAX_DEFAULT_WORKERS: usize = 32;

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
    assets: bool,
    sink: &mut dyn Sink,
) -> Result<(u8, usize), CliError> {
    let blocks = Blocks::new(segments);
    let from = 0u64;
    let pb = progress(blocks.len, quiet);
    let started = Instant::now();
    let jobs = workers().min(blocks.len as usize).max(1);
    let win = window(jobs);
    // (next block to claim, next block to write, stop flag)
    let state = Mutex::new((from, from, false));
    let cond = Condvar::new();
    let (send, recv) = channel::<(u64, Result<Done, CliError>)>();
    let mut code = exit::OK;
    let mut passes = 0;
    let mut txs = 0u64;
    std::thread::scope(|s| -> Result<(), CliError> {
        for _ in 0..jobs {
            let send = send.clone();
            let (state, cond, blocks) = (&state, &cond, &blocks);
            s.spawn(move || loop {
                let claimed = {
                    let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                    while !g.2 && g.0 < blocks.len && g.0 >= g.1 + win {
                        g = cond.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                    if g.2 || g.0 >= blocks.len {
                        return;
                    }
                    let start = g.0;
                    g.0 = (start + K.load(Ordering::Relaxed) as u64).min(blocks.len);
                    start..g.0
                };
                let go_on = |pos: u64, item: Result<Done, CliError>| send.send((pos, item)).is_ok();
                replay_stretch(
                    source, chain_id, claimed, blocks, spec, hardfork, assets, &go_on,
                );
            });
        }
        drop(send);
        let stop = || {
            let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
            g.2 = true;
            cond.notify_all();
        };
        let mut pending = BTreeMap::new();
        let mut next = from;
        for (n, item) in recv.iter() {
            pending.insert(n, item);
            while let Some(item) = pending.remove(&next) {
                let done = match item {
                    Ok(d) => d,
                    Err(e) => {
                        stop();
                        return Err(e);
                    }
                };
                if let Err(e) = sink.block(&done) {
                    stop();
                    return Err(e);
                }
                for (k, (t, receipt)) in done.traces.iter().zip(&done.receipts).enumerate() {
                    let state = done.states.get(k).and_then(Option::as_ref);
                    if finish(t.hash, &t.outcome, Some(receipt), true, state) == exit::DIVERGED {
                        code = exit::DIVERGED;
                    }
                }
                passes += done.passes;
                txs += done.traces.len() as u64;
                next += 1;
                {
                    let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                    g.1 = next;
                    cond.notify_all();
                }
                pb.inc(1);
                let rate = txs as f64 / started.elapsed().as_secs_f64().max(1e-3);
                pb.set_message(format!("{txs} txs, {rate:.1} txs/s"));
            }
        }
        Ok(())
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
