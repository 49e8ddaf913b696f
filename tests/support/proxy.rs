//! Test support: the loopback JSON-RPC proxy (`examples/rpc_proxy.rs`) in front of a node, with
//! injected delay or faults, the test tools built as examples, and a way to run the chaintrace
//! binary.
#![allow(dead_code)]

pub(crate) use crate::run;
pub(crate) use crate::run::Run;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The path of the project's example `name` (a test tool: `rpc_proxy`, `cache_writer`).
/// `cargo test` builds examples next to the test binaries (target/<profile>/examples/); a
/// single `cargo test --test X` does not, so a missing one is built here.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let path = profile_dir.join("examples").join(name);
    if !path.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut build = Command::new(cargo);
        build.args(["build", "--example", name]);
        if release {
            build.arg("--release");
        }
        let ok = build.status().is_ok_and(|s| s.success());
        assert!(ok && path.is_file(), "could not build {}", path.display());
    }
    path
}

/// A running proxy; killed on drop.
pub struct Proxy {
    child: Child,
    pub url: String,
}

impl Proxy {
    /// Starts `rpc_proxy --upstream <upstream> <extra...>` and waits for its address.
    pub fn start(upstream: &str, extra: &[&str]) -> Proxy {
        let mut child = Command::new(example("rpc_proxy"))
            .arg("--upstream")
            .arg(upstream)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rpc_proxy");
        let url = run::listening_url(&mut child, "proxy");
        Proxy { child, url }
    }

    /// The proxy's counters since the last [`Proxy::reset`]: `requests`, `calls`,
    /// `roundTrips`, `stateRequests`.
    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_str(&self.get("/stats")).expect("the proxy's stats are JSON")
    }

    /// Zeroes the proxy's counters.
    pub fn reset(&self) {
        self.get("/reset");
    }

    fn get(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let host = self.url.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(host).expect("connect to the proxy");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the chaintrace binary with the tests' environment (`run.rs`).
pub fn chaintrace(args: &[&str]) -> Run {
    run::chaintrace(args)
}

/// The `rpc: N requests, ...` line's N.
pub fn requests(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("rpc: "))
        .unwrap_or_else(|| panic!("no rpc stats line in: {stderr}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The `... K state passes` figure of the rpc line.
pub fn state_passes(stderr: &str) -> u64 {
    let line = stderr.lines().find(|l| l.starts_with("rpc: ")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "state").unwrap();
    words[i - 1].parse().unwrap()
}
