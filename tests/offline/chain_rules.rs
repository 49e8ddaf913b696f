//! Chain rules of 1329/1328 applied in replay, against post-states computed by hand from the
//! chain's fee rule: the base fee is not burned; the fee collector (COINBASE) is credited
//! `gasUsed × (baseFee + tip)`.

use crate::offline;
use alloy_primitives::{address, Address, TxKind, U256};
use chaintrace::chain::rules::FEE_COLLECTOR;
use chaintrace::replay::{trace, EvmEnv, TraceResult};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, tx};
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
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    let mut info = block(200_000_000, Some((10 * GWEI) as u64));
    info.coinbase = MINER;
    let env = EvmEnv::new(SpecId::CANCUN, chain_id, &info);
    let mut t = tx(SENDER, TxKind::Call(TO));
    t.env.tx_type = tx_type;
    t.env.gas_limit = 21_000;
    t.env.gas_price = 11 * GWEI;
    t.env.gas_priority_fee = Some(GWEI);
    t.env.value = U256::from(1);
    t.env.chain_id = Some(chain_id);
    let spec = TracerSpec::new(TracerKind::Prestate, Some(&json!({"diffMode": true}))).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &t, &spec, 0).map_err(|e| e.to_string())?;
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

/// A call into the bank precompile (0x…1001) on chain 1329 is answered with the node's frame,
/// not by running whatever the local state has at that address.
#[test]
fn chain_precompile_frames_are_spliced_from_the_node() {
    use chaintrace::replay::splice::Splice;
    use std::sync::Arc;
    let bank = address!("0000000000000000000000000000000000001001");
    let caller = address!("000000000000000000000000000000000000cafe");
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    // Locally the address holds code returning 0x2a; the node's bank answered 0x99.
    snap.insert_account(bank, account(0, 0, "602a60005260206000f3"));
    // CALL(gas, 0x1001, 0, 0, 0, 0, 32); SSTORE(0, MLOAD(0))
    snap.insert_account(
        caller,
        account(
            0,
            1,
            "6020 6000 6000 6000 6000 611001 5a f1 50 600051 600055 00",
        ),
    );
    let mut env = EvmEnv::new(SpecId::PRAGUE, 1329, &block(200_000_000, Some(0)));
    // The node's callTracer frame of that call.
    let node_frame = serde_json::from_value(json!({
        "from": format!("{caller:?}"), "gas": "0x2e630", "gasUsed": "0x4d2",
        "to": format!("{bank:?}"), "input": "0x",
        "output": format!("0x{}99", "00".repeat(31)), "type": "CALL", "value": "0x0"}))
    .unwrap();
    env.splice = Some(Arc::new(Splice {
        frames: Some(vec![node_frame]),
        ..Default::default()
    }));
    let mut tx = tx(SENDER, TxKind::Call(caller));
    tx.env.gas_limit = 200_000;
    tx.env.chain_id = Some(1329);
    let spec = TracerSpec::new(TracerKind::Call, None).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx, &spec, 0).unwrap();
    let TraceResult::Call(frame) = t.result else {
        unreachable!()
    };
    let v = serde_json::to_value(&*frame).unwrap();
    let inner = &v["calls"][0];
    assert_eq!(
        inner["to"],
        json!(format!("{bank:?}").to_lowercase()),
        "{v}"
    );
    assert_eq!(inner["gasUsed"], json!("0x4d2"), "{v}");
    assert_eq!(
        inner["output"],
        json!(format!("0x{}99", "00".repeat(31))),
        "{v}"
    );
    let log = env.splice.as_ref().unwrap().log.lock().unwrap().clone();
    assert_eq!(log.spliced, vec![bank]);
    assert!(log.opaque.is_empty());
}

/// The json precompile (0x…1003) runs locally under chain 1329's rules, with no node at all:
/// the caller gets `extractAsUint256('{"n": "42"}', "n")` = 42, and the frame is priced as the
/// node's dynamic-gas wrapper prices it (precompiles/common/precompiles.go, json.go): a scan of
/// 1000 + 3 per calldata byte, 3 per byte of the `string` key, 100 per payload byte.
#[test]
fn the_json_precompile_runs_locally() {
    use alloy_dyn_abi::DynSolValue;
    let json_pc = address!("0000000000000000000000000000000000001003");
    let caller = address!("000000000000000000000000000000000000cafe");
    let payload = br#"{"n": "42"}"#.to_vec();
    let mut input = alloy_primitives::keccak256("extractAsUint256(bytes,string)")[..4].to_vec();
    input.extend(
        DynSolValue::Tuple(vec![
            DynSolValue::Bytes(payload.clone()),
            DynSolValue::String("n".into()),
        ])
        .abi_encode_params(),
    );
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    // CALLDATACOPY(0, 0, CALLDATASIZE); STATICCALL(gas, 0x1003, 0, CALLDATASIZE, 0, 32);
    // SSTORE(1, success); SSTORE(0, MLOAD(0))
    snap.insert_account(
        caller,
        account(
            0,
            1,
            "36 6000 6000 37 6020 6000 36 6000 611003 5a fa 6001 55 600051 600055 00",
        ),
    );
    let env = EvmEnv::new(SpecId::PRAGUE, 1329, &block(200_000_000, Some(0)));
    let mut t = tx(SENDER, TxKind::Call(caller));
    t.env.gas_limit = 200_000;
    t.env.chain_id = Some(1329);
    t.env.data = input.clone().into();
    let spec = TracerSpec::new(TracerKind::Call, None).unwrap();
    let mut db = snap.db();
    let traced = trace(&mut db, &env, &t, &spec, 0).unwrap();
    let TraceResult::Call(frame) = traced.result else {
        unreachable!()
    };
    let v = serde_json::to_value(&*frame).unwrap();
    let inner = &v["calls"][0];
    assert_eq!(inner["type"], json!("STATICCALL"), "{v}");
    assert_eq!(
        inner["to"],
        json!(format!("{json_pc:?}").to_lowercase()),
        "{v}"
    );
    assert_eq!(inner["output"], json!(format!("0x{:064x}", 42)), "{v}");
    let gas = 1000 + 3 * input.len() as u64 + 3 + 100 * payload.len() as u64;
    assert_eq!(inner["gasUsed"], json!(format!("{gas:#x}")), "{v}");
    assert!(traced.outcome.success);
}

/// SSTORE under a set cost other than Ethereum's 20,000 (the chain's `SeiSstoreSetGasEIP2200`),
/// priced as the fork's `makeGasSStoreFunc`: a clean zero slot made non-zero costs cold 2,100 +
/// the set cost, and a dirty slot reset to its original zero refunds the set cost - 100.
#[test]
fn sstore_follows_the_chains_set_cost() {
    let store = address!("00000000000000000000000000000000000005e7");
    let run = |set_gas: u64| {
        let mut snap = StateSnapshot::complete();
        snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
        // SSTORE(0, 1); SSTORE(0, 0); STOP
        snap.insert_account(store, account(0, 1, "6001 6000 55 6000 6000 55 00"));
        let mut env = EvmEnv::new(SpecId::PRAGUE, 1329, &block(200_000_000, Some(0)));
        env.rules.as_mut().unwrap().sstore_set_gas = set_gas;
        let mut t = tx(SENDER, TxKind::Call(store));
        t.env.gas_limit = 200_000;
        t.env.chain_id = Some(1329);
        let spec = TracerSpec::new(TracerKind::StructLog, None).unwrap();
        let mut db = snap.db();
        let traced = trace(&mut db, &env, &t, &spec, 0).unwrap();
        let mut buf = Vec::new();
        chaintrace::render::json::write_trace(&mut buf, &traced.result).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        (v, traced.outcome.gas_used)
    };
    let (v, used) = run(25_000);
    let logs = v["structLogs"].as_array().unwrap();
    assert_eq!(logs[2]["op"], json!("SSTORE"));
    assert_eq!(logs[2]["gasCost"], json!(2_100 + 25_000));
    assert_eq!(logs[5]["op"], json!("SSTORE"));
    assert_eq!(logs[5]["gasCost"], json!(100));
    assert_eq!(logs[6]["refund"], json!(25_000 - 100));
    // 21,000 + 4 PUSHes + both SSTOREs, less the refund capped at a fifth (London).
    let spent = 21_000 + 4 * 3 + 27_100 + 100;
    assert_eq!(used, spent - spent / 5);
    // Ethereum's 20,000 is revm's own price.
    let (v, _) = run(20_000);
    assert_eq!(v["structLogs"][2]["gasCost"], json!(22_100));
    assert_eq!(v["structLogs"][6]["refund"], json!(19_900));
}

/// PREVRANDAO on chain 1329 is keccak256 of Go's `time.MarshalBinary` of the consensus header
/// time (version 1, seconds since year 1, nanoseconds, zone -1 for UTC), used when the node
/// prints a zero mixHash; with the consensus time's nanoseconds when they were read.
#[test]
fn prevrandao_is_the_hash_of_the_consensus_time() {
    use chaintrace::source::chain_data::ConsensusFacts;
    let mut info = block(200_000_000, Some(0));
    info.timestamp = 1_764_064_800; // 2025-11-25T10:00:00Z
    info.consensus = Some(ConsensusFacts {
        time_nanos: 123_456_789,
        sstore_set_gas: 20_000,
    });
    let env = EvmEnv::new(SpecId::PRAGUE, 1329, &info);
    let mut go = vec![1u8];
    go.extend((1_764_064_800i64 + 62_135_596_800).to_be_bytes());
    go.extend(123_456_789i32.to_be_bytes());
    go.extend([0xff, 0xff]);
    assert_eq!(env.block.prevrandao, Some(alloy_primitives::keccak256(&go)));
    assert!(!env.prevrandao_guessed);
    // Without the consensus time: whole seconds, and said to be a guess.
    info.consensus = None;
    let guessed = EvmEnv::new(SpecId::PRAGUE, 1329, &info);
    assert!(guessed.prevrandao_guessed);
    // A header that carries a mixHash is taken as it is: nothing guessed.
    info.mix_hash = alloy_primitives::B256::repeat_byte(7);
    let given = EvmEnv::new(SpecId::PRAGUE, 1329, &info);
    assert_eq!(given.block.prevrandao, Some(info.mix_hash));
    assert!(!given.prevrandao_guessed);
    info.mix_hash = Default::default();
    info.consensus = Some(ConsensusFacts {
        time_nanos: 123_456_789,
        sstore_set_gas: 20_000,
    });
    // Ethereum keeps the header's mixHash.
    let eth = EvmEnv::new(SpecId::PRAGUE, 1, &info);
    assert_eq!(eth.block.prevrandao, Some(Default::default()));
}
