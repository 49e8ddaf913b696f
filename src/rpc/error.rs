//! What can go wrong talking to a node, each failure in the user's words: the method, the
//! (redacted) URL, the node's own message and a hint where one helps.

/// Errors from talking to a node. Every message names the JSON-RPC method and, where a URL
/// appears, it is the [redacted](super::redact_url) one.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The URL given to [`super::RpcClient::new`] cannot be used (already redacted).
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
