//! The core tracers and the executor on tiny offline programs, each expectation computed by
//! hand from the yellow paper's gas schedule and geth's documented output shapes (not taken
//! from a run): struct logger steps, callTracer frames and logs, prestateTracer (plain and
//! diff mode), the gas tracer's attribution, and `apply`'s receipt-level outcome.

use crate::offline;
use alloy_primitives::{address, Address, TxKind, U256};
use chaintrace::replay::{apply, trace, EvmEnv};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, result_json, tx};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");
const CALLEE: Address = address!("00000000000000000000000000000000000000bb");

fn world(code: &str, callee: &str) -> StateSnapshot {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    snap.insert_account(CONTRACT, account(0, 1, code));
    snap.insert_account(CALLEE, account(0, 1, callee));
    snap
}

fn run(code: &str, callee: &str, kind: TracerKind, config: Option<Value>) -> Value {
    let snap = world(code, callee);
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let spec = TracerSpec::new(kind, config.as_ref()).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx(SENDER, TxKind::Call(CONTRACT)), &spec, 0).unwrap();
    result_json(&t)
}

#[test]
fn struct_logger_steps_of_an_addition() {
    // PUSH1 2, PUSH1 3, ADD, STOP: 3 + 3 + 3 + 0 gas after the 21,000 intrinsic gas.
    let v = run("6002 6003 01 00", "", TracerKind::StructLog, None);
    let gas0 = 100_000 - 21_000;
    assert_eq!(
        v,
        json!({
            "gas": 21_009,
            "failed": false,
            "returnValue": "0x",
            "structLogs": [
                {"pc": 0, "op": "PUSH1", "gas": gas0, "gasCost": 3, "depth": 1, "stack": []},
                {"pc": 2, "op": "PUSH1", "gas": gas0 - 3, "gasCost": 3, "depth": 1, "stack": ["0x2"]},
                {"pc": 4, "op": "ADD", "gas": gas0 - 6, "gasCost": 3, "depth": 1, "stack": ["0x2", "0x3"]},
                {"pc": 5, "op": "STOP", "gas": gas0 - 9, "gasCost": 0, "depth": 1, "stack": ["0x5"]}
            ]
        })
    );
}

#[test]
fn struct_logger_options_drop_the_stack_and_show_storage() {
    // PUSH1 7, PUSH1 1, SSTORE, STOP: a cold SSTORE of a new non-zero value costs 22,100.
    let v = run(
        "6007 6001 55 00",
        "",
        TracerKind::StructLog,
        Some(json!({"disableStack": true})),
    );
    let logs = v["structLogs"].as_array().unwrap();
    assert!(logs.iter().all(|l| l.get("stack").is_none()), "{v}");
    let sstore = &logs[2];
    assert_eq!(sstore["op"], "SSTORE");
    assert_eq!(sstore["gasCost"], json!(22_100));
    // geth records the written entry at the SSTORE step, keys and values as `Hash.Hex()`
    // (eth/tracers/logger/logger.go, v1.17: `storage[i.Hex()] = storageValue.Hex()`).
    assert_eq!(
        sstore["storage"],
        json!({"0x0000000000000000000000000000000000000000000000000000000000000001":
               "0x0000000000000000000000000000000000000000000000000000000000000007"})
    );
    assert_eq!(v["gas"], json!(21_000 + 3 + 3 + 22_100));
}

#[test]
fn call_tracer_frames_logs_and_revert_reasons() {
    // The contract emits LOG1(topic 0x11, no data), then CALLs the callee with 0 value and
    // 0x1000 gas; the callee reverts with Error("no").
    // Callee: store the ABI encoding of Error(string "no") in memory and REVERT 0x64 bytes.
    let callee = concat!(
        "7f08c379a000000000000000000000000000000000000000000000000000000000", // PUSH32 selector
        "6000 52",                                                            // MSTORE at 0
        "6020 6004 52",                                                       // offset 0x20 at 4
        "6002 6024 52",                                                       // length 2 at 0x24
        "7f6e6f000000000000000000000000000000000000000000000000000000000000", // "no"
        "6044 52",                                                            // at 0x44
        "6064 6000 fd"                                                        // REVERT(0, 0x64)
    );
    let code = concat!(
        "6011 6000 6000 a1",                       // LOG1(0, 0, topic 0x11)
        "6000 6000 6000 6000 6000 60bb 611000 f1", // CALL(0x1000, 0xbb, 0, 0, 0, 0, 0)
        "00"
    );
    let v = run(
        &code.replace(' ', ""),
        &callee.replace(' ', ""),
        TracerKind::Call,
        Some(json!({"withLog": true})),
    );
    let inner = &v["calls"][0];
    assert_eq!(inner["type"], "CALL");
    assert_eq!(inner["from"], "0x00000000000000000000000000000000000000aa");
    assert_eq!(inner["to"], "0x00000000000000000000000000000000000000bb");
    assert_eq!(inner["gas"], "0x1000");
    assert_eq!(inner["value"], "0x0");
    assert_eq!(inner["error"], "execution reverted");
    assert_eq!(inner["revertReason"], "no");
    assert!(inner["output"].as_str().unwrap().starts_with("0x08c379a0"));
    // The top frame succeeded, its log recorded before the call (position 0), index 0.
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(
        v["logs"],
        json!([{"address": "0x00000000000000000000000000000000000000aa",
                "topics": ["0x0000000000000000000000000000000000000000000000000000000000000011"],
                "data": "0x", "index": "0x0", "position": "0x0"}])
    );
    // onlyTopCall drops the sub-call.
    let top = run(
        &code.replace(' ', ""),
        &callee.replace(' ', ""),
        TracerKind::Call,
        Some(json!({"onlyTopCall": true})),
    );
    assert!(top.get("calls").is_none(), "{top}");
    assert_eq!(top["gas"], "0x186a0");
}

#[test]
fn prestate_tracer_plain_and_diff() {
    // SLOAD slot 5 (reads 0), SSTORE slot 1 := 7.
    let code = "6005 54 50 6007 6001 55 00";
    let pre = run(code, "", TracerKind::Prestate, None);
    let c = &pre["0x00000000000000000000000000000000000000aa"];
    assert_eq!(c["nonce"], json!(1));
    assert_eq!(c["code"], json!(format!("0x{}", code.replace(' ', ""))));
    assert_eq!(
        c["storage"],
        json!({"0x0000000000000000000000000000000000000000000000000000000000000001":
               "0x0000000000000000000000000000000000000000000000000000000000000000",
               "0x0000000000000000000000000000000000000000000000000000000000000005":
               "0x0000000000000000000000000000000000000000000000000000000000000000"})
    );
    assert_eq!(
        pre["0x00000000000000000000000000000000000000f0"]["balance"],
        json!("0xde0b6b3a7640000")
    );
    let diff = run(
        code,
        "",
        TracerKind::Prestate,
        Some(json!({"diffMode": true})),
    );
    // Only the changed slot is in post; the sender's nonce moved from 0 to 1.
    assert_eq!(
        diff["post"]["0x00000000000000000000000000000000000000aa"]["storage"],
        json!({"0x0000000000000000000000000000000000000000000000000000000000000001":
               "0x0000000000000000000000000000000000000000000000000000000000000007"})
    );
    assert_eq!(
        diff["post"]["0x00000000000000000000000000000000000000f0"]["nonce"],
        json!(1)
    );
}

#[test]
fn apply_reports_the_receipt_outcome() {
    // A plain transfer: 21,000 gas, success, no logs; the state moves.
    let snap = world("", "");
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let mut db = snap.db();
    let mut t = tx(SENDER, TxKind::Call(CALLEE));
    t.env.value = U256::from(5);
    let out = apply(&mut db, &env, &t).unwrap();
    assert!(out.success);
    assert_eq!(out.gas_used, 21_000);
    assert!(out.logs.is_empty());
    let spec = TracerSpec::new(TracerKind::Call, None).unwrap();
    // The committed transfer shows in the next transaction's view: nonce 1 now.
    let mut next = tx(SENDER, TxKind::Call(CALLEE));
    next.env.nonce = 1;
    let traced = trace(&mut db, &env, &next, &spec, 0).unwrap();
    assert!(traced.outcome.success);
    // A reverting call: status 0, gas used up to the revert.
    let snap = world("60006000fd", "");
    let mut db = snap.db();
    let out = apply(&mut db, &env, &tx(SENDER, TxKind::Call(CONTRACT))).unwrap();
    assert!(!out.success);
    assert_eq!(out.gas_used, 21_000 + 3 + 3);
}

#[test]
fn gas_tracer_attributes_every_unit() {
    let snap = world("6002 6003 01 00".replace(' ', "").as_str(), "");
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let mut db = snap.db();
    let t = trace(
        &mut db,
        &env,
        &tx(SENDER, TxKind::Call(CONTRACT)),
        &TracerSpec::Gas(Default::default()),
        0,
    )
    .unwrap();
    let v = result_json(&t);
    let text = v.to_string();
    // 9 gas of opcodes (PUSH1 ×2 = 6, ADD = 3) on top of 21,000 intrinsic.
    assert!(text.contains("PUSH1"), "{text}");
    assert!(text.contains("ADD"), "{text}");
    assert_eq!(t.outcome.gas_used, 21_009);
}

/// A CREATE of empty init code runs no opcode in geth (core/vm/interpreter.go `Run`: "Don't
/// bother with the execution if there's no code"); revm runs the STOP it pads code with. No
/// tracer sees that step: PUSH1 0 ×3, CREATE, STOP at depth 1 only.
#[test]
fn a_create_of_empty_init_code_runs_no_step() {
    let v = run("6000 6000 6000 f0 00", "", TracerKind::StructLog, None);
    let steps: Vec<(String, u64)> = v["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["op"].as_str().unwrap().to_string(),
                s["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = ["PUSH1", "PUSH1", "PUSH1", "CREATE", "STOP"]
        .iter()
        .map(|op| (op.to_string(), 1))
        .collect();
    assert_eq!(steps, want);
    // The call tracer still has the creation's frame.
    let c = run("6000 6000 6000 f0 00", "", TracerKind::Call, None);
    assert_eq!(c["calls"][0]["type"], "CREATE");
    assert_eq!(c["calls"][0]["gasUsed"], "0x0");
}
