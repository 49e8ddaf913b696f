//! `tx HASH --json --tracer opcodeTracer` writes geth's struct-log JSON to stdout as the replay
//! runs (its head keys known first from a run that wrote nothing), never a second copy: the
//! bytes are the spooled ones of the same transaction (as `block N` prints them), on the fast
//! path and the RPC path, for every scenario transaction on a live anvil 1.7.1. A stdout that cannot be
//! written fails the command (exit 2, the reason) and leaves no finished document behind; a
//! reader that closes the pipe early ends it quietly, as before.

use crate::{anvil, run};

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::value::RawValue;
use serde_json::{json, Value};

fn struct_log(url: &str, hash: &str, extra: &[&str]) -> (i32, Vec<u8>, String) {
    let out = run::cmd(&[])
        .no_cache()
        .args([
            "tx",
            hash,
            "--rpc-url",
            url,
            "--json",
            "--tracer",
            "opcodeTracer",
        ])
        .args(extra)
        .output()
        .expect("run chaintrace");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each transaction's result in `block N --json` (written from its spool), as its bytes.
fn block_results(url: &str, number: u64, config: &str) -> BTreeMap<String, String> {
    let out = run::cmd(&[])
        .no_cache()
        .args(["block", &number.to_string(), "--rpc-url", url, "--json"])
        .args(["--tracer", "opcodeTracer", "--tracer-config", config])
        .output()
        .expect("run chaintrace block");
    let items: Vec<BTreeMap<String, Box<RawValue>>> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| {
            panic!(
                "block {number}: stdout not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    items
        .into_iter()
        .map(|item| {
            let hash: String = serde_json::from_str(item["txHash"].get()).unwrap();
            (hash, item["result"].get().to_string())
        })
        .collect()
}

#[test]
fn streamed_struct_logs_are_the_spooled_bytes_on_both_state_paths() {
    let s = anvil::scenario();
    let mut blocks: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for tx in &s.txs {
        let receipt = s.anvil.receipt(tx.hash);
        let n = anvil::parse_u64(&receipt["blockNumber"]);
        blocks.entry(n).or_default().push(format!("{:?}", tx.hash));
    }
    let configs = [
        json!({}),
        json!({"enableMemory": true, "enableReturnData": true}),
    ];
    let mut compared = 0;
    for config in &configs {
        let config = config.to_string();
        for (n, hashes) in &blocks {
            let spooled = block_results(&s.url, *n, &config);
            for hash in hashes {
                for source in ["prestate", "rpc"] {
                    let (code, stdout, stderr) = struct_log(
                        &s.url,
                        hash,
                        &["--tracer-config", &config, "--state-source", source],
                    );
                    assert!(
                        code == 0 || code == 3,
                        "{hash} ({source}): exit {code}: {stderr}"
                    );
                    let text = String::from_utf8(stdout).unwrap();
                    assert_eq!(
                        text.strip_suffix('\n'),
                        Some(spooled[hash].as_str()),
                        "{hash} ({source}, {config}): streamed bytes differ from the spooled ones"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 4 * s.txs.len(), "{compared} comparisons");
}

/// A node with a loop contract whose struct log is about 23 MB: 40,000 iterations.
fn big_trace() -> (anvil::Anvil, String) {
    let node = anvil::Anvil::start();
    let looper = "0x000000000000000000000000000000000000c0de";
    // for (i = 40000; i != 0; i--) {}
    node.rpc(
        "anvil_setCode",
        json!([looper, "0x62009c405b600190038060045700"]),
    );
    let (hash, receipt) = node.send_and_wait(json!({"to": looper, "gas": "0x1e8480"}));
    assert_eq!(receipt["status"], "0x1");
    (node, format!("{hash:?}"))
}

/// With stdout a file that cannot grow past 4 MiB (`ulimit -f`, as a full disk would do), the
/// command fails with exit 2 and the reason; what reached the file is an unfinished document,
/// which no JSON reader takes for a result.
#[test]
fn a_stdout_that_cannot_be_written_fails_the_command() {
    let (node, hash) = big_trace();
    let dir = std::env::temp_dir().join(format!("chaintrace-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.json");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4096 && exec \"$0\" \"$@\" > \"$OUT\"")
        .arg(env!("CARGO_BIN_EXE_chaintrace"))
        .args(["tx", &hash, "--rpc-url", node.url(), "--json"])
        .args(["--tracer", "opcodeTracer"])
        .env("CHAINTRACE_NO_CACHE", "1")
        .env("OUT", &file)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: the struct log could not be written to stdout: File too large"),
        "{stderr}"
    );
    let written = std::fs::read(&file).unwrap();
    assert!(written.len() <= 4 << 20, "{} bytes", written.len());
    assert!(written.starts_with(b"{\"gas\":"), "{:?}", &written[..40]);
    assert!(
        serde_json::from_slice::<Value>(&written).is_err(),
        "an unfinished document must not parse"
    );
    // Without the limit the same trace is whole.
    let (code, stdout, stderr) = struct_log(node.url(), &hash, &[]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(v["structLogs"].as_array().unwrap().len(), 280_002);
    assert!(stdout.len() > 4 << 20);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that stops early (`| head -c`) closes the pipe: the command stops writing and
/// exits 0 without an error message, as it did when the struct log was spooled first.
#[test]
fn a_reader_that_closes_the_pipe_ends_the_command_quietly() {
    let (node, hash) = big_trace();
    let mut child = run::cmd(&[])
        .no_cache()
        .args(["tx", &hash, "--rpc-url", node.url(), "--json"])
        .args(["--tracer", "opcodeTracer"])
        .spawn_piped();
    let mut first = vec![0u8; 4096];
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(first.starts_with(b"{\"gas\":"));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

/// Keeps the pipes of a run open for a test that reads part of stdout.
trait SpawnPiped {
    fn spawn_piped(self) -> std::process::Child;
}

impl SpawnPiped for run::Cmd {
    fn spawn_piped(self) -> std::process::Child {
        let mut cmd: Command = self.into_command();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run chaintrace")
    }
}
