//! A simulated call on a block's state: geth's `debug_traceCall`, shared by `chaintrace call`
//! and `chaintrace serve`.
//!
//! The state is the block's (after its transactions); the header the call runs in may be
//! overridden, and with it the fork rules, as geth derives them from the overridden number and
//! time. State overrides are applied to every pass's fresh database before the call runs.

use alloy_primitives::{Address, Bytes, U256};
use revm::primitives::hardfork::SpecId;

use super::driver::{Frames, Ran, TraceFn};
use super::env::default_call_gas;
use super::mined::spec_for;
use super::overrides::{BlockOverrides, StateOverride};
use super::remote::replay_with_frames_by;
use super::{EvmEnv, ReplayTx, TracedTx};
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::source::StateSnapshot;
use crate::trace::call::CallTracerConfig;
use crate::trace::TracerSpec;

/// The call: geth's `TransactionArgs` subset chaintrace replays.
#[derive(Debug, Clone, Default)]
pub struct CallRequest {
    pub from: Address,
    pub to: Option<Address>,
    pub data: Bytes,
    pub value: U256,
    /// `None`: the default ([`CallRequest::gas_for`]).
    pub gas: Option<u64>,
    pub gas_price: u128,
    /// geth's RPC gas cap (`serve --rpc-gas-cap`, geth's `--rpc.gascap`): a larger `gas` is
    /// lowered to it, and a call without one gets no more; 0: no cap (the command line's).
    pub gas_cap: u64,
    /// A call without `gas` gets geth's `debug_traceCall` default, the RPC gas cap itself
    /// (`MaxUint64 / 2` without one), whatever the block's limit; else the block's limit.
    pub geth_default: bool,
}

impl CallRequest {
    /// The gas the call runs with on a block of fork `spec` and gas limit `block_gas_limit`
    /// (after any block override), and the gas it asked for when the cap lowered it.
    ///
    /// geth's `TransactionArgs.CallDefaults` with its `globalGasCap`: a `gas` above the cap is
    /// the cap (geth logs "Caller gas above allowance, capping"); a `gas` of 0 is 0, as geth
    /// takes any `gas` given (the call then fails its intrinsic gas); without one, the block's
    /// gas limit (EIP-7825's cap from Osaka on), no more than the cap — a
    /// `blockOverrides.gasLimit` raises the default only up to it. Under
    /// [`CallRequest::geth_default`], geth's own default instead: the cap, or `MaxUint64 / 2`
    /// with none (`CallDefaults` never looks at the block's limit, and a call skips
    /// EIP-7825's check).
    pub fn gas_for(&self, spec: SpecId, block_gas_limit: u64) -> (u64, Option<u64>) {
        let cap = match self.gas_cap {
            0 => u64::MAX,
            c => c,
        };
        match self.gas {
            Some(g) if g > cap => (cap, Some(g)),
            Some(g) => (g, None),
            None if self.geth_default => (cap.min(u64::MAX / 2), None),
            None => (default_call_gas(spec, block_gas_limit).min(cap), None),
        }
    }
}

/// A traced call and what it cost.
pub struct TracedCall<T = TracedTx> {
    pub traced: T,
    pub snapshot: StateSnapshot,
    pub chain_id: u64,
    /// State round trips spent (batches).
    pub passes: usize,
    /// revm's cache after the call (the state it wrote or read).
    pub post: revm::database::Cache,
    /// Where a chain's precompile frames came from, or why they are opaque (for stderr).
    pub splice_note: Option<String>,
}

impl<T> TracedCall<T> {
    /// The same call with its trace made another (a typed call tree made a tracer's result).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> TracedCall<U> {
        TracedCall {
            traced: f(self.traced),
            snapshot: self.snapshot,
            chain_id: self.chain_id,
            passes: self.passes,
            post: self.post,
            splice_note: self.splice_note,
        }
    }
}

/// A call ready to trace: its environment, transaction and the state it runs on.
pub struct PreparedCall {
    pub chain_id: u64,
    pub env: EvmEnv,
    pub tx: ReplayTx,
    /// The block whose resulting state the call runs on (a number tag).
    pub state_at: String,
    /// `[call, block]` of the node's `debug_traceCall` for the same call, asked when the call
    /// reaches a chain's own precompile (`None` with a block override: not asked).
    pub node_request: Option<serde_json::Value>,
    /// The gas the call asked for when the RPC gas cap lowered it ([`CallRequest::gas_for`]).
    pub capped_from: Option<u64>,
}

impl PreparedCall {
    /// geth's warning when the RPC gas cap lowered the call's gas, for the server's log.
    pub fn cap_note(&self) -> Option<String> {
        self.capped_from.map(|asked| {
            format!(
                "caller gas above allowance, capping: requested {asked}, cap {}",
                self.tx.env.gas_limit
            )
        })
    }
}

/// Why a call could not be traced.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The block override does not apply to this block (bad field values).
    #[error("block override: {0}")]
    BlockOverride(String),
    #[error(transparent)]
    Source(#[from] super::Error),
}

impl From<SourceError> for CallError {
    fn from(e: SourceError) -> Self {
        CallError::Source(e.into())
    }
}

/// Traces `call` on the state of block `block_ref` (a number or tag, as the node takes it).
pub fn trace_call(
    source: &RpcSource,
    call: &CallRequest,
    block_ref: &str,
    state_override: Option<&StateOverride>,
    block_override: Option<&BlockOverrides>,
    spec: &TracerSpec,
    hardfork: Option<SpecId>,
) -> Result<TracedCall, CallError> {
    let prepared = prepare_call(source, call, block_ref, block_override, hardfork)?;
    prepared.trace(source, spec, state_override, StateSnapshot::partial())
}

/// The environment and transaction of `call` on block `block_ref`, with the block override
/// applied (one round trip: the chain id and the block's header in one batch).
pub fn prepare_call(
    source: &RpcSource,
    call: &CallRequest,
    block_ref: &str,
    block_override: Option<&BlockOverrides>,
    hardfork: Option<SpecId>,
) -> Result<PreparedCall, CallError> {
    let (chain_id, info) = source.call_block(block_ref)?;
    prepare_on(source, chain_id, info, call, block_override, hardfork)
}

/// [`prepare_call`] for several calls on the same block, its header read once: each as it runs
/// after the ones before it (`chaintrace call --bundle`).
pub fn prepare_calls(
    source: &RpcSource,
    calls: &[CallRequest],
    block_ref: &str,
    block_override: Option<&BlockOverrides>,
    hardfork: Option<SpecId>,
) -> Result<Vec<PreparedCall>, CallError> {
    let (chain_id, info) = source.call_block(block_ref)?;
    calls
        .iter()
        .map(|c| prepare_on(source, chain_id, info.clone(), c, block_override, hardfork))
        .collect()
}

/// `call` on block `info` of chain `chain_id`, the block override applied.
fn prepare_on(
    source: &RpcSource,
    chain_id: u64,
    mut info: super::env::BlockInfo,
    call: &CallRequest,
    block_override: Option<&BlockOverrides>,
    hardfork: Option<SpecId>,
) -> Result<PreparedCall, CallError> {
    // The state is the block's own, whatever number a block override gives the call.
    let state_at = format!("{:#x}", info.number);
    source.prepare_block(chain_id, &mut info, hardfork)?;
    if let Some(b) = block_override {
        b.apply_info(&mut info)
            .map_err(|e| CallError::BlockOverride(e.to_string()))?;
    }
    let spec_id = spec_for(chain_id, &info, hardfork);
    let (gas, capped_from) = call.gas_for(spec_id, info.gas_limit);
    let mut env = EvmEnv::new(spec_id, chain_id, &info).for_call(call.gas_price);
    // geth runs a simulated call with its transaction checks skipped (`ToMessage(…,
    // skipChecks)`): EIP-7825's per-transaction gas cap among them.
    env.cfg.tx_gas_limit_cap = Some(u64::MAX);
    if let Some(b) = block_override {
        b.apply_env(&mut env.block)
            .map_err(|e| CallError::BlockOverride(e.to_string()))?;
    }
    let tx = ReplayTx::simulated(
        call.from,
        call.to,
        call.data.clone(),
        call.value,
        gas,
        call.gas_price,
    );
    // The node's own trace of the same call, for a chain's precompile frames: asked only of a
    // call without overrides (its answer is of the same call on the same state).
    let node_request = block_override
        .is_none()
        .then(|| node_call_request(&tx, &state_at));
    Ok(PreparedCall {
        chain_id,
        env,
        tx,
        state_at,
        node_request,
        capped_from,
    })
}

/// `[call, block]` of `debug_traceCall` for the simulated `tx` on the state after `state_at`:
/// what the node is asked for its own frames of the same call.
pub fn node_call_request(tx: &ReplayTx, state_at: &str) -> serde_json::Value {
    let mut object = serde_json::json!({
        "from": tx.sender,
        "input": tx.env.data,
        "value": tx.env.value,
        "gas": format!("{:#x}", tx.env.gas_limit),
        "gasPrice": format!("{:#x}", tx.env.gas_price),
    });
    if let Some(to) = tx.to() {
        object["to"] = serde_json::json!(to);
    }
    serde_json::json!([object, state_at])
}

impl PreparedCall {
    /// Traces the call under `spec`, starting from `snap` (what is already known of the
    /// state: `StateSnapshot::partial()` for nothing, or an earlier trace's snapshot).
    pub fn trace(
        &self,
        source: &RpcSource,
        spec: &TracerSpec,
        state_override: Option<&StateOverride>,
        snap: StateSnapshot,
    ) -> Result<TracedCall, CallError> {
        self.trace_by(
            source,
            &|db, env, tx, offset, index| super::trace_at(db, env, tx, spec, offset, index),
            state_override,
            snap,
        )
    }

    /// [`trace`](Self::trace) under the callTracer configured by `config`: the call tree, typed.
    pub fn trace_call_tree(
        &self,
        source: &RpcSource,
        config: &CallTracerConfig,
        state_override: Option<&StateOverride>,
        snap: StateSnapshot,
    ) -> Result<TracedCall<super::CallTraced>, CallError> {
        self.trace_by(
            source,
            &|db, env, tx, offset, index| {
                super::trace_call_tree(db, env, tx, config, offset, index)
            },
            state_override,
            snap,
        )
    }

    /// The call's access pattern and the KECCAK256 preimages that name its slots
    /// ([`super::access::trace_access_keyed`]), from `snap` (an earlier trace's state: no
    /// round trip when it holds all the call reads).
    #[allow(clippy::type_complexity)]
    pub fn access(
        &self,
        source: &RpcSource,
        state_override: Option<&StateOverride>,
        snap: StateSnapshot,
        more: super::access::ReadMore<'_>,
    ) -> Result<TracedCall<(super::access::Keyed, super::TxOutcome)>, CallError> {
        self.trace_by(
            source,
            &|db, env, tx, _, _| super::access::trace_access_more(db, env, tx, more),
            state_override,
            snap,
        )
    }

    fn trace_by<T: Ran>(
        &self,
        source: &RpcSource,
        trace: TraceFn<'_, T>,
        state_override: Option<&StateOverride>,
        snap: StateSnapshot,
    ) -> Result<TracedCall<T>, CallError> {
        let prepare = |db: &mut crate::source::ReplayDb<'_>| {
            if let Some(o) = state_override {
                o.apply(db);
            }
        };
        // With a state override the node's trace would be of another state: not asked.
        let request = self
            .node_request
            .as_ref()
            .filter(|_| state_override.is_none());
        let replay = replay_with_frames_by(
            source,
            std::slice::from_ref(&self.tx),
            &self.env,
            0,
            &self.state_at,
            trace,
            &prepare,
            snap,
            Frames::Call(request),
        )?;
        let passes = replay.passes;
        let splice_note = replay.splice_note(&self.env);
        let traced = replay
            .traces
            .into_iter()
            .next()
            .ok_or_else(|| SourceError::BadData {
                what: "call".into(),
                reason: "the replay produced no trace".into(),
            })?;
        Ok(TracedCall {
            traced,
            snapshot: replay.snapshot,
            chain_id: self.chain_id,
            passes,
            post: replay.post,
            splice_note,
        })
    }
}
