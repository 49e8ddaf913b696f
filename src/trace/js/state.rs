//! `db` reads: the state as the transaction has left it so far, without touching revm's journal.
//!
//! geth's `db` reads its StateDB, which already holds the writes made earlier in the same
//! transaction. revm keeps those in the journal's account map; the database underneath holds
//! the pre-transaction state. So a read looks in the map first and falls back to the database,
//! and never loads through the journal, which would warm accounts and change gas.

use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY, U256};
use revm::state::EvmState;
use revm::Database;

/// What `db` can ask.
pub trait StateReader {
    fn balance(&mut self, a: Address) -> U256;
    fn nonce(&mut self, a: Address) -> u64;
    fn code(&mut self, a: Address) -> Bytes;
    fn storage(&mut self, a: Address, slot: U256) -> U256;
    fn exists(&mut self, a: Address) -> bool;
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
}
