//! `serve`'s Parity `trace_*` methods against anvil's own (anvil 1.7.1 builds them with
//! revm-inspectors' `ParityTraceBuilder`, as reth does): `trace_transaction` and `trace_block`
//! for every scenario transaction and its block, compared as JSON values; `trace_get`; and
//! `cast rpc` as a real client of each method.
//!
//! Known differences between anvil and reth are listed by name in [`ANVIL_DIFFERENCES`], each
//! with the source line that decides it; none is tuned into chaintrace.

use crate::{anvil, serve_support};
use serve_support::Serve;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

/// Where anvil departs from reth's `trace_*` answers, by name. Each is undone on anvil's side
/// only (see [`as_reth`]); the test fails if one is never seen, so the list stays true.
///
/// - `precompile calls listed`: anvil records its traces with
///   `TracingInspectorConfig::all().set_steps(false)` (foundry `crates/anvil/src/eth/backend/mem/
///   inspector.rs`, `Inspector::with_tracing`), whose `exclude_precompile_calls` is false, so
///   `ParityTraceBuilder::iter_traceable_nodes` keeps calls to precompiles; reth's
///   `trace_transaction`/`trace_block` trace with `TracingInspectorConfig::default_parity()`
///   (`exclude_precompile_calls: true`, revm-inspectors `src/tracing/config.rs`), and
///   `TracingInspector::is_precompile_call` leaves out a value-less call to a precompile below
///   the top frame, which is then neither listed nor counted in `subtraces`/`traceAddress`.
const ANVIL_DIFFERENCES: &[&str] = &["precompile calls listed"];

/// The highest precompile address of the scenario's fork (Prague: 0x01..=0x11).
const LAST_PRECOMPILE: u8 = 0x11;

fn is_precompile_call(t: &Value) -> bool {
    let a = &t["action"];
    let to = a["to"].as_str().unwrap_or_default();
    let Ok(to) = to.parse::<alloy_primitives::Address>() else {
        return false;
    };
    let low = to.0[19];
    to.0[..19].iter().all(|b| *b == 0)
        && (1..=LAST_PRECOMPILE).contains(&low)
        && a["value"] == json!("0x0")
        && t["traceAddress"].as_array().is_some_and(|v| !v.is_empty())
}

/// anvil's list with `precompile calls listed` undone: those traces dropped, the others'
/// `traceAddress` and `subtraces` renumbered (a precompile makes no calls of its own).
fn as_reth(list: &Value, seen: &mut BTreeSet<&'static str>) -> Value {
    let Some(list) = list.as_array() else {
        return list.clone();
    };
    // Keyed by transaction too: trace_block lists many.
    type Key = (String, Vec<u64>);
    let mut renamed: std::collections::HashMap<Key, Vec<u64>> = Default::default();
    let mut kids: std::collections::HashMap<Key, u64> = Default::default();
    let mut out = Vec::new();
    for t in list {
        if is_precompile_call(t) {
            seen.insert("precompile calls listed");
            continue;
        }
        let old: Vec<u64> = t["traceAddress"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let tx = t["transactionHash"].to_string();
        let new = match old.split_last() {
            None => Vec::new(),
            Some((_, parent)) => {
                let parent = (tx.clone(), parent.to_vec());
                let mut p = renamed.get(&parent).cloned().unwrap_or_default();
                let n = kids.entry(parent).or_default();
                p.push(*n);
                *n += 1;
                p
            }
        };
        renamed.insert((tx, old), new.clone());
        let mut t = t.clone();
        t["traceAddress"] = json!(new);
        out.push(t);
    }
    // Subtraces: the kept children of each (tx, address).
    let mut counts: std::collections::HashMap<(Value, Vec<u64>), usize> = Default::default();
    for t in &out {
        let a: Vec<u64> = serde_json::from_value(t["traceAddress"].clone()).unwrap();
        if let Some((_, parent)) = a.split_last() {
            *counts
                .entry((t["transactionHash"].clone(), parent.to_vec()))
                .or_default() += 1;
        }
    }
    for t in &mut out {
        let a: Vec<u64> = serde_json::from_value(t["traceAddress"].clone()).unwrap();
        t["subtraces"] = json!(counts
            .get(&(t["transactionHash"].clone(), a))
            .copied()
            .unwrap_or(0));
    }
    Value::Array(out)
}

/// The `result` of one call to `serve` (`null` included); panics on an error.
fn ours(serve: &Serve, method: &str, params: Value) -> Value {
    let text = serve
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v.get("error").is_none(), "{method}: {text}");
    v["result"].clone()
}

/// Each differing trace as "label: method #i: ours vs anvil's".
fn compare(label: &str, method: &str, ours: &Value, theirs: &Value, diffs: &mut Vec<String>) {
    let (a, b) = (ours.as_array(), theirs.as_array());
    let (Some(a), Some(b)) = (a, b) else {
        diffs.push(format!("{label}: {method}: {ours} vs {theirs}"));
        return;
    };
    if a.len() != b.len() {
        diffs.push(format!(
            "{label}: {method}: {} traces vs {}:\n  ours {ours}\n  anvil {theirs}",
            a.len(),
            b.len()
        ));
        return;
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            diffs.push(format!("{label}: {method} #{i}:\n  ours  {x}\n  anvil {y}"));
        }
    }
}

#[test]
fn trace_transaction_and_block_equal_anvils_for_every_scenario_tx() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let mut diffs = Vec::new();
    let mut blocks = BTreeSet::new();
    let mut traces = 0;
    let mut seen = BTreeSet::new();
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let got = ours(&serve, "trace_transaction", json!([hash]));
        let want = as_reth(&s.anvil.rpc("trace_transaction", json!([hash])), &mut seen);
        traces += got.as_array().map_or(0, Vec::len);
        compare(&t.label, "trace_transaction", &got, &want, &mut diffs);
        // trace_get with each index equals the list's entry; more than one index is null.
        for (i, entry) in got.as_array().into_iter().flatten().enumerate() {
            let one = ours(&serve, "trace_get", json!([hash, [format!("{i:#x}")]]));
            assert_eq!(&one, entry, "{}: trace_get {i}", t.label);
        }
        assert_eq!(
            ours(&serve, "trace_get", json!([hash, ["0x0", "0x1"]])),
            Value::Null
        );
        blocks.insert(anvil::parse_u64(&s.anvil.receipt(t.hash)["blockNumber"]));
    }
    for n in &blocks {
        let n = format!("{n:#x}");
        let got = ours(&serve, "trace_block", json!([n]));
        let want = as_reth(&s.anvil.rpc("trace_block", json!([n])), &mut seen);
        compare(
            &format!("block {n}"),
            "trace_block",
            &got,
            &want,
            &mut diffs,
        );
    }
    eprintln!(
        "parity: {} transactions ({traces} traces) and {} blocks compared, {} differences",
        s.txs.len(),
        blocks.len(),
        diffs.len()
    );
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    let named: BTreeSet<&str> = ANVIL_DIFFERENCES.iter().copied().collect();
    assert_eq!(seen, named, "named anvil differences seen");
}

#[test]
fn unknown_transaction_and_block_are_null_and_bad_params_refused() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let none = format!("{:?}", alloy_primitives::B256::repeat_byte(0x11));
    assert_eq!(
        ours(&serve, "trace_transaction", json!([none])),
        Value::Null
    );
    assert_eq!(
        ours(&serve, "trace_block", json!(["0xffffff"])),
        Value::Null
    );
    let text = serve.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trace_transaction", "params": ["0x12"]})
            .to_string(),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], json!(-32602), "{text}");
}

#[test]
fn cast_rpc_gets_each_trace_method() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let cast = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/cast");
    assert!(
        cast.is_file(),
        "cast missing: run scripts/install-test-tools.sh"
    );
    let t = &s.txs[s.txs.len() / 2];
    let hash = format!("{:?}", t.hash);
    let block = s.anvil.receipt(t.hash)["blockNumber"]
        .as_str()
        .unwrap()
        .to_string();
    for (method, args) in [
        ("trace_transaction", vec![hash.clone()]),
        ("trace_get", vec![hash.clone(), r#"["0x0"]"#.to_string()]),
        ("trace_block", vec![block]),
    ] {
        let out = Command::new(&cast)
            .args(["rpc", "--rpc-url", &serve.url, method])
            .args(&args)
            .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "1")
            .output()
            .expect("run cast");
        assert!(
            out.status.success(),
            "cast {method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("cast prints JSON");
        let params: Vec<Value> = args
            .iter()
            .map(|a| serde_json::from_str(a).unwrap_or_else(|_| json!(a)))
            .collect();
        let want = ours(&serve, method, Value::Array(params));
        assert_eq!(got, want, "cast rpc {method}");
    }
}
