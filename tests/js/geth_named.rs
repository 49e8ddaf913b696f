//! geth's JavaScript tracers by name (`--tracer bigramTracer`, …): chaintrace's own scripts
//! that stand for geth's embedded ones, held to what geth's scripts give on every geth
//! callTracer and flatCallTracer fixture:
//! - opcountTracer, unigramTracer, bigramTracer and trigramTracer against the struct logger's
//!   own steps (geth's struct logger output, which tests/offline checks against anvil and
//!   geth's rules), counted in this test by the rules geth's scripts state;
//! - 4byteTracerLegacy against the native 4byteTracer, callTracerLegacy against the native
//!   callTracer where no frame failed (where geth's two agree by construction);
//! - evmdisTracer on a hand-assembled program with a hand-computed result.
//!
//! (Before this suite was written, the scripts were also run on geth's own
//! `call_tracer_legacy` (12) and `prestate_tracer_legacy` (1) fixtures, which ../shared does
//! not carry: all equal under geth's comparison.)

#![cfg(feature = "js")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chaintrace::render::json::{to_json_string, write_trace};
use chaintrace::replay::{trace_fixture, TraceResult};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::{TracerKind, TracerSpec};
use serde_json::{json, Value};

use crate::run;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth");
    if !root.is_dir() {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "geth_named: ../shared/conformance is absent under CI"
        );
        eprintln!("\n*** geth_named: ../shared/conformance is absent: NOT run ***\n");
        return Vec::new();
    }
    let mut v = Vec::new();
    for sub in ["call_tracer", "call_tracer_flat"] {
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "json") {
                v.push(p);
            }
        }
    }
    v.sort();
    assert_eq!(v.len(), 31, "geth's call and flat fixtures");
    v
}

/// Only a bound on a hang: a debug build on a loaded machine (helpers building beside the
/// tests) once took over 120 s for the legacy call tracer under boa alone.
const SLOW: std::time::Duration = std::time::Duration::from_secs(600);

fn run_named(fx: &Fixture, name: &str) -> Value {
    // A debug build on a loaded machine: more than geth's 5 s default.
    let spec = TracerSpec::named(name, None, SLOW).unwrap();
    match trace_fixture(fx, &spec, None).unwrap().result {
        TraceResult::Js(v) => serde_json::from_str(v.get()).unwrap(),
        other => serde_json::from_str(&to_json_string(&other)).unwrap(),
    }
}

/// (op, depth) of every step the struct logger records.
fn steps(fx: &Fixture) -> Vec<(String, u64)> {
    let spec = TracerSpec::new(TracerKind::StructLog, None).unwrap();
    let t = trace_fixture(fx, &spec, None).unwrap();
    let mut out = Vec::new();
    write_trace(&mut out, &t.result).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["op"].as_str().unwrap().to_string(),
                s["depth"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn counts(keys: impl IntoIterator<Item = String>) -> Value {
    let mut m = BTreeMap::new();
    for k in keys {
        *m.entry(k).or_insert(0u64) += 1;
    }
    json!(m)
}

#[test]
fn opcode_statistics_tracers_count_what_the_struct_logger_ran() {
    let files = fixtures();
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let name = path.display();
        let s = steps(&fx);
        assert_eq!(run_named(&fx, "opcountTracer"), json!(s.len()), "{name}");
        assert_eq!(
            run_named(&fx, "unigramTracer"),
            counts(s.iter().map(|(op, _)| op.clone())),
            "{name}"
        );
        // bigram: a pair when a step runs at the depth of the step before it (the first step,
        // at depth 1, follows depth 0).
        let mut pairs = Vec::new();
        let (mut prev, mut prev_depth) = (String::new(), 0);
        for (op, depth) in &s {
            if *depth == prev_depth {
                pairs.push(format!("{prev}-{op}"));
            }
            prev = op.clone();
            prev_depth = *depth;
        }
        assert_eq!(run_named(&fx, "bigramTracer"), counts(pairs), "{name}");
        // trigram: a step at a new depth only resets the window.
        let mut triples = Vec::new();
        let (mut window, mut at) = ([String::new(), String::new()], 0);
        for (op, depth) in &s {
            if *depth != at {
                window = [String::new(), String::new()];
                at = *depth;
                continue;
            }
            triples.push(format!("{}-{}-{op}", window[0], window[1]));
            window = [window[1].clone(), op.clone()];
        }
        assert_eq!(run_named(&fx, "trigramTracer"), counts(triples), "{name}");
        assert_eq!(run_named(&fx, "noopTracerLegacy"), json!({}), "{name}");
    }
    eprintln!("geth_named: statistics tracers on {} fixtures", files.len());
}

#[test]
fn legacy_four_byte_equals_the_native_one() {
    let files = fixtures();
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        // geth's legacy script also counts a creation's init code (`ctx.input`); the native
        // one counts only calls. Everything else is the same.
        let top = run_named(&fx, "callTracer");
        if top["type"].as_str().unwrap().starts_with("CREATE") {
            continue;
        }
        assert_eq!(
            run_named(&fx, "4byteTracerLegacy"),
            run_named(&fx, "4byteTracer"),
            "{}",
            path.display()
        );
    }
}

fn any_error(v: &Value) -> bool {
    v.get("error").is_some()
        || v.get("calls")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().any(any_error))
}

/// The native frame as the legacy tracer shapes it: no logs or revert reason, an empty
/// `output` printed as `0x`, no value on STATICCALL/DELEGATECALL, its key set.
fn as_legacy(v: &Value, top: bool) -> Value {
    let mut out = serde_json::Map::new();
    for k in [
        "type", "from", "to", "value", "gas", "gasUsed", "input", "output",
    ] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    let kind = v["type"].as_str().unwrap_or("");
    if !top && v["gasUsed"] == json!("0x0") {
        // A callee that ran no code has no first step to read its gas from (a call's gasUsed
        // is computed from that gas; a creation's is not).
        out.remove("gas");
        if kind.ends_with("CALL") {
            out.remove("gasUsed");
        }
    }
    if kind == "SELFDESTRUCT" {
        // The legacy frame has no gas, input or output; gas was the gas left, not a limit.
        for k in ["gas", "gasUsed", "input", "output"] {
            out.remove(k);
        }
    } else if !out.contains_key("output") {
        out.insert("output".into(), json!("0x"));
    }
    if kind == "STATICCALL" || kind == "DELEGATECALL" {
        out.remove("value");
    }
    if let Some(calls) = v.get("calls").and_then(Value::as_array) {
        out.insert(
            "calls".into(),
            Value::Array(calls.iter().map(|c| as_legacy(c, false)).collect()),
        );
    }
    Value::Object(out)
}

#[test]
fn legacy_call_tracer_equals_the_native_one_where_nothing_failed() {
    let files = fixtures();
    let mut compared = 0;
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let native = run_named(&fx, "callTracer");
        if any_error(&native) {
            continue;
        }
        let legacy = run_named(&fx, "callTracerLegacy");
        // Precompile calls are not frames of the legacy tracer.
        let strip = |v: &Value| {
            let mut v = v.clone();
            fn drop_precompiles(v: &mut Value) {
                if let Some(calls) = v.get_mut("calls").and_then(Value::as_array_mut) {
                    calls.retain(|c| {
                        let to = c["to"].as_str().unwrap_or("");
                        !(to.len() == 42 && to[2..40].chars().all(|ch| ch == '0'))
                    });
                    calls.iter_mut().for_each(drop_precompiles);
                    // A callee that ran no code: the legacy `output` is whatever the caller's
                    // memory held where the return data would go.
                    for c in calls.iter_mut() {
                        if c.get("gas").is_none() {
                            c.as_object_mut().unwrap().remove("output");
                        }
                    }
                    if calls.is_empty() {
                        v.as_object_mut().unwrap().remove("calls");
                    }
                }
            }
            drop_precompiles(&mut v);
            v
        };
        assert_eq!(
            strip(&legacy),
            strip(&as_legacy(&native, true)),
            "{}",
            path.display()
        );
        compared += 1;
    }
    if !files.is_empty() {
        assert!(
            compared >= 8,
            "only {compared} fixtures without a failed frame"
        );
    }
    eprintln!("geth_named: callTracerLegacy equal to callTracer on {compared} fixtures");
}

/// PUSH1 1, PUSH1 2, ADD, STOP: each operation with the words it pushed (read at the next
/// step), PUSH1's `len` 2 (its opcode minus 0x5e, as geth's script computes it).
#[test]
fn evmdis_lists_the_operations_with_what_they_pushed() {
    assert_eq!(direct_evmdis(), evmdis_expected());
}

fn evmdis_expected() -> Value {
    json!([
        {"op": 96, "depth": 1, "result": ["1"], "len": 2},
        {"op": 96, "depth": 1, "result": ["2"], "len": 2},
        {"op": 1, "depth": 1, "result": ["3"]},
        {"op": 0, "depth": 1, "result": []}
    ])
}

fn direct_evmdis() -> Value {
    use crate::offline::{account, block, tx};
    use alloy_primitives::{address, TxKind};
    use chaintrace::replay::{trace, EvmEnv};
    use chaintrace::source::StateSnapshot;
    use revm::primitives::hardfork::SpecId;
    let sender = address!("00000000000000000000000000000000000000f0");
    let to = address!("00000000000000000000000000000000000000aa");
    let mut snap = StateSnapshot::complete();
    snap.insert_account(sender, account(10u128.pow(18), 0, ""));
    snap.insert_account(to, account(0, 0, "6001 6002 01 00"));
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let spec = TracerSpec::named("evmdisTracer", None, SLOW).unwrap();
    let mut db = snap.db();
    match trace(&mut db, &env, &tx(sender, TxKind::Call(to)), &spec, 0)
        .unwrap()
        .result
    {
        TraceResult::Js(v) => serde_json::from_str(v.get()).unwrap(),
        _ => panic!("not a JS result"),
    }
}

#[test]
fn named_tracers_run_from_the_command_line_and_in_a_mux() {
    let fx = "fixtures/reverted-nested.json";
    let r = run::chaintrace(&[
        "tx",
        "--fixture",
        fx,
        "--tracer",
        "opcountTracer",
        "--timeout",
        "120s",
        "--json",
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let n: u64 = r.stdout.trim().parse().unwrap();
    assert!(n > 100, "{n}");
    let r = run::chaintrace(&[
        "tx",
        "--fixture",
        fx,
        "--tracer",
        "muxTracer",
        "--tracer-config",
        r#"{"opcountTracer":{},"4byteTracer":{},"unigramTracer":null}"#,
        "--timeout",
        "120s",
        "--json",
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["opcountTracer"], json!(n));
    let uni: u64 = v["unigramTracer"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(uni, n);
    assert!(
        r.stdout.find("\"4byteTracer\"") < r.stdout.find("\"opcountTracer\""),
        "keys sorted as Go prints a map: {}",
        r.stdout
    );
}
