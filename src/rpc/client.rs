//! A blocking JSON-RPC 2.0 client over HTTP POST.
//!
//! Why it looks the way it does:
//!
//! * **Blocking API, async transport.** A replay waits on every answer anyway, so callers get a
//!   plain function call; underneath, requests go through the project's one HTTP stack
//!   ([`super::transport`]: reqwest on a shared tokio runtime, which `serve` also runs on).
//!   Round trips are cut with batching.
//! * **Batching with id matching.** [`RpcClient::batch`] sends one HTTP request holding a JSON
//!   array. The JSON-RPC spec lets nodes answer batch items in any order, so answers are matched
//!   to calls by `id`, and a missing, duplicated or unknown id is an error rather than a silent
//!   mix-up (a reordered answer would otherwise hand one slot's storage value to another).
//!   Batches are cut into chunks of at most [`MAX_BATCH_SIZE`] calls because providers cap batch
//!   sizes. Nodes and proxies that refuse batches are detected once and then served with single
//!   calls for the rest of the client's life, sent in parallel but at most [`MAX_IN_FLIGHT`] at
//!   a time so a rate-limited endpoint is not flooded.
//! * **Bounded retries.** Hosted nodes rate-limit (HTTP 429) and hiccup (502/503/504, dropped
//!   connections, timeouts). Those are retried with exponential backoff (200, 400, 800 ms; at most
//!   three retries), inside an overall budget of `timeout * 4`, so a dead node can never stall a
//!   run for longer than that. A node that refuses connections before the client has ever
//!   reached it is retried on a much shorter backoff: it is most likely not running, and the user
//!   should hear about it fast.
//! * **Redaction.** RPC URLs of hosted providers embed API keys. Errors name the URL only
//!   through [`redact_url`], and text echoed from the node is scrubbed of the URL's secrets.
//! * **Counters.** [`RpcClient::stats`] counts HTTP requests and JSON-RPC calls so tests can
//!   assert that a replay costs few round trips.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use super::transport::Failure;

/// Most calls sent in one HTTP request; bigger batches are split into sequential chunks.
/// Providers commonly cap batches at 500 to 1000 calls.
pub const MAX_BATCH_SIZE: usize = 500;

/// Most single requests open at once when a node that refuses batches is served call by call.
pub const MAX_IN_FLIGHT: usize = 8;
/// Retries after the first attempt for retryable failures.
const MAX_RETRIES: u32 = 3;
/// First backoff delay; doubled on every retry (200, 400, 800 ms).
const BACKOFF_BASE: Duration = Duration::from_millis(200);
/// Backoff used when a never-reached node refuses connections: it is probably not running.
const QUICK_BACKOFF_BASE: Duration = Duration::from_millis(50);
/// An attempt is not started with less than this much of the overall budget left.
const MIN_ATTEMPT: Duration = Duration::from_millis(50);
/// Largest response body accepted. Full opcode traces of big transactions run to hundreds of MB.
const BODY_LIMIT: u64 = 1 << 30;
/// Characters of a response body quoted in error messages.
const SNIPPET_CHARS: usize = 200;

/// Errors from talking to a node. Every message names the JSON-RPC method and, where a URL
/// appears, it is the [redacted](redact_url) one.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The URL given to [`RpcClient::new`] cannot be used (already redacted).
    #[error("invalid RPC URL {0}")]
    BadUrl(String),
    /// No HTTP response at all: connection refused or reset, DNS failure, TLS failure.
    #[error("{method}: cannot reach {url}: {reason}; is the node running at {url}?")]
    Unreachable {
        url: String,
        method: String,
        reason: String,
    },
    /// The node answered with an HTTP error status and no usable JSON-RPC response.
    #[error("{method} failed: HTTP {status} from {url}{}{}", body_suffix(.body), http_hint(.status))]
    Http {
        url: String,
        method: String,
        status: u16,
        body: String,
    },
    /// The node answered the call with a JSON-RPC error object.
    #[error("{method} failed: {message} (code {code}){}", node_hint(.method, .code, .message))]
    Node {
        method: String,
        code: i64,
        message: String,
    },
    /// The node's answer is not a usable JSON-RPC response (truncated JSON, wrong ids, ...).
    #[error("{method}: the node sent an unusable response: {reason}")]
    BadResponse { method: String, reason: String },
    /// The node did not answer in time, after retries.
    #[error(
        "{method} timed out waiting for {url}; the node may be overloaded or the request too \
         heavy, retry later or raise the timeout"
    )]
    Timeout { url: String, method: String },
}

impl RpcError {
    /// True when the node says it does not offer the method (e.g. `debug_*` on a public node),
    /// so callers can fall back to another way of getting the same data.
    pub fn is_method_not_found(&self) -> bool {
        matches!(self, RpcError::Node { code, message, .. } if is_method_not_found(*code, message))
    }
}

fn body_suffix(body: &str) -> String {
    if body.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", body.trim())
    }
}

fn http_hint(status: &u16) -> &'static str {
    match *status {
        401 | 403 => "; check the API key or credentials in the RPC URL",
        404 => "; check the path of the RPC URL",
        413 => "; the request is too large for this node",
        429 => "; the node is rate limiting requests, wait or use another endpoint",
        500..=599 => "; the node is failing, retry later or use another endpoint",
        _ => "",
    }
}

fn is_method_not_found(code: i64, message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    code == -32601
        || m.contains("method not found")
        || m.contains("does not exist/is not available")
        || m.contains("unsupported method")
        || m.contains("method not supported")
        || m.contains("not whitelisted")
}

fn node_hint(method: &str, code: &i64, message: &str) -> String {
    let m = message.to_ascii_lowercase();
    if is_method_not_found(*code, message) {
        if method.starts_with("debug_") || method.starts_with("trace_") {
            format!(
                "; the node does not serve {method}: enable its debug API (e.g. geth \
                 --http.api eth,net,web3,debug) or use a provider that offers tracing"
            )
        } else {
            format!("; the node does not serve {method}")
        }
    } else if m.contains("missing trie node")
        || m.contains("historical state")
        || m.contains("state histor")
        || m.contains("pruned")
        || m.contains("archive")
    {
        "; the node has no state for that block, use an archive node".to_string()
    } else {
        String::new()
    }
}

/// Counters of traffic sent by one client (shared by its clones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RpcStats {
    /// HTTP requests attempted, retries included: each one is a network round trip.
    pub requests: u64,
    /// JSON-RPC calls asked of the client (`call` counts 1, `batch` counts its length),
    /// regardless of how they travelled.
    pub calls: u64,
}

/// A JSON-RPC 2.0 client for one node. Cheap to clone; clones share connections, ids and
/// counters.
#[derive(Clone)]
pub struct RpcClient {
    inner: Arc<Inner>,
    /// When set, no request (retries included) runs past it ([`RpcClient::ending_by`]).
    deadline: Option<Instant>,
}

struct Inner {
    /// The URL put on the wire: no userinfo (sent as an Authorization header), no fragment.
    endpoint: String,
    redacted: String,
    auth_header: Option<String>,
    /// The URL's secrets, scrubbed from every message.
    secrets: crate::redact::Redactor,
    timeout: Duration,
    next_id: AtomicU64,
    requests: AtomicU64,
    calls: AtomicU64,
    /// Set once the node refused a batch; later batches go out as single calls.
    batch_unsupported: AtomicBool,
    /// Set once any HTTP response arrived; before that, refused connections retry quickly.
    reached: AtomicBool,
}

impl fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcClient")
            .field("url", &self.inner.redacted)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// A request on the wire; borrowed so batch params are serialized without cloning.
#[derive(Serialize)]
struct WireRequest<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a Value,
}

/// Why one HTTP attempt failed.
enum Attempt {
    /// Worth another attempt; `refused` selects the quick backoff for never-reached nodes.
    Transient {
        err: RpcError,
        refused: bool,
    },
    Fatal(RpcError),
}

impl RpcClient {
    /// A client for the node at `url` (http:// or https://). `timeout` bounds each HTTP attempt;
    /// a whole call, retries included, is bounded by `timeout * 4`.
    ///
    /// Credentials in the URL (`https://user:pass@host`) are sent as HTTP basic auth.
    pub fn new(url: &str, timeout: Duration) -> Result<RpcClient, RpcError> {
        let url = url.trim();
        let redacted = redact_url(url);
        let parts = split_url(url);
        let scheme = parts.scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(RpcError::BadUrl(format!(
                "{redacted}: it must start with http:// or https://"
            )));
        }
        if parts.host.is_empty() || parts.host.starts_with(':') {
            return Err(RpcError::BadUrl(format!("{redacted}: it names no host")));
        }
        let mut endpoint = format!("{scheme}://{}{}", parts.host, parts.path);
        if let Some(q) = parts.query {
            endpoint.push('?');
            endpoint.push_str(q);
        }
        if !super::transport::valid_url(&endpoint) {
            return Err(RpcError::BadUrl(format!(
                "{redacted}: it is not a valid URL"
            )));
        }
        let auth_header = parts.userinfo.map(|info| {
            let (user, pass) = info.split_once(':').unwrap_or((info, ""));
            let mut creds = percent_decode(user);
            creds.push(b':');
            creds.extend(percent_decode(pass));
            format!("Basic {}", base64(&creds))
        });
        let timeout = timeout.max(Duration::from_millis(1));
        Ok(RpcClient {
            inner: Arc::new(Inner {
                endpoint,
                secrets: {
                    let mut r = crate::redact::Redactor::default();
                    url_secrets(url).iter().for_each(|s| r.add_exact(s));
                    r
                },
                redacted,
                auth_header,
                timeout,
                next_id: AtomicU64::new(1),
                requests: AtomicU64::new(0),
                calls: AtomicU64::new(0),
                batch_unsupported: AtomicBool::new(false),
                reached: AtomicBool::new(false),
            }),
            deadline: None,
        })
    }

    /// This client with every request, retries included, ending by `deadline` (a timeout
    /// error past it): `serve` bounds the upstream work of a call by the call's deadline.
    pub fn ending_by(mut self, deadline: Instant) -> RpcClient {
        self.deadline = Some(deadline);
        self
    }

    /// The node URL with credentials and keys removed, safe to print.
    pub fn redacted_url(&self) -> &str {
        &self.inner.redacted
    }

    /// The per-attempt timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Traffic counters since the client was created.
    pub fn stats(&self) -> RpcStats {
        RpcStats {
            requests: self.inner.requests.load(Ordering::Relaxed),
            calls: self.inner.calls.load(Ordering::Relaxed),
        }
    }

    /// Calls `method` with `params` (usually a JSON array) in one HTTP request (plus retries).
    pub fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.inner.calls.fetch_add(1, Ordering::Relaxed);
        self.call_inner(method, &params)
    }

    /// Sends `body` (a JSON-RPC request object or batch) as is and returns the node's answer
    /// as is, once it is JSON: `serve` forwards what it does not answer itself. Retries and
    /// redaction as for every call; an HTTP error without a JSON body is an error.
    pub fn forward(&self, method: &str, body: &str) -> Result<String, RpcError> {
        self.inner.calls.fetch_add(1, Ordering::Relaxed);
        let (status, text) = self.post(method, body)?;
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&text) {
            if !is_success(status) {
                return Err(self.http_error(method, status, &text));
            }
            return Err(self.unparseable(method, &text, &e));
        }
        Ok(text)
    }

    /// Calls every `(method, params)` pair, in as few HTTP requests as possible: one per
    /// [`MAX_BATCH_SIZE`] calls, or one per call if the node refuses batches.
    ///
    /// The outer `Err` means the batch as a whole failed (node unreachable, HTTP error, garbled
    /// or mismatched answer). Otherwise the results line up with `calls`, and a call the node
    /// rejected is an `Err(RpcError::Node { .. })` in its slot.
    pub fn batch(
        &self,
        calls: &[(String, Value)],
    ) -> Result<Vec<Result<Value, RpcError>>, RpcError> {
        self.inner
            .calls
            .fetch_add(calls.len() as u64, Ordering::Relaxed);
        let mut out = Vec::with_capacity(calls.len());
        for chunk in calls.chunks(MAX_BATCH_SIZE) {
            if chunk.len() == 1 || self.inner.batch_unsupported.load(Ordering::Relaxed) {
                out.extend(self.singles(chunk)?);
                continue;
            }
            match self.batch_chunk(chunk)? {
                Some(results) => out.extend(results),
                None => {
                    self.inner.batch_unsupported.store(true, Ordering::Relaxed);
                    out.extend(self.singles(chunk)?);
                }
            }
        }
        Ok(out)
    }

    /// Sends each call on its own, at most [`MAX_IN_FLIGHT`] at a time; node-level failures stay
    /// per item, like in a batch.
    fn singles(&self, chunk: &[(String, Value)]) -> Result<Vec<Result<Value, RpcError>>, RpcError> {
        let one = |(method, params): &(String, Value)| match self.call_inner(method, params) {
            Err(e @ (RpcError::Node { .. } | RpcError::BadResponse { .. })) => Ok(Err(e)),
            other => other.map(Ok),
        };
        if chunk.len() <= 1 {
            return chunk.iter().map(one).collect();
        }
        // Workers take the next index from a shared counter, so no more than MAX_IN_FLIGHT
        // requests are open at once however long the chunk is.
        let next = AtomicU64::new(0);
        type Slot = std::sync::Mutex<Option<Result<Result<Value, RpcError>, RpcError>>>;
        let slots: Vec<Slot> = chunk.iter().map(|_| Slot::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..MAX_IN_FLIGHT.min(chunk.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(call) = chunk.get(i) else { break };
                    *slots[i].lock().unwrap() = Some(one(call));
                });
            }
        });
        slots
            .into_iter()
            .map(|m| m.into_inner().unwrap().expect("every call was sent"))
            .collect()
    }

    fn next_ids(&self, n: usize) -> u64 {
        self.inner.next_id.fetch_add(n as u64, Ordering::Relaxed)
    }

    fn call_inner(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        let id = self.next_ids(1);
        let body = serde_json::to_string(&WireRequest {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map_err(|e| self.bad(method, format!("cannot encode the request: {e}")))?;
        let (status, text) = self.post(method, &body)?;
        let parsed: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) if is_success(status) => return Err(self.unparseable(method, &text, &e)),
            Err(_) => return Err(self.http_error(method, status, &text)),
        };
        let obj = match parsed {
            Value::Object(obj) => obj,
            _ if !is_success(status) => return Err(self.http_error(method, status, &text)),
            other => {
                return Err(self.bad(
                    method,
                    format!(
                        "expected a JSON-RPC response object, got {}",
                        json_kind(&other)
                    ),
                ))
            }
        };
        let has_error = obj.get("error").is_some_and(|e| !e.is_null());
        if !is_success(status) && !has_error {
            return Err(self.http_error(method, status, &text));
        }
        match obj.get("id") {
            Some(v) if parse_id(v) == Some(id) => {}
            // Errors about requests the node could not read carry a null id.
            Some(Value::Null) | None if has_error => {}
            Some(v) => {
                return Err(self.bad(
                    method,
                    format!("the response id {v} does not match the request id {id}"),
                ))
            }
            None => return Err(self.bad(method, "the response has no id".to_string())),
        }
        self.outcome(method, obj)
    }

    /// Sends one chunk as a JSON array. `Ok(None)` means the node refused the batch itself.
    fn batch_chunk(
        &self,
        chunk: &[(String, Value)],
    ) -> Result<Option<Vec<Result<Value, RpcError>>>, RpcError> {
        let n = chunk.len();
        let first = self.next_ids(n);
        let wire: Vec<WireRequest<'_>> = chunk
            .iter()
            .zip(first..)
            .map(|((method, params), id)| WireRequest {
                jsonrpc: "2.0",
                id,
                method,
                params,
            })
            .collect();
        let label = batch_label(chunk);
        let body = serde_json::to_string(&wire)
            .map_err(|e| self.bad(&label, format!("cannot encode the request: {e}")))?;
        let (status, text) = self.post(&label, &body)?;

        let parsed: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) if is_success(status) => return Err(self.unparseable(&label, &text, &e)),
            Err(_) if batch_refusal_status(status) => return Ok(None),
            Err(_) => return Err(self.http_error(&label, status, &text)),
        };
        let items = match parsed {
            Value::Array(items) => items,
            // A single error object instead of an array: the node does not do batches.
            Value::Object(o) if o.get("error").is_some_and(|e| !e.is_null()) => {
                return if matches!(status, 401 | 403 | 407) {
                    Err(self.http_error(&label, status, &text))
                } else {
                    Ok(None)
                };
            }
            _ if batch_refusal_status(status) => return Ok(None),
            _ if !is_success(status) => return Err(self.http_error(&label, status, &text)),
            other => {
                return Err(self.bad(
                    &label,
                    format!("expected an array of responses, got {}", json_kind(&other)),
                ))
            }
        };

        let mut slots: Vec<Option<Result<Value, RpcError>>> = (0..n).map(|_| None).collect();
        // An error with a null id answers no call in particular (e.g. "too many requests").
        let mut anonymous: Option<Value> = None;
        for item in items {
            let Value::Object(obj) = item else {
                return Err(self.bad(&label, "a batch item is not a JSON object".to_string()));
            };
            let id_val = obj.get("id").cloned().unwrap_or(Value::Null);
            if id_val.is_null() {
                match obj.get("error") {
                    Some(e) if !e.is_null() => {
                        anonymous.get_or_insert_with(|| e.clone());
                        continue;
                    }
                    _ => return Err(self.bad(&label, "a batch item has no id".to_string())),
                }
            }
            let idx = parse_id(&id_val)
                .and_then(|id| id.checked_sub(first))
                .filter(|i| *i < n as u64)
                .ok_or_else(|| {
                    self.bad(
                        &label,
                        format!("the node answered id {id_val}, which is not in the batch"),
                    )
                })? as usize;
            if slots[idx].is_some() {
                return Err(self.bad(&label, format!("the node answered id {id_val} twice")));
            }
            slots[idx] = Some(self.outcome(&chunk[idx].0, obj));
        }
        if anonymous.is_some() && slots.iter().all(Option::is_none) {
            // Nothing was answered, only a blanket error: treat it as a refused batch.
            return Ok(None);
        }
        let mut out = Vec::with_capacity(n);
        for (i, slot) in slots.into_iter().enumerate() {
            match (slot, &anonymous) {
                (Some(result), _) => out.push(result),
                (None, Some(err)) => out.push(Err(self.node_error(&chunk[i].0, err))),
                (None, None) => {
                    return Err(self.bad(
                        &label,
                        format!("no answer for id {} ({})", first + i as u64, chunk[i].0),
                    ))
                }
            }
        }
        Ok(Some(out))
    }

    /// Turns one response object into the call's result.
    fn outcome(&self, method: &str, mut obj: Map<String, Value>) -> Result<Value, RpcError> {
        if let Some(err) = obj.remove("error").filter(|e| !e.is_null()) {
            return Err(self.node_error(method, &err));
        }
        obj.remove("result").ok_or_else(|| {
            self.bad(
                method,
                "the response has neither a result nor an error".to_string(),
            )
        })
    }

    fn node_error(&self, method: &str, err: &Value) -> RpcError {
        let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = match err {
            Value::String(s) => s.clone(),
            _ => match err.get("message").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => err.to_string(),
            },
        };
        RpcError::Node {
            method: method.to_string(),
            code,
            message: self.scrub(&message),
        }
    }

    /// One HTTP exchange, retried on transient failures within `timeout * (MAX_RETRIES + 1)`.
    /// Returns the final status and body; retryable statuses that persist become errors.
    fn post(&self, label: &str, body: &str) -> Result<(u16, String), RpcError> {
        let inner = &*self.inner;
        let mut deadline = Instant::now() + inner.timeout * (MAX_RETRIES + 1);
        if let Some(end) = self.deadline {
            deadline = deadline.min(end);
        }
        let mut attempt = 0u32;
        loop {
            let budget = deadline
                .saturating_duration_since(Instant::now())
                .min(inner.timeout)
                .max(Duration::from_millis(1));
            let (err, refused) = match self.send_once(label, body, budget) {
                Ok((status, text)) if !should_retry(status, &text) => return Ok((status, text)),
                Ok((status, text)) => (self.http_error(label, status, &text), false),
                Err(Attempt::Fatal(e)) => return Err(e),
                Err(Attempt::Transient { err, refused }) => (err, refused),
            };
            if attempt >= MAX_RETRIES {
                return Err(err);
            }
            let base = if refused && !inner.reached.load(Ordering::Relaxed) {
                QUICK_BACKOFF_BASE
            } else {
                BACKOFF_BASE
            };
            let delay = base * 2u32.pow(attempt);
            if Instant::now() + delay + MIN_ATTEMPT >= deadline {
                return Err(err);
            }
            std::thread::sleep(delay);
            attempt += 1;
        }
    }

    fn send_once(
        &self,
        label: &str,
        body: &str,
        budget: Duration,
    ) -> Result<(u16, String), Attempt> {
        let inner = &*self.inner;
        inner.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = super::transport::client()
            .post(&inner.endpoint)
            .timeout(budget)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if let Some(auth) = &inner.auth_header {
            req = req.header("authorization", auth);
        }
        let req = req.body(body.to_string());
        let answer = super::transport::block_on(super::transport::send(req, BODY_LIMIT));
        match answer {
            Ok(ok) => {
                inner.reached.store(true, Ordering::Relaxed);
                Ok(ok)
            }
            Err(f) => Err(self.classify(label, f)),
        }
    }

    /// Sorts a transport failure into retryable or not, as the error the user will see.
    fn classify(&self, method: &str, f: Failure) -> Attempt {
        let transient = |err| Attempt::Transient {
            err,
            refused: false,
        };
        match f {
            Failure::Timeout => transient(self.timeout_error(method)),
            Failure::Refused => Attempt::Transient {
                err: self.unreachable(method, &f.reason()),
                refused: true,
            },
            Failure::Closed { in_body: true } => transient(self.bad(method, f.reason())),
            Failure::Closed { in_body: false } | Failure::Connect(_) => {
                transient(self.unreachable(method, &f.reason()))
            }
            Failure::Dns => Attempt::Fatal(self.unreachable(method, &f.reason())),
            Failure::TooLarge | Failure::Protocol(_) => {
                Attempt::Fatal(self.bad(method, f.reason()))
            }
            Failure::BadUrl => Attempt::Fatal(RpcError::BadUrl(format!(
                "{}: it is not a valid URL",
                self.inner.redacted
            ))),
        }
    }

    fn timeout_error(&self, method: &str) -> RpcError {
        RpcError::Timeout {
            url: self.inner.redacted.clone(),
            method: method.to_string(),
        }
    }

    fn unreachable(&self, method: &str, reason: &str) -> RpcError {
        RpcError::Unreachable {
            url: self.inner.redacted.clone(),
            method: method.to_string(),
            reason: self.scrub(reason),
        }
    }

    fn http_error(&self, method: &str, status: u16, body: &str) -> RpcError {
        RpcError::Http {
            url: self.inner.redacted.clone(),
            method: method.to_string(),
            status,
            body: snippet(&self.scrub(body)),
        }
    }

    fn bad(&self, method: &str, reason: String) -> RpcError {
        RpcError::BadResponse {
            method: method.to_string(),
            reason: self.scrub(&reason),
        }
    }

    fn unparseable(&self, method: &str, text: &str, e: &serde_json::Error) -> RpcError {
        let what = if text.trim().is_empty() {
            "the response body is empty".to_string()
        } else if e.is_eof() {
            format!("the JSON response is truncated after {} bytes", text.len())
        } else {
            format!("the response is not valid JSON ({e})")
        };
        let shown = snippet(text);
        if shown.is_empty() {
            self.bad(method, what)
        } else {
            self.bad(method, format!("{what}: {shown}"))
        }
    }

    /// Removes the URL's secrets from text that came from the node or the network stack.
    fn scrub(&self, text: &str) -> String {
        self.inner.secrets.scrub(text)
    }
}

fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Statuses worth another attempt. A 500 carrying a JSON-RPC answer is the node's real reply
/// (some nodes report call errors that way), so it is not retried.
fn should_retry(status: u16, text: &str) -> bool {
    match status {
        429 | 502 | 503 | 504 => true,
        500..=599 => !looks_like_jsonrpc(text),
        _ => false,
    }
}

fn looks_like_jsonrpc(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(_)) => true,
        Ok(Value::Object(o)) => o.contains_key("result") || o.contains_key("error"),
        _ => false,
    }
}

/// 4xx answers to a batch that mean "no batches here" (400, 404, 405, 413, ...), as opposed to
/// authentication failures, which single calls would not fix either.
fn batch_refusal_status(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 401 | 403 | 407 | 429)
}

fn parse_id(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Names a batch in messages: its size and its distinct methods.
fn batch_label(chunk: &[(String, Value)]) -> String {
    let mut methods: Vec<&str> = Vec::new();
    for (m, _) in chunk {
        if !methods.contains(&m.as_str()) {
            methods.push(m);
        }
    }
    let mut names = methods
        .iter()
        .take(3)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if methods.len() > 3 {
        names.push_str(", ...");
    }
    format!("batch of {} calls ({names})", chunk.len())
}

/// The first [`SNIPPET_CHARS`] characters of `text`, trimmed, marked when cut.
fn snippet(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// The pieces of a URL, split without validation so that even malformed input is redacted.
struct UrlParts<'a> {
    scheme: &'a str,
    userinfo: Option<&'a str>,
    host: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split_url(url: &str) -> UrlParts<'_> {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i], &url[i + 3..]),
        None => ("", url),
    };
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let rest = &rest[auth_end..];
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    UrlParts {
        scheme,
        userinfo,
        host,
        path,
        query,
        fragment,
    }
}

/// A path segment or bare query word that looks like an API key: 16+ characters of
/// `[A-Za-z0-9_-]` including a digit.
fn looks_like_key(s: &str) -> bool {
    s.len() >= 16
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Path segments to hide: key-like ones, and everything after a `/v2/` or `/v3/` segment
/// (Alchemy, Infura and many others put the key there).
fn secret_segments(path: &str) -> Vec<bool> {
    let mut after_version = false;
    path.split('/')
        .map(|seg| {
            let secret = !seg.is_empty() && (after_version || looks_like_key(seg));
            if seg.eq_ignore_ascii_case("v2") || seg.eq_ignore_ascii_case("v3") {
                after_version = true;
            }
            secret
        })
        .collect()
}

/// `url` with everything that could be a credential replaced, so it can be printed.
///
/// Drops `user:pass@`, replaces query values with `***` (keeping the keys), replaces path
/// segments that look like API keys or follow `/v2/` or `/v3/` with `***`, and hides any
/// fragment. Works on malformed input too, since that is exactly when errors get printed.
///
/// ```
/// use chaintrace::rpc::redact_url;
/// assert_eq!(redact_url("https://user:pw@host/x"), "https://host/x");
/// assert_eq!(
///     redact_url("https://eth-mainnet.g.alchemy.com/v2/abcDEF123456789xyz"),
///     "https://eth-mainnet.g.alchemy.com/v2/***"
/// );
/// assert_eq!(redact_url("https://rpc.example/?apikey=secret"), "https://rpc.example/?apikey=***");
/// assert_eq!(redact_url("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
/// ```
pub fn redact_url(url: &str) -> String {
    let parts = split_url(url.trim());
    let mut out = String::with_capacity(url.len());
    if !parts.scheme.is_empty() {
        out.push_str(parts.scheme);
        out.push_str("://");
    }
    out.push_str(parts.host);
    let segments: Vec<&str> = parts.path.split('/').collect();
    let hide = secret_segments(parts.path);
    let path: Vec<&str> = segments
        .iter()
        .zip(&hide)
        .map(|(seg, h)| if *h { "***" } else { seg })
        .collect();
    out.push_str(&path.join("/"));
    if let Some(q) = parts.query {
        out.push('?');
        let pairs: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if !v.is_empty() => format!("{k}=***"),
                Some(_) => pair.to_string(),
                None if looks_like_key(pair) => "***".to_string(),
                None => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    if parts.fragment.is_some_and(|f| !f.is_empty()) {
        out.push_str("#***");
    }
    out
}

/// Every substring of `url` that [`redact_url`] hides, for scrubbing echoed text.
fn url_secrets(url: &str) -> Vec<String> {
    let parts = split_url(url);
    let mut secrets = vec![url.to_string()];
    if let Some(info) = parts.userinfo {
        secrets.push(format!("{info}@"));
        for piece in info.split(':') {
            secrets.push(piece.to_string());
            secrets.push(String::from_utf8_lossy(&percent_decode(piece)).into_owned());
        }
    }
    for (seg, hide) in parts.path.split('/').zip(secret_segments(parts.path)) {
        if hide {
            secrets.push(seg.to_string());
        }
    }
    if let Some(q) = parts.query {
        for pair in q.split('&') {
            match pair.split_once('=') {
                Some((_, v)) => secrets.push(v.to_string()),
                None if looks_like_key(pair) => secrets.push(pair.to_string()),
                None => {}
            }
        }
    }
    if let Some(f) = parts.fragment {
        secrets.push(f.to_string());
    }
    // Very short pieces would mangle unrelated text; longest first so overlaps hide fully.
    secrets.retain(|s| s.len() >= 4);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

fn percent_decode(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

fn base64(input: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::Mutex;
    use std::thread;

    /// A request as the test server saw it.
    struct Seen {
        head: String,
        body: String,
    }

    /// A throwaway HTTP/1.1 server on 127.0.0.1. Every response says `Connection: close`, so
    /// each request arrives on a fresh connection; `handler(n, request)` returns the raw
    /// response for the n-th request, or `None` to accept and never answer.
    fn serve(mut handler: impl FnMut(usize, &Seen) -> Option<String> + Send + 'static) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let Some(seen) = read_request(&mut stream) else {
                    continue;
                };
                match handler(n, &seen) {
                    Some(resp) => {
                        let _ = stream.write_all(resp.as_bytes());
                    }
                    // Hold the connection open until the client gives up.
                    None => {
                        thread::spawn(move || {
                            let mut buf = [0u8; 256];
                            while matches!(stream.read(&mut buf), Ok(k) if k > 0) {}
                        });
                    }
                }
            }
        });
        format!("http://{addr}")
    }

    fn read_request(stream: &mut TcpStream) -> Option<Seen> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let k = stream.read(&mut chunk).ok()?;
            if k == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..k]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let k = stream.read(&mut chunk).ok()?;
            if k == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..k]);
        }
        let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
        Some(Seen { head, body })
    }

    fn http(status: u16, body: &str) -> String {
        format!(
            "HTTP/1.1 {status} Whatever\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    /// Answers a request object with `result = "<method>:<params[0]>"`.
    fn echo_one(req: &Value) -> Value {
        let result = format!("{}:{}", req["method"].as_str().unwrap(), req["params"][0]);
        json!({"jsonrpc": "2.0", "id": req["id"], "result": result})
    }

    fn echo(body: &str) -> String {
        let req: Value = serde_json::from_str(body).unwrap();
        let resp = match &req {
            Value::Array(items) => Value::Array(items.iter().map(echo_one).collect()),
            one => echo_one(one),
        };
        http(200, &resp.to_string())
    }

    fn client(url: &str) -> RpcClient {
        RpcClient::new(url, Duration::from_millis(500)).unwrap()
    }

    /// Whatever a node answers — any text, any ids, any shape — a call or a batch ends in a
    /// value or an error, never a panic, and every call of a batch gets exactly one answer.
    mod response_reader {
        use super::*;
        use proptest::prelude::*;

        /// Bodies near the real thing: JSON-RPC objects and arrays with stray, missing or
        /// repeated ids and odd members, plus arbitrary text.
        fn body() -> impl Strategy<Value = String> {
            let id = prop_oneof![
                (0u64..4).prop_map(|i| json!(i + 1)),
                Just(Value::Null),
                Just(json!("1")),
                Just(json!(-1)),
                Just(json!(1.5)),
            ];
            let member = prop_oneof![
                Just(("result", json!("0x1"))),
                Just(("result", Value::Null)),
                Just(("error", json!({"code": -32000, "message": "x"}))),
                Just(("error", json!("oops"))),
                Just(("jsonrpc", json!("1.0"))),
            ];
            let item = (id, proptest::collection::vec(member, 0..3)).prop_map(|(id, ms)| {
                let mut o = serde_json::Map::new();
                o.insert("id".into(), id);
                for (k, v) in ms {
                    o.insert(k.into(), v);
                }
                Value::Object(o)
            });
            prop_oneof![
                proptest::collection::vec(item.clone(), 0..5)
                    .prop_map(|v| Value::Array(v).to_string()),
                item.prop_map(|v| v.to_string()),
                "[ -~]{0,40}",
                proptest::collection::vec(any::<u8>(), 0..40)
                    .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
            ]
        }

        proptest! {
            // Statuses that are not retried (retries and their backoff are tested elsewhere).
            #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
            #[test]
            fn any_answer_is_a_value_or_an_error(text in body(), status in prop_oneof![Just(200u16), Just(400)]) {
                let reply = text.clone();
                let url = serve(move |_, _| Some(http(status, &reply)));
                let c = client(&url);
                let _ = c.call("eth_chainId", json!([]));
                if let Ok(answers) = c.batch(&calls(3)) {
                    prop_assert_eq!(answers.len(), 3);
                }
            }
        }
    }

    fn calls(n: usize) -> Vec<(String, Value)> {
        (0..n)
            .map(|i| ("eth_getBalance".to_string(), json!([i])))
            .collect()
    }

    #[test]
    fn redact_url_cases() {
        assert_eq!(redact_url("https://user:pw@host/x"), "https://host/x");
        assert_eq!(
            redact_url("https://eth-mainnet.g.alchemy.com/v2/abcDEF123456789xyz"),
            "https://eth-mainnet.g.alchemy.com/v2/***"
        );
        assert_eq!(
            redact_url("https://mainnet.infura.io/v3/0123456789abcdef"),
            "https://mainnet.infura.io/v3/***"
        );
        assert_eq!(
            redact_url("https://rpc.example/?apikey=secret"),
            "https://rpc.example/?apikey=***"
        );
        assert_eq!(
            redact_url("https://rpc.example/?a=1&b=&c"),
            "https://rpc.example/?a=***&b=&c"
        );
        assert_eq!(redact_url("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
        assert_eq!(
            redact_url("http://localhost:8545/"),
            "http://localhost:8545/"
        );
        assert_eq!(
            redact_url("https://x.quiknode.pro/0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d/"),
            "https://x.quiknode.pro/***/"
        );
        assert_eq!(
            redact_url("https://rpc.example/eth/mainnet"),
            "https://rpc.example/eth/mainnet"
        );
        assert_eq!(redact_url("https://h/#tok"), "https://h/#***");
        // Malformed input is still redacted.
        assert_eq!(redact_url("ftp://u:p@h/v2/k"), "ftp://h/v2/***");
        assert_eq!(redact_url("u:p@h:1/x"), "h:1/x");
    }

    #[test]
    fn new_validates_the_url() {
        for bad in [
            "ws://h:8546",
            "localhost:8545",
            "",
            "http://",
            "https:///v2/abc",
        ] {
            let err = RpcClient::new(bad, Duration::from_secs(1)).unwrap_err();
            assert!(matches!(err, RpcError::BadUrl(_)), "{bad}: {err}");
        }
        let err = RpcClient::new("wss://u:hunter22@h/v2/key", Duration::from_secs(1)).unwrap_err();
        assert!(!err.to_string().contains("hunter22") && !err.to_string().contains("key"));
        assert!(RpcClient::new("HTTPS://h/v2/k", Duration::from_secs(1)).is_ok());
        let c = RpcClient::new("https://u:p@h/v2/k", Duration::from_secs(1)).unwrap();
        assert!(!format!("{c:?}").contains("u:p"));
    }

    #[test]
    fn call_roundtrip_sends_basic_auth() {
        let auth = Arc::new(Mutex::new(String::new()));
        let seen_auth = auth.clone();
        let url = serve(move |_, req| {
            *seen_auth.lock().unwrap() = req.head.clone();
            Some(echo(&req.body))
        });
        let url = url.replace("http://", "http://user:pw@");
        let c = client(&url);
        let v = c.call("eth_chainId", json!([7])).unwrap();
        assert_eq!(v, json!("eth_chainId:7"));
        assert!(auth
            .lock()
            .unwrap()
            .contains("authorization: basic dxnlcjpwdw=="));
        assert_eq!(
            c.stats(),
            RpcStats {
                requests: 1,
                calls: 1
            }
        );
    }

    #[test]
    fn batch_matches_reordered_answers_by_id() {
        let url = serve(|_, req| {
            let items: Vec<Value> = serde_json::from_str(&req.body).unwrap();
            let mut answers: Vec<Value> = items.iter().map(echo_one).collect();
            answers.reverse();
            answers.swap(0, 1);
            Some(http(200, &Value::Array(answers).to_string()))
        });
        let c = client(&url);
        let out = c.batch(&calls(5)).unwrap();
        let got: Vec<Value> = out.into_iter().map(Result::unwrap).collect();
        let want: Vec<Value> = (0..5)
            .map(|i| json!(format!("eth_getBalance:{i}")))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            c.stats(),
            RpcStats {
                requests: 1,
                calls: 5
            }
        );
        assert!(c.batch(&[]).unwrap().is_empty());
        assert_eq!(c.stats().requests, 1);
    }

    #[test]
    fn batch_splits_into_chunks_of_500() {
        let url = serve(|_, req| Some(echo(&req.body)));
        let c = client(&url);
        let out = c.batch(&calls(1001)).unwrap();
        assert_eq!(out.len(), 1001);
        assert_eq!(out[1000].as_ref().unwrap(), &json!("eth_getBalance:1000"));
        assert_eq!(
            c.stats(),
            RpcStats {
                requests: 3,
                calls: 1001
            }
        );
    }

    #[test]
    fn node_error_objects_become_node_errors() {
        let url = serve(|_, req| {
            let v: Value = serde_json::from_str(&req.body).unwrap();
            let err = |r: &Value| {
                json!({"jsonrpc": "2.0", "id": r["id"], "error": {"code": -32601,
                    "message": "the method debug_traceTransaction does not exist/is not available"}})
            };
            let resp = match &v {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|r| {
                            if r["method"] == "debug_traceTransaction" {
                                err(r)
                            } else {
                                echo_one(r)
                            }
                        })
                        .collect(),
                ),
                one => err(one),
            };
            Some(http(200, &resp.to_string()))
        });
        let c = client(&url);
        let err = c
            .call("debug_traceTransaction", json!(["0x01"]))
            .unwrap_err();
        assert!(err.is_method_not_found());
        match &err {
            RpcError::Node { method, code, .. } => {
                assert_eq!((method.as_str(), *code), ("debug_traceTransaction", -32601));
            }
            other => panic!("expected a node error, got {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.starts_with("debug_traceTransaction failed: the method"),
            "{msg}"
        );
        assert!(msg.contains("(code -32601)"), "{msg}");
        assert!(
            msg.contains("the node does not serve debug_traceTransaction"),
            "{msg}"
        );

        let out = c
            .batch(&[
                ("eth_chainId".to_string(), json!([1])),
                ("debug_traceTransaction".to_string(), json!([2])),
            ])
            .unwrap();
        assert_eq!(out[0].as_ref().unwrap(), &json!("eth_chainId:1"));
        assert!(matches!(&out[1], Err(RpcError::Node { code: -32601, .. })));
        assert_eq!(c.stats().requests, 2);
    }

    #[test]
    fn http_429_is_retried() {
        let url = serve(|n, req| {
            Some(if n == 0 {
                http(429, "slow down")
            } else {
                echo(&req.body)
            })
        });
        let c = client(&url);
        let t = Instant::now();
        assert_eq!(
            c.call("eth_blockNumber", json!([])).unwrap(),
            json!("eth_blockNumber:null")
        );
        assert_eq!(c.stats().requests, 2);
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn persistent_503_ends_as_http_error() {
        let url = serve(|_, _| Some(http(503, "<html>overloaded</html>")));
        let c = RpcClient::new(
            &format!("{url}/v2/abcDEF123456789xyz"),
            Duration::from_millis(500),
        )
        .unwrap();
        let err = c.call("eth_blockNumber", json!([])).unwrap_err();
        assert!(matches!(err, RpcError::Http { status: 503, .. }), "{err:?}");
        assert_eq!(c.stats().requests, 4);
        let msg = err.to_string();
        assert!(msg.contains("/v2/***") && !msg.contains("abcDEF"), "{msg}");
        assert!(msg.contains("overloaded"), "{msg}");
    }

    #[test]
    fn truncated_json_is_a_bad_response() {
        let url = serve(|_, _| Some(http(200, r#"{"jsonrpc":"2.0","id":1,"result":"0x12"#)));
        let c = client(&url);
        let err = c.call("eth_getBalance", json!([])).unwrap_err();
        match &err {
            RpcError::BadResponse { method, reason } => {
                assert_eq!(method, "eth_getBalance");
                assert!(reason.contains("truncated"), "{reason}");
            }
            other => panic!("expected BadResponse, got {other:?}"),
        }
        assert_eq!(c.stats().requests, 1);
    }

    #[test]
    fn wrong_duplicate_or_missing_ids_are_bad_responses() {
        // The three servers answer a 2-call batch with: an unknown id, a duplicate, one missing.
        for mode in 0..3 {
            let url = serve(move |_, req| {
                let items: Vec<Value> = serde_json::from_str(&req.body).unwrap();
                let mut answers: Vec<Value> = items.iter().map(echo_one).collect();
                match mode {
                    0 => answers[1]["id"] = json!(999_999),
                    1 => answers[1]["id"] = answers[0]["id"].clone(),
                    _ => {
                        answers.pop();
                    }
                }
                Some(http(200, &Value::Array(answers).to_string()))
            });
            let err = client(&url).batch(&calls(2)).unwrap_err();
            assert!(
                matches!(err, RpcError::BadResponse { .. }),
                "mode {mode}: {err:?}"
            );
            assert!(
                err.to_string()
                    .starts_with("batch of 2 calls (eth_getBalance)"),
                "{err}"
            );
        }
        // A single call answered with someone else's id.
        let url = serve(|_, _| Some(http(200, r#"{"jsonrpc":"2.0","id":424242,"result":"0x1"}"#)));
        let err = client(&url).call("eth_chainId", json!([])).unwrap_err();
        assert!(matches!(err, RpcError::BadResponse { .. }), "{err:?}");
    }

    #[test]
    fn silent_server_times_out_within_budget() {
        let url = serve(|_, _| None);
        let c = client(&url);
        let t = Instant::now();
        let err = c.call("debug_traceTransaction", json!([])).unwrap_err();
        let took = t.elapsed();
        assert!(matches!(err, RpcError::Timeout { .. }), "{err:?}");
        // Bounded by timeout * (retries + 1), backoff included.
        assert!(took <= Duration::from_millis(2000 + 300), "took {took:?}");
        assert!(took >= Duration::from_millis(500), "took {took:?}");
        assert!(err.to_string().contains("timed out"), "{err}");
    }

    #[test]
    fn a_deadline_ends_the_retries_early() {
        let url = serve(|_, _| None);
        let c = RpcClient::new(&url, Duration::from_secs(30))
            .unwrap()
            .ending_by(Instant::now() + Duration::from_millis(400));
        let t = Instant::now();
        let err = c.forward("eth_chainId", "{}").unwrap_err();
        let took = t.elapsed();
        assert!(matches!(err, RpcError::Timeout { .. }), "{err:?}");
        // Not 4 x 30 s: the deadline bounds every attempt and the retries.
        assert!(took < Duration::from_millis(400 + 600), "took {took:?}");
        assert!(took >= Duration::from_millis(350), "took {took:?}");
    }

    #[test]
    fn batch_refusing_node_falls_back_to_single_calls() {
        let url = serve(|_, req| {
            Some(if req.body.starts_with('[') {
                http(
                    200,
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}"#,
                )
            } else {
                echo(&req.body)
            })
        });
        let c = client(&url);
        let out = c.batch(&calls(3)).unwrap();
        let got: Vec<Value> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(got[2], json!("eth_getBalance:2"));
        assert_eq!(c.stats().requests, 1 + 3);
        // Remembered: the next batch goes straight to single calls.
        let out = c.batch(&calls(2)).unwrap();
        assert!(out.iter().all(Result::is_ok));
        assert_eq!(
            c.stats(),
            RpcStats {
                requests: 1 + 3 + 2,
                calls: 5
            }
        );
    }

    #[test]
    fn batch_rejected_with_http_4xx_falls_back() {
        let url = serve(|_, req| {
            Some(if req.body.starts_with('[') {
                http(413, "<html>payload too large</html>")
            } else {
                echo(&req.body)
            })
        });
        let c = client(&url);
        let out = c.batch(&calls(2)).unwrap();
        assert_eq!(out[1].as_ref().unwrap(), &json!("eth_getBalance:1"));
        assert_eq!(c.stats().requests, 3);
    }

    #[test]
    fn refused_connection_retries_quickly_and_hides_the_key() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = RpcClient::new(
            &format!("http://127.0.0.1:{port}/v3/sekretKey1234567890"),
            Duration::from_secs(2),
        )
        .unwrap();
        let t = Instant::now();
        let err = c.call("eth_chainId", json!([])).unwrap_err();
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "took {:?}",
            t.elapsed()
        );
        assert!(matches!(err, RpcError::Unreachable { .. }), "{err:?}");
        assert_eq!(c.stats().requests, 4);
        let msg = err.to_string();
        assert!(!msg.contains("sekret"), "{msg}");
        assert!(
            msg.contains("is the node running at http://127.0.0.1"),
            "{msg}"
        );
    }

    #[test]
    fn helpers() {
        assert_eq!(base64(b"user:pw"), "dXNlcjpwdw==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(percent_decode("a%40b%2"), b"a@b%2");
        assert_eq!(snippet(&"x".repeat(300)).len(), 203);
    }
}
