//! Test support: a running `chaintrace serve` (killed on drop, its request log kept) and the
//! raw `result` of its answers.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// A running `chaintrace serve`; killed on drop. Its stderr (the request log) is kept.
pub struct Serve {
    pub child: Child,
    pub url: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Serve {
    pub fn start(upstream: &str, extra: &[&str]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chaintrace"))
            .args([
                "serve",
                "--rpc-url",
                upstream,
                "--listen",
                "127.0.0.1:0",
                "--no-cache",
            ])
            .args(extra)
            .env_remove("ETH_RPC_URL")
            .env_remove("CHAINTRACE_AUTH_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chaintrace serve");
        // Tests that use this module include support/proxy.rs, whose `run` reads the banner.
        let url = crate::proxy::run::listening_url(&mut child, "serve");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Serve { child, url, stderr }
    }

    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The log once `done` holds of it (the server writes a call's line before answering, but
    /// the thread collecting its stderr may not have read it yet), or after 10 s as it is.
    pub fn log_when(&self, done: impl Fn(&str) -> bool) -> String {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            // Whole lines only: a line the server is still writing is read on the next look.
            let mut log = self.log();
            log.truncate(log.rfind('\n').map_or(0, |i| i + 1));
            if done(&log) || std::time::Instant::now() > until {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn post_with(&self, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
        chaintrace::rpc::transport::post_json(
            &self.url,
            headers,
            body.to_string(),
            Duration::from_secs(120),
            1 << 30,
        )
        .unwrap_or_else(|e| panic!("POST {}: {}", self.url, e.reason()))
    }

    pub fn post(&self, body: &str) -> String {
        let (status, text) = self.post_with(body, &[]);
        assert_eq!(status, 200, "{text}");
        text
    }

    /// One call; the raw `result` text (or panics with the error).
    pub fn result(&self, method: &str, params: Value) -> String {
        let text = self.post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": method,
            "params": params})
            .to_string(),
        );
        raw_result(&text)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `result` member of a response, as the exact text the server sent.
pub fn raw_result(text: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Resp<'a> {
        #[serde(borrow)]
        result: Option<&'a serde_json::value::RawValue>,
        error: Option<Value>,
    }
    let r: Resp = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    match (r.result, r.error) {
        (Some(v), None) => v.get().to_string(),
        _ => panic!("not a result: {text}"),
    }
}
