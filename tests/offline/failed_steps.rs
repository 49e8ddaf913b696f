//! Steps that fail before their opcode executes, in the struct logger and the callTracer, as
//! geth v1.17's interpreter reports them (core/vm/interpreter.go: the step carries the constant
//! gas plus what the dynamic gas function returned, and the frame fails with the same error).

use crate::offline;
use alloy_primitives::{address, Address, TxKind};
use chaintrace::replay::{trace, EvmEnv};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, result_json, tx};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");
const CALLEE: Address = address!("00000000000000000000000000000000000000bb");

fn run(code: &str, callee: &str, kind: TracerKind) -> Value {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    snap.insert_account(CONTRACT, account(0, 1, code));
    snap.insert_account(CALLEE, account(0, 1, callee));
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let spec = TracerSpec::new(kind, None).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx(SENDER, TxKind::Call(CONTRACT)), &spec, 0).unwrap();
    result_json(&t)
}

fn step(v: &Value, op: &str, depth: u64) -> Value {
    v["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|s| s["op"] == op && s["depth"] == depth)
        .unwrap()
        .clone()
}

#[test]
fn memory_expansion_out_of_gas_is_priced_and_named() {
    // PUSH1 1, PUSH3 0x100000, MSTORE: 32,769 words of memory cost 2,195,587 plus the constant 3.
    let v = run("6001 62100000 52 00", "", TracerKind::StructLog);
    let last = step(&v, "MSTORE", 1);
    assert_eq!(last["gasCost"], json!(2195590), "{last}");
    assert_eq!(last["error"], json!("out of gas"), "{last}");
    assert_eq!(v["failed"], json!(true));
}

#[test]
fn a_static_sstore_fails_in_its_gas_function_in_every_tracer() {
    // STATICCALL into a callee that SSTOREs.
    let code = "6000600060006000 60bb 5a fa 00";
    let callee = "6001600055 00";
    let sstore = step(&run(code, callee, TracerKind::StructLog), "SSTORE", 2);
    assert_eq!(sstore["gasCost"], json!(0), "{sstore}");
    assert_eq!(
        sstore["error"],
        json!("out of gas: write protection"),
        "{sstore}"
    );
    let v = run(code, callee, TracerKind::Call);
    assert_eq!(
        v["calls"][0]["error"],
        json!("out of gas: write protection"),
        "{v}"
    );
}

#[test]
fn a_cold_call_that_cannot_pay_its_access_is_out_of_gas_twice() {
    // CALL(1000, 0xcc (cold), 0, …) with 2,000 gas left in a child frame: the constant 100 is
    // paid, the 2,500 cold access is not — geth's gas function returns ErrOutOfGas, wrapped:
    // `out of gas: out of gas`, at the constant cost.
    let code = "6000600060006000600060bb6107d0f1 00"; // CALL(2000, 0xbb, 0, 0, 0, 0, 0)
    let callee = "60006000600060006000 60cc 6103e8 f1 00"; // CALL(1000, 0xcc, …)
    let call = step(&run(code, callee, TracerKind::StructLog), "CALL", 2);
    assert_eq!(call["error"], json!("out of gas: out of gas"), "{call}");
    assert_eq!(call["gasCost"], json!(100), "{call}");
    let v = run(code, callee, TracerKind::Call);
    assert_eq!(
        v["calls"][0]["error"],
        json!("out of gas: out of gas"),
        "{v}"
    );
}
