//! A transaction's chain rules around revm's mainnet run: one object, [`TxRules`], with one
//! hook per phase (DESIGN rule 17) — [`TxRules::before`] (a deposit's mint and environment;
//! an OP user transaction's L1 data fee and operator fee bought with its gas), revm's run, and
//! [`TxRules::after`] (a deposit refused or failed, a deposit's gas used, the OP fees settled
//! into the vaults, then the chain's own settlement: chains 1329/1328's unburned base fee and
//! the splice's post-state, `super::settle`). `apply`, `trace` and the access inspector call
//! the two hooks and nothing else of these rules.
//!
//! ## Deposits
//!
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
//!
//! ## Fees
//!
//! What a user transaction pays on an OP-stack chain beyond Ethereum's gas, as op-geth's
//! `core/state_transition.go` charges it, around revm's mainnet run:
//!
//! - `buyGas`: the L1 data fee of the transaction's encoding and (from Isthmus) the operator fee
//!   of its gas limit are taken from the sender with the gas, and the sender must hold them on
//!   top of `gasLimit × gasFeeCap + value`. Here they are taken from the sender in the database
//!   before revm runs: revm's own balance check of `gasLimit × gasFeeCap + value` on what is
//!   left is then op-geth's check of the sum, and the transaction sees the same balance;
//! - after execution: the unused part of the operator fee goes back to the sender
//!   (`refundIsthmusOperatorCost`), the base fee of the gas used goes to the BaseFeeVault
//!   instead of being burned, the L1 data fee to the L1FeeVault, the operator fee of the gas
//!   used to the OperatorFeeVault; the tip goes to the coinbase, which revm pays.
//!
//! This reproduces op-geth's balances without changing revm's executor type (op-revm would);
//! the L1 parameters are read from the L1Block predeploy in the replay's own state, which the
//! block's first (L1 attributes) deposit wrote when the block is replayed in order.
//! Deposits pay none of it, and neither do simulated calls (op-geth's `eth_call` skips the
//! L1 cost: `SkipNonceChecks`), which have no encoding.

use std::borrow::Cow;

use alloy_primitives::{Address, U256};
use revm::context::result::{EVMError, InvalidTransaction, ResultAndState};
use revm::context::CfgEnv;
use revm::database::AccountState;
use revm::state::{Account, EvmState};
use revm::DatabaseCommit;

use super::{EvmEnv, ReplayError, ReplayTx, TxOutcome};
use crate::chain::op::{
    l1_cost, operator_fee, L1BlockInfo, L1Cost, OpFork, OpRules, BASE_FEE_VAULT, L1_BLOCK,
    L1_FEE_VAULT, OPERATOR_FEE_VAULT,
};
use crate::source::ReplayDb;

// Deposits (op-geth's `TransitionDb` for a deposit).

fn regolith(env: &EvmEnv) -> bool {
    env.op.unwrap_or(OpRules::none()).is(OpFork::Regolith)
}

/// The configuration revm runs `tx` under: a deposit's nonce is not checked, its zero gas
/// price is allowed under any base fee, its sender may hold code (op-geth's `preCheck` returns
/// before EIP-3607's check: "no need to check if EOA (L1 already verified it for us)"), and
/// from Karst (Osaka's EIP-7825) its gas limit is not capped — op-revm validates no deposit's
/// environment (`handler.rs` `validate_env`: "they are pre-verified on L1").
fn cfg<'e>(env: &'e EvmEnv, tx: &ReplayTx) -> Cow<'e, CfgEnv> {
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

/// Before a deposit runs: its mint credited to `from` and committed, so that neither a
/// failure nor a revert takes it back. Nothing for any other transaction.
fn mint(db: &mut ReplayDb<'_>, tx: &ReplayTx) {
    let Some(mint) = tx.deposit.and_then(|d| d.mint) else {
        return;
    };
    let mut a = touched(db, tx.sender);
    a.info.balance = a.info.balance.saturating_add(mint);
    db.commit(std::iter::once((tx.sender, a)).collect());
}

/// From Regolith a system transaction is refused before it runs
/// (`ErrSystemTxNotSupported`), which makes it a failed deposit.
fn refused_before_run(env: &EvmEnv, tx: &ReplayTx) -> bool {
    tx.deposit.is_some_and(|d| d.is_system_tx) && regolith(env)
}

/// Whether revm's refusal of `tx` makes it a failed deposit rather than an error: any reason a
/// transaction is invalid but the block's gas limit (op-geth's `ErrGasLimitReached`, which
/// fails the block).
fn fails<E>(tx: &ReplayTx, e: &EVMError<E>) -> bool {
    tx.deposit.is_some()
        && matches!(e, EVMError::Transaction(t)
            if !matches!(t, InvalidTransaction::CallerGasLimitMoreThanBlock))
}

/// The gas a deposit's receipt reports, from what revm counted (`ran`, refunds applied).
fn gas_used(env: &EvmEnv, tx: &ReplayTx, ran: u64) -> u64 {
    match tx.deposit {
        None => ran,
        Some(_) if regolith(env) => ran,
        Some(d) if d.is_system_tx => 0,
        Some(_) => tx.env.gas_limit,
    }
}

/// A deposit that failed before it ran: how it ended and its state change (after the mint,
/// already committed: the nonce of `from` bumped), not yet committed.
fn failed(db: &mut ReplayDb<'_>, env: &EvmEnv, tx: &ReplayTx) -> Settled {
    let mut a = touched(db, tx.sender);
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
    Settled::FailedDeposit(std::iter::once((tx.sender, a)).collect(), outcome)
}

// Fees (op-geth's `buyGas` and the vaults' credits).

/// What a user transaction was charged beyond its gas, and the parameters it was priced with
/// (the receipt's OP fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpFee {
    pub rules: OpRules,
    pub info: L1BlockInfo,
    /// The L1 data fee and L1 gas (`None`: no cost data, nothing charged).
    pub l1: Option<L1Cost>,
    /// The operator fee of the gas limit, taken upfront.
    pub operator_upfront: U256,
    /// What the transaction paid in the end, split as the chain pays it out (zero until it
    /// ran: [`after`]).
    pub cost: OpCost,
}

/// What an OP-stack user transaction paid, by where it went (op-geth's `state_transition.go`:
/// the base fee is not burned but credited to the BaseFeeVault).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCost {
    /// `gasUsed × base fee`, to the BaseFeeVault.
    pub base: U256,
    /// `gasUsed × (effective gas price − base fee)`, to the coinbase (the SequencerFeeVault).
    pub priority: U256,
    /// The L1 data fee, to the L1FeeVault.
    pub l1: U256,
    /// The operator fee of the gas used (what was taken upfront less its refund), to the
    /// OperatorFeeVault.
    pub operator: U256,
}

impl OpCost {
    /// L2 execution: base fee and priority fee.
    pub fn execution(&self) -> U256 {
        self.base + self.priority
    }

    /// Everything the sender paid.
    pub fn total(&self) -> U256 {
        self.execution() + self.l1 + self.operator
    }
}

/// The account `address` as the database holds it now, touched, for a state change.
fn touched(db: &mut ReplayDb<'_>, address: Address) -> Account {
    let info = revm::Database::basic(db, address)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut a = Account::from(info);
    a.mark_touch();
    a
}

/// Before a user transaction on an OP chain runs: prices it from the L1Block predeploy in
/// `db`, checks the sender holds the fees, and takes them from it (committed). `None` when no
/// OP rules apply, for deposits and for simulated calls.
pub(crate) fn buy(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
) -> Result<Option<OpFee>, ReplayError> {
    let Some(rules) = env.op.filter(|r| r.is(OpFork::Bedrock)) else {
        return Ok(None);
    };
    if tx.deposit.is_some() || tx.raw.is_empty() {
        return Ok(None);
    }
    // Read from the state before every user transaction, not kept for the block: only the L1
    // attributes deposit that opens a block writes these slots, so after it they are
    // op-geth's once-per-block values (`NewL1CostFunc`), and the state itself says when a
    // hook (state overrides) changed them.
    let info = L1BlockInfo::from_storage(rules, l1_block_slots(db));
    let l1 = l1_cost(&info, rules, &tx.rollup.of(&tx.raw));
    let operator_upfront = operator_fee(&info, rules, tx.env.gas_limit);
    let upfront = l1.map_or(U256::ZERO, |c| c.fee) + operator_upfront;
    // The sender as the state holds it, loaded into the cache (the database cannot fail).
    let Ok(sender) = db.load_account(tx.sender);
    let balance = match sender.account_state {
        AccountState::NotExisting => U256::ZERO,
        _ => sender.info.balance,
    };
    let Some(left) = balance.checked_sub(upfront) else {
        return Err(ReplayError::Invalid {
            tx: tx.hash,
            msg: format!(
                "insufficient funds for the L1 data fee and operator fee: address {} have {} \
                 want {upfront} beyond gas and value",
                tx.sender, balance
            ),
        });
    };
    // Lowering the balance in the cache is what a commit would do, without a commit's work:
    // the sender holds the fees, so it exists (an account the state lacks has nothing).
    sender.info.balance = left;
    Ok(Some(OpFee {
        rules,
        info,
        l1,
        operator_upfront,
        cost: OpCost::default(),
    }))
}

/// The L1Block predeploy's slots as the replay's state holds them now, through the cache (what
/// earlier transactions wrote), a miss recorded as any read: `CacheDB::storage_ref`'s answers,
/// the account looked up once for all the slots.
fn l1_block_slots<'d>(db: &'d ReplayDb<'_>) -> impl Fn(U256) -> U256 + 'd {
    let cached = db.cache.accounts.get(&L1_BLOCK);
    move |slot| {
        if let Some(a) = cached {
            if let Some(v) = a.storage.get(&slot) {
                return *v;
            }
            if matches!(
                a.account_state,
                AccountState::StorageCleared | AccountState::NotExisting
            ) {
                return U256::ZERO;
            }
        }
        revm::DatabaseRef::storage_ref(&db.db, L1_BLOCK, slot).unwrap_or_default()
    }
}

/// Where [`settle`] credits the vaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vaults {
    /// In the transaction's state, which some tracers read after the run, with the database
    /// (Parity's stateDiff shows the vaults credited; the prestate and JavaScript tracers
    /// read accounts' values before and after).
    InState,
    /// Straight in the database's cache where the vault is cached and the transaction did
    /// not touch it (an untraced run, or one whose tracer reads neither the state nor the
    /// database for its result): what committing it would leave there, without the state
    /// entry, the account copy and the commit's work. Elsewhere in the state.
    InCache,
}

impl Vaults {
    /// Where to credit the vaults when `tracer` runs: in the state when the tracer's result
    /// reads the state or the database after the run (`finish` in `mod.rs`: the prestate
    /// tracer, Parity's stateDiff, JavaScript's `db`; a mux's children each), else in the cache.
    pub(crate) fn of(tracer: &crate::trace::Tracer) -> Vaults {
        use crate::trace::Tracer;
        let reads = |t: &Tracer| Vaults::of(t) == Vaults::InState;
        match tracer {
            Tracer::Prestate(_) | Tracer::Parity(_) => Vaults::InState,
            #[cfg(feature = "js")]
            Tracer::Js(_) => Vaults::InState,
            Tracer::Mux(m) if m.children.iter().any(|(_, c)| reads(c)) => Vaults::InState,
            _ => Vaults::InCache,
        }
    }
}

fn credit(
    state: &mut EvmState,
    db: &mut ReplayDb<'_>,
    address: Address,
    amount: U256,
    vaults: Vaults,
) {
    if amount.is_zero() {
        return;
    }
    // One lookup where the transaction touched the account (its sender, always).
    if let Some(a) = state.get_mut(&address) {
        a.mark_touch();
        a.info.balance = a.info.balance.saturating_add(amount);
        return;
    }
    if vaults == Vaults::InCache {
        if let Some(cached) = db.cache.accounts.get_mut(&address) {
            // `CacheDB::commit` of a touched account that was neither created nor destroyed:
            // its info replaced (only the balance differs), its state `Touched` unless its
            // storage was cleared. An account not in the state, or not existing, is committed.
            match cached.account_state {
                AccountState::NotExisting => {}
                AccountState::StorageCleared => {
                    cached.info.balance = cached.info.balance.saturating_add(amount);
                    return;
                }
                _ => {
                    cached.info.balance = cached.info.balance.saturating_add(amount);
                    cached.account_state = AccountState::Touched;
                    return;
                }
            }
        }
    }
    let a = state.entry(address).or_insert_with(|| touched(db, address));
    a.mark_touch();
    a.info.balance = a.info.balance.saturating_add(amount);
}

/// After the run, in its not yet committed `state`: the operator fee's unused part back to
/// the sender, the base fee of `gas_used` to the BaseFeeVault, the L1 data fee to the
/// L1FeeVault, the operator fee of `gas_used` to the OperatorFeeVault. Returns what was paid,
/// by where it went.
pub(crate) fn settle(
    state: &mut EvmState,
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    fee: &OpFee,
    gas_used: u64,
    vaults: Vaults,
) -> OpCost {
    // `operator_fee_refund`: the fee of the gas limit (taken upfront) less that of the gas used.
    let operator = operator_fee(&fee.info, fee.rules, gas_used);
    let refund = fee.operator_upfront.saturating_sub(operator);
    credit(state, db, tx.sender, refund, vaults);
    let basefee = env.block.basefee as u128;
    let tip = revm::context_interface::Transaction::effective_gas_price(&tx.env, basefee)
        .saturating_sub(basefee);
    let cost = OpCost {
        base: U256::from(gas_used) * U256::from(basefee),
        priority: U256::from(gas_used) * U256::from(tip),
        l1: fee.l1.map_or(U256::ZERO, |c| c.fee),
        operator,
    };
    for (vault, amount) in [
        (BASE_FEE_VAULT, cost.base),
        (L1_FEE_VAULT, cost.l1),
        (OPERATOR_FEE_VAULT, cost.operator),
    ] {
        // Nothing will read a balance no one knows (`EvmEnv::skip_unknown_vaults`): leaving it
        // uncredited keeps the replay from reading it.
        let unknown = env.skip_unknown_vaults
            && !state.contains_key(&vault)
            && !db.cache.accounts.contains_key(&vault)
            && !db.db.accounts.contains_key(&vault);
        if !unknown {
            credit(state, db, vault, amount, vaults);
        }
    }
    cost
}

/// A transaction's chain rules, between its two hooks: what revm runs it under, and what was
/// bought before it ran.
pub(crate) struct TxRules<'e> {
    env: &'e EvmEnv,
    cfg: Cow<'e, CfgEnv>,
    fee: Option<OpFee>,
    /// A deposit refused before it runs (a failed deposit): revm is not to run it.
    pub refused: bool,
}

/// How a transaction ended once its chain's rules acted after it, its state not yet
/// committed.
pub(crate) enum Settled {
    /// revm ran it: its result, and the state with the fees settled.
    Ran(ResultAndState, TxOutcome),
    /// A deposit that failed before it ran: the sender's nonce bumped, all else undone (op-geth's
    /// tracers see one STOP frame).
    FailedDeposit(EvmState, TxOutcome),
}

impl Settled {
    /// The state to commit, and how the transaction ended.
    pub(crate) fn into_state(self) -> (EvmState, TxOutcome) {
        match self {
            Settled::Ran(out, o) => (out.state, o),
            Settled::FailedDeposit(state, o) => (state, o),
        }
    }
}

impl<'e> TxRules<'e> {
    /// Before `tx` runs: a deposit's mint credited and committed, so that neither a failure
    /// nor a revert takes it back; an OP user transaction's fees taken from its sender
    /// ([`buy`]); the configuration revm runs it under.
    pub(crate) fn before(
        db: &mut ReplayDb<'_>,
        env: &'e EvmEnv,
        tx: &ReplayTx,
    ) -> Result<TxRules<'e>, ReplayError> {
        mint(db, tx);
        Ok(TxRules {
            env,
            cfg: cfg(env, tx),
            fee: buy(db, env, tx)?,
            refused: refused_before_run(env, tx),
        })
    }

    /// The configuration revm runs the transaction under.
    pub(crate) fn cfg(&self) -> CfgEnv {
        self.cfg.as_ref().clone()
    }

    /// After revm's `run` of `tx` (`None`: not run, [`TxRules::refused`]): a deposit that
    /// failed (refused before it ran, or invalid to revm), else its gas used, the OP fees
    /// settled ([`settle`]), then the chain's own settlement (`super::settle`), all in the
    /// state, not yet committed (with [`Vaults::InCache`], the vaults the transaction did not
    /// touch credited in `db`'s cache instead). An invalid transaction that is not a deposit
    /// ends the replay.
    pub(crate) fn after<E: std::fmt::Display>(
        self,
        run: Option<Result<ResultAndState, EVMError<E>>>,
        db: &mut ReplayDb<'_>,
        tx: &ReplayTx,
        vaults: Vaults,
    ) -> Result<Settled, ReplayError> {
        let env = self.env;
        let mut out = match run {
            None => return Ok(failed(db, env, tx)),
            Some(Ok(out)) => out,
            Some(Err(e)) if fails(tx, &e) => return Ok(failed(db, env, tx)),
            Some(Err(e)) => return Err(super::invalid(tx, e)),
        };
        let (result, state) = (&out.result, &mut out.state);
        let mut outcome = TxOutcome::from_result(result);
        outcome.gas_used = gas_used(env, tx, outcome.gas_used);
        let mut fee = self.fee;
        if let Some(f) = &mut fee {
            // A spliced run compares the whole state with the node's post-state (`super::settle`).
            let vaults = if env.splice.is_some() {
                Vaults::InState
            } else {
                vaults
            };
            f.cost = settle(state, db, env, tx, f, outcome.gas_used, vaults);
        }
        super::settle(state, db, env, tx, outcome.gas_used);
        outcome.op_fee = fee;
        outcome.deposit = tx.deposit.map(|d| (tx.sender, d));
        Ok(Settled::Ran(out, outcome))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{AccountData, StateSnapshot};
    use revm::database::DbAccount;
    use revm::DatabaseRef;

    /// `l1_block_slots` answers what `CacheDB::storage_ref` does, and records the same misses,
    /// however the cache holds the L1Block predeploy: not at all, written, loaded as missing,
    /// its storage cleared.
    #[test]
    fn l1_block_slots_read_as_the_cache_does() {
        for complete in [true, false] {
            let mut snap = if complete {
                StateSnapshot::complete()
            } else {
                StateSnapshot::partial()
            };
            snap.insert_account(L1_BLOCK, AccountData::default());
            for s in 0..6u64 {
                snap.insert_slot(L1_BLOCK, U256::from(s), U256::from(100 + s));
            }
            let states = [
                None,
                Some(AccountState::Touched),
                Some(AccountState::None),
                Some(AccountState::NotExisting),
                Some(AccountState::StorageCleared),
            ];
            for state in states {
                let mut db = snap.db();
                if let Some(account_state) = state.clone() {
                    let mut a = DbAccount {
                        account_state,
                        ..DbAccount::default()
                    };
                    a.storage.insert(U256::from(2), U256::from(7));
                    a.storage.insert(U256::from(8), U256::from(9));
                    db.cache.accounts.insert(L1_BLOCK, a);
                }
                for s in 0..10u64 {
                    let slot = U256::from(s);
                    let ours = l1_block_slots(&db)(slot);
                    let ours_missed = snap.take_misses();
                    let cache = db.storage_ref(L1_BLOCK, slot).unwrap();
                    assert_eq!(ours, cache, "{state:?} slot {s}");
                    assert_eq!(ours_missed, snap.take_misses(), "{state:?} slot {s}");
                }
            }
        }
    }
}
