//! A small blocking GET client for a node's operator interface (CometBFT RPC over HTTP).
//!
//! The operator endpoints are plain GETs that answer JSON, either wrapped in a JSON-RPC envelope
//! (`{"jsonrpc":"2.0","result":…}`) or bare; [`OperatorClient::get`] returns the payload either
//! way. There are no retries: an operator asking "is my node alive?" wants the first answer,
//! and a hung node must show up as a timeout after `--timeout` seconds, not after a backoff.

use std::time::Duration;

use serde_json::Value;

use super::NodeError;
use crate::rpc::redact_url;
use crate::rpc::transport::Failure;

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
    pub fn new(url: &str, timeout: Duration) -> Result<OperatorClient, NodeError> {
        let url = url.trim().trim_end_matches('/');
        let url = match url.strip_prefix("tcp://") {
            Some(rest) => format!("http://{rest}"),
            None => url.to_string(),
        };
        let redacted = redact_url(&url);
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(NodeError::BadUrl(format!(
                "{redacted}: it must start with http://, https:// or tcp://"
            )));
        }
        if !crate::rpc::transport::valid_url(&url) {
            return Err(NodeError::BadUrl(format!(
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
    pub fn get(&self, path: &str) -> Result<Value, NodeError> {
        self.get_optional(path)?.ok_or_else(|| NodeError::Http {
            url: self.redacted.clone(),
            path: path.to_string(),
            status: 404,
        })
    }

    /// Like [`get`](Self::get), but `None` when the node does not serve `path` (HTTP 404 or a
    /// JSON-RPC "method not found"): not every build exposes every endpoint.
    pub fn get_optional(&self, path: &str) -> Result<Option<Value>, NodeError> {
        let bad = |reason: String| NodeError::BadResponse {
            url: self.redacted.clone(),
            path: path.to_string(),
            reason,
        };
        let (status, text) =
            crate::rpc::transport::get(&format!("{}{path}", self.base), self.timeout, BODY_LIMIT)
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
            return Err(NodeError::Http {
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

    fn transport(&self, path: &str, e: Failure) -> NodeError {
        match e {
            Failure::Timeout => self.timeout_error(path),
            Failure::TooLarge | Failure::Protocol(_) => NodeError::BadResponse {
                url: self.redacted.clone(),
                path: path.to_string(),
                reason: e.reason(),
            },
            other => NodeError::Unreachable {
                url: self.redacted.clone(),
                path: path.to_string(),
                reason: other.reason(),
            },
        }
    }

    fn timeout_error(&self, path: &str) -> NodeError {
        NodeError::Timeout {
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
