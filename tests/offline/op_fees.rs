//! The L1 data fee and the operator fee charged in the replay of a user transaction on an OP
//! chain, as op-geth's `core/state_transition.go` moves them (`buyGas`, `refundGas`,
//! `refundIsthmusOperatorCost`, the fee vault credits). The L1 data fees are op-geth's own
//! numbers for its `emptyTx` (`core/types/rollup_cost_test.go`: 960,900 wei under Ecotone,
//! 3,203,000 under Fjord, with L1 base fee 1000 gwei, blob base fee 0.01 gwei, scalars 2 and
//! 3); the gas and operator fee amounts are worked by hand from the same file's formulas.

use crate::offline;
use alloy_primitives::{address, hex, Address, TxKind, B256, U256};
use chaintrace::chain::op::{
    OpFork, OpRules, BASE_FEE_VAULT, L1_BLOCK, L1_FEE_VAULT, OPERATOR_FEE_VAULT,
};
use chaintrace::replay::{apply, EvmEnv, ReplayTx};
use chaintrace::source::StateSnapshot;
use offline::{account, block};
use revm::primitives::hardfork::SpecId;
use revm::DatabaseRef;

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
/// `emptyTx`'s recipient.
const TO: Address = address!("095e7baea6a6c7c4c2dfeb977efac326af552d87");
const COINBASE: Address = address!("4200000000000000000000000000000000000011");
/// op-geth's `emptyTx` in its binary encoding (transaction_test.go), whose bytes are priced.
const EMPTY_TX: &str = "dd80808094095e7baea6a6c7c4c2dfeb977efac326af552d878080808080";
const BASE_FEE: u64 = 7;
const GAS_PRICE: u128 = 10;
const BALANCE: u64 = 10_000_000_000;

/// The L1Block predeploy as the L1 attributes deposit leaves it (rollup_cost_test.go's
/// values): slot 1 the L1 base fee, slot 3 the scalars at bytes [16, 20) and [20, 24), slot 7
/// the blob base fee, slot 8 the operator fee scalar at [20, 24) and constant at [24, 32).
fn world(operator: Option<(u32, u64)>) -> StateSnapshot {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(BALANCE.into(), 0, ""));
    snap.insert_account(L1_BLOCK, account(0, 1, "00"));
    snap.insert_slot(L1_BLOCK, U256::from(1), U256::from(1000u64 * 1_000_000));
    let mut scalars = [0u8; 32];
    scalars[16..20].copy_from_slice(&2u32.to_be_bytes());
    scalars[20..24].copy_from_slice(&3u32.to_be_bytes());
    snap.insert_slot(L1_BLOCK, U256::from(3), U256::from_be_bytes(scalars));
    snap.insert_slot(L1_BLOCK, U256::from(7), U256::from(10u64 * 1_000_000));
    if let Some((scalar, constant)) = operator {
        let mut params = [0u8; 32];
        params[20..24].copy_from_slice(&scalar.to_be_bytes());
        params[24..32].copy_from_slice(&constant.to_be_bytes());
        snap.insert_slot(L1_BLOCK, U256::from(8), U256::from_be_bytes(params));
    }
    snap
}

/// A legacy transfer of nothing to `TO` at 10 wei a gas, 100,000 gas, priced by `emptyTx`'s
/// bytes.
fn user_tx() -> ReplayTx {
    let mut tx = offline::tx(SENDER, TxKind::Call(TO));
    tx.env.gas_price = GAS_PRICE;
    tx.raw = hex::decode(EMPTY_TX).unwrap().into();
    tx
}

fn env(op: Option<OpFork>) -> EvmEnv {
    let mut info = block(1, Some(BASE_FEE));
    info.coinbase = COINBASE;
    let mut env = EvmEnv::new(SpecId::CANCUN, 10, &info);
    env.op = op.map(OpRules::up_to);
    env
}

fn balances(snap: &StateSnapshot, env: &EvmEnv) -> [U256; 5] {
    let mut db = snap.db();
    let out = apply(&mut db, env, &user_tx()).unwrap();
    assert!(out.success);
    assert_eq!(out.gas_used, 21_000);
    let b = |a| db.basic_ref(a).unwrap().unwrap_or_default().balance;
    [
        b(SENDER),
        b(COINBASE),
        b(BASE_FEE_VAULT),
        b(L1_FEE_VAULT),
        b(OPERATOR_FEE_VAULT),
    ]
}

fn wei(v: u64) -> U256 {
    U256::from(v)
}

#[test]
fn ecotone_charges_the_l1_data_fee_and_pays_the_vaults() {
    // 21,000 gas at 10 wei: 7 a gas to the BaseFeeVault, 3 to the coinbase; 960,900 wei of L1
    // data fee to the L1FeeVault.
    let got = balances(&world(None), &env(Some(OpFork::Ecotone)));
    assert_eq!(
        got,
        [
            wei(BALANCE - 210_000 - 960_900),
            wei(63_000),
            wei(147_000),
            wei(960_900),
            wei(0)
        ]
    );
}

#[test]
fn isthmus_charges_the_operator_fee_of_the_gas_used() {
    // Fjord's cost function for emptyTx: 3,203,000 wei. Operator fee scalar 1e6 (one wei a
    // gas after the 1e6 division), constant 5: 100,005 taken upfront for the gas limit, 79,000
    // given back, 21,005 to the OperatorFeeVault.
    let got = balances(&world(Some((1_000_000, 5))), &env(Some(OpFork::Isthmus)));
    assert_eq!(
        got,
        [
            wei(BALANCE - 210_000 - 3_203_000 - 21_005),
            wei(63_000),
            wei(147_000),
            wei(3_203_000),
            wei(21_005)
        ]
    );
}

#[test]
fn ethereum_rules_charge_nothing_more() {
    let got = balances(&world(Some((1_000_000, 5))), &env(None));
    assert_eq!(
        got,
        [wei(BALANCE - 210_000), wei(63_000), wei(0), wei(0), wei(0)]
    );
}

#[test]
fn the_balance_check_includes_the_l1_fee() {
    // op-geth's buyGas: balance < gasLimit × price + value + L1 fee is ErrInsufficientFunds;
    // exactly enough runs.
    for (balance, runs) in [(1_000_000 + 960_899, false), (1_000_000 + 960_900, true)] {
        let mut snap = world(None);
        snap.insert_account(SENDER, account(balance, 0, ""));
        let mut db = snap.db();
        let out = apply(&mut db, &env(Some(OpFork::Ecotone)), &user_tx());
        assert_eq!(out.is_ok(), runs, "balance {balance}: {out:?}");
    }
}

/// `access` runs the same OP rules as `apply` and `trace`: the sender's row holds its balance
/// before and after the gas, the L1 data fee and the operator fee (Isthmus numbers above), and
/// the state it commits credits the vaults.
#[test]
fn access_charges_the_op_fees_as_apply_does() {
    use chaintrace::replay::access::trace_access;
    let snap = world(Some((1_000_000, 5)));
    let mut db = snap.db();
    let (rows, out) = trace_access(&mut db, &env(Some(OpFork::Isthmus)), &user_tx()).unwrap();
    assert!(out.success && out.gas_used == 21_000);
    let sender = rows
        .iter()
        .find(|r| r.address == SENDER && r.slot.is_none())
        .unwrap();
    assert_eq!(sender.before, wei(BALANCE));
    assert_eq!(sender.after, wei(BALANCE - 210_000 - 3_203_000 - 21_005));
    assert_eq!(
        (sender.nonce_before, sender.nonce_after),
        (Some(0), Some(1))
    );
    let b = |a| db.basic_ref(a).unwrap().unwrap_or_default().balance;
    assert_eq!(
        [b(BASE_FEE_VAULT), b(L1_FEE_VAULT), b(OPERATOR_FEE_VAULT)],
        [wei(147_000), wei(3_203_000), wei(21_005)]
    );
}

/// From Fjord a call to 0x100 is RIP-7212's p256Verify (revm's implementation, 3,450 gas):
/// a contract that STATICCALLs it with a valid signature (revm's `ok_1` vector) stores 1. Under
/// Ecotone 0x100 is an empty account: the call returns nothing, and the memory word stored is
/// still the input's first.
#[test]
fn fjord_blocks_have_p256_verify() {
    const CALLER: Address = address!("00000000000000000000000000000000000000cc");
    // CALLDATACOPY(0, 0, size); STATICCALL(gas, 0x100, 0, size, 0, 32); SSTORE(0, MLOAD(0))
    let code = "365f5f3760205f365f6101005afa505f515f5500";
    let input = "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4da73bd4903f0ce3b6\
                 39bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac36dbcd03009df8c59286b162af3bd7fc\
                 c0450c9aa81be5d10d312af6c66b1d604aebd3099c618202fcfe16ae7770b0c49ab5eadf74b75420\
                 4a3bb6060e44eff37618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e";
    let stored = |fork: OpFork| {
        let mut snap = world(None);
        snap.insert_account(CALLER, account(0, 1, code));
        let mut db = snap.db();
        let mut tx = offline::tx(SENDER, TxKind::Call(CALLER));
        tx.env.data = hex::decode(input).unwrap().into();
        tx.env.gas_price = GAS_PRICE;
        let out = apply(&mut db, &env(Some(fork)), &tx).unwrap();
        assert!(out.success, "{fork:?}: {out:?}");
        db.storage_ref(CALLER, U256::ZERO).unwrap()
    };
    assert_eq!(stored(OpFork::Fjord), U256::from(1));
    assert_eq!(
        stored(OpFork::Ecotone),
        U256::from_be_slice(&hex::decode(&input[..64]).unwrap())
    );
}

/// `apply`, and `trace` under a tracer that reads no state (the callTracer), credit a vault
/// the transaction did not touch straight in the database's cache; `trace` under one that
/// does (the prestate tracer) in the transaction's state, then commits: a block leaves the
/// same state every way.
/// The BaseFeeVault exists beforehand (with code, as the predeploys have), the
/// OperatorFeeVault too and was read (cached, not written), the L1FeeVault not; the third
/// transaction sends value to the L1FeeVault (then in its state) and the fourth
/// reads the BaseFeeVault's balance.
#[test]
fn apply_credits_the_vaults_as_trace_does() {
    use chaintrace::replay::trace;
    use chaintrace::trace::{TracerKind, TracerSpec};
    const READER: Address = address!("00000000000000000000000000000000000000ab");
    let mut snap = world(Some((1_000_000, 5)));
    snap.insert_account(BASE_FEE_VAULT, account(77, 0, "60016000f3"));
    snap.insert_account(OPERATOR_FEE_VAULT, account(5, 0, ""));
    // SSTORE(0, BALANCE(BaseFeeVault))
    snap.insert_account(
        READER,
        account(0, 1, "734200000000000000000000000000000000000019315f5500"),
    );
    let env = env(Some(OpFork::Isthmus));
    let txs: Vec<ReplayTx> = (0..5u64)
        .map(|nonce| {
            let mut tx = user_tx();
            tx.env.nonce = nonce;
            match nonce {
                2 => {
                    tx.env.kind = TxKind::Call(L1_FEE_VAULT);
                    tx.env.value = U256::from(1_000u64);
                }
                3 => tx.env.kind = TxKind::Call(READER),
                _ => {}
            }
            tx
        })
        .collect();
    let call = TracerSpec::new(TracerKind::Call, None).unwrap();
    let diff = serde_json::json!({"diffMode": true});
    let prestate = TracerSpec::new(TracerKind::Prestate, Some(&diff)).unwrap();
    let (mut applied, mut called, mut diffed) = (snap.db(), snap.db(), snap.db());
    // As an earlier read leaves it: cached, neither written nor missing.
    for db in [&mut applied, &mut called, &mut diffed] {
        revm::Database::basic(db, OPERATOR_FEE_VAULT).unwrap();
    }
    for tx in &txs {
        let a = apply(&mut applied, &env, tx).unwrap();
        let c = trace(&mut called, &env, tx, &call, 0).unwrap().outcome;
        let d = trace(&mut diffed, &env, tx, &prestate, 0).unwrap();
        assert!(a.success && c.success && d.outcome.success);
        assert_eq!((a.gas_used, &a.op_fee), (c.gas_used, &c.op_fee));
        assert_eq!(
            (a.gas_used, &a.op_fee),
            (d.outcome.gas_used, &d.outcome.op_fee)
        );
        // The L1FeeVault receives the third transaction's value: the prestate tracer's
        // post-state shows it with the fee credited too.
        if tx.env.kind == TxKind::Call(L1_FEE_VAULT) {
            let post = &offline::result_json(&d)["post"][format!("{L1_FEE_VAULT:#x}")];
            let balance = applied.basic_ref(L1_FEE_VAULT).unwrap().unwrap().balance;
            assert_eq!(
                post["balance"].as_str(),
                Some(format!("{balance:#x}").as_str())
            );
            assert!(balance > U256::from(1_000u64) + a.op_fee.unwrap().cost.l1);
        }
    }
    type View = (Address, U256, u64, B256, String, Vec<(U256, U256)>);
    let view = |db: &chaintrace::source::ReplayDb| {
        let mut accounts: Vec<View> = db
            .cache
            .accounts
            .iter()
            .map(|(a, d)| {
                let mut storage: Vec<_> = d.storage.iter().map(|(k, v)| (*k, *v)).collect();
                storage.sort();
                let state = format!("{:?}", d.account_state);
                (
                    *a,
                    d.info.balance,
                    d.info.nonce,
                    d.info.code_hash,
                    state,
                    storage,
                )
            })
            .collect();
        accounts.sort();
        let mut codes: Vec<B256> = db.cache.contracts.keys().copied().collect();
        codes.sort();
        (accounts, codes)
    };
    assert_eq!(view(&applied), view(&called));
    assert_eq!(view(&applied), view(&diffed));
    assert!(applied.storage_ref(READER, U256::ZERO).unwrap() > U256::ZERO);
}
