//! geth's own tracer fixtures (../shared/conformance/geth): every one must produce geth's result.
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

fn conformance_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth");
    dir.is_dir().then_some(dir)
}

fn fixtures(sub: &str, expected: usize) -> Vec<PathBuf> {
    let Some(dir) = conformance_dir() else {
        // Under CI the fixtures are laid beside the clone: their absence is a failure, never a
        // silently smaller run.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "conformance: ../shared/conformance is absent under CI: geth's {sub} fixtures cannot \
             be run"
        );
        eprintln!(
            "\n*** conformance: ../shared/conformance is absent: geth's {sub} fixtures were NOT \
             run (a fresh clone outside the workspace has no copy of them) ***\n"
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
        "{sub}: {} fixtures in {}, expected geth's {expected}",
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

fn run(sub: &str, kind: TracerKind, expected: usize) -> usize {
    let files = fixtures(sub, expected);
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
        let expected = fx.result.clone().expect("fixture has a result");
        match &traced.result {
            TraceResult::Call(frame) => {
                // Every field geth's fixture has, with its value (a field chaintrace does not
                // model would be missing from ours)…
                let got = to_json_string(frame);
                let mut raw = expected.clone();
                with_default_log_index(&mut raw);
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
        "{} of {} fixtures differ from geth:\n{}",
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
