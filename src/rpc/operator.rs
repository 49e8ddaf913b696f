//! A small blocking GET client for a node's operator interface (CometBFT RPC over HTTP, port
//! 26657), used by the node tools and by replays of chains 1329/1328 (`--consensus-rpc`).
//!
//! The operator endpoints are plain GETs that answer JSON, either wrapped in a JSON-RPC envelope
//! (`{"jsonrpc":"2.0","result":…}`) or bare; [`OperatorClient::get`] returns the payload either
//! way. There are no retries: an operator asking "is my node alive?" wants the first answer,
//! and a hung node must show up as a timeout after `--timeout` seconds, not after a backoff.

use std::time::Duration;

use serde_json::Value;

use super::redact_url;
use super::transport::Failure;

/// Why a GET to the operator interface failed.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The operator URL cannot be used.
    #[error("invalid node URL {0}")]
    BadUrl(String),
    /// No HTTP answer: connection refused, DNS failure, reset.
    #[error("GET {path}: cannot reach {url}: {reason}; is the node running and its RPC (laddr, port 26657) reachable from here?")]
    Unreachable {
        url: String,
        path: String,
        reason: String,
    },
    /// The node accepted the connection but did not answer in time.
    #[error("GET {path}: {url} did not answer within {secs} s; the node may be overloaded or hung (raise --timeout to wait longer)")]
    Timeout {
        url: String,
        path: String,
        secs: u64,
    },
    /// An HTTP error status.
    #[error("GET {path}: HTTP {status} from {url}")]
    Http {
        url: String,
        path: String,
        status: u16,
    },
    /// An answer that is not the expected JSON.
    #[error("GET {path}: unusable answer from {url}: {reason}")]
    BadResponse {
        url: String,
        path: String,
        reason: String,
    },
}

/// Largest answer accepted; `/net_info` of a well-connected node is a few hundred KB.
const BODY_LIMIT: u64 = 64 << 20;

/// A client for one node's operator interface.
#[derive(Debug, Clone)]
pub struct OperatorClient {
    base: String,
    redacted: String,
    timeout: Duration,
}

impl OperatorClient {
    /// A client for `url` (`http://host:26657`; `tcp://`, as config.toml's `laddr` writes it,
    /// is accepted as http). `timeout` bounds each request, connection included.
    pub fn new(url: &str, timeout: Duration) -> Result<OperatorClient, OperatorError> {
        let url = url.trim().trim_end_matches('/');
        let url = match url.strip_prefix("tcp://") {
            Some(rest) => format!("http://{rest}"),
            None => url.to_string(),
        };
        let redacted = redact_url(&url);
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(OperatorError::BadUrl(format!(
                "{redacted}: it must start with http://, https:// or tcp://"
            )));
        }
        if !super::transport::valid_url(&url) {
            return Err(OperatorError::BadUrl(format!(
                "{redacted}: it is not a valid URL"
            )));
        }
        let timeout = timeout.max(Duration::from_millis(1));
        Ok(OperatorClient {
            base: url,
            redacted,
            timeout,
        })
    }

    /// The URL, safe to print.
    pub fn redacted_url(&self) -> &str {
        &self.redacted
    }

    /// GETs `path` and returns its payload (`result` of a JSON-RPC envelope, else the body).
    pub fn get(&self, path: &str) -> Result<Value, OperatorError> {
        self.get_optional(path)?.ok_or_else(|| OperatorError::Http {
            url: self.redacted.clone(),
            path: path.to_string(),
            status: 404,
        })
    }

    /// Like [`get`](Self::get), but `None` when the node does not serve `path` (HTTP 404 or a
    /// JSON-RPC "method not found"): not every build exposes every endpoint.
    pub fn get_optional(&self, path: &str) -> Result<Option<Value>, OperatorError> {
        let bad = |reason: String| OperatorError::BadResponse {
            url: self.redacted.clone(),
            path: path.to_string(),
            reason,
        };
        let (status, text) =
            super::transport::get(&format!("{}{path}", self.base), self.timeout, BODY_LIMIT)
                .map_err(|e| self.transport(path, e))?;
        if status == 404 {
            return Ok(None);
        }
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        if !(200..300).contains(&status) {
            if let Ok(v) = &parsed {
                if is_method_not_found(v) {
                    return Ok(None);
                }
            }
            return Err(OperatorError::Http {
                url: self.redacted.clone(),
                path: path.to_string(),
                status,
            });
        }
        let v = parsed.map_err(|e| bad(format!("not JSON ({e})")))?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            if is_method_not_found(&v) {
                return Ok(None);
            }
            return Err(bad(format!("the node answered with an error: {err}")));
        }
        Ok(Some(match v {
            Value::Object(mut o) if o.contains_key("result") => {
                o.remove("result").unwrap_or_default()
            }
            other => other,
        }))
    }

    fn transport(&self, path: &str, e: Failure) -> OperatorError {
        match e {
            Failure::Timeout => self.timeout_error(path),
            Failure::TooLarge | Failure::Protocol(_) => OperatorError::BadResponse {
                url: self.redacted.clone(),
                path: path.to_string(),
                reason: e.reason(),
            },
            other => OperatorError::Unreachable {
                url: self.redacted.clone(),
                path: path.to_string(),
                reason: other.reason(),
            },
        }
    }

    fn timeout_error(&self, path: &str) -> OperatorError {
        OperatorError::Timeout {
            url: self.redacted.clone(),
            path: path.to_string(),
            secs: self.timeout.as_secs_f64().ceil() as u64,
        }
    }
}

fn is_method_not_found(v: &Value) -> bool {
    let Some(err) = v.get("error") else {
        return false;
    };
    let code = err.get("code").and_then(Value::as_i64);
    let text = err.to_string().to_ascii_lowercase();
    code == Some(-32601) || text.contains("method not found")
}
