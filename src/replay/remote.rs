//! Replaying a mined block's transactions (or a simulated call) against a node's state, in
//! the replay driver ([`super::driver`]) under one tracer.

use std::sync::Arc;

use crate::source::rpc::{RpcBlock, RpcSource};
use crate::source::StateSnapshot;
use crate::trace::TracerSpec;

use super::driver::{Driver, Frames, Plan, Ran, TraceFn};
use super::splice::{Splice, SpliceLog};
use super::{trace_at, EvmEnv, TracedTx};

pub use super::driver::MAX_PASSES;

/// The outcome of replaying part of a block: each traced transaction's `T` (a tracer's result,
/// or a typed call tree: [`super::CallTraced`]).
pub struct BlockReplay<T = TracedTx> {
    pub traces: Vec<T>,
    /// The block's pre-state as fetched (everything the replay touched).
    pub snapshot: StateSnapshot,
    /// State round trips spent (batches).
    pub passes: usize,
    /// On a chain with precompiles of its own, what each transaction did with them (one per
    /// replayed transaction, block order); empty elsewhere.
    pub splices: Vec<Arc<Splice>>,
    /// revm's cache of the final pass: the state after the last transaction, as far as the
    /// replay wrote or read it (asset metadata runs on it).
    pub post: revm::database::Cache,
}

impl<T> BlockReplay<T> {
    /// The note on stderr for what the block's transactions did with the chain's precompiles.
    pub fn splice_note(&self, env: &EvmEnv) -> Option<String> {
        let rules = env.rules.as_ref()?;
        let mut all = SpliceLog::default();
        for s in &self.splices {
            all.merge(&s.log.lock().unwrap_or_else(|e| e.into_inner()));
        }
        super::splice::note(&all, rules)
    }

    /// The post-state comparison of traced transaction `k` (`traces[k]`), when one was made.
    pub fn state_check(&self, k: usize) -> Option<(usize, Vec<String>)> {
        let first = self.splices.len().checked_sub(self.traces.len())?;
        self.splices.get(first + k)?.state_check()
    }
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
    let parent = source.parent_at(&block.info);
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
    snap: StateSnapshot,
) -> Result<BlockReplay, super::Error> {
    let frames = Frames::Block(env.block_hash);
    replay_with_frames(
        source, txs, env, first, state_at, tracer, prepare, snap, frames,
    )
}

/// [`replay_txs_from`] with the node's frames for chain precompiles taken from `frames` (a
/// simulated call's own `debug_traceCall`, not its block's traces).
#[allow(clippy::too_many_arguments)]
pub fn replay_with_frames(
    source: &RpcSource,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    state_at: &str,
    tracer: &TracerSpec,
    prepare: &dyn Fn(&mut crate::source::ReplayDb<'_>),
    snap: StateSnapshot,
    frames: Frames<'_>,
) -> Result<BlockReplay, super::Error> {
    replay_with_frames_by(
        source,
        txs,
        env,
        first,
        state_at,
        &|db, env, tx, offset, index| trace_at(db, env, tx, tracer, offset, index),
        prepare,
        snap,
        frames,
    )
}

/// [`replay_with_frames`] with each traced transaction run by `trace` (a typed call tree:
/// [`super::trace_call_tree`]).
#[allow(clippy::too_many_arguments)]
pub fn replay_with_frames_by<T: Ran>(
    source: &RpcSource,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    state_at: &str,
    trace: TraceFn<'_, T>,
    prepare: &dyn Fn(&mut crate::source::ReplayDb<'_>),
    mut snap: StateSnapshot,
    frames: Frames<'_>,
) -> Result<BlockReplay<T>, super::Error> {
    let mut driver = Driver::new(source, state_at);
    driver.prefetch(&mut snap, txs, env)?;
    drive_planned(
        &mut driver,
        snap,
        txs,
        env,
        first,
        trace,
        Some(prepare),
        frames,
    )
}

/// Runs `txs` (from `first` traced under `tracer`, `prepare` just before it) in `driver` on
/// `snap`, the node's block traces asked for their chain precompile frames.
pub fn drive_txs(
    driver: &mut Driver<'_>,
    snap: StateSnapshot,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    tracer: &TracerSpec,
    prepare: Option<&dyn Fn(&mut crate::source::ReplayDb<'_>)>,
) -> Result<BlockReplay, super::Error> {
    let frames = Frames::Block(env.block_hash);
    let trace: TraceFn<'_, TracedTx> =
        &|db, env, tx, offset, index| trace_at(db, env, tx, tracer, offset, index);
    drive_planned(driver, snap, txs, env, first, trace, prepare, frames)
}

#[allow(clippy::too_many_arguments)]
fn drive_planned<T: Ran>(
    driver: &mut Driver<'_>,
    mut snap: StateSnapshot,
    txs: &[super::ReplayTx],
    env: &EvmEnv,
    first: usize,
    trace: TraceFn<'_, T>,
    prepare: Option<&dyn Fn(&mut crate::source::ReplayDb<'_>)>,
    frames: Frames<'_>,
) -> Result<BlockReplay<T>, super::Error> {
    let plan = Plan {
        env,
        txs,
        first,
        log_offset: 0,
        index: Some(0),
        prepare,
        frames,
    };
    let driven = driver.run(&mut snap, &plan, trace)?;
    Ok(BlockReplay {
        traces: driven.traced,
        snapshot: snap,
        passes: driver.passes,
        splices: driven.splices.into_iter().flatten().collect(),
        post: driven.post,
    })
}
