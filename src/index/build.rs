//! Indexing blocks: each replayed under the Parity tracer on the ranges engine
//! ([`crate::replay::range`]), its transactions checked against their receipts (an index built
//! from a replay that is not the chain's would answer wrongly forever after), and turned into
//! an [`IndexedBlock`] handed over in chain order.

use crate::replay::range::{Range, RangeBlock};
use crate::replay::selfcheck::check;
use crate::replay::TraceResult;
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::trace::TracerSpec;

use super::{AddressIndex, IndexedBlock};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Replay(#[from] crate::replay::Error),
    #[error("block {block}: transaction {tx} replayed differently from its receipt ({detail}); it is not indexed")]
    Diverged {
        block: u64,
        tx: alloy_primitives::B256,
        detail: String,
    },
    #[error("block {0} has no hash (a pending block is never indexed)")]
    NoHash(u64),
    #[error(transparent)]
    Store(#[from] super::store::StoreError),
    /// The replay gave another kind of trace than the Parity tracer's.
    #[error("block {0}: the replay gave no Parity trace")]
    NotParity(u64),
}

/// Indexes the blocks of `segments` (inclusive, ascending) with `jobs` workers, each run
/// inside `each_worker`; `sink` gets each block in chain order and says whether to go on.
pub fn index_blocks(
    source: &RpcSource,
    chain_id: u64,
    segments: &[(u64, u64)],
    jobs: usize,
    each_worker: &(dyn Fn(&mut dyn FnMut()) + Sync),
    sink: &mut dyn FnMut(IndexedBlock) -> Result<bool, IndexError>,
) -> Result<(), IndexError> {
    let range = Range {
        source,
        chain_id,
        segments,
        spec: &TracerSpec::Parity,
        hardfork: None,
        jobs,
        max_stretch: None,
        max_fetching: None,
        growth: None,
    };
    let work = |b: RangeBlock<'_>| -> Result<IndexedBlock, IndexError> {
        let info = &b.block.info;
        let hash = info.hash.ok_or(IndexError::NoHash(info.number))?;
        let parent = info.parent_hash.unwrap_or_default();
        let mut txs = Vec::new();
        if let Some(r) = b.replay {
            for (k, t) in r.traces.iter().enumerate() {
                let report = match b.receipts.get(k) {
                    Some(receipt) => check(&t.outcome, receipt),
                    None => {
                        return Err(IndexError::Diverged {
                            block: info.number,
                            tx: t.hash,
                            detail: "no receipt".into(),
                        })
                    }
                };
                if let Some(detail) = report.divergence_text() {
                    return Err(IndexError::Diverged {
                        block: info.number,
                        tx: t.hash,
                        detail,
                    });
                }
                let TraceResult::Parity(p) = &t.result else {
                    return Err(IndexError::NotParity(info.number));
                };
                txs.push((t.hash, p.traces.as_slice()));
            }
        }
        Ok(IndexedBlock::from_traces(
            info.number,
            hash,
            parent,
            txs.into_iter(),
        ))
    };
    crate::replay::range::run(&range, each_worker, &work, sink)
}

/// Where the index and the node part: the lowest indexed block that is no longer the node's,
/// if any. The indexed blocks are linked by parent hash, so the tip alone says whether all are
/// the node's; when it is not, the hashes below it are asked in batches of [`WINDOW`] until one
/// matches.
pub fn fork_point(source: &RpcSource, index: &AddressIndex) -> Result<Option<u64>, SourceError> {
    let Some((lo, hi)) = index.span() else {
        return Ok(None);
    };
    let mut top = hi;
    let mut stale = None;
    loop {
        let bottom = top.saturating_sub(WINDOW - 1).max(lo);
        let numbers: Vec<u64> = (bottom..=top).rev().collect();
        let hashes = source.block_hashes(&numbers)?;
        for (n, h) in numbers.iter().zip(hashes) {
            if index.block(*n).map(|b| b.hash) == h {
                return Ok(stale);
            }
            stale = Some(*n);
        }
        if bottom == lo {
            return Ok(stale);
        }
        top = bottom - 1;
    }
}

/// Block hashes asked per batch while looking for where a reorg began.
const WINDOW: u64 = 64;
