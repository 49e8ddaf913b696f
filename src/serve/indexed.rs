//! `serve --index DIR`: the address index (`crate::index`) kept current and answered from.
//!
//! At start the index is opened for the node's chain (another chain's is refused). A follower
//! thread then brings it up to the node's head every `--index-poll` seconds: it looks for a
//! reorg first (the index's highest block asked of the node; where it is no longer the node's,
//! the hashes below it until one is), drops what the node no longer has, and indexes the new
//! blocks on the ranges engine, appending each to the file. A query that reads the index first
//! does the same itself (one batch when nothing changed), so it never answers from blocks the
//! node has left: the indexed blocks are linked by parent hash, and the highest being the
//! node's means all are. Syncs are serialised; at most [`MAX_SYNC_BLOCKS`] blocks are indexed
//! by one query's sync (more is the follower's work, and the query is told the index is
//! behind).

use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use alloy_primitives::B256;

use super::upstream::Upstream;
use crate::index::build::{fork_point, index_blocks, IndexError};
use crate::index::store::{self, Store};
use crate::index::AddressIndex;
use crate::replay::range::default_jobs;
use crate::source::rpc::RpcSource;

/// Blocks one query's sync may index before it answers.
pub const MAX_SYNC_BLOCKS: u64 = 256;

/// Replay workers of a sync.
const MAX_JOBS: usize = 8;

/// The index of a running server.
pub struct Indexed {
    index: RwLock<AddressIndex>,
    /// The file, held by whichever sync runs (one at a time).
    store: Mutex<Store>,
    pub chain_id: u64,
    pub genesis: B256,
    upstream: Upstream,
}

/// Why the index cannot answer now.
#[derive(Debug)]
pub enum NotReady {
    /// The query's deadline came first.
    TimedOut,
    Source(crate::source::error::SourceError),
    Replay(crate::replay::Error),
    /// What is asked is not in the index, or the index cannot be kept (the message says).
    Refused(String),
}

impl From<crate::source::error::SourceError> for NotReady {
    fn from(e: crate::source::error::SourceError) -> Self {
        NotReady::Source(e)
    }
}

/// What a sync found: the index's span after it and the node's head.
#[derive(Clone, Copy, Debug)]
pub struct Synced {
    pub span: Option<(u64, u64)>,
    pub head: u64,
}

impl Indexed {
    /// Opens the index in `dir` for the node behind `upstream`.
    pub fn open(
        dir: &std::path::Path,
        upstream: Upstream,
    ) -> Result<(Indexed, Vec<String>), String> {
        let source = upstream.source(None).map_err(|e| e.to_string())?;
        let (chain_id, genesis, _) = source.genesis_and_head().map_err(|e| e.to_string())?;
        let opened = store::open(dir, (chain_id, genesis), false).map_err(|e| e.to_string())?;
        Ok((
            Indexed {
                index: RwLock::new(opened.index),
                store: Mutex::new(opened.store),
                chain_id,
                genesis,
                upstream,
            },
            opened.notes,
        ))
    }

    /// A source for the index's own requests, ending by `deadline`.
    fn source(&self, deadline: Instant) -> Result<RpcSource, NotReady> {
        self.upstream
            .source(Some(deadline))
            .map_err(|e| NotReady::Refused(e.to_string()))
    }

    /// Reads the index.
    pub fn read<T>(&self, f: impl FnOnce(&AddressIndex) -> T) -> T {
        f(&self.index.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Brings the index up to the node's head, indexing at most `most` new blocks: a reorg
    /// found first is undone (the blocks the node left dropped, the new ones indexed).
    pub fn sync(&self, deadline: Instant, most: u64) -> Result<Synced, NotReady> {
        // One sync at a time; a query waits for the follower's to its own deadline.
        let mut file = loop {
            match self.store.try_lock() {
                Ok(f) => break f,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::sync::TryLockError::WouldBlock) => return Err(NotReady::TimedOut),
            }
        };
        let source = self.source(deadline)?;
        let (chain_id, genesis, head) = source.genesis_and_head()?;
        if (chain_id, genesis) != (self.chain_id, self.genesis) {
            return Err(NotReady::Refused(format!(
                "the node is now chain {chain_id} (genesis {genesis}), not the index's"
            )));
        }
        let stale = {
            let index = self.index.read().unwrap_or_else(|p| p.into_inner());
            fork_point(&source, &index)?
        };
        let span = self.read(AddressIndex::span);
        let Some((lo, hi)) = span else {
            return Ok(Synced { span, head });
        };
        let start = stale.unwrap_or(hi + 1);
        if let Some(s) = stale {
            if s <= lo {
                return Err(NotReady::Refused(format!(
                    "every indexed block ({lo}..{hi}) was reorganised away: rebuild the index"
                )));
            }
            // Until the new blocks are in, the index ends where the chains part.
            self.index
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .truncate_from(s);
        }
        if start <= head {
            let end = head.min(start.saturating_add(most.max(1) - 1));
            let jobs = default_jobs().clamp(1, MAX_JOBS);
            let mut sink = |b| -> Result<bool, IndexError> {
                file.append(&b)?;
                self.index
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(b);
                Ok(true)
            };
            let indexed = index_blocks(
                &source,
                self.chain_id,
                &[(start, end)],
                jobs,
                &crate::replay::cancel::inherit(jobs),
                &mut sink,
            );
            let _ = file.sync();
            indexed.map_err(|e| match e {
                IndexError::Source(e) => NotReady::Source(e),
                IndexError::Replay(e) => NotReady::Replay(e),
                e => NotReady::Refused(format!("indexing: {e}")),
            })?;
        }
        Ok(Synced {
            span: self.read(AddressIndex::span),
            head,
        })
    }

    /// The index brought up to the node's head for a query over `from..=to`: an error when
    /// blocks of it are not indexed (before the index starts, or more new blocks than one
    /// query may index), never an answer from part of the range.
    pub fn ready_for(&self, from: u64, to: u64, deadline: Instant) -> Result<Synced, NotReady> {
        let synced = self.sync(deadline, MAX_SYNC_BLOCKS)?;
        let Some((lo, hi)) = synced.span else {
            return Err(NotReady::Refused("the address index is empty".into()));
        };
        if from < lo {
            return Err(NotReady::Refused(format!(
                "blocks before {lo} are not in the address index (it holds {lo}..{hi}): ask from block {lo} on, or extend the index with `chaintrace index`"
            )));
        }
        if to > hi {
            return Err(NotReady::Refused(format!(
                "the address index holds blocks up to {hi} and the node is at {}: it is catching up, retry",
                synced.head
            )));
        }
        Ok(synced)
    }

    /// Keeps the index current until the process ends: a sync every `poll`.
    pub fn follow(self: std::sync::Arc<Self>, poll: Duration) {
        let _ = std::thread::Builder::new()
            .name("serve-index".into())
            .spawn(move || loop {
                let deadline = Instant::now() + Duration::from_secs(600);
                let started = Instant::now();
                let r = crate::replay::cancel::within(deadline, None, || {
                    self.sync(deadline, 4 * MAX_SYNC_BLOCKS)
                });
                if let Err(e) = r {
                    let message = match e {
                        NotReady::TimedOut => "timed out".to_string(),
                        NotReady::Source(e) => e.to_string(),
                        NotReady::Replay(e) => e.to_string(),
                        NotReady::Refused(m) => m,
                    };
                    eprintln!(
                        "{}",
                        serde_json::json!({"event": "index", "error": message})
                    );
                }
                std::thread::sleep(poll.saturating_sub(started.elapsed()));
            });
    }
}
