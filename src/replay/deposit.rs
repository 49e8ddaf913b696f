//! OP-stack deposit transactions in the replay, as op-geth's `core/state_transition.go` runs
//! them (`TransitionDb`, `preCheck`, `innerTransitionDb`):
//!
//! - `mint` is credited to `from` before anything else and is kept whatever follows (op-geth
//!   mints before its snapshot): here it is committed to the database before revm runs;
//! - no gas is bought and no fee paid, the coinbase gets nothing: revm runs the deposit as a
//!   legacy message at gas price 0 with the base-fee check off (`ReplayTx::from_deposit`);
//! - the nonce is not checked, but a call bumps it (revm does, with its nonce check off);
//! - gas used: before Regolith the whole gas limit (a system transaction: 0); from Regolith
//!   what the run used, refunds applied (at price 0 no wei moves);
//! - a deposit that cannot run (too little gas for its intrinsic cost, value beyond the
//!   balance, a system transaction from Regolith on) still counts: every change after the mint
//!   undone, the nonce bumped, the whole gas limit used (a pre-Regolith system transaction:
//!   0), and op-geth's tracers see one STOP frame (`failed deposit transaction`).
//!
//! Which fork applies comes from `EvmEnv::op`; none (a chain that is not an OP stack, such as
//! op-geth's own tracer fixtures, whose configs declare no OP stack) is before Regolith.

use std::borrow::Cow;

use revm::context::result::{EVMError, InvalidTransaction};
use revm::context::CfgEnv;
use revm::state::{Account, EvmState};
use revm::DatabaseCommit;

use super::{EvmEnv, ReplayTx, TxOutcome};
use crate::chain::op::{OpFork, OpRules};
use crate::source::ReplayDb;

fn regolith(env: &EvmEnv) -> bool {
    env.op.unwrap_or(OpRules::none()).is(OpFork::Regolith)
}

/// The configuration revm runs `tx` under: a deposit's nonce is not checked, its zero gas
/// price is allowed under any base fee, its sender may hold code (op-geth's `preCheck` returns
/// before EIP-3607's check: "no need to check if EOA (L1 already verified it for us)"), and
/// from Karst (Osaka's EIP-7825) its gas limit is not capped — op-revm validates no deposit's
/// environment (`handler.rs` `validate_env`: "they are pre-verified on L1").
pub(crate) fn cfg<'e>(env: &'e EvmEnv, tx: &ReplayTx) -> Cow<'e, CfgEnv> {
    if tx.deposit.is_none() {
        return Cow::Borrowed(&env.cfg);
    }
    let mut cfg = env.cfg.clone();
    cfg.disable_nonce_check = true;
    cfg.disable_base_fee = true;
    cfg.disable_eip3607 = true;
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    Cow::Owned(cfg)
}

/// The account `address` as the database holds it now, touched, for a state change.
fn account(db: &mut ReplayDb<'_>, address: alloy_primitives::Address) -> Account {
    let info = revm::Database::basic(db, address)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut a = Account::from(info);
    a.mark_touch();
    a
}

/// Before a deposit runs: its mint credited to `from` and committed, so that neither a
/// failure nor a revert takes it back. Nothing for any other transaction.
pub(crate) fn mint(db: &mut ReplayDb<'_>, tx: &ReplayTx) {
    let Some(mint) = tx.deposit.and_then(|d| d.mint) else {
        return;
    };
    let mut a = account(db, tx.sender);
    a.info.balance = a.info.balance.saturating_add(mint);
    db.commit(std::iter::once((tx.sender, a)).collect());
}

/// From Regolith a system transaction is refused before it runs
/// (`ErrSystemTxNotSupported`), which makes it a failed deposit.
pub(crate) fn refused_before_run(env: &EvmEnv, tx: &ReplayTx) -> bool {
    tx.deposit.is_some_and(|d| d.is_system_tx) && regolith(env)
}

/// Whether revm's refusal of `tx` makes it a failed deposit rather than an error: any reason a
/// transaction is invalid but the block's gas limit (op-geth's `ErrGasLimitReached`, which
/// fails the block).
pub(crate) fn fails<E>(tx: &ReplayTx, e: &EVMError<E>) -> bool {
    tx.deposit.is_some()
        && matches!(e, EVMError::Transaction(t)
            if !matches!(t, InvalidTransaction::CallerGasLimitMoreThanBlock))
}

/// The gas a deposit's receipt reports, from what revm counted (`ran`, refunds applied).
pub(crate) fn gas_used(env: &EvmEnv, tx: &ReplayTx, ran: u64) -> u64 {
    match tx.deposit {
        None => ran,
        Some(_) if regolith(env) => ran,
        Some(d) if d.is_system_tx => 0,
        Some(_) => tx.env.gas_limit,
    }
}

/// A deposit that failed before it ran: how it ended and its state change (after the mint,
/// already committed: the nonce of `from` bumped), not yet committed.
pub(crate) fn failed(db: &mut ReplayDb<'_>, env: &EvmEnv, tx: &ReplayTx) -> (TxOutcome, EvmState) {
    let mut a = account(db, tx.sender);
    a.info.nonce = a.info.nonce.saturating_add(1);
    let system_before_regolith = tx.deposit.is_some_and(|d| d.is_system_tx) && !regolith(env);
    let outcome = TxOutcome {
        success: false,
        gas_used: if system_before_regolith {
            0
        } else {
            tx.env.gas_limit
        },
        logs: Vec::new(),
        output: Default::default(),
        halt: Some("failed deposit".to_string()),
        op_fee: None,
        deposit: tx.deposit.map(|d| (tx.sender, d)),
    };
    (outcome, std::iter::once((tx.sender, a)).collect())
}

/// What revm's run of `tx` gave: its result, `None` for a deposit that failed before it ran
/// (`run` is `None` when it was refused before revm saw it), or the error that ends the replay.
pub(crate) fn ran<T, E: std::fmt::Display>(
    tx: &ReplayTx,
    run: Option<Result<T, revm::context::result::EVMError<E>>>,
) -> Result<Option<T>, super::ReplayError> {
    match run {
        None => Ok(None),
        Some(Ok(out)) => Ok(Some(out)),
        Some(Err(e)) if fails(tx, &e) => Ok(None),
        Some(Err(e)) => Err(super::invalid(tx, e)),
    }
}
