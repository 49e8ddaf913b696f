//! The ranges engine: every block of a list of inclusive block ranges replayed under one
//! tracer by parallel workers, and handed over in chain order.
//!
//! Workers each claim a stretch of contiguous blocks, fetch its blocks and receipts in one
//! batch and replay them on one carried state ([`Stretch`]); what each block gives (the
//! caller's `work`, run on the worker) reaches the caller's `sink` in chain order through a
//! bounded reorder window, so memory stays bounded and the result is a sequential run's. The
//! command line's `block A..B` (NDJSON, partitions) and `serve`'s `trace_filter` run on it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use super::remote::BlockReplay;
use super::stretch::{Carried, Stretch};
use super::EvmEnv;
use crate::source::error::SourceError;
use crate::source::rpc::{RpcBlock, RpcSource};
use crate::trace::TracerSpec;

/// What a range replays: the blocks of `segments` (inclusive, ascending), under `spec`.
pub struct Range<'a> {
    pub source: &'a RpcSource,
    pub chain_id: u64,
    pub segments: &'a [(u64, u64)],
    pub spec: &'a TracerSpec,
    /// A fork forced on every block (`--hardfork`), else each block's own.
    pub hardfork: Option<SpecId>,
    /// Replay workers (at least 1; at most one per block is used).
    pub jobs: usize,
    /// The longest stretch a worker claims (`None`: as long as the node's batches allow, up
    /// to 32). A short range that someone waits on (`serve` preparing a walk's next blocks)
    /// spreads its blocks over the workers instead.
    pub max_stretch: Option<usize>,
    /// Stretches whose blocks are fetched at once, at most (`None`: one per worker).
    pub max_fetching: Option<usize>,
    /// Blocks added while the range runs (`serve` preparing the blocks ahead of a client
    /// walking the chain, whose end moves with the client): asked for when every block so far
    /// is claimed. `None`: `segments` are all.
    pub growth: Option<&'a dyn Growth>,
}

/// Where a growing range's next blocks come from.
pub trait Growth: Sync {
    /// The blocks after the last one handed out, ascending, waiting for them as long as it
    /// sees fit; none: the range has no more. Asked by one worker at a time.
    fn more(&self) -> Vec<u64>;
    /// The range stopped (an error, or its sink said so): a `more` waiting, or asked later,
    /// answers none.
    fn stop(&self);
}

/// One block of the range as its worker hands it to `work`: the block, its receipts, its
/// environment, its replay (`None` for a block with no transactions) and the state round
/// trips it cost (a stretch's first block also carries the stretch's prefetch).
pub struct RangeBlock<'r> {
    pub block: &'r RpcBlock,
    pub receipts: Vec<Value>,
    pub env: &'r EvmEnv,
    pub replay: Option<&'r mut BlockReplay>,
    pub passes: usize,
    /// When the node's answer with this block arrived: what the block is known to be as of.
    pub fetched: Instant,
}

/// Number of replay workers: `CHAINTRACE_JOBS` if set (1 = sequential), else four per core, at
/// most [`MAX_DEFAULT_WORKERS`]. A worker mostly waits on the node (scripts/bench-range.sh, 200
/// blocks at 20 ms per request: a sequential run took 1.65 s of wall time for 0.13 s of its own
/// CPU), so workers beyond the cores hide latency: on 2 cores, 8 workers ran the range in
/// 0.58 s against 0.73 s for 4, and 12 or 16 no faster than 8. Each holds at most one stretch.
pub fn default_jobs() -> usize {
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

/// Blocks a worker may run ahead of the next block to be handed over (the reorder window):
/// half the workers a whole stretch ahead, and one more stretch. Finished blocks wait in it for
/// the one before them; at 4,000 blocks with 8 workers on 2 cores, a window for every worker a
/// stretch ahead held 14% more memory for 4% more speed (scripts/bench-range.sh).
fn window(workers: usize) -> u64 {
    ((workers / 2 + 1) * K_MAX) as u64
}

/// Blocks fetched per batch, and so the length of a stretch a worker replays on one carried
/// state: it starts at [`K_START`], doubles after each batch the node answered, up to [`K_MAX`],
/// and halves when a batch fails as a whole (a node's batch or response size limit).
static K: AtomicUsize = AtomicUsize::new(K_START);
const K_START: usize = 8;
const K_MAX: usize = 32;

/// The blocks of a list of inclusive segments, addressed by position.
struct Blocks {
    segments: Vec<(u64, u64)>,
    /// Position of each segment's first block.
    starts: Vec<u64>,
    len: u64,
}

impl Blocks {
    fn new(segments: &[(u64, u64)]) -> Self {
        let mut b = Blocks {
            segments: Vec::with_capacity(segments.len()),
            starts: Vec::with_capacity(segments.len()),
            len: 0,
        };
        for &(a, z) in segments {
            b.push(a, z);
        }
        b
    }
    /// Blocks `a..=z` after the last.
    fn push(&mut self, a: u64, z: u64) {
        match self.segments.last_mut() {
            Some((_, last)) if *last + 1 == a => *last = z,
            _ => {
                self.segments.push((a, z));
                self.starts.push(self.len);
            }
        }
        self.len += z - a + 1;
    }
    fn at(&self, i: u64) -> u64 {
        let s = self.starts.partition_point(|&st| st <= i) - 1;
        self.segments[s].0 + (i - self.starts[s])
    }
}

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

/// At most a number of callers inside [`Gate::through`] at once, the others waiting.
struct Gate {
    free: Mutex<usize>,
    cond: Condvar,
}

impl Gate {
    fn new(n: usize) -> Gate {
        Gate {
            free: Mutex::new(n),
            cond: Condvar::new(),
        }
    }

    fn through<R>(&self, f: impl FnOnce() -> R) -> R {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            while *free == 0 {
                free = self.cond.wait(free).unwrap_or_else(|e| e.into_inner());
            }
            *free -= 1;
        }
        struct Leave<'a>(&'a Gate);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                self.0.cond.notify_one();
            }
        }
        let _leave = Leave(self);
        f()
    }
}

/// When a stretch looks for what its calls read that no look at its transactions shows
/// ([`Stretch::discover`]). Before it runs, while the range's last look found something for a
/// block after the one it started at; once a look finds nothing, a stretch looks only when one
/// of its blocks on the carried state still read something new (at the blocks after that one),
/// and a look that finds something has stretches look before they run again. A look runs the
/// stretch once more, untraced: on blocks whose reads the carried state already holds it is
/// CPU for nothing.
struct Looking {
    before: std::sync::atomic::AtomicBool,
}

impl Default for Looking {
    fn default() -> Self {
        Looking {
            before: std::sync::atomic::AtomicBool::new(true),
        }
    }
}

impl Looking {
    /// Whether a stretch looks before it runs.
    fn before(&self) -> bool {
        self.before.load(Ordering::Relaxed)
    }

    /// What a look found: something for a block after the one it started at, or not.
    fn found(&self, later: bool) {
        self.before.store(later, Ordering::Relaxed);
    }
}

/// What the workers of one range share besides their claims.
struct Shared {
    /// Stretches fetching their blocks at once.
    fetching: Gate,
    looking: Looking,
}

/// What a worker runs on each block, and what it needs of the caller's error type.
pub trait Work<T, E>: Fn(RangeBlock<'_>) -> Result<T, E> + Sync {}
impl<T, E, F: Fn(RangeBlock<'_>) -> Result<T, E> + Sync> Work<T, E> for F {}

/// A carried state this large or larger is not handed to the next stretch (each stretch then
/// starts anew, as when stretches run side by side): what a parked state holds stays bounded.
const MAX_PARKED_ENTRIES: usize = 1 << 16;

/// Replays `numbers`, the contiguous blocks at `positions`, on one carried state
/// ([`Stretch`]; from `carried`, an earlier stretch's, when its first block follows that
/// one's last), handing what `work` makes of each block (or the error that stopped the
/// stretch) to `send` with its position. The state it ends on, when every block was replayed
/// and every transaction matched its receipt: the next stretch may start from it.
fn replay_stretch<T, E>(
    range: &Range<'_>,
    shared: &Shared,
    positions: std::ops::Range<u64>,
    numbers: &[u64],
    carried: Option<Carried>,
    work: &dyn Work<T, E>,
    send: &dyn Fn(u64, Result<T, E>) -> bool,
) -> Option<Carried>
where
    E: From<SourceError> + From<super::Error>,
{
    let source = range.source;
    let fetched = match shared.fetching.through(|| fetch_blocks(source, numbers)) {
        Ok(f) => f,
        Err(e) => {
            send(positions.start, Err(e.into()));
            return None;
        }
    };
    let fetched_at = Instant::now();
    // The blocks up to the first that could not be had; that one's error after them.
    let mut prepared = Vec::with_capacity(fetched.len());
    let mut failed: Option<(u64, E)> = None;
    for (pos, item) in positions.clone().zip(fetched) {
        let ready = item.and_then(|(mut block, receipts)| {
            let spec_id = source.prepare_block(range.chain_id, &mut block.info, range.hardfork)?;
            let env = EvmEnv::new(spec_id, range.chain_id, &block.info);
            Ok((block, receipts, env))
        });
        match ready {
            Ok(r) => prepared.push(r),
            Err(e) => {
                failed = Some((pos, e.into()));
                break;
            }
        }
    }
    // The chain's own rules mean state changes no block lists: nothing is carried there.
    let carry = prepared.iter().all(|(_, _, env)| env.rules.is_none());
    let mut stretch = match carried.filter(|_| carry) {
        Some(c) => Stretch::resume(source, c),
        None => Stretch::new(source, carry),
    };
    let mut receipts_of: Vec<Vec<Value>> = prepared
        .iter_mut()
        .map(|(_, r, _)| std::mem::take(r))
        .collect();
    let pairs: Vec<_> = prepared.iter().map(|(b, _, env)| (b, env)).collect();
    let look = |stretch: &mut Stretch<'_>, from: usize| -> Result<(), super::Error> {
        let found = stretch.discover(&pairs[from..])?;
        shared.looking.found(found.later);
        Ok(())
    };
    // Whether the stretch looked already.
    let mut looked = shared.looking.before();
    let ready = stretch.prefetch(&pairs).and_then(|()| {
        if looked {
            look(&mut stretch, 0)
        } else {
            Ok(())
        }
    });
    let mut first = match ready {
        Ok(()) => stretch.passes,
        Err(e) => {
            send(positions.start, Err(e.into()));
            return None;
        }
    };
    // Whether every transaction so far matched its receipt (a state that departed from the
    // node's is not handed on).
    let mut matched = true;
    for (i, (pos, &(block, env))) in positions.zip(&pairs).enumerate() {
        let receipts = std::mem::take(&mut receipts_of[i]);
        let passes = std::mem::take(&mut first);
        let item = if block.txs.is_empty() {
            stretch.skip_empty(block);
            work(RangeBlock {
                block,
                receipts,
                env,
                replay: None,
                passes,
                fetched: fetched_at,
            })
        } else {
            let on_carried = stretch.carries_into(block);
            match stretch.replay(block, env, range.spec) {
                Ok(mut r) => {
                    matched &= receipts.len() == r.traces.len()
                        && r.traces.iter().zip(&receipts).all(|(t, rc)| {
                            super::selfcheck::check(&t.outcome, rc)
                                .divergence_text()
                                .is_none()
                        });
                    let passes = passes + r.passes;
                    let item = work(RangeBlock {
                        block,
                        receipts,
                        env,
                        replay: Some(&mut r),
                        passes,
                        fetched: fetched_at,
                    });
                    stretch.carry_on(block, &mut r);
                    // A block on the carried state that still read something new: the blocks
                    // after it likely do too (a failed look leaves them to fetch it as they run).
                    if on_carried && r.passes > 0 && !looked {
                        looked = true;
                        let _ = look(&mut stretch, i + 1);
                    }
                    item
                }
                Err(e) => Err(e.into()),
            }
        };
        let stop = item.is_err();
        if !send(pos, item) || stop {
            return None;
        }
    }
    if let Some((pos, e)) = failed {
        send(pos, Err(e));
        return None;
    }
    stretch
        .into_carried()
        .filter(|c| matched && c.entries() < MAX_PARKED_ENTRIES)
}

/// Replays the blocks of `range`, runs `work` on each (on its worker) and hands the results to
/// `sink` in chain order. `sink` answers whether to go on: `false` stops the range (the blocks
/// claimed are finished, no more are started), as does the first error, from a block or from
/// `sink`, after every block before it has been handed over. `each_worker` runs each worker
/// thread's whole loop (`serve` bounds it by the request's deadline and byte budget there).
///
/// Workers claim block positions in order; a worker waits while its next block is
/// [`window`] blocks past the next one to hand over, so memory stays bounded. A growing range
/// ([`Range::growth`]) whose blocks are all claimed asks for more (one worker at a time, the
/// others waiting) and ends when there are none.
pub fn run<T, E>(
    range: &Range<'_>,
    each_worker: &(dyn Fn(&mut dyn FnMut()) + Sync),
    work: &dyn Work<T, E>,
    sink: &mut dyn FnMut(T) -> Result<bool, E>,
) -> Result<(), E>
where
    T: Send,
    E: Send + From<SourceError> + From<super::Error>,
{
    let blocks = Blocks::new(range.segments);
    let jobs = match range.growth {
        Some(_) => range.jobs,
        None => range.jobs.min(blocks.len as usize),
    }
    .max(1);
    let win = window(jobs);
    let state = Mutex::new(Claims {
        blocks,
        next: 0,
        handed: 0,
        stop: false,
        growing: false,
        ended: range.growth.is_none(),
        parked: None,
    });
    let cond = Condvar::new();
    let shared = Shared {
        fetching: Gate::new(range.max_fetching.unwrap_or(jobs).max(1)),
        looking: Looking::default(),
    };
    let (send, recv) = channel::<(u64, Result<T, E>)>();
    std::thread::scope(|s| -> Result<(), E> {
        for _ in 0..jobs {
            let send = send.clone();
            let (state, cond, shared) = (&state, &cond, &shared);
            s.spawn(move || {
                each_worker(&mut || loop {
                    let Some((claimed, numbers, carried)) = claim(range, state, cond, win) else {
                        return;
                    };
                    // A stopped range finishes no more blocks than the one at hand.
                    let go_on = |pos: u64, item: Result<T, E>| {
                        let stopped = state.lock().unwrap_or_else(|e| e.into_inner()).stop;
                        !stopped && send.send((pos, item)).is_ok()
                    };
                    let end = claimed.end;
                    let ended_on =
                        replay_stretch(range, shared, claimed, &numbers, carried, work, &go_on);
                    // Kept for the stretch that starts right after this one, when none has
                    // claimed it yet (stretches claimed side by side each start anew).
                    if let Some(c) = ended_on {
                        let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                        if !g.stop && g.next == end {
                            g.parked = Some((end, c));
                        }
                    }
                })
            });
        }
        drop(send);
        let stop = || {
            let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
            g.stop = true;
            g.parked = None;
            cond.notify_all();
            drop(g);
            if let Some(growth) = range.growth {
                growth.stop();
            }
        };
        let mut pending = BTreeMap::new();
        let mut next = 0u64;
        for (n, item) in recv.iter() {
            pending.insert(n, item);
            while let Some(item) = pending.remove(&next) {
                match item.and_then(&mut *sink) {
                    Ok(true) => {}
                    Ok(false) => {
                        stop();
                        return Ok(());
                    }
                    Err(e) => {
                        stop();
                        return Err(e);
                    }
                }
                next += 1;
                let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                g.handed = next;
                cond.notify_all();
            }
        }
        Ok(())
    })
}

/// What the workers of a range share: the blocks, and how far they are claimed and handed
/// over.
struct Claims {
    blocks: Blocks,
    /// The next position to claim.
    next: u64,
    /// The next position to hand over.
    handed: u64,
    stop: bool,
    /// A worker is asking the range's growth for more blocks.
    growing: bool,
    /// No more blocks come (always, for a range that does not grow).
    ended: bool,
    /// The state a finished stretch ended on, for the stretch that starts at this position
    /// (the next to claim).
    parked: Option<(u64, Carried)>,
}

/// The next stretch a worker replays, its positions and blocks (and the state the stretch
/// before it ended on, when parked), waiting while it would be past the reorder window or a
/// growing range's blocks are all claimed; `None` once the range is stopped or finished.
#[allow(clippy::type_complexity)]
fn claim(
    range: &Range<'_>,
    state: &Mutex<Claims>,
    cond: &Condvar,
    win: u64,
) -> Option<(std::ops::Range<u64>, Vec<u64>, Option<Carried>)> {
    let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if g.stop {
            return None;
        }
        if g.next < g.blocks.len {
            if g.next < g.handed + win {
                let start = g.next;
                let k = K
                    .load(Ordering::Relaxed)
                    .min(range.max_stretch.unwrap_or(K_MAX));
                g.next = (start + k.max(1) as u64).min(g.blocks.len);
                let positions = start..g.next;
                let numbers = positions.clone().map(|p| g.blocks.at(p)).collect();
                let carried = g
                    .parked
                    .take()
                    .filter(|(at, _)| *at == start)
                    .map(|(_, c)| c);
                return Some((positions, numbers, carried));
            }
        } else if g.ended {
            return None;
        } else if let Some(growth) = range.growth.filter(|_| !g.growing) {
            g.growing = true;
            drop(g);
            let more = growth.more();
            g = state.lock().unwrap_or_else(|e| e.into_inner());
            g.growing = false;
            if more.is_empty() {
                g.ended = true;
            }
            let last = g.blocks.segments.last().map(|s| s.1);
            let after = more.into_iter().filter(|&n| last.is_none_or(|l| n > l));
            for (a, z) in segments(after) {
                g.blocks.push(a, z);
            }
            cond.notify_all();
            continue;
        }
        g = cond.wait(g).unwrap_or_else(|e| e.into_inner());
    }
}

/// Ascending block numbers as inclusive runs.
pub fn segments(numbers: impl Iterator<Item = u64>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for n in numbers {
        match out.last_mut() {
            Some((_, b)) if *b + 1 == n => *b = n,
            _ => out.push((n, n)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{segments, Blocks, Looking};

    #[test]
    fn stretches_look_first_while_looks_find_something() {
        let l = Looking::default();
        assert!(l.before());
        l.found(true);
        assert!(l.before());
        l.found(false);
        assert!(!l.before());
        // A look after a block that read something new found more: looking first again.
        l.found(true);
        assert!(l.before());
    }

    #[test]
    fn positions_run_across_segments() {
        let segs = [(3, 5), (10, 10), (20, 21)];
        let b = Blocks::new(&segs);
        assert_eq!(b.len, 6);
        let all: Vec<u64> = (0..b.len).map(|i| b.at(i)).collect();
        assert_eq!(all, vec![3, 4, 5, 10, 20, 21]);
    }

    #[test]
    fn runs_of_blocks() {
        assert_eq!(
            segments([3, 4, 5, 7, 9, 10].into_iter()),
            vec![(3, 5), (7, 7), (9, 10)]
        );
        assert!(segments(std::iter::empty()).is_empty());
    }
}
