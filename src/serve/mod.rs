//! `chaintrace serve`: geth's debug API over any plain node.
//!
//! A JSON-RPC 2.0 HTTP server (single and batch requests, axum on the project's one tokio
//! runtime). `debug_traceTransaction`, `debug_traceBlockByNumber`, `debug_traceBlockByHash`,
//! `debug_traceCall` and `debug_traceStateAccess` are answered from local replay
//! ([`methods`]), and so are reth's `trace_*` ([`parity`]) and Otterscan's `ots_*` ([`ots`]);
//! every other method is forwarded to the upstream unchanged, so the server can be a client's
//! only URL (a browser's too, for the origins `--cors-origin` names).
//!
//! Built for load:
//! * a bounded pool of trace workers (blocking threads, default one per core) and a bounded
//!   queue in front of it; a call that finds the queue full is refused at once with
//!   [`BUSY_CODE`] instead of growing memory;
//! * one deadline per request (`--request-timeout`; a batch shares one, as in geth), applied
//!   once from the moment the body is read: queueing, replay and forwarded calls all end by
//!   it, with geth's "request timed out" (-32002); the upstream requests of a call stop at it
//!   too, and so does every pass of its replay, speculative or traced, freeing the worker;
//! * what a call's replay holds (its tracer's record above all) counts against what the
//!   response may still take (at least 32 MiB) as it grows: past it, -32003 "response too
//!   large" at once, never an out-of-memory;
//! * simulated calls run with at most geth's RPC gas cap (`--rpc-gas-cap`, 50,000,000), what
//!   a block override says notwithstanding; a muxTracer runs at most 64 tracers;
//! * request body, batch and response size limits; a batch's answers are counted against
//!   `--max-response` in order as they are produced (a bounded window runs ahead), and past
//!   the limit the rest are answered with geth's "response too large" (-32003), exactly as
//!   go-ethereum's `handleBatch` does;
//! * slow clients are cut off: hyper's header read timeout (idle keep-alive connections
//!   included) and a body read timeout, both `--read-timeout`; a client that half-closes its
//!   side after sending a request still gets the answer;
//! * a call that panics is answered with geth's -32603 "method handler crashed", and no shared
//!   lock stays poisoned: later calls are unaffected;
//! * one memory cache of block pre-states plus the on-disk cache, and per-key locks, so
//!   concurrent requests for the same block or transaction fetch its state once;
//! * graceful shutdown on SIGINT/SIGTERM: no new connections, calls in flight finish (each is
//!   bounded by the request deadline); a second signal exits at once.
//!
//! Safe defaults: loopback only unless `--auth-token` (Bearer) or `--insecure`; the upstream
//! URL's credentials appear in no response and no log line (errors name it redacted).

mod ahead;
mod calls;
mod conn;
mod filter;
pub mod indexed;
mod ots_search;
mod stream;
mod upstream;

use calls::rpc;
use conn::serve_connections;
pub mod memo;
pub mod methods;
pub mod metrics;
pub mod ots;
pub mod parity;
pub mod simulate;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
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
use metrics::Metrics;

/// JSON-RPC code of a call refused because the work queue is full (EIP-1474 "limit exceeded").
pub const BUSY_CODE: i64 = -32005;

/// geth's default `--rpc.gascap`: the most gas a simulated call runs with.
pub const DEFAULT_RPC_GAS_CAP: u64 = 50_000_000;

pub use ahead::DEFAULT_AHEAD;
pub use filter::DEFAULT_MAX_FILTER_BLOCKS;

/// Everything `serve` is configured with.
pub struct ServeConfig {
    /// The upstream node (may carry credentials; never printed unredacted).
    pub upstream: String,
    pub listen: SocketAddr,
    /// Trace workers (calls replayed at once).
    pub workers: usize,
    /// Trace calls allowed to wait for a worker; more are refused as busy.
    pub queue: usize,
    /// Deadline of one request (a batch: all its calls), queueing included.
    pub request_timeout: Duration,
    /// Time a client has to send a request's headers (idle keep-alive connections are closed
    /// after it), and again its body.
    pub read_timeout: Duration,
    /// Timeout of one upstream HTTP attempt.
    pub rpc_timeout: Duration,
    pub max_body: usize,
    pub max_response: usize,
    pub max_batch: usize,
    /// geth's RPC gas cap for simulated calls (0: none).
    pub rpc_gas_cap: u64,
    /// The address index to answer history queries from and keep current (`--index DIR`).
    pub index: Option<std::path::PathBuf>,
    /// How often the index is brought up to the node's head.
    pub index_poll: Duration,
    /// Blocks prepared past one a client walking the chain asked (`--ahead`; 0: none).
    pub ahead: u64,
    /// Most blocks `trace_filter` replays for one request (`toBlock - fromBlock`, reth's rule).
    pub max_filter_blocks: u64,
    /// Answer a replay that failed its self-check with its trace (`--allow-divergent`);
    /// otherwise with an error naming the divergence.
    pub allow_divergent: bool,
    pub auth_token: Option<String>,
    pub insecure: bool,
    pub cache: Option<Cache>,
    pub mode: StateMode,
    /// Memory cache bound, in state entries.
    pub memo_entries: usize,
    /// `--chain-rules`: the rules the upstream runs, instead of asking it.
    pub chain_rules: Option<crate::chain::rules::Ruleset>,
    /// `--chain-config`: a custom OP-stack chain's fork schedule.
    pub op_config: Option<crate::chain::op::OpChainConfig>,
    /// `--cors-origin`: the web origins whose pages may call the server from a browser
    /// (`*`: any), as geth's `--http.corsdomain`; none by default.
    pub cors_origins: Vec<String>,
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
    #[error("{0}")]
    Index(String),
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
    memo: Arc<Memo>,
    ahead: Arc<ahead::Ahead>,
    index: Option<Arc<indexed::Indexed>>,
    metrics: Metrics,
}

/// Runs the server until SIGINT/SIGTERM; `ready` is told the bound address first.
pub fn run(cfg: ServeConfig, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    if !cfg.listen.ip().is_loopback() && cfg.auth_token.is_none() && !cfg.insecure {
        return Err(ServeError::Unsafe(cfg.listen));
    }
    let upstream = RpcClient::new(&cfg.upstream, cfg.rpc_timeout)
        .map_err(|e| ServeError::Upstream(e.to_string()))?;
    let memo = Arc::new(Memo::new(cfg.memo_entries));
    let background = upstream::Upstream {
        url: cfg.upstream.clone(),
        rpc_timeout: cfg.rpc_timeout,
        chain_rules: cfg.chain_rules,
        op_config: cfg.op_config.clone(),
    };
    let ahead = Arc::new(ahead::Ahead::new(
        ahead::AheadConfig {
            upstream: background.clone(),
            timeout: cfg.request_timeout,
            budget: cfg.max_response.max(calls::WORK_BYTES),
            blocks: cfg.ahead,
        },
        memo.clone(),
    ));
    let index = match &cfg.index {
        None => None,
        Some(dir) => {
            let (ix, notes) = indexed::Indexed::open(dir, background).map_err(ServeError::Index)?;
            for n in notes {
                log_line(&json!({"event": "index", "note": n}));
            }
            let ix = Arc::new(ix);
            ix.clone().follow(cfg.index_poll);
            Some(ix)
        }
    };
    let shared = Arc::new(Shared {
        redacted: redact_url(&cfg.upstream),
        upstream,
        workers: Arc::new(Semaphore::new(cfg.workers.max(1))),
        forwards: Arc::new(Semaphore::new((cfg.workers.max(1) * 8).max(16))),
        waiting: AtomicU64::new(0),
        memo,
        ahead,
        index,
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
            .route("/", post(rpc).options(preflight))
            .route("/metrics", get(metrics_text))
            .layer(axum::middleware::from_fn_with_state(shared.clone(), cors))
            .with_state(shared.clone());
        ready(bound);
        log_line(&json!({"event": "listening", "addr": bound.to_string(),
            "upstream": shared.redacted, "workers": shared.cfg.workers,
            "queue": shared.cfg.queue}));
        serve_connections(listener, app, &shared).await;
        log_line(&json!({"event": "stopped",
            "inFlight": shared.metrics.in_flight.load(Ordering::Relaxed)}));
        Ok(())
    })
}

/// Accepts connections until the first signal, each served by hyper's HTTP/1 server with a
/// header read timeout; then waits for the open connections to finish their requests.
/// One structured log line on stderr (JSON, so it can be collected as is), written at once:
/// stderr is unbuffered, and `Value`'s `Display` writes each token on its own (a request's
/// line was some forty `write` calls).
fn log_line(v: &Value) {
    let mut line = v.to_string();
    line.push('\n');
    eprint!("{line}");
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

/// The request's `Origin` when `--cors-origin` allows it (`*`: any).
fn allowed_origin(shared: &Shared, headers: &HeaderMap) -> Option<header::HeaderValue> {
    let origin = headers.get(header::ORIGIN)?;
    let text = origin.to_str().ok()?;
    shared
        .cfg
        .cors_origins
        .iter()
        .any(|o| o == "*" || o.eq_ignore_ascii_case(text))
        .then(|| origin.clone())
}

/// A browser's CORS preflight: allowed origins may POST JSON with a bearer token.
async fn preflight(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    if allowed_origin(&shared, &headers).is_some() {
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            header::HeaderValue::from_static("POST, GET, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            header::HeaderValue::from_static("content-type, authorization"),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            header::HeaderValue::from_static("600"),
        );
    }
    r
}

/// Every answer to an allowed origin names it (`Access-Control-Allow-Origin`), so a page
/// there (Otterscan in a browser) may read it; others get no CORS header, as before.
async fn cors(
    State(shared): State<Arc<Shared>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let origin = allowed_origin(&shared, req.headers());
    let mut r = next.run(req).await;
    if let Some(origin) = origin {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.append(header::VARY, header::HeaderValue::from_static("Origin"));
    }
    r
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
