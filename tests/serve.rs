//! `chaintrace serve` with real clients: raw JSON-RPC, `cast rpc` 1.7.1 and an ethers.js
//! script (both installed pinned by scripts/install-test-tools.sh) against a live anvil.
//! Results must equal `chaintrace tx --json` byte for byte and anvil's own debug API on the
//! fields where anvil agrees with geth; batches, forwarding, auth, overload and shutdown are
//! checked on the wire. A test that cannot start anvil, cast or node fails.

#[path = "support/anvil.rs"]
mod anvil;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/serve.rs"]
mod serve_support;

use proxy::run;
use serve_support::{raw_result, Serve};

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use alloy_primitives::B256;
use serde_json::{json, Value};

fn tx_json(url: &str, hash: B256, tracer: &[&str]) -> String {
    let out = run::cmd(&[])
        .args([
            "tx",
            &format!("{hash:?}"),
            "--rpc-url",
            url,
            "--json",
            "--no-cache",
        ])
        .args(tracer)
        .env_remove("ETH_RPC_URL")
        .env_remove("CHAINTRACE_CACHE_DIR")
        .output()
        .expect("run chaintrace tx");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools")
}

/// The call tree's shape and values, without what anvil computes differently from geth
/// (gas figures, log numbering, error wording: tests/live.rs holds the full comparison).
fn shape(frame: &Value) -> Value {
    let mut out = json!({});
    for k in ["type", "from", "to", "value", "input", "output"] {
        if let Some(v) = frame.get(k) {
            out[k] = v.clone();
        }
    }
    out["failed"] = json!(frame.get("error").is_some());
    let calls: Vec<Value> = frame
        .get("calls")
        .and_then(Value::as_array)
        .map(|c| c.iter().map(shape).collect())
        .unwrap_or_default();
    out["calls"] = Value::Array(calls);
    out
}

#[test]
fn traces_equal_tx_json_and_anvil() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let opcode_count = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tracers/opcode_count.js"),
    )
    .unwrap();
    let configs: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"tracer": "callTracer"}),
            vec!["--tracer".into(), "callTracer".into()],
        ),
        (
            json!({"tracer": "callTracer", "tracerConfig": {"withLog": true}}),
            vec![
                "--tracer".into(),
                "callTracer".into(),
                "--tracer-config".into(),
                r#"{"withLog":true}"#.into(),
            ],
        ),
        (
            json!({"tracer": "prestateTracer"}),
            vec!["--tracer".into(), "prestateTracer".into()],
        ),
        (
            json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
            vec![
                "--tracer".into(),
                "prestateTracer".into(),
                "--tracer-config".into(),
                r#"{"diffMode":true}"#.into(),
            ],
        ),
        (json!({}), vec!["--tracer".into(), "opcodeTracer".into()]),
        (
            json!({"tracer": opcode_count}),
            vec!["--tracer".into(), "tracers/opcode_count.js".into()],
        ),
    ];
    let mut compared = 0;
    for t in &s.txs {
        for (opts, flags) in &configs {
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            let got = serve.result("debug_traceTransaction", json!([t.hash, opts]));
            let want = tx_json(&s.url, t.hash, &flags);
            assert_eq!(got, want, "{} with {opts}", t.label);
            compared += 1;
        }
        let ours: Value = serde_json::from_str(&serve.result(
            "debug_traceTransaction",
            json!([t.hash, {"tracer": "callTracer"}]),
        ))
        .unwrap();
        let theirs = s.anvil.trace(t.hash, json!({"tracer": "callTracer"}));
        assert_eq!(shape(&ours), shape(&theirs), "{} vs anvil", t.label);
    }
    assert!(compared >= 6 * 8, "only {compared} comparisons");
    // Blocks: the same per-transaction results, geth's [{txHash, result}] shape.
    let receipt = s.anvil.receipt(s.multi_tx_block[0]);
    let block = serve.result(
        "debug_traceBlockByNumber",
        json!([receipt["blockNumber"], {"tracer": "callTracer"}]),
    );
    let items: Value = serde_json::from_str(&block).unwrap();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), s.multi_tx_block.len());
    for (item, hash) in items.iter().zip(&s.multi_tx_block) {
        assert_eq!(item["txHash"], json!(hash));
        let want: Value =
            serde_json::from_str(&tx_json(&s.url, *hash, &["--tracer", "callTracer"])).unwrap();
        assert_eq!(item["result"], want);
    }
    let by_hash = serve.result(
        "debug_traceBlockByHash",
        json!([receipt["blockHash"], {"tracer": "callTracer"}]),
    );
    assert_eq!(by_hash, block);
    // The second trace of the block came from the memory cache: fewer upstream requests.
    let log = serve.log();
    let block_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("debug_traceBlockBy"))
        .collect();
    assert_eq!(block_lines.len(), 2, "{log}");
    assert!(block_lines[1].contains("\"cacheHit\":true"), "{log}");
}

#[test]
fn trace_call_with_overrides_matches_chaintrace_call() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let logger = s.addr("Logger");
    let sender = s.addr("sender");
    let state = json!({format!("{sender:?}"): {"balance": "0xde0b6b3a7640000"}});
    let block = json!({"number": "0x99", "time": "0x12345678"});
    let got = serve.result(
        "debug_traceCall",
        json!([{"from": sender, "to": logger, "value": "0x1"}, "latest",
            {"tracer": "callTracer", "stateOverrides": state, "blockOverrides": block}]),
    );
    let out = run::cmd(&[])
        .args([
            "call",
            "--rpc-url",
            &s.url,
            "--json",
            "--tracer",
            "callTracer",
        ])
        .args([
            "--from",
            &format!("{sender:?}"),
            "--to",
            &format!("{logger:?}"),
        ])
        .args(["--value", "1wei"])
        .args(["--state-override", &state.to_string()])
        .args(["--block-override", &block.to_string()])
        .env_remove("ETH_RPC_URL")
        .output()
        .unwrap();
    assert_eq!(got, String::from_utf8_lossy(&out.stdout).trim_end());
    // debug_traceStateAccess answers chaintrace's access rows.
    let t = &s.txs[0];
    let rows = serve.result("debug_traceStateAccess", json!([t.hash]));
    let out = run::cmd(&[])
        .args([
            "access",
            &format!("{:?}", t.hash),
            "--rpc-url",
            &s.url,
            "--json",
        ])
        .env_remove("ETH_RPC_URL")
        .output()
        .unwrap();
    assert_eq!(rows, String::from_utf8_lossy(&out.stdout).trim_end());
}

#[test]
fn cast_and_ethers_clients_get_the_same_traces() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let cast = tools().join("bin/cast");
    assert!(
        cast.is_file(),
        "{} missing: run scripts/install-test-tools.sh",
        cast.display()
    );
    let ethers = tools().join("js/node_modules");
    assert!(
        ethers.join("ethers").is_dir(),
        "ethers missing: run scripts/install-test-tools.sh"
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/serve/ethers_trace.js");
    for t in &s.txs {
        let want: Value =
            serde_json::from_str(&tx_json(&s.url, t.hash, &["--tracer", "callTracer"])).unwrap();
        let out = Command::new(&cast)
            .args(["rpc", "--rpc-url", &serve.url, "debug_traceTransaction"])
            .arg(format!("{:?}", t.hash))
            .arg(r#"{"tracer":"callTracer"}"#)
            .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "1")
            .output()
            .expect("run cast");
        assert!(
            out.status.success(),
            "cast: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("cast prints JSON");
        assert_eq!(got, want, "cast rpc, {}", t.label);
        let out = Command::new("node")
            .arg(&script)
            .arg(&serve.url)
            .arg(format!("{:?}", t.hash))
            .arg(r#"{"tracer":"callTracer"}"#)
            .env("NODE_PATH", &ethers)
            .output()
            .expect("run node");
        assert!(
            out.status.success(),
            "ethers: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("ethers script prints JSON");
        assert_eq!(got, want, "ethers, {}", t.label);
    }
    // cast's own calls (eth_chainId, eth_blockNumber) are forwarded.
    let out = Command::new(&cast)
        .args(["chain-id", "--rpc-url", &serve.url])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        s.anvil.chain_id().to_string()
    );
}

#[test]
fn batches_forwarding_and_errors_on_the_wire() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let t = &s.txs[0];
    let body = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "eth_chainId", "params": []},
        {"jsonrpc": "2.0", "id": 2, "method": "debug_traceTransaction",
            "params": [t.hash, {"tracer": "callTracer"}]},
        {"jsonrpc": "2.0", "id": 3, "method": "debug_traceTransaction", "params": ["0x12"]},
        {"id": 4, "method": "eth_chainId"},
        {"jsonrpc": "2.0", "id": 5, "method": "nosuch_method", "params": []},
        {"jsonrpc": "2.0", "id": 6, "method": "debug_traceTransaction",
            "params": [t.hash, {"tracer": "callTracer", "tracerConfig": {"withLog": "yes"}}]}
    ]);
    let text = serve.post(&body.to_string());
    let answers: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(answers.len(), 6);
    let ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(
        ids,
        vec![json!("a"), json!(2), json!(3), json!(4), json!(5), json!(6)]
    );
    assert_eq!(answers[0]["result"], s.anvil.rpc("eth_chainId", json!([])));
    let want: Value =
        serde_json::from_str(&tx_json(&s.url, t.hash, &["--tracer", "callTracer"])).unwrap();
    assert_eq!(answers[1]["result"], want);
    assert_eq!(
        answers[2]["error"],
        json!({"code": -32602,
            "message": "invalid argument 0: hex string has length 2, want 64 for common.Hash"})
    );
    assert_eq!(
        answers[3]["error"],
        json!({"code": -32600, "message": "invalid request"})
    );
    // Forwarded unchanged: anvil's own answer to a method it does not know.
    let theirs = s
        .anvil
        .try_rpc("nosuch_method", json!([]))
        .unwrap()
        .unwrap_err();
    assert_eq!(answers[4]["error"], theirs);
    assert!(
        answers[5]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("withLog"),
        "{}",
        answers[5]
    );
    // geth's envelope errors, in geth's key order.
    assert_eq!(
        serve.post("{not json"),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
    );
    assert_eq!(
        serve.post("[]"),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}"#
    );
    let missing = B256::repeat_byte(0x42);
    let text = serve.post(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "debug_traceTransaction",
            "params": [missing]})
        .to_string(),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], json!(-32000), "{text}");
    // The body limit: HTTP 413, nothing read into memory.
    let small = Serve::start(&s.url, &["--max-body", "1024"]);
    let (status, _) = small.post_with(&format!("[{}]", "1,".repeat(2000) + "1"), &[]);
    assert_eq!(status, 413);
    // A response over the limit is geth's "response too large".
    let tiny = Serve::start(&s.url, &["--max-response", "1024"]);
    let text = tiny.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
            "params": [s.txs.last().unwrap().hash]})
        .to_string(),
    );
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"response too large"}}"#
    );
}

#[test]
fn auth_and_credentials() {
    let s = anvil::scenario();
    // Any address but loopback needs a token or --insecure.
    let out = run::cmd(&[])
        .args(["serve", "--rpc-url", &s.url, "--listen", "0.0.0.0:0"])
        .env_remove("CHAINTRACE_AUTH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refusing to listen on 0.0.0.0:0"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The upstream's credentials never reach a response or a log line.
    let secret = "s3cr3tpassw0rd";
    let upstream = format!("http://user:{secret}@127.0.0.1:{}/", s.anvil.port);
    let token = "0123456789abcdef0123";
    let serve = Serve::start(&upstream, &["--auth-token", token]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
        "params": [s.txs[0].hash, {"tracer": "callTracer"}]})
    .to_string();
    let (status, text) = serve.post_with(&body, &[]);
    assert_eq!(status, 401, "{text}");
    let (status, _) = serve.post_with(&body, &[("authorization", "Bearer wrong-token-000000")]);
    assert_eq!(status, 401);
    let bearer = format!("Bearer {token}");
    let (status, text) = serve.post_with(&body, &[("authorization", &bearer)]);
    assert_eq!(status, 200);
    raw_result(&text);
    let (_, metrics) = chaintrace::rpc::transport::get(
        &format!("{}/metrics", serve.url),
        Duration::from_secs(10),
        1 << 20,
    )
    .unwrap();
    assert_eq!(metrics.trim(), "missing or invalid bearer token");
    // An upstream failure is reported with the URL redacted.
    let dead = format!("http://user:{secret}@127.0.0.1:{}/", free_port());
    let broken = Serve::start(&dead, &["--rpc-timeout", "1"]);
    let text = broken.post(&body);
    assert!(text.contains("\"code\":-32000"), "{text}");
    assert!(!text.contains(secret), "{text}");
    std::thread::sleep(Duration::from_millis(200));
    for log in [serve.log(), broken.log()] {
        assert!(
            log.contains("\"method\":\"debug_traceTransaction\""),
            "{log}"
        );
        assert!(!log.contains(secret), "{log}");
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn overload_is_refused_cleanly_and_nothing_is_lost() {
    let s = anvil::scenario();
    // Every upstream request takes 300 ms, so each trace holds its worker for a while.
    let slow = proxy::Proxy::start(&s.url, &["--delay-ms", "300"]);
    let serve = Serve::start(&slow.url, &["--workers", "1", "--queue", "2"]);
    let hash = s.txs[0].hash;
    let n = 12;
    let answers: Vec<Value> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let serve = &serve;
                sc.spawn(move || {
                    let text = serve.post(
                        &json!({"jsonrpc": "2.0", "id": i, "method": "debug_traceTransaction",
                            "params": [hash, {"tracer": "callTracer"}]})
                        .to_string(),
                    );
                    serde_json::from_str::<Value>(&text).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want: Value =
        serde_json::from_str(&tx_json(&s.url, hash, &["--tracer", "callTracer"])).unwrap();
    let mut ok = 0;
    let mut busy = 0;
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["id"], json!(i), "every call answered, under its own id");
        if a.get("result").is_some() {
            assert_eq!(a["result"], want);
            ok += 1;
        } else {
            assert_eq!(a["error"]["code"], json!(-32005), "{a}");
            assert!(a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("server busy"));
            busy += 1;
        }
    }
    assert_eq!(ok + busy, n);
    assert!(busy >= 1, "a queue of 2 with 1 worker refused nothing");
    assert!(ok >= 3, "the worker and the queue served only {ok}");
    let rss = vm_hwm_kib(serve.child.id());
    assert!(rss > 0 && rss < 512 * 1024, "peak RSS {rss} KiB");
    let (_, metrics) = chaintrace::rpc::transport::get(
        &format!("{}/metrics", serve.url),
        Duration::from_secs(10),
        1 << 20,
    )
    .unwrap();
    assert!(
        metrics.contains(&format!("chaintrace_busy_refusals_total {busy}")),
        "{metrics}"
    );
    assert!(metrics.contains(&format!(
        "chaintrace_requests_total{{method=\"debug_traceTransaction\",outcome=\"busy\"}} {busy}"
    )));
}

#[test]
fn shutdown_finishes_work_in_flight() {
    let s = anvil::scenario();
    let slow = proxy::Proxy::start(&s.url, &["--delay-ms", "700"]);
    let mut serve = Serve::start(&slow.url, &[]);
    let hash = s.txs[0].hash;
    let url = serve.url.clone();
    let pending = std::thread::spawn(move || {
        chaintrace::rpc::transport::post_json(
            &url,
            &[],
            json!({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
                "params": [hash, {"tracer": "callTracer"}]})
            .to_string(),
            Duration::from_secs(60),
            1 << 20,
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    let pid = serve.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let (status, text) = pending
        .join()
        .unwrap()
        .expect("the call in flight is answered");
    assert_eq!(status, 200);
    raw_result(&text);
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(st) = serve.child.try_wait().unwrap() {
            break st.code();
        }
        assert!(
            Instant::now() < deadline,
            "serve did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
    std::thread::sleep(Duration::from_millis(100));
    let log = serve.log();
    assert!(log.contains("\"event\":\"shutdown\""), "{log}");
    assert!(log.contains("\"event\":\"stopped\""), "{log}");
}
