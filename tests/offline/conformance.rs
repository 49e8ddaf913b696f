//! geth's own tracer fixtures (../shared/conformance/geth), and op-geth's deposit fixtures
//! (../shared/conformance/op-geth): every one must produce the result its client gave.
//!
//! callTracer results are compared as strings after re-serialising geth's expected value through
//! our frame type (the way geth's own test compares); prestate results as canonical JSON.

use std::path::{Path, PathBuf};

use chaintrace::render::json::to_json_string;
use chaintrace::replay::{trace_fixture, TraceResult};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::call::CallFrame;
use chaintrace::trace::erc7562::Erc7562Frame;
use chaintrace::trace::{TracerKind, TracerSpec};

/// geth's fixtures; op-geth's are under [`OP_GETH`].
const GETH: &str = "geth";
/// op-geth's deposit fixtures. op-geth's harness (`calltrace_test.go`,
/// `flat_calltrace_test.go`) runs them with configs that declare no OP stack: the deposit's own
/// type decides it is one, and the rules before Regolith apply.
const OP_GETH: &str = "op-geth";

fn conformance_dir(client: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance")
        .join(client);
    dir.is_dir().then_some(dir)
}

fn fixtures(sub: &str, expected: usize) -> Vec<PathBuf> {
    client_fixtures(GETH, sub, expected)
}

fn client_fixtures(client: &str, sub: &str, expected: usize) -> Vec<PathBuf> {
    let Some(dir) = conformance_dir(client) else {
        // Under CI the fixtures are laid beside the clone: their absence is a failure, never a
        // silently smaller run.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "conformance: ../shared/conformance is absent under CI: {client}'s {sub} fixtures \
             cannot be run"
        );
        eprintln!(
            "\n*** conformance: ../shared/conformance is absent: {client}'s {sub} fixtures were \
             NOT run (a fresh clone outside the workspace has no copy of them) ***\n"
        );
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    assert_eq!(
        v.len(),
        expected,
        "{sub}: {} fixtures in {}, expected {client}'s {expected}",
        v.len(),
        dir.display()
    );
    v
}

/// geth's fixtures omit a log's `index` where geth prints `"0x0"` (its struct has no omitempty).
fn with_default_log_index(v: &mut serde_json::Value) {
    if let Some(logs) = v.get_mut("logs").and_then(|l| l.as_array_mut()) {
        for l in logs {
            if let Some(m) = l.as_object_mut() {
                m.entry("index").or_insert_with(|| "0x0".into());
            }
        }
    }
    if let Some(calls) = v.get_mut("calls").and_then(|c| c.as_array_mut()) {
        for c in calls {
            with_default_log_index(c);
        }
    }
}

/// geth's test reads the expected result into its struct and writes it again: an address
/// (`common.Address`) comes out in lower case whatever case the fixture wrote it in
/// (op-geth's `deposit.json` writes `from` checksummed).
fn with_geths_address_case(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s)
            if s.len() == 42
                && s.starts_with("0x")
                && s[2..].bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            *s = s.to_lowercase();
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(with_geths_address_case),
        serde_json::Value::Object(m) => m.values_mut().for_each(with_geths_address_case),
        _ => {}
    }
}

fn run(sub: &str, kind: TracerKind, expected: usize) -> usize {
    run_client(GETH, sub, kind, expected)
}

fn run_client(client: &str, sub: &str, kind: TracerKind, expected: usize) -> usize {
    let files = client_fixtures(client, sub, expected);
    let mut failures = Vec::new();
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let spec = TracerSpec::new(kind, fx.tracer_config.as_ref()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let traced = match trace_fixture(&fx, &spec, None) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: replay failed: {e}"));
                continue;
            }
        };
        // The typed call tree (`--assets`, the HTML report) is the same run, frame for frame.
        if let (TracerSpec::Call(config), TraceResult::Call(frame)) = (&spec, &traced.result) {
            let snap = chaintrace::replay::fixture_snapshot(&fx);
            match chaintrace::replay::trace_fixture_call_tree(&fx, config, None, &snap) {
                Ok((typed, _)) if to_json_string(&typed.root) == to_json_string(frame) => {}
                Ok((typed, _)) => failures.push(format!(
                    "{name}: the typed call tree differs:\n  {}\n  {}",
                    to_json_string(&typed.root),
                    to_json_string(frame)
                )),
                Err(e) => failures.push(format!("{name}: the typed call tree failed: {e}")),
            }
        }
        let expected = fx.result.clone().expect("fixture has a result");
        match &traced.result {
            TraceResult::Call(frame) => {
                // Every field geth's fixture has, with its value (a field chaintrace does not
                // model would be missing from ours)…
                let got = to_json_string(frame);
                let mut raw = expected.clone();
                with_default_log_index(&mut raw);
                with_geths_address_case(&mut raw);
                let got_value: serde_json::Value = serde_json::from_str(&got).unwrap();
                if got_value != raw {
                    failures.push(format!("{name}:\n  want {raw}\n  got  {got}"));
                    continue;
                }
                // …and in geth's key order, as geth's own test compares (re-serialised).
                let want: CallFrame = serde_json::from_value(expected).unwrap();
                let want = to_json_string(&want);
                if want != got {
                    failures.push(format!("{name}:\n  want {want}\n  got  {got}"));
                }
            }
            TraceResult::Erc7562(frame) => {
                // geth's erc7562_tracer_test.go reads the expected result into its struct,
                // writes it again and compares with require.JSONEq: every field geth's struct
                // has, with its value, key order aside…
                let got = to_json_string(frame);
                let mut raw = expected.clone();
                with_default_log_index(&mut raw);
                let got_value: serde_json::Value = serde_json::from_str(&got).unwrap();
                if got_value != raw {
                    failures.push(format!("{name}:\n  want {raw}\n  got  {got}"));
                    continue;
                }
                // …and, stricter than geth's test, geth's key order (the generated marshaller's
                // field order) and Go's sorted map keys: the expected value re-serialised
                // through our frame type is the very same text.
                let want: Erc7562Frame = serde_json::from_value(expected).unwrap();
                let want = to_json_string(&want);
                if want != got {
                    failures.push(format!("{name}:\n  want {want}\n  got  {got}"));
                }
            }
            TraceResult::Prestate(p) => {
                let got: serde_json::Value = serde_json::from_str(&to_json_string(p)).unwrap();
                if got != expected {
                    failures.push(format!("{name}:\n  want {expected}\n  got  {got}"));
                }
            }
            other => panic!("{name}: unexpected result kind {other:?}"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ from {client}:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    files.len()
}

#[test]
fn call_tracer_matches_geth() {
    let n = run("call_tracer", TracerKind::Call, 15);
    eprintln!("call_tracer: {n} fixtures identical to geth");
}

/// op-geth's deposit (type 0x7e) fixtures: a deposit that runs (all its gas reported before
/// Regolith) and one that fails before it runs (no balance for its value: op-geth's STOP frame).
#[test]
fn call_tracer_matches_op_geth_deposits() {
    let n = run_client(OP_GETH, "call_tracer", TracerKind::Call, 2);
    eprintln!("op-geth call_tracer: {n} fixtures identical to op-geth");
}

#[test]
fn erc7562_tracer_matches_geth() {
    let n = run("erc7562_tracer", TracerKind::Erc7562, 2);
    eprintln!("erc7562_tracer: {n} fixtures identical to geth");
}

#[test]
fn prestate_tracer_matches_geth() {
    let n = run("prestate_tracer", TracerKind::Prestate, 11);
    eprintln!("prestate_tracer: {n} fixtures identical to geth");
}

#[test]
fn prestate_diff_mode_matches_geth() {
    let n = run("prestate_tracer_with_diff_mode", TracerKind::Prestate, 13);
    eprintln!("prestate_tracer_with_diff_mode: {n} fixtures identical to geth");
}

/// A node's diff is read with alloy's geth types (the splice corrections): each of geth's
/// diff-mode results reads back whole — every account, balance, nonce, code and slot, none
/// dropped or altered by omitted keys or hex quantities. The one member alloy's type leaves out
/// is geth's `codeHash`, which the corrections never read (a corrected code's hash is computed
/// from the code).
#[test]
fn geths_diff_results_read_as_the_nodes_diff() {
    let files = fixtures("prestate_tracer_with_diff_mode", 13);
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let mut want = fx.result.expect("fixture has a result");
        let name = path.file_name().unwrap().to_string_lossy();
        let diff = chaintrace::replay::splice::read_node_diff(&want)
            .unwrap_or_else(|| panic!("{name}: geth's diff is not read"));
        for side in ["pre", "post"] {
            for account in want[side].as_object_mut().unwrap().values_mut() {
                account.as_object_mut().unwrap().remove("codeHash");
            }
        }
        assert_eq!(serde_json::to_value(&diff).unwrap(), want, "{name}");
    }
}

/// A flat trace entry as geth's `flat_calltrace_test.go` compares it: bounced through its
/// `flatCallTrace` struct, where every field is a value (absent = zero; `omitempty` then drops
/// empty strings, byte strings and zero gas) and block hash/number, transaction hash/position
/// are not compared (`json:"-"`).
fn flat_as_geths_test_sees_it(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Value};
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let addr = |v: &Value, k: &str| {
        let a = s(v, k);
        if a.is_empty() {
            format!("0x{}", "0".repeat(40))
        } else {
            a.to_lowercase()
        }
    };
    let num = |v: &Value, k: &str| {
        let a = s(v, k);
        if a.is_empty() {
            alloy_primitives::U256::ZERO
        } else {
            a.parse::<alloy_primitives::U256>().unwrap()
        }
    };
    let empty = Value::Null;
    let a = v.get("action").unwrap_or(&empty);
    let r = v.get("result").unwrap_or(&empty);
    json!({
        "action": {
            "author": addr(a, "author"), "rewardType": s(a, "rewardType"),
            "address": addr(a, "address"), "balance": num(a, "balance"),
            "callType": s(a, "callType"), "creationMethod": s(a, "creationMethod"),
            "from": addr(a, "from"), "gas": num(a, "gas"),
            "init": s(a, "init").trim_start_matches("0x"),
            "input": s(a, "input").trim_start_matches("0x"),
            "refundAddress": addr(a, "refundAddress"), "to": addr(a, "to"),
            "value": num(a, "value"),
        },
        "error": s(v, "error"),
        "result": {
            "address": addr(r, "address"),
            "code": s(r, "code").trim_start_matches("0x"),
            "gasUsed": num(r, "gasUsed"),
            "output": s(r, "output").trim_start_matches("0x"),
        },
        "subtraces": v.get("subtraces").and_then(Value::as_u64).unwrap_or(0),
        "traceAddress": v["traceAddress"],
        "type": v["type"],
    })
}

/// The keys of a flat entry, in the order geth's `flatCallFrame` marshals them.
const FLAT_KEYS: [&str; 10] = [
    "action",
    "blockHash",
    "blockNumber",
    "error",
    "result",
    "subtraces",
    "traceAddress",
    "transactionHash",
    "transactionPosition",
    "type",
];

#[test]
fn flat_call_tracer_matches_geth() {
    flat_client(GETH, 16);
}

#[test]
fn flat_call_tracer_matches_op_geth_deposit() {
    flat_client(OP_GETH, 1);
}

fn flat_client(client: &str, expected: usize) {
    let files = client_fixtures(client, "call_tracer_flat", expected);
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let spec = TracerSpec::new(TracerKind::FlatCall, fx.tracer_config.as_ref()).unwrap();
        let traced = match trace_fixture(&fx, &spec, None) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: replay failed: {e}"));
                continue;
            }
        };
        let TraceResult::FlatCall(frames) = &traced.result else {
            panic!("{name}: not a flat result");
        };
        let got_text = to_json_string(&traced.result);
        // geth's key order, and geth's zero context (no block or transaction known to the
        // harness) printed as geth prints it.
        for f in frames {
            let text = to_json_string(f);
            let mut last = 0;
            for k in FLAT_KEYS {
                if let Some(at) = text.find(&format!("\"{k}\":")) {
                    assert!(at >= last, "{name}: key {k} out of geth's order in {text}");
                    last = at;
                }
            }
        }
        let got: serde_json::Value = serde_json::from_str(&got_text).unwrap();
        let want = fx.result.clone().expect("fixture has a result");
        let norm = |v: &serde_json::Value| -> Vec<serde_json::Value> {
            v.as_array()
                .unwrap()
                .iter()
                .map(flat_as_geths_test_sees_it)
                .collect()
        };
        if norm(&got) != norm(&want) {
            failures.push(format!("{name}:\n  want {want}\n  got  {got_text}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} flat fixtures differ from {client}:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!(
        "{client} call_tracer_flat: {} fixtures equal to {client}'s",
        files.len()
    );
}
