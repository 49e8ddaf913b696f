//! The address index: for each address, the transactions whose traces touch it, so that
//! history queries (`trace_filter` by address, Otterscan's `ots_searchTransactions*`) read it
//! instead of replaying every block.
//!
//! A transaction touches an address when one of its Parity trace entries names it the way
//! reth's and anvil's searches read an entry (alloy's `LocalizedTransactionTrace::contains_address`):
//! a call's `from` or `to`, a creation's `from` or the contract it created, a self-destruct's
//! contract; a self-destruct's refund address is kept apart (`trace_filter`'s `toAddress`
//! matches it, the Otterscan searches do not). The index is built by replaying blocks on the ranges engine ([`build`]) and kept
//! in a [`store`] file; in memory it is the blocks (number, hash, parent hash, each
//! transaction's hash and addresses) and per address the `(block, transaction index)` pairs.
//!
//! It is keyed by block hash and holds one chain: a block inserted at a number the index holds
//! replaces it and every block after it ([`AddressIndex::insert`]), and the blocks are linked
//! by their parent hashes, so an index whose highest block is the node's block at that number
//! is the node's chain all the way down ([`AddressIndex::tip`]; `serve` checks that before it
//! answers from the index).

pub mod build;
pub mod store;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use alloy_primitives::{Address, B256};
use alloy_rpc_types_trace::parity::LocalizedTransactionTrace;

/// One transaction of an indexed block: its hash, the addresses its traces touch, and those
/// only a self-destruct's refund went to (which `trace_filter`'s `toAddress` matches, but the
/// Otterscan searches do not count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedTx {
    pub hash: B256,
    pub addresses: Vec<Address>,
    pub refunds: Vec<Address>,
}

/// One indexed block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedBlock {
    pub number: u64,
    pub hash: B256,
    pub parent: B256,
    pub txs: Vec<IndexedTx>,
}

impl IndexedBlock {
    /// The addresses each transaction's Parity entries touch, in first-seen order.
    pub fn from_traces<'a>(
        number: u64,
        hash: B256,
        parent: B256,
        txs: impl Iterator<Item = (B256, &'a [LocalizedTransactionTrace])>,
    ) -> IndexedBlock {
        let txs = txs
            .map(|(tx, entries)| {
                let mut addresses: Vec<Address> = Vec::new();
                let mut refunds: Vec<Address> = Vec::new();
                for e in entries {
                    touched(e, &mut |a| {
                        if !addresses.contains(&a) {
                            addresses.push(a);
                        }
                    });
                    if let alloy_rpc_types_trace::parity::Action::Selfdestruct(s) = &e.trace.action
                    {
                        if !refunds.contains(&s.refund_address) {
                            refunds.push(s.refund_address);
                        }
                    }
                }
                refunds.retain(|a| !addresses.contains(a));
                IndexedTx {
                    hash: tx,
                    addresses,
                    refunds,
                }
            })
            .collect();
        IndexedBlock {
            number,
            hash,
            parent,
            txs,
        }
    }
}

/// Every address `e` touches by alloy's `contains_address` rule.
fn touched(e: &LocalizedTransactionTrace, add: &mut impl FnMut(Address)) {
    use alloy_rpc_types_trace::parity::Action;
    match &e.trace.action {
        Action::Call(c) => {
            add(c.from);
            add(c.to);
        }
        Action::Create(c) => add(c.from),
        Action::Reward(r) => add(r.author),
        Action::Selfdestruct(s) => add(s.address),
    }
    if let Some(created) = e.trace.result.as_ref().and_then(|r| r.created_contract()) {
        add(created);
    }
}

/// Where an indexed transaction is: its block and its index there.
pub type Position = (u64, u32);

/// The index of one chain in memory.
#[derive(Default)]
pub struct AddressIndex {
    blocks: BTreeMap<u64, IndexedBlock>,
    postings: HashMap<Address, BTreeSet<Position>>,
    /// Where an address was only a self-destruct's refund.
    refunds: HashMap<Address, BTreeSet<Position>>,
}

impl AddressIndex {
    /// Adds `block`, replacing the block the index holds at its number and every block after
    /// it (they belong to the chain `block` replaces).
    pub fn insert(&mut self, block: IndexedBlock) {
        self.truncate_from(block.number);
        for (i, tx) in block.txs.iter().enumerate() {
            for a in &tx.addresses {
                self.postings
                    .entry(*a)
                    .or_default()
                    .insert((block.number, i as u32));
            }
            for a in &tx.refunds {
                self.refunds
                    .entry(*a)
                    .or_default()
                    .insert((block.number, i as u32));
            }
        }
        self.blocks.insert(block.number, block);
    }

    /// Forgets the blocks from `number` on.
    pub fn truncate_from(&mut self, number: u64) {
        let gone = self.blocks.split_off(&number);
        let drop = |map: &mut HashMap<Address, BTreeSet<Position>>, a: &Address, at: Position| {
            if let Some(p) = map.get_mut(a) {
                p.remove(&at);
                if p.is_empty() {
                    map.remove(a);
                }
            }
        };
        for b in gone.values() {
            for (i, tx) in b.txs.iter().enumerate() {
                for a in &tx.addresses {
                    drop(&mut self.postings, a, (b.number, i as u32));
                }
                for a in &tx.refunds {
                    drop(&mut self.refunds, a, (b.number, i as u32));
                }
            }
        }
    }

    /// The lowest and highest indexed blocks.
    pub fn span(&self) -> Option<(u64, u64)> {
        Some((
            *self.blocks.keys().next()?,
            *self.blocks.keys().next_back()?,
        ))
    }

    /// The highest indexed block: its number and hash.
    pub fn tip(&self) -> Option<(u64, B256)> {
        self.blocks.last_key_value().map(|(n, b)| (*n, b.hash))
    }

    /// The indexed block at `number`.
    pub fn block(&self, number: u64) -> Option<&IndexedBlock> {
        self.blocks.get(&number)
    }

    /// Whether every block `from..=to` is indexed.
    pub fn covers(&self, from: u64, to: u64) -> bool {
        self.span().is_some_and(|(a, b)| a <= from && to <= b)
    }

    /// The blocks in `from..=to` where one of `addresses` is touched or refunded.
    pub fn blocks_touching(&self, addresses: &[Address], from: u64, to: u64) -> BTreeSet<u64> {
        let mut out = BTreeSet::new();
        if from > to {
            return out;
        }
        for a in addresses {
            for map in [&self.postings, &self.refunds] {
                if let Some(p) = map.get(a) {
                    out.extend(p.range((from, 0)..=(to, u32::MAX)).map(|(b, _)| *b));
                }
            }
        }
        out
    }

    /// The transactions touching `address` in `from..=to`, in chain order: position and hash.
    pub fn txs_touching(&self, address: Address, from: u64, to: u64) -> Vec<(Position, B256)> {
        let Some(p) = self.postings.get(&address).filter(|_| from <= to) else {
            return Vec::new();
        };
        p.range((from, 0)..=(to, u32::MAX))
            .filter_map(|&(b, i)| {
                let tx = self.blocks.get(&b)?.txs.get(i as usize)?;
                Some(((b, i), tx.hash))
            })
            .collect()
    }

    /// Indexed blocks and the transactions and address entries they hold.
    pub fn size(&self) -> (usize, usize, usize) {
        let txs = self.blocks.values().map(|b| b.txs.len()).sum();
        let entries = self.postings.values().map(BTreeSet::len).sum();
        (self.blocks.len(), txs, entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(number: u64, tag: u8, parent: u8, txs: &[&[u8]]) -> IndexedBlock {
        IndexedBlock {
            number,
            hash: B256::repeat_byte(tag),
            parent: B256::repeat_byte(parent),
            txs: txs
                .iter()
                .enumerate()
                .map(|(i, addrs)| IndexedTx {
                    hash: B256::with_last_byte(tag ^ i as u8),
                    addresses: addrs.iter().map(|a| Address::repeat_byte(*a)).collect(),
                    refunds: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_block_at_an_indexed_number_replaces_it_and_every_block_after() {
        let mut ix = AddressIndex::default();
        ix.insert(block(1, 0x11, 0x00, &[&[1, 2]]));
        ix.insert(block(2, 0x12, 0x11, &[&[2], &[3]]));
        ix.insert(block(3, 0x13, 0x12, &[&[3]]));
        assert_eq!(
            ix.blocks_touching(&[Address::repeat_byte(3)], 0, 10),
            BTreeSet::from([2, 3])
        );
        // A reorg at 2: the new block 2 holds address 4 only; block 3 is gone with it.
        ix.insert(block(2, 0x22, 0x11, &[&[4]]));
        assert_eq!(ix.tip(), Some((2, B256::repeat_byte(0x22))));
        assert!(ix
            .blocks_touching(&[Address::repeat_byte(3)], 0, 10)
            .is_empty());
        assert_eq!(
            ix.txs_touching(Address::repeat_byte(2), 0, 10),
            vec![((1, 0), B256::with_last_byte(0x11))]
        );
        assert_eq!(ix.size(), (2, 2, 3));
        assert!(ix.covers(1, 2) && !ix.covers(1, 3) && !ix.covers(0, 2));
        // An empty range is nothing, never a panic.
        assert!(ix.txs_touching(Address::repeat_byte(2), 5, 4).is_empty());
        assert!(ix
            .blocks_touching(&[Address::repeat_byte(2)], 5, 4)
            .is_empty());
    }
}
