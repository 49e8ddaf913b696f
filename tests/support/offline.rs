//! Test support: a small offline world — accounts in a complete state snapshot, a block, a
//! transaction — for tests that run the real executor without a node.
#![allow(dead_code)]

use alloy_primitives::{hex, Address, Bytes, TxKind, U256};
use chaintrace::render::json::write_trace;
use chaintrace::replay::{BlockInfo, ReplayTx, TracedTx};
use chaintrace::source::AccountData;
use revm::context::TxEnv;
use serde_json::Value;

/// An account; `code` is hex, spaces allowed.
pub fn account(balance: u128, nonce: u64, code: &str) -> AccountData {
    AccountData {
        balance: U256::from(balance),
        nonce,
        code: hex::decode(code.replace(' ', "")).unwrap().into(),
    }
}

/// Block `number` at timestamp 1 with a 30M gas limit.
pub fn block(number: u64, base_fee: Option<u64>) -> BlockInfo {
    BlockInfo {
        number,
        timestamp: 1,
        gas_limit: 30_000_000,
        base_fee,
        ..Default::default()
    }
}

/// An unsigned transaction from `sender` (nonce 0, 100,000 gas, price 0, chain 1); tests adjust
/// `env` fields as they need.
pub fn tx(sender: Address, kind: TxKind) -> ReplayTx {
    ReplayTx {
        hash: Default::default(),
        sender,
        env: TxEnv {
            caller: sender,
            gas_limit: 100_000,
            gas_price: 0,
            kind,
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
        deposit: None,
        rollup: Default::default(),
    }
}

/// A trace's result as the JSON geth prints.
pub fn result_json(t: &TracedTx) -> Value {
    let mut out = Vec::new();
    write_trace(&mut out, &t.result).unwrap();
    serde_json::from_slice(&out).unwrap()
}
