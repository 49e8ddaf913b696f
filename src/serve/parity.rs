//! The Parity `trace_*` methods as reth serves them, answered from the same local replay as
//! the debug methods: the callTracer's frames turned into Parity's flat list by
//! [`crate::trace::parity`]. Params and "not found" follow reth's `TraceApi`
//! (`crates/rpc/rpc/src/trace.rs`): an unknown transaction or block is `null`, not an error.

use alloy_primitives::B256;
use alloy_rpc_types_trace::parity::LocalizedTransactionTrace;
use serde_json::Value;

use super::methods::{
    block_number_param, hash_param, replay_block, self_check, too_large, Ctx, Fault, Outcome,
};
use crate::replay::mined::Mined;
use crate::replay::{TraceResult, TracedTx};
use crate::source::rpc::{RpcSource, SourceError};
use crate::trace::parity::{localized, trace_results, TxPosition};
use crate::trace::{TracerKind, TracerSpec};

/// Runs one `trace_*` method.
pub(super) fn dispatch(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    method: &str,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<String, Fault> {
    let answer = match method {
        "trace_transaction" => {
            let hash = hash_param(params, 0)?;
            transaction(ctx, source, hash, outcome).map(|t| to_value(&t))
        }
        "trace_get" => get(ctx, source, params, outcome),
        "trace_block" => block(ctx, source, params, outcome),
        "trace_replayTransaction" => replay_transaction(ctx, source, params, outcome),
        "trace_replayBlockTransactions" => replay_block_transactions(ctx, source, params, outcome),
        other => {
            return Err(Fault::new(
                -32601,
                format!("the method {other} does not exist/is not available"),
            ))
        }
    };
    let value = match answer {
        Ok(v) => v,
        // reth answers `null` for what the chain does not have.
        Err(Failure::Missing) => Value::Null,
        Err(Failure::Fault(f)) => return Err(f),
    };
    let text = serde_json::to_string(&value).map_err(|e| Fault::server(e.to_string()))?;
    if text.len() > ctx.max_response {
        return Err(too_large());
    }
    Ok(text)
}

/// A failure of a `trace_*` call: what the chain lacks (answered `null`) or a fault.
enum Failure {
    Missing,
    Fault(Fault),
}

impl From<Fault> for Failure {
    fn from(f: Fault) -> Self {
        Failure::Fault(f)
    }
}

impl From<crate::replay::Error> for Failure {
    fn from(e: crate::replay::Error) -> Self {
        match e {
            crate::replay::Error::Source(SourceError::NotFound { .. }) => Failure::Missing,
            other => Failure::Fault(other.into()),
        }
    }
}

impl From<SourceError> for Failure {
    fn from(e: SourceError) -> Self {
        crate::replay::Error::Source(e).into()
    }
}

/// reth's `BlockId`: a number, a tag or a block hash.
fn block_param(params: &Value) -> Result<String, Fault> {
    match params.get(0) {
        Some(Value::String(s)) if s.len() == 66 => Ok(format!("{:?}", hash_param(params, 0)?)),
        other => block_number_param(other),
    }
}

/// A block the node does not have is `null`, as reth answers it.
fn missing_block(f: Fault) -> Failure {
    if f.message.ends_with("not found") {
        Failure::Missing
    } else {
        Failure::Fault(f)
    }
}

fn to_value(traces: &[LocalizedTransactionTrace]) -> Value {
    serde_json::to_value(traces).unwrap_or(Value::Null)
}

/// The callTracer with its defaults: the frames every Parity shape is built from.
fn frames_spec() -> TracerSpec {
    TracerSpec::new(TracerKind::Call, None).expect("the callTracer's defaults are valid")
}

fn frames_of(t: &TracedTx, at: TxPosition) -> Vec<LocalizedTransactionTrace> {
    match &t.result {
        TraceResult::Call(root) => localized(root, at),
        _ => Vec::new(),
    }
}

fn transaction(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    hash: B256,
    outcome: &mut Outcome,
) -> Result<Vec<LocalizedTransactionTrace>, Failure> {
    let _guard = ctx.memo.lock_key(&format!("tx:{hash:?}"));
    let mut mined = Mined::load(source, ctx.cache, hash, ctx.mode, None)?;
    let traced = mined.trace(source, ctx.cache, &frames_spec())?;
    self_check(&traced, &mined.receipt, outcome);
    let at = TxPosition {
        hash: Some(hash),
        index: Some(mined.index as u64),
        block_hash: mined.info.hash,
        block_number: Some(mined.info.number),
    };
    Ok(frames_of(&traced, at))
}

/// `trace_get(hash, [index])`: reth answers only a single index (`null` for any other list).
fn get(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Value, Failure> {
    let hash = hash_param(params, 0)?;
    let indices = params
        .get(1)
        .and_then(Value::as_array)
        .ok_or_else(|| Fault::params("invalid argument 1: indices must be an array"))?;
    let index = indices
        .iter()
        .map(index_param)
        .collect::<Result<Vec<usize>, Fault>>()?;
    let [index] = index[..] else {
        return Ok(Value::Null);
    };
    let traces = transaction(ctx, source, hash, outcome)?;
    Ok(traces
        .get(index)
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .unwrap_or(Value::Null))
}

/// An index as reth's `Index` reads it: a hex quantity string or a JSON number.
fn index_param(v: &Value) -> Result<usize, Fault> {
    let bad = || Fault::params("invalid argument 1: an index must be a hex quantity");
    match v {
        Value::Number(n) => n.as_u64().map(|n| n as usize).ok_or_else(bad),
        Value::String(s) => {
            let hex = s.strip_prefix("0x").ok_or_else(bad)?;
            usize::from_str_radix(hex, 16).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// `trace_block(blockId)`: every transaction's traces in order. Block rewards (reth adds them
/// before the merge) are not listed.
fn block(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Value, Failure> {
    let block_ref = match params.get(0) {
        Some(Value::String(s)) if s.len() == 66 => format!("{:?}", hash_param(params, 0)?),
        other => block_number_param(other)?,
    };
    let (info, traces) =
        replay_block(ctx, source, &block_ref, &frames_spec(), outcome).map_err(|f| {
            match f.message.ends_with("not found") {
                true => Failure::Missing,
                false => Failure::Fault(f),
            }
        })?;
    let mut all = Vec::new();
    for (i, t) in traces.iter().enumerate() {
        let at = TxPosition {
            hash: Some(t.hash),
            index: Some(i as u64),
            block_hash: info.hash,
            block_number: Some(info.number),
        };
        all.extend(frames_of(t, at));
    }
    Ok(to_value(&all))
}

/// reth's `HashSet<TraceType>`: `"trace"`, `"vmTrace"`, `"stateDiff"`. Only `trace` is built
/// so far; asking for the others is refused rather than answered with them left out.
fn trace_types(v: Option<&Value>) -> Result<bool, Fault> {
    let list = v
        .and_then(Value::as_array)
        .ok_or_else(|| Fault::params("invalid argument 1: trace types must be an array"))?;
    let mut with_trace = false;
    for t in list {
        match t.as_str() {
            Some("trace") => with_trace = true,
            Some(kind @ ("stateDiff" | "vmTrace")) => {
                return Err(Fault::server(format!(
                    "trace type {kind} is not supported by this server yet; ask for [\"trace\"]"
                )))
            }
            _ => {
                return Err(Fault::params(format!(
                    "invalid argument 1: unknown variant {t}, expected one of `vmTrace`, `trace`, `stateDiff`"
                )))
            }
        }
    }
    Ok(with_trace)
}

fn results_of(t: &TracedTx, with_trace: bool) -> Value {
    match &t.result {
        TraceResult::Call(root) => {
            serde_json::to_value(trace_results(root, t.outcome.output.clone(), with_trace))
                .unwrap_or(Value::Null)
        }
        _ => Value::Null,
    }
}

/// `trace_replayTransaction(hash, types)`.
fn replay_transaction(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Value, Failure> {
    let hash = hash_param(params, 0)?;
    let with_trace = trace_types(params.get(1))?;
    let _guard = ctx.memo.lock_key(&format!("tx:{hash:?}"));
    let mut mined = Mined::load(source, ctx.cache, hash, ctx.mode, None)?;
    let traced = mined.trace(source, ctx.cache, &frames_spec())?;
    self_check(&traced, &mined.receipt, outcome);
    Ok(results_of(&traced, with_trace))
}

/// `trace_replayBlockTransactions(blockId, types)`: each transaction's results with its hash.
fn replay_block_transactions(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Value, Failure> {
    let block_ref = block_param(params)?;
    let with_trace = trace_types(params.get(1))?;
    let (_, traces) =
        replay_block(ctx, source, &block_ref, &frames_spec(), outcome).map_err(missing_block)?;
    let list = traces
        .iter()
        .map(|t| {
            let mut v = results_of(t, with_trace);
            v["transactionHash"] = serde_json::json!(t.hash);
            v
        })
        .collect();
    Ok(Value::Array(list))
}
