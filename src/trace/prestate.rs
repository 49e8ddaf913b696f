//! geth's `prestateTracer`: the state of every account and slot a transaction touched, as it was
//! before the transaction; with `diffMode`, what changed (`pre` and `post`).
//!
//! Lookups follow geth's `OnOpcode` rules (SLOAD/SSTORE slots, BALANCE/EXTCODE*/SELFDESTRUCT
//! targets, CALL-family targets and their EIP-7702 delegates, CREATE/CREATE2 addresses) and read
//! the pre-transaction state from the database under the journal, which the transaction has not
//! written to yet. An opcode that fails before it executes (stack or gas) records nothing, as in
//! geth, so lookups are staged in `step` and kept in `step_end`.

use super::state::Ctx;
use std::collections::{BTreeMap, HashSet};

use alloy_primitives::{keccak256, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use revm::bytecode::opcode::{
    BALANCE, CALL, CALLCODE, CREATE, CREATE2, DELEGATECALL, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE,
    SELFDESTRUCT, SLOAD, SSTORE, STATICCALL,
};
use revm::interpreter::{
    interpreter_types::{Jumps, LoopControl, MemoryTr},
    Interpreter, InterpreterAction,
};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;
use revm::{Database, Inspector};
use serde::{Deserialize, Serialize};

use super::errors::fails_before_execution;

/// `tracerConfig` of the prestate tracer.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PrestateConfig {
    pub diff_mode: bool,
    pub disable_code: bool,
    pub disable_storage: bool,
    pub include_empty: bool,
}

/// One account in geth's prestate shape. Empty fields are omitted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AccountState {
    // alloy's own serde writes geth's forms: U256 as compact `0x` hex, bytes and hashes as
    // lowercase `0x` hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance: Option<U256>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Bytes>,
    #[serde(rename = "codeHash", skip_serializing_if = "Option::is_none")]
    pub code_hash: Option<B256>,
    #[serde(skip_serializing_if = "is_zero")]
    pub nonce: u64,
    #[serde(skip_serializing_if = "no_storage", serialize_with = "opt_storage")]
    pub storage: Option<BTreeMap<B256, B256>>,
    #[serde(skip)]
    empty: bool,
}

fn no_storage(m: &Option<BTreeMap<B256, B256>>) -> bool {
    m.as_ref().is_none_or(BTreeMap::is_empty)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn opt_storage<S: serde::Serializer>(
    m: &Option<BTreeMap<B256, B256>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let Some(m) = m else {
        return s.serialize_none();
    };
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(&format!("{k:?}"), &format!("{v:?}"))?;
    }
    map.end()
}

/// The tracer's result: the bare prestate map, or `{post, pre}` in diff mode.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum PrestateResult {
    Pre(#[serde(serialize_with = "state_map")] BTreeMap<Address, AccountState>),
    Diff {
        #[serde(serialize_with = "state_map")]
        post: BTreeMap<Address, AccountState>,
        #[serde(serialize_with = "state_map")]
        pre: BTreeMap<Address, AccountState>,
    },
}

fn state_map<S: serde::Serializer>(
    m: &BTreeMap<Address, AccountState>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(&format!("{k:?}"), v)?;
    }
    map.end()
}

/// A lookup staged in `step`, kept in `step_end` unless the opcode failed before executing.
enum Staged {
    Slot(Address, B256),
    Account(Address),
    Call(Address),
    Selfdestruct {
        contract: Address,
        beneficiary: Address,
    },
    Created(Address),
}

/// The prestate tracer's state during one transaction.
pub struct PrestateTracer {
    config: PrestateConfig,
    spec: SpecId,
    pre: BTreeMap<Address, AccountState>,
    created: HashSet<Address>,
    deleted: HashSet<Address>,
    staged: Option<Staged>,
    /// The opcode that staged it.
    staged_op: u8,
}

fn word_to_address(w: &U256) -> Address {
    Address::from_word(B256::from(w.to_be_bytes::<32>()))
}

/// Parses an EIP-7702 delegation designator (`0xef0100 ++ address`).
pub fn delegation_target(code: &[u8]) -> Option<Address> {
    (code.len() == 23 && code[..3] == [0xef, 0x01, 0x00]).then(|| Address::from_slice(&code[3..]))
}

/// Reads one account's pre-transaction state: (balance, nonce, code).
pub fn read_account<DB: Database>(db: &mut DB, addr: Address) -> (U256, u64, Bytes) {
    match db.basic(addr) {
        Ok(Some(info)) => {
            let code = match &info.code {
                Some(c) => c.original_bytes(),
                None if info.code_hash != KECCAK256_EMPTY && info.code_hash != B256::ZERO => db
                    .code_by_hash(info.code_hash)
                    .map(|c| c.original_bytes())
                    .unwrap_or_default(),
                None => Bytes::new(),
            };
            (info.balance, info.nonce, code)
        }
        _ => (U256::ZERO, 0, Bytes::new()),
    }
}

impl PrestateTracer {
    pub fn new(config: PrestateConfig, spec: SpecId) -> Self {
        PrestateTracer {
            config,
            spec,
            pre: BTreeMap::new(),
            created: HashSet::new(),
            deleted: HashSet::new(),
            staged: None,
            staged_op: 0,
        }
    }

    /// geth's `OnTxStart`: look up the sender, the recipient (or the address a CREATE will get),
    /// the recipient's delegate, the coinbase and every recoverable EIP-7702 authority.
    pub fn begin<DB: Database>(
        &mut self,
        db: &mut DB,
        from: Address,
        to: Option<Address>,
        coinbase: Address,
        authorities: &[Address],
    ) {
        let to = match to {
            Some(to) => {
                if self.spec >= SpecId::PRAGUE {
                    let (_, _, code) = read_account(db, to);
                    if let Some(target) = delegation_target(&code) {
                        self.lookup_account(db, target);
                    }
                }
                to
            }
            None => {
                let (_, nonce, _) = read_account(db, from);
                let addr = from.create(nonce);
                self.created.insert(addr);
                addr
            }
        };
        self.lookup_account(db, from);
        self.lookup_account(db, to);
        self.lookup_account(db, coinbase);
        for a in authorities {
            self.lookup_account(db, *a);
        }
    }

    fn lookup_account<DB: Database>(&mut self, db: &mut DB, addr: Address) {
        if self.pre.contains_key(&addr) {
            return;
        }
        let (balance, nonce, code) = read_account(db, addr);
        let code_hash = (!code.is_empty()).then(|| keccak256(&code));
        let empty = nonce == 0 && code.is_empty() && balance.is_zero();
        self.pre.insert(
            addr,
            AccountState {
                balance: Some(balance),
                code: (!code.is_empty() && !self.config.disable_code).then_some(code),
                code_hash,
                nonce,
                storage: (!self.config.disable_storage).then(BTreeMap::new),
                empty,
            },
        );
    }

    fn lookup_storage<DB: Database>(&mut self, db: &mut DB, addr: Address, slot: B256) {
        if self.config.disable_storage {
            return;
        }
        self.lookup_account(db, addr);
        let Some(Some(storage)) = self.pre.get_mut(&addr).map(|a| a.storage.as_mut()) else {
            return;
        };
        if storage.contains_key(&slot) {
            return;
        }
        let value = db.storage(addr, slot.into()).unwrap_or_default();
        storage.insert(slot, B256::from(value.to_be_bytes::<32>()));
    }

    /// geth's `OnTxEnd` and `GetResult`. `post` is the state revm produced for the transaction.
    pub fn into_result<DB: Database>(mut self, db: &mut DB, post: &EvmState) -> PrestateResult {
        let mut post_map = BTreeMap::new();
        if self.config.diff_mode {
            post_map = self.diff(db, post);
        }
        let include_empty = self.config.include_empty && !self.config.diff_mode;
        self.pre.retain(|_, acc| include_empty || !acc.empty);
        if self.config.diff_mode {
            PrestateResult::Diff {
                post: post_map,
                pre: self.pre,
            }
        } else {
            PrestateResult::Pre(self.pre)
        }
    }

    fn diff<DB: Database>(
        &mut self,
        db: &mut DB,
        post: &EvmState,
    ) -> BTreeMap<Address, AccountState> {
        let mut out = BTreeMap::new();
        let addrs: Vec<Address> = self.pre.keys().copied().collect();
        for addr in addrs {
            if self.deleted.contains(&addr) {
                continue;
            }
            let (db_balance, pre_nonce, pre_code) = read_account(db, addr);
            // The balance as looked up (geth compares with `t.pre[addr].Balance`): an OP
            // deposit's mint is in the database before the run, after the lookup.
            let pre_balance = self.pre[&addr].balance.unwrap_or(db_balance);
            let (new_balance, new_nonce, new_code) = match post.get(&addr) {
                Some(acc) => (
                    acc.info.balance,
                    acc.info.nonce,
                    acc.info
                        .code
                        .as_ref()
                        .map(|c| c.original_bytes())
                        .unwrap_or_default(),
                ),
                None => (pre_balance, pre_nonce, pre_code.clone()),
            };
            let mut modified = false;
            let mut p = AccountState {
                storage: Some(BTreeMap::new()),
                ..Default::default()
            };
            if new_balance != pre_balance {
                modified = true;
                p.balance = Some(new_balance);
            }
            if new_nonce != pre_nonce {
                modified = true;
                p.nonce = new_nonce;
            }
            let hash_of = |c: &Bytes| {
                if c.is_empty() {
                    KECCAK256_EMPTY
                } else {
                    keccak256(c)
                }
            };
            if hash_of(&new_code) != hash_of(&pre_code) {
                modified = true;
                p.code_hash = Some(hash_of(&new_code));
                if !self.config.disable_code {
                    p.code = Some(new_code);
                }
            }
            let acc = self.pre.get_mut(&addr).expect("address taken from pre");
            if let Some(storage) = acc.storage.as_mut() {
                let post_storage = p.storage.as_mut().expect("set above");
                storage.retain(|key, val| {
                    let new_val = post
                        .get(&addr)
                        .and_then(|a| a.storage.get(&U256::from_be_bytes(key.0)))
                        .map(|s| B256::from(s.present_value.to_be_bytes::<32>()))
                        .unwrap_or(*val);
                    if *val == new_val {
                        return false;
                    }
                    modified = true;
                    if new_val != B256::ZERO {
                        post_storage.insert(*key, new_val);
                    }
                    *val != B256::ZERO
                });
            }
            if p.storage.as_ref().is_some_and(BTreeMap::is_empty) {
                p.storage = None;
            }
            if modified {
                out.insert(addr, p);
            } else {
                self.pre.remove(&addr);
            }
        }
        out
    }
}

/// The code an address has now, inside the transaction (after EIP-7702 authorizations).
fn current_code<DB: Database>(ctx: &mut Ctx<DB>, addr: Address) -> Bytes {
    if let Some(acc) = ctx.journaled_state.state.get(&addr) {
        return acc
            .info
            .code
            .as_ref()
            .map(|c| c.original_bytes())
            .unwrap_or_default();
    }
    read_account(&mut ctx.journaled_state.database, addr).2
}

impl<DB: Database> Inspector<Ctx<DB>> for PrestateTracer {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        let len = stack.len();
        let caller = interp.input.target_address;
        self.staged_op = op;
        self.staged = match op {
            SLOAD | SSTORE if len >= 1 => Some(Staged::Slot(
                caller,
                B256::from(stack[len - 1].to_be_bytes::<32>()),
            )),
            EXTCODECOPY | EXTCODEHASH | EXTCODESIZE | BALANCE if len >= 1 => {
                Some(Staged::Account(word_to_address(&stack[len - 1])))
            }
            SELFDESTRUCT if len >= 1 => Some(Staged::Selfdestruct {
                contract: caller,
                beneficiary: word_to_address(&stack[len - 1]),
            }),
            CALL | CALLCODE | DELEGATECALL | STATICCALL if len >= 5 => {
                Some(Staged::Call(word_to_address(&stack[len - 2])))
            }
            CREATE => {
                let nonce = ctx
                    .journaled_state
                    .state
                    .get(&caller)
                    .map(|a| a.info.nonce)
                    .unwrap_or(0);
                Some(Staged::Created(caller.create(nonce)))
            }
            CREATE2 if len >= 4 => {
                let offset = stack[len - 2];
                let size = stack[len - 3];
                let salt = B256::from(stack[len - 4].to_be_bytes::<32>());
                let mem_len = interp.memory.size();
                let (Ok(off), Ok(sz)) = (usize::try_from(offset), usize::try_from(size)) else {
                    return;
                };
                // geth pads reads past the end of memory with zeros, up to 1 MiB of padding.
                let end = off.saturating_add(sz);
                if end > mem_len && end - mem_len > 1024 * 1024 {
                    return;
                }
                let mut init = vec![0u8; sz];
                if off < mem_len {
                    let avail = (mem_len - off).min(sz);
                    init[..avail].copy_from_slice(&interp.memory.slice(off..off + avail));
                }
                Some(Staged::Created(caller.create2(salt, keccak256(&init))))
            }
            _ => None,
        };
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        let Some(staged) = self.staged.take() else {
            return;
        };
        if let Some(InterpreterAction::Return(r)) = interp.bytecode.action() {
            if fails_before_execution(r.result, self.staged_op) {
                return;
            }
        }
        let db = &mut ctx.journaled_state.database;
        #[allow(clippy::needless_borrow)]
        match staged {
            Staged::Slot(addr, slot) => self.lookup_storage(db, addr, slot),
            Staged::Account(addr) => self.lookup_account(db, addr),
            Staged::Selfdestruct {
                contract,
                beneficiary,
            } => {
                self.lookup_account(db, beneficiary);
                if self.spec < SpecId::CANCUN || self.created.contains(&contract) {
                    self.deleted.insert(contract);
                }
            }
            Staged::Call(addr) => {
                self.lookup_account(db, addr);
                if self.spec >= SpecId::PRAGUE {
                    if let Some(target) = delegation_target(&current_code(ctx, addr)) {
                        self.lookup_account(&mut ctx.journaled_state.database, target);
                    }
                }
            }
            Staged::Created(addr) => {
                self.lookup_account(db, addr);
                self.created.insert(addr);
            }
        }
    }
}
