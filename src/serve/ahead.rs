//! Blocks prepared ahead of a client walking the chain.
//!
//! An indexer asks `debug_traceBlockByNumber` for block after block, each one `serve` has never
//! seen. Answered one at a time, each costs its own round trips for the block, its receipts and
//! its state; the ranges engine ([`crate::replay::range`]) replays contiguous blocks far
//! cheaper, on one carried state with a stretch's blocks fetched in one batch. So when a block
//! is asked by number with the same trace options as a block a little before it (a walk), a
//! preparation starts that follows the walk: one range that grows as the walk advances
//! ([`Growth`]), replaying in the background the blocks up to `--ahead` past the last one
//! asked, and keeping their answers in the memory cache ([`super::memo`]) under the keys the
//! walk's next requests look up: the same text a request would have made, kept only when every
//! transaction matched its receipt; with each, the block's hash as the preparation read it,
//! which answers for the block's number for [`super::memo::READ_HASH_FOR`] (a walk's next
//! request then costs the node nothing). Its workers, its source and the head it read carry on from
//! block to block; it hands its workers at least a stretch of blocks at a time, and reads the
//! head again only once it has handed out every block below the head it read last.
//!
//! A block being prepared is held under its walk key from when it is handed to the workers
//! until its answer is kept; a request for it waits for it (to its own deadline) rather than
//! replaying it a second time, and a block a request already holds is not prepared. At most
//! [`MAX_RUNNING`] preparations run at once, each bounded by the request timeout and a byte
//! budget like a request (from its start: past either it ends, and the walk's next request
//! starts another), each stopped at the chain's head, and ended when its walk is restarted
//! elsewhere, forgotten, or not continued for [`LINGER`]. What one holds is bounded by
//! `--ahead` (blocks handed out stay within it of the walk's last), what they keep by the
//! answer cache's bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use alloy_primitives::B256;
use serde_json::Value;

use super::memo::{Answer, AnswerKey, KeyGuard, Memo, ReadBlock};
use crate::replay::range::{default_jobs, Growth, Range, RangeBlock};
use crate::source::rpc::RpcSource;

/// Preparations running at once, at most.
pub const MAX_RUNNING: usize = 2;

/// The default of `--ahead`: blocks prepared past the one a walk asked.
pub const DEFAULT_AHEAD: u64 = 64;

/// A request this many blocks or fewer from the walk's last one continues it.
const NEAR: u64 = 16;

/// A walk not continued for this long is forgotten.
const IDLE: Duration = Duration::from_secs(60);

/// A preparation whose walk has not moved for this long ends (the walk's next request starts
/// another).
const LINGER: Duration = Duration::from_secs(10);

/// A walk prepared up to the head read less than this long ago starts no preparation.
const HEAD_AGE: Duration = Duration::from_secs(1);

/// Replay workers of one preparation.
const MAX_JOBS: usize = 8;

/// The longest stretch a preparation's worker claims: the walk waits on the first block of
/// each, so they are spread over the workers.
const MAX_STRETCH: usize = 8;

/// Stretches of one preparation whose blocks are fetched at once: the walk waits on the first
/// block of the first stretch, which a burst of every worker's batch at once delays (the node
/// answers them side by side); the others' replays go on meanwhile.
const MAX_FETCHING: usize = 2;

/// Walks remembered at once (one per trace options); the oldest goes first.
const MAX_WALKS: usize = 64;

/// What a preparation needs of the server's configuration.
pub struct AheadConfig {
    pub upstream: super::upstream::Upstream,
    /// A preparation's deadline, from its start.
    pub timeout: Duration,
    /// Its byte budget.
    pub budget: usize,
    /// Blocks prepared past the one asked (0: none).
    pub blocks: u64,
}

/// One walk: the blocks asked with one set of trace options.
struct Walk {
    /// The highest block asked.
    last: u64,
    /// The highest block prepared or being prepared.
    frontier: u64,
    /// The preparation following the walk, if one runs.
    job: Option<u64>,
    /// The chain's head as a preparation of the walk last read it, and when.
    head: Option<(u64, Instant)>,
    at: Instant,
}

pub struct Ahead {
    cfg: AheadConfig,
    memo: Arc<Memo>,
    walks: Mutex<HashMap<AnswerKey, Walk>>,
    /// Signalled when a walk moves (or a preparation is stopped).
    moved: Condvar,
    running: AtomicUsize,
    jobs: AtomicU64,
}

/// The key a block of a walk is held under while it is prepared or answered.
pub fn block_key(number: u64, options: AnswerKey) -> String {
    format!("walk:{number}:{options:?}")
}

impl Ahead {
    pub fn new(cfg: AheadConfig, memo: Arc<Memo>) -> Ahead {
        Ahead {
            cfg,
            memo,
            walks: Mutex::new(HashMap::new()),
            moved: Condvar::new(),
            running: AtomicUsize::new(0),
            jobs: AtomicU64::new(0),
        }
    }

    fn walks(&self) -> MutexGuard<'_, HashMap<AnswerKey, Walk>> {
        self.walks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A `debug_traceBlockByNumber(params)` call about to run: it is told to the walk
    /// ([`Ahead::asked`]), and its block is held for it (waiting, to the call's deadline, for a
    /// preparation that holds it) until the returned guard drops.
    pub fn walk<'m>(
        self: &Arc<Self>,
        ctx: &super::methods::Ctx<'m>,
        params: &Value,
    ) -> Result<Option<KeyGuard<'m>>, super::methods::Fault> {
        // A number as the call reads it (a tag is no walk; a bad one is the call's error).
        let number = super::methods::block_number_param(params.get(0))
            .ok()
            .and_then(|r| u64::from_str_radix(r.strip_prefix("0x")?, 16).ok());
        let Some(n) = number else {
            return Ok(None);
        };
        self.asked(n, params.get(1));
        let options = AnswerKey::new(0, "", B256::ZERO, params.get(1));
        ctx.memo
            .lock_key(&block_key(n, options), ctx.deadline)
            .map(Some)
            .ok_or_else(super::methods::timed_out)
    }

    /// Block `number` is asked with trace `options`: when that continues a walk, its
    /// preparation is told (or started, when none runs) to prepare up to `--ahead` blocks past
    /// it in the background.
    pub fn asked(self: &Arc<Self>, number: u64, options: Option<&Value>) {
        if self.cfg.blocks == 0 {
            return;
        }
        let walk_key = AnswerKey::new(0, "", B256::ZERO, options);
        let now = Instant::now();
        let job = {
            let mut walks = self.walks();
            // A walk forgotten or restarted ends its preparation (at its next look).
            walks.retain(|_, w| now.duration_since(w.at) < IDLE);
            if walks.len() >= MAX_WALKS && !walks.contains_key(&walk_key) {
                let oldest = walks.iter().min_by_key(|(_, w)| w.at).map(|(k, _)| *k);
                if let Some(k) = oldest {
                    walks.remove(&k);
                }
            }
            let w = walks.entry(walk_key).or_insert(Walk {
                last: number,
                frontier: number,
                job: None,
                head: None,
                at: now,
            });
            // Far from the walk's last block: a new walk starts there.
            if number.abs_diff(w.last) > NEAR {
                w.last = number;
                w.frontier = number;
                w.job = None;
            }
            let continues = w.last != number;
            w.last = w.last.max(number);
            w.at = now;
            self.moved.notify_all();
            let at_head = w.head.is_some_and(|(head, read)| {
                w.frontier.max(w.last) >= head && now.duration_since(read) < HEAD_AGE
            });
            if !continues
                || w.job.is_some()
                || at_head
                || w.frontier.max(w.last) >= w.last + self.cfg.blocks
                || self.running.load(Ordering::SeqCst) >= MAX_RUNNING
            {
                None
            } else {
                let id = self.jobs.fetch_add(1, Ordering::SeqCst);
                w.job = Some(id);
                Some(id)
            }
        };
        let Some(id) = job else {
            return;
        };
        self.running.fetch_add(1, Ordering::SeqCst);
        let me = self.clone();
        let options = options.cloned();
        let spawned = std::thread::Builder::new()
            .name("serve-ahead".into())
            .spawn(move || {
                struct Done<'a>(&'a Ahead, AnswerKey, u64);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        if let Some(w) = self.0.walks().get_mut(&self.1) {
                            if w.job == Some(self.2) {
                                w.job = None;
                            }
                        }
                        self.0.running.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                let _done = Done(&me, walk_key, id);
                let deadline = Instant::now() + me.cfg.timeout;
                crate::replay::cancel::within(deadline, Some(me.cfg.budget), || {
                    // A preparation that fails leaves nothing behind: the requests replay.
                    let _ = me.prepare(id, options.as_ref(), walk_key, deadline);
                });
            });
        if spawned.is_err() {
            self.running.fetch_sub(1, Ordering::SeqCst);
            if let Some(w) = self.walks().get_mut(&walk_key) {
                w.job = None;
            }
        }
    }

    /// The head as a preparation of walk `walk_key` read it just now.
    fn read_head(&self, walk_key: AnswerKey, head: u64) {
        if let Some(w) = self.walks().get_mut(&walk_key) {
            w.head = Some((head, Instant::now()));
        }
    }

    /// Follows the walk `walk_key` as preparation `id`: one growing range
    /// ([`Growth`]) replays, under the walk's trace options, the blocks up to `--ahead` past
    /// the walk's last (those below the head that no request holds) and keeps each block's
    /// answer, until the walk is forgotten or restarted elsewhere, the head is reached, a
    /// block fails or the deadline passes.
    fn prepare(
        &self,
        id: u64,
        options: Option<&Value>,
        walk_key: AnswerKey,
        deadline: Instant,
    ) -> Option<()> {
        let opts = super::methods::trace_opts(options).ok()?;
        let source = self.cfg.upstream.source(Some(deadline)).ok()?;
        let (chain_id, head) = source.chain_and_head().ok()?;
        self.read_head(walk_key, head);
        let client = source.client_version_text().unwrap_or_default();
        let jobs = default_jobs().clamp(1, MAX_JOBS);
        let stretch = usize::try_from(self.cfg.blocks)
            .unwrap_or(usize::MAX)
            .div_ceil(jobs)
            .clamp(1, MAX_STRETCH);
        let job = Job {
            ahead: self,
            source: &source,
            walk_key,
            id,
            deadline,
            step: stretch as u64,
            head: Mutex::new(head),
            held: Mutex::new(BTreeMap::new()),
            stopped: AtomicBool::new(false),
        };
        let range = Range {
            source: &source,
            chain_id,
            segments: &[],
            spec: &opts.spec,
            hardfork: None,
            jobs,
            max_stretch: Some(stretch),
            max_fetching: Some(MAX_FETCHING),
            growth: Some(&job),
        };
        // Each block's answer as `trace_block` writes it, or `None` when a transaction
        // departs from its receipt (such a block is not kept: its request replays it).
        let work = |b: RangeBlock<'_>| -> Result<Prepared, super::methods::Fault> {
            let number = b.block.info.number;
            let hash = b.block.info.hash;
            let traces = b.replay.map_or(&[][..], |r| r.traces.as_slice());
            let diverged = traces.iter().enumerate().any(|(k, t)| {
                b.receipts
                    .get(k)
                    .is_none_or(|rc| super::methods::divergence(t.hash, &t.outcome, rc).is_some())
            });
            if diverged {
                return Ok((number, hash, b.fetched, None));
            }
            let mut text = Vec::new();
            super::methods::write_block_answer(&mut text, traces)
                .map_err(|e| super::methods::Fault::server(e.to_string()))?;
            Ok((number, hash, b.fetched, Some(text)))
        };
        let mut notes = Vec::new();
        let mut keep = |(number, hash, fetched, text): Prepared| {
            notes.extend(source.take_notes());
            if let (Some(hash), Some(text)) = (hash, text.and_then(|t| String::from_utf8(t).ok())) {
                let block_ref = format!("{number:#x}");
                self.memo.seen(&block_ref);
                let read = ReadBlock {
                    chain_id,
                    client: client.clone(),
                    hash,
                    at: fetched,
                };
                self.memo.note_read(block_ref, read);
                self.memo.put_answer(
                    AnswerKey::new(chain_id, &client, hash, options),
                    Answer {
                        text,
                        notes: notes.clone(),
                    },
                );
            }
            job.held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&number);
            Ok(true)
        };
        crate::replay::range::run(
            &range,
            &crate::replay::cancel::inherit(jobs),
            &work,
            &mut keep,
        )
        .ok()
    }
}

/// A preparation following a walk: the growth of its range.
struct Job<'a> {
    ahead: &'a Ahead,
    source: &'a RpcSource,
    walk_key: AnswerKey,
    id: u64,
    deadline: Instant,
    /// Blocks handed to the range at once, at least (fewer only when the walk is about to
    /// reach them): a stretch's worth.
    step: u64,
    /// The chain's head as last read (read again when the walk wants blocks past it).
    head: Mutex<u64>,
    /// The blocks handed to the range, each held until its answer is kept (or the
    /// preparation ends).
    held: Mutex<BTreeMap<u64, KeyGuard<'a>>>,
    stopped: AtomicBool,
}

impl Growth for Job<'_> {
    /// The next blocks up to `--ahead` past the walk's last, below the head, that no request
    /// holds and none asked before, each held; waits while fewer than a step are wanted.
    /// None once the walk is forgotten, restarted or lingers, the head is reached, the range
    /// stopped or the deadline passed.
    fn more(&self) -> Vec<u64> {
        let ahead = self.ahead;
        let mut walks = ahead.walks();
        loop {
            let now = Instant::now();
            if self.stopped.load(Ordering::SeqCst) || now >= self.deadline {
                return Vec::new();
            }
            let Some(w) = walks.get_mut(&self.walk_key) else {
                return Vec::new();
            };
            if w.job != Some(self.id) || now.duration_since(w.at) >= LINGER {
                return Vec::new();
            }
            let from = w.frontier.max(w.last) + 1;
            let to = w.last + ahead.cfg.blocks;
            let wanted = (to + 1).saturating_sub(from);
            // Enough for a stretch, or the walk is close to the last block handed out.
            if wanted > 0 && (wanted >= self.step || from <= w.last + self.step) {
                let head = *self.head.lock().unwrap_or_else(|p| p.into_inner());
                if from > head {
                    // The head as the node has it now (read without the walks' lock), read
                    // only once the blocks below the head read last are all handed out.
                    drop(walks);
                    let Ok((_, now_head)) = self.source.chain_and_head() else {
                        return Vec::new();
                    };
                    ahead.read_head(self.walk_key, now_head);
                    if from > now_head {
                        // Preparations stop at the head.
                        return Vec::new();
                    }
                    *self.head.lock().unwrap_or_else(|p| p.into_inner()) = now_head;
                    walks = ahead.walks();
                    continue;
                }
                let to = to.min(head);
                w.frontier = to;
                drop(walks);
                let held = self.hold(from, to);
                if !held.is_empty() {
                    return held;
                }
                walks = ahead.walks();
                continue;
            }
            let until = self.deadline.min(w.at + LINGER);
            let left = until.saturating_duration_since(now);
            walks = ahead
                .moved
                .wait_timeout(walks, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _walks = self.ahead.walks();
        self.ahead.moved.notify_all();
    }
}

impl Job<'_> {
    /// Blocks `from..=to` that none asked before (a block asked was answered then, and its
    /// answer likely kept) and no request holds, each held until its answer is kept.
    fn hold(&self, from: u64, to: u64) -> Vec<u64> {
        let memo = &*self.ahead.memo;
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for n in from..=to {
            if memo.was_seen(&format!("{n:#x}")) {
                continue;
            }
            if let Some(g) = memo.try_lock_key(&block_key(n, self.walk_key)) {
                held.insert(n, g);
                out.push(n);
            }
        }
        out
    }
}

/// A block a preparation replayed: its number, its hash, when the node's answer with it
/// arrived, and its answer (`None` when a transaction departed from its receipt).
type Prepared = (u64, Option<B256>, Instant, Option<Vec<u8>>);
