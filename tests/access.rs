//! `access` offline: transient storage (EIP-1153) is listed apart from persistent storage of
//! the same slot number.

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::replay::access::trace_access;
use chaintrace::replay::{BlockInfo, EvmEnv, ReplayTx};
use chaintrace::source::{AccountData, StateSnapshot};
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");

#[test]
fn transient_slots_are_listed_apart_from_storage() {
    // TSTORE(1, 5); TLOAD(1); SSTORE(1, 7)
    let code = hex::decode("6005 6001 5d 6001 5c 50 6007 6001 55 00".replace(' ', "")).unwrap();
    let mut snap = StateSnapshot::complete();
    snap.insert_account(
        SENDER,
        AccountData {
            balance: U256::from(10u128.pow(18)),
            nonce: 0,
            code: Bytes::new(),
        },
    );
    snap.insert_account(
        CONTRACT,
        AccountData {
            balance: U256::ZERO,
            nonce: 1,
            code: code.into(),
        },
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
            gas_limit: 100_000,
            gas_price: 1,
            kind: TxKind::Call(CONTRACT),
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
    };
    let mut db = snap.db();
    let (rows, _) = trace_access(&mut db, &env, &tx).unwrap();
    let slots: Vec<_> = rows
        .iter()
        .filter(|r| r.address == CONTRACT && r.slot.is_some())
        .map(|r| (r.transient, r.read, r.written, r.before, r.after))
        .collect();
    assert_eq!(
        slots,
        vec![
            (false, false, true, U256::ZERO, U256::from(7)),
            (true, true, true, U256::ZERO, U256::ZERO),
        ]
    );
    let json = serde_json::to_value(&rows).unwrap();
    let transient: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("transient").is_some())
        .collect();
    assert_eq!(transient.len(), 1, "{json}");
    assert_eq!(transient[0]["transient"], serde_json::json!(true));
}
