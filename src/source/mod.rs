//! Where state comes from.
//!
//! Every source ends up as a [`StateSnapshot`]: the pre-state of the block (accounts, slots and
//! block hashes) held in memory. A fixture or bundle fills it completely; the RPC source fills it
//! speculatively — execution against an incomplete snapshot records every account, slot and block
//! hash it missed, the RPC layer fetches them all in one batch, and execution runs again until
//! nothing is missing. Everything below the source is the same for all of them.

pub mod cache;
pub mod chain_data;
pub mod consensus;
pub mod deposit;
pub mod error;
pub mod fixture;
pub mod node_rules;
pub mod op_fee_reads;
pub mod prestate_rpc;
pub mod rpc;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;

use alloy_primitives::{keccak256, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use revm::bytecode::Bytecode;
use revm::database::CacheDB;
use revm::state::AccountInfo;
use revm::DatabaseRef;

/// An account's balance, nonce and code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountData {
    pub balance: U256,
    pub nonce: u64,
    pub code: Bytes,
}

/// What an execution against an incomplete snapshot needed but did not find.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Misses {
    pub accounts: BTreeSet<Address>,
    pub slots: BTreeSet<(Address, U256)>,
    pub block_hashes: BTreeSet<u64>,
}

impl Misses {
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty() && self.slots.is_empty() && self.block_hashes.is_empty()
    }
    pub fn len(&self) -> usize {
        self.accounts.len() + self.slots.len() + self.block_hashes.len()
    }
}

/// The pre-state of a block, in memory.
#[derive(Debug, Default)]
pub struct StateSnapshot {
    pub accounts: HashMap<Address, AccountData>,
    pub storage: HashMap<(Address, U256), U256>,
    pub block_hashes: HashMap<u64, B256>,
    /// When true, anything absent is known to be empty (fixtures); when false, absence is a miss.
    pub complete: bool,
    codes: HashMap<B256, Bytecode>,
    misses: RefCell<Misses>,
}

/// The database revm runs on: a write cache over the snapshot, so a block's transactions can be
/// committed one after another without touching the snapshot itself.
pub type ReplayDb<'a> = CacheDB<&'a StateSnapshot>;

impl StateSnapshot {
    /// A snapshot whose contents are the whole state (a fixture's `alloc`).
    pub fn complete() -> Self {
        StateSnapshot {
            complete: true,
            ..Default::default()
        }
    }

    /// How many accounts, slots, block hashes and codes it holds.
    pub fn extent(&self) -> [usize; 4] {
        [
            self.accounts.len(),
            self.storage.len(),
            self.block_hashes.len(),
            self.codes.len(),
        ]
    }

    /// A snapshot to be filled by speculative prefetch.
    pub fn partial() -> Self {
        StateSnapshot {
            complete: false,
            ..Default::default()
        }
    }

    pub fn insert_account(&mut self, addr: Address, data: AccountData) {
        if !data.code.is_empty() {
            let hash = keccak256(&data.code);
            self.codes
                .entry(hash)
                .or_insert_with(|| to_bytecode(&data.code));
        }
        self.accounts.insert(addr, data);
    }

    pub fn insert_slot(&mut self, addr: Address, slot: U256, value: U256) {
        self.storage.insert((addr, slot), value);
    }

    /// Whether a miss was recorded since the last [`take_misses`](Self::take_misses).
    pub fn has_misses(&self) -> bool {
        !self.misses.borrow().is_empty()
    }

    /// Takes the misses recorded since the last call.
    pub fn take_misses(&self) -> Misses {
        std::mem::take(&mut self.misses.borrow_mut())
    }

    /// A copy of what is known (no recorded misses), to be filled further on its own: a
    /// server's memory cache hands each request its own copy of a block's state.
    pub fn fork(&self) -> StateSnapshot {
        StateSnapshot {
            accounts: self.accounts.clone(),
            storage: self.storage.clone(),
            block_hashes: self.block_hashes.clone(),
            complete: self.complete,
            codes: self.codes.clone(),
            misses: RefCell::default(),
        }
    }

    /// Writes the state a replay left (revm's cache after a block's last transaction) over
    /// this snapshot, so that it becomes the next block's pre-state for everything the block
    /// read or wrote. A destroyed or re-created account's storage is forgotten, not zeroed:
    /// what a later block reads of it is fetched at that block's parent.
    pub fn carry(&mut self, post: &revm::database::Cache) {
        use revm::database::AccountState;
        for (addr, acc) in &post.accounts {
            if matches!(
                acc.account_state,
                AccountState::NotExisting | AccountState::StorageCleared
            ) {
                self.storage.retain(|(a, _), _| a != addr);
            }
            let data = match acc.account_state {
                AccountState::NotExisting => AccountData::default(),
                _ => AccountData {
                    balance: acc.info.balance,
                    nonce: acc.info.nonce,
                    code: match &acc.info.code {
                        Some(c) => c.original_bytes(),
                        None => post
                            .contracts
                            .get(&acc.info.code_hash)
                            .map(|c| c.original_bytes())
                            .unwrap_or_default(),
                    },
                },
            };
            self.insert_account(*addr, data);
            for (slot, value) in &acc.storage {
                self.storage.insert((*addr, *slot), *value);
            }
        }
    }

    /// Adds what `other` holds and this snapshot does not (what is here stands).
    pub fn absorb(&mut self, other: StateSnapshot) {
        for (a, d) in other.accounts {
            if !self.accounts.contains_key(&a) {
                self.insert_account(a, d);
            }
        }
        for (k, v) in other.storage {
            self.storage.entry(k).or_insert(v);
        }
        for (n, h) in other.block_hashes {
            self.block_hashes.entry(n).or_insert(h);
        }
    }

    /// Forgets `addresses` and their storage: what happens to them between blocks outside any
    /// transaction (withdrawals, system calls) is read again from the node.
    pub fn forget(&mut self, addresses: &[Address]) {
        for a in addresses {
            self.accounts.remove(a);
        }
        self.storage.retain(|(a, _), _| !addresses.contains(a));
    }

    /// Entries held (accounts + slots + block hashes), for a cache's size bound.
    pub fn entries(&self) -> usize {
        self.accounts.len() + self.storage.len() + self.block_hashes.len()
    }

    /// A fresh write cache over this snapshot.
    pub fn db(&self) -> ReplayDb<'_> {
        CacheDB::new(self)
    }
}

/// Wraps raw code for revm: EIP-7702 designators become delegations, anything else legacy code
/// (malformed `0xef01…` code cannot be deployed, but state from a node is not trusted to panic on).
pub fn to_bytecode(code: &Bytes) -> Bytecode {
    Bytecode::new_raw_checked(code.clone()).unwrap_or_else(|_| Bytecode::new_legacy(code.clone()))
}

impl DatabaseRef for StateSnapshot {
    type Error = Infallible;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        let Some(acc) = self.accounts.get(&address) else {
            if !self.complete {
                self.misses.borrow_mut().accounts.insert(address);
            }
            return Ok(None);
        };
        let (code_hash, code) = if acc.code.is_empty() {
            (KECCAK256_EMPTY, None)
        } else {
            let hash = keccak256(&acc.code);
            let code = self
                .codes
                .get(&hash)
                .cloned()
                .unwrap_or_else(|| to_bytecode(&acc.code));
            (hash, Some(code))
        };
        Ok(Some(AccountInfo::new(
            acc.balance,
            acc.nonce,
            code_hash,
            code.unwrap_or_default(),
        )))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        Ok(self.codes.get(&code_hash).cloned().unwrap_or_default())
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        if let Some(v) = self.storage.get(&(address, index)) {
            return Ok(*v);
        }
        if !self.complete {
            self.misses.borrow_mut().slots.insert((address, index));
        }
        Ok(U256::ZERO)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        if let Some(h) = self.block_hashes.get(&number) {
            return Ok(*h);
        }
        if !self.complete {
            self.misses.borrow_mut().block_hashes.insert(number);
        }
        Ok(B256::ZERO)
    }
}
