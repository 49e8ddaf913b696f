//! `node status`, `node doctor` and `node split-check` end to end, against the sample logs and
//! node homes under tests/data/node/ and a local HTTP server standing in for the operator
//! interface (and, for split-check, for the EVM JSON-RPC).

use crate::{http, run};
use run::Run;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn chaintrace_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Run {
    match stdin {
        Some(bytes) => run::cmd(args).stdin(bytes).run(),
        None => run::cmd(args).run(),
    }
}

fn chaintrace(args: &[&str]) -> Run {
    chaintrace_with_stdin(args, None)
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr))
}

// ------------------------------------------------------------------ a fake operator interface

use http::Reply;

/// Serves the operator interface from `handler`, which gets the path and the body.
fn serve(handler: impl Fn(&str, &str) -> Reply + Send + Sync + 'static) -> String {
    http::serve(move |r: &http::Request| handler(&r.path, &r.body))
}

fn status_json(height: u64) -> String {
    json!({"jsonrpc": "2.0", "id": -1, "result": {
        "node_info": {"id": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "network": "test-chain-1",
                      "version": "0.38.17", "moniker": "rpc-01"},
        "sync_info": {"latest_block_hash": "ABCD", "latest_app_hash": "EF01",
                      "latest_block_height": height.to_string(),
                      "latest_block_time": "2024-05-01T12:00:00.123456789Z",
                      "earliest_block_height": "1000", "catching_up": false},
        "validator_info": {}
    }})
    .to_string()
}

/// A node whose height moves by `step` on every /status call; with `lag`, /lag_status is served.
fn fake_node(step: u64, lag: bool) -> String {
    let height = Arc::new(AtomicU64::new(5000));
    serve(move |path, _| match path {
        "/status" => Reply::Answer(200, status_json(height.fetch_add(step, Ordering::SeqCst))),
        "/net_info" => Reply::Answer(
            200,
            json!({"jsonrpc": "2.0", "id": -1, "result": {"listening": true, "n_peers": "3",
                   "peers": [{"node_info": {}}, {"node_info": {}}, {"node_info": {}}]}})
            .to_string(),
        ),
        "/lag_status" if lag => Reply::Answer(
            200,
            json!({"current_height": "5000", "max_peer_block_height": "5002", "lag": "2"})
                .to_string(),
        ),
        _ => Reply::Answer(404, "404 page not found".into()),
    })
}

#[test]
fn status_reports_a_moving_height() {
    let url = fake_node(3, true);
    let r = chaintrace(&[
        "node",
        "status",
        "--url",
        &url,
        "--interval",
        "0.2",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut v = json_of(&r);
    let ms = v["intervalMs"].as_u64().unwrap();
    assert!((200..5000).contains(&ms), "{ms}");
    v["intervalMs"] = json!(0);
    assert_eq!(
        v,
        json!({
            "url": url, "nodeId": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "moniker": "rpc-01",
            "network": "test-chain-1", "version": "0.38.17", "latestBlockHeight": 5003,
            "latestBlockTime": "2024-05-01T12:00:00.123456789Z", "latestBlockHash": "ABCD",
            "earliestBlockHeight": 1000, "catchingUp": false, "peers": 3,
            "lagStatus": {"current_height": "5000", "max_peer_block_height": "5002", "lag": "2"},
            "lag": 2, "samples": [5000, 5003], "intervalMs": 0, "heightMoving": true
        })
    );
    let human = chaintrace(&["node", "status", "--url", &url, "--interval", "0.1"]);
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.contains("height       5009 moving (+3 in"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("peers        3\n"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("lag          2 blocks\n"),
        "{}",
        human.stdout
    );
}

#[test]
fn status_flags_a_stuck_height_with_exit_5() {
    let url = fake_node(0, false);
    let r = chaintrace(&["node", "status", "--url", &url, "--interval", "0.1"]);
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("height       5000 NOT MOVING: 5000 → 5000"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("lag status   not served by this node"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("restart, then `chaind rollback`, then restore a snapshot"));
    let v = json_of(&chaintrace(&[
        "node",
        "status",
        "--url",
        &url,
        "--interval",
        "0.1",
        "--json",
    ]));
    assert_eq!(
        (v["heightMoving"].as_bool(), v["lagStatus"].is_null()),
        (Some(false), true)
    );
}

#[test]
fn status_of_a_hanging_node_is_a_timeout() {
    let url = serve(|_, _| Reply::Hang);
    let started = Instant::now();
    let r = chaintrace(&["node", "status", "--url", &url, "--timeout", "1"]);
    assert!(started.elapsed() < Duration::from_secs(10), "no timeout");
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert_eq!(
        r.stderr,
        format!("error: GET /status: {url} did not answer within 1 s; the node may be overloaded or hung (raise --timeout to wait longer)\n")
    );
}

#[test]
fn status_of_an_unreachable_node_says_so() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = chaintrace(&[
        "node",
        "status",
        "--url",
        &format!("tcp://127.0.0.1:{port}"),
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!(
            "GET /status: cannot reach http://127.0.0.1:{port}: connection refused"
        )),
        "{}",
        r.stderr
    );
    let r = chaintrace(&["node", "status", "--url", "ftp://x"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("invalid node URL"), "{}", r.stderr);
}

#[test]
fn status_rejects_an_answer_without_a_height() {
    let url = serve(|_, _| Reply::Answer(200, r#"{"result":{"sync_info":{}}}"#.into()));
    let r = chaintrace(&["node", "status", "--url", &url]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("it has no result.sync_info.latest_block_height"),
        "{}",
        r.stderr
    );
}

// ------------------------------------------------------------------ doctor

fn doctor(log: &str) -> Value {
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        &format!("tests/data/node/logs/{log}"),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    json_of(&r)["diagnosis"].clone()
}

fn classes(d: &Value) -> Vec<String> {
    d["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_error_class_is_recognised() {
    let cases = [
        ("peer-id-mismatch.log", "peer-id-mismatch"),
        ("no-peers.log", "no-peers"),
        ("peer-connectivity.log", "peer-connectivity"),
        ("consensus-halt.log", "consensus-halt"),
        ("priv-validator-missing.log", "priv-validator-missing"),
        ("duplicate-signature.log", "duplicate-signature"),
        ("database-corrupted.log", "database-corrupted"),
        ("database-locked.log", "database-locked"),
        ("stuck-height.log", "stuck-height"),
        ("crash.log", "crash"),
    ];
    for (log, class) in cases {
        assert_eq!(classes(&doctor(log)), vec![class.to_string()], "{log}");
    }
    assert_eq!(classes(&doctor("healthy.log")), Vec::<String>::new());
}

#[test]
fn app_hash_is_primary_and_peer_errors_are_its_symptoms() {
    let d = doctor("app-hash.log");
    assert_eq!(d["linesRead"], 7);
    let p = &d["problems"];
    assert_eq!(p.as_array().unwrap().len(), 1);
    assert_eq!(p[0]["class"], "app-hash-mismatch");
    assert_eq!(
        (p[0]["lines"].as_u64(), p[0]["firstLine"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(
        p[0]["details"],
        json!({
            "commitHash": "C0FFEE00112233445566778899AABBCCDDEEFF00112233445566778899AABBCC",
            "expectedAppHash": "9A2F6C1D4E5B7A8C9D0E1F2A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E",
            "gotAppHash": "4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D3E2F1A0B9C8D7E6F5A4B3C",
            "height": "1234567"
        })
    );
    assert_eq!(
        p[0]["symptoms"],
        json!([
            {"class": "no-peers", "title": "no peers", "lines": 1},
            {"class": "peer-connectivity", "title": "peer connectivity", "lines": 2}
        ])
    );
    let steps: Vec<&str> = p[0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(steps[0], "Stop the node.");
    assert!(
        steps[1].contains("`chaind debug dump-iavl 1234567`")
            && steps[1].contains("dump-iavl -d <node_home>/data/committer.db -o DIR")
    );
    assert_eq!(steps[2], "Roll back one block: `chaind rollback`.");
    // The restore is a state-sync fix: back up and keep the validator's files, reset with the
    // home and the address book kept.
    assert!(
        steps[3].starts_with(
            "If the rollback fails, stop the node and back up \
             <node_home>/config/priv_validator_key.json, \
             <node_home>/data/priv_validator_state.json and <node_home>/config/genesis.json, \
             and keep them through the state sync"
        ),
        "{}",
        steps[3]
    );
    assert!(
        steps[3]
            .contains("`chaind tendermint unsafe-reset-all --home <node_home> --keep-addr-book`"),
        "{}",
        steps[3]
    );
    assert!(steps[4].starts_with("Restart the node and watch"));
    // The home was not given: the last step says where to find it, and no `{home}` is left.
    assert!(steps[5].starts_with("<node_home> is the node's home directory"));
    assert!(!d.to_string().contains("{home}"), "{d}");
}

/// Every state-sync fix of the doctor and of split-check backs up and keeps the validator's
/// files, and shows the reset with the home and --keep-addr-book.
#[test]
fn state_sync_fixes_keep_the_validator_files() {
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/database-corrupted.log",
        "--home",
        "/srv/chaind",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for want in [
        "Stop the node and back up /srv/chaind/config/priv_validator_key.json, /srv/chaind/data/priv_validator_state.json and /srv/chaind/config/genesis.json, and keep them through the state sync",
        "`chaind tendermint unsafe-reset-all --home /srv/chaind --keep-addr-book`",
    ] {
        assert!(r.stdout.contains(want), "{want:?} not in:\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("<node_home>"), "{}", r.stdout);
    for (home, code) in [
        ("check1-evm-missing", "startup-check-1"),
        ("check2-evm-empty", "startup-check-2"),
    ] {
        let (_, v) = split(home, &[]);
        let fix = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == code)
            .and_then(|f| f["fix"].as_str())
            .unwrap_or_default()
            .to_string();
        let path = format!("tests/data/node/homes/{home}");
        for want in [
            format!("{path}/config/priv_validator_key.json"),
            format!("{path}/data/priv_validator_state.json"),
            format!("{path}/config/genesis.json"),
            "keep them through the state sync".to_string(),
            format!("`chaind tendermint unsafe-reset-all --home {path} --keep-addr-book`"),
        ] {
            assert!(fix.contains(&want), "{home}: {want:?} not in {fix:?}");
        }
    }
}

#[test]
fn stuck_height_escalates_restart_rollback_snapshot() {
    let d = doctor("stuck-height.log");
    let p = &d["problems"][0];
    assert_eq!(
        p["details"],
        json!({"height": "701", "maxRound": "29", "seconds": "267"})
    );
    let steps: Vec<&str> = p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(steps[0].starts_with("Restart the node"));
    assert!(steps[1].contains("`chaind rollback`"));
    assert!(steps[2].contains("snapshot"));
}

#[test]
fn doctor_reads_stdin_and_fills_the_home_into_steps() {
    let log = std::fs::read("tests/data/node/logs/app-hash.log").unwrap();
    let r = chaintrace_with_stdin(&["node", "doctor", "--home", "/srv/chaind"], Some(&log));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("7 lines read: 1 problem(s), most urgent first\n\n1. app hash mismatch (primary): 2 line(s), lines 4–7\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("dump-iavl -d /srv/chaind/data/committer.db -o DIR"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("symptoms of this problem, no separate fix: no peers (1 line(s)), peer connectivity (2 line(s))"));
    let peers = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/peer-id-mismatch.log",
    ]);
    // The id that answered at the address is no proof: the fix sends the operator to the
    // network's published peer list, and never pins the id seen in the log.
    assert!(
        peers.stdout.contains(
            "Take this peer's <node_id>@<host>:26656 pair from the network's published peer list"
        ),
        "{}",
        peers.stdout
    );
    assert!(
        !peers
            .stdout
            .contains("99887766554433221100ffeeddccbbaa99887766@203.0.113.9:26656"),
        "{}",
        peers.stdout
    );
}

/// `unsafe-reset-all` keeps the validator key and the genesis file but sets
/// priv_validator_state.json back to height 0: the corrupted-database step must not say it
/// keeps the signing state.
#[test]
fn the_reset_is_not_said_to_keep_the_signing_state() {
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/database-corrupted.log",
        "--home",
        "/srv/chaind",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reset = r
        .stdout
        .lines()
        .find(|l| l.contains("unsafe-reset-all") && l.contains("Reset the data"))
        .unwrap_or_else(|| panic!("no reset step:\n{}", r.stdout));
    assert!(
        !reset.contains("keeps priv_validator_key.json, priv_validator_state.json"),
        "{reset}"
    );
    assert!(
        reset.contains("sets priv_validator_state.json back to height 0: put the backed-up /srv/chaind/data/priv_validator_state.json back"),
        "{reset}"
    );
}

#[test]
fn crash_report_collects_context_and_the_full_stack_trace() {
    let dir = std::env::temp_dir().join(format!("chaintrace-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/crash.log",
        "--crash-report",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r);
    let c = &v["crashReport"];
    // 1,500 lines in 12.5 minutes: the 15-minute window is the larger one.
    assert_eq!(
        (
            c["crashLine"].as_u64(),
            c["contextFirst"].as_u64(),
            c["contextLast"].as_u64(),
            c["window"].as_str()
        ),
        (Some(1501), Some(1), Some(1500), Some("15 minutes"))
    );
    assert_eq!(
        (c["stackFirst"].as_u64(), c["stackLast"].as_u64()),
        (Some(1501), Some(1513))
    );
    let stack = std::fs::read_to_string(dir.join("stack.txt")).unwrap();
    assert!(stack.starts_with("panic: runtime error: invalid memory address"));
    assert!(
        stack.contains("goroutine 1234 [running]:")
            && stack.ends_with("\t/build/cmd/chaind/main.go:20 +0x45\n"),
        "{stack}"
    );
    assert!(!stack.contains("starting ABCI"));
    let context = std::fs::read_to_string(dir.join("context.log")).unwrap();
    assert_eq!(context.lines().count(), 1500);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["crash"]["crashLine"], 1501);
    assert_eq!(report["diagnosis"]["problems"][0]["class"], "crash");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn doctor_reads_log_level_and_snapshots_from_the_home() {
    // A home whose config.toml sets log_level = "error" and whose data/snapshots/ holds two
    // state-sync snapshots (one directory per height, metadata.db beside them).
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/healthy.log",
        "--home",
        "tests/data/node/homes/quiet-logs",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "node home:\n  log_level  WARN: log_level = \"error\" hides info lines of every module"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("  snapshots  ok: 2 local snapshot(s), newest heights 118002000, 118000000"),
        "{}",
        r.stdout
    );
    let j = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/healthy.log",
        "--home",
        "tests/data/node/homes/ready",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    let checks = &v["diagnosis"]["homeChecks"];
    assert_eq!(checks[0]["item"], "log_level");
    assert_eq!(checks[0]["status"], "ok");
    // The documentation asks for debug (trace for most detail) while diagnosing.
    let detail = checks[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("set log_level = \"debug\" (\"trace\" for the most detail)"),
        "{detail}"
    );
    assert_eq!(checks[1]["item"], "snapshots");
    assert_eq!(checks[1]["status"], "warn");
    // A home that is not there: nothing is claimed.
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/healthy.log",
        "--home",
        "/nonexistent/chaind",
    ]);
    assert!(
        r.stdout.contains("log_level  NOT CHECKED: cannot read"),
        "{}",
        r.stdout
    );
}

#[test]
fn doctor_on_a_missing_file_is_bad_input() {
    let r = chaintrace(&["node", "doctor", "--log", "no/such.log"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cannot read no/such.log"), "{}", r.stderr);
}

// ------------------------------------------------------------------ split-check

fn split(home: &str, extra: &[&str]) -> (i32, Value) {
    let path = format!("tests/data/node/homes/{home}");
    let r = chaintrace(
        &[
            &["node", "split-check", "--home", &path, "--json"][..],
            extra,
        ]
        .concat(),
    );
    (r.code, json_of(&r))
}

fn codes_of(v: &Value, severity: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == severity)
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn statuses(v: &Value) -> Vec<String> {
    v["startupChecks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn split_check_outcome_per_node_home() {
    let cases: [(&str, i32, &[&str], [&str; 3]); 9] = [
        ("fresh", 0, &[], ["pass", "pass", "pass"]),
        ("ready", 0, &[], ["pass", "pass", "unknown"]),
        (
            "check1-evm-missing",
            5,
            &["startup-check-1"],
            ["abort", "pass", "pass"],
        ),
        (
            "check2-evm-empty",
            5,
            &["startup-check-2"],
            ["pass", "abort", "pass"],
        ),
        ("validator", 5, &["validator"], ["pass", "pass", "unknown"]),
        ("archive", 5, &["archive"], ["pass", "pass", "unknown"]),
        (
            "legacy",
            5,
            &["sc-enable", "legacy-evm-ss-mode", "legacy-evm-ss-mode"],
            ["not-run", "not-run", "not-run"],
        ),
        ("reverted", 0, &[], ["not-run", "not-run", "not-run"]),
        // Has run (data/blockstore.db) but keeps no Cosmos SS at the documented data/pebbledb/:
        // never "ready" on a store that was not read.
        (
            "ss-elsewhere",
            5,
            &["cosmos-ss-not-found"],
            ["unknown", "pass", "pass"],
        ),
    ];
    for (home, code, blockers, checks) in cases {
        let (c, v) = split(home, &[]);
        assert_eq!(c, code, "{home}: {v:#}");
        assert_eq!(codes_of(&v, "blocker"), blockers.to_vec(), "{home}");
        assert_eq!(
            v["blockers"].as_u64(),
            Some(blockers.len() as u64),
            "{home}"
        );
        assert_eq!(statuses(&v), checks.to_vec(), "{home}");
    }
    let (_, v) = split("reverted", &[]);
    assert_eq!(
        codes_of(&v, "warning"),
        [
            "evm-ss-split",
            "stale-evm-ss",
            "max-packet-msg-payload-size",
            "keep-invalid-txs-in-cache",
            "ttl-duration",
            "ttl-num-blocks"
        ]
    );
    let (_, v) = split("legacy", &[]);
    assert!(codes_of(&v, "warning").contains(&"ss-backend".to_string()));
}

#[test]
fn split_check_human_report() {
    let r = chaintrace(&[
        "node",
        "split-check",
        "--home",
        "tests/data/node/homes/check1-evm-missing",
    ]);
    assert_eq!(r.code, 5);
    assert!(r.stdout.starts_with(
        "split pre-flight of tests/data/node/homes/check1-evm-missing (evm-ss-split on)\n\
         BLOCKER  start-up check 1 (Cosmos SS has history and data/evm_ss/ is missing or empty) would ABORT: "
    ), "{}", r.stdout);
    assert!(r.stdout.contains(
        "         fix: set evm-ss-split = false, or state sync the node with evm-ss-split = true: \
         stop the node and back up tests/data/node/homes/check1-evm-missing/config/priv_validator_key.json"
    ), "{}", r.stdout);
    assert!(
        r.stdout
            .ends_with("NOT READY: 1 blocker(s), 0 warning(s)\n"),
        "{}",
        r.stdout
    );
}

/// The documented start-up log of the node, as written on the home `home`: its
/// `dir=/home/chaind/.chaind/data/evm_ss` names that home's EVM state store instead.
fn startup_log_of(log: &str, home: &str) -> String {
    let text = std::fs::read_to_string(format!("tests/data/node/logs/{log}")).unwrap();
    let evm_ss = std::fs::canonicalize(format!("tests/data/node/homes/{home}"))
        .unwrap()
        .join("data/evm_ss");
    text.replace("/home/chaind/.chaind/data/evm_ss", evm_ss.to_str().unwrap())
}

/// Writes `text` into this test process's scratch directory and returns its path.
fn scratch(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("chaintrace-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The start-up log confirms the split in either of the node's log formats: plain, and
/// `log_format = "json"` (one zerolog object a line, the text under `message`), when its
/// labels are the home's.
#[test]
fn split_check_confirms_the_startup_log() {
    for log in ["split-startup.log", "split-startup-json.log"] {
        let path = scratch(&format!("ready-{log}"), &startup_log_of(log, "ready"));
        let (code, v) = split("ready", &["--log", &path]);
        assert_eq!(code, 0, "{log}: {v:#}");
        assert_eq!(statuses(&v), ["pass", "pass", "pass"], "{log}");
        assert_eq!(v["warnings"], 0, "{log}: {v:#}");
        let infos = codes_of(&v, "info");
        for c in [
            "log-ss-enabled",
            "log-evm-ss-optimization",
            "log-evm-ss-enabled",
        ] {
            assert!(infos.contains(&c.to_string()), "{log} {c}: {infos:?}");
        }
        let text = v.to_string();
        assert!(text.contains("separateDBs=true"), "{log}: {text}");
        assert!(text.contains("backend=pebbledb"), "{log}: {text}");
    }
    let (_, v) = split("ready", &["--log", "tests/data/node/logs/healthy.log"]);
    assert_eq!(
        codes_of(&v, "warning"),
        [
            "startup-check-3",
            "log-ss-enabled",
            "log-evm-ss-optimization",
            "log-evm-ss-enabled"
        ]
    );
}

/// A start-up line confirms only what it was compared with: a `backend=` other than the home's
/// `ss-backend`, or a `dir=` outside the home, is a blocker naming both values, and the
/// start-up checks are not passed on its strength.
#[test]
fn split_check_log_of_another_home_confirms_nothing() {
    let finding = |v: &Value, code: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == code)
            .cloned()
            .unwrap_or_else(|| panic!("no {code}: {v:#}"))
    };
    // The documented log as the node at /home/chaind/.chaind wrote it: not this home's store.
    let (code, v) = split(
        "ready",
        &["--log", "tests/data/node/logs/split-startup.log"],
    );
    assert_eq!(code, 5, "{v:#}");
    let f = finding(&v, "log-evm-ss-enabled");
    assert_eq!(f["severity"], "blocker", "{f}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("says dir=/home/chaind/.chaind/data/evm_ss, but this home's EVM state store is tests/data/node/homes/ready/data/evm_ss"),
        "{msg}"
    );
    assert_eq!(statuses(&v), ["pass", "pass", "unknown"]);
    // The line the node prints with the rocksdb backend, against a home on pebbledb.
    let log = startup_log_of("split-startup.log", "ready").replace(
        "PebbleDB SS is enabled backend=pebbledb",
        "ChainDB SS is enabled backend=rocksdb",
    );
    let path = scratch("ready-rocksdb.log", &log);
    let (code, v) = split("ready", &["--log", &path]);
    assert_eq!(code, 5, "{v:#}");
    let f = finding(&v, "log-ss-enabled");
    assert_eq!(f["severity"], "blocker", "{f}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("says backend=rocksdb, but this home's ss-backend is \"pebbledb\""),
        "{msg}"
    );
    assert!(
        !v.to_string().contains("log confirms \"SS is enabled\""),
        "{v:#}"
    );
    assert_eq!(statuses(&v), ["pass", "pass", "unknown"]);
}

/// A start-up line is compared with the home only by the labels it carries: the node's lines
/// without `backend=`/`dir=` (a log shipper that keeps only the message) cannot be matched to
/// this home, so they are said not judged and the start-up checks are not passed on them; the
/// optimization line, which names no home, counts only beside lines that do.
#[test]
fn split_check_does_not_judge_log_lines_without_labels() {
    let log = startup_log_of("split-startup.log", "ready");
    let bare: String = log
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !w.starts_with("backend=") && !w.starts_with("dir="))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = scratch("ready-bare.log", &bare);
    let (code, v) = split("ready", &["--log", &path]);
    assert_eq!(statuses(&v), ["pass", "pass", "unknown"], "{v:#}");
    assert_eq!(code, 0, "warnings only: {v:#}");
    let warnings = codes_of(&v, "warning");
    for c in [
        "log-ss-enabled",
        "log-evm-ss-optimization",
        "log-evm-ss-enabled",
    ] {
        assert!(warnings.contains(&c.to_string()), "{c}: {v:#}");
    }
    let text = v.to_string();
    assert!(
        text.contains("log: \\\"SS is enabled\\\" carries no backend= label, so it cannot be matched to this home: not judged"),
        "{text}"
    );
    assert!(
        text.contains("log: \\\"EVM state store enabled\\\" carries no dir= label"),
        "{text}"
    );
    assert!(!text.contains("log confirms"), "{text}");
}

/// A log of a start with the split on (`separateDBs=true`) against a home whose app.toml has it
/// off confirms nothing about that home: it is another configuration's, or an older start's.
#[test]
fn split_check_split_on_log_against_a_split_off_home_is_a_blocker() {
    let log = startup_log_of("split-startup.log", "reverted");
    let path = scratch("reverted-split-on.log", &log);
    let (code, v) = split("reverted", &["--log", &path]);
    assert_eq!(code, 5, "{v:#}");
    let blockers = codes_of(&v, "blocker");
    for c in ["log-evm-ss-optimization", "log-evm-ss-enabled"] {
        assert!(blockers.contains(&c.to_string()), "{c}: {v:#}");
    }
    let text = v.to_string();
    assert!(
        text.contains("says separateDBs=true, but this home's app.toml has evm-ss-split = false"),
        "{text}"
    );
    assert!(
        !text.contains("log confirms \\\"EVM state store enabled\\\""),
        "{text}"
    );
}

/// Copies the node home `home` of tests/data/node/homes into scratch space, with `config`
/// as its config/config.toml.
fn home_with_config(home: &str, name: &str, config: &str) -> String {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                copy(&p, &to.join(e.file_name()));
            } else {
                std::fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    }
    let to = std::env::temp_dir().join(format!("chaintrace-node-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    copy(
        std::path::Path::new(&format!("tests/data/node/homes/{home}")),
        &to,
    );
    std::fs::write(to.join("config/config.toml"), config).unwrap();
    to.display().to_string()
}

/// `log_format` values the node does not write and peer entries that are not
/// `<node_id>@<host>:26656` are findings of split-check and of doctor --home.
#[test]
fn log_format_and_peer_entries_are_checked() {
    let base = std::fs::read_to_string("tests/data/node/homes/ready/config/config.toml").unwrap();
    let good_id = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
    let config = base
        .replacen(
            "priv_validator_key_file",
            "log_format = \"text\"\npriv_validator_key_file",
            1,
        )
        .replace(
            "[p2p]\n",
            &format!(
                "[p2p]\nbootstrap-peers = \"{good_id}@203.0.113.9:26656,203.0.113.10:26656\"\n"
            ),
        );
    let home = home_with_config("ready", "bad-settings", &config);
    let r = chaintrace(&["node", "split-check", "--home", &home, "--json"]);
    let v = json_of(&r);
    let warnings = codes_of(&v, "warning");
    assert!(warnings.contains(&"log_format".to_string()), "{v:#}");
    assert!(warnings.contains(&"bootstrap-peers".to_string()), "{v:#}");
    let text = v.to_string();
    assert!(
        text.contains("log_format = \\\"text\\\": the node writes only"),
        "{text}"
    );
    assert!(
        text.contains(
            "has 1 malformed entry: \\\"203.0.113.10:26656\\\" (no <node_id>@ before the address)"
        ),
        "{text}"
    );
    assert!(!text.contains(&format!("\\\"{good_id}@")), "{text}");

    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/healthy.log",
        "--home",
        &home,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("  log_format WARN: log_format = \"text\": the node writes only \"plain\" or \"json\" logs"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("  peers      WARN: [p2p] bootstrap-peers has 1 malformed entry"),
        "{}",
        r.stdout
    );
    // The documented home's settings are fine.
    let r = chaintrace(&[
        "node",
        "doctor",
        "--log",
        "tests/data/node/logs/healthy.log",
        "--home",
        "tests/data/node/homes/ready",
    ]);
    assert!(r.stdout.contains("  log_format ok:"), "{}", r.stdout);
    assert!(r.stdout.contains("  peers      ok:"), "{}", r.stdout);
    let (_, v) = split("ready", &[]);
    assert!(!codes_of(&v, "warning").contains(&"log_format".to_string()));
}

#[test]
fn split_check_calls_debug_trace_block_by_number() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let s2 = seen.clone();
    let ok = serve(move |_, body| {
        let req: Value = serde_json::from_str(body).unwrap();
        s2.lock().unwrap().push(req.clone());
        Reply::Answer(
            200,
            json!({"jsonrpc": "2.0", "id": req["id"], "result": []}).to_string(),
        )
    });
    let (code, v) = split("ready", &["--rpc-url", &ok]);
    assert_eq!(code, 0);
    assert!(codes_of(&v, "info").contains(&"rpc-trace".to_string()));
    let req = &seen.lock().unwrap()[0];
    assert_eq!(
        (&req["method"], &req["params"]),
        (&json!("debug_traceBlockByNumber"), &json!(["latest", {}]))
    );
    let failing = serve(|_, body| {
        let req: Value = serde_json::from_str(body).unwrap();
        Reply::Answer(200, json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": "evm state store not found"}}).to_string())
    });
    let (code, v) = split("ready", &["--rpc-url", &failing]);
    assert_eq!(code, 5);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "rpc-trace")
        .unwrap();
    assert_eq!(f["severity"], "blocker");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("evm state store not found"),
        "{f}"
    );
}

#[test]
fn split_check_of_a_directory_without_config_is_a_blocker() {
    let (code, v) = split("../logs", &[]);
    assert_eq!(code, 5);
    assert_eq!(codes_of(&v, "blocker"), ["app-toml-missing"]);
    let r = chaintrace(&["node", "split-check", "--home", "no/such/dir"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is not a directory"), "{}", r.stderr);
}

/// Only peer errors are symptoms of an app hash mismatch: a halted consensus in the same log
/// keeps its own problem and steps; a `dial tcp` without an address names no address.
#[test]
fn only_peer_errors_fold_into_an_app_hash_mismatch() {
    let mut log = std::fs::read_to_string("tests/data/node/logs/app-hash.log").unwrap();
    log.push_str(&std::fs::read_to_string("tests/data/node/logs/consensus-halt.log").unwrap());
    log.push_str("2024-05-01T12:00:03Z ERR Error dialing peer err=\"Dial tcp connection refused\" module=p2p\n");
    let r = chaintrace_with_stdin(&["node", "doctor", "--json"], Some(log.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = json_of(&r)["diagnosis"].clone();
    let problems = classes(&d);
    assert!(
        problems.contains(&"app-hash-mismatch".to_string()),
        "{problems:?}"
    );
    assert!(
        problems.contains(&"consensus-halt".to_string()),
        "{problems:?}"
    );
    let text = d.to_string();
    assert!(!text.contains("\"address\":\"connection\""), "{text}");
}
