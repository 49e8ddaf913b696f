//! Remote traces: the prestate fast path against the RPC path, the on-disk cache (warm runs,
//! corruption, SIGKILL mid-write), `--remote`, `diff`, `access` and block ranges, all on a live
//! anvil (pinned 1.7.1; a test that cannot start it fails).

use crate::{anvil, proxy};
use std::path::PathBuf;
use std::time::Duration;

use chaintrace::source::cache::{Cache, Kind};
use proxy::{chaintrace, requests, state_passes, Proxy};
use serde_json::{json, Value};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chaintrace-remote-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn fast_path_equals_rpc_path_in_two_round_trips() {
    let s = anvil::scenario();
    let mut failures = Vec::new();
    for tx in &s.txs {
        let hash = format!("{:?}", tx.hash);
        for tracer in [
            vec!["--tracer-config", r#"{"withLog":true}"#],
            vec![
                "--tracer",
                "prestateTracer",
                "--tracer-config",
                r#"{"diffMode":true}"#,
            ],
        ] {
            let run = |mode: &str| {
                let mut a = vec!["tx", &hash, "--rpc-url", &s.url, "--json", "--no-cache"];
                a.extend(["--state-source", mode]);
                a.extend(tracer.iter().copied());
                chaintrace(&a)
            };
            let (fast, slow) = (run("prestate"), run("rpc"));
            let want = if tx.expect_success { 0 } else { 3 };
            if fast.code != want || slow.code != want {
                failures.push(format!(
                    "{} {tracer:?}: exits {} / {} (want {want}): {}",
                    tx.label, fast.code, slow.code, fast.stderr
                ));
                continue;
            }
            if fast.stdout != slow.stdout {
                failures.push(format!(
                    "{} {tracer:?}:\n  fast {}\n  rpc  {}",
                    tx.label, fast.stdout, slow.stdout
                ));
            }
            if !fast
                .stderr
                .contains("self-check: replay matches the receipt")
                || !fast.stderr.contains("state: node prestate")
            {
                failures.push(format!("{}: {}", tx.label, fast.stderr));
            }
            // Known anvil gap: its prestate omits the slot of an SSTORE that failed with write
            // protection; the replay misses it and reads it from the parent block (exact: the tx
            // is first in its block), costing one more round trip instead of a wrong replay.
            let budget = if tx.label == "staticcall (incl. write-protection failure)" {
                3
            } else {
                2
            };
            if requests(&fast.stderr) > budget {
                failures.push(format!("{}: fast path: {}", tx.label, fast.stderr));
            }
            if requests(&slow.stderr) > 6 {
                failures.push(format!("{}: rpc path: {}", tx.label, slow.stderr));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn auto_falls_back_when_the_node_has_no_debug_api() {
    let s = anvil::scenario();
    let p = Proxy::start(&s.url, &["--deny", "debug_"]);
    let hash = format!("{:?}", s.tx("block: deep nesting").hash);
    let direct = chaintrace(&["tx", &hash, "--rpc-url", &s.url, "--json", "--no-cache"]);
    let auto = chaintrace(&["tx", &hash, "--rpc-url", &p.url, "--json", "--no-cache"]);
    assert_eq!(auto.code, 0, "{}", auto.stderr);
    assert_eq!(auto.stdout, direct.stdout);
    let notes: Vec<&str> = auto
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: "))
        .collect();
    // The fallback, said once. Anvil's chain (31337) has no schedule here, so the fork comes
    // from the header, whose requestsHash fits Prague and Osaka: a doubt, quiet while the
    // self-check matches, said with -v (once).
    assert_eq!(notes.len(), 1, "{}", auto.stderr);
    assert!(
        notes[0].contains("prestateTracer is unavailable"),
        "{}",
        notes[0]
    );
    assert!(!auto.stderr.contains("no fork schedule"), "{}", auto.stderr);
    let verbose = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &p.url,
        "--json",
        "--no-cache",
        "-v",
    ]);
    assert_eq!(verbose.code, 0, "{}", verbose.stderr);
    assert_eq!(
        verbose
            .stderr
            .matches("note: chain 31337 has no fork schedule here: the block header (requestsHash)")
            .count(),
        1,
        "{}",
        verbose.stderr
    );
    assert!(auto.stderr.contains("state: eth_get*"), "{}", auto.stderr);
    let strict = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &p.url,
        "--state-source",
        "prestate",
        "--no-cache",
    ]);
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    assert!(
        strict.stderr.contains("use --state-source rpc"),
        "{}",
        strict.stderr
    );
    assert!(strict.stdout.is_empty());
}

#[test]
fn warm_cache_sends_no_state_requests_and_drops_corrupt_entries() {
    let s = anvil::scenario();
    let dir = tmp("warm");
    let d = dir.to_str().unwrap();
    for (label, mode) in [
        ("block: delegatecall #2 (reads #1)", "prestate"),
        ("block: delegatecall #2 (reads #1)", "rpc"),
        ("CREATE + CREATE2 (+ failed CREATE)", "auto"),
    ] {
        let hash = format!("{:?}", s.tx(label).hash);
        let args = [
            "tx",
            &hash,
            "--rpc-url",
            &s.url,
            "--json",
            "--cache-dir",
            d,
            "--state-source",
            mode,
        ];
        let cold = chaintrace(&args);
        assert!(cold.code == 0, "{label}: {}", cold.stderr);
        let warm = chaintrace(&args);
        assert_eq!(warm.code, cold.code);
        assert_eq!(warm.stdout, cold.stdout, "{label}");
        assert_eq!(requests(&warm.stderr), 1, "{label} {mode}: {}", warm.stderr);
        assert_eq!(
            state_passes(&warm.stderr),
            0,
            "{label} {mode}: {}",
            warm.stderr
        );
        assert!(
            warm.stderr.contains("self-check: replay matches"),
            "{}",
            warm.stderr
        );
    }
    // Damage every entry: each is detected, dropped with a warning and fetched again.
    let mut damaged = 0;
    for e in walk(&dir) {
        if e.components().any(|c| c.as_os_str() == "endpoint") {
            continue;
        }
        let bytes = std::fs::read(&e).unwrap();
        std::fs::write(&e, &bytes[..bytes.len() * 2 / 3]).unwrap();
        damaged += 1;
    }
    assert!(damaged >= 4, "{damaged} entries");
    let hash = format!("{:?}", s.tx("block: delegatecall #2 (reads #1)").hash);
    let args = ["tx", &hash, "--rpc-url", &s.url, "--json", "--cache-dir", d];
    let fixed = chaintrace(&args);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    assert!(
        fixed.stderr.contains("warning: cache entry"),
        "{}",
        fixed.stderr
    );
    assert!(
        fixed.stderr.contains("checksum mismatch"),
        "{}",
        fixed.stderr
    );
    let again = chaintrace(&args);
    assert_eq!(again.stdout, fixed.stdout);
    assert!(!again.stderr.contains("warning"), "{}", again.stderr);
    assert_eq!(requests(&again.stderr), 1, "{}", again.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The cache writer the SIGKILL test kills: `examples/cache_writer.rs`.
fn cache_writer() -> PathBuf {
    proxy::example("cache_writer")
}

#[test]
fn sigkill_mid_write_leaves_a_readable_cache() {
    let dir = tmp("sigkill");
    for round in 0..3 {
        let mut child = std::process::Command::new(cache_writer())
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(400 + 150 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    let c = Cache::new(&dir);
    c.select_chain(1, Default::default());
    let mut seen = 0;
    for i in 0..7 {
        if c.get(Kind::Tx, &format!("k{i}")).is_some() {
            seen += 1;
        }
    }
    assert!(seen > 0, "the writer wrote nothing");
    assert!(
        c.take_warnings().is_empty(),
        "a killed writer left a damaged entry"
    );
    // Only complete entries and stray temporary files (never read) remain.
    for p in walk(&dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(".json") || name.ends_with(".tmp"), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);

    // A real run killed at some point, then a run on what it left.
    let s = anvil::scenario();
    let dir = tmp("sigkill-run");
    let d = dir.to_str().unwrap().to_string();
    let hash = format!("{:?}", s.tx("block: deep nesting").hash);
    let args = [
        "tx",
        &hash,
        "--rpc-url",
        &s.url,
        "--json",
        "--cache-dir",
        &d,
        "--state-source",
        "rpc",
    ];
    let clean = chaintrace(&["tx", &hash, "--rpc-url", &s.url, "--json", "--no-cache"]);
    for delay in [5u64, 20, 40, 80] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chaintrace"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let next = chaintrace(&args);
        assert_eq!(next.code, 0, "after kill at {delay} ms: {}", next.stderr);
        assert_eq!(next.stdout, clean.stdout);
        assert!(!next.stderr.contains("warning"), "{}", next.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn remote_flag_prints_the_nodes_own_trace() {
    let s = anvil::scenario();
    let tx = s.tx("revert custom error (nested, bubbled)");
    let hash = format!("{:?}", tx.hash);
    let run = chaintrace(&["tx", &hash, "--rpc-url", &s.url, "--json", "--remote"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        ours,
        s.anvil.trace(tx.hash, json!({"tracer": "callTracer"}))
    );
    let tree = chaintrace(&["tx", &hash, "--rpc-url", &s.url, "--remote"]);
    assert_eq!(tree.code, 3);
    assert!(
        tree.stdout.contains("failNested") || tree.stdout.contains("0x"),
        "{}",
        tree.stdout
    );
    assert!(
        tree.stdout.contains("revert"),
        "{}",
        tree.stdout.to_lowercase()
    );

    let receipt = s.anvil.receipt(s.multi_tx_block[0]);
    let n = receipt["blockNumber"].as_str().unwrap().to_string();
    let run = chaintrace(&[
        "block",
        &n,
        "--rpc-url",
        &s.url,
        "--json",
        "--remote",
        "--tracer",
        "prestateTracer",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let theirs = s.anvil.rpc(
        "debug_traceBlockByNumber",
        json!([n, {"tracer": "prestateTracer"}]),
    );
    assert_eq!(ours, theirs);

    let hub = format!("{:?}", s.addr("Hub"));
    let from = format!("{:?}", s.anvil.sender());
    let data = anvil::hex0x(&anvil::calldata("deep(uint256)", &[anvil::w_u(2)]));
    let run = chaintrace(&[
        "call",
        "--from",
        &from,
        "--to",
        &hub,
        "--data",
        &data,
        "--gas",
        "1000000",
        "--rpc-url",
        &s.url,
        "--json",
        "--remote",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let theirs = s.anvil.rpc(
        "debug_traceCall",
        json!([{"from": from, "to": hub, "data": data, "gas": "0xf4240", "value": "0x0",
            "gasPrice": "0x0"}, "latest", {"tracer": "callTracer"}]),
    );
    assert_eq!(ours, theirs);
}

#[test]
fn diff_names_fields_and_access_lists_slots() {
    let s = anvil::scenario();
    let hash = format!(
        "{:?}",
        s.tx("deep nesting (5 levels, value forwarded)").hash
    );
    // anvil's callTracer reports top-level gas/gasUsed differently from geth (see tests/live/live.rs).
    let d = chaintrace(&["diff", &hash, "--rpc-url", &s.url, "--no-cache"]);
    assert_eq!(d.code, 8, "{}", d.stderr);
    assert!(d.stderr.contains("$.gas: local"), "{}", d.stderr);
    assert!(d.stderr.contains("field(s) differ"), "{}", d.stderr);
    let transfer = format!("{:?}", s.tx("transfer EOA->EOA").hash);
    let same = chaintrace(&[
        "diff",
        &transfer,
        "--rpc-url",
        &s.url,
        "--no-cache",
        "--tracer",
        "prestateTracer",
        "--tracer-config",
        r#"{"includeEmpty":true}"#,
    ]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stderr.contains("equals the node's"), "{}", same.stderr);

    let tx = s.tx("block: delegatecall #2 (reads #1)");
    let hash = format!("{:?}", tx.hash);
    let run = chaintrace(&["access", &hash, "--rpc-url", &s.url, "--json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    let hub = format!("{:?}", s.addr("Hub")).to_lowercase();
    let sender = format!("{:?}", s.anvil.sender()).to_lowercase();
    let sender_row = rows
        .iter()
        .find(|r| {
            r["address"].as_str().unwrap().to_lowercase() == sender && r.get("slot").is_none()
        })
        .expect("the sender's account row");
    assert_eq!(sender_row["written"], json!(true));
    assert_ne!(sender_row["before"], sender_row["after"], "fee paid");
    // The node's own prestate diff names the slots written; the access pattern has each of them
    // with the same before/after.
    let node = s.anvil.trace(
        tx.hash,
        json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
    );
    let mut checked = 0;
    for (addr, acc) in node["post"].as_object().unwrap() {
        for (slot, after) in acc
            .get("storage")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let row = rows
                .iter()
                .find(|r| {
                    r["address"].as_str().unwrap().to_lowercase() == *addr
                        && r.get("slot").is_some_and(|k| u256(k) == u256(&json!(slot)))
                })
                .unwrap_or_else(|| panic!("no access row for {addr} {slot}: {rows:?}"));
            assert_eq!(row["written"], json!(true));
            assert_eq!(u256(&row["after"]), u256(after));
            let before = &node["pre"][addr]["storage"][slot];
            assert_eq!(u256(&row["before"]), u256(before));
            assert!(!row["touchedBy"].as_array().unwrap().is_empty());
            checked += 1;
        }
    }
    assert!(checked > 0, "the delegatecall writes storage: {node}");
    assert!(rows
        .iter()
        .any(|r| r["address"].as_str().unwrap().to_lowercase() == hub));
    let table = chaintrace(&["access", &hash, "--rpc-url", &s.url, "--no-cache"]);
    assert_eq!(table.code, 0);
    assert!(
        table.stdout.contains("touched by") && table.stdout.contains("write"),
        "{}",
        table.stdout
    );
    let remote = chaintrace(&["access", &hash, "--rpc-url", &s.url, "--remote"]);
    assert_eq!(remote.code, 2, "{}", remote.stderr);
    assert!(
        remote.stderr.contains("debug_traceStateAccess"),
        "{}",
        remote.stderr
    );
}

fn u256(v: &Value) -> alloy_primitives::U256 {
    let s = v.as_str().unwrap_or("0x0");
    alloy_primitives::U256::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn block_range_streams_ndjson_in_order() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let first = last.saturating_sub(4);
    let range = format!("{first}..{last}");
    let run = chaintrace(&["block", &range, "--rpc-url", &s.url, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let mut want = Vec::new();
    for n in first..=last {
        let one = chaintrace(&["block", &n.to_string(), "--rpc-url", &s.url, "--json"]);
        assert_eq!(one.code, 0, "{}", one.stderr);
        for item in serde_json::from_str::<Vec<Value>>(&one.stdout).unwrap() {
            want.push(json!({"block": n, "txHash": item["txHash"], "result": item["result"]}));
        }
    }
    assert!(want.len() >= 6, "the range holds the multi-tx block");
    assert_eq!(lines, want);
    for l in run.stdout.lines() {
        assert!(l.starts_with(r#"{"block":"#), "{l}");
    }
    assert!(
        run.stderr.contains(&format!(
            "self-check: {} transactions in blocks {range}",
            want.len()
        )),
        "{}",
        run.stderr
    );
    let bad = chaintrace(&["block", "9..3", "--rpc-url", &s.url]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("malformed block range"),
        "{}",
        bad.stderr
    );
}

/// A block is replayed on its own parent: every state read of `tx` (RPC path) and `block`
/// names the parent by its hash (EIP-1898's `{"blockHash": …}`), never by a number, which a
/// reorg could make another block's. A node that refuses the object form ("invalid argument",
/// as one that predates EIP-1898) gets the number, once its block there is checked to be the
/// parent: the same trace, and a note saying so.
#[test]
fn block_replays_read_their_parent_by_hash() {
    let s = anvil::scenario();
    let tx = s.txs.last().expect("a scenario transaction");
    let hash = format!("{:?}", tx.hash);
    let receipt = s.anvil.rpc("eth_getTransactionReceipt", json!([hash]));
    let block = receipt["blockNumber"].as_str().unwrap().to_string();
    let want = if tx.expect_success { 0 } else { 3 };
    let runs = |url: &str| {
        let tx_run = chaintrace(&[
            "tx",
            &hash,
            "--rpc-url",
            url,
            "--json",
            "--no-cache",
            "--state-source",
            "rpc",
        ]);
        let block_run = chaintrace(&["block", &block, "--rpc-url", url, "--json"]);
        (tx_run, block_run)
    };
    let by_hash = Proxy::start(&s.url, &[]);
    let (t, b) = runs(&by_hash.url);
    assert_eq!(t.code, want, "{}", t.stderr);
    assert_eq!(b.code, want, "{}", b.stderr);
    let stats = by_hash.stats();
    assert_eq!(stats["stateByNumber"], 0, "{stats}");
    assert!(stats["stateByHash"].as_u64().unwrap() > 0, "{stats}");

    let old_node = Proxy::start(&s.url, &["--fault", "no-block-hash"]);
    let (t2, b2) = runs(&old_node.url);
    assert_eq!(
        (t2.code, b2.code),
        (want, want),
        "{}\n{}",
        t2.stderr,
        b2.stderr
    );
    assert_eq!(t2.stdout, t.stdout);
    assert_eq!(b2.stdout, b.stdout);
    for r in [&t2, &b2] {
        assert!(
            r.stderr.contains("the node refused a block named by hash (EIP-1898): parent states read at their numbers"),
            "{}",
            r.stderr
        );
    }
    assert!(
        t2.stderr.contains("self-check: replay matches the receipt"),
        "{}",
        t2.stderr
    );
    assert!(b2.stderr.contains("match their receipts"), "{}", b2.stderr);
    assert!(old_node.stats()["stateByNumber"].as_u64().unwrap() > 0);
}
