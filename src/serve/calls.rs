//! Answering calls: one request or a batch (answered in order through a bounded window, the
//! response size counted as answers are produced), traced methods queued for the bounded worker
//! pool under the request's one deadline, every other method forwarded upstream unchanged.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::time::{timeout_at, Instant as Deadline};

use super::conn::read_body;
use super::methods::{self, timed_out, Ctx, Fault, Reply, TIMEOUT, TIMEOUT_CODE};
use super::metrics::Metrics;
use super::stream::{Chunks, Streaming};
use super::{authorize, log_line, Shared, BUSY_CODE};

/// geth's error codes and messages (go-ethereum rpc/errors.go; the timeout's in `methods`).
const TOO_LARGE_CODE: i64 = -32003;
const TOO_LARGE: &str = "response too large";
const CRASHED_CODE: i64 = -32603;
const CRASHED: &str = "method handler crashed";
/// A replay that failed its self-check (geth's generic server error).
const DIVERGED_CODE: i64 = -32000;

/// The least byte budget a traced call's work gets, however little of the response is left
/// (a batch's later calls): the state it reads and the EVM's memory, not only its answer.
pub(super) const WORK_BYTES: usize = 32 << 20;

/// One call's answer: its JSON text, and the bytes geth counts against a batch's response
/// limit (the `result` or `error` member, as `len(resp.Result) + len(resp.Error)`). A single
/// call's large result is not in `text`: `text` is then the envelope up to `result`, and
/// `rest` the result's bytes as the worker writes them (then `}`).
struct Answer {
    text: String,
    payload: usize,
    rest: Option<Chunks>,
}

impl Answer {
    /// A JSON-RPC error response in geth's key order (`jsonrpc`, `id`, `error`).
    fn error(id: &Value, code: i64, message: &str) -> Answer {
        let error = format!(
            "{{\"code\":{code},\"message\":{}}}",
            serde_json::to_string(message).unwrap_or_else(|_| "\"\"".into())
        );
        Answer {
            text: format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}",
                id_text(id)
            ),
            payload: error.len(),
            rest: None,
        }
    }

    /// The envelope is written around `result` in its own buffer (grown in place where the
    /// allocator can), not into a copy: a large trace is not held twice.
    fn result(id: &Value, mut result: String) -> Answer {
        let payload = result.len();
        let head = result_head(id);
        result.reserve_exact(head.len() + 1);
        result.insert_str(0, &head);
        result.push('}');
        Answer {
            text: result,
            payload,
            rest: None,
        }
    }

    /// A result sent as the worker writes it: the envelope's head now, the result's `len`
    /// bytes from `chunks`, then its `}`.
    fn streamed(id: &Value, len: usize, chunks: Chunks) -> Answer {
        Answer {
            text: result_head(id),
            payload: len,
            rest: Some(chunks),
        }
    }

    /// An answer as the upstream sent it (unchanged).
    fn forwarded(text: String) -> Answer {
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            result: Option<&'a RawValue>,
            #[serde(borrow)]
            error: Option<&'a RawValue>,
        }
        let payload = match serde_json::from_str::<Envelope>(&text) {
            Ok(e) => e.result.map_or(0, |r| r.get().len()) + e.error.map_or(0, |r| r.get().len()),
            Err(_) => text.len(),
        };
        Answer {
            text,
            payload,
            rest: None,
        }
    }

    /// The HTTP response of a single call.
    fn respond(self) -> Response {
        match self.rest {
            None => json_response(self.text),
            Some(chunks) => (
                [(header::CONTENT_TYPE, "application/json")],
                Body::new(Streaming::new(self.text, self.payload, chunks, "}")),
            )
                .into_response(),
        }
    }
}

/// A result response's text up to its `result` value (geth's key order).
fn result_head(id: &Value) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id_text(id))
}

fn id_text(id: &Value) -> String {
    serde_json::to_string(id).unwrap_or_else(|_| "null".into())
}

fn json_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) async fn rpc(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(r) = authorize(&shared, &headers) {
        return *r;
    }
    let body = match read_body(&shared, &headers, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    // The one deadline of this request (geth: one per HTTP request, a batch included).
    let deadline = Deadline::now() + shared.cfg.request_timeout;
    let parsed: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return json_response(Answer::error(&Value::Null, -32700, "parse error").text),
    };
    drop(body);
    match parsed {
        Value::Array(items) => json_response(batch(shared, items, deadline).await),
        one => {
            let id = one.get("id").cloned().unwrap_or(Value::Null);
            let budget = Arc::new(AtomicUsize::new(shared.cfg.max_response));
            let call = tokio::spawn(answer(shared, one, deadline, budget, true));
            match call.await {
                Ok(a) => a.respond(),
                Err(_) => json_response(crashed(&id).text),
            }
        }
    }
}

fn crashed(id: &Value) -> Answer {
    log_line(&json!({"id": id, "outcome": "crashed"}));
    Answer::error(id, CRASHED_CODE, CRASHED)
}

/// A batch, as go-ethereum's `handleBatch` answers it: the answers in order, counted against
/// `--max-response` as they are produced; once past it (the answer that passed it included),
/// every remaining call is answered with -32003 "response too large", and once the deadline
/// has passed, with -32002 "request timed out". At most a window of calls runs ahead of the
/// next answer to write, so neither the answers nor the work are all held at once.
async fn batch(shared: Arc<Shared>, items: Vec<Value>, deadline: Deadline) -> String {
    if items.is_empty() {
        return Answer::error(&Value::Null, -32600, "empty batch").text;
    }
    if items.len() > shared.cfg.max_batch {
        // geth: one error, under the id of the first call in the batch.
        let first = items
            .iter()
            .find(|m| {
                let method = m.get("method").and_then(Value::as_str).unwrap_or("");
                let id = m.get("id").filter(|id| !id.is_object() && !id.is_array());
                id.is_some() && !method.is_empty()
            })
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
        return format!(
            "[{}]",
            Answer::error(&first, -32600, "batch too large").text
        );
    }
    let n = items.len();
    let ids: Vec<Value> = items
        .iter()
        .map(|m| m.get("id").cloned().unwrap_or(Value::Null))
        .collect();
    let window = (shared.cfg.workers + shared.cfg.queue).clamp(1, 64);
    let mut pending = items.into_iter();
    let mut set = tokio::task::JoinSet::new();
    let mut tasks = std::collections::HashMap::new();
    let mut done: std::collections::BTreeMap<usize, Answer> = Default::default();
    let (mut spawned, mut next, mut bytes) = (0usize, 0usize, 0usize);
    // One byte budget for the whole batch (`--max-response`), which each call's replay sees.
    let budget = Arc::new(AtomicUsize::new(shared.cfg.max_response));
    let mut out = String::from("[");
    let mut cut: Option<(i64, &str)> = None;
    while next < n {
        while spawned < n && spawned < next + window && Deadline::now() < deadline {
            let item = pending.next().unwrap_or(Value::Null);
            let handle = set.spawn(answer(
                shared.clone(),
                item,
                deadline,
                budget.clone(),
                false,
            ));
            tasks.insert(handle.id(), spawned);
            spawned += 1;
        }
        if let Some(a) = done.remove(&next) {
            if next > 0 {
                out.push(',');
            }
            out.push_str(&a.text);
            bytes += a.payload;
            // What the batch's later calls may still produce, struct logs included.
            budget.store(
                shared.cfg.max_response.saturating_sub(bytes),
                Ordering::Relaxed,
            );
            next += 1;
            if bytes > shared.cfg.max_response {
                cut = Some((TOO_LARGE_CODE, TOO_LARGE));
                break;
            }
            continue;
        }
        // `next` is running, or (the deadline passed) was never started.
        let Some(joined) = set.join_next_with_id().await else {
            cut = Some((TIMEOUT_CODE, TIMEOUT));
            break;
        };
        let (task, got) = match joined {
            Ok((task, a)) => (task, Some(a)),
            Err(e) => (e.id(), None),
        };
        if let Some(i) = tasks.remove(&task) {
            done.insert(i, got.unwrap_or_else(|| crashed(&ids[i])));
        }
    }
    // Calls still running are abandoned (their workers finish and are released).
    drop(set);
    if let Some((code, message)) = cut {
        for (i, id) in ids.iter().enumerate().skip(next) {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&Answer::error(id, code, message).text);
        }
    }
    out.push(']');
    out
}

/// Answers one request object by `deadline`, producing at most what `budget` leaves; a large
/// result is sent as it is written where it may `stream` (a single call, not a batch's).
async fn answer(
    shared: Arc<Shared>,
    req: Value,
    deadline: Deadline,
    budget: Arc<AtomicUsize>,
    stream: bool,
) -> Answer {
    let started = Instant::now();
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let valid = req.is_object() && req.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let Some(method) = method.filter(|_| valid) else {
        shared.metrics.record("", "invalid", 0.0);
        return Answer::error(&id, -32600, "invalid request");
    };
    let params = req.get("params").cloned().unwrap_or(json!([]));
    if !traced_method(&method) {
        return forward(&shared, req, &method, started, deadline).await;
    }
    let (result, log) = traced(&shared, &method, params, deadline, &budget, stream).await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(f) if f.code == BUSY_CODE => "busy",
        Err(f) if f.code == TIMEOUT_CODE => "timeout",
        Err(_) => "error",
    };
    let secs = started.elapsed().as_secs_f64();
    shared.metrics.record(&method, outcome, secs);
    let mut line = json!({"method": method, "id": id, "outcome": outcome,
        "ms": (secs * 1e3 * 10.0).round() / 10.0});
    if let Some(log) = log {
        line["upstreamRequests"] = json!(log.upstream_requests);
        line["cacheHit"] = json!(log.cache_hit);
        if let Some(d) = log.divergence {
            line["selfCheck"] = json!(format!("FAILED: {d}"));
        }
        if !log.warnings.is_empty() {
            line["cacheWarnings"] = json!(log.warnings);
        }
        if !log.notes.is_empty() {
            line["notes"] = json!(log.notes);
        }
    }
    if let Err(f) = &result {
        line["error"] = json!(f.message);
    }
    log_line(&line);
    match result {
        Ok(Sent::Text(text)) => Answer::result(&id, text),
        Ok(Sent::Chunks(len, chunks)) => Answer::streamed(&id, len, chunks),
        Err(f) => Answer::error(&id, f.code, &f.message),
    }
}

/// A traced call's result as the async side gets it: text, or its length and the bytes as the
/// worker writes them.
enum Sent {
    Text(String),
    Chunks(usize, Chunks),
}

/// What the worker hands back once the replay is done (before a streamed result is written).
struct Done {
    result: Result<Sent, Fault>,
    log: TraceLog,
}

/// What a traced call's log line reports besides its outcome.
struct TraceLog {
    upstream_requests: u64,
    cache_hit: bool,
    divergence: Option<String>,
    warnings: Vec<String>,
    notes: Vec<String>,
}

/// Whose methods a traced call is: their parameters and dispatch differ.
#[derive(Clone, Copy)]
enum Family {
    /// geth's `debug_*`, with a trace config.
    Geth,
    /// reth's `trace_*` ([`super::parity`]).
    Parity,
    /// Otterscan's `ots_*` ([`super::ots`]).
    Ots,
    /// `eth_simulateV1` ([`super::simulate`]).
    Simulate,
}

/// A place in the queue, given back however the wait ends (a worker, the deadline, or the
/// caller gone: a client that disconnects while queued leaves no phantom entry behind).
struct Queued<'a>(&'a Shared);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        self.0.metrics.queued.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether `method` is answered locally (on a worker), not forwarded.
pub(super) fn traced_method(method: &str) -> bool {
    methods::GETH_METHODS.contains(&method)
        || super::parity::METHODS.contains(&method)
        || super::ots::METHODS.contains(&method)
        || method == "eth_simulateV1"
}

/// Queues a traced call for a worker; the wait and the replay together end by the deadline
/// (geth's `timeout` trace option, when given, can only bring it closer).
async fn traced(
    shared: &Arc<Shared>,
    method: &str,
    params: Value,
    deadline: Deadline,
    budget: &AtomicUsize,
    stream: bool,
) -> (Result<Sent, Fault>, Option<TraceLog>) {
    let max_response = budget.load(Ordering::Relaxed);
    let opts_index = match method {
        "debug_traceCall" => 2,
        _ => 1,
    };
    // Parity's methods take trace types, Otterscan's and `eth_simulateV1` none, where geth's
    // take a trace config.
    let family = match method {
        m if super::parity::METHODS.contains(&m) => Family::Parity,
        m if super::ots::METHODS.contains(&m) => Family::Ots,
        "eth_simulateV1" => Family::Simulate,
        _ => Family::Geth,
    };
    // Only the config's `timeout` now; its tracer is made on the worker, under the deadline.
    let timeout = match family {
        Family::Parity | Family::Ots | Family::Simulate => None,
        Family::Geth => match methods::trace_timeout(params.get(opts_index)) {
            Ok(t) => t,
            Err(f) => return (Err(f), None),
        },
    };
    let deadline = match timeout {
        Some(t) => deadline.min(Deadline::now() + t),
        None => deadline,
    };
    let permit = match shared.workers.clone().try_acquire_owned() {
        Ok(p) => p,
        Err(_) => {
            if shared.waiting.fetch_add(1, Ordering::SeqCst) >= shared.cfg.queue as u64 {
                shared.waiting.fetch_sub(1, Ordering::SeqCst);
                shared.metrics.busy_refusals.fetch_add(1, Ordering::Relaxed);
                return (
                    Err(Fault::new(
                        BUSY_CODE,
                        format!(
                            "server busy: {} trace calls are already queued; retry later",
                            shared.cfg.queue
                        ),
                    )),
                    None,
                );
            }
            shared.metrics.queued.fetch_add(1, Ordering::Relaxed);
            let place = Queued(shared);
            let waited = timeout_at(deadline, shared.workers.clone().acquire_owned()).await;
            drop(place);
            match waited {
                Ok(Ok(p)) => p,
                _ => return (Err(timed_out()), None),
            }
        }
    };
    let worker = shared.clone();
    let method_owned = method.to_string();
    // In flight from the moment the worker is taken until it is given back: a call counted
    // out of `in_flight` has released its worker (the metrics never show an idle server that
    // would refuse a call as busy).
    struct Running<'a> {
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
        metrics: &'a Metrics,
    }
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            drop(self.permit.take());
            self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
    shared.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<Done>();
    // A worker that panics drops `done_tx`: the call is answered as crashed.
    drop(tokio::task::spawn_blocking(move || {
        // The worker is held until the replay really ends, even if the caller stopped waiting
        // (its upstream requests end by the deadline).
        let _running = Running {
            permit: Some(permit),
            metrics: &worker.metrics,
        };
        let ctx = Ctx {
            upstream: &worker.cfg.upstream,
            rpc_timeout: worker.cfg.rpc_timeout,
            cache: worker.cfg.cache.as_ref(),
            memo: &worker.memo,
            mode: worker.cfg.mode,
            max_response,
            chain_rules: worker.cfg.chain_rules,
            op_config: worker.cfg.op_config.as_ref(),
            deadline: deadline.into_std(),
            gas_cap: worker.cfg.rpc_gas_cap,
            max_filter_blocks: worker.cfg.max_filter_blocks,
            index: worker.index.as_deref(),
            stream,
        };
        // The replay itself stops at the deadline too, freeing this worker.
        // And at what the response may still take, in bytes held (never less than
        // WORK_BYTES, the room any replay may use to work): a tracer's record (call inputs,
        // memory, JavaScript values) ends the call with "response too large" as it grows past
        // it, not the process with an out-of-memory.
        let work = max_response.max(WORK_BYTES);
        let out = crate::replay::cancel::within(ctx.deadline, Some(work), || match family {
            Family::Simulate => methods::answer(&ctx, |source, outcome| {
                super::simulate::answer(&ctx, source, &params, outcome)
            }),
            Family::Parity => methods::answer(&ctx, |source, outcome| {
                super::parity::dispatch(&ctx, source, &method_owned, &params, outcome)
                    .map(Reply::Text)
            }),
            Family::Ots => methods::answer(&ctx, |source, outcome| {
                super::ots::dispatch(&ctx, source, &method_owned, &params, outcome).map(Reply::Text)
            }),
            // Making the tracer (a JavaScript one's engine, a muxTracer's children) is part of
            // the call's work: it counts against the deadline and the byte budget.
            Family::Geth => match methods::trace_opts(params.get(opts_index)) {
                Ok(_) if crate::replay::cancel::passed() => {
                    methods::Outcome::failed(match crate::replay::cancel::stopped() {
                        crate::replay::ReplayError::OverBudget => methods::too_large(),
                        _ => timed_out(),
                    })
                }
                Ok(opts) => {
                    // A block asked by number may continue a walk: the blocks after it are
                    // prepared, and this one, if a preparation holds it, is waited for rather
                    // than replayed twice.
                    let walk = match method_owned.as_str() {
                        "debug_traceBlockByNumber" => worker.ahead.walk(&ctx, &params),
                        _ => Ok(None),
                    };
                    match walk {
                        Ok(_held) => methods::dispatch(&ctx, &method_owned, &params, opts),
                        Err(f) => methods::Outcome::failed(f),
                    }
                }
                Err(f) => methods::Outcome::failed(f),
            },
        });
        worker
            .metrics
            .upstream_requests
            .fetch_add(out.upstream_requests, Ordering::Relaxed);
        if out.cache_hit {
            worker.metrics.cache_hits.fetch_add(1, Ordering::Relaxed);
        }
        // A large result is handed over as chunks and written here, on the worker, which is
        // held until it is sent (or the client is gone or stops reading).
        let (result, writer) = match out.result {
            Ok(Reply::Text(t)) => (Ok(Sent::Text(t)), None),
            Ok(Reply::Stream(s)) => {
                let (chunks, writer) = super::stream::channel(worker.cfg.request_timeout);
                (Ok(Sent::Chunks(s.len, chunks)), Some((s, writer)))
            }
            Err(f) => (Err(f), None),
        };
        let log = TraceLog {
            upstream_requests: out.upstream_requests,
            cache_hit: out.cache_hit,
            divergence: out.divergence,
            warnings: out.warnings,
            notes: out.notes,
        };
        let _ = done_tx.send(Done { result, log });
        if let Some((s, writer)) = writer {
            writer.send(s);
        }
    }));
    match timeout_at(deadline, done_rx).await {
        Ok(Ok(Done { result, log })) => {
            let result = match result {
                // The upstream gave up at the deadline: the deadline's error.
                Err(_) if Deadline::now() >= deadline => Err(timed_out()),
                // A replay that disagrees with the chain's receipt is not the chain's trace (a
                // result being written stops as its chunks are dropped).
                Ok(_) if log.divergence.is_some() && !shared.cfg.allow_divergent => {
                    let d = log.divergence.as_deref().unwrap_or_default();
                    Err(scrub(
                        shared,
                        Fault::new(
                            DIVERGED_CODE,
                            format!(
                                "the replay differs from the chain's receipt ({d}), so its trace \
                                 is not the chain's; serve --allow-divergent answers it anyway"
                            ),
                        ),
                    ))
                }
                r => r.map_err(|f| scrub(shared, f)),
            };
            (result, Some(log))
        }
        // The worker panicked before handing its result over.
        Ok(Err(_)) => (Err(Fault::new(CRASHED_CODE, CRASHED)), None),
        Err(_) => (Err(timed_out()), None),
    }
}

/// Errors name the upstream only redacted (the client and source already do; this is the
/// last line of defence for text quoted from elsewhere).
fn scrub(shared: &Shared, mut f: Fault) -> Fault {
    if f.message.contains(&shared.cfg.upstream) {
        f.message = f.message.replace(&shared.cfg.upstream, &shared.redacted);
    }
    f
}

/// Sends one request object to the upstream unchanged and returns its answer unchanged, by
/// the deadline (waiting for a forwarding slot included).
async fn forward(
    shared: &Arc<Shared>,
    req: Value,
    method: &str,
    started: Instant,
    deadline: Deadline,
) -> Answer {
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let (answer, outcome) =
        match timeout_at(deadline, shared.forwards.clone().acquire_owned()).await {
            Err(_) => (Answer::error(&id, TIMEOUT_CODE, TIMEOUT), "timeout"),
            Ok(Err(_)) => (Answer::error(&id, CRASHED_CODE, CRASHED), "error"),
            Ok(Ok(permit)) => {
                let client = shared.upstream.clone().ending_by(deadline.into_std());
                let body = req.to_string();
                drop(req);
                let method_owned = method.to_string();
                let job = tokio::task::spawn_blocking(move || {
                    let _permit = permit;
                    client.forward(&method_owned, &body)
                });
                shared
                    .metrics
                    .upstream_requests
                    .fetch_add(1, Ordering::Relaxed);
                match timeout_at(deadline, job).await {
                    Ok(Ok(Ok(text))) => {
                        let a = Answer::forwarded(text);
                        if a.payload > shared.cfg.max_response {
                            (Answer::error(&id, TOO_LARGE_CODE, TOO_LARGE), "error")
                        } else {
                            (a, "forwarded")
                        }
                    }
                    Ok(Ok(Err(_))) | Err(_) if Deadline::now() >= deadline => {
                        (Answer::error(&id, TIMEOUT_CODE, TIMEOUT), "timeout")
                    }
                    Ok(Ok(Err(e))) => (
                        Answer::error(
                            &id,
                            -32000,
                            &scrub(shared, Fault::new(0, e.to_string())).message,
                        ),
                        "upstream-error",
                    ),
                    Err(_) => (Answer::error(&id, TIMEOUT_CODE, TIMEOUT), "timeout"),
                    Ok(Err(_)) => (Answer::error(&id, CRASHED_CODE, CRASHED), "error"),
                }
            }
        };
    let secs = started.elapsed().as_secs_f64();
    shared.metrics.record(method, outcome, secs);
    log_line(&json!({"method": method, "id": id, "outcome": outcome,
        "ms": (secs * 1e3 * 10.0).round() / 10.0, "upstreamRequests": 1}));
    answer
}
