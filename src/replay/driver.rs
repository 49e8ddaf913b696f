//! The one replay driver: the pass loop every replay of chain data runs in (a mined
//! transaction, a block or a block's part, a simulated call), whatever it traces with.
//!
//! ```text
//!   ┌──► pass: txs[..first] untraced, prepare, txs[first..] untraced (traced once exact)
//!   │      │
//!   │      ├─ missed accounts / slots / block hashes ──► fetch them (one batch) ──┐
//!   │      ├─ exact, a chain precompile called ──► the node's frames (once) ───────┤
//!   │      ├─ exact, the node's diff disagrees ──► correct the state (once) ───────┤
//!   │      ├─ exact, untraced ──► run the traced pass ─────────────────────────────┤
//!   │      └─ exact, traced ──► done: the caller's traces, the final state        │
//!   └──────────────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! Speculative passes run untraced: a struct log of a discarded pass is wasted work. A tracer
//! may read state execution did not (the prestate tracer's delegation targets), so the traced
//! pass may still miss and loop again. Each caller supplies only what it traces with (a
//! closure over its inspector, run for each of `txs[first..]`) and what it does with the
//! traces; the driver owns the loop, the fetching and the chain's splicing.

use std::sync::Arc;

use alloy_primitives::B256;
use serde_json::Value;

use super::splice::{self, NoFrames, Splice};
use super::{apply, EvmEnv, ReplayError, ReplayTx};
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::source::{Misses, ReplayDb, StateSnapshot};

/// The most passes that fetch before giving up; each costs one round trip.
pub const MAX_PASSES: usize = 64;

/// Where the node's own frames come from when a transaction called a chain precompile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frames<'p> {
    /// `debug_traceTransaction` of this transaction: only `txs[first]` is spliced (the plan's
    /// earlier transactions run without the node's frames).
    Transaction(B256),
    /// `debug_traceBlockByHash` of this block (unknown: frames left opaque, saying why): every
    /// transaction of the plan is spliced.
    Block(Option<B256>),
    /// `debug_traceCall` of a simulated call: its `[call, block]` params, or `None` when the
    /// call has state or block overrides (not asked of the node, said as the reason): every
    /// call of the plan is spliced.
    Call(Option<&'p Value>),
    /// Several simulated calls on one state (`trace_callMany`): no node trace is of them all,
    /// so none is asked (said as the reason).
    Calls,
}

/// What one replay runs.
pub struct Plan<'p> {
    pub env: &'p EvmEnv,
    pub txs: &'p [ReplayTx],
    /// `txs[..first]` run untraced (a block's earlier transactions); `txs[first..]` traced.
    pub first: usize,
    /// The block-wide index of `txs[0]`'s first log.
    pub log_offset: u64,
    /// The position of `txs[0]` in its block (JavaScript tracers' `ctx.txIndex`); `None` for a
    /// simulated call.
    pub index: Option<u64>,
    /// Run on every pass's fresh database just before `txs[first]` (state overrides).
    pub prepare: Option<&'p dyn Fn(&mut ReplayDb<'_>)>,
    pub frames: Frames<'p>,
}

/// What a traced transaction tells the pass: how many logs it emitted (where the next
/// transaction's log indexes start).
pub trait Ran {
    fn log_count(&self) -> usize;
}

impl Ran for super::TracedTx {
    fn log_count(&self) -> usize {
        self.outcome.logs.len()
    }
}

impl Ran for super::CallTraced {
    fn log_count(&self) -> usize {
        self.outcome.logs.len()
    }
}

/// What an inspector of its own found, with how the transaction ended (the access pattern).
impl<A> Ran for (A, super::TxOutcome) {
    fn log_count(&self) -> usize {
        self.1.logs.len()
    }
}

/// The closure a caller traces each of `txs[first..]` with on the traced pass: its database,
/// the transaction's environment (with its splice), the transaction, the block-wide index of
/// its first log and its position in the block.
pub type TraceFn<'f, T> =
    &'f dyn Fn(&mut ReplayDb<'_>, &EvmEnv, &ReplayTx, u64, Option<u64>) -> Result<T, ReplayError>;

/// What the traced pass left.
pub struct Driven<T> {
    /// What the caller's closure returned for each of `txs[first..]`.
    pub traced: Vec<T>,
    /// Each transaction's splice of the node's frames (`None`: not spliced), plan order.
    pub splices: Vec<Option<Arc<Splice>>>,
    /// revm's cache of the final pass: the state after the last transaction, as far as the
    /// replay wrote or read it.
    pub post: revm::database::Cache,
}

/// Why a drive stopped short.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Failed(#[from] super::Error),
    /// The state cannot supply what a pass missed where it was asked for (the node's prestate
    /// of a later transaction of its block): the caller changes the plan.
    #[error("the state lacks {items} item(s) the replay reads")]
    Inexact { items: usize },
}

impl From<SourceError> for DriveError {
    fn from(e: SourceError) -> Self {
        DriveError::Failed(e.into())
    }
}

impl From<ReplayError> for DriveError {
    fn from(e: ReplayError) -> Self {
        DriveError::Failed(e.into())
    }
}

impl From<crate::rpc::RpcError> for DriveError {
    fn from(e: crate::rpc::RpcError) -> Self {
        DriveError::Failed(e.into())
    }
}

/// The state a replay runs on, and where what it misses is read.
pub struct Driver<'a> {
    pub source: &'a RpcSource,
    /// The block whose state the snapshot holds (a number tag): misses are read there.
    pub state_at: &'a str,
    /// Whether accounts and slots may be read at `state_at` (false: the snapshot is a later
    /// transaction's pre-state, which that block's state is not).
    pub state_reads: bool,
    /// Round trips spent so far (state batches and the node's frames).
    pub passes: usize,
    /// The plan ran to its end on this snapshot before, missing nothing (the same transactions
    /// in the same environment), or the snapshot is likely complete for it (a stretch's block
    /// on the state carried from the block before): [`run`](Self::run)'s first pass is the
    /// traced one, without a speculative pass to find what is missing first. A traced pass
    /// that misses something is run again, as always.
    pub settled: bool,
}

impl<'a> Driver<'a> {
    pub fn new(source: &'a RpcSource, state_at: &'a str) -> Self {
        Driver {
            source,
            state_at,
            state_reads: true,
            passes: 0,
            settled: false,
        }
    }

    /// Fetches what every transaction of `txs` obviously touches (senders, recipients, the
    /// coinbase, access lists; on OP blocks what the fees read) that `snap` lacks, in one batch.
    pub fn prefetch(
        &mut self,
        snap: &mut StateSnapshot,
        txs: &[ReplayTx],
        env: &EvmEnv,
    ) -> Result<(), DriveError> {
        let mut obvious = crate::source::rpc::obvious_accounts(txs, env.block.beneficiary, env.op);
        obvious.accounts.retain(|a| !snap.accounts.contains_key(a));
        obvious.slots.retain(|k| !snap.storage.contains_key(k));
        if !obvious.is_empty() {
            self.fill(snap, &obvious)?;
        }
        Ok(())
    }

    fn fill(&mut self, snap: &mut StateSnapshot, misses: &Misses) -> Result<(), DriveError> {
        let state = misses.accounts.len() + misses.slots.len();
        if !self.state_reads && state > 0 {
            return Err(DriveError::Inexact { items: state });
        }
        if self.passes >= MAX_PASSES {
            return Err(SourceError::BadData {
                what: "state".into(),
                reason: format!(
                    "prefetch did not converge after {} round trips",
                    self.passes
                ),
            }
            .into());
        }
        self.source.fill(snap, misses, self.state_at)?;
        self.passes += 1;
        Ok(())
    }

    /// Runs `plan` on `snap` until a traced pass misses nothing; `trace` runs each of
    /// `txs[first..]` on the traced pass (its database, the transaction's environment — with
    /// its splice —, the transaction, the block-wide index of its first log, its position).
    pub fn run<T: Ran>(
        &mut self,
        snap: &mut StateSnapshot,
        plan: &Plan<'_>,
        trace: TraceFn<'_, T>,
    ) -> Result<Driven<T>, DriveError> {
        let splicing = plan
            .env
            .rules
            .as_ref()
            .is_some_and(|r| !r.precompiles.is_empty());
        let mut splices: Vec<Option<Arc<Splice>>> = (0..plan.txs.len())
            .map(|i| {
                let spliced = match plan.frames {
                    Frames::Transaction(_) => i == plan.first,
                    Frames::Block(_) | Frames::Call(_) | Frames::Calls => true,
                };
                (splicing && spliced).then(Arc::default)
            })
            .collect();
        let mut asked = false;
        // Splices are asked for and corrected by the untraced passes.
        let mut traced = self.settled && !splicing;
        loop {
            let (result, misses, post) = {
                let mut db = snap.db();
                let result = run_pass(&mut db, plan, &splices, traced, trace);
                (result, snap.take_misses(), std::mem::take(&mut db.cache))
            };
            if !misses.is_empty() {
                self.fill(snap, &misses)?;
                continue;
            }
            if traced {
                return Ok(Driven {
                    traced: result?,
                    splices,
                    post,
                });
            }
            // An untraced pass that failed with complete state fails the same way traced.
            result?;
            if splicing {
                let wants = splices.iter().flatten().any(|s| s.wants_frames());
                if !asked && wants {
                    asked = true;
                    splices = self.node_splices(plan, &splices)?;
                    self.passes += 1;
                    continue;
                }
                let mut corrected = false;
                for s in splices.iter_mut().flatten() {
                    if let Some(next) = s.corrected() {
                        *s = Arc::new(next);
                        corrected = true;
                    }
                }
                if corrected {
                    continue;
                }
            }
            traced = true;
        }
    }

    /// Runs `pass` on a fresh database over `snap` until a pass misses nothing, fetching what
    /// each missed in one batch: a replay whose plan is not a list of transactions in one
    /// environment (`eth_simulateV1`'s chained blocks, each with its own header and state
    /// overrides). A pass that failed having missed something is run again once its state is
    /// fetched; one that failed on complete state fails. No chain precompile is spliced.
    pub fn converge<T>(
        &mut self,
        snap: &mut StateSnapshot,
        mut pass: impl FnMut(&mut ReplayDb<'_>) -> Result<T, ReplayError>,
    ) -> Result<(T, revm::database::Cache), DriveError> {
        loop {
            let (result, misses, post) = {
                let mut db = snap.db();
                let result = pass(&mut db);
                (result, snap.take_misses(), std::mem::take(&mut db.cache))
            };
            if misses.is_empty() {
                return Ok((result?, post));
            }
            // A stopped pass (deadline, byte budget) is not run again.
            if let Err(e @ (ReplayError::Cancelled | ReplayError::OverBudget)) = result {
                return Err(e.into());
            }
            self.fill(snap, &misses)?;
        }
    }

    /// Asks the node for its frames (one round trip) and makes each spliced transaction's
    /// [`Splice`] of them. A node that answers it has no such trace leaves the frames opaque,
    /// saying why; a request that failed on the way (a timeout) is an error.
    fn node_splices(
        &self,
        plan: &Plan<'_>,
        last: &[Option<Arc<Splice>>],
    ) -> Result<Vec<Option<Arc<Splice>>>, DriveError> {
        let client = &self.source.client;
        let (calls, diffs) = match plan.frames {
            Frames::Transaction(hash) => {
                let (trace, diff) = splice::ask_node(client, "debug_traceTransaction", hash)?;
                return Ok(last
                    .iter()
                    .map(|s| {
                        s.as_ref().map(|s| {
                            let t = trace.as_ref();
                            Arc::new(Splice::from_node(t, diff.as_ref(), plan.env, s))
                        })
                    })
                    .collect());
            }
            Frames::Block(Some(hash)) => splice::ask_node(client, "debug_traceBlockByHash", hash)?,
            Frames::Block(None) => (Err(NoFrames::NoBlockHash), None),
            Frames::Calls => (Err(NoFrames::CallMany), None),
            Frames::Call(params) => {
                // The node's own trace of the same call: its frames are the call's, one answer
                // for one call.
                let (trace, diff) = match params {
                    Some(p) => splice::ask_node_call(client, p)?,
                    None => (Err(NoFrames::Overridden), None),
                };
                return Ok(last
                    .iter()
                    .map(|s| {
                        s.as_ref().map(|s| {
                            Arc::new(Splice::from_node(
                                trace.as_ref(),
                                diff.as_ref(),
                                plan.env,
                                s,
                            ))
                        })
                    })
                    .collect());
            }
        };
        let (calls, why) = match calls {
            Ok(c) => (Some(c), NoFrames::NoEntry),
            Err(why) => (None, why),
        };
        // geth's shape: [{"txHash", "result"}] in block order.
        let find = |list: Option<&Value>, i: usize, tx: &ReplayTx| -> Option<Value> {
            let items = list?.as_array()?;
            let by_hash = |v: &&Value| {
                v.get("txHash")
                    .and_then(Value::as_str)
                    .and_then(|h| h.parse::<B256>().ok())
                    == Some(tx.hash)
            };
            items
                .get(i)
                .filter(by_hash)
                .or_else(|| items.iter().find(by_hash))?
                .get("result")
                .cloned()
        };
        Ok(plan
            .txs
            .iter()
            .zip(last)
            .enumerate()
            .map(|(i, (tx, s))| {
                let s = s.as_ref()?;
                // Without the block's call traces no transaction gets a diff either.
                let trace = find(calls.as_ref(), i, tx);
                let diff = trace.as_ref().and(find(diffs.as_ref(), i, tx));
                // `why` is NoEntry when the block's traces came back.
                let trace = trace.as_ref().ok_or(&why);
                Some(Arc::new(Splice::from_node(
                    trace,
                    diff.as_ref(),
                    plan.env,
                    s,
                )))
            })
            .collect())
    }
}

/// One traced pass of `plan` on `snap` with the splices a finished drive made, nothing fetched
/// and no pass repeated: for a trace that can run only once (written through to an output as
/// it runs). What the pass misses is dropped; the caller's trace tells whether it read anything
/// the drive did not (the struct logger closes its document only if not).
pub fn traced_once<T: Ran>(
    snap: &mut StateSnapshot,
    plan: &Plan<'_>,
    splices: &[Option<Arc<Splice>>],
    trace: TraceFn<'_, T>,
) -> Result<Vec<T>, ReplayError> {
    let result = {
        let mut db = snap.db();
        run_pass(&mut db, plan, splices, true, trace)
    };
    snap.take_misses();
    result
}

/// One pass over the plan on `db`: each transaction with its own splice (a cheap clone of the
/// environment), `prepare` just before `txs[first]`, the rest traced when `traced`.
fn run_pass<T: Ran>(
    db: &mut ReplayDb<'_>,
    plan: &Plan<'_>,
    splices: &[Option<Arc<Splice>>],
    traced: bool,
    trace: TraceFn<'_, T>,
) -> Result<Vec<T>, ReplayError> {
    let mut out = Vec::new();
    let mut log_offset = plan.log_offset;
    let mut own: Option<EvmEnv> = None;
    let base = plan.env;
    for (i, tx) in plan.txs.iter().enumerate() {
        if i == plan.first {
            if let Some(prepare) = plan.prepare {
                prepare(db);
            }
        }
        let env = match splices.get(i).and_then(Option::as_ref) {
            Some(s) => {
                let e = own.get_or_insert_with(|| base.clone());
                e.splice = Some(s.clone());
                &*e
            }
            None => {
                if base.splice.is_some() {
                    let e = own.get_or_insert_with(|| base.clone());
                    e.splice = None;
                    &*e
                } else {
                    base
                }
            }
        };
        if i >= plan.first && traced {
            let index = plan.index.map(|n| n + i as u64);
            let t = trace(db, env, tx, log_offset, index)?;
            log_offset += t.log_count() as u64;
            out.push(t);
        } else {
            log_offset += apply(db, env, tx)?.logs.len() as u64;
        }
    }
    Ok(out)
}

impl From<DriveError> for super::Error {
    fn from(e: DriveError) -> Self {
        match e {
            DriveError::Failed(e) => e,
            DriveError::Inexact { items } => SourceError::BadData {
                what: "state".into(),
                reason: format!("the state lacks {items} item(s) the replay reads"),
            }
            .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::op::{OpFork, OpRules, L1_BLOCK};
    use crate::replay::{apply, TxOutcome};
    use crate::source::chain_data::BlockInfo;
    use crate::source::{AccountData, StateSnapshot};
    use alloy_primitives::{address, Address, Bytes, U256};

    const SENDER: Address = address!("00000000000000000000000000000000000000f0");

    /// An OP block's state (Ecotone's L1Block slots: base fee, scalars, blob base fee), its
    /// environment, and two user transactions from one sender.
    fn op_block() -> (StateSnapshot, EvmEnv, Vec<ReplayTx>) {
        let mut snap = StateSnapshot::complete();
        let rich = AccountData {
            balance: U256::from(10u64).pow(U256::from(18)),
            ..AccountData::default()
        };
        snap.insert_account(SENDER, rich);
        snap.insert_account(L1_BLOCK, AccountData::default());
        snap.insert_slot(L1_BLOCK, U256::from(1), U256::from(1_000_000_000u64));
        let mut scalars = [0u8; 32];
        scalars[16..20].copy_from_slice(&1368u32.to_be_bytes());
        scalars[20..24].copy_from_slice(&810_949u32.to_be_bytes());
        snap.insert_slot(L1_BLOCK, U256::from(3), U256::from_be_bytes(scalars));
        snap.insert_slot(L1_BLOCK, U256::from(7), U256::from(3));
        let info = BlockInfo {
            number: 1,
            timestamp: 1,
            gas_limit: 30_000_000,
            base_fee: Some(7),
            ..BlockInfo::default()
        };
        let mut env = EvmEnv::new(revm::primitives::hardfork::SpecId::CANCUN, 10, &info);
        env.op = Some(OpRules::up_to(OpFork::Ecotone));
        let txs = (0..2u64)
            .map(|nonce| {
                let to = Some(address!("00000000000000000000000000000000000000aa"));
                let mut tx = ReplayTx::simulated(SENDER, to, Bytes::new(), U256::ZERO, 50_000, 10);
                tx.env.nonce = nonce;
                tx.raw = Bytes::from(vec![nonce as u8 + 1; 120]);
                tx
            })
            .collect();
        (snap, env, txs)
    }

    fn l1_fees(snap: &StateSnapshot, plan: &Plan<'_>) -> Vec<U256> {
        let mut db = snap.db();
        let trace: TraceFn<'_, ((), TxOutcome)> =
            &|db, env, tx, _, _| Ok(((), apply(db, env, tx)?));
        let ran = run_pass(&mut db, plan, &[], true, trace).unwrap();
        ran.iter()
            .map(|(_, o)| o.op_fee.as_ref().unwrap().l1.unwrap().fee)
            .collect()
    }

    /// Every user transaction is priced from the L1Block values the replay's state holds
    /// before it: after the block's deposits they are op-geth's once-per-block values (only the
    /// L1 attributes deposit writes them), and after a `prepare` hook (state overrides), the
    /// overridden ones.
    #[test]
    fn user_transactions_are_priced_from_the_l1_block_the_state_holds() {
        let (snap, env, txs) = op_block();
        let plan = |prepare| Plan {
            env: &env,
            txs: &txs,
            first: 0,
            log_offset: 0,
            index: Some(0),
            prepare,
            frames: Frames::Block(None),
        };
        let plain = l1_fees(&snap, &plan(None));
        assert!(plain.iter().all(|f| !f.is_zero()));
        // The L1 base fee doubled just before the second transaction: read again there.
        let double = |db: &mut ReplayDb<'_>| {
            db.insert_account_storage(L1_BLOCK, U256::from(1), U256::from(2_000_000_000u64))
                .unwrap();
        };
        let mut later = plan(Some(&double));
        later.first = 1;
        let overridden = l1_fees(&snap, &later);
        assert_eq!(overridden.len(), 1);
        assert!(overridden[0] > plain[1], "{overridden:?} {plain:?}");
        // The second transaction alone on the overridden state: the same.
        let fresh = env.clone();
        let mut db = snap.db();
        double(&mut db);
        let raw_priced = crate::chain::op::l1_cost(
            &crate::chain::op::L1BlockInfo::from_storage(fresh.op.unwrap(), |s| {
                revm::DatabaseRef::storage_ref(&db, L1_BLOCK, s).unwrap()
            }),
            fresh.op.unwrap(),
            &crate::chain::op::RollupCostData::of_tx(&txs[1].raw),
        )
        .unwrap()
        .fee;
        assert_eq!(overridden[0], raw_priced);
    }
}
