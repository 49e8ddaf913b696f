//! Tests of the JSON-RPC client against a throwaway loopback HTTP server.

use super::*;
use crate::rpc::url::{base64, percent_decode};
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
            proptest::collection::vec(item.clone(), 0..5).prop_map(|v| Value::Array(v).to_string()),
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
    // Not 4 x 30 s: the deadline bounds every attempt and the retries (the bound is loose so
    // that a loaded machine's scheduling cannot fail it; an unbounded attempt takes 30 s).
    assert!(took < Duration::from_secs(5), "took {took:?}");
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
