//! Local simulation of a request's transaction on the node's latest state.
//!
//! The transaction runs in the embedded EVM on state fetched from the node (the same replay
//! path as `chaintrace call`), with `eth_call` semantics: the sender's nonce is not checked and
//! no fee is charged, so the verdict is about what the transaction *does*, not about the wallet's
//! gas budget. The value is still transferred, so a wallet that cannot pay it fails here as it
//! would on chain.

use alloy_primitives::{Address, Bytes, U256};
use serde_json::{Map, Value};

use crate::geth::hex::parse_hex;
use crate::render::decoder::Decoder;
use crate::replay::env::default_call_gas;
use crate::replay::{EvmEnv, ReplayError, ReplayTx};
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::trace::{TracerKind, TracerSpec};

use super::request::{address, quantity};

/// What the transaction would do at `latest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simulation {
    /// The block whose resulting state the transaction ran on.
    pub block: u64,
    pub would_revert: bool,
    /// The decoded revert reason, the halt reason, or why the transaction is invalid.
    pub revert_reason: Option<String>,
    pub gas_used: u64,
}

/// Why a request's transaction was not simulated (the verdict's `simulationError`).
#[derive(Debug, thiserror::Error)]
pub enum NotSimulated {
    /// A message request: it is signed, never executed.
    #[error("a message: there is no transaction to simulate")]
    Message,
    #[error("the body has no params.transaction")]
    NoTransaction,
    #[error("no node or no sender to simulate with")]
    NoNodeOrSender,
    /// The request's transaction cannot be run as written (its body has errors too).
    #[error(transparent)]
    Unusable(SourceError),
}

/// Runs `tx` (the request's `params.transaction`) from `from` on the node's latest state.
pub fn simulate(
    source: &RpcSource,
    chain_id: u64,
    from: Address,
    tx: &Map<String, Value>,
    decoder: &Decoder,
) -> Result<Simulation, crate::replay::Error> {
    let field = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| tx.get(*n))
            .filter(|v| !v.is_null())
    };
    let bad = |what: &str, v: &Value| SourceError::BadData {
        what: "request transaction".into(),
        reason: format!("`{what}` {v} cannot be used"),
    };
    let to = field(&["to"])
        .map(|v| address(v).ok_or_else(|| bad("to", v)))
        .transpose()?;
    let value = field(&["value"])
        .map(|v| quantity(v).ok_or_else(|| bad("value", v)))
        .transpose()?
        .unwrap_or(U256::ZERO);
    let data: Bytes = match field(&["data", "input"]) {
        Some(v) => v
            .as_str()
            .and_then(|s| parse_hex(s).ok())
            .ok_or_else(|| bad("data", v))?,
        None => Bytes::new(),
    };
    // The block resolved once, header only (a simulated call needs no transactions).
    let (_, mut info) = source.call_block("latest")?;
    let spec = source.prepare_block(chain_id, &mut info, None)?;
    let gas = match field(&["gas_limit", "gasLimit", "gas"]) {
        Some(v) => quantity(v)
            .and_then(|g| u64::try_from(g).ok())
            .ok_or_else(|| bad("gas_limit", v))?,
        // No limit given: the provider estimates one, which can never exceed the block's gas
        // limit nor, from Osaka on, the per-transaction cap of EIP-7825.
        None => default_call_gas(spec, info.gas_limit),
    };
    let env = EvmEnv::new(spec, chain_id, &info).for_call(0);
    let replay_tx = ReplayTx::simulated(from, to, data, value, gas, 0);
    let tracer = TracerSpec::new(TracerKind::Call, None).expect("callTracer takes no config");
    let state_at = format!("{:#x}", info.number);
    // A chain's precompile frames come from the node's trace of the same call.
    let request = crate::replay::call::node_call_request(&replay_tx, &state_at);
    let replay = match crate::replay::remote::replay_with_frames(
        source,
        std::slice::from_ref(&replay_tx),
        &env,
        0,
        &state_at,
        &tracer,
        &|_| {},
        crate::source::StateSnapshot::partial(),
        crate::replay::driver::Frames::Call(Some(&request)),
    ) {
        Ok(r) => r,
        Err(crate::replay::Error::Replay(ReplayError::Invalid { msg, .. })) => {
            return Ok(Simulation {
                block: info.number,
                would_revert: true,
                revert_reason: Some(format!("invalid transaction: {msg}")),
                gas_used: 0,
            })
        }
        Err(e) => return Err(e),
    };
    let traced = replay
        .traces
        .into_iter()
        .next()
        .ok_or(SourceError::BadData {
            what: "simulation".into(),
            reason: "the replay produced no trace".into(),
        })?;
    let o = &traced.outcome;
    let revert_reason = if o.success {
        None
    } else {
        decoder
            .describe_revert(&o.output)
            .or_else(|| o.halt.clone())
            .or_else(|| Some("execution reverted without data".into()))
    };
    Ok(Simulation {
        block: info.number,
        would_revert: !o.success,
        revert_reason,
        gas_used: o.gas_used,
    })
}
