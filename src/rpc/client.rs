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

pub use super::error::RpcError;
use super::transport::Failure;
pub use super::url::redact_url;
use super::url::{base64, percent_decode, split_url, url_secrets};

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

/// What kind of JSON value `v` is, in words ("a string", "null").
pub fn json_kind(v: &Value) -> &'static str {
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

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
