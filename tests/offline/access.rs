//! `access` offline: transient storage (EIP-1153) is listed apart from persistent storage of
//! the same slot number.

use crate::offline;
use alloy_primitives::{address, Address, TxKind, U256};
use chaintrace::replay::access::trace_access;
use chaintrace::replay::EvmEnv;
use chaintrace::source::StateSnapshot;
use offline::{account, block, tx};
use revm::primitives::hardfork::SpecId;

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");

#[test]
fn transient_slots_are_listed_apart_from_storage() {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    // TSTORE(1, 5); TLOAD(1); SSTORE(1, 7)
    snap.insert_account(
        CONTRACT,
        account(0, 1, "6005 6001 5d 6001 5c 50 6007 6001 55 00"),
    );
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let mut db = snap.db();
    let (rows, _) = trace_access(&mut db, &env, &tx(SENDER, TxKind::Call(CONTRACT))).unwrap();
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
