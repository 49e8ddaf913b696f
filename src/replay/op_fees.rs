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

use alloy_primitives::{Address, U256};
use revm::database::AccountState;
use revm::state::{Account, EvmState};

use super::{EvmEnv, ReplayError, ReplayTx};
use crate::chain::op::{
    l1_cost, operator_fee, L1BlockInfo, L1Cost, OpFork, OpRules, BASE_FEE_VAULT, L1_BLOCK,
    L1_FEE_VAULT, OPERATOR_FEE_VAULT,
};
use crate::source::ReplayDb;

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
    let info = match env.op_l1.get() {
        Some(info) => info.clone(),
        None => {
            let info = L1BlockInfo::from_storage(rules, l1_block_slots(db));
            if !db.db.has_misses() {
                env.op_l1.keep(&info);
            }
            info
        }
    };
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
        // Nothing will read a balance no one knows (`EvmEnv::op_vaults_unread`): leaving it
        // uncredited keeps the replay from reading it.
        let unknown = env.op_vaults_unread
            && !state.contains_key(&vault)
            && !db.cache.accounts.contains_key(&vault)
            && !db.db.accounts.contains_key(&vault);
        if !unknown {
            credit(state, db, vault, amount, vaults);
        }
    }
    cost
}

/// What revm needs besides the state to run `tx`, once the chain's rules have acted before it:
/// a deposit's mint committed, an OP user transaction's fees taken ([`buy`]).
pub(crate) struct Before<'e> {
    pub cfg: std::borrow::Cow<'e, revm::context::CfgEnv>,
    pub fee: Option<OpFee>,
    /// A deposit refused before it runs (a failed deposit).
    pub refused: bool,
}

pub(crate) fn before<'e>(
    db: &mut ReplayDb<'_>,
    env: &'e EvmEnv,
    tx: &ReplayTx,
) -> Result<Before<'e>, ReplayError> {
    super::deposit::mint(db, tx);
    Ok(Before {
        cfg: super::deposit::cfg(env, tx),
        fee: buy(db, env, tx)?,
        refused: super::deposit::refused_before_run(env, tx),
    })
}

/// How `tx` ended once the chain's rules have acted after it: a deposit's gas used, the OP
/// fees settled ([`settle`]), then the chain's own fee rules and the splice's post-state
/// (`super::settle`), all in `out`'s state, not yet committed (with [`Vaults::InCache`], the vaults
/// the transaction did not touch credited in `db`'s cache instead).
pub(crate) fn after(
    out: &mut revm::context::result::ResultAndState,
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    mut fee: Option<OpFee>,
    vaults: Vaults,
) -> super::TxOutcome {
    let (result, state) = (&out.result, &mut out.state);
    let mut outcome = super::TxOutcome::from_result(result);
    outcome.gas_used = super::deposit::gas_used(env, tx, outcome.gas_used);
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
    outcome
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
