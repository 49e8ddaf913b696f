//! The debug methods `serve` answers from local replay, with geth's params and result shapes.
//!
//! Each runs on a worker thread (blocking), against its own [`crate::rpc::RpcClient`] so the upstream
//! requests it costs can be counted per request; the on-disk cache and the server's memory
//! cache of block pre-states are shared.

use std::io::Write;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, Bytes, B256, U256};
use serde_json::{json, Value};

use super::memo::Memo;
use crate::render::json::{write_json, write_trace};
use crate::replay::access::trace_access;
use crate::replay::call::{prepare_call, CallError, CallRequest};
use crate::replay::mined::{Mined, StateMode};
use crate::replay::overrides::{BlockOverrides, StateOverride};
use crate::replay::remote::replay_txs_from;
use crate::replay::selfcheck::check;
use crate::replay::{EvmEnv, TracedTx, TxOutcome};
use crate::source::cache::Cache;
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::source::StateSnapshot;
use crate::trace::{TracerKind, TracerSpec};

/// geth's debug methods `serve` answers ([`dispatch`]); with Parity's (`parity::METHODS`),
/// Otterscan's (`ots::METHODS`) and `eth_simulateV1`, the methods answered locally
/// (`calls::traced_method`); everything else is forwarded.
pub const GETH_METHODS: &[&str] = &[
    "debug_traceTransaction",
    "debug_traceBlockByNumber",
    "debug_traceBlockByHash",
    "debug_traceCall",
    "debug_traceStateAccess",
];

/// A JSON-RPC error object (geth's codes: -32602 bad params, -32000 everything else,
/// -32003 response too large).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub code: i64,
    pub message: String,
    /// The node has no such transaction or block: reth's `trace_transaction`, `trace_get`
    /// and `trace_block` answer `null` for it rather than an error.
    pub missing: bool,
}

impl Fault {
    pub fn new(code: i64, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
            missing: false,
        }
    }
    pub(super) fn params(message: impl Into<String>) -> Fault {
        Fault::new(-32602, message)
    }
    pub(super) fn server(message: impl Into<String>) -> Fault {
        Fault::new(-32000, message)
    }
}

/// geth's timeout error (go-ethereum rpc/errors.go).
pub(super) const TIMEOUT_CODE: i64 = -32002;
pub(super) const TIMEOUT: &str = "request timed out";

/// The request's deadline passed.
pub(super) fn timed_out() -> Fault {
    Fault::new(TIMEOUT_CODE, TIMEOUT)
}

impl From<SourceError> for Fault {
    fn from(e: SourceError) -> Fault {
        match e {
            SourceError::NotFound { what } => Fault {
                missing: true,
                ..Fault::server(format!("{what} not found"))
            },
            other => Fault::server(other.to_string()),
        }
    }
}

impl From<crate::replay::Error> for Fault {
    fn from(e: crate::replay::Error) -> Fault {
        match e {
            crate::replay::Error::Source(e) => e.into(),
            crate::replay::Error::Replay(
                crate::replay::ReplayError::StructLog(
                    crate::trace::opcode::StructLogError::TooLarge { .. },
                )
                | crate::replay::ReplayError::OverBudget,
            ) => too_large(),
            crate::replay::Error::Replay(e) => Fault::server(e.to_string()),
        }
    }
}

/// What a worker needs: the upstream, the caches and the limits.
pub struct Ctx<'a> {
    pub upstream: &'a str,
    pub rpc_timeout: Duration,
    pub cache: Option<&'a Cache>,
    pub memo: &'a Memo,
    pub mode: StateMode,
    pub max_response: usize,
    pub chain_rules: Option<crate::chain::rules::Ruleset>,
    pub op_config: Option<&'a crate::chain::op::OpChainConfig>,
    /// The call's deadline: no upstream request of this call runs past it.
    pub deadline: Instant,
    /// geth's RPC gas cap for simulated calls (0: none).
    pub gas_cap: u64,
    /// The address index (`serve --index`).
    pub index: Option<&'a super::indexed::Indexed>,
    /// `trace_filter`'s bound: `toBlock - fromBlock` at most this (`--max-filter-blocks`).
    pub max_filter_blocks: u64,
    /// Whether a large result may be written as it is sent ([`Reply::Stream`]): a single
    /// call's, not a batch's (whose answers are counted against its limit as texts).
    pub stream: bool,
}

/// A result of at least this many bytes is not made into one text when the call may stream:
/// it is measured first (against `--max-response`), then written to the client as it is sent,
/// so the server holds the trace once, not the trace and its text. Smaller results are texts:
/// cheaper, and a block's answer can be kept (see [`super::memo`]).
pub const STREAM_FROM: usize = 16 << 20;

/// A traced call's result.
pub enum Reply {
    /// The result's JSON text.
    Text(String),
    /// A result too large to hold as text, written when it is sent.
    Stream(Streamed),
}

/// What writes a result to its output.
type WriteResult = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + Send>;

/// A result measured but not written yet: its length, and what writes it.
pub struct Streamed {
    /// The result's length in bytes, known before any of it is sent.
    pub len: usize,
    write: WriteResult,
}

impl Streamed {
    /// Writes the result (exactly `len` bytes) to `out`.
    pub fn write_to(self, out: &mut dyn Write) -> std::io::Result<()> {
        (self.write)(out)
    }
}

/// One answered call: the result's JSON text or an error, and what it cost.
pub struct Outcome {
    pub result: Result<Reply, Fault>,
    pub upstream_requests: u64,
    pub cache_hit: bool,
    /// A replay that disagrees with its receipt (the trace is still returned).
    pub divergence: Option<String>,
    /// The on-disk cache's warnings, drained after the call (bounded: see
    /// [`crate::source::cache::MAX_WARNINGS`]).
    pub warnings: Vec<String>,
    /// The source's notes: the chain's own rules applied, a fork read from the header.
    pub notes: Vec<String>,
}

impl Outcome {
    /// Adds a transaction's divergence from its receipt to the call's.
    pub(super) fn diverged(&mut self, note: String) {
        self.divergence = Some(match self.divergence.take() {
            Some(prev) => format!("{prev}; {note}"),
            None => note,
        });
    }

    /// A call that failed before it asked anything of the node.
    pub fn failed(fault: Fault) -> Outcome {
        Outcome {
            result: Err(fault),
            upstream_requests: 0,
            cache_hit: false,
            divergence: None,
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The trace options of geth's `TraceConfig` / `TraceCallConfig`.
pub struct TraceOpts {
    pub spec: TracerSpec,
    /// geth's `timeout` (also bounds the request).
    pub timeout: Option<Duration>,
}

/// Parses geth's trace config: `tracer` (a name or JavaScript source; absent: the struct
/// logger, configured by the top-level `disableStorage`, `disableStack`, `enableMemory`,
/// `enableReturnData`, `limit`), `tracerConfig`, `timeout`.
///
/// The tracer is made here (a JavaScript one's script engine too): `serve` calls it on the
/// worker, under the request's deadline; [`trace_timeout`] reads the `timeout` alone first.
pub fn trace_opts(opts: Option<&Value>) -> Result<TraceOpts, Fault> {
    let timeout = trace_timeout(opts)?;
    let empty = json!({});
    let opts = opts.filter(|o| !o.is_null()).unwrap_or(&empty);
    let config = opts.get("tracerConfig").filter(|c| !c.is_null());
    let tracer = match opts.get("tracer") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Fault::params("invalid argument 1: tracer must be a string")),
    };
    let spec = if tracer.is_empty() {
        let mut logger = serde_json::Map::new();
        for key in [
            "enableMemory",
            "disableStack",
            "disableStorage",
            "enableReturnData",
            "limit",
        ] {
            if let Some(v) = opts.get(key).filter(|v| !v.is_null()) {
                logger.insert(key.into(), v.clone());
            }
        }
        TracerSpec::new(TracerKind::StructLog, Some(&Value::Object(logger)))
            .map_err(|e| Fault::params(format!("invalid argument 1: {e}")))?
    } else {
        match TracerKind::from_name(tracer) {
            // The native tracers by name (muxTracer's JavaScript children get the timeout).
            Ok(_) => TracerSpec::named(
                tracer,
                config,
                timeout.unwrap_or(crate::trace::DEFAULT_JS_TIMEOUT),
            )
            .map_err(|e| Fault::server(e.to_string()))?,
            // geth: a name it does not know is a JavaScript tracer it ships by that name, or
            // else JavaScript source.
            Err(_) => js_spec(tracer, config, timeout)?,
        }
    };
    Ok(TraceOpts { spec, timeout })
}

/// geth's `timeout` of a trace config (checked to be an object), and nothing else of it: what
/// bounds the request before its tracer is made.
pub fn trace_timeout(opts: Option<&Value>) -> Result<Option<Duration>, Fault> {
    let opts = match opts {
        None | Some(Value::Null) => return Ok(None),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(Fault::params(
                "invalid argument 1: the trace config must be an object",
            ))
        }
    };
    match opts.get("timeout") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(parse_duration(s)?)),
        Some(_) => Err(Fault::params(
            "invalid argument 1: timeout must be a string",
        )),
    }
}

/// geth's `timeout`: a Go duration, with or without the JavaScript engine built in.
fn parse_duration(s: &str) -> Result<Duration, Fault> {
    crate::geth::time::parse_go_duration(s)
        .map_err(|e| Fault::params(format!("invalid argument 1: timeout: {e}")))
}

#[cfg(feature = "js")]
fn js_spec(
    source: &str,
    config: Option<&Value>,
    timeout: Option<Duration>,
) -> Result<TracerSpec, Fault> {
    let timeout = timeout.unwrap_or(crate::trace::DEFAULT_JS_TIMEOUT);
    let source = crate::js::named::source(source).unwrap_or(source);
    TracerSpec::js(source, config, timeout).map_err(|e| Fault::server(e.to_string()))
}

#[cfg(not(feature = "js"))]
fn js_spec(
    _source: &str,
    _config: Option<&Value>,
    _timeout: Option<Duration>,
) -> Result<TracerSpec, Fault> {
    Err(Fault::server(
        "this build has no JavaScript tracers (rebuild with the `js` feature)",
    ))
}

/// Runs geth's debug `method` with `params` (already known to be one of [`GETH_METHODS`]; Parity's
/// are `parity::dispatch`'s).
pub fn dispatch(ctx: &Ctx<'_>, method: &str, params: &Value, mut opts: TraceOpts) -> Outcome {
    // A struct log is bounded while it is made by what the response may still take.
    if let TracerSpec::StructLog(c) = &mut opts.spec {
        c.max_bytes = ctx.max_response as u64;
    }
    answer(ctx, |source, outcome| match method {
        "debug_traceTransaction" => trace_transaction(ctx, source, params, &opts, outcome),
        "debug_traceBlockByNumber" | "debug_traceBlockByHash" => {
            trace_block(ctx, source, method, params, &opts, outcome)
        }
        "debug_traceCall" => trace_call_method(ctx, source, params, &opts, outcome),
        "debug_traceStateAccess" => state_access(ctx, source, params, outcome),
        other => Err(Fault::new(
            -32601,
            format!("the method {other} does not exist/is not available"),
        )),
    })
}

/// Answers one traced call with `run`: the upstream client (ending by the deadline) and the
/// source it runs against, then what the outcome reports of it (upstream requests, notes,
/// cache hit and warnings).
pub fn answer(
    ctx: &Ctx<'_>,
    run: impl FnOnce(&RpcSource, &mut Outcome) -> Result<Reply, Fault>,
) -> Outcome {
    let source = match super::upstream::source(
        ctx.upstream,
        ctx.rpc_timeout,
        Some(ctx.deadline),
        ctx.chain_rules,
        ctx.op_config,
    ) {
        Ok(s) => s,
        Err(e) => return Outcome::failed(Fault::server(e.to_string())),
    };
    let mut outcome = Outcome {
        result: Err(Fault::server("unreachable")),
        upstream_requests: 0,
        cache_hit: false,
        divergence: None,
        warnings: Vec::new(),
        notes: Vec::new(),
    };
    // This call's own cache hits and warnings, never a concurrent call's.
    let (result, tally) = match ctx.cache {
        Some(c) => c.tally(|| run(&source, &mut outcome)),
        None => (run(&source, &mut outcome), Default::default()),
    };
    outcome.result = result;
    outcome.upstream_requests = source.client.stats().requests;
    // Which chain rules and which fork were taken, where that was not plain.
    outcome.notes.extend(source.take_notes());
    outcome.cache_hit |= tally.hits > 0;
    outcome.warnings = tally.warnings();
    outcome
}

/// The first param as a 32-byte hash, geth's message when it is not one.
pub(super) fn hash_param(params: &Value, i: usize) -> Result<B256, Fault> {
    let v = params
        .get(i)
        .ok_or_else(|| Fault::params(format!("missing value for required argument {i}")))?;
    let s = v
        .as_str()
        .ok_or_else(|| Fault::params(format!("invalid argument {i}: hash must be a string")))?;
    let hex = s.strip_prefix("0x").unwrap_or(s);
    if hex.len() != 64 {
        return Err(Fault::params(format!(
            "invalid argument {i}: hex string has length {}, want 64 for common.Hash",
            hex.len()
        )));
    }
    s.parse::<B256>()
        .map_err(|_| Fault::params(format!("invalid argument {i}: invalid hex string")))
}

/// A capped writer: the response size limit applies while the trace is written.
struct Capped {
    buf: Vec<u8>,
    max: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.max {
            return Err(std::io::Error::other("response too large"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(super) fn too_large() -> Fault {
    Fault::new(-32003, "response too large")
}

fn finish(out: Capped) -> Result<String, Fault> {
    String::from_utf8(out.buf).map_err(|_| Fault::server("trace is not UTF-8"))
}

fn traced_json(ctx: &Ctx<'_>, t: TracedTx) -> Result<Reply, Fault> {
    reply(ctx, move |out| write_trace(&mut &mut *out, &t.result))
}

/// Counts what is written, up to `max` bytes.
struct Counted {
    len: usize,
    max: usize,
}

impl Write for Counted {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.len += data.len();
        if self.len > self.max {
            return Err(std::io::Error::other("response too large"));
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The result `write` produces, never more than `--max-response` (else -32003): its text
/// when that is shorter than [`STREAM_FROM`] or the call cannot stream, else its length,
/// measured by writing it once to nothing, and `write` to send it later.
pub(super) fn reply<F>(ctx: &Ctx<'_>, write: F) -> Result<Reply, Fault>
where
    F: Fn(&mut dyn Write) -> std::io::Result<()> + Send + 'static,
{
    let first = match ctx.stream {
        true => ctx.max_response.min(STREAM_FROM),
        false => ctx.max_response,
    };
    let mut out = Capped {
        buf: Vec::new(),
        max: first,
    };
    match write(&mut out) {
        Ok(()) => return finish(out).map(Reply::Text),
        Err(_) if first == ctx.max_response => return Err(too_large()),
        Err(_) => drop(out),
    }
    let mut count = Counted {
        len: 0,
        max: ctx.max_response,
    };
    write(&mut count).map_err(|_| too_large())?;
    Ok(Reply::Stream(Streamed {
        len: count.len,
        write: Box::new(write),
    }))
}

/// Notes a replay that disagrees with its receipt (never "matches" what was not read).
pub(super) fn self_check(hash: B256, tx: &TxOutcome, receipt: &Value, outcome: &mut Outcome) {
    if let Some(note) = divergence(hash, tx, receipt) {
        outcome.diverged(note);
    }
}

/// How transaction `hash`'s replay departs from its receipt, if it does.
pub(super) fn divergence(hash: B256, tx: &TxOutcome, receipt: &Value) -> Option<String> {
    let text = check(tx, receipt).divergence_text()?;
    Some(format!("{hash}: {text}"))
}

fn trace_transaction(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    opts: &TraceOpts,
    outcome: &mut Outcome,
) -> Result<Reply, Fault> {
    let hash = hash_param(params, 0)?;
    let _guard = ctx
        .memo
        .lock_key(&format!("tx:{hash:?}"), ctx.deadline)
        .ok_or_else(timed_out)?;
    let mut mined = Mined::load(source, ctx.cache, hash, ctx.mode, None)?;
    let traced = mined.trace(source, ctx.cache, &opts.spec)?;
    self_check(traced.hash, &traced.outcome, &mined.receipt, outcome);
    traced_json(ctx, traced)
}

pub(super) fn trace_block(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    method: &str,
    params: &Value,
    opts: &TraceOpts,
    outcome: &mut Outcome,
) -> Result<Reply, Fault> {
    let block_ref = if method == "debug_traceBlockByHash" {
        format!("{:?}", hash_param(params, 0)?)
    } else {
        block_number_param(params.get(0))?
    };
    let kept = |a: &super::memo::Answer, outcome: &mut Outcome| {
        if a.text.len() > ctx.max_response {
            return Err(too_large());
        }
        outcome.cache_hit = true;
        outcome.notes.extend(a.notes.iter().cloned());
        Ok(Reply::Text(a.text.clone()))
    };
    // A block a walk's preparation read from the node a moment ago: its answer as prepared,
    // without asking for the hash again (see `memo::READ_HASH_FOR`).
    if let Some(r) = ctx.memo.recent_read(&block_ref, Instant::now()) {
        let key = super::memo::AnswerKey::new(r.chain_id, &r.client, r.hash, params.get(1));
        if let Some(a) = ctx.memo.answer(&key) {
            return kept(&a, outcome);
        }
    }
    // A block asked for before: its hash first (the header alone, one small request), then
    // the answer kept for that hash under these options, if any. A block asked for the first
    // time costs no more than before.
    let key = |chain_id: u64, hash: B256| {
        let client = source.client_version_text().unwrap_or_default();
        super::memo::AnswerKey::new(chain_id, &client, hash, params.get(1))
    };
    let mut by_hash = None;
    if ctx.memo.seen(&block_ref) {
        let (chain_id, hash) = source.block_identity(&block_ref)?;
        if let Some(a) = ctx.memo.answer(&key(chain_id, hash)) {
            return kept(&a, outcome);
        }
        by_hash = Some(format!("{hash:?}"));
    }
    let block = replay_block(
        ctx,
        source,
        by_hash.as_deref().unwrap_or(&block_ref),
        &opts.spec,
        outcome,
    )?;
    let (chain_id, hash) = (block.chain_id, block.hash);
    let traces = block.traces;
    let reply = reply(ctx, move |out| write_block_answer(out, &traces))?;
    // Kept only when every transaction matched its receipt (and the answer is a text: one
    // written as it is sent is larger than the cache would keep long).
    if let (Reply::Text(text), Some(hash), None) = (&reply, hash, &outcome.divergence) {
        let notes = source.take_notes();
        outcome.notes.extend(notes.iter().cloned());
        let answer = super::memo::Answer {
            text: text.clone(),
            notes,
        };
        ctx.memo.put_answer(key(chain_id, hash), answer);
    }
    Ok(reply)
}

/// A block's trace answer, `[{"txHash", "result"}…]`: what `debug_traceBlockBy*` sends and
/// what a walk's preparation keeps ([`super::ahead`]).
pub(super) fn write_block_answer(out: &mut dyn Write, traces: &[TracedTx]) -> std::io::Result<()> {
    out.write_all(b"[")?;
    for (i, t) in traces.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write!(out, "{{\"txHash\":\"{:?}\",\"result\":", t.hash)?;
        write_trace(&mut &mut *out, &t.result)?;
        out.write_all(b"}")?;
    }
    out.write_all(b"]")
}

/// A block replayed: its transactions' traces, its chain and hash.
pub(super) struct BlockReplay {
    pub traces: Vec<TracedTx>,
    pub chain_id: u64,
    pub hash: Option<B256>,
}

/// Every transaction of block `block_ref` traced under `spec`, each checked against its
/// receipt; the block's pre-state kept in the memory cache for the next call.
pub(super) fn replay_block(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    block_ref: &str,
    spec: &TracerSpec,
    outcome: &mut Outcome,
) -> Result<BlockReplay, Fault> {
    // One round trip for the chain, the block and its receipts; then the state passes.
    let (chain_id, mut block, receipts) = source.chain_block_receipts(block_ref)?;
    let spec_id = source.prepare_block(chain_id, &mut block.info, None)?;
    let env = EvmEnv::new(spec_id, chain_id, &block.info);
    let done = |traces| BlockReplay {
        traces,
        chain_id,
        hash: block.info.hash,
    };
    if block.txs.is_empty() {
        return Ok(done(Vec::new()));
    }
    let parent = source.parent_at(&block.info);
    // The pre-state of this block (its parent's state), known by the block's hash.
    let key = format!("state:{chain_id}:{:?}", block.info.hash.unwrap_or_default());
    let _guard = ctx
        .memo
        .lock_key(&key, ctx.deadline)
        .ok_or_else(timed_out)?;
    let cached = block.info.hash.and_then(|_| ctx.memo.get(&key));
    let (start, hit) = match cached {
        Some(s) => (s, true),
        None => (crate::source::StateSnapshot::partial(), false),
    };
    outcome.cache_hit |= hit;
    let replay = replay_txs_from(source, &block.txs, &env, 0, &parent, spec, &|_| {}, start)?;
    let receipts = match receipts {
        Some(r) => r,
        None => {
            let hashes: Vec<B256> = replay.traces.iter().map(|t| t.hash).collect();
            source.receipts(&hashes)?
        }
    };
    for (t, r) in replay.traces.iter().zip(&receipts) {
        self_check(t.hash, &t.outcome, r, outcome);
    }
    if block.info.hash.is_some() {
        ctx.memo.put(key, replay.snapshot);
    }
    Ok(done(replay.traces))
}

/// geth's `rpc.BlockNumber`: a hex quantity or a tag.
pub(super) fn block_number_param(v: Option<&Value>) -> Result<String, Fault> {
    let v = v.ok_or_else(|| Fault::params("missing value for required argument 0"))?;
    let s = v
        .as_str()
        .ok_or_else(|| Fault::params("invalid argument 0: block number must be a string"))?;
    match s {
        "latest" | "earliest" | "pending" | "safe" | "finalized" => Ok(s.to_string()),
        _ => {
            let hex = s
                .strip_prefix("0x")
                .ok_or_else(|| Fault::params("invalid argument 0: hex string without 0x prefix"))?;
            let n = u64::from_str_radix(hex, 16)
                .map_err(|_| Fault::params("invalid argument 0: invalid hex number"))?;
            Ok(format!("{n:#x}"))
        }
    }
}

/// geth's `rpc.BlockNumberOrHash` of argument `i`: a number or tag, a block hash, or an
/// EIP-1898 object; `latest` when absent.
pub(super) fn block_ref_param(params: &Value, i: usize) -> Result<String, Fault> {
    Ok(match params.get(i) {
        None | Some(Value::Null) => "latest".to_string(),
        Some(Value::String(s)) if s.len() == 66 => format!("{:?}", hash_param(params, i)?),
        Some(Value::Object(o)) => match (o.get("blockHash"), o.get("blockNumber")) {
            (Some(Value::String(h)), _) => {
                let mut at = vec![Value::Null; i];
                at.push(json!(h));
                format!("{:?}", hash_param(&Value::Array(at), i)?)
            }
            (_, Some(n)) => block_number_param(Some(n))?,
            _ => "latest".to_string(),
        },
        other => block_number_param(other)?,
    })
}

/// geth's `TransactionArgs` (the fields a replayed call uses), under the RPC gas cap `gas_cap`.
pub(super) fn call_param(v: Option<&Value>, gas_cap: u64) -> Result<CallRequest, Fault> {
    let v = v
        .and_then(Value::as_object)
        .ok_or_else(|| Fault::params("invalid argument 0: the call must be an object"))?;
    let bad = |f: &str, why: String| Fault::params(format!("invalid argument 0: {f}: {why}"));
    let addr = |f: &str| -> Result<Option<Address>, Fault> {
        match v.get(f) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => s
                .parse::<Address>()
                .map(Some)
                .map_err(|e| bad(f, e.to_string())),
            Some(_) => Err(bad(f, "not a string".into())),
        }
    };
    let qty = |f: &str| -> Result<Option<U256>, Fault> {
        match v.get(f) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let hex = s
                    .strip_prefix("0x")
                    .ok_or_else(|| bad(f, "hex string without 0x prefix".into()))?;
                U256::from_str_radix(hex, 16)
                    .map(Some)
                    .map_err(|e| bad(f, e.to_string()))
            }
            Some(_) => Err(bad(f, "not a hex string".into())),
        }
    };
    let data = match (v.get("input"), v.get("data")) {
        (Some(Value::String(s)), _) | (None | Some(Value::Null), Some(Value::String(s))) => s
            .parse::<Bytes>()
            .map_err(|e| bad("input", e.to_string()))?,
        _ => Bytes::new(),
    };
    let gas = qty("gas")?
        .map(|g| u64::try_from(g).map_err(|_| bad("gas", "does not fit in 64 bits".into())))
        .transpose()?;
    let gas_price = qty("gasPrice")?
        .or(qty("maxFeePerGas")?)
        .unwrap_or_default();
    Ok(CallRequest {
        from: addr("from")?.unwrap_or_default(),
        to: addr("to")?,
        data,
        value: qty("value")?.unwrap_or_default(),
        gas,
        gas_price: u128::try_from(gas_price).map_err(|_| bad("gasPrice", "too large".into()))?,
        gas_cap,
        geth_default: false,
    })
}

fn trace_call_method(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    opts: &TraceOpts,
    outcome: &mut Outcome,
) -> Result<Reply, Fault> {
    // geth's default gas for a call without one: the RPC gas cap (reth's `trace_call`, in
    // `parity.rs`, takes the block's limit, no more than the cap).
    let call = CallRequest {
        geth_default: true,
        ..call_param(params.get(0), ctx.gas_cap)?
    };
    let block_ref = block_ref_param(params, 1)?;
    let raw_opts = params.get(2);
    let state = raw_opts
        .and_then(|o| o.get("stateOverrides"))
        .filter(|v| !v.is_null())
        .map(StateOverride::from_json)
        .transpose()
        .map_err(|e| Fault::params(format!("invalid argument 2: stateOverrides: {e}")))?;
    let block = raw_opts
        .and_then(|o| o.get("blockOverrides"))
        .filter(|v| !v.is_null())
        .map(BlockOverrides::from_json)
        .transpose()
        .map_err(|e| Fault::params(format!("invalid argument 2: blockOverrides: {e}")))?;
    let call_error = |e| match e {
        CallError::BlockOverride(m) => Fault::params(format!("invalid argument 2: {m}")),
        CallError::Source(e) => e.into(),
    };
    let prepared =
        prepare_call(source, &call, &block_ref, block.as_ref(), None).map_err(call_error)?;
    outcome.notes.extend(prepared.cap_note());
    let traced = prepared
        .trace(source, &opts.spec, state.as_ref(), StateSnapshot::partial())
        .map_err(call_error)?;
    traced_json(ctx, traced.traced)
}

fn state_access(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Reply, Fault> {
    let hash = hash_param(params, 0)?;
    let _guard = ctx
        .memo
        .lock_key(&format!("tx:{hash:?}"), ctx.deadline)
        .ok_or_else(timed_out)?;
    let mut mined = Mined::load(source, ctx.cache, hash, ctx.mode, None)?;
    let (rows, result) = mined.run(source, ctx.cache, |db, env, tx, _| {
        trace_access(db, env, tx)
    })?;
    self_check(hash, &result, &mined.receipt, outcome);
    let mut out = Capped {
        buf: Vec::new(),
        max: ctx.max_response,
    };
    write_json(&mut out, &rows).map_err(|_| too_large())?;
    finish(out).map(Reply::Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_options_follow_geth() {
        let o = trace_opts(None).unwrap();
        assert_eq!(o.spec.kind(), TracerKind::StructLog);
        let o = trace_opts(Some(&json!({"tracer": "callTracer",
            "tracerConfig": {"withLog": true}, "timeout": "10s"})))
        .unwrap();
        assert_eq!(o.spec.kind(), TracerKind::Call);
        assert_eq!(o.timeout, Some(Duration::from_secs(10)));
        let e = trace_opts(Some(&json!({"tracer": "callTracer",
            "tracerConfig": {"withLog": "yes"}})))
        .err()
        .unwrap();
        assert!(e.message.contains("withLog"), "{e:?}");
        assert!(trace_opts(Some(&json!([1]))).is_err());
    }

    /// A call's cache hits and warnings are its own (issue 43): a concurrent call that reads
    /// the cache — a hit and a damaged entry — while this one runs gives this one neither.
    /// Before, each call compared the process's hit count before and after, and drained the
    /// process's warnings: the quiet call reported the other's hit and took its warning.
    #[test]
    fn cache_hits_and_warnings_belong_to_their_call() {
        use crate::source::cache::{Cache, Kind};
        let dir = std::env::temp_dir().join(format!("chaintrace-answer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = Cache::new(&dir);
        cache.select_chain(1, B256::repeat_byte(1));
        cache.put(Kind::Tx, "good", &json!(1));
        cache.put(Kind::Tx, "bad", &json!(2));
        let bad = dir
            .join("1")
            .join("0101010101010101")
            .join("tx")
            .join("bad.json");
        std::fs::write(&bad, b"0000\n2").unwrap();
        let memo = Memo::new(10);
        let ctx = Ctx {
            upstream: "http://127.0.0.1:9",
            rpc_timeout: Duration::from_secs(1),
            cache: Some(&cache),
            memo: &memo,
            mode: StateMode::Auto,
            max_response: 1 << 20,
            chain_rules: None,
            op_config: None,
            deadline: Instant::now() + Duration::from_secs(60),
            gas_cap: 0,
            max_filter_blocks: 100,
            index: None,
            stream: false,
        };
        let (started, read) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        let (busy, quiet) = std::thread::scope(|s| {
            let busy = s.spawn(|| {
                answer(&ctx, |_, _| {
                    started.wait();
                    assert!(cache.get(Kind::Tx, "good").is_some());
                    assert!(cache.get(Kind::Tx, "bad").is_none());
                    read.wait();
                    Ok(Reply::Text("busy".into()))
                })
            });
            let quiet = s.spawn(|| {
                answer(&ctx, |_, _| {
                    started.wait();
                    read.wait();
                    Ok(Reply::Text("quiet".into()))
                })
            });
            (busy.join().unwrap(), quiet.join().unwrap())
        });
        assert!(!quiet.cache_hit, "the quiet call reported the other's hit");
        assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
        assert!(busy.cache_hit);
        assert_eq!(busy.warnings.len(), 1, "{:?}", busy.warnings);
        assert!(
            busy.warnings[0].contains("checksum mismatch"),
            "{:?}",
            busy.warnings
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn params_are_checked_like_geth() {
        let e = hash_param(&json!(["0x12"]), 0).unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(
            e.message,
            "invalid argument 0: hex string has length 2, want 64 for common.Hash"
        );
        assert_eq!(block_number_param(Some(&json!("0x0a"))).unwrap(), "0xa");
        assert_eq!(
            block_number_param(Some(&json!("latest"))).unwrap(),
            "latest"
        );
        assert!(block_number_param(Some(&json!(10))).is_err());
        let c = call_param(
            Some(
                &json!({"from": "0x0000000000000000000000000000000000000001",
            "to": "0x0000000000000000000000000000000000000002", "input": "0x01",
            "value": "0x10", "gas": "0x5208"}),
            ),
            0,
        )
        .unwrap();
        assert_eq!(c.gas, Some(21000));
        assert_eq!(c.value, U256::from(16));
        assert_eq!(c.data.as_ref(), &[1]);
    }
}
