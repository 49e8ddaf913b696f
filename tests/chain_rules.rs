//! Chain rules of 1329/1328 applied in replay, against post-states computed by hand from the
//! chain's fee rule: the base fee is not burned; the fee collector (COINBASE) is credited
//! `gasUsed × (baseFee + tip)`.

use alloy_primitives::{address, Address, Bytes, TxKind, U256};
use chaintrace::chain::rules::FEE_COLLECTOR;
use chaintrace::replay::{trace, BlockInfo, EvmEnv, ReplayTx, TraceResult};
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::{TracerKind, TracerSpec};
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const TO: Address = address!("00000000000000000000000000000000000000bb");
const MINER: Address = address!("00000000000000000000000000000000000000c0");
const GWEI: u128 = 1_000_000_000;

/// A 21,000-gas transfer of 1 wei at base fee 10 gwei and tip 1 gwei, on `chain_id`: the
/// prestate tracer's post-state (diffMode).
fn transfer_post_state(chain_id: u64, tx_type: u8) -> Result<Value, String> {
    let mut snap = StateSnapshot::complete();
    let eth = U256::from(10u128.pow(18));
    snap.insert_account(
        SENDER,
        AccountData {
            balance: eth,
            nonce: 0,
            code: Bytes::new(),
        },
    );
    let info = BlockInfo {
        number: 200_000_000,
        timestamp: 1,
        coinbase: MINER,
        gas_limit: 30_000_000,
        base_fee: Some((10 * GWEI) as u64),
        ..Default::default()
    };
    let env = EvmEnv::new(SpecId::CANCUN, chain_id, &info);
    let tx = ReplayTx {
        hash: Default::default(),
        sender: SENDER,
        env: TxEnv {
            tx_type,
            caller: SENDER,
            gas_limit: 21_000,
            gas_price: 11 * GWEI,
            gas_priority_fee: Some(GWEI),
            kind: TxKind::Call(TO),
            value: U256::from(1),
            nonce: 0,
            chain_id: Some(chain_id),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
    };
    let spec = TracerSpec::new(TracerKind::Prestate, Some(&json!({"diffMode": true}))).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx, &spec, 0).map_err(|e| e.to_string())?;
    match t.result {
        TraceResult::Prestate(p) => Ok(serde_json::to_value(&p).unwrap()["post"].clone()),
        _ => unreachable!(),
    }
}

fn balance(post: &Value, a: Address) -> U256 {
    let s = post[format!("{a:?}").to_lowercase()]["balance"]
        .as_str()
        .unwrap();
    U256::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn chain_1329_credits_base_fee_and_tip_to_the_fee_collector() {
    let post = transfer_post_state(1329, 2).unwrap();
    let paid = U256::from(21_000u128 * 11 * GWEI);
    assert_eq!(balance(&post, FEE_COLLECTOR), paid, "{post}");
    assert_eq!(
        balance(&post, SENDER),
        U256::from(10u128.pow(18)) - paid - U256::from(1),
        "{post}"
    );
    assert!(
        post.get(format!("{MINER:?}").to_lowercase()).is_none(),
        "{post}"
    );
}

#[test]
fn ethereum_burns_the_base_fee_and_pays_the_miner_the_tip() {
    let post = transfer_post_state(1, 2).unwrap();
    assert_eq!(
        balance(&post, MINER),
        U256::from(21_000u128 * GWEI),
        "{post}"
    );
}

#[test]
fn chain_1329_refuses_blob_transactions() {
    let e = transfer_post_state(1329, 3).unwrap_err();
    assert!(e.contains("does not accept blob"), "{e}");
}
