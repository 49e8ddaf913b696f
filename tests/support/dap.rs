//! A Debug Adapter Protocol client for the tests: `chaintrace dap` over a pipe, messages framed
//! by `Content-Length` as VS Code and nvim-dap frame them. Each test binary uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

pub struct Client {
    pub child: Child,
    pub input: ChildStdin,
    output: BufReader<ChildStdout>,
    seq: i64,
    /// Events read while waiting for a response, in order.
    pub events: Vec<Value>,
}

impl Client {
    pub fn start() -> Client {
        Client::start_in(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
    }

    /// The adapter started in `dir`, as an editor starts it in its workspace folder.
    pub fn start_in(dir: &std::path::Path) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chaintrace"));
        cmd.arg("dap").current_dir(dir);
        Client::spawn(cmd)
    }

    /// An adapter started by `cmd` (its stdin and stdout the protocol's pipe).
    pub fn spawn(mut cmd: Command) -> Client {
        let mut child = cmd
            .env("CHAINTRACE_NO_CACHE", "1")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chaintrace dap");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            input,
            output,
            seq: 0,
            events: Vec::new(),
        }
    }

    pub fn write_raw(&mut self, body: &[u8]) {
        write!(self.input, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.input.write_all(body).unwrap();
        self.input.flush().unwrap();
    }

    pub fn read(&mut self) -> Value {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the adapter closed"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends a request and reads until its response, keeping the events on the way.
    pub fn request(&mut self, command: &str, arguments: Value) -> Value {
        self.seq += 1;
        let m = json!({"seq": self.seq, "type": "request", "command": command,
            "arguments": arguments});
        self.write_raw(&serde_json::to_vec(&m).unwrap());
        let seq = self.seq;
        loop {
            let m = self.read();
            if m["type"] == "response" && m["request_seq"] == seq {
                assert_eq!(m["command"], command, "{m}");
                return m;
            }
            self.events.push(m);
        }
    }

    /// The next event named `name` (from those kept, else read).
    pub fn event(&mut self, name: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["event"] == name) {
            return self.events.remove(i);
        }
        loop {
            let m = self.read();
            if m["type"] == "event" && m["event"] == name {
                return m;
            }
            self.events.push(m);
        }
    }

    /// The step the adapter is stopped at (the EVM scope's `step`).
    pub fn step(&mut self) -> usize {
        let top = self.top_frame();
        let scopes = self.request("scopes", json!({"frameId": top["id"]}));
        let evm = scopes["body"]["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "EVM")
            .unwrap()["variablesReference"]
            .clone();
        let vars = self.request("variables", json!({"variablesReference": evm}));
        vars["body"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "step")
            .unwrap()["value"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Steps one instruction at a time to the transaction's last step (where stepping on
    /// stays); how many steps were taken.
    pub fn run_to_last_step(&mut self) -> usize {
        let (mut at, mut taken) = (self.step(), 0);
        loop {
            self.request(
                "stepIn",
                json!({"threadId": 1, "granularity": "instruction"}),
            );
            self.event("stopped");
            let next = self.step();
            if next == at {
                return taken;
            }
            at = next;
            taken += 1;
        }
    }

    pub fn top_frame(&mut self) -> Value {
        let r = self.request("stackTrace", json!({"threadId": 1}));
        assert_eq!(r["success"], true, "{r}");
        r["body"]["stackFrames"][0].clone()
    }
}
