//! `chaintrace serve`: geth's debug API over any plain node.
//!
//! A JSON-RPC 2.0 HTTP server (single and batch requests, axum on the project's one tokio
//! runtime). `debug_traceTransaction`, `debug_traceBlockByNumber`, `debug_traceBlockByHash`,
//! `debug_traceCall` and `debug_traceStateAccess` are answered from local replay
//! ([`methods`]); every other method is forwarded to the upstream unchanged, so the server can
//! be a client's only URL.
//!
//! Built for load:
//! * a bounded pool of trace workers (blocking threads, default one per core) and a bounded
//!   queue in front of it; a call that finds the queue full is refused at once with
//!   [`BUSY_CODE`] instead of growing memory;
//! * a per-request deadline (geth's "request timed out", -32002), request body, batch and
//!   response size limits (geth's "response too large", -32003);
//! * one memory cache of block pre-states plus the on-disk cache, and per-key locks, so
//!   concurrent requests for the same block or transaction fetch its state once;
//! * graceful shutdown on SIGINT/SIGTERM: no new connections, calls in flight finish (each is
//!   bounded by the request deadline); a second signal exits at once.
//!
//! Safe defaults: loopback only unless `--auth-token` (Bearer) or `--insecure`; the upstream
//! URL's credentials appear in no response and no log line (errors name it redacted).

pub mod memo;
pub mod methods;
pub mod metrics;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::replay::mined::StateMode;
use crate::rpc::{redact_url, RpcClient};
use crate::source::cache::Cache;
use memo::Memo;
use methods::{Ctx, Fault, TRACED};
use metrics::Metrics;

/// JSON-RPC code of a call refused because the work queue is full (EIP-1474 "limit exceeded").
pub const BUSY_CODE: i64 = -32005;

/// Everything `serve` is configured with.
pub struct ServeConfig {
    /// The upstream node (may carry credentials; never printed unredacted).
    pub upstream: String,
    pub listen: SocketAddr,
    /// Trace workers (calls replayed at once).
    pub workers: usize,
    /// Trace calls allowed to wait for a worker; more are refused as busy.
    pub queue: usize,
    /// Deadline of one call, queueing included.
    pub request_timeout: Duration,
    /// Timeout of one upstream HTTP attempt.
    pub rpc_timeout: Duration,
    pub max_body: usize,
    pub max_response: usize,
    pub max_batch: usize,
    pub auth_token: Option<String>,
    pub insecure: bool,
    pub cache: Option<Cache>,
    pub mode: StateMode,
    /// Memory cache bound, in state entries.
    pub memo_entries: usize,
    /// `--chain-rules`: the rules the upstream runs, instead of asking it.
    pub chain_rules: Option<crate::chain::rules::Ruleset>,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on {0} without authentication: give --auth-token TOKEN (clients send \
         `Authorization: Bearer TOKEN`) or --insecure"
    )]
    Unsafe(SocketAddr),
    #[error("cannot listen on {addr}: {err}")]
    Bind {
        addr: SocketAddr,
        err: std::io::Error,
    },
    #[error("{0}")]
    Upstream(String),
    #[error("server failed: {0}")]
    Io(std::io::Error),
}

struct Shared {
    cfg: ServeConfig,
    redacted: String,
    upstream: RpcClient,
    workers: Arc<Semaphore>,
    forwards: Arc<Semaphore>,
    waiting: AtomicU64,
    memo: Memo,
    metrics: Metrics,
}

/// Runs the server until SIGINT/SIGTERM; `ready` is told the bound address first.
pub fn run(cfg: ServeConfig, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    if !cfg.listen.ip().is_loopback() && cfg.auth_token.is_none() && !cfg.insecure {
        return Err(ServeError::Unsafe(cfg.listen));
    }
    let upstream = RpcClient::new(&cfg.upstream, cfg.rpc_timeout)
        .map_err(|e| ServeError::Upstream(e.to_string()))?;
    let shared = Arc::new(Shared {
        redacted: redact_url(&cfg.upstream),
        upstream,
        workers: Arc::new(Semaphore::new(cfg.workers.max(1))),
        forwards: Arc::new(Semaphore::new((cfg.workers.max(1) * 8).max(16))),
        waiting: AtomicU64::new(0),
        memo: Memo::new(cfg.memo_entries),
        metrics: Metrics::default(),
        cfg,
    });
    let rt = crate::rpc::transport::runtime();
    rt.block_on(async move {
        let addr = shared.cfg.listen;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|err| ServeError::Bind { addr, err })?;
        let bound = listener.local_addr().map_err(ServeError::Io)?;
        let app = Router::new()
            .route("/", post(rpc))
            .route("/metrics", get(metrics_text))
            .layer(DefaultBodyLimit::max(shared.cfg.max_body))
            .with_state(shared.clone());
        ready(bound);
        log_line(&json!({"event": "listening", "addr": bound.to_string(),
            "upstream": shared.redacted, "workers": shared.cfg.workers,
            "queue": shared.cfg.queue}));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal(shared.clone()))
            .await
            .map_err(ServeError::Io)?;
        log_line(&json!({"event": "stopped",
            "inFlight": shared.metrics.in_flight.load(Ordering::Relaxed)}));
        Ok(())
    })
}

/// Resolves on the first SIGINT/SIGTERM; a second one exits the process at once.
async fn shutdown_signal(shared: Arc<Shared>) {
    wait_signal().await;
    log_line(&json!({"event": "shutdown", "inFlight":
        shared.metrics.in_flight.load(Ordering::Relaxed),
        "queued": shared.metrics.queued.load(Ordering::Relaxed)}));
    tokio::spawn(async {
        wait_signal().await;
        log_line(&json!({"event": "killed"}));
        std::process::exit(130);
    });
}

async fn wait_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// One structured log line on stderr (JSON, so it can be collected as is).
fn log_line(v: &Value) {
    eprintln!("{v}");
}

async fn metrics_text(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Err(r) = authorize(&shared, &headers) {
        return *r;
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        shared.metrics.render(),
    )
        .into_response()
}

/// Bearer token check (constant time in the token's length).
fn authorize(shared: &Shared, headers: &HeaderMap) -> Result<(), Box<Response>> {
    let Some(token) = &shared.cfg.auth_token else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    let same = given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
        Ok(())
    } else {
        Err(Box::new(
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "missing or invalid bearer token\n",
            )
                .into_response(),
        ))
    }
}

/// A JSON-RPC error response in geth's key order (`jsonrpc`, `id`, `error`).
fn error_object(id: Value, code: i64, message: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":{}}}}}",
        serde_json::to_string(&id).unwrap_or_else(|_| "null".into()),
        serde_json::to_string(message).unwrap_or_else(|_| "\"\"".into())
    )
}

fn json_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn rpc(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(r) = authorize(&shared, &headers) {
        return *r;
    }
    let parsed: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return json_response(error_object(Value::Null, -32700, "parse error")),
    };
    match parsed {
        Value::Array(items) => {
            if items.is_empty() {
                return json_response(error_object(Value::Null, -32600, "empty batch"));
            }
            if items.len() > shared.cfg.max_batch {
                return json_response(error_object(Value::Null, -32600, "batch too large"));
            }
            let mut set = tokio::task::JoinSet::new();
            let n = items.len();
            for (i, item) in items.into_iter().enumerate() {
                let shared = shared.clone();
                set.spawn(async move { (i, answer(shared, item).await) });
            }
            let mut answers: Vec<Option<String>> = vec![None; n];
            while let Some(done) = set.join_next().await {
                if let Ok((i, a)) = done {
                    answers[i] = Some(a);
                }
            }
            let mut out = String::from("[");
            let mut total = 0usize;
            for (i, a) in answers.into_iter().enumerate() {
                let a = a.unwrap_or_else(|| error_object(Value::Null, -32603, "internal error"));
                total += a.len();
                if total > shared.cfg.max_response {
                    return json_response(error_object(Value::Null, -32003, "response too large"));
                }
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&a);
            }
            out.push(']');
            json_response(out)
        }
        one => json_response(answer(shared, one).await),
    }
}

/// Answers one request object: its JSON text.
async fn answer(shared: Arc<Shared>, req: Value) -> String {
    let started = Instant::now();
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let valid = req.is_object() && req.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let Some(method) = method.filter(|_| valid) else {
        shared.metrics.record("", "invalid", 0.0);
        return error_object(id, -32600, "invalid request");
    };
    let params = req.get("params").cloned().unwrap_or(json!([]));
    if !TRACED.contains(&method.as_str()) {
        return forward(&shared, req, &method, started).await;
    }
    let (result, log) = traced(&shared, &method, params).await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(f) if f.code == BUSY_CODE => "busy",
        Err(f) if f.code == -32002 => "timeout",
        Err(_) => "error",
    };
    let secs = started.elapsed().as_secs_f64();
    shared.metrics.record(&method, outcome, secs);
    let mut line = json!({"method": method, "id": id, "outcome": outcome,
        "ms": (secs * 1e3 * 10.0).round() / 10.0});
    if let Some((upstream, hit, divergence)) = log {
        line["upstreamRequests"] = json!(upstream);
        line["cacheHit"] = json!(hit);
        if let Some(d) = divergence {
            line["selfCheck"] = json!(format!("FAILED: {d}"));
        }
    }
    if let Err(f) = &result {
        line["error"] = json!(f.message);
    }
    log_line(&line);
    match result {
        Ok(text) => {
            let id = serde_json::to_string(&id).unwrap_or_else(|_| "null".into());
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{text}}}")
        }
        Err(f) => error_object(id, f.code, &f.message),
    }
}

type TraceLog = Option<(u64, bool, Option<String>)>;

/// Queues a traced call for a worker, under the request deadline.
async fn traced(
    shared: &Arc<Shared>,
    method: &str,
    params: Value,
) -> (Result<String, Fault>, TraceLog) {
    let opts_index = match method {
        "debug_traceCall" => 2,
        _ => 1,
    };
    let opts = match methods::trace_opts(params.get(opts_index)) {
        Ok(o) => o,
        Err(f) => return (Err(f), None),
    };
    let deadline = opts
        .timeout
        .map(|t| t.min(shared.cfg.request_timeout))
        .unwrap_or(shared.cfg.request_timeout);
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
            let waited =
                tokio::time::timeout(deadline, shared.workers.clone().acquire_owned()).await;
            shared.waiting.fetch_sub(1, Ordering::SeqCst);
            shared.metrics.queued.fetch_sub(1, Ordering::Relaxed);
            match waited {
                Ok(Ok(p)) => p,
                _ => return (Err(Fault::new(-32002, "request timed out")), None),
            }
        }
    };
    let worker = shared.clone();
    let method_owned = method.to_string();
    let job = tokio::task::spawn_blocking(move || {
        // The permit is held until the replay really ends, even if the caller stopped waiting.
        let _permit = permit;
        worker.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
        let ctx = Ctx {
            upstream: &worker.cfg.upstream,
            rpc_timeout: worker.cfg.rpc_timeout,
            cache: worker.cfg.cache.as_ref(),
            memo: &worker.memo,
            mode: worker.cfg.mode,
            max_response: worker.cfg.max_response,
            chain_rules: worker.cfg.chain_rules,
        };
        let out = methods::dispatch(&ctx, &method_owned, &params, opts);
        worker
            .metrics
            .upstream_requests
            .fetch_add(out.upstream_requests, Ordering::Relaxed);
        if out.cache_hit {
            worker.metrics.cache_hits.fetch_add(1, Ordering::Relaxed);
        }
        worker.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        out
    });
    match tokio::time::timeout(deadline, job).await {
        Ok(Ok(out)) => {
            let log = Some((out.upstream_requests, out.cache_hit, out.divergence));
            (out.result.map_err(|f| scrub(shared, f)), log)
        }
        Ok(Err(_)) => (
            Err(Fault::new(-32603, "internal error: the replay failed")),
            None,
        ),
        Err(_) => (Err(Fault::new(-32002, "request timed out")), None),
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

/// Sends one request object to the upstream unchanged and returns its answer unchanged.
async fn forward(shared: &Arc<Shared>, req: Value, method: &str, started: Instant) -> String {
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let Ok(_permit) = shared.forwards.clone().acquire_owned().await else {
        return error_object(id, -32603, "internal error");
    };
    let client = shared.upstream.clone();
    let body = req.to_string();
    let method_owned = method.to_string();
    let sent = tokio::task::spawn_blocking(move || client.forward(&method_owned, &body)).await;
    shared
        .metrics
        .upstream_requests
        .fetch_add(1, Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    let (text, outcome) = match sent {
        Ok(Ok(text)) => (text, "forwarded"),
        Ok(Err(e)) => (
            error_object(
                id.clone(),
                -32000,
                &scrub(shared, Fault::new(0, e.to_string())).message,
            ),
            "upstream-error",
        ),
        Err(_) => (error_object(id.clone(), -32603, "internal error"), "error"),
    };
    shared.metrics.record(method, outcome, secs);
    log_line(&json!({"method": method, "id": id, "outcome": outcome,
        "ms": (secs * 1e3 * 10.0).round() / 10.0, "upstreamRequests": 1}));
    text
}
