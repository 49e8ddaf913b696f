//! Differential test of the struct logger (`opcodeTracer`) against anvil 1.7.1's own struct logs
//! (anvil started with `--steps-tracing`) on every scenario transaction.
//!
//! Every field must be equal except where anvil 1.7.1 is known to differ from geth; each such
//! field is named below with the reason, and normalised on anvil's side only.

use crate::{anvil, run};
use serde_json::{json, Value};

fn ours(url: &str, hash: &str, config: &Value) -> (i32, Value) {
    let out = run::cmd(&[])
        .env("CHAINTRACE_NO_CACHE", "1")
        .args([
            "tx",
            hash,
            "--rpc-url",
            url,
            "--json",
            "--tracer",
            "opcodeTracer",
            "--tracer-config",
            &config.to_string(),
        ])
        .output()
        .expect("run chaintrace");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{hash}: stdout not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

/// Normalises one anvil struct log to geth's rules.
fn normalise_anvil_step(step: &mut Value) {
    let m = step.as_object_mut().unwrap();
    // anvil prints `"refund": 0` on every step; geth omits a zero refund.
    // anvil's counter is per frame (revm's), geth's transaction-wide: compared separately below.
    m.remove("refund");
    // anvil prints `"memory": []` and `"returnData": "0x"` when empty; geth omits both.
    if m.get("memory")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        m.remove("memory");
    }
    if m.get("returnData").and_then(Value::as_str) == Some("0x") {
        m.remove("returnData");
    }
    // Since v1.17 geth's gas functions of SSTORE, SELFDESTRUCT, CREATE, CREATE2 and a CALL with
    // value refuse a static context: the step fails before executing, `out of gas: write
    // protection`, at the constant cost. LOGn and TSTORE still fail inside the opcode (no step
    // error). anvil 1.7.1 (revm) reports its own pre-execution check either way.
    if matches!(
        m.get("error").and_then(Value::as_str),
        Some("Some(StateChangeDuringStaticCall)" | "Some(CallNotAllowedInsideStatic)")
    ) {
        let constant = match m.get("op").and_then(Value::as_str) {
            Some("SSTORE") => Some(0),
            Some("SELFDESTRUCT") => Some(5000),
            Some("CREATE" | "CREATE2") => Some(32000),
            Some("CALL") => Some(100),
            _ => None,
        };
        match constant {
            Some(c) => {
                m.insert("error".into(), json!("out of gas: write protection"));
                m.insert("gasCost".into(), json!(c));
            }
            None => {
                m.remove("error");
            }
        }
    }
    // anvil prints revm's Debug text for errors (e.g. `OutOfGas`); geth prints `out of gas`.
    if let Some(e) = m.get("error").and_then(Value::as_str) {
        let geth = match e {
            "OutOfGas"
            | "Some(OutOfGas)"
            | "Some(MemoryOOG)"
            | "Some(MemoryLimitOOG)"
            | "Some(InvalidOperandOOG)" => "out of gas".to_string(),
            "Some(ReentrancySentryOOG)" => {
                "out of gas: not enough gas for reentrancy sentry".to_string()
            }
            other => other.to_string(),
        };
        m.insert("error".into(), json!(geth));
    }
}

#[test]
fn struct_logs_equal_anvil_except_known_differences() {
    let s = anvil::scenario_with_args(&["--steps-tracing"]);
    let mut failures = Vec::new();
    let configs = [
        json!({}),
        json!({"enableMemory": true, "enableReturnData": true, "disableStorage": true}),
    ];
    let mut steps_compared = 0usize;
    for tx in &s.txs {
        let hash = format!("{:?}", tx.hash);
        for cfg in &configs {
            let (code, mine) = ours(&s.url, &hash, cfg);
            assert_eq!(code, if tx.expect_success { 0 } else { 3 }, "{}", tx.label);
            let theirs = s.anvil.trace(tx.hash, cfg.clone());
            for k in ["failed", "returnValue"] {
                if mine[k] != theirs[k] {
                    failures.push(format!(
                        "{} {cfg}: {k} ours {} node {}",
                        tx.label, mine[k], theirs[k]
                    ));
                }
            }
            let receipt = s.anvil.receipt(tx.hash);
            if mine["gas"].as_u64() != Some(anvil::parse_u64(&receipt["gasUsed"])) {
                failures.push(format!(
                    "{}: gas {} != receipt gasUsed {}",
                    tx.label, mine["gas"], receipt["gasUsed"]
                ));
            }
            let (a, b) = (
                mine["structLogs"].as_array().unwrap(),
                theirs["structLogs"].as_array().unwrap(),
            );
            if a.len() != b.len() {
                failures.push(format!(
                    "{} {cfg}: {} steps, node {}",
                    tx.label,
                    a.len(),
                    b.len()
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let mut x = x.clone();
                let mut y = y.clone();
                let anvil_step_failed = y.get("error").is_some();
                normalise_anvil_step(&mut y);
                x.as_object_mut().unwrap().remove("refund");
                let op = x["op"].as_str().unwrap_or_default().to_string();
                // anvil's CREATE/CREATE2 gasCost includes the gas forwarded to the init code; geth's
                // opCreate takes that gas after OnOpcode, so its cost excludes it. The forwarded
                // gas is the first gas the child frame reports.
                if op == "CREATE" || op == "CREATE2" {
                    if let Some(next) = b
                        .get(i + 1)
                        .filter(|n| n["depth"].as_u64() == x["depth"].as_u64().map(|d| d + 1))
                    {
                        let geth_cost =
                            y["gasCost"].as_u64().unwrap() - next["gas"].as_u64().unwrap();
                        y["gasCost"] = json!(geth_cost);
                    }
                }
                // anvil prints an empty storage map for an SLOAD of a slot warmed by the
                // transaction's access list; geth prints the slot it read.
                if op == "SLOAD"
                    && y.get("storage")
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.is_empty())
                {
                    if let Some(sx) = x.get("storage").cloned() {
                        y["storage"] = sx;
                    }
                }
                // On an SSTORE that anvil reports as failed (reentrancy sentry, write protection),
                // anvil records the slot's current value or nothing; geth's struct logger records
                // the value being stored.
                if op == "SSTORE" && anvil_step_failed {
                    if let (Some(sx), Some(sy)) = (x.get("storage").cloned(), y.get_mut("storage"))
                    {
                        *sy = sx;
                    }
                }
                // On a step that ran out of gas anvil reports the gas left as its cost; geth
                // reports the price (constant gas plus what its dynamic gas function computed),
                // which exceeds the gas left. Exact prices: tests/geth_reference.rs.
                if y.get("error").and_then(Value::as_str) == Some("out of gas") {
                    let (cost, gas) = (x["gasCost"].as_u64(), x["gas"].as_u64());
                    if cost <= gas {
                        failures.push(format!(
                            "{} {cfg}: step {i} ran out of gas at a cost {cost:?} within its gas \
                             {gas:?}: {x}",
                            tx.label
                        ));
                    }
                    y["gasCost"] = x["gasCost"].clone();
                }
                steps_compared += 1;
                if x != y {
                    failures.push(format!(
                        "{} {cfg}: step {i} differs:\n  ours {x}\n  node {y}",
                        tx.label
                    ));
                    break;
                }
            }
        }
    }
    eprintln!(
        "compared {steps_compared} struct-log steps over {} transactions",
        s.txs.len()
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `chaintrace gas` on every scenario transaction: the opcode table (with its residual rows)
/// plus intrinsic gas minus refund equals the receipt's gas used, and the flamegraph is valid SVG
/// whose root total is the execution gas.
#[test]
fn gas_tables_reconcile_with_every_receipt() {
    let s = anvil::scenario();
    let dir = std::env::temp_dir().join(format!("chaintrace-gas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for (i, tx) in s.txs.iter().enumerate() {
        let hash = format!("{:?}", tx.hash);
        let svg = dir.join(format!("{i}.svg"));
        let out = run::cmd(&[])
            .env("CHAINTRACE_NO_CACHE", "1")
            .args([
                "gas",
                &hash,
                "--rpc-url",
                &s.url,
                "--json",
                "--flamegraph",
                svg.to_str().unwrap(),
                "--by-op",
            ])
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        assert_eq!(
            code,
            if tx.expect_success { 0 } else { 3 },
            "{}: {}",
            tx.label,
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = &v["transaction"];
        let ops: u64 = v["opcodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["gas"].as_u64().unwrap())
            .sum();
        let receipt_gas = anvil::parse_u64(&s.anvil.receipt(tx.hash)["gasUsed"]);
        let (intrinsic, execution, refund) = (
            t["intrinsicGas"].as_u64().unwrap(),
            t["executionGas"].as_u64().unwrap(),
            t["refund"].as_u64().unwrap(),
        );
        if ops != execution {
            failures.push(format!(
                "{}: opcode total {ops} != execution gas {execution}",
                tx.label
            ));
        }
        let floor = t["floorGas"].as_u64().unwrap();
        let used = (ops + intrinsic - refund).max(floor);
        if used != receipt_gas || t["gasUsed"].as_u64() != Some(receipt_gas) {
            failures.push(format!("{}: ops {ops} + intrinsic {intrinsic} - refund {refund} = {used}, receipt {receipt_gas}", tx.label));
        }
        let text = std::fs::read_to_string(&svg).unwrap();
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&text, opts)
            .unwrap_or_else(|e| panic!("{}: SVG does not parse: {e}", tx.label));
        let root_total = doc
            .descendants()
            .filter(|n| n.has_tag_name("title"))
            .filter_map(|n| n.text())
            .find_map(|t| {
                t.strip_prefix("all (")
                    .map(|r| r.split(' ').next().unwrap().replace(',', ""))
            })
            .map(|n| n.parse::<u64>().unwrap());
        // An execution that spent no gas (a plain transfer) has an empty flamegraph.
        if execution > 0 && root_total != Some(execution) {
            failures.push(format!(
                "{}: flamegraph root {root_total:?} != execution gas {execution}",
                tx.label
            ));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The gas report's block and call forms: every transaction of a block (geth's block shape with
/// the report as `result`), and a simulated call, each reconciling to its gas used.
#[test]
fn gas_report_for_blocks_and_calls() {
    let s = anvil::scenario();
    let receipt = s.anvil.receipt(s.multi_tx_block[0]);
    let number = anvil::parse_u64(&receipt["blockNumber"]).to_string();
    let run = |args: &[&str]| {
        let out = run::cmd(&[])
            .env("CHAINTRACE_NO_CACHE", "1")
            .args(args)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap_or(-1), v)
    };
    let reconciles = |r: &Value| {
        let t = &r["transaction"];
        let ops: u64 = r["opcodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["gas"].as_u64().unwrap())
            .sum();
        assert_eq!(ops, t["executionGas"].as_u64().unwrap(), "{r}");
        let used = (ops + t["intrinsicGas"].as_u64().unwrap() - t["refund"].as_u64().unwrap())
            .max(t["floorGas"].as_u64().unwrap());
        assert_eq!(used, t["gasUsed"].as_u64().unwrap(), "{r}");
        used
    };
    let (code, v) = run(&[
        "block",
        &number,
        "--rpc-url",
        &s.url,
        "--json",
        "--gas-report",
    ]);
    assert_eq!(code, 0);
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), s.multi_tx_block.len());
    for (item, hash) in items.iter().zip(&s.multi_tx_block) {
        assert_eq!(item["txHash"], json!(format!("{hash:?}")));
        let used = reconciles(&item["result"]);
        assert_eq!(used, anvil::parse_u64(&s.anvil.receipt(*hash)["gasUsed"]));
    }
    let hub = format!("{:?}", s.addr("Hub"));
    let from = format!("{:?}", s.anvil.sender());
    let data = anvil::hex0x(&anvil::calldata("deep(uint256)", &[anvil::w_u(3)]));
    let (code, v) = run(&[
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
        "--gas-report",
    ]);
    assert_eq!(code, 0, "{v}");
    reconciles(&v);
    assert!(
        v["frames"].as_array().unwrap().len() >= 4,
        "deep(3) nests calls: {v}"
    );
}
