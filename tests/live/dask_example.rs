//! `examples/dask/range.py` on a `LocalCluster` of 2 workers against the anvil scenario: the
//! pinned Python packages (examples/dask/requirements.txt) are installed from the registry into a
//! virtualenv under the target directory, the first task fails once and is retried, and the row
//! counts DuckDB reads back equal those of the NDJSON stream of the same range. Live anvil.

#![cfg(feature = "parquet")]

use crate::{anvil, run};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn count(frame: &Value, calls: &mut u64, logs: &mut u64) {
    *calls += 1;
    *logs += frame["logs"].as_array().map_or(0, |l| l.len() as u64);
    for c in frame["calls"].as_array().into_iter().flatten() {
        count(c, calls, logs);
    }
}

/// The virtualenv with examples/dask's pinned packages (DuckDB among them), installed from the
/// registry into `target/dask-venv` when missing.
pub(crate) fn pinned_venv() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = root.join("target/dask-venv");
    let setup = Command::new("bash")
        .arg(root.join("examples/dask/setup-venv.sh"))
        .arg(&venv)
        .output()
        .expect("run setup-venv.sh");
    assert!(
        setup.status.success(),
        "installing the pinned Python packages failed: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    venv
}

#[test]
fn dask_local_cluster_matches_the_ndjson_stream() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = pinned_venv();

    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let range = format!("0..{last}");
    let cfg = r#"{"withLog":true}"#;
    let stream = run::cmd(&[])
        .args([
            "block",
            &range,
            "--rpc-url",
            &s.url,
            "--json",
            "--tracer-config",
            cfg,
        ])
        .output()
        .unwrap();
    assert!(stream.status.success());
    let (mut txs, mut calls, mut logs, mut reverted) = (0u64, 0u64, 0u64, 0u64);
    for line in String::from_utf8_lossy(&stream.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        txs += 1;
        reverted += v["result"]["error"].is_string() as u64;
        count(&v["result"], &mut calls, &mut logs);
    }

    let tmp = std::env::temp_dir().join(format!("chaintrace-dask-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("out");
    let marker = tmp.join("failed-once");
    let run = Command::new(venv.join("bin/python"))
        .arg(root.join("examples/dask/range.py"))
        .args(["--rpc-url", &s.url, "--range", &range])
        .arg("--out")
        .arg(&out)
        .arg("--chaintrace")
        .arg(env!("CARGO_BIN_EXE_chaintrace"))
        .args([
            "--partition-size",
            "4",
            "--task-blocks",
            "8",
            "--tracer-config",
            cfg,
        ])
        .arg("--inject-failure")
        .arg(&marker)
        .env_remove("ETH_RPC_URL")
        .output()
        .expect("run range.py");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "range.py failed: {stderr}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout}\n{stderr}"));
    assert_eq!(summary["tasks"], last / 8 + 1, "{summary}");
    assert_eq!(summary["partitions"], last / 4 + 1, "{summary}");
    assert_eq!(
        summary["retried"], 1,
        "the failed task was retried: {summary}"
    );
    assert_eq!(summary["txs"], txs, "{summary}");
    assert_eq!(summary["calls"], calls, "{summary}");
    assert_eq!(summary["logs"], logs, "{summary}");
    assert_eq!(summary["reverted"], reverted, "{summary}");
    assert!(logs > 0 && reverted > 0);
    let _ = std::fs::remove_dir_all(&tmp);
}
