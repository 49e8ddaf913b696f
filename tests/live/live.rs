//! Live suite: a real node (anvil 1.7.1, installed by scripts/install-test-tools.sh) runs the
//! scenario in tests/contracts; every transaction replayed by `chaintrace tx` must equal anvil's
//! own `debug_traceTransaction` output and pass the self-check.
//!
//! anvil 1.7.1 differs from geth in a few documented ways; each is normalised below by name, and
//! our side of each is checked against geth's rule instead.

use crate::{anvil, run};
use run::Run;

use serde_json::{json, Value};

fn chaintrace(args: &[&str]) -> Run {
    run::cmd(args).no_cache().run()
}

/// anvil 1.7.1 prints some errors in revm's words; geth's are the reference.
fn anvil_error_to_geth(e: &str) -> String {
    match e {
        // revm's StateChangeDuringStaticCall is geth's ErrWriteProtection. The scenario's only
        // one is an SSTORE in a STATICCALL, which geth v1.17's SSTORE gas function refuses:
        // `out of gas: write protection` (LOGn/TSTORE would say `write protection`).
        "StateChangeDuringStaticCall" => "out of gas: write protection".into(),
        other => other.to_string(),
    }
}

fn normalise_anvil_frame(f: &mut Value) {
    if let Some(e) = f.get("error").and_then(Value::as_str) {
        f["error"] = json!(anvil_error_to_geth(e));
    }
    if let Some(calls) = f.get_mut("calls").and_then(Value::as_array_mut) {
        for c in calls {
            normalise_anvil_frame(c);
        }
    }
}

fn parse_u64(v: &Value) -> u64 {
    anvil::parse_u64(v)
}

/// Known anvil difference: its callTracer numbers logs per transaction, geth block-wide.
fn shift_log_index(f: &mut Value, offset: u64) {
    if let Some(logs) = f.get_mut("logs").and_then(Value::as_array_mut) {
        for l in logs {
            let i = parse_u64(&l["index"]) + offset;
            l["index"] = json!(format!("{i:#x}"));
        }
    }
    if let Some(calls) = f.get_mut("calls").and_then(Value::as_array_mut) {
        for c in calls {
            shift_log_index(c, offset);
        }
    }
}

/// Number of logs the transactions before `hash` in its block emitted.
fn block_log_offset(s: &anvil::Scenario, receipt: &Value) -> u64 {
    let block = s.anvil.rpc(
        "eth_getBlockByNumber",
        json!([receipt["blockNumber"], false]),
    );
    let mut n = 0;
    for h in block["transactions"].as_array().unwrap() {
        if *h == receipt["transactionHash"] {
            break;
        }
        let r = s.anvil.rpc("eth_getTransactionReceipt", json!([h]));
        n += r["logs"].as_array().map_or(0, Vec::len) as u64;
    }
    n
}

/// Known anvil difference: when an SSTORE fails with write protection, anvil does not record the
/// slot, while geth's prestate tracer looks it up in `OnOpcode` before the opcode runs.
const WRITE_PROTECTION_TX: &str = "staticcall (incl. write-protection failure)";

#[test]
fn every_scenario_tx_replays_like_the_node() {
    let s = anvil::scenario();
    let mut failures = Vec::new();
    for tx in &s.txs {
        let hash = format!("{:?}", tx.hash);
        let receipt = s.anvil.receipt(tx.hash);
        let node_tx = s.anvil.rpc("eth_getTransactionByHash", json!([hash]));
        let log_offset = block_log_offset(&s, &receipt);
        for cfg in [json!({}), json!({"withLog": true})] {
            let cfg_s = cfg.to_string();
            let run = chaintrace(&[
                "tx",
                &hash,
                "--rpc-url",
                &s.url,
                "--json",
                "--tracer-config",
                &cfg_s,
            ]);
            let want_code = if tx.expect_success { 0 } else { 3 };
            if run.code != want_code {
                failures.push(format!(
                    "{} {cfg_s}: exit {} (want {want_code}); stderr: {}",
                    tx.label, run.code, run.stderr
                ));
                continue;
            }
            if !run
                .stderr
                .contains("self-check: replay matches the receipt")
            {
                failures.push(format!(
                    "{}: no passing self-check on stderr: {}",
                    tx.label, run.stderr
                ));
            }
            let mut ours: Value = match serde_json::from_str(&run.stdout) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!(
                        "{}: stdout is not one JSON value ({e}): {}",
                        tx.label, run.stdout
                    ));
                    continue;
                }
            };
            // geth: top frame gas = tx gas limit, gasUsed = receipt gasUsed.
            if parse_u64(&ours["gas"]) != parse_u64(&node_tx["gas"]) {
                failures.push(format!(
                    "{}: top gas {} != tx gas limit {}",
                    tx.label, ours["gas"], node_tx["gas"]
                ));
            }
            if parse_u64(&ours["gasUsed"]) != parse_u64(&receipt["gasUsed"]) {
                failures.push(format!(
                    "{}: top gasUsed {} != receipt {}",
                    tx.label, ours["gasUsed"], receipt["gasUsed"]
                ));
            }
            let mut theirs = s.anvil.trace(
                tx.hash,
                json!({"tracer": "callTracer", "tracerConfig": cfg}),
            );
            normalise_anvil_frame(&mut theirs);
            shift_log_index(&mut theirs, log_offset);
            // Known anvil difference: top-level gas is the limit minus intrinsic gas, and gasUsed is
            // the block's running total; both were checked against geth's rule above.
            for k in ["gas", "gasUsed"] {
                theirs[k] = ours[k].clone();
            }
            if ours != theirs {
                failures.push(format!(
                    "{} callTracer {cfg_s}:\n  node {theirs}\n  ours {ours}",
                    tx.label
                ));
            }
            ours.take();
        }
        for (ours_cfg, node_cfg) in [
            (json!({}), json!({})),
            (json!({"diffMode": true}), json!({"diffMode": true})),
            (json!({"includeEmpty": true}), json!({})),
        ] {
            let cfg_s = ours_cfg.to_string();
            let run = chaintrace(&[
                "tx",
                &hash,
                "--rpc-url",
                &s.url,
                "--json",
                "--tracer",
                "prestateTracer",
                "--tracer-config",
                &cfg_s,
            ]);
            let mut ours: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
            anvil::strip_code_hash(&mut ours, &tx.label, &mut failures);
            let mut theirs = s.anvil.trace(
                tx.hash,
                json!({"tracer": "prestateTracer", "tracerConfig": node_cfg}),
            );
            if ours_cfg.get("includeEmpty").is_none() {
                anvil::drop_empty_accounts(&mut theirs);
            }
            if tx.label == WRITE_PROTECTION_TX {
                // Remove from ours the slots anvil lacks (see WRITE_PROTECTION_TX).
                let node = theirs.clone();
                if let Some(map) = ours.as_object_mut() {
                    for (addr, acc) in map.iter_mut() {
                        if node[addr].get("storage").is_none() {
                            if let Some(a) = acc.as_object_mut() {
                                a.remove("storage");
                            }
                        }
                    }
                }
            }
            if ours != theirs {
                failures.push(format!(
                    "{} prestateTracer {cfg_s}:\n  node {theirs}\n  ours {ours}",
                    tx.label
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn block_json_is_geth_shaped_and_matches_the_node() {
    let s = anvil::scenario();
    let receipt = s.anvil.receipt(s.multi_tx_block[0]);
    let number = parse_u64(&receipt["blockNumber"]).to_string();
    let run = chaintrace(&["block", &number, "--rpc-url", &s.url, "--json"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "self-check: {} transactions match their receipts",
            s.multi_tx_block.len()
        )),
        "{}",
        run.stderr
    );
    let ours: Value = serde_json::from_str(&run.stdout).expect("one JSON value");
    let theirs = s.anvil.rpc(
        "debug_traceBlockByNumber",
        json!([receipt["blockNumber"], {"tracer": "callTracer"}]),
    );
    let (ours, theirs) = (ours.as_array().unwrap(), theirs.as_array().unwrap());
    assert_eq!(ours.len(), s.multi_tx_block.len());
    assert_eq!(ours.len(), theirs.len());
    for ((o, t), hash) in ours.iter().zip(theirs).zip(&s.multi_tx_block) {
        assert_eq!(
            o.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["result", "txHash"]
        );
        assert_eq!(o["txHash"], json!(format!("{hash:?}")));
        let r = s.anvil.receipt(*hash);
        assert_eq!(parse_u64(&o["result"]["gasUsed"]), parse_u64(&r["gasUsed"]));
        let mut t = t["result"].clone();
        normalise_anvil_frame(&mut t);
        for k in ["gas", "gasUsed"] {
            t[k] = o["result"][k].clone();
        }
        assert_eq!(o["result"], t, "tx {hash:?}");
    }
}

#[test]
fn simulated_call_matches_debug_trace_call() {
    let s = anvil::scenario();
    let hub = format!("{:?}", s.addr("Hub"));
    let from = format!("{:?}", s.anvil.sender());
    for (sig, args) in [
        ("failNested(uint256)", vec![anvil::w_u(7)]),
        ("deep(uint256)", vec![anvil::w_u(3)]),
    ] {
        let data = anvil::hex0x(&anvil::calldata(sig, &args));
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
        ]);
        let theirs = s.anvil.try_rpc(
            "debug_traceCall",
            json!([{"from": from, "to": hub, "data": data, "gas": "0xf4240"}, "latest", {"tracer": "callTracer"}]),
        );
        let Ok(Ok(mut theirs)) = theirs else {
            panic!("debug_traceCall failed: {theirs:?}")
        };
        assert!(
            run.code == 0 || run.code == 3,
            "{sig}: exit {} stderr {}",
            run.code,
            run.stderr
        );
        assert_eq!(
            run.code == 0,
            theirs.get("error").is_none(),
            "{sig}: status differs"
        );
        let ours: Value = serde_json::from_str(&run.stdout).expect("one JSON value");
        assert_eq!(
            ours["gas"],
            json!("0xf4240"),
            "{sig}: top gas is the call's gas limit"
        );
        normalise_anvil_frame(&mut theirs);
        for k in ["gas", "gasUsed"] {
            theirs[k] = ours[k].clone();
        }
        assert_eq!(ours, theirs, "{sig}");
    }
}

#[test]
fn unknown_transaction_is_a_source_error() {
    let s = anvil::scenario();
    let run = chaintrace(&[
        "tx",
        "0x00000000000000000000000000000000000000000000000000000000deadbeef",
        "--rpc-url",
        &s.url,
    ]);
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("not found on the node"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn remote_trace_costs_few_round_trips() {
    let s = anvil::scenario();
    for label in [
        "deep nesting (5 levels, value forwarded)",
        "CREATE + CREATE2 (+ failed CREATE)",
        "block: deep nesting",
    ] {
        let hash = format!("{:?}", s.tx(label).hash);
        let run = chaintrace(&["tx", &hash, "--rpc-url", &s.url, "--json"]);
        let line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("rpc: "))
            .unwrap_or_else(|| panic!("no rpc stats line: {}", run.stderr));
        let requests: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        // chain id, tx + receipt (one batch), block, then one batch per speculative pass.
        assert!(requests <= 8, "{label}: {line}");
    }
}

#[test]
fn human_output_links_the_explorer_and_names_the_failure() {
    let s = anvil::scenario();
    let tx = s.tx("revert custom error (nested, bubbled)");
    let hash = format!("{:?}", tx.hash);
    let run = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &s.url,
        "--explorer",
        "https://explorer.example/tx/{hash}",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stdout
            .contains(&format!("explorer: https://explorer.example/tx/{hash}")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("reverted: "), "{}", run.stdout);
    assert!(!run.stdout.contains('\u{1b}'), "NO_COLOR is honoured");
    let json = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &s.url,
        "--json",
        "--explorer",
        "https://explorer.example/tx/{hash}",
    ]);
    assert!(
        !json.stdout.contains("explorer"),
        "--json prints only geth's JSON"
    );
}

/// JS tracers see where a mined transaction sits: `ctx.blockHash`, `ctx.txIndex`, `ctx.txHash`.
#[test]
fn js_ctx_knows_block_hash_and_index() {
    let s = anvil::scenario();
    let script = "{result: function(ctx) { return {blockHash: toHex(ctx.blockHash), txIndex: ctx.txIndex, txHash: toHex(ctx.txHash)}; }, fault: function() {}}";
    for hash in &s.multi_tx_block {
        let h = format!("{hash:?}");
        let run = chaintrace(&["tx", &h, "--rpc-url", &s.url, "--json", "--tracer", script]);
        assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        let r = s.anvil.receipt(*hash);
        assert_eq!(v["blockHash"], r["blockHash"], "{v}");
        assert_eq!(
            v["txIndex"].as_u64(),
            Some(parse_u64(&r["transactionIndex"])),
            "{v}"
        );
        assert_eq!(v["txHash"], json!(h));
    }
}

/// A simulated call without --gas gets the block's gas limit, capped at EIP-7825's 2^24 on an
/// Osaka chain (anvil's default), as a node's estimate would be.
#[test]
fn simulated_call_default_gas_respects_the_osaka_cap() {
    let s = anvil::scenario();
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
        "--rpc-url",
        &s.url,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["gas"], json!("0x1000000"), "{v}");
}

/// What a JS tracer's `db` returns in `step` at every state-writing opcode, for every scenario
/// transaction, against anvil's own JS run. revm-inspectors delivers `step` before the opcode,
/// so its `db` shows the pre-opcode state — except for storage, which it reads from beneath the
/// transaction (geth's reflects earlier writes of the same transaction; docs/tracing.md). So: every entry
/// but a repeated write to a slot must equal the node's; a repeated write must see the value the
/// previous write to that slot stored (geth), unless a frame failed in between (its writes were
/// undone; those few are counted, not checked).
#[test]
fn js_db_in_step_sees_the_state_before_each_state_writing_opcode_like_the_node() {
    let s = anvil::scenario();
    let script = r#"{
  seen: [],
  hex: function(v) { return '0x' + v.toString(16); },
  step: function(log, db) {
    var op = log.op.toNumber(), a = log.contract.getAddress(), d = log.getDepth();
    if (op == 0x55) {
      var slot = toWord(this.hex(log.stack.peek(0)));
      this.seen.push(['SSTORE', d, toHex(a), toHex(slot), toHex(db.getState(a, slot)), toHex(toWord(this.hex(log.stack.peek(1))))]);
    } else if (op == 0xff) {
      var b = toAddress(this.hex(log.stack.peek(0)));
      this.seen.push(['SELFDESTRUCT', d, db.getBalance(a).toString(), db.getBalance(b).toString(), db.exists(b), db.getNonce(a)]);
    } else if (op == 0xf1 || op == 0xf2) {
      var to = toAddress(this.hex(log.stack.peek(1)));
      this.seen.push([log.op.toString(), d, db.getBalance(a).toString(), db.getBalance(to).toString(), db.exists(to), db.getNonce(to)]);
    } else if (op == 0xf0 || op == 0xf5) {
      this.seen.push([log.op.toString(), d, db.getNonce(a), db.getBalance(a).toString()]);
    }
  },
  enter: function(f) {},
  exit: function(r) { if (r.getError()) this.seen.push(['FAILED']); },
  fault: function() {},
  result: function() { return this.seen; }
}"#;
    let mut failures = Vec::new();
    let (mut equal, mut followed, mut unchecked) = (0, 0, 0);
    for tx in &s.txs {
        let hash = format!("{:?}", tx.hash);
        let run = chaintrace(&[
            "tx",
            &hash,
            "--rpc-url",
            &s.url,
            "--json",
            "--tracer",
            script,
        ]);
        let ours: Value = match serde_json::from_str(&run.stdout) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{}: exit {} ({e}): {}",
                    tx.label, run.code, run.stderr
                ));
                continue;
            }
        };
        let theirs = s.anvil.trace(tx.hash, json!({"tracer": script}));
        // FAILED markers come from `exit`, whose errors anvil reports differently (a failed
        // CREATE); ours mark where writes were undone, the node's are dropped.
        let theirs: Vec<&Value> = theirs
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t[0] != "FAILED")
            .collect();
        let ours = ours.as_array().unwrap();
        let steps = ours.iter().filter(|o| o[0] != "FAILED").count();
        if steps != theirs.len() {
            failures.push(format!(
                "{}: {steps} entries, node {}",
                tx.label,
                theirs.len()
            ));
            continue;
        }
        let mut theirs = theirs.into_iter();
        // slot -> (value last written, a frame failed since)
        let mut written: std::collections::HashMap<(Value, Value), (Value, bool)> =
            Default::default();
        for o in ours {
            if o[0] == "FAILED" {
                written.values_mut().for_each(|w| w.1 = true);
                continue;
            }
            let t = theirs.next().unwrap();
            if o[0] != "SSTORE" {
                equal += 1;
                if o != t {
                    failures.push(format!("{}: node {t}, ours {o}", tx.label));
                }
                continue;
            }
            let key = (o[2].clone(), o[3].clone());
            match written.insert(key, (o[5].clone(), false)) {
                None => {
                    equal += 1;
                    if o != t {
                        failures.push(format!("{}: first write: node {t}, ours {o}", tx.label));
                    }
                }
                Some((_, true)) => unchecked += 1,
                Some((prev, false)) => {
                    followed += 1;
                    if o[4] != prev {
                        failures.push(format!(
                            "{}: repeated write sees {} (previous write stored {prev}): {o}",
                            tx.label, o[4]
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(equal > 20, "only {equal} entries compared with the node");
    assert!(followed > 10, "only {followed} repeated writes checked");
    eprintln!(
        "{equal} state-writing steps equal to the node's, {followed} repeated writes see the \
         previous write, {unchecked} after a failed frame not checked"
    );
}

/// A simulated call the state refuses is bad input (exit 1) named as the call, not a node
/// failure with a placeholder transaction hash.
#[test]
fn an_invalid_simulated_call_is_bad_input() {
    let a = anvil::Anvil::start();
    let from = format!("{:?}", a.sender());
    let to = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    for extra in [
        &["--gas", "0"][..],
        &["--value", "0xffffffffffffffffffffffffff"][..],
    ] {
        let mut args = vec!["call", "--rpc-url", a.url(), "--from", &from, "--to", to];
        args.extend_from_slice(extra);
        let run = chaintrace(&args);
        assert_eq!(run.code, 1, "{extra:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("the simulated call is invalid in this state"),
            "{}",
            run.stderr
        );
        assert!(!run
            .stderr
            .contains("0x0000000000000000000000000000000000000000000000000000000000000000"));
    }
}

/// `bundle capture -o` writes the bundle whole or not at all: a folder as the output is refused
/// before anything is written, and no `.tmp` file is left behind; the bundle replays offline.
#[test]
fn bundle_capture_writes_whole_or_nothing() {
    let s = anvil::scenario();
    let hash = format!("{:?}", s.txs[0].hash);
    let dir = std::env::temp_dir().join(format!("chaintrace-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap().to_string();
    let run = chaintrace(&["bundle", "capture", &hash, "--rpc-url", &s.url, "-o", &d]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("is a folder"), "{}", run.stderr);
    assert!(!std::path::Path::new(&format!("{d}.tmp")).exists());
    let file = dir.join("b.json");
    let f = file.to_str().unwrap();
    let run = chaintrace(&["bundle", "capture", &hash, "--rpc-url", &s.url, "-o", f]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!dir.join("b.json.tmp").exists());
    let replay = chaintrace(&["tx", "--fixture", f, "--json"]);
    assert!(replay.code == 0 || replay.code == 3, "{}", replay.stderr);
    assert!(
        replay.stderr.contains("replay matches the receipt"),
        "{}",
        replay.stderr
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A bundle of a transaction late in its block holds the state its earlier transactions left
/// (built through the replay driver) and the block-wide index of its first log (from their
/// receipts): three increments of one counter in one block, the third captured, replays
/// offline with the counter at 3 and its log at the index its receipt gives.
#[test]
fn a_bundle_holds_the_state_its_blocks_earlier_transactions_left() {
    let node = anvil::Anvil::start();
    // SLOAD(0)+1 → SSTORE(0); LOG0 of the new value.
    let counter = node.deploy("6013600c60003960136000f36000546001018060005560005260206000a000");
    let hashes = node.send_in_one_block(
        (0..3)
            .map(|_| json!({"to": counter, "gas": "0x20000"}))
            .collect(),
    );
    let receipt = node.receipt(hashes[2]);
    let dir = std::env::temp_dir().join(format!("chaintrace-capture-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("b.json");
    let f = file.to_str().unwrap();
    let hash = format!("{:?}", hashes[2]);
    let run = chaintrace(&["bundle", "capture", &hash, "--rpc-url", node.url(), "-o", f]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let replay = chaintrace(&[
        "tx",
        "--fixture",
        f,
        "--json",
        "--tracer-config",
        r#"{"withLog":true}"#,
    ]);
    assert_eq!(replay.code, 0, "{}", replay.stderr);
    assert!(
        replay
            .stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        replay.stderr
    );
    let v: Value = serde_json::from_str(&replay.stdout).unwrap();
    let log = &v["logs"][0];
    assert_eq!(log["data"], receipt["logs"][0]["data"]);
    assert_eq!(
        log["data"],
        json!(format!("0x{:064x}", 3)),
        "the counter after two earlier increments"
    );
    assert_eq!(log["index"], receipt["logs"][0]["logIndex"]);
    let _ = std::fs::remove_dir_all(&dir);
}
