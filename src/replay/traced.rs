//! One transaction run under a tracer and finished into the tracer's own result, generic over
//! the tracer: the [`Tracer`] a [`crate::trace::TracerSpec`] builds finishes into a
//! [`TraceResult`]; the callTracer on its own ([`trace_call_tree`]) into its [`CallFrame`], the
//! call tree `--assets` and the report read, typed, with no result kind left to check.

use revm::context::result::{EVMError, ResultAndState};
use revm::context::CfgEnv;
use revm::{DatabaseCommit, InspectEvm, Inspector, MainBuilder};

use super::{
    call_frame, cancel, check_chain_rules, op_precompiles, splice, tx_rules, Ended, EvmCtx, EvmEnv,
    ReplayError, ReplayTx, TraceResult, TracedTx, TxOutcome,
};
use crate::source::ReplayDb;
use crate::trace::call::{CallFrame, CallTracer, CallTracerConfig};
use crate::trace::{Alone, Ctx, Tracer};

/// What revm's run of a transaction gave (`None`: a deposit refused before it ran).
pub(crate) type Run = Option<Result<ResultAndState, EVMError<std::convert::Infallible>>>;

/// Runs `tx` in revm under `tracer` (inside [`Alone`], beside the chain's precompile splicer) on
/// `db`, with the chain's precompiles, and gives the tracer back. Generic over the database's borrow, so that
/// each tracer type's impl names its own (a bound over every borrow would tie it to `'static`).
fn inspect<'x, 'a, I>(
    db: &'x mut ReplayDb<'a>,
    env: &EvmEnv,
    cfg: CfgEnv,
    tx: &ReplayTx,
    tracer: I,
    refused: bool,
) -> (Run, I)
where
    I: Inspector<Ctx<&'x mut ReplayDb<'a>>> + crate::trace::plain::Plain,
{
    let mut evm = EvmCtx::new(db, env.spec)
        .with_block(env.block.clone())
        .with_cfg(cfg)
        .build_mainnet_with_inspector(splice::Beside::new(env, Alone(tracer)));
    op_precompiles::install(&mut evm.precompiles, env);
    let run = (!refused).then(|| evm.inspect_tx(tx.env.clone()));
    (run, evm.into_inspector().finish().0)
}

/// `Finishes::inspect`: [`inspect`] on the tracer, each impl naming its own type (see there).
macro_rules! inspect_itself {
    () => {
        fn inspect(
            self,
            db: &mut ReplayDb<'_>,
            env: &EvmEnv,
            cfg: CfgEnv,
            tx: &ReplayTx,
            refused: bool,
        ) -> (Run, Self) {
            inspect(db, env, cfg, tx, self, refused)
        }
    };
}

/// A tracer [`run`] drives: what it reads before the transaction, where the OP fee vaults are
/// credited for it, its run in revm ([`inspect`]), op-geth's frame of a failed deposit, and its
/// result once the run ended.
pub(crate) trait Finishes: Sized {
    type Out;
    fn inspect(
        self,
        db: &mut ReplayDb<'_>,
        env: &EvmEnv,
        cfg: CfgEnv,
        tx: &ReplayTx,
        refused: bool,
    ) -> (Run, Self);
    fn begin(&mut self, _db: &mut ReplayDb<'_>, _env: &EvmEnv, _tx: &ReplayTx) {}
    fn vaults(&self) -> tx_rules::Vaults;
    fn enter_failed_deposit(&mut self);
    fn finish(self, e: &Ended, db: &mut ReplayDb<'_>) -> Result<Self::Out, ReplayError>;
}

impl Finishes for Tracer {
    type Out = TraceResult;

    fn begin(&mut self, db: &mut ReplayDb<'_>, env: &EvmEnv, tx: &ReplayTx) {
        super::begin(self, db, env, tx)
    }

    fn vaults(&self) -> tx_rules::Vaults {
        tx_rules::Vaults::of(self)
    }

    inspect_itself!();

    fn enter_failed_deposit(&mut self) {
        Tracer::enter_failed_deposit(self)
    }

    fn finish(self, e: &Ended, db: &mut ReplayDb<'_>) -> Result<TraceResult, ReplayError> {
        super::finish(self, e, db)
    }
}

impl Finishes for CallTracer {
    type Out = CallFrame;

    fn vaults(&self) -> tx_rules::Vaults {
        // Its result reads neither the state nor the database.
        tx_rules::Vaults::InCache
    }

    inspect_itself!();

    fn enter_failed_deposit(&mut self) {
        CallTracer::enter_failed_deposit(self)
    }

    fn finish(self, e: &Ended, _db: &mut ReplayDb<'_>) -> Result<CallFrame, ReplayError> {
        call_frame(self, e)
    }
}

/// One `eth_simulateV1` call's run: the logs it kept (transfers among them when asked), the
/// block's next log index, the callTracer's top frame (its error in geth's words) and the gas it
/// used before its refund.
pub(crate) struct SimRun {
    pub logs: Vec<crate::trace::sim_logs::SimLog>,
    pub next: u64,
    pub top: CallFrame,
    /// geth's `MaxUsedGas`: the gas spent before the refund, or EIP-7623's floor when higher.
    pub peak: u64,
}

impl Finishes for crate::trace::sim_logs::SimLogTracer {
    type Out = SimRun;

    fn vaults(&self) -> tx_rules::Vaults {
        tx_rules::Vaults::InCache
    }

    inspect_itself!();

    fn enter_failed_deposit(&mut self) {}

    fn finish(self, e: &Ended, _db: &mut ReplayDb<'_>) -> Result<SimRun, ReplayError> {
        let (logs, next, call) = crate::trace::sim_logs::SimLogTracer::finish(self);
        Ok(SimRun {
            logs,
            next,
            top: call_frame(call, e)?,
            peak: e.spent.max(e.floor),
        })
    }
}

#[cfg(feature = "js")]
impl Finishes for crate::trace::javascript::JsTracer {
    type Out = TraceResult;

    fn begin(&mut self, _db: &mut ReplayDb<'_>, env: &EvmEnv, _tx: &ReplayTx) {
        self.with_precompiles(&op_precompiles::added(env))
    }

    fn vaults(&self) -> tx_rules::Vaults {
        // `db` reads any account after the run.
        tx_rules::Vaults::InState
    }

    inspect_itself!();

    fn enter_failed_deposit(&mut self) {
        // op-geth's failed-deposit frame reaches only the tracers that keep call frames.
    }

    fn finish(self, e: &Ended, db: &mut ReplayDb<'_>) -> Result<TraceResult, ReplayError> {
        super::js_result(self, e, db)
    }
}

/// Runs `tx` under `tracer`, commits its state changes and returns the tracer's result with
/// how the transaction ended (`tx_index`: its position in its block, JavaScript's
/// `ctx.txIndex`).
pub(crate) fn run<T: Finishes>(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    mut tracer: T,
    tx_index: Option<u64>,
) -> Result<(T::Out, TxOutcome), ReplayError> {
    if cancel::passed() {
        return Err(cancel::stopped());
    }
    check_chain_rules(env, tx)?;
    tracer.begin(db, env, tx);
    let vaults = tracer.vaults();
    let rules = tx_rules::TxRules::before(db, env, tx)?;
    let (run, mut tracer) = tracer.inspect(db, env, rules.cfg(), tx, rules.refused);
    if cancel::passed() {
        return Err(cancel::stopped());
    }
    let (state, outcome, refunded, floor, spent) = match rules.after(run, db, tx, vaults)? {
        tx_rules::Settled::FailedDeposit(state, outcome) => {
            tracer.enter_failed_deposit();
            let spent = outcome.gas_used;
            (state, outcome, 0, 0, spent)
        }
        tx_rules::Settled::Ran(out, outcome) => {
            let g = out.result.gas();
            let spent = g.total_gas_spent();
            (out.state, outcome, g.final_refunded(), g.floor_gas(), spent)
        }
    };
    let ended = Ended {
        env,
        tx,
        outcome: &outcome,
        state: &state,
        refunded,
        floor,
        spent,
        tx_index,
    };
    let result = tracer.finish(&ended, db)?;
    db.commit(state);
    Ok((result, outcome))
}

/// A transaction run under the callTracer alone: its call tree, typed.
#[derive(Clone, Debug)]
pub struct CallTraced {
    pub hash: alloy_primitives::B256,
    pub root: CallFrame,
    pub outcome: TxOutcome,
}

impl CallTraced {
    /// The same run as any tracer's ([`TraceResult::Call`]), for what prints traces.
    pub fn into_traced(self) -> TracedTx {
        TracedTx {
            hash: self.hash,
            result: TraceResult::Call(Box::new(self.root)),
            outcome: self.outcome,
        }
    }
}

/// Runs `tx` under the callTracer configured by `config` (`log_index_offset`: the number of
/// logs the block's earlier transactions emitted), commits its state changes and returns its
/// call tree.
pub fn trace_call_tree(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    config: &CallTracerConfig,
    log_index_offset: u64,
    tx_index: Option<u64>,
) -> Result<CallTraced, ReplayError> {
    let tracer = CallTracer::new(config.clone(), log_index_offset);
    let (root, outcome) = run(db, env, tx, tracer, tx_index)?;
    Ok(CallTraced {
        hash: tx.hash,
        root,
        outcome,
    })
}
