//! Replaying a mined block's transactions against a node's state with speculative prefetch.
//!
//! Each pass executes the block prefix against the partial snapshot; every account, slot and
//! block hash the pass missed is fetched in one batch, and the pass runs again. A pass that
//! misses nothing is exact, and its traces are the result.

use crate::source::rpc::{obvious_accounts, RpcBlock, RpcSource, SourceError};
use crate::source::StateSnapshot;
use crate::trace::TracerSpec;

use super::{apply, trace_at, EvmEnv, ReplayError, TracedTx};

/// The most speculative passes before giving up; each pass costs one round trip.
pub const MAX_PASSES: usize = 64;

/// The outcome of replaying part of a block.
pub struct BlockReplay {
    pub traces: Vec<TracedTx>,
    /// The block's pre-state as fetched (everything the replay touched).
    pub snapshot: StateSnapshot,
    /// State round trips spent (batches).
    pub passes: usize,
}

/// Replays `block.txs[..=last]`: the ones before `first` untraced, `first..=last` under `tracer`,
/// on the state of the block's parent.
pub fn replay_block(
    source: &RpcSource,
    block: &RpcBlock,
    env: &EvmEnv,
    first: usize,
    last: usize,
    tracer: &TracerSpec,
) -> Result<BlockReplay, super::Error> {
    let parent = format!("{:#x}", block.info.number.saturating_sub(1));
    replay_txs(source, &block.txs[..=last], env, first, &parent, tracer)
}

/// Replays `txs` on the node's state at block `state_at` (a number tag): the ones before `first`
/// untraced, the rest under `tracer`.
pub fn replay_txs(
    source: &RpcSource,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    state_at: &str,
    tracer: &TracerSpec,
) -> Result<BlockReplay, super::Error> {
    replay_txs_from(
        source,
        txs,
        env,
        first,
        state_at,
        tracer,
        &|_| {},
        StateSnapshot::partial(),
    )
}

/// [`replay_txs`], with `prepare` run on each pass's fresh database before the transactions
/// (geth's state overrides of `debug_traceCall`), starting from `snap`: what is already known
/// of block `state_at`'s state (`StateSnapshot::partial()` for nothing; a server's memory cache
/// of an earlier replay on the same state), filled further as needed.
#[allow(clippy::too_many_arguments)]
pub fn replay_txs_from(
    source: &RpcSource,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    state_at: &str,
    tracer: &TracerSpec,
    prepare: &dyn Fn(&mut crate::source::ReplayDb<'_>),
    mut snap: StateSnapshot,
) -> Result<BlockReplay, super::Error> {
    let parent = state_at.to_string();
    let mut obvious = obvious_accounts(txs, env.block.beneficiary);
    obvious.accounts.retain(|a| !snap.accounts.contains_key(a));
    source.fill(&mut snap, &obvious, &parent)?;
    let mut passes = 1;
    // Speculative passes run untraced (a struct log of a discarded pass is wasted work); once
    // execution misses nothing, one traced pass runs. A tracer may read state execution did not
    // (the prestate tracer's delegation targets), so that pass may still miss and loop again.
    let mut traced = false;
    loop {
        let (result, misses) = {
            let mut db = snap.db();
            prepare(&mut db);
            let result = if traced {
                run_pass(&mut db, env, txs, first, tracer)
            } else {
                run_pass(&mut db, env, txs, txs.len(), tracer)
            };
            (result, snap.take_misses())
        };
        if misses.is_empty() && !traced {
            traced = true;
            continue;
        }
        if misses.is_empty() {
            return Ok(BlockReplay {
                traces: result?,
                snapshot: snap,
                passes,
            });
        }
        if passes >= MAX_PASSES {
            return Err(SourceError::BadData {
                what: "state".into(),
                reason: format!("prefetch did not converge after {passes} round trips"),
            }
            .into());
        }
        source.fill(&mut snap, &misses, &parent)?;
        passes += 1;
    }
}

fn run_pass(
    db: &mut crate::source::ReplayDb<'_>,
    env: &EvmEnv,
    txs: &[super::ReplayTx],
    first: usize,
    tracer: &TracerSpec,
) -> Result<Vec<TracedTx>, ReplayError> {
    let mut traces = Vec::new();
    let mut log_offset = 0u64;
    for (i, tx) in txs.iter().enumerate() {
        if i < first {
            log_offset += apply(db, env, tx)?.logs.len() as u64;
        } else {
            let t = trace_at(db, env, tx, tracer, log_offset, Some(i as u64))?;
            log_offset += t.outcome.logs.len() as u64;
            traces.push(t);
        }
    }
    Ok(traces)
}
