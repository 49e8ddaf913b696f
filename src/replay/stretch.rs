//! Contiguous blocks replayed on one carried state: the post-state of block N is the pre-state
//! of block N + 1, so a worker replaying a stretch fetches only what the stretch touches for
//! the first time, each item at the parent of the block that first reads it.
//!
//! Between blocks, what changes outside any transaction is forgotten and read again from the
//! node: the accounts a block's withdrawals credit, the system contracts written at a block's
//! start or end (EIP-4788 beacon roots, EIP-2935 block hashes, EIP-7002/7251 request queues),
//! and before the merge the block's miner; a block with ommers (whose miners are rewarded)
//! ends the carrying altogether. On a chain whose node runs state changes no block lists
//! (chains 1329/1328 under their own rules: Cosmos transactions), nothing is carried: each
//! block starts from the node's state at its parent, as a single block replay does.
//!
//! What a block's transactions obviously touch (senders, recipients, the coinbase, access
//! lists) is fetched for the whole stretch in one batch before it runs, each block's at its
//! parent, kept apart, and merged under the carried state just before that block runs. What
//! their calls read that no look at them shows (computed slots, contracts called in turn) is
//! then found by running the stretch once, untraced, on a scratch copy of what is known, and
//! fetched the same way in a second batch ([`Stretch::discover`]): a sequential range then
//! costs a few round trips a stretch instead of one for each block that reads something new.

use std::collections::BTreeMap;

use alloy_primitives::{address, Address, B256};

use super::driver::Driver;
use super::remote::BlockReplay;
use super::{EvmEnv, ReplayError};
use crate::source::rpc::{obvious_accounts, RpcBlock, RpcSource};
use crate::source::{Misses, StateSnapshot};
use crate::trace::TracerSpec;

/// System contracts whose storage a block writes outside its transactions.
const SYSTEM_CONTRACTS: [Address; 4] = [
    // EIP-4788 beacon block roots
    address!("000F3df6D732807Ef1319fB7B8bB8522d0Beac02"),
    // EIP-2935 block hashes
    address!("0000F90827F1C53a10cb7A02335B175320002935"),
    // EIP-7002 withdrawal requests
    address!("00000961Ef480Eb55e80D19ad83579A64c007002"),
    // EIP-7251 consolidation requests
    address!("0000BBdDc7CE488642fb579F8B00f3a590007251"),
];

/// A stretch of contiguous blocks replayed in order on one carried state.
pub struct Stretch<'a> {
    source: &'a RpcSource,
    /// Whether the post-state of a block may stand for the next block's pre-state.
    carry: bool,
    state: StateSnapshot,
    /// What each block obviously touches, fetched at its parent ahead of it.
    ahead: BTreeMap<u64, StateSnapshot>,
    /// The block the carried state stands after, its number and hash (`None`: nothing carried
    /// yet).
    after: Option<(u64, Option<B256>)>,
    /// Round trips spent on state.
    pub passes: usize,
    /// The first block with transactions that [`Stretch::discover`] ran: its state is found
    /// already, so its traced pass runs first.
    looked: Option<u64>,
}

/// What [`Stretch::discover`] found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Something to fetch for a block after the first with transactions (what the first reads,
    /// its own run would find in one round trip all the same).
    pub later: bool,
}

/// The state a finished stretch carried, and the block it stands after (number, hash): the
/// next stretch's start when its first block follows that one ([`Stretch::resume`]).
pub struct Carried {
    state: StateSnapshot,
    after: (u64, Option<B256>),
}

impl Carried {
    /// Entries the state holds (see [`StateSnapshot::entries`]).
    pub fn entries(&self) -> usize {
        self.state.entries()
    }
}

impl<'a> Stretch<'a> {
    /// A stretch whose blocks carry their state to the next (`carry`), or each start anew.
    pub fn new(source: &'a RpcSource, carry: bool) -> Self {
        Stretch {
            source,
            carry,
            state: StateSnapshot::partial(),
            ahead: BTreeMap::new(),
            after: None,
            passes: 0,
            looked: None,
        }
    }

    /// A carrying stretch that starts from the state an earlier stretch ended on (its first
    /// block is checked to follow that one, as between any two blocks of a stretch: else it
    /// starts anew).
    pub fn resume(source: &'a RpcSource, carried: Carried) -> Self {
        Stretch {
            state: carried.state,
            after: Some(carried.after),
            ..Stretch::new(source, true)
        }
    }

    /// The state the stretch carries after its last block, when it carries one.
    pub fn into_carried(self) -> Option<Carried> {
        let after = self.after.filter(|_| self.carry)?;
        Some(Carried {
            state: self.state,
            after,
        })
    }

    /// Fetches, in one batch, what the transactions of `blocks` (contiguous, ascending)
    /// obviously touch for the first time, each block's at its parent. When state is carried,
    /// what an earlier block of the batch already brings is not asked again, unless it is
    /// forgotten between the two (see the module docs).
    pub fn prefetch(&mut self, blocks: &[(&RpcBlock, &EvmEnv)]) -> Result<(), super::Error> {
        let mut wanted: Vec<(u64, String, Misses)> = Vec::new();
        // What the carried state will hold when the next block of `blocks` runs.
        let mut known = Misses::default();
        let mut prev: Option<&RpcBlock> = None;
        for (b, env) in blocks {
            let n = b.info.number;
            let continues = self.carry
                && match prev {
                    Some(p) => follows(Some((p.info.number, p.info.hash)), b) && p.uncles == 0,
                    None => follows(self.after, b),
                };
            if !continues {
                known = Misses::default();
            } else if prev.is_none() {
                known.accounts = self.state.accounts.keys().copied().collect();
                known.slots = self.state.storage.keys().copied().collect();
            }
            if let Some(p) = prev.filter(|_| continues) {
                let changed = changed_after(p);
                known.accounts.retain(|a| !changed.contains(a));
                known.slots.retain(|(a, _)| !changed.contains(a));
            }
            prev = Some(b);
            if b.txs.is_empty() {
                continue;
            }
            let mut m = obvious_accounts(&b.txs, env.block.beneficiary, env.op);
            let fresh = Misses {
                accounts: m.accounts.difference(&known.accounts).copied().collect(),
                slots: m.slots.difference(&known.slots).copied().collect(),
                block_hashes: Default::default(),
            };
            known.accounts.append(&mut m.accounts);
            known.slots.append(&mut m.slots);
            if !fresh.is_empty() {
                wanted.push((n, self.source.parent_at(&b.info), fresh));
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let asks: Vec<(&str, &Misses)> = wanted.iter().map(|(_, at, m)| (at.as_str(), m)).collect();
        let states = self.source.fetch_states(&asks)?;
        self.passes += 1;
        for ((n, _, _), s) in wanted.into_iter().zip(states) {
            self.ahead.insert(n, s);
        }
        Ok(())
    }

    /// Finds what the transactions of `blocks` (the stretch's, after [`Stretch::prefetch`])
    /// read for the first time that no look at them shows (the slots their calls compute, the
    /// contracts they call) and fetches it in one batch, each block's at its parent, as
    /// `prefetch` does for what is obvious: otherwise each block that reads something new
    /// costs a round trip of its own as it runs, which waits behind whatever else the node is
    /// answering. The blocks run once, untraced, on a scratch copy of what is known before
    /// the first (each block's writes carried to the next, what is missing read as empty);
    /// what they read that is missing is what is fetched. A guess: a block that reads
    /// something else once it runs on the real state fetches that as it runs, as always.
    /// Returns what it found ([`Found`]).
    pub fn discover(&mut self, blocks: &[(&RpcBlock, &EvmEnv)]) -> Result<Found, super::Error> {
        if !self.carry || blocks.iter().filter(|(b, _)| !b.txs.is_empty()).count() < 2 {
            return Ok(Found::default());
        }
        let mut scratch: Option<StateSnapshot> = None;
        let mut after = self.after;
        let mut wanted: Vec<(u64, String, Misses)> = Vec::new();
        // Whether a block after the first with transactions missed something.
        let mut later = false;
        for (b, env) in blocks {
            let n = b.info.number;
            let continues = follows(after, b);
            let mut known = match scratch.take() {
                Some(s) if continues => s,
                // The stretch's first block: what is carried to it, if anything.
                None if continues => self.state.fork(),
                _ => StateSnapshot::partial(),
            };
            if let Some(a) = self.ahead.get(&n) {
                known.absorb(a.fork());
            }
            if !b.txs.is_empty() {
                let post = {
                    let mut db = known.db();
                    for tx in &b.txs {
                        // Failures are the guess's: the real run meets its own.
                        if let Err(e @ (ReplayError::Cancelled | ReplayError::OverBudget)) =
                            super::apply(&mut db, env, tx)
                        {
                            return Err(e.into());
                        }
                    }
                    db.cache
                };
                let missed = known.take_misses();
                known.carry(&post);
                self.looked.get_or_insert(n);
                if !missed.is_empty() {
                    later |= self.looked != Some(n);
                    wanted.push((n, self.source.parent_at(&b.info), missed));
                }
            }
            stand_after(&mut known, &mut after, b);
            scratch = Some(known);
        }
        if wanted.is_empty() {
            return Ok(Found::default());
        }
        let asks: Vec<(&str, &Misses)> = wanted.iter().map(|(_, at, m)| (at.as_str(), m)).collect();
        let states = self.source.fetch_states(&asks)?;
        self.passes += 1;
        for ((n, _, _), s) in wanted.into_iter().zip(states) {
            match self.ahead.get_mut(&n) {
                Some(a) => a.absorb(s),
                None => {
                    self.ahead.insert(n, s);
                }
            }
        }
        Ok(Found { later })
    }

    /// Whether `block` runs on the state carried from the block before.
    pub fn carries_into(&self, block: &RpcBlock) -> bool {
        self.carry && follows(self.after, block)
    }

    /// Passes over `block`, which has no transactions: the carried state stands after it too,
    /// less what changes between blocks.
    pub fn skip_empty(&mut self, block: &RpcBlock) {
        let n = block.info.number;
        if !self.carry || !follows(self.after, block) {
            self.after = None;
            return;
        }
        self.ahead.remove(&n);
        self.forget_after(block);
    }

    /// Replays every transaction of `block` (the next of the stretch) under `tracer`, on the
    /// carried state. The returned replay holds the state the block ran on; hand it back with
    /// [`Stretch::carry_on`] before the next block.
    pub fn replay(
        &mut self,
        block: &RpcBlock,
        env: &EvmEnv,
        tracer: &TracerSpec,
    ) -> Result<BlockReplay, super::Error> {
        let n = block.info.number;
        let continues = self.carry && follows(self.after, block);
        let mut snap = if continues {
            std::mem::replace(&mut self.state, StateSnapshot::partial())
        } else {
            self.ahead.retain(|&k, _| k >= n);
            StateSnapshot::partial()
        };
        if let Some(ahead) = self.ahead.remove(&n) {
            snap.absorb(ahead);
        }
        let parent = self.source.parent_at(&block.info);
        let mut driver = Driver::new(self.source, &parent);
        // On the state carried from the block before, or found by `discover`, the block's
        // first pass is its traced one: what the transactions read is mostly there already.
        driver.settled = continues || self.looked == Some(n);
        driver.prefetch(&mut snap, &block.txs, env)?;
        let r = super::remote::drive_txs(&mut driver, snap, &block.txs, env, 0, tracer, None)?;
        self.passes += driver.passes;
        Ok(r)
    }

    /// Takes back the state `r` ran on, with the block's writes, as the next block's pre-state
    /// (less what changes between blocks: see the module docs).
    pub fn carry_on(&mut self, block: &RpcBlock, r: &mut BlockReplay) {
        if !self.carry {
            self.after = None;
            return;
        }
        self.state = std::mem::replace(&mut r.snapshot, StateSnapshot::partial());
        self.state.carry(&r.post);
        self.forget_after(block);
    }

    /// Forgets what changes after `block`'s transactions and marks the carried state as
    /// standing after it ([`stand_after`]).
    fn forget_after(&mut self, block: &RpcBlock) {
        stand_after(&mut self.state, &mut self.after, block);
    }
}

/// Moves `state`, with `block`'s transactions run on it, to stand after `block` (`after`):
/// forgets what changes after the transactions ([`changed_after`]); a block with ommers ends
/// the carrying (nothing kept, standing after no block).
fn stand_after(
    state: &mut StateSnapshot,
    after: &mut Option<(u64, Option<B256>)>,
    block: &RpcBlock,
) {
    if block.uncles > 0 {
        *after = None;
        *state = StateSnapshot::partial();
        return;
    }
    state.forget(&changed_after(block));
    *after = Some((block.info.number, block.info.hash));
}

/// Accounts whose state changes between `block`'s last transaction and the next block's first,
/// outside any transaction: the system contracts (written at a block's start or end), the
/// withdrawals' recipients, and before the merge the miner.
fn changed_after(block: &RpcBlock) -> Vec<Address> {
    let mut changed = SYSTEM_CONTRACTS.to_vec();
    changed.extend_from_slice(&block.withdrawals);
    if !block.info.difficulty.is_zero() {
        changed.push(block.info.coinbase);
    }
    changed
}

/// Whether `block` follows the block `after` (number, hash) on one chain: the next number,
/// and its parent hash that block's where both are known (a reorg between two reads of a range
/// breaks the link, and the carried state with it).
fn follows(after: Option<(u64, Option<B256>)>, block: &RpcBlock) -> bool {
    match after {
        Some((n, hash)) => {
            n.wrapping_add(1) == block.info.number
                && match (hash, block.info.parent_hash) {
                    (Some(h), Some(p)) => h == p,
                    _ => true,
                }
        }
        None => false,
    }
}
