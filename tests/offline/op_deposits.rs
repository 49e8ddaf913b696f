//! OP-stack deposit transactions (type 0x7e) on tiny offline worlds, each expectation worked by
//! hand from op-geth's `core/state_transition.go` (`TransitionDb`: mint before the snapshot,
//! a failed deposit keeps the mint and bumps the nonce; `innerTransitionDb`: all gas reported
//! before Regolith, what was used from Regolith, no coinbase payment). op-geth's own fixtures
//! are run in `conformance.rs`.

use crate::offline;
use alloy_primitives::{address, Address, Bytes, TxKind, B256, U256};
use chaintrace::chain::op::{OpFork, OpRules};
use chaintrace::replay::{apply, trace, EvmEnv, ReplayTx};
use chaintrace::source::deposit::{Deposit, DepositTx};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, result_json};
use revm::primitives::hardfork::SpecId;
use serde_json::json;

const FROM: Address = address!("00000000000000000000000000000000000000f0");
const TARGET: Address = address!("00000000000000000000000000000000000000aa");
const COINBASE: Address = address!("4200000000000000000000000000000000000011");

fn deposit(mint: Option<u64>, value: u64, system: bool) -> ReplayTx {
    ReplayTx::from_deposit(DepositTx {
        deposit: Deposit {
            source_hash: B256::repeat_byte(1),
            mint: mint.map(U256::from),
            is_system_tx: system,
        },
        from: FROM,
        kind: TxKind::Call(TARGET),
        value: U256::from(value),
        gas_limit: 100_000,
        data: Bytes::new(),
        hash: B256::repeat_byte(2),
    })
}

/// `FROM` holds `balance` (nonce 5); `TARGET` runs `code`.
fn world(balance: u64, code: &str) -> StateSnapshot {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(FROM, account(balance.into(), 5, ""));
    snap.insert_account(TARGET, account(0, 1, code));
    snap
}

fn env(op: Option<OpFork>) -> EvmEnv {
    let mut info = block(1, Some(7));
    info.coinbase = COINBASE;
    let mut env = EvmEnv::new(SpecId::CANCUN, 10, &info);
    env.op = op.map(OpRules::up_to);
    env
}

fn diff(snap: &StateSnapshot, env: &EvmEnv, tx: &ReplayTx) -> serde_json::Value {
    let spec = TracerSpec::new(TracerKind::Prestate, Some(&json!({"diffMode": true}))).unwrap();
    let mut db = snap.db();
    result_json(&trace(&mut db, env, tx, &spec, 0).unwrap())
}

fn call(snap: &StateSnapshot, env: &EvmEnv, tx: &ReplayTx) -> serde_json::Value {
    let spec = TracerSpec::new(TracerKind::Call, None).unwrap();
    let mut db = snap.db();
    result_json(&trace(&mut db, env, tx, &spec, 0).unwrap())
}

#[test]
fn a_deposit_that_cannot_pay_its_value_keeps_its_mint_and_bumps_the_nonce() {
    // 1,000 minted, 2,000 to send: CanTransfer fails, the state goes back to just after the
    // mint, the nonce goes 5 → 6, all 100,000 gas is used (0x186a0).
    let snap = world(0, "");
    let tx = deposit(Some(1000), 2000, false);
    for op in [None, Some(OpFork::Regolith)] {
        let env = env(op);
        let d = diff(&snap, &env, &tx);
        assert_eq!(
            d["pre"][FROM.to_string().to_lowercase()],
            json!({"balance": "0x0", "nonce": 5})
        );
        assert_eq!(
            d["post"][FROM.to_string().to_lowercase()],
            json!({"balance": "0x3e8", "nonce": 6})
        );
        assert_eq!(
            call(&snap, &env, &tx),
            json!({"from": Address::ZERO, "gas": "0x0", "gasUsed": "0x186a0", "input": "0x",
                   "error": "failed deposit transaction", "type": "STOP"})
        );
        let mut db = snap.db();
        let out = apply(&mut db, &env, &tx).unwrap();
        assert!(!out.success);
        assert_eq!(out.gas_used, 100_000);
    }
}

#[test]
fn gas_used_is_the_limit_before_regolith_and_what_ran_from_regolith() {
    // A call to code that stops at once: 21,000 intrinsic gas. Before Regolith the receipt
    // says the whole 100,000; from Regolith 21,000. The mint and value move, the nonce is not
    // checked (the deposit says 0, the state 5) but bumped, the coinbase gets nothing.
    let snap = world(0, "00");
    let tx = deposit(Some(1000), 400, false);
    for (op, used) in [(None, 100_000u64), (Some(OpFork::Regolith), 21_000)] {
        let env = env(op);
        let mut db = snap.db();
        let out = apply(&mut db, &env, &tx).unwrap();
        assert!(out.success);
        assert_eq!(out.gas_used, used);
        let d = diff(&snap, &env, &tx);
        let from = FROM.to_string().to_lowercase();
        assert_eq!(d["post"][&from], json!({"balance": "0x258", "nonce": 6}));
        assert_eq!(
            d["post"][TARGET.to_string().to_lowercase()],
            json!({"balance": "0x190"})
        );
        assert!(d["post"].get(COINBASE.to_string().to_lowercase()).is_none());
    }
}

#[test]
fn a_system_deposit_reports_no_gas_before_regolith_and_fails_from_regolith() {
    let snap = world(0, "00");
    let tx = deposit(None, 0, true);
    let mut db = snap.db();
    let before = apply(&mut db, &env(None), &tx).unwrap();
    assert!(before.success);
    assert_eq!(before.gas_used, 0);
    // From Regolith: ErrSystemTxNotSupported, a failed deposit using all its gas.
    let mut db = snap.db();
    let after = apply(&mut db, &env(Some(OpFork::Regolith)), &tx).unwrap();
    assert!(!after.success);
    assert_eq!(after.gas_used, 100_000);
}

#[test]
fn a_reverting_deposit_keeps_its_mint() {
    // PUSH1 0 DUP1 REVERT: the call reverts (its value transfer with it), the mint and the
    // nonce stay; from Regolith the gas used is what ran: 21,000 + 3 + 3.
    let snap = world(0, "6000 80 fd");
    let tx = deposit(Some(1000), 400, false);
    let env = env(Some(OpFork::Regolith));
    let mut db = snap.db();
    let out = apply(&mut db, &env, &tx).unwrap();
    assert!(!out.success);
    assert_eq!(out.gas_used, 21_006);
    let d = diff(&snap, &env, &tx);
    assert_eq!(
        d["post"][FROM.to_string().to_lowercase()],
        json!({"balance": "0x3e8", "nonce": 6})
    );
}

/// `access` runs deposits by the same rules: the mint shows in the sender's row (before it, and
/// after it and the value), the nonce is bumped, and a failed deposit keeps its mint.
#[test]
fn access_runs_deposits_by_their_rules() {
    use chaintrace::replay::access::trace_access;
    let snap = world(1_000, "00");
    let row = |rows: &[chaintrace::replay::access::Access]| {
        rows.iter()
            .find(|r| r.address == FROM && r.slot.is_none())
            .cloned()
            .unwrap()
    };
    let mut db = snap.db();
    let tx = deposit(Some(500), 300, false);
    let (rows, out) = trace_access(&mut db, &env(Some(OpFork::Regolith)), &tx).unwrap();
    assert!(out.success && out.gas_used == 21_000, "{out:?}");
    let r = row(&rows);
    assert_eq!((r.before, r.after), (U256::from(1_000), U256::from(1_200)));
    assert_eq!((r.nonce_before, r.nonce_after), (Some(5), Some(6)));
    // Value beyond balance + mint: a failed deposit, all gas used, the mint kept.
    let mut db = snap.db();
    let tx = deposit(Some(500), 5_000, false);
    let (rows, out) = trace_access(&mut db, &env(Some(OpFork::Regolith)), &tx).unwrap();
    assert!(!out.success && out.gas_used == 100_000, "{out:?}");
    let r = row(&rows);
    assert_eq!((r.before, r.after), (U256::from(1_000), U256::from(1_500)));
    assert_eq!(r.nonce_after, Some(6));
}

/// From Karst (Osaka's EIP-7825 on L2) a user transaction's gas limit is capped at 2^24, but a
/// deposit's is not: op-revm validates no deposit's environment (`handler.rs` `validate_env`).
/// A 20M-gas deposit runs and uses what it ran (Regolith's rule), its mint and nonce as ever.
#[test]
fn a_deposit_over_osakas_gas_cap_runs_under_karst() {
    let snap = world(0, "00");
    let mut tx = deposit(Some(1000), 400, false);
    tx.env.gas_limit = 20_000_000;
    let mut info = block(1, Some(7));
    info.coinbase = COINBASE;
    info.gas_limit = 60_000_000;
    let mut env = EvmEnv::new(SpecId::OSAKA, 10, &info);
    env.op = Some(OpRules::up_to(OpFork::Karst));
    let mut db = snap.db();
    let out = apply(&mut db, &env, &tx).unwrap();
    assert!(out.success, "{out:?}");
    assert_eq!(out.gas_used, 21_000);
    let d = diff(&snap, &env, &tx);
    let from = FROM.to_string().to_lowercase();
    assert_eq!(d["post"][&from], json!({"balance": "0x258", "nonce": 6}));
}

/// op-geth's `preCheck` returns before the sender-is-an-EOA check for a deposit ("no need to
/// check if EOA (L1 already verified it for us)"): a deposit from an account with code (an L1
/// contract's aliased address that holds code on L2) runs and moves its value, where a user
/// transaction from it is refused (EIP-3607).
#[test]
fn a_deposit_from_an_account_with_code_runs() {
    let mut snap = world(0, "00");
    snap.insert_account(FROM, account(0, 5, "6000"));
    let tx = deposit(Some(1000), 400, false);
    let env = env(Some(OpFork::Isthmus));
    let mut db = snap.db();
    let out = apply(&mut db, &env, &tx).unwrap();
    assert!(out.success, "{out:?}");
    assert_eq!(out.gas_used, 21_000);
    let d = diff(&snap, &env, &tx);
    let (from, target) = (
        FROM.to_string().to_lowercase(),
        TARGET.to_string().to_lowercase(),
    );
    assert_eq!(d["post"][&from], json!({"balance": "0x258", "nonce": 6}));
    assert_eq!(d["post"][&target], json!({"balance": "0x190"}));
}
