//! Fixtures produced by running go-ethereum v1.17.5 itself (`scripts/geth-ref.sh`, generator in
//! `tools/geth-ref/`): behaviours that geth's own tracetest fixtures in ../shared/conformance do
//! not cover — pre-Homestead code deposits, struct-log costs of steps that fail before they
//! execute, precompile error texts, what a JS tracer's `db` and `getCost()` show. Each file is a
//! geth tracetest fixture with a `tracer` field (a tracer name or JavaScript source) and geth's
//! result, compared with chaintrace's as text: same keys, same order, same values.

use std::path::{Path, PathBuf};

use chaintrace::render::json::write_trace;
use chaintrace::replay::trace_fixture;
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::{TracerKind, TracerSpec};
use serde_json::value::RawValue;

fn groups() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/geth")
}

/// Every fixture file, by group.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for group in std::fs::read_dir(groups()).expect("tests/data/geth exists") {
        let group = group.unwrap().path();
        if !group.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&group).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

/// JSON text without the whitespace between tokens, keys kept in their order.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    for c in text.chars() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[derive(serde::Deserialize)]
struct Reference {
    tracer: String,
    result: Box<RawValue>,
}

fn spec_for(tracer: &str, fx: &Fixture) -> TracerSpec {
    if tracer.trim_start().starts_with('{') {
        #[cfg(feature = "js")]
        return TracerSpec::js(
            tracer,
            fx.tracer_config.as_ref(),
            std::time::Duration::from_secs(20),
        )
        .expect("the reference script is valid");
        #[cfg(not(feature = "js"))]
        panic!("JS fixtures need the js feature");
    }
    let kind = TracerKind::from_name(tracer).expect("a known tracer name");
    TracerSpec::new(kind, fx.tracer_config.as_ref()).expect("a valid tracerConfig")
}

/// Runs one fixture; `Err` says how chaintrace's result differs from geth's.
fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let reference: Reference =
        serde_json::from_str(&text).map_err(|e| format!("unreadable: {e}"))?;
    let fx = Fixture::load(path.to_str().unwrap()).map_err(|e| format!("fixture: {e}"))?;
    let spec = spec_for(&reference.tracer, &fx);
    let traced = trace_fixture(&fx, &spec, None).map_err(|e| format!("replay failed: {e}"))?;
    let mut got = Vec::new();
    write_trace(&mut got, &traced.result).unwrap();
    let got = String::from_utf8(got).unwrap();
    let want = compact(reference.result.get());
    if got == want {
        return Ok(());
    }
    let at = got
        .bytes()
        .zip(want.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let from = at.saturating_sub(120);
    let show = |s: &str| {
        s.get(from..(at + 200).min(s.len()))
            .unwrap_or("")
            .to_string()
    };
    Err(format!(
        "differs at byte {at}:\n    geth …{}\n    ours …{}",
        show(&want),
        show(&got)
    ))
}

#[test]
fn geth_v1_17_reference_fixtures() {
    let files = fixtures();
    assert!(
        !files.is_empty(),
        "no fixtures under {}",
        groups().display()
    );
    let mut failures = Vec::new();
    for f in &files {
        let name = f.strip_prefix(groups()).unwrap().display().to_string();
        if let Err(e) = check(f) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} reference fixtures differ from geth v1.17.5:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!(
        "{} reference fixtures identical to geth v1.17.5",
        files.len()
    );
}
