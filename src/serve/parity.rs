//! The Parity/OpenEthereum `trace_*` methods, as reth serves them, over any plain node: the same
//! replays as the debug methods under the `parity` tracer (`trace::parity`), shaped into reth's
//! answers with alloy's `parity` types.
//!
//! - `trace_transaction(hash)`, `trace_block(block)`, `trace_get(hash, [index…])`;
//! - `trace_replayTransaction(hash, types)`, `trace_replayBlockTransactions(block, types)`,
//!   `trace_call(call, types, block?)`, `trace_callMany([[call, types]…], block?)`, where
//!   `types` is a list of `trace`, `stateDiff`, `vmTrace` (the replay records the vmTrace only
//!   when it is asked for);
//! - `trace_filter(filter)`, on the ranges engine ([`super::filter`]).

use alloy_primitives::B256;
use alloy_rpc_types_trace::parity::{
    LocalizedTransactionTrace, TraceResults, TraceResultsWithTransactionHash, TransactionTrace,
};
use serde_json::{json, Value};

use super::methods::{
    block_number_param, call_param, hash_param, replay_block, self_check, timed_out, Ctx, Fault,
    Outcome,
};
use crate::replay::call::{prepare_call, CallError};
use crate::replay::driver::Frames;
use crate::replay::mined::Mined;
use crate::replay::remote::replay_with_frames;
use crate::replay::{ReplayTx, TraceResult, TracedTx};
use crate::source::rpc::RpcSource;
use crate::source::StateSnapshot;
use crate::trace::parity::ParityResult;
use crate::trace::TracerSpec;

/// The Parity methods `serve` answers.
pub const METHODS: &[&str] = &[
    "trace_transaction",
    "trace_block",
    "trace_get",
    "trace_replayTransaction",
    "trace_replayBlockTransactions",
    "trace_call",
    "trace_callMany",
    "trace_filter",
];

fn to_text(v: &impl serde::Serialize) -> Result<String, Fault> {
    serde_json::to_string(v).map_err(|e| Fault::server(e.to_string()))
}

fn parity(t: &TracedTx) -> Result<&ParityResult, Fault> {
    match &t.result {
        TraceResult::Parity(p) => Ok(p),
        _ => Err(Fault::server("the replay gave no Parity trace")),
    }
}

fn entries(t: &TracedTx) -> Result<&[LocalizedTransactionTrace], Fault> {
    Ok(&parity(t)?.traces)
}

/// Which of `trace`, `stateDiff`, `vmTrace` are asked for (argument `i`).
#[derive(Clone, Copy, Default)]
struct Types {
    trace: bool,
    state_diff: bool,
    vm_trace: bool,
}

impl Types {
    /// The tracer these types need.
    fn spec(self) -> TracerSpec {
        match self.state_diff || self.vm_trace {
            true => TracerSpec::ParityReplay {
                vm_trace: self.vm_trace,
            },
            false => TracerSpec::Parity,
        }
    }

    /// What either asks for (calls traced together in one replay).
    fn or(self, other: Types) -> Types {
        Types {
            trace: self.trace || other.trace,
            state_diff: self.state_diff || other.state_diff,
            vm_trace: self.vm_trace || other.vm_trace,
        }
    }
}

/// The trace types of argument `i`.
fn trace_types(params: &Value, i: usize) -> Result<Types, Fault> {
    let list = params.get(i).and_then(Value::as_array).ok_or_else(|| {
        Fault::params(format!(
            "invalid argument {i}: expected a list of trace types"
        ))
    })?;
    let mut types = Types::default();
    for t in list {
        match t.as_str() {
            Some("trace") => types.trace = true,
            Some("stateDiff") => types.state_diff = true,
            Some("vmTrace") => types.vm_trace = true,
            _ => {
                return Err(Fault::params(format!(
                    "invalid argument {i}: unknown trace type {t}"
                )))
            }
        }
    }
    Ok(types)
}

/// reth's `TraceResults` of one replay: its output and, when asked, its `trace` entries
/// without their block and transaction, and its `stateDiff`.
fn results(t: &TracedTx, types: Types) -> Result<TraceResults, Fault> {
    let p = parity(t)?;
    Ok(TraceResults {
        output: t.outcome.output.clone(),
        state_diff: if types.state_diff {
            p.state_diff.clone()
        } else {
            None
        },
        trace: if types.trace {
            p.traces.iter().map(|e| e.trace.clone()).collect()
        } else {
            Vec::<TransactionTrace>::new()
        },
        vm_trace: if types.vm_trace {
            p.vm_trace.clone()
        } else {
            None
        },
    })
}

/// `null` for a transaction the node does not have (reth's `Option` answers), else `answer`.
fn or_null(
    traced: Result<TracedTx, Fault>,
    answer: impl FnOnce(&TracedTx) -> Result<String, Fault>,
) -> Result<String, Fault> {
    match traced {
        Err(f) if f.missing => Ok("null".into()),
        r => answer(&r?),
    }
}

/// Mined transaction `hash` traced under `spec` (one at a time per transaction), checked
/// against its receipt; `ots.rs` reads its call tree the same way.
pub(super) fn mined(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    hash: B256,
    spec: &TracerSpec,
    outcome: &mut Outcome,
) -> Result<TracedTx, Fault> {
    let _guard = ctx
        .memo
        .lock_key(&format!("tx:{hash:?}"), ctx.deadline)
        .ok_or_else(timed_out)?;
    let mut m = Mined::load(source, ctx.cache, hash, ctx.mode, None)?;
    let traced = m.trace(source, ctx.cache, spec)?;
    self_check(traced.hash, &traced.outcome, &m.receipt, outcome);
    Ok(traced)
}

/// Every transaction of a block under the `parity` tracer, through the block path of
/// `debug_traceBlockByNumber` (its memory cache and self-check).
fn block(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    spec: &TracerSpec,
    outcome: &mut Outcome,
) -> Result<Vec<TracedTx>, Fault> {
    let reference = block_number_param(params.get(0))?;
    replay_block(ctx, source, &reference, spec, outcome).map(|b| b.traces)
}

/// Answers one of [`METHODS`].
pub fn dispatch(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    method: &str,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<String, Fault> {
    match method {
        "trace_transaction" => {
            let hash = hash_param(params, 0)?;
            or_null(
                mined(ctx, source, hash, &TracerSpec::Parity, outcome),
                |t| to_text(&entries(t)?),
            )
        }
        // reth's `trace_get`: the `index`-th entry of `trace_transaction`'s list (not a
        // `traceAddress`), and `null` unless exactly one index is given.
        "trace_get" => {
            let hash = hash_param(params, 0)?;
            let want: Vec<usize> = params
                .get(1)
                .and_then(Value::as_array)
                .ok_or_else(|| Fault::params("invalid argument 1: expected a list of indices"))?
                .iter()
                .map(|i| match i {
                    Value::String(s) => s
                        .strip_prefix("0x")
                        .and_then(|h| usize::from_str_radix(h, 16).ok()),
                    Value::Number(n) => n.as_u64().map(|n| n as usize),
                    _ => None,
                })
                .collect::<Option<_>>()
                .ok_or_else(|| Fault::params("invalid argument 1: an index is not a number"))?;
            let [index] = want[..] else {
                return Ok("null".into());
            };
            or_null(
                mined(ctx, source, hash, &TracerSpec::Parity, outcome),
                |t| to_text(&entries(t)?.get(index)),
            )
        }
        "trace_block" => {
            let txs = match block(ctx, source, params, &TracerSpec::Parity, outcome) {
                Err(f) if f.missing => return Ok("null".into()),
                r => r?,
            };
            let mut all = Vec::new();
            for t in &txs {
                all.extend(entries(t)?.iter());
            }
            to_text(&all)
        }
        "trace_replayTransaction" => {
            let types = trace_types(params, 1)?;
            let t = mined(ctx, source, hash_param(params, 0)?, &types.spec(), outcome)?;
            to_text(&results(&t, types)?)
        }
        "trace_replayBlockTransactions" => {
            let types = trace_types(params, 1)?;
            let txs = block(ctx, source, params, &types.spec(), outcome)?;
            let out: Vec<TraceResultsWithTransactionHash> = txs
                .iter()
                .map(|t| {
                    Ok(TraceResultsWithTransactionHash {
                        full_trace: results(t, types)?,
                        transaction_hash: t.hash,
                    })
                })
                .collect::<Result<_, Fault>>()?;
            to_text(&out)
        }
        "trace_call" => {
            let call = call_param(params.get(0), ctx.gas_cap)?;
            let types = trace_types(params, 1)?;
            let at = block_ref(params.get(2))?;
            let traced = calls(source, &[call], &at, &types.spec(), outcome)?;
            to_text(&results(&traced[0], types)?)
        }
        "trace_callMany" => {
            let list = params.get(0).and_then(Value::as_array).ok_or_else(|| {
                Fault::params("invalid argument 0: expected a list of [call, types]")
            })?;
            let mut reqs = Vec::new();
            let mut wanted = Vec::new();
            for item in list {
                let pair = json!([item.get(0), item.get(1)]);
                reqs.push(call_param(pair.get(0), ctx.gas_cap)?);
                wanted.push(trace_types(&pair, 1)?);
            }
            let at = block_ref(params.get(1))?;
            let spec = wanted.iter().fold(Types::default(), |a, w| a.or(*w)).spec();
            let traced = calls(source, &reqs, &at, &spec, outcome)?;
            let out: Vec<TraceResults> = traced
                .iter()
                .zip(wanted)
                .map(|(t, w)| results(t, w))
                .collect::<Result<_, _>>()?;
            to_text(&out)
        }
        "trace_filter" => super::filter::trace_filter(ctx, source, params, outcome),
        other => Err(Fault::new(
            -32601,
            format!("the method {other} does not exist/is not available"),
        )),
    }
}

fn block_ref(v: Option<&Value>) -> Result<String, Fault> {
    match v {
        None | Some(Value::Null) => Ok("latest".into()),
        Some(Value::String(s)) if s.len() == 66 => Ok(format!("{:?}", hash_param(&json!([s]), 0)?)),
        other => block_number_param(other),
    }
}

/// `reqs` as simulated transactions one after another on the state of block `at` (each sees
/// what the ones before it did, as reth's `trace_callMany`).
fn calls(
    source: &RpcSource,
    reqs: &[crate::replay::call::CallRequest],
    at: &str,
    spec: &TracerSpec,
    outcome: &mut Outcome,
) -> Result<Vec<TracedTx>, Fault> {
    let mut prepared = Vec::new();
    for r in reqs {
        let p = prepare_call(source, r, at, None, None).map_err(|e| match e {
            CallError::BlockOverride(m) => Fault::params(m),
            CallError::Source(e) => e.into(),
        })?;
        outcome.notes.extend(p.cap_note());
        prepared.push(p);
    }
    let Some(first) = prepared.first() else {
        return Ok(Vec::new());
    };
    let txs: Vec<ReplayTx> = prepared.iter().map(|p| p.tx.clone()).collect();
    // A chain's precompile frames come from the node's trace of the same call; several calls
    // on one state have none.
    let frames = match prepared.as_slice() {
        [one] => Frames::Call(one.node_request.as_ref()),
        _ => Frames::Calls,
    };
    let replay = replay_with_frames(
        source,
        &txs,
        &first.env,
        0,
        &first.state_at,
        spec,
        &|_| {},
        StateSnapshot::partial(),
        frames,
    )?;
    Ok(replay.traces)
}
