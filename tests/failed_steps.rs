//! Steps that fail before their opcode executes, in the struct logger and the callTracer, as
//! geth v1.17's interpreter reports them (core/vm/interpreter.go: the step carries the constant
//! gas plus what the dynamic gas function returned, and the frame fails with the same error).

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::render::json::write_trace;
use chaintrace::replay::{trace, BlockInfo, EvmEnv, ReplayTx};
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::{TracerKind, TracerSpec};
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");
const CALLEE: Address = address!("00000000000000000000000000000000000000bb");

fn run(code: &str, callee: &str, kind: TracerKind, config: Option<Value>) -> Value {
    let mut snap = StateSnapshot::complete();
    let acct = |balance: u128, code: &str| AccountData {
        balance: U256::from(balance),
        nonce: 1,
        code: hex::decode(code.replace(' ', "")).unwrap().into(),
    };
    let mut sender = acct(10u128.pow(18), "");
    sender.nonce = 0;
    snap.insert_account(SENDER, sender);
    snap.insert_account(CONTRACT, acct(0, code));
    snap.insert_account(CALLEE, acct(0, callee));
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
            gas_limit: 100_000,
            gas_price: 0,
            kind: TxKind::Call(CONTRACT),
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
    };
    let spec = TracerSpec::new(kind, config.as_ref()).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx, &spec, 0).unwrap();
    let mut out = Vec::new();
    write_trace(&mut out, &t.result).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn memory_expansion_out_of_gas_is_priced_and_named() {
    // PUSH1 1, PUSH3 0x100000, MSTORE: 32,769 words of memory cost 2,195,587 plus the constant 3.
    let v = run("6001 62100000 52 00", "", TracerKind::StructLog, None);
    let last = v["structLogs"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["op"], json!("MSTORE"));
    assert_eq!(last["gasCost"], json!(2195590), "{last}");
    assert_eq!(last["error"], json!("out of gas"), "{last}");
    assert_eq!(v["failed"], json!(true));
}

#[test]
fn a_static_sstore_fails_in_its_gas_function_in_every_tracer() {
    // STATICCALL into a callee that SSTOREs.
    let code = "6000600060006000 60bb 5a fa 00";
    let callee = "6001600055 00";
    let v = run(code, callee, TracerKind::StructLog, None);
    let sstore = v["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["op"] == "SSTORE")
        .unwrap()
        .clone();
    assert_eq!(sstore["gasCost"], json!(0), "{sstore}");
    assert_eq!(
        sstore["error"],
        json!("out of gas: write protection"),
        "{sstore}"
    );
    let v = run(code, callee, TracerKind::Call, None);
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
    let v = run(code, callee, TracerKind::StructLog, None);
    let call = v["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|s| s["op"] == "CALL" && s["depth"] == 2)
        .unwrap()
        .clone();
    assert_eq!(call["error"], json!("out of gas: out of gas"), "{call}");
    assert_eq!(call["gasCost"], json!(100), "{call}");
    let v = run(code, callee, TracerKind::Call, None);
    assert_eq!(
        v["calls"][0]["error"],
        json!("out of gas: out of gas"),
        "{v}"
    );
}
