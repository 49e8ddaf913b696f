//! geth's own tracer fixtures (../shared/conformance/geth): every one must produce geth's result.
//!
//! callTracer results are compared as strings after re-serialising geth's expected value through
//! our frame type (the way geth's own test compares); prestate results as canonical JSON.

use std::path::{Path, PathBuf};

use chaintrace::render::json::to_json_string;
use chaintrace::replay::{trace_fixture, TraceResult};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::call::CallFrame;
use chaintrace::trace::{TracerKind, TracerSpec};

fn conformance_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth");
    dir.is_dir().then_some(dir)
}

fn fixtures(sub: &str) -> Vec<PathBuf> {
    let Some(dir) = conformance_dir() else {
        eprintln!("conformance: ../shared/conformance is absent; geth fixtures not run");
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn run(sub: &str, kind: TracerKind) -> usize {
    let files = fixtures(sub);
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
                let want: CallFrame = serde_json::from_value(expected).unwrap();
                let want = to_json_string(&want);
                let got = to_json_string(frame);
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
    let n = run("call_tracer", TracerKind::Call);
    eprintln!("call_tracer: {n} fixtures identical to geth");
}

#[test]
fn prestate_tracer_matches_geth() {
    let n = run("prestate_tracer", TracerKind::Prestate);
    eprintln!("prestate_tracer: {n} fixtures identical to geth");
}

#[test]
fn prestate_diff_mode_matches_geth() {
    let n = run("prestate_tracer_with_diff_mode", TracerKind::Prestate);
    eprintln!("prestate_tracer_with_diff_mode: {n} fixtures identical to geth");
}
