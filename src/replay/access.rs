//! The state access pattern of a transaction: every account and storage slot it read or wrote,
//! with its value before and after the transaction, and which frames (call ids and contracts)
//! touched it. Transient storage (TLOAD/TSTORE) is listed apart from persistent storage.
//!
//! An [`AccessTracer`] notes who touched what while the transaction runs; values come from the
//! database under revm's journal (the pre-state, which a transaction does not write until
//! commit) and from the post-state revm returns, so the tracer itself reads nothing and cannot
//! change gas.

use crate::trace::Ctx;
use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use revm::bytecode::opcode::{
    BALANCE, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, KECCAK256, SELFBALANCE, SELFDESTRUCT, SLOAD,
    SSTORE, TLOAD, TSTORE,
};
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::interpreter::interpreter_types::Jumps;
use revm::interpreter::interpreter_types::MemoryTr;
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::{Database, DatabaseCommit, InspectEvm, Inspector, MainBuilder};
use serde::Serialize;

use super::{EvmEnv, ReplayError, ReplayTx, TxOutcome};
use crate::source::{ReplayDb, StateSnapshot};
use crate::trace::prestate::read_account;

/// A frame that touched an item: its id in call order (0 = top) and the code running in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Toucher {
    pub frame: usize,
    pub contract: Address,
}

/// One account or slot in the access pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Access {
    pub address: Address,
    /// `None` for the account itself (balance, nonce, code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<U256>,
    /// A transient storage slot (EIP-1153: TLOAD/TSTORE), not the persistent slot of the same
    /// number. Transient storage is empty when a transaction starts and cleared when it ends, so
    /// `before` and `after` are always zero.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    pub read: bool,
    pub written: bool,
    /// Slot value, or account balance, before and after the transaction.
    pub before: U256,
    pub after: U256,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce_before: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce_after: Option<u64>,
    pub touched_by: Vec<Toucher>,
    /// Where the item's first write falls among the run's writes (0 = first), for showing
    /// changes in the order the transaction made them; not part of the JSON.
    #[serde(skip)]
    pub write_order: Option<usize>,
    /// A transient slot's values as the transaction wrote them (TSTORE), in order: only the
    /// writes that stood (a write in a frame that failed is undone with it), the last one what
    /// the slot held when the transaction ended. Empty for everything else; not part of the
    /// JSON.
    #[serde(skip)]
    pub transient_writes: Vec<U256>,
}

#[derive(Default)]
struct Item {
    read: bool,
    written: bool,
    first_write: Option<usize>,
    by: BTreeSet<Toucher>,
}

/// Notes every account and slot access with the frame that made it.
/// What an access is to: the account, a persistent slot or a transient slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Account,
    Slot(U256),
    Transient(U256),
}

#[derive(Default)]
pub struct AccessTracer {
    items: BTreeMap<(Address, Target), Item>,
    frames: Vec<usize>,
    next_frame: usize,
    /// Writes noted so far.
    writes: usize,
    /// KECCAK256 inputs of 32 to [`MAX_PREIMAGE`] bytes, by hash: where a mapping entry's or a
    /// dynamic array's slot came from (a key and the base slot, or the base slot alone).
    preimages: BTreeMap<B256, Bytes>,
    /// The TSTOREs of each open frame, in order (address, key, value): a frame that fails
    /// drops its own, one that returns hands them to its caller.
    frame_tstores: Vec<Vec<(Address, U256, U256)>>,
    /// The TSTOREs that stood when the top frame returned.
    tstores: Vec<(Address, U256, U256)>,
}

/// The longest KECCAK256 input kept as a slot's preimage: a mapping key of up to 4 KiB (a
/// `string` or `bytes` key) and the base slot.
const MAX_PREIMAGE: u64 = 4096 + 32;

/// How far past a keccak256 output a slot may lie and still be read as derived from it: a
/// struct's member in a mapping's value, an element of a dynamic array (or a long string's
/// data word).
pub const MAX_SLOT_OFFSET: u64 = 1 << 32;

/// KECCAK256 preimages seen by a run, by hash.
pub type Preimages = BTreeMap<B256, Bytes>;

/// One derivation on the way from a variable's slot to a storage slot: `off` slots past
/// `keccak256(key . base)` (a mapping entry: `key` is the key as hashed) or past
/// `keccak256(base)` (`key` is `None`: a dynamic array's elements or a long `bytes`/`string`'s
/// data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotStep {
    pub key: Option<Bytes>,
    pub off: U256,
}

/// How `slot` was derived from the preimages a run hashed: the slot it starts from (a
/// variable's, or a member's of a struct there) and each derivation after it, outermost first.
/// A slot whose preimage the run did not see starts and ends at itself: nothing is guessed.
pub fn slot_path(slot: U256, preimages: &Preimages) -> (U256, Vec<SlotStep>) {
    let mut at = slot;
    let mut steps: Vec<SlotStep> = derivation(slot, preimages)
        .map(|(hash, pre, from)| {
            let (key, base) = pre.split_at(pre.len() - 32);
            at = U256::from_be_slice(base);
            SlotStep {
                key: (!key.is_empty()).then(|| Bytes::copy_from_slice(key)),
                off: from - hash,
            }
        })
        .collect();
    steps.reverse();
    (at, steps)
}

/// Each derivation of `slot`, innermost first: the hash it lies at or past, the preimage of
/// that hash (a key and the base slot, or the base alone), and the slot derived. Each step goes
/// to a smaller base in practice; the bound keeps a cycle of hashes finite.
fn derivation(
    slot: U256,
    preimages: &Preimages,
) -> impl Iterator<Item = (U256, &Bytes, U256)> + '_ {
    let mut at = Some(slot);
    std::iter::from_fn(move || {
        let from = at.take()?;
        let key = B256::from(from.to_be_bytes::<32>());
        let (hash, pre) = preimages.range(..=key).next_back()?;
        let hash = U256::from_be_bytes(hash.0);
        if from - hash >= U256::from(MAX_SLOT_OFFSET) {
            return None;
        }
        at = Some(U256::from_be_slice(&pre[pre.len() - 32..]));
        Some((hash, pre, from))
    })
    .take(16)
}

/// Keeps the preimages on the derivation of some slot in `slots` ([`slot_path`]): what
/// explains the slots a run touched, and nothing it hashed for other reasons.
pub fn keep_explaining(preimages: &mut Preimages, slots: impl IntoIterator<Item = U256>) {
    let used: BTreeSet<B256> = slots
        .into_iter()
        .flat_map(|slot| {
            derivation(slot, preimages)
                .map(|(hash, _, _)| B256::from(hash.to_be_bytes::<32>()))
                .collect::<Vec<_>>()
        })
        .collect();
    preimages.retain(|h, _| used.contains(h));
}

fn word_to_address(w: &U256) -> Address {
    Address::from_word(w.to_be_bytes::<32>().into())
}

impl AccessTracer {
    fn note(&mut self, addr: Address, target: Target, write: bool, contract: Address) {
        let frame = self.frames.last().copied().unwrap_or(0);
        let item = self.items.entry((addr, target)).or_default();
        item.read |= !write;
        item.written |= write;
        if write && item.first_write.is_none() {
            item.first_write = Some(self.writes);
            self.writes += 1;
        }
        item.by.insert(Toucher { frame, contract });
    }

    fn enter(&mut self) {
        self.frames.push(self.next_frame);
        self.next_frame += 1;
        self.frame_tstores.push(Vec::new());
    }

    /// A frame ends: its TSTOREs stand (with its caller's, or for good at the top) when it
    /// `succeeded`, else they are undone with it.
    fn leave_tstores(&mut self, succeeded: bool) {
        let Some(mine) = self.frame_tstores.pop() else {
            return;
        };
        if !succeeded {
            return;
        }
        match self.frame_tstores.last_mut() {
            Some(caller) => caller.extend(mine),
            None => self.tstores.extend(mine),
        }
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for AccessTracer {
    fn step(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        let Some(top) = stack.last().copied() else {
            if op == SELFBALANCE {
                let me = interp.input.target_address;
                self.note(
                    me,
                    Target::Account,
                    false,
                    interp.input.bytecode_address.unwrap_or(me),
                );
            }
            return;
        };
        let me = interp.input.target_address;
        let code = interp.input.bytecode_address.unwrap_or(me);
        if op == KECCAK256 {
            let size = stack.len().checked_sub(2).map(|i| stack[i]);
            if size.is_some_and(|n| n >= U256::from(32) && n <= U256::from(MAX_PREIMAGE)) {
                let len = interp.memory.size();
                let memory = interp.memory.slice(0..len);
                let offset = top.saturating_to::<u64>().min(i64::MAX as u64) as i64;
                let size = size.unwrap_or_default().to::<u64>() as i64;
                if let Some(pre) = crate::trace::keccak::memory_copy_padded(&memory, offset, size) {
                    self.preimages.insert(keccak256(&pre), pre.into());
                }
            }
            return;
        }
        match op {
            SLOAD => self.note(me, Target::Slot(top), false, code),
            SSTORE => self.note(me, Target::Slot(top), true, code),
            TLOAD => self.note(me, Target::Transient(top), false, code),
            TSTORE => {
                self.note(me, Target::Transient(top), true, code);
                if let (Some(value), Some(open)) = (
                    stack.len().checked_sub(2).map(|i| stack[i]),
                    self.frame_tstores.last_mut(),
                ) {
                    open.push((me, top, value));
                }
            }
            BALANCE | EXTCODESIZE | EXTCODECOPY | EXTCODEHASH => {
                self.note(word_to_address(&top), Target::Account, false, code)
            }
            SELFBALANCE => self.note(me, Target::Account, false, code),
            SELFDESTRUCT => {
                self.note(me, Target::Account, true, code);
                self.note(word_to_address(&top), Target::Account, true, code);
            }
            _ => {}
        }
    }

    fn call(&mut self, _ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let moves_value = inputs.transfers_value();
        let caller_code = inputs.caller;
        self.note(
            inputs.target_address,
            Target::Account,
            moves_value,
            caller_code,
        );
        if moves_value {
            self.note(inputs.caller, Target::Account, true, caller_code);
        }
        self.enter();
        None
    }

    fn call_end(&mut self, _ctx: &mut Ctx<DB>, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.frames.pop();
        self.leave_tstores(outcome.result.result.is_ok());
    }

    fn create(&mut self, _ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.note(inputs.caller(), Target::Account, true, inputs.caller());
        self.enter();
        None
    }

    fn create_end(
        &mut self,
        _ctx: &mut Ctx<DB>,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        let frame = self.frames.pop().unwrap_or(0);
        self.leave_tstores(outcome.result.result.is_ok());
        if let Some(a) = outcome.address {
            let item = self.items.entry((a, Target::Account)).or_default();
            item.written = true;
            item.by.insert(Toucher { frame, contract: a });
        }
    }
}

type EvmCtx<'d, 'a> =
    Context<BlockEnv, TxEnv, CfgEnv, &'d mut ReplayDb<'a>, Journal<&'d mut ReplayDb<'a>>, ()>;

/// Runs `tx` under an [`AccessTracer`], commits it, and returns its access pattern.
pub fn trace_access(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
) -> Result<(Vec<Access>, TxOutcome), ReplayError> {
    trace_access_keyed(db, env, tx).map(|(rows, _, outcome)| (rows, outcome))
}

/// [`trace_access`], with the KECCAK256 preimages that explain its storage slots
/// ([`keep_explaining`]): the exact mapping keys and array indices that name them.
pub fn trace_access_keyed(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
) -> Result<(Vec<Access>, Preimages, TxOutcome), ReplayError> {
    let mut tracer = AccessTracer::default();
    // The sender always pays (nonce, fee) and the recipient is always looked up.
    tracer.note(tx.sender, Target::Account, true, tx.sender);
    // The chain's precompiles are answered as in `trace` (splice.rs), before the tracer sees
    // the call.
    let splicer = super::splice::Splicer::new(env);
    super::check_chain_rules(env, tx)?;
    // The sender as it was before the chain's rules act on it (a deposit's mint, an OP user
    // transaction's L1 and operator fees), which `before` commits.
    let sender_before = read_account(&mut *db, tx.sender);
    let rules = super::tx_rules::TxRules::before(db, env, tx)?;
    let mut evm = EvmCtx::new(&mut *db, env.spec)
        .with_block(env.block.clone())
        .with_cfg(rules.cfg())
        .build_mainnet_with_inspector((splicer, tracer));
    super::op_precompiles::install(&mut evm.precompiles, env);
    let run = (!rules.refused).then(|| evm.inspect_tx(tx.env.clone()));
    let (splicer, mut tracer) = std::mem::take(&mut evm.inspector);
    drop(evm);
    splicer.finish();
    // The same chain rules as `apply` and `trace` (tx_rules.rs).
    let (state, outcome) = rules
        .after(run, db, tx, super::tx_rules::Vaults::InState)?
        .into_state();
    let mut rows = Vec::with_capacity(tracer.items.len());
    let mut tstored: BTreeMap<(Address, U256), Vec<U256>> = BTreeMap::new();
    for (addr, key, value) in std::mem::take(&mut tracer.tstores) {
        tstored.entry((addr, key)).or_default().push(value);
    }
    for ((addr, target), item) in tracer.items {
        let post = state.get(&addr);
        let row = match target {
            Target::Transient(k) => Access {
                address: addr,
                slot: Some(k),
                transient: true,
                read: item.read,
                written: item.written,
                before: U256::ZERO,
                after: U256::ZERO,
                nonce_before: None,
                nonce_after: None,
                touched_by: item.by.into_iter().collect(),
                write_order: item.first_write,
                transient_writes: tstored.remove(&(addr, k)).unwrap_or_default(),
            },
            Target::Slot(k) => {
                let before = db.storage(addr, k).unwrap_or_default();
                let after = post
                    .and_then(|a| a.storage.get(&k))
                    .map_or(before, |s| s.present_value);
                Access {
                    address: addr,
                    slot: Some(k),
                    transient: false,
                    read: item.read,
                    written: item.written,
                    before,
                    after,
                    nonce_before: None,
                    nonce_after: None,
                    touched_by: item.by.into_iter().collect(),
                    write_order: item.first_write,
                    transient_writes: Vec::new(),
                }
            }
            Target::Account => {
                let (balance, nonce, _) = if addr == tx.sender {
                    sender_before.clone()
                } else {
                    read_account(&mut *db, addr)
                };
                let (after, nonce_after) =
                    post.map_or((balance, nonce), |a| (a.info.balance, a.info.nonce));
                Access {
                    address: addr,
                    slot: None,
                    transient: false,
                    read: item.read,
                    written: item.written,
                    before: balance,
                    after,
                    nonce_before: Some(nonce),
                    nonce_after: Some(nonce_after),
                    touched_by: item.by.into_iter().collect(),
                    write_order: item.first_write,
                    transient_writes: Vec::new(),
                }
            }
        };
        rows.push(row);
    }
    db.commit(state);
    let mut preimages = tracer.preimages;
    keep_explaining(&mut preimages, rows.iter().filter_map(|r| r.slot));
    Ok((rows, preimages, outcome))
}

/// Storage slots read after a run beside its rows, by address and slot: their values after
/// it, which a slot no row lists held before it too.
pub type Values = BTreeMap<(Address, U256), U256>;

/// One run's access rows, the KECCAK256 preimages that key its slots, and the values of the
/// slots its by-variable view needs that it did not touch (the unwritten words of a long
/// string it changed).
#[derive(Clone, Debug, Default)]
pub struct Keyed {
    pub rows: Vec<Access>,
    pub preimages: Preimages,
    pub values: Values,
}

/// Which more slots a run's by-variable view needs, given the state it started from (the code
/// that names them), its rows and preimages, and a reader of the state after it (reading a
/// slot the state lacks is a miss, fetched for the next pass): their values.
pub type ReadMore<'f> = &'f dyn Fn(
    &StateSnapshot,
    &[Access],
    &Preimages,
    &mut dyn FnMut(Address, U256) -> U256,
) -> Values;

/// [`trace_access_keyed`], then the slots `more` asks for read on the state after the
/// transaction.
pub fn trace_access_more(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    more: ReadMore<'_>,
) -> Result<(Keyed, TxOutcome), ReplayError> {
    let (rows, preimages, outcome) = trace_access_keyed(db, env, tx)?;
    let state: &StateSnapshot = db.db;
    let values = more(state, &rows, &preimages, &mut |a, s| {
        db.storage(a, s).unwrap_or_default()
    });
    Ok((
        Keyed {
            rows,
            preimages,
            values,
        },
        outcome,
    ))
}
