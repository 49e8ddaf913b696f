//! The JavaScript tracers shipped in tracers/: each one's output on a scenario contract, and the
//! JS callTracer against the native callTracer on every geth callTracer fixture.

#![cfg(feature = "js")]

use crate::run;
use std::path::{Path, PathBuf};
use std::time::Duration;

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::render::json::to_json_string;
use chaintrace::replay::{trace, trace_fixture, BlockInfo, EvmEnv, ReplayTx, TraceResult};
use chaintrace::source::fixture::Fixture;
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::{TracerKind, TracerSpec};
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const TOKEN: Address = address!("00000000000000000000000000000000000000aa");
const TOPIC: &str = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

fn tracer(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tracers")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A called with `transfer`'s selector: logs Transfer(sender → 0xbb, 1000), stores slot 1 = 5
/// and reads it back, calls 0xbb with selector 0x12345678 (which reads its slot 1), then calls
/// 0xcc, which logs Transfer(0xcc → 0xdd, 7) and reverts.
fn scenario(script: &str) -> Value {
    let a = format!(
        "6103e8600052 60bb 33 7f{TOPIC} 6020 6000 a3 \
         6005600155 60015450 \
         6312345678 60e0 1b 600052 \
         6000 6000 6004 6000 6000 60bb 62 00c350 f1 50 \
         6000 6000 6000 6000 6000 60cc 62 00c350 f1 50 00"
    );
    let c = format!("600760005260dd307f{TOPIC}60206000a360006000fd");
    let code = |s: &str| Bytes::from(hex::decode(s.replace(' ', "")).unwrap());
    let mut snap = StateSnapshot::complete();
    let acct = |balance: u64, code: Bytes| AccountData {
        balance: U256::from(balance),
        nonce: 0,
        code,
    };
    snap.insert_account(SENDER, acct(1_000_000_000_000_000_000, Bytes::new()));
    snap.insert_account(TOKEN, acct(0, code(&a)));
    snap.insert_account(
        address!("00000000000000000000000000000000000000bb"),
        acct(0, code("6001545000")),
    );
    snap.insert_account(
        address!("00000000000000000000000000000000000000cc"),
        acct(0, code(&c)),
    );
    let info = BlockInfo {
        number: 1,
        timestamp: 1,
        gas_limit: 30_000_000,
        base_fee: Some(0),
        ..Default::default()
    };
    let env = EvmEnv::new(SpecId::CANCUN, 1, &info);
    let tx = ReplayTx {
        hash: Default::default(),
        sender: SENDER,
        env: TxEnv {
            caller: SENDER,
            gas_limit: 300_000,
            gas_price: 1,
            kind: TxKind::Call(TOKEN),
            data: Bytes::from(hex::decode("a9059cbb").unwrap()),
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
        deposit: None,
        rollup: Default::default(),
    };
    let spec = TracerSpec::js(script, None, Duration::from_secs(5)).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx, &spec, 0).unwrap();
    assert!(t.outcome.success);
    match t.result {
        TraceResult::Js(v) => serde_json::from_str(v.get()).unwrap(),
        _ => panic!("not a JS result"),
    }
}

#[test]
fn opcode_count_counts_every_opcode() {
    let v = scenario(&tracer("opcode_count.js"));
    assert_eq!(
        v,
        json!({"PUSH2": 1, "PUSH1": 29, "MSTORE": 3, "CALLER": 1, "PUSH32": 2, "LOG3": 2,
               "SSTORE": 1, "SLOAD": 2, "POP": 4, "PUSH4": 1, "SHL": 1, "PUSH3": 2, "CALL": 2,
               "STOP": 2, "ADDRESS": 1, "REVERT": 1})
    );
}

#[test]
fn gas_by_opcode_sums_costs() {
    let v = scenario(&tracer("gas_by_opcode.js"));
    // LOG3 of 32 bytes: 375 + 3*375 + 8*32 = 1756. Cold SSTORE 0→5: 22100; SLOAD warm 100 in A,
    // cold 2100 in B. Each CALL: cold account 2600 plus the forwarded 50000.
    assert_eq!(v["LOG3"], json!({"count": 2, "gas": 1756 * 2}));
    assert_eq!(v["SSTORE"], json!({"count": 1, "gas": 22100}));
    assert_eq!(v["SLOAD"], json!({"count": 2, "gas": 100 + 2100}));
    assert_eq!(v["CALL"], json!({"count": 2, "gas": 2 * (2600 + 50000)}));
    assert_eq!(v["PUSH1"]["gas"], json!(29 * 3));
}

#[test]
fn storage_access_groups_reads_and_writes_by_contract() {
    let v = scenario(&tracer("storage_access.js"));
    let slot1 = format!("0x{}01", "00".repeat(31));
    let val = |b: u8| format!("0x{}{:02x}", "00".repeat(31), b);
    assert_eq!(
        v,
        json!({
            "0x00000000000000000000000000000000000000aa": {"reads": {slot1.clone(): val(5)}, "writes": {slot1.clone(): val(5)}},
            "0x00000000000000000000000000000000000000bb": {"reads": {slot1.clone(): val(0)}, "writes": {}}
        })
    );
}

#[test]
fn call_tree_lists_frames_with_depth_and_gas() {
    let v = scenario(&tracer("call_tree.js"));
    assert_eq!(v[0]["depth"], json!(0));
    assert_eq!(
        v[0]["to"],
        json!("0x00000000000000000000000000000000000000aa")
    );
    assert_eq!(v[0]["gas"], json!(300_000));
    assert_eq!(
        v[1],
        json!({"depth": 1, "type": "CALL", "to": "0x00000000000000000000000000000000000000bb", "gas": 50000, "gasUsed": 2100 + 3 + 2})
    );
    assert_eq!(
        v[2],
        json!({"depth": 1, "type": "CALL", "to": "0x00000000000000000000000000000000000000cc", "gas": 50000,
               "gasUsed": 3 + 3 + 6 + 3 + 2 + 3 + 3 + 3 + 1756 + 3 + 3, "error": "execution reverted"})
    );
    assert_eq!(v.as_array().unwrap().len(), 3);
}

#[test]
fn selector_counts_per_target() {
    let v = scenario(&tracer("selector_counts.js"));
    assert_eq!(
        v,
        json!({
            "0x00000000000000000000000000000000000000aa": {"0xa9059cbb": 1},
            "0x00000000000000000000000000000000000000bb": {"0x12345678": 1}
        })
    );
}

#[test]
fn erc20_transfers_keeps_only_surviving_events() {
    let v = scenario(&tracer("erc20_transfers.js"));
    assert_eq!(
        v,
        json!([{
            "token": "0x00000000000000000000000000000000000000aa",
            "from": "0x00000000000000000000000000000000000000f0",
            "to": "0x00000000000000000000000000000000000000bb",
            "amount": "1000"
        }])
    );
}

fn call_fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth/call_tracer");
    if !dir.is_dir() {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "js_tracers: ../shared/conformance is absent under CI: geth's callTracer fixtures \
             cannot be compared"
        );
        eprintln!(
            "\n*** js_tracers: ../shared/conformance is absent: the JS callTracer was NOT \
             compared with the native one on geth's fixtures ***\n"
        );
        return Vec::new();
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    assert_eq!(v.len(), 15, "geth's callTracer fixtures: {} found", v.len());
    v
}

/// A `step` that reads nothing of the opcode runs with the frames plain (called from
/// `step_end` alone); one that reads `log.getPC()` through revm's whole loop. On every geth
/// callTracer fixture (failures, reverts, creates, self-destructs) both count the same steps,
/// faults and frames.
#[test]
fn a_step_reading_nothing_counts_every_step_on_geth_fixtures() {
    let hooks = |cond: &str| {
        format!(
            "{{n: 0, f: 0, e: 0, step: function(log) {{ if ({cond}) {{ this.n++; }} }}, \
             fault: function() {{ this.f++; }}, enter: function() {{ this.e++; }}, \
             exit: function() {{ this.e += 10; }}, \
             result: function() {{ return [this.n, this.f, this.e]; }}}}"
        )
    };
    let (plain, full) = (hooks("true"), hooks("log.getPC() >= 0"));
    let count = |fx: &Fixture, source: &str| {
        let spec = TracerSpec::js(source, None, Duration::from_secs(5)).unwrap();
        match trace_fixture(fx, &spec, None).unwrap().result {
            TraceResult::Js(v) => serde_json::from_str::<Value>(v.get()).unwrap(),
            _ => unreachable!(),
        }
    };
    let files = call_fixtures();
    let mut steps = 0;
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let (a, b) = (count(&fx, &plain), count(&fx, &full));
        assert_eq!(a, b, "{}", path.display());
        steps += a[0].as_u64().unwrap();
    }
    assert!(steps > 5_000, "{steps} steps");
}

#[test]
fn js_call_tracer_equals_the_native_call_tracer_on_geth_fixtures() {
    let source = tracer("call_tracer.js");
    let files = call_fixtures();
    let mut failures = Vec::new();
    for path in &files {
        let fx = Fixture::load(path.to_str().unwrap()).unwrap();
        let native = TracerSpec::new(TracerKind::Call, fx.tracer_config.as_ref()).unwrap();
        let js =
            TracerSpec::js(&source, fx.tracer_config.as_ref(), Duration::from_secs(5)).unwrap();
        let want = match trace_fixture(&fx, &native, None).unwrap().result {
            TraceResult::Call(f) => serde_json::from_str::<Value>(&to_json_string(&f)).unwrap(),
            _ => unreachable!(),
        };
        let got = match trace_fixture(&fx, &js, None).map(|t| t.result) {
            Ok(TraceResult::Js(v)) => serde_json::from_str::<Value>(v.get()).unwrap(),
            Ok(_) => unreachable!(),
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if got != want {
            failures.push(format!(
                "{}:\n  native {want}\n  js     {got}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!(
        "js call tracer: {} fixtures equal to the native callTracer",
        files.len()
    );
}

// ---- the command line ----

fn chaintrace(args: &[&str]) -> (i32, Value, String) {
    let r = run::cmd(args).no_cache().run();
    let v = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
    (r.code, v, r.stderr)
}

#[test]
fn cli_js_call_tracer_file_matches_the_native_tracer() {
    let fx = "fixtures/reverted-nested.json";
    let (code_native, native, _) = chaintrace(&["tx", "--fixture", fx, "--json"]);
    let (code_js, js, err) = chaintrace(&[
        "tx",
        "--fixture",
        fx,
        "--json",
        "--tracer",
        "tracers/call_tracer.js",
    ]);
    assert_eq!(code_js, code_native, "{err}");
    assert_eq!(js, native);
}

#[test]
fn cli_inline_script_runs() {
    let (code, v, err) = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--json",
        "--tracer",
        "{n: 0, step: function() { this.n++; }, fault: function() {}, result: function(ctx) { return [this.n > 0, ctx.type]; }}",
    ]);
    assert_eq!(code, 3, "{err}"); // the fixture's transaction reverts
    assert_eq!(v, json!([true, "CALL"]));
}

#[test]
fn cli_bad_script_fails_before_replay_with_exit_1() {
    let (code, _, err) = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer",
        "{step: function() {}, result: function() {}}",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("trace object must expose a function fault()"),
        "{err}"
    );
    let (code, _, err) = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer",
        "missing.js",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read tracer missing.js"), "{err}");
}

#[test]
fn cli_timeout_flag_stops_an_endless_script() {
    let t = std::time::Instant::now();
    let (code, _, err) = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--timeout",
        "300ms",
        "--tracer",
        "{step: function() { while (1) {} }, fault: function() {}, result: function() { return 1; }}",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("execution timeout"), "{err}");
    assert!(
        t.elapsed() < Duration::from_millis(1300 + 1000),
        "{:?}",
        t.elapsed()
    );
    let (code, _, err) = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--timeout",
        "5 parsecs",
        "--tracer",
        "{fault: function() {}, result: function() {}}",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("--timeout"), "{err}");
}
