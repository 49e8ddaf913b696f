//! reth's `trace_filter` over any node: the Parity `trace` entries of every transaction in a
//! block range whose action matches the filter's addresses, `after` of them skipped and at most
//! `count` returned.
//!
//! The range runs on the ranges engine ([`crate::replay::range`]): parallel workers, each
//! replaying a stretch of contiguous blocks on one carried state, the blocks and receipts of a
//! stretch fetched in one batch; each worker keeps only the entries that match (as JSON text),
//! and the request's thread takes them in chain order, stopping the range once `count` entries
//! are taken. The range is bounded by `--max-filter-blocks` (reth's `--rpc.max-trace-filter-blocks`,
//! 100 by default, and its rule: `toBlock - fromBlock` may not exceed it), the answer by
//! `--max-response`, the work by the request's deadline and byte budget, which every worker
//! inherits (its share of the budget).
//!
//! reth's answers where they are not the filter's matching: a block past the node's head is
//! "block not found" (-32001), `fromBlock` after `toBlock` and a range too large are -32602
//! with reth's texts. `count` 0 is -32602 before any work, as the issue asks of bad input, where
//! reth and anvil answer `[]` (they truncate to zero entries). Block rewards (Parity `reward` entries of blocks before the merge)
//! are not produced, as for `trace_block`.

use alloy_rpc_types_trace::filter::TraceFilter;
use serde_json::Value;

use super::methods::{divergence, too_large, Ctx, Fault, Outcome};
use crate::replay::range::{default_jobs, Range, RangeBlock};
use crate::replay::TraceResult;
use crate::source::rpc::RpcSource;
use crate::trace::TracerSpec;

/// The default of `--max-filter-blocks`: reth's `DEFAULT_MAX_TRACE_FILTER_BLOCKS`.
pub const DEFAULT_MAX_FILTER_BLOCKS: u64 = 100;

/// Workers one `trace_filter` request replays its range with, at most (each a thread mostly
/// waiting on the node; `serve --workers` requests may run at once).
const MAX_JOBS: usize = 8;

/// What a worker keeps of one block: its matching entries as JSON text, in order, and the
/// divergences of its transactions from their receipts.
#[derive(Default)]
struct Matched {
    entries: Vec<String>,
    divergences: Vec<String>,
}

/// Why the index could not answer, as a JSON-RPC error.
pub(super) fn not_ready(e: super::indexed::NotReady) -> Fault {
    use super::indexed::NotReady;
    match e {
        NotReady::TimedOut => super::methods::timed_out(),
        NotReady::Source(e) => e.into(),
        NotReady::Replay(e) => e.into(),
        NotReady::Refused(m) => Fault::server(m),
    }
}

/// Parses the filter (argument 0) and checks its range against the node's head.
fn checked_range(
    source: &RpcSource,
    params: &Value,
) -> Result<(TraceFilter, u64, u64, u64), Fault> {
    let raw = params
        .get(0)
        .ok_or_else(|| Fault::params("missing value for required argument 0"))?;
    let filter: TraceFilter = serde_json::from_value(raw.clone())
        .map_err(|e| Fault::params(format!("invalid argument 0: {e}")))?;
    // A request for no entry is a mistake (reth and anvil answer `[]`): said before any work.
    if filter.count == Some(0) {
        return Err(Fault::params(
            "invalid parameters: count must be at least 1 (0 asks for no entry)",
        ));
    }
    let (chain_id, head) = source.chain_and_head()?;
    let not_found = |n: u64| Fault::new(-32001, format!("block not found: {n:#x}"));
    let start = filter.from_block.unwrap_or(0);
    if start > head {
        return Err(not_found(start));
    }
    let end = filter.to_block.unwrap_or(head);
    if end > head {
        return Err(not_found(end));
    }
    if start > end {
        return Err(Fault::params(
            "invalid parameters: fromBlock cannot be greater than toBlock",
        ));
    }
    Ok((filter, chain_id, start, end))
}

/// Answers `trace_filter(filter)`.
pub fn trace_filter(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<String, Fault> {
    let (filter, chain_id, start, end) = checked_range(source, params)?;
    let too_many = || {
        Fault::params(format!(
            "Block range too large; currently limited to {} blocks",
            ctx.max_filter_blocks
        ))
    };
    // With the address index and an address to look for: only the blocks that touch one.
    let addresses: Vec<_> = filter
        .from_address
        .iter()
        .chain(&filter.to_address)
        .copied()
        .collect();
    let indexed = ctx.index.filter(|_| !addresses.is_empty());
    let segments = match indexed {
        Some(ix) => {
            ix.ready_for(start, end, ctx.deadline).map_err(not_ready)?;
            let blocks = ix.read(|i| i.blocks_touching(&addresses, start, end));
            if blocks.len() as u64 > ctx.max_filter_blocks.saturating_add(1) {
                return Err(too_many());
            }
            crate::replay::range::segments(blocks.into_iter())
        }
        None if end - start > ctx.max_filter_blocks => return Err(too_many()),
        None => vec![(start, end)],
    };
    if segments.is_empty() {
        return Ok("[]".into());
    }
    let matcher = filter.matcher();
    let blocks: u64 = segments.iter().map(|(a, b)| b - a + 1).sum();
    let jobs = default_jobs()
        .clamp(1, MAX_JOBS)
        .min(usize::try_from(blocks).unwrap_or(usize::MAX));
    let range = Range {
        source,
        chain_id,
        segments: &segments,
        spec: &TracerSpec::Parity,
        hardfork: None,
        jobs,
        max_stretch: None,
        max_fetching: None,
        growth: None,
    };
    let work = |b: RangeBlock<'_>| -> Result<Matched, Fault> {
        let mut m = Matched::default();
        if let Some(ix) = indexed {
            // The block replayed is the one indexed, or the chain moved under the request.
            let number = b.block.info.number;
            let want = ix.read(|i| i.block(number).map(|x| x.hash));
            if want.is_none() || want != b.block.info.hash {
                return Err(Fault::server(format!(
                    "block {number} changed while it was read (a reorg): retry"
                )));
            }
        }
        let Some(r) = b.replay else {
            return Ok(m);
        };
        for (k, t) in r.traces.iter().enumerate() {
            let TraceResult::Parity(p) = &t.result else {
                return Err(Fault::server("the replay gave no Parity trace"));
            };
            for e in p.traces.iter().filter(|e| matcher.matches(&e.trace)) {
                m.entries
                    .push(serde_json::to_string(e).map_err(|e| Fault::server(e.to_string()))?);
            }
            if let Some(receipt) = b.receipts.get(k) {
                m.divergences
                    .extend(divergence(t.hash, &t.outcome, receipt));
            }
        }
        Ok(m)
    };
    let mut skip = filter.after.unwrap_or(0);
    let mut left = filter.count;
    let mut out = String::from("[");
    let mut first = true;
    let mut take = |m: Matched| -> Result<bool, Fault> {
        for d in m.divergences {
            outcome.diverged(d);
        }
        for e in m.entries {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if left == Some(0) {
                break;
            }
            if out.len() + e.len() + 2 > ctx.max_response {
                return Err(too_large());
            }
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&e);
            left = left.map(|n| n - 1);
        }
        Ok(left != Some(0))
    };
    crate::replay::range::run(
        &range,
        &crate::replay::cancel::inherit(jobs),
        &work,
        &mut take,
    )?;
    out.push(']');
    Ok(out)
}
