//! Blocks prepared ahead of a client walking the chain.
//!
//! An indexer asks `debug_traceBlockByNumber` for block after block, each one `serve` has never
//! seen. Answered one at a time, each costs its own round trips for the block, its receipts and
//! its state; the ranges engine ([`crate::replay::range`]) replays contiguous blocks far
//! cheaper, on one carried state with a stretch's blocks fetched in one batch. So when a block
//! is asked by number with the same trace options as a block a little before it (a walk), the
//! blocks after it are replayed in the background on that engine, up to `--ahead` blocks past
//! the one asked, and their answers kept in the memory cache ([`super::memo`]) under the keys
//! the walk's next requests look up: the same text a request would have made, kept only when
//! every transaction matched its receipt.
//!
//! A block being prepared is held under its walk key; a request for it waits for it (to its own
//! deadline) rather than replaying it a second time, and a block a request already holds is not
//! prepared. At most [`MAX_RUNNING`] preparations run at once, each bounded by the request
//! timeout and a byte budget like a request, each stopped at the chain's head; what they keep
//! is bounded by the answer cache's bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alloy_primitives::B256;
use serde_json::Value;

use super::memo::{Answer, AnswerKey, KeyGuard, Memo};
use crate::replay::range::{default_jobs, Range, RangeBlock};

/// Preparations running at once, at most.
pub const MAX_RUNNING: usize = 2;

/// The default of `--ahead`: blocks prepared past the one a walk asked.
pub const DEFAULT_AHEAD: u64 = 64;

/// A request this many blocks or fewer from the walk's last one continues it.
const NEAR: u64 = 16;

/// A walk not continued for this long is forgotten.
const IDLE: Duration = Duration::from_secs(60);

/// Replay workers of one preparation.
const MAX_JOBS: usize = 8;

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
    at: Instant,
}

pub struct Ahead {
    cfg: AheadConfig,
    memo: Arc<Memo>,
    walks: Mutex<HashMap<AnswerKey, Walk>>,
    running: AtomicUsize,
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
            running: AtomicUsize::new(0),
        }
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

    /// Block `number` is asked with trace `options`: when that continues a walk, the blocks
    /// after it not prepared yet are prepared in the background.
    pub fn asked(self: &Arc<Self>, number: u64, options: Option<&Value>) {
        if self.cfg.blocks == 0 {
            return;
        }
        let walk_key = AnswerKey::new(0, "", B256::ZERO, options);
        let now = Instant::now();
        let wanted = {
            let mut walks = self.walks.lock().unwrap_or_else(|p| p.into_inner());
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
                at: now,
            });
            // Far from the walk's last block: a new walk starts there.
            if number.abs_diff(w.last) > NEAR {
                w.last = number;
                w.frontier = number;
            }
            let continues = w.last != number;
            w.last = w.last.max(number);
            w.at = now;
            let from = w.frontier.max(number) + 1;
            let to = number + self.cfg.blocks;
            // Refilled in chunks: not before half of what is prepared ahead is used.
            let ahead_left = w.frontier.saturating_sub(number);
            if !continues
                || from > to
                || ahead_left > self.cfg.blocks / 2
                || self.running.load(Ordering::SeqCst) >= MAX_RUNNING
            {
                None
            } else {
                w.frontier = to;
                Some((from, to))
            }
        };
        let Some((from, to)) = wanted else {
            return;
        };
        self.running.fetch_add(1, Ordering::SeqCst);
        let me = self.clone();
        let options = options.cloned();
        let spawned = std::thread::Builder::new()
            .name("serve-ahead".into())
            .spawn(move || {
                struct Done<'a>(&'a AtomicUsize);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                let _done = Done(&me.running);
                let deadline = Instant::now() + me.cfg.timeout;
                crate::replay::cancel::within(deadline, Some(me.cfg.budget), || {
                    // A preparation that fails leaves nothing behind: the requests replay.
                    let _ = me.prepare(from, to, options.as_ref(), walk_key, deadline);
                });
            });
        if spawned.is_err() {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Replays blocks `from..=to` (those below the head that no request holds) under the
    /// walk's trace options and keeps each block's answer.
    fn prepare(
        &self,
        from: u64,
        to: u64,
        options: Option<&Value>,
        walk_key: AnswerKey,
        deadline: Instant,
    ) -> Option<()> {
        let opts = super::methods::trace_opts(options).ok()?;
        let source = self.cfg.upstream.source(Some(deadline)).ok()?;
        let (chain_id, head) = source.chain_and_head().ok()?;
        let client = source.client_version_text().unwrap_or_default();
        // The blocks no request holds, each held until its answer is kept.
        let mut held: BTreeMap<u64, KeyGuard<'_>> = BTreeMap::new();
        for n in from..=to.min(head) {
            // A block asked before was answered then (and its answer likely kept).
            if self.memo.was_seen(&format!("{n:#x}")) {
                continue;
            }
            if let Some(g) = self.memo.try_lock_key(&block_key(n, walk_key)) {
                held.insert(n, g);
            }
        }
        let segments = crate::replay::range::segments(held.keys().copied());
        if segments.is_empty() {
            return Some(());
        }
        let blocks = held.len();
        let jobs = default_jobs().clamp(1, MAX_JOBS).min(blocks);
        let range = Range {
            source: &source,
            chain_id,
            segments: &segments,
            spec: &opts.spec,
            hardfork: None,
            jobs,
            // Spread over the workers: the walk waits on the first of these blocks.
            max_stretch: Some(blocks.div_ceil(jobs).clamp(1, 4)),
            growth: None,
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
                return Ok((number, hash, None));
            }
            let mut text = Vec::new();
            super::methods::write_block_answer(&mut text, traces)
                .map_err(|e| super::methods::Fault::server(e.to_string()))?;
            Ok((number, hash, Some(text)))
        };
        let mut notes = Vec::new();
        let mut keep = |(number, hash, text): Prepared| {
            notes.extend(source.take_notes());
            if let (Some(hash), Some(text)) = (hash, text.and_then(|t| String::from_utf8(t).ok())) {
                self.memo.seen(&format!("{number:#x}"));
                self.memo.put_answer(
                    AnswerKey::new(chain_id, &client, hash, options),
                    Answer {
                        text,
                        notes: notes.clone(),
                    },
                );
            }
            held.remove(&number);
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

/// A block a preparation replayed: its number, its hash and its answer (`None` when a
/// transaction departed from its receipt).
type Prepared = (u64, Option<B256>, Option<Vec<u8>>);
