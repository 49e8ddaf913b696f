//! State reads for tracers (a JS tracer's `db`, geth's gas rules for a failed step): the state as
//! the transaction has left it so far, or as it was before the current opcode, without touching
//! revm's journal.
//!
//! geth's `db` reads its StateDB, which already holds the writes made earlier in the same
//! transaction. revm keeps those in the journal's account map; the database underneath holds
//! the pre-transaction state. So a read looks in the map first and falls back to the database,
//! and never loads through the journal, which would warm accounts and change gas.

use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY, U256};
use revm::context::journal::{JournalEntry, JournalInner};
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::state::EvmState;
use revm::Database;

/// The revm context every tracer inspects: mainnet environment over a database `DB`.
pub type Ctx<DB> = Context<BlockEnv, TxEnv, CfgEnv, DB, Journal<DB>, ()>;

/// What `db` can ask.
pub trait StateReader {
    fn balance(&mut self, a: Address) -> U256;
    fn nonce(&mut self, a: Address) -> u64;
    fn code(&mut self, a: Address) -> Bytes;
    fn storage(&mut self, a: Address, slot: U256) -> U256;
    fn exists(&mut self, a: Address) -> bool;
    /// Whether `a` exists leaving aside a touch (a transfer to it) in the current opcode.
    fn exists_untouched(&mut self, a: Address) -> bool {
        self.exists(a)
    }
}

/// The journal's accounts over the database.
pub struct StateView<'a, DB> {
    pub state: &'a EvmState,
    pub db: &'a mut DB,
}

impl<DB: Database> StateView<'_, DB> {
    fn code_of_hash(&mut self, hash: B256) -> Bytes {
        if hash == KECCAK256_EMPTY || hash == B256::ZERO {
            return Bytes::new();
        }
        self.db
            .code_by_hash(hash)
            .map(|c| c.original_bytes())
            .unwrap_or_default()
    }
}

impl<DB: Database> StateReader for StateView<'_, DB> {
    fn balance(&mut self, a: Address) -> U256 {
        match self.state.get(&a) {
            Some(acc) => acc.info.balance,
            None => self
                .db
                .basic(a)
                .ok()
                .flatten()
                .map(|i| i.balance)
                .unwrap_or_default(),
        }
    }

    fn nonce(&mut self, a: Address) -> u64 {
        match self.state.get(&a) {
            Some(acc) => acc.info.nonce,
            None => self
                .db
                .basic(a)
                .ok()
                .flatten()
                .map(|i| i.nonce)
                .unwrap_or_default(),
        }
    }

    fn code(&mut self, a: Address) -> Bytes {
        let info = match self.state.get(&a) {
            Some(acc) => Some(acc.info.clone()),
            None => self.db.basic(a).ok().flatten(),
        };
        let Some(info) = info else {
            return Bytes::new();
        };
        match &info.code {
            Some(c) => c.original_bytes(),
            None => self.code_of_hash(info.code_hash),
        }
    }

    fn storage(&mut self, a: Address, slot: U256) -> U256 {
        if let Some(acc) = self.state.get(&a) {
            if let Some(s) = acc.storage.get(&slot) {
                return s.present_value;
            }
            // An account created in this transaction starts with empty storage.
            if acc.is_created() {
                return U256::ZERO;
            }
        }
        self.db.storage(a, slot).unwrap_or_default()
    }

    fn exists(&mut self, a: Address) -> bool {
        match self.state.get(&a) {
            Some(acc) => !acc.is_loaded_as_not_existing() || acc.is_touched(),
            None => self.db.basic(a).ok().flatten().is_some(),
        }
    }

    fn exists_untouched(&mut self, a: Address) -> bool {
        match self.state.get(&a) {
            Some(acc) => !acc.is_loaded_as_not_existing(),
            None => self.db.basic(a).ok().flatten().is_some(),
        }
    }
}

/// What one opcode changed, as it was before: built from the journal entries revm pushed while
/// the opcode ran, so `step` and `fault` (delivered after the opcode) see the state geth shows,
/// the one before it. Each entry is undone the way revm's own revert undoes it, newest first.
#[derive(Default)]
pub struct Undo {
    accounts: Vec<(Address, AccountUndo)>,
    slots: Vec<(Address, U256, U256)>,
    /// Accounts and slots the opcode warmed (EIP-2929): cold before it.
    warmed: Vec<(Address, Option<U256>)>,
}

#[derive(Default, Clone)]
struct AccountUndo {
    balance: Option<U256>,
    nonce: Option<u64>,
    /// The opcode touched the account (a transfer to it): before, it was untouched.
    untouched: bool,
    /// The opcode created the account: before, it did not exist as a contract.
    uncreated: bool,
    /// The opcode set its code: the code before.
    code: Option<Bytes>,
}

impl Undo {
    pub fn clear(&mut self) {
        self.accounts.clear();
        self.slots.clear();
        self.warmed.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty() && self.slots.is_empty() && self.warmed.is_empty()
    }

    fn warmed(&self, a: Address, slot: Option<U256>) -> bool {
        self.warmed.contains(&(a, slot))
    }

    fn account(&self, a: Address) -> Option<&AccountUndo> {
        self.accounts.iter().find(|(x, _)| *x == a).map(|(_, u)| u)
    }

    fn account_mut(&mut self, a: Address) -> &mut AccountUndo {
        let i = match self.accounts.iter().position(|(x, _)| *x == a) {
            Some(i) => i,
            None => {
                self.accounts.push((a, AccountUndo::default()));
                self.accounts.len() - 1
            }
        };
        &mut self.accounts[i].1
    }

    /// Undoes `entries` (the opcode's, oldest first) over `live`, the state after the opcode.
    pub fn build(&mut self, entries: &[JournalEntry], live: &mut dyn StateReader) {
        self.clear();
        for e in entries.iter().rev() {
            match e {
                JournalEntry::AccountDestroyed {
                    address,
                    target,
                    had_balance,
                    ..
                } => {
                    self.add_balance(live, *address, *had_balance, true);
                    if address != target {
                        self.add_balance(live, *target, *had_balance, false);
                    }
                }
                JournalEntry::BalanceChange {
                    old_balance,
                    address,
                } => self.account_mut(*address).balance = Some(*old_balance),
                JournalEntry::BalanceTransfer { balance, from, to } => {
                    self.add_balance(live, *from, *balance, true);
                    self.add_balance(live, *to, *balance, false);
                }
                JournalEntry::NonceChange {
                    address,
                    previous_nonce,
                } => self.account_mut(*address).nonce = Some(*previous_nonce),
                JournalEntry::NonceBump { address } => {
                    let n = self.nonce_now(live, *address).saturating_sub(1);
                    self.account_mut(*address).nonce = Some(n);
                }
                JournalEntry::AccountTouched { address } => {
                    self.account_mut(*address).untouched = true
                }
                JournalEntry::AccountCreated { address, .. } => {
                    let u = self.account_mut(*address);
                    u.uncreated = true;
                    u.nonce = Some(0);
                }
                JournalEntry::CodeChange {
                    address,
                    had_code_hash,
                    had_code,
                } => {
                    let before = match had_code {
                        Some(c) => c.original_bytes(),
                        None if *had_code_hash == KECCAK256_EMPTY => Bytes::new(),
                        // Not loaded before: the database still has it.
                        None => live.code(*address),
                    };
                    self.account_mut(*address).code = Some(before);
                }
                JournalEntry::StorageChanged {
                    key,
                    had_value,
                    address,
                } => match self
                    .slots
                    .iter_mut()
                    .find(|(a, k, _)| a == address && k == key)
                {
                    Some(s) => s.2 = *had_value,
                    None => self.slots.push((*address, *key, *had_value)),
                },
                JournalEntry::AccountWarmed { address } => self.warmed.push((*address, None)),
                JournalEntry::StorageWarmed { key, address } => {
                    self.warmed.push((*address, Some(*key)))
                }
                // Transient storage is invisible to `db` and to gas.
                _ => {}
            }
        }
    }

    fn add_balance(&mut self, live: &mut dyn StateReader, a: Address, v: U256, add: bool) {
        let now = match self.account(a).and_then(|u| u.balance) {
            Some(b) => b,
            None => live.balance(a),
        };
        let before = if add {
            now.wrapping_add(v)
        } else {
            now.wrapping_sub(v)
        };
        self.account_mut(a).balance = Some(before);
    }

    fn nonce_now(&self, live: &mut dyn StateReader, a: Address) -> u64 {
        match self.account(a).and_then(|u| u.nonce) {
            Some(n) => n,
            None => live.nonce(a),
        }
    }
}

/// A [`StateReader`] with an opcode's changes undone.
pub struct BeforeOpcode<'u, R> {
    pub live: R,
    pub undo: &'u Undo,
}

impl<R: StateReader> StateReader for BeforeOpcode<'_, R> {
    fn balance(&mut self, a: Address) -> U256 {
        match self.undo.account(a).and_then(|u| u.balance) {
            Some(b) => b,
            None => self.live.balance(a),
        }
    }

    fn nonce(&mut self, a: Address) -> u64 {
        match self.undo.account(a).and_then(|u| u.nonce) {
            Some(n) => n,
            None => self.live.nonce(a),
        }
    }

    fn code(&mut self, a: Address) -> Bytes {
        match self.undo.account(a).and_then(|u| u.code.clone()) {
            Some(c) => c,
            None => self.live.code(a),
        }
    }

    fn storage(&mut self, a: Address, slot: U256) -> U256 {
        if let Some((_, _, v)) = self
            .undo
            .slots
            .iter()
            .find(|(x, k, _)| *x == a && *k == slot)
        {
            return *v;
        }
        self.live.storage(a, slot)
    }

    fn exists(&mut self, a: Address) -> bool {
        match self.undo.account(a) {
            Some(u) if u.untouched || u.uncreated => self.live.exists_untouched(a),
            _ => self.live.exists(a),
        }
    }
}

/// The state before the current opcode as geth's gas functions read it (access list, committed
/// slot values), for the cost of a step that fails before it executes.
pub struct GasView<'a, DB> {
    pub journal: &'a JournalInner<JournalEntry>,
    pub before: BeforeOpcode<'a, StateView<'a, DB>>,
}

impl<DB: Database> crate::trace::failed_step::PreOpState for GasView<'_, DB> {
    fn account_warm(&mut self, a: Address) -> bool {
        if self.before.undo.warmed(a, None) {
            return false;
        }
        let j = self.journal;
        j.warm_addresses.is_warm(&a)
            || j.state
                .get(&a)
                .is_some_and(|acc| !acc.is_cold_transaction_id(j.transaction_id))
    }

    fn slot_warm(&mut self, a: Address, slot: U256) -> bool {
        if self.before.undo.warmed(a, Some(slot)) {
            return false;
        }
        let j = self.journal;
        j.warm_addresses.is_storage_warm(&a, &slot)
            || j.state
                .get(&a)
                .and_then(|acc| acc.storage.get(&slot))
                .is_some_and(|s| !s.is_cold_transaction_id(j.transaction_id))
    }

    fn slot(&mut self, a: Address, slot: U256) -> (U256, U256) {
        let current = self.before.storage(a, slot);
        let original = match self
            .journal
            .state
            .get(&a)
            .and_then(|acc| acc.storage.get(&slot))
        {
            Some(s) => s.original_value,
            None => self.before.live.db.storage(a, slot).unwrap_or_default(),
        };
        (current, original)
    }

    fn exists(&mut self, a: Address) -> bool {
        self.before.exists(a)
    }

    fn empty(&mut self, a: Address) -> bool {
        self.before.nonce(a) == 0
            && self.before.balance(a).is_zero()
            && self.before.code(a).is_empty()
    }

    fn balance(&mut self, a: Address) -> U256 {
        self.before.balance(a)
    }

    fn code(&mut self, a: Address) -> Bytes {
        self.before.code(a)
    }
}

/// geth's cost and error for an opcode revm stopped with a gas failure before it executed, read
/// from the state before it (the journal entries since `journal_at` undone);
/// see [`crate::trace::failed_step`].
pub fn price_failed_step<DB: Database>(
    o: &crate::trace::failed_step::FailedOp,
    journal: &mut revm::context::Journal<DB>,
    journal_at: usize,
    table: &revm::interpreter::GasTable,
) -> Option<(u64, String)> {
    let mut undo = Undo::default();
    let inner = &journal.inner;
    let mut live = StateView {
        state: &inner.state,
        db: &mut journal.database,
    };
    let entries = inner.journal.get(journal_at..).unwrap_or_default();
    undo.build(entries, &mut live);
    let mut view = GasView {
        journal: inner,
        before: BeforeOpcode { live, undo: &undo },
    };
    crate::trace::failed_step::out_of_gas_step(o, &mut view, table)
}

/// A step that failed before its opcode executed, as geth reports it: its cost and error.
/// Gas failures are priced with geth's rules ([`price_failed_step`]); stack failures cost the
/// constant gas. Falls back to revm's verdict (static cost, its error mapped to geth's text)
/// where geth's rules would not fail.
pub fn failed_step_report<DB: Database>(
    result: revm::interpreter::InstructionResult,
    last: crate::trace::errors::LastStep,
    o: &crate::trace::failed_step::FailedOp,
    journal: &mut revm::context::Journal<DB>,
    journal_at: usize,
) -> (u64, String) {
    use revm::interpreter::InstructionResult as R;
    let table = revm::interpreter::instructions::gas_table_spec(o.spec);
    let constant = crate::trace::failed_step::constant_gas(o.op, o.spec, &table);
    if !matches!(result, R::StackUnderflow | R::StackOverflow) {
        if let Some(found) = price_failed_step(o, journal, journal_at, &table) {
            return found;
        }
    }
    let error = crate::trace::errors::geth_error(result, last, false).unwrap_or_default();
    (constant, error)
}

/// An opcode before it runs, as far as pricing a failure found in `step_end` needs it. One per
/// tracer, refilled by every `step` that arms it.
///
/// Only a dynamic-gas opcode's price reads its stack inputs, the memory size and the state
/// before it; for every other opcode `step` notes the opcode and its gas, nothing more (a table
/// lookup), and a failure is priced from what `step_end` still sees.
#[derive(Clone, Default)]
pub struct PreOp {
    armed: bool,
    op: u8,
    gas: u64,
    /// The opcode has dynamic gas: the three fields below are its own.
    dynamic: bool,
    mem_len: usize,
    journal_at: usize,
    kept: crate::trace::failed_step::KeptStack,
}

impl PreOp {
    /// In `step`: keeps what the opcode about to run needs if it fails before executing.
    #[inline]
    pub fn capture<DB: Database>(
        &mut self,
        interp: &revm::interpreter::Interpreter,
        ctx: &Ctx<DB>,
    ) {
        use revm::interpreter::interpreter_types::Jumps;
        self.armed = true;
        self.op = interp.bytecode.opcode();
        self.gas = interp.gas.remaining();
        self.dynamic = crate::trace::failed_step::has_dynamic_gas(self.op);
        if self.dynamic {
            self.keep(interp, ctx);
        }
    }

    #[inline(never)]
    fn keep<DB: Database>(&mut self, interp: &revm::interpreter::Interpreter, ctx: &Ctx<DB>) {
        use revm::interpreter::interpreter_types::MemoryTr;
        self.kept.keep(self.op, interp.stack.data());
        self.mem_len = interp.memory.size();
        self.journal_at = ctx.journaled_state.inner.journal.len();
    }

    /// In `step`, for an opcode that needs nothing kept.
    pub fn disarm(&mut self) {
        self.armed = false;
    }

    /// In `step_end`: geth's cost and error when the opcode failed before executing.
    pub fn failure<DB: Database>(
        &mut self,
        interp: &mut revm::interpreter::Interpreter,
        ctx: &mut Ctx<DB>,
        last: crate::trace::errors::LastStep,
    ) -> Option<(u64, String)> {
        use revm::interpreter::interpreter_types::LoopControl;
        if !std::mem::take(&mut self.armed) {
            return None;
        }
        let result = match interp.bytecode.action() {
            Some(revm::interpreter::InterpreterAction::Return(r)) => r.result,
            _ => return None,
        };
        if !crate::trace::errors::fails_before_execution(result, self.op) {
            return None;
        }
        // Another opcode's failure reads neither its inputs nor the state; memory did not
        // change (the opcode did not run).
        let (stack, mem_len, journal_at) = if self.dynamic {
            (self.kept.items(), self.mem_len, self.journal_at)
        } else {
            use revm::interpreter::interpreter_types::MemoryTr;
            (&[][..], interp.memory.size(), usize::MAX)
        };
        let o = crate::trace::failed_step::FailedOp {
            op: self.op,
            spec: ctx.cfg.spec,
            gas: self.gas,
            stack,
            mem_len,
            is_static: interp.runtime_flag.is_static,
            contract: interp.input.target_address,
        };
        Some(failed_step_report(
            result,
            last,
            &o,
            &mut ctx.journaled_state,
            journal_at,
        ))
    }
}
