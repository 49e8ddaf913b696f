//! Before Homestead a CREATE whose code deposit runs out of gas is not undone (geth's
//! `evm.create`: `ErrCodeStoreOutOfGas` is not reverted before Homestead; `captureEnd` reports
//! it with `reverted = false`). Each tracer reports it as geth's does: the callTracer clears the
//! error and keeps the returned code as `output` (`processOutput`), the struct logger keeps the
//! error (`failed`, no return value), a JS tracer sees the error and the code.

use crate::offline;
use alloy_primitives::{address, hex, Address, TxKind};
use chaintrace::replay::{trace, EvmEnv, TracedTx};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, result_json as json_of, tx};
use revm::primitives::hardfork::SpecId;
use serde_json::json;

const SENDER: Address = address!("00000000000000000000000000000000000000f0");

/// A contract-creation transaction whose init code returns 100 zero bytes, with gas for the
/// init code but not for the 20,000-gas deposit.
fn create(spec: SpecId, tracer: &TracerSpec) -> TracedTx {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    let env = EvmEnv::new(spec, 1, &block(1, None));
    let mut t = tx(SENDER, TxKind::Create);
    // Intrinsic gas (a creation costs 32,000 more from Homestead on), then 1,000.
    t.env.gas_limit = if spec >= SpecId::HOMESTEAD {
        53_000
    } else {
        21_000
    } + 4 * 68
        + 4
        + 1_000;
    t.env.gas_price = 1;
    t.env.data = hex::decode("60646000f3").unwrap().into();
    t.env.chain_id = None;
    let mut db = snap.db();
    trace(&mut db, &env, &t, tracer, 0).unwrap()
}

fn code() -> String {
    format!("0x{}", "00".repeat(100))
}

#[test]
fn call_tracer_keeps_the_returned_code_and_no_error() {
    let t = create(
        SpecId::FRONTIER,
        &TracerSpec::new(TracerKind::Call, None).unwrap(),
    );
    assert!(t.outcome.success);
    let v = json_of(&t);
    assert_eq!(v["output"], json!(code()), "{v}");
    assert!(v.get("error").is_none(), "{v}");
    // From Homestead on the same transaction fails: out of gas, all gas used.
    let t = create(
        SpecId::HOMESTEAD,
        &TracerSpec::new(TracerKind::Call, None).unwrap(),
    );
    assert!(!t.outcome.success);
}

#[test]
fn struct_logger_reports_the_failure() {
    let t = create(
        SpecId::FRONTIER,
        &TracerSpec::new(TracerKind::StructLog, None).unwrap(),
    );
    let v = json_of(&t);
    assert_eq!(v["failed"], json!(true), "{v}");
    assert_eq!(v["returnValue"], json!("0x"), "{v}");
}

#[cfg(feature = "js")]
#[test]
fn js_sees_the_error_and_the_code() {
    let script =
        "{fault: function() {}, result: function(ctx) { return [ctx.error, toHex(ctx.output)]; }}";
    let spec = TracerSpec::js(script, None, std::time::Duration::from_secs(5)).unwrap();
    let v = json_of(&create(SpecId::FRONTIER, &spec));
    assert_eq!(
        v,
        json!(["contract creation code storage out of gas", code()])
    );
}
