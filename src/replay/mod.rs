//! Replaying transactions: building revm's environment from chain data, running a block's earlier
//! transactions, running the target under one tracer, and checking the result against the
//! receipt the chain recorded.

pub mod access;
pub mod assets;
pub mod call;
pub mod cancel;
pub mod checkpoint;
pub mod driver;
pub mod env;
pub mod mined;
pub mod op_precompiles;
pub mod overrides;
pub mod precompile_moves;
pub mod range;
pub mod remote;
pub mod selfcheck;
pub mod simulate;
pub mod splice;
#[cfg(test)]
mod stream_tests;
pub mod stretch;
mod traced;
pub mod tx_rules;

pub use env::{BlockInfo, EvmEnv, ReplayTx};
pub use traced::{trace_call_tree, CallTraced};

use alloy_primitives::{Bytes, B256};
use revm::context::result::{ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::primitives::Log;
use revm::{DatabaseCommit, ExecuteEvm, InspectEvm, MainBuilder};
use serde::Serialize;

use crate::source::ReplayDb;
use crate::trace::call::CallFrame;
use crate::trace::prestate::PrestateResult;
use crate::trace::{Tracer, TracerSpec};

/// Errors replaying a transaction.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}")]
    BadTransaction(String),
    /// The transaction cannot run on this state (nonce, balance, gas limit, fee…). A simulated
    /// call has no hash (`tx` is zero) and is named as the call.
    #[error("{} is invalid in this state: {msg}", if tx.is_zero() { "the simulated call".to_string() } else { format!("transaction {tx}") })]
    Invalid { tx: B256, msg: String },
    /// A JavaScript tracer failed (exception, timeout); the transaction itself ran normally.
    #[error("{0}")]
    Tracer(String),
    /// The struct log could not be written or finished (its temporary file or its output
    /// failed; written through, the run diverged from the dry one that gave its head).
    #[error(transparent)]
    StructLog(#[from] crate::trace::opcode::StructLogError),
    /// The replay ran past the deadline of the request it serves ([`cancel::within`]) and was
    /// stopped.
    #[error("the replay was stopped at its deadline")]
    Cancelled,
    /// What the replay held — its tracer's record above all — passed the byte budget of the
    /// request it serves ([`cancel::within`]), and it was stopped.
    #[error("the replay was stopped at its byte budget")]
    OverBudget,
    /// Written through, the traced run read state the dry run before it did not: the output is
    /// left unfinished.
    #[error("the traced run of {tx} read state the run that gave its head keys did not; the struct log written to {to} is unfinished and must not be used")]
    StreamMissed { tx: B256, to: String },
}

impl From<crate::source::error::TxError> for ReplayError {
    fn from(e: crate::source::error::TxError) -> Self {
        ReplayError::BadTransaction(e.0)
    }
}

/// What can end a replay of chain data: getting the data (a node, the cache) or running it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Source(#[from] crate::source::error::SourceError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl From<crate::rpc::RpcError> for Error {
    fn from(e: crate::rpc::RpcError) -> Self {
        Error::Source(e.into())
    }
}

/// How a transaction ended.
#[derive(Clone, Debug)]
pub struct TxOutcome {
    pub success: bool,
    /// Gas used as the receipt reports it (after refunds).
    pub gas_used: u64,
    pub logs: Vec<Log>,
    pub output: Bytes,
    /// revm's halt reason for a transaction that failed without REVERT.
    pub halt: Option<String>,
    /// What an OP-stack user transaction paid beyond its gas, and its L1 parameters.
    pub op_fee: Option<tx_rules::OpFee>,
    /// An OP-stack deposit: its `from` and what it carried (mint, source hash), for people.
    pub deposit: Option<(alloy_primitives::Address, crate::source::deposit::Deposit)>,
}

impl TxOutcome {
    fn from_result(r: &ExecutionResult) -> Self {
        let (output, halt) = match r {
            ExecutionResult::Success { output, .. } => (
                match output {
                    Output::Call(b) => b.clone(),
                    Output::Create(b, _) => b.clone(),
                },
                None,
            ),
            ExecutionResult::Revert { output, .. } => (output.clone(), None),
            ExecutionResult::Halt { reason, .. } => (Bytes::new(), Some(format!("{reason:?}"))),
        };
        TxOutcome {
            success: r.is_success(),
            gas_used: r.tx_gas_used(),
            logs: r.logs().to_vec(),
            output,
            halt,
            op_fee: None,
            deposit: None,
        }
    }
}

/// A tracer's result, serialised exactly as geth prints it.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum TraceResult {
    Call(Box<CallFrame>),
    /// geth's flatCallTracer.
    FlatCall(Vec<crate::trace::flat::FlatCallFrame>),
    /// geth's 4byteTracer: `"0x<selector>-<size>"` → count, keys sorted as Go prints a map.
    FourByte(std::collections::BTreeMap<String, u64>),
    /// geth's keccak256PreimageTracer: hash → preimage.
    Keccak256Preimage(std::collections::BTreeMap<B256, Bytes>),
    /// geth's noopTracer: `{}`.
    Noop(NoopResult),
    /// geth's muxTracer: each child's result by its name, in sorted order.
    Mux(MuxResult),
    /// Parity's `trace` entries, as reth's `trace_transaction` serves them (and the
    /// transaction's `stateDiff`, which does not print).
    Parity(Box<crate::trace::parity::ParityResult>),
    Prestate(PrestateResult),
    StructLog(crate::trace::opcode::StructLogResult),
    /// `chaintrace gas` tables (not a geth shape).
    Gas(Box<crate::trace::gas::GasReport>),
    /// A step debugger's log or view (`chaintrace debug`; never printed as a trace).
    #[serde(skip_serializing)]
    Steps(Box<crate::trace::steps::Stepped>),
    Erc7562(Box<crate::trace::erc7562::Erc7562Frame>),
    /// Whatever a JavaScript tracer's `result` returned, as the JSON text it stringified to.
    Js(Box<serde_json::value::RawValue>),
}

/// The noopTracer's result: an empty object.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopResult;

impl Serialize for NoopResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

/// The muxTracer's result: its children's results by name, sorted (geth marshals a Go map).
#[derive(Clone, Debug, Default)]
pub struct MuxResult(pub Vec<(String, TraceResult)>);

impl Serialize for MuxResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A traced transaction.
#[derive(Clone, Debug)]
pub struct TracedTx {
    pub hash: B256,
    pub result: TraceResult,
    pub outcome: TxOutcome,
}

type EvmCtx<'d, 'a> =
    Context<BlockEnv, TxEnv, CfgEnv, &'d mut ReplayDb<'a>, Journal<&'d mut ReplayDb<'a>>, ()>;

fn invalid(tx: &ReplayTx, e: impl std::fmt::Display) -> ReplayError {
    ReplayError::Invalid {
        tx: tx.hash,
        msg: e.to_string(),
    }
}

/// Runs a transaction without tracing and commits its state changes (a block's earlier txs).
pub fn apply(db: &mut ReplayDb<'_>, env: &EvmEnv, tx: &ReplayTx) -> Result<TxOutcome, ReplayError> {
    if cancel::passed() {
        return Err(cancel::stopped());
    }
    check_chain_rules(env, tx)?;
    let rules = tx_rules::TxRules::before(db, env, tx)?;
    let splicer = splice::Splicer::new(env);
    let run = if rules.refused {
        None
    } else if splicer.active() || cancel::bounded() {
        // The chain's precompiles spliced, or a server request's deadline ticked: an untraced
        // pass stops at it as a traced one does.
        let mut evm = EvmCtx::new(&mut *db, env.spec)
            .with_block(env.block.clone())
            .with_cfg(rules.cfg())
            .build_mainnet_with_inspector(splice::Beside::untraced(splicer, cancel::Untraced));
        op_precompiles::install(&mut evm.precompiles, env);
        let out = evm.inspect_tx(tx.env.clone());
        evm.into_inspector().finish();
        if cancel::passed() {
            return Err(cancel::stopped());
        }
        Some(out)
    } else {
        let mut evm = EvmCtx::new(&mut *db, env.spec)
            .with_block(env.block.clone())
            .with_cfg(rules.cfg())
            .build_mainnet();
        op_precompiles::install(&mut evm.precompiles, env);
        Some(evm.transact(tx.env.clone()))
    };
    let (state, outcome) = rules
        .after(run, db, tx, tx_rules::Vaults::InCache)?
        .into_state();
    db.commit(state);
    Ok(outcome)
}

/// A transaction the chain's rules refuse before execution.
pub(crate) fn check_chain_rules(env: &EvmEnv, tx: &ReplayTx) -> Result<(), ReplayError> {
    match &env.rules {
        Some(r) if !r.blob_txs && tx.env.tx_type == 3 => Err(ReplayError::BadTransaction(format!(
            "transaction {}: chain {} does not accept blob (type-3) transactions",
            tx.hash, env.cfg.chain_id
        ))),
        _ => Ok(()),
    }
}

/// The chain's own rules applied to a transaction's final state, before it is read or
/// committed: the fees ([`settle_fees`]), then the comparison with the node's post-state when
/// chain precompiles were spliced (`splice.rs`).
pub(crate) fn settle(
    state: &mut revm::state::EvmState,
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    gas_used: u64,
) {
    settle_fees(state, db, env, tx, gas_used);
    if let Some(s) = &env.splice {
        s.record_post(state);
    }
}

/// A chain that does not burn the base fee (1329/1328) credits it to the coinbase together with
/// the tip revm already paid: `gasUsed × baseFee` more.
fn settle_fees(
    state: &mut revm::state::EvmState,
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    gas_used: u64,
) {
    if env.rules.as_ref().is_none_or(|r| r.burn_base_fee) {
        return;
    }
    let burned =
        alloy_primitives::U256::from(gas_used) * alloy_primitives::U256::from(env.block.basefee);
    if burned.is_zero() || tx.env.gas_price == 0 {
        return;
    }
    let coinbase = env.block.beneficiary;
    let account = state.entry(coinbase).or_insert_with(|| {
        let info = revm::Database::basic(db, coinbase)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut a = revm::state::Account::from(info);
        a.mark_touch();
        a
    });
    account.info.balance = account.info.balance.saturating_add(burned);
}

/// Runs a transaction under the tracer `spec` describes, commits its state changes and returns
/// the trace. `log_index_offset` is the number of logs earlier transactions of the block emitted.
pub fn trace(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    spec: &TracerSpec,
    log_index_offset: u64,
) -> Result<TracedTx, ReplayError> {
    trace_at(db, env, tx, spec, log_index_offset, None)
}

/// [`trace`] for a transaction at position `tx_index` of its block (JS tracers' `ctx.txIndex`).
pub fn trace_at(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    spec: &TracerSpec,
    log_index_offset: u64,
    tx_index: Option<u64>,
) -> Result<TracedTx, ReplayError> {
    trace_with(
        db,
        env,
        tx,
        spec.build(env.spec, log_index_offset),
        tx_index,
    )
}

/// Runs a transaction under geth's struct logger writing its result to `out` as it runs (`to`
/// names `out` in errors), `head` first: geth's head keys as a run of the same transaction on
/// the same state ended ([`trace_struct_logs_dry`]). The document is closed only when this run
/// ends the same way, having read nothing that run did not; otherwise `out` holds an
/// unfinished document and the error says so.
#[allow(clippy::too_many_arguments)]
pub fn trace_struct_logs_to(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    cfg: &crate::trace::opcode::StructLoggerConfig,
    head: crate::trace::opcode::StructLogHead,
    out: Box<dyn std::io::Write + Send>,
    to: &str,
    tx_index: Option<u64>,
) -> Result<TracedTx, ReplayError> {
    let logger = crate::trace::opcode::StructLogger::streaming(cfg.clone(), head, out, to);
    trace_with(db, env, tx, Tracer::StructLog(Box::new(logger)), tx_index)
}

/// Runs a transaction under geth's struct logger writing nothing
/// ([`StructLogger::dry`](crate::trace::opcode::StructLogger::dry)): the result has the head
/// keys and no entries, and the pass read all the state a written one reads.
pub fn trace_struct_logs_dry(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    cfg: &crate::trace::opcode::StructLoggerConfig,
    tx_index: Option<u64>,
) -> Result<TracedTx, ReplayError> {
    let logger = crate::trace::opcode::StructLogger::dry(cfg.clone());
    trace_with(db, env, tx, Tracer::StructLog(Box::new(logger)), tx_index)
}

/// Runs a transaction under a step recorder (`chaintrace debug`): every step's pc and frame, or
/// the machine at one step; the result is [`TraceResult::Steps`].
pub fn trace_steps(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    recorder: crate::trace::steps::StepRecorder,
    tx_index: Option<u64>,
) -> Result<TracedTx, ReplayError> {
    trace_with(db, env, tx, Tracer::Steps(Box::new(recorder)), tx_index)
}

fn trace_with(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    tracer: Tracer,
    tx_index: Option<u64>,
) -> Result<TracedTx, ReplayError> {
    let (result, outcome) = match tracer {
        // Run as itself, not through the enum: its per-opcode hooks inline into revm's loop.
        #[cfg(feature = "js")]
        Tracer::Js(js) => traced::run(db, env, tx, *js, tx_index)?,
        tracer => traced::run(db, env, tx, tracer, tx_index)?,
    };
    Ok(TracedTx {
        hash: tx.hash,
        result,
        outcome,
    })
}

/// What a tracer reads before the transaction runs: the prestate tracer its first accounts,
/// the 4byte tracer the chain's own precompiles; a mux's children each theirs.
fn begin(tracer: &mut Tracer, db: &mut ReplayDb<'_>, env: &EvmEnv, tx: &ReplayTx) {
    match tracer {
        Tracer::Prestate(p) => p.begin(
            &mut *db,
            tx.sender,
            tx.to(),
            env.block.beneficiary,
            &tx.authorities,
        ),
        Tracer::FourByte(t) => {
            if let Some(r) = &env.rules {
                t.with_chain_precompiles(r.precompiles.iter().map(|p| p.address));
            }
            t.with_chain_precompiles(op_precompiles::added(env));
        }
        #[cfg(feature = "js")]
        Tracer::Js(t) => t.with_precompiles(&op_precompiles::added(env)),
        Tracer::Mux(m) => {
            for (_, child) in &mut m.children {
                begin(child, db, env, tx);
            }
        }
        _ => {}
    }
}

/// A JavaScript tracer's result (`result(ctx, db)`) once its transaction ended.
#[cfg(feature = "js")]
fn js_result(
    t: crate::trace::javascript::JsTracer,
    e: &Ended,
    db: &mut ReplayDb<'_>,
) -> Result<TraceResult, ReplayError> {
    let result = t
        .into_result(
            &e.tx.env,
            &e.env.block,
            e.outcome.gas_used,
            (e.tx.hash, e.env.block_hash, e.tx_index),
            e.state,
            &mut *db,
        )
        .map_err(|err| ReplayError::Tracer(err.to_string()))?;
    Ok(TraceResult::Js(result))
}

/// How a traced transaction ended, for turning its tracer into a result.
struct Ended<'e> {
    env: &'e EvmEnv,
    tx: &'e ReplayTx,
    outcome: &'e TxOutcome,
    /// The transaction's state changes, not yet committed.
    state: &'e revm::state::EvmState,
    refunded: u64,
    floor: u64,
    /// The gas the run spent before its refund (revm's `total_gas_spent`).
    spent: u64,
    tx_index: Option<u64>,
}

/// The callTracer's finished top frame, with the chain's own precompile frames grafted from
/// the node where they were spliced.
fn call_frame(t: crate::trace::call::CallTracer, e: &Ended) -> Result<CallFrame, ReplayError> {
    let with_log = t.config().with_log;
    let top = t
        .into_result(e.tx.env.gas_limit, e.outcome.gas_used)
        .ok_or_else(|| invalid(e.tx, "the call tracer saw no top-level frame"))?;
    Ok(graft_node_frames(top, e, with_log))
}

/// `top` with the chain's own precompile frames grafted from the node, where they were spliced.
fn graft_node_frames(mut top: CallFrame, e: &Ended, with_log: bool) -> CallFrame {
    if let (Some(s), Some(rules)) = (&e.env.splice, &e.env.rules) {
        let log = s.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        splice::graft(
            &mut top,
            rules,
            &log,
            s.frames.as_deref().unwrap_or_default(),
            with_log,
        );
    }
    top
}

/// The precompiles of `env`: the fork's, and the chain's own where its rules have them.
pub(crate) fn precompile_test(env: &EvmEnv) -> impl Fn(alloy_primitives::Address) -> bool + '_ {
    let precompiles = revm::precompile::Precompiles::new(
        revm::precompile::PrecompileSpecId::from_spec_id(env.spec),
    );
    let op = op_precompiles::added(env);
    move |a| {
        precompiles.contains(&a)
            || op.contains(&a)
            || env
                .rules
                .as_ref()
                .is_some_and(|r| r.precompile(a).is_some())
    }
}

/// Where a traced transaction sits, for the flat and Parity shapes: a simulated call (no hash)
/// has no block and no transaction, as geth's debug_traceCall gives it (eth/tracers/api.go
/// `TraceCall`: `new(Context)`).
fn flat_context(e: &Ended) -> crate::trace::flat::FlatContext {
    if e.tx.hash.is_zero() {
        return crate::trace::flat::FlatContext::default();
    }
    crate::trace::flat::FlatContext {
        block_hash: e.env.block_hash.filter(|h| !h.is_zero()),
        block_number: e.env.block.number.saturating_to(),
        tx_hash: Some(e.tx.hash),
        tx_index: e.tx_index.unwrap_or(0),
    }
}

/// Turns a finished tracer into its result (a mux's children each in turn).
fn finish(tracer: Tracer, e: &Ended, db: &mut ReplayDb<'_>) -> Result<TraceResult, ReplayError> {
    Ok(match tracer {
        Tracer::Call(t) => TraceResult::Call(Box::new(call_frame(t, e)?)),
        Tracer::FlatCall(t) => {
            let crate::trace::flat::FlatCallTracer { config, inner } = *t;
            let mut top = call_frame(inner, e)?;
            crate::trace::flat::prepare(
                &mut top,
                config.include_precompiles,
                &precompile_test(e.env),
            );
            TraceResult::FlatCall(crate::trace::flat::flatten(&top, &config, &flat_context(e)))
        }
        Tracer::Parity(t) => {
            let crate::trace::parity::ParityTracer {
                call,
                state_diff,
                vm,
            } = *t;
            let top = graft_node_frames(
                call.into_frames()
                    .ok_or_else(|| invalid(e.tx, "the call tracer saw no top-level frame"))?,
                e,
                false,
            );
            let traces = crate::trace::parity::transaction_traces(&top, &precompile_test(e.env));
            TraceResult::Parity(Box::new(crate::trace::parity::ParityResult {
                traces: crate::trace::parity::localized(traces, &flat_context(e)),
                state_diff: state_diff.then(|| crate::trace::parity::state_diff(&mut *db, e.state)),
                vm_trace: vm.map(|v| v.into_result()),
            }))
        }
        Tracer::FourByte(t) => TraceResult::FourByte(t.into_result()),
        Tracer::Keccak256Preimage(t) => TraceResult::Keccak256Preimage(t.into_result()),
        Tracer::Noop => TraceResult::Noop(NoopResult),
        Tracer::Mux(m) => {
            let mut results = Vec::with_capacity(m.children.len());
            for (name, child) in m.children {
                results.push((name, finish(child, e, db)?));
            }
            TraceResult::Mux(MuxResult(results))
        }
        Tracer::Prestate(t) => TraceResult::Prestate(t.into_result(&mut *db, e.state)),
        Tracer::Erc7562(t) => TraceResult::Erc7562(Box::new(
            t.into_result(e.tx.env.gas_limit, e.outcome.gas_used)
                .ok_or_else(|| invalid(e.tx, "the erc7562 tracer saw no top-level frame"))?,
        )),
        Tracer::StructLog(t) => {
            if let Some(to) = t.streaming_to() {
                if db.db.has_misses() {
                    return Err(ReplayError::StreamMissed {
                        tx: e.tx.hash,
                        to: to.to_string(),
                    });
                }
            }
            TraceResult::StructLog(t.into_result(e.outcome.gas_used)?)
        }
        Tracer::Steps(t) => TraceResult::Steps(Box::new(t.finish())),
        Tracer::Gas(t) => TraceResult::Gas(Box::new(t.into_report(
            e.tx.env.gas_limit,
            e.outcome.gas_used,
            e.refunded,
            e.floor,
        ))),
        #[cfg(feature = "js")]
        Tracer::Js(t) => js_result(*t, e, db)?,
    })
}

/// Builds the complete pre-state snapshot of a fixture or bundle.
pub fn fixture_snapshot(fx: &crate::source::fixture::Fixture) -> crate::source::StateSnapshot {
    let mut snap = crate::source::StateSnapshot::complete();
    for (addr, acc) in &fx.alloc {
        snap.insert_account(
            *addr,
            crate::source::AccountData {
                balance: acc.balance,
                nonce: acc.nonce,
                code: acc.code.clone(),
            },
        );
        for (k, v) in &acc.storage {
            snap.insert_slot(*addr, *k, *v);
        }
    }
    snap.block_hashes
        .extend(fx.block_hashes.iter().map(|(k, v)| (*k, *v)));
    snap
}

/// The block environment of a fixture, with the fork from its chain config (or `hardfork`).
pub fn fixture_env(
    fx: &crate::source::fixture::Fixture,
    hardfork: Option<revm::primitives::hardfork::SpecId>,
) -> EvmEnv {
    let c = &fx.context;
    let spec = hardfork.unwrap_or_else(|| fx.schedule.spec_at(c.number, c.timestamp));
    let info = BlockInfo {
        number: c.number,
        timestamp: c.timestamp,
        coinbase: c.coinbase,
        gas_limit: c.gas_limit,
        base_fee: c.base_fee,
        difficulty: c.difficulty,
        mix_hash: c.mix_hash,
        excess_blob_gas: c.excess_blob_gas,
        hash: None,
        parent_hash: None,
        consensus: None,
        ruleset: fx.ruleset,
        header_fork: None,
        op_evidence: None,
        op_dev_fork: fx.op_dev_fork,
        op_schedule: fx.op_schedule.clone(),
    };
    EvmEnv::new(spec, fx.schedule.chain_id, &info)
}

/// Replays a fixture's transaction offline under `tracer`.
pub fn trace_fixture(
    fx: &crate::source::fixture::Fixture,
    tracer: &TracerSpec,
    hardfork: Option<revm::primitives::hardfork::SpecId>,
) -> Result<TracedTx, ReplayError> {
    let snap = fixture_snapshot(fx);
    trace_fixture_on(fx, tracer, hardfork, &snap).map(|(t, _)| t)
}

/// [`trace_fixture`] on the fixture's snapshot `snap` ([`fixture_snapshot`]), also returning
/// revm's cache after the transaction (the state it wrote or read).
pub fn trace_fixture_on(
    fx: &crate::source::fixture::Fixture,
    tracer: &TracerSpec,
    hardfork: Option<revm::primitives::hardfork::SpecId>,
    snap: &crate::source::StateSnapshot,
) -> Result<(TracedTx, revm::database::Cache), ReplayError> {
    let env = fixture_env(fx, hardfork);
    let tx = fixture_tx(fx)?;
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx, tracer, fx.log_index_offset)?;
    Ok((t, db.cache))
}

/// [`trace_fixture_on`] under the callTracer configured by `config`: the call tree, typed.
pub fn trace_fixture_call_tree(
    fx: &crate::source::fixture::Fixture,
    config: &crate::trace::call::CallTracerConfig,
    hardfork: Option<revm::primitives::hardfork::SpecId>,
    snap: &crate::source::StateSnapshot,
) -> Result<(CallTraced, revm::database::Cache), ReplayError> {
    let env = fixture_env(fx, hardfork);
    let tx = fixture_tx(fx)?;
    let mut db = snap.db();
    let t = trace_call_tree(&mut db, &env, &tx, config, fx.log_index_offset, None)?;
    Ok((t, db.cache))
}

/// A fixture's transaction, refused when it is signed for another chain.
pub fn fixture_tx(fx: &crate::source::fixture::Fixture) -> Result<ReplayTx, ReplayError> {
    let tx = ReplayTx::decode(&fx.input)?;
    // geth recovers the sender with the chain's signer: a transaction signed for another chain
    // is invalid there (pre-EIP-155 legacy transactions carry no chain id).
    if let Some(id) = tx.env.chain_id.filter(|id| *id != fx.schedule.chain_id) {
        return Err(ReplayError::BadTransaction(format!(
            "the transaction is signed for chain {id}, the fixture's chain is {}",
            fx.schedule.chain_id
        )));
    }
    Ok(tx)
}
