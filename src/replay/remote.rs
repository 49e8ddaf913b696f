//! Replaying a mined block's transactions against a node's state with speculative prefetch.
//!
//! Each pass executes the block prefix against the partial snapshot; every account, slot and
//! block hash the pass missed is fetched in one batch, and the pass runs again. A pass that
//! misses nothing is exact, and its traces are the result.

use std::sync::Arc;

use serde_json::Value;

use crate::source::rpc::{obvious_accounts, RpcBlock, RpcSource, SourceError};
use crate::source::StateSnapshot;
use crate::trace::TracerSpec;

use super::splice::{NoFrames, Splice, SpliceLog};
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
    /// On a chain with precompiles of its own, what each transaction did with them (one per
    /// replayed transaction, block order); empty elsewhere.
    pub splices: Vec<Arc<Splice>>,
    /// revm's cache of the final pass: the state after the last transaction, as far as the
    /// replay wrote or read it (asset metadata runs on it).
    pub post: revm::database::Cache,
}

impl BlockReplay {
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

/// Asks the node, in one round trip, for the block's callTracer (with logs) and prestate diff
/// traces, and makes each transaction's [`Splice`] of them. A node that answers it has no such
/// trace leaves every transaction's frames opaque, saying why; a request that failed on the way
/// (a timeout) is an error.
fn node_splices(
    source: &RpcSource,
    env: &EvmEnv,
    txs: &[super::ReplayTx],
    last: &[Arc<Splice>],
) -> Result<Vec<Arc<Splice>>, crate::rpc::RpcError> {
    let (calls, diffs) = match env.block_hash {
        Some(hash) => super::splice::ask_node(&source.client, "debug_traceBlockByHash", hash)?,
        None => (Err(NoFrames::NoBlockHash), None),
    };
    let (calls, why) = match calls {
        Ok(c) => (Some(c), NoFrames::NoEntry),
        Err(why) => (None, why),
    };
    // geth's shape: [{"txHash", "result"}] in block order.
    let find = |list: Option<&Value>, i: usize, tx: &super::ReplayTx| -> Option<Value> {
        let items = list?.as_array()?;
        let by_hash = |v: &&Value| {
            v.get("txHash")
                .and_then(Value::as_str)
                .and_then(|h| h.parse::<alloy_primitives::B256>().ok())
                == Some(tx.hash)
        };
        items
            .get(i)
            .filter(by_hash)
            .or_else(|| items.iter().find(by_hash))?
            .get("result")
            .cloned()
    };
    Ok(txs
        .iter()
        .enumerate()
        .map(|(i, tx)| {
            // Without the block's call traces no transaction gets a diff either.
            let trace = find(calls.as_ref(), i, tx);
            let diff = trace.as_ref().and(find(diffs.as_ref(), i, tx));
            // `why` is NoEntry when the block's traces came back.
            let trace = trace.as_ref().ok_or(&why);
            Arc::new(Splice::from_node(trace, diff.as_ref(), env, &last[i]))
        })
        .collect())
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
    // On a chain with precompiles of its own (splice.rs): after an exact untraced pass that
    // called a stateful one, the node's frames and diffs for the whole block are asked once,
    // then each transaction's state is corrected once.
    let splicing = env
        .rules
        .as_ref()
        .is_some_and(|r| !r.precompiles.is_empty());
    let mut splices: Vec<Arc<Splice>> = if splicing {
        txs.iter().map(|_| Arc::default()).collect()
    } else {
        Vec::new()
    };
    let mut asked = false;
    loop {
        let (result, misses, post) = {
            let mut db = snap.db();
            prepare(&mut db);
            let last = if traced { first } else { txs.len() };
            let result = run_pass(&mut db, env, txs, last, tracer, &splices);
            (result, snap.take_misses(), std::mem::take(&mut db.cache))
        };
        if misses.is_empty() && !traced {
            if splicing {
                if !asked && splices.iter().any(|s| s.wants_frames()) {
                    asked = true;
                    splices = node_splices(source, env, txs, &splices)?;
                    passes += 1;
                    continue;
                }
                let next: Vec<Option<Splice>> = splices.iter().map(|s| s.corrected()).collect();
                if next.iter().any(Option::is_some) {
                    splices = splices
                        .iter()
                        .zip(next)
                        .map(|(old, n)| n.map(Arc::new).unwrap_or_else(|| old.clone()))
                        .collect();
                    continue;
                }
            }
            traced = true;
            continue;
        }
        if misses.is_empty() {
            return Ok(BlockReplay {
                traces: result?,
                snapshot: snap,
                passes,
                splices,
                post,
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
    splices: &[Arc<Splice>],
) -> Result<Vec<TracedTx>, ReplayError> {
    let mut traces = Vec::new();
    let mut log_offset = 0u64;
    let mut own = None;
    for (i, tx) in txs.iter().enumerate() {
        // Each transaction with its own splice (a cheap clone of the environment).
        let env = match splices.get(i) {
            Some(s) => {
                let e = own.get_or_insert_with(|| env.clone());
                e.splice = Some(s.clone());
                &*e
            }
            None => env,
        };
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
