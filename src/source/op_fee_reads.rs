//! The fast path's reads for an OP-stack user transaction (`replay/mined.rs`): what its fees
//! read that the node's prestate lacks, asked in the header's batch, kept in the cache.

use alloy_primitives::B256;
use serde_json::Value;

use super::cache::{Cache, Kind};
use super::error::SourceError;
use super::prestate_rpc::{block_json, h256, merge_json, snapshot_to_json};
use super::rpc::RpcSource;
use super::{Misses, StateSnapshot};

/// What an OP user transaction's fees read that the node's prestate may lack (op-geth's lists
/// only what the transaction's opcodes touched, its sender, recipient and coinbase), and the
/// block whose state holds it exactly: for the first transaction of block `number` (no deposit
/// before it), the parent's L1Block slots and fee vaults; for a later one, the L1Block
/// predeploy's slots at the block itself. Only the L1 attributes deposit that opens a block
/// writes them (L1Block's setters take only the depositor account, which only system deposits
/// send), so they hold from that deposit to the block's end; the receipt's L1 fee fields check
/// them (`replay::selfcheck`). The vaults' balances at a later transaction are known
/// only to a replay of the block's earlier ones: they are not asked (`EvmEnv::skip_unknown_vaults`).
pub fn op_fee_misses(number: u64, index: usize, snapshot: &StateSnapshot) -> (Misses, u64) {
    let (accounts, slots) = crate::chain::op::fee_reads_any();
    let mut m = Misses::default();
    if index == 0 {
        let absent = accounts
            .into_iter()
            .filter(|a| !snapshot.accounts.contains_key(a));
        m.accounts.extend(absent);
    }
    m.slots.extend(
        slots
            .into_iter()
            .filter(|k| !snapshot.storage.contains_key(k)),
    );
    let at = if index == 0 {
        number.saturating_sub(1)
    } else {
        number
    };
    (m, at)
}

/// Block `hash`'s header through the cache, with `fees` ([`op_fee_misses`]: what to read, as of
/// which block) read into `snapshot`: in the header's own batch when the header is fetched,
/// else from the cache's state of that block, else fetched on their own.
pub fn header_and_fees(
    source: &RpcSource,
    cache: Option<&Cache>,
    hash: B256,
    fees: Option<(Misses, u64)>,
    snapshot: &mut StateSnapshot,
) -> Result<Value, SourceError> {
    let Some((misses, at)) = fees else {
        return block_json(source, cache, hash, false);
    };
    let tag = format!("{at:#x}");
    let cached = cache.and_then(|c| c.get(Kind::Header, &format!("{hash:?}")));
    let (head, fetched) = match cached {
        Some(h) => (h, None),
        None => {
            let (h, mut states) = source.header_with_states(hash, &[(&tag, &misses)])?;
            if let Some(c) = cache {
                c.put(Kind::Header, &format!("{hash:?}"), &h);
            }
            (h, states.pop())
        }
    };
    let number = head
        .get("number")
        .and_then(|v| crate::geth::hex::parse_u64(v).ok());
    let held_by = if number == Some(at) {
        Some(hash)
    } else {
        h256(&head, "parentHash")
    };
    let key = held_by.map(|h| format!("{h:?}"));
    let mut state = StateSnapshot::partial();
    if let Some(v) = key.as_ref().and_then(|k| cache?.get(Kind::State, k)) {
        merge_json(&mut state, &v, true);
    }
    // Whether the node was asked: only then has the cached state anything new to keep.
    let asked = match fetched {
        Some(s) => {
            state.absorb(s);
            true
        }
        None => {
            let mut left = Misses::default();
            let missing = |a: &&alloy_primitives::Address| !state.accounts.contains_key(*a);
            left.accounts = misses.accounts.iter().filter(missing).copied().collect();
            let missing = |k: &&(alloy_primitives::Address, alloy_primitives::U256)| {
                !state.storage.contains_key(*k)
            };
            left.slots = misses.slots.iter().filter(missing).copied().collect();
            source.fill(&mut state, &left, &tag)?;
            !left.is_empty()
        }
    };
    for a in &misses.accounts {
        if let Some(d) = state.accounts.get(a) {
            snapshot.insert_account(*a, d.clone());
        }
    }
    for k in &misses.slots {
        if let Some(v) = state.storage.get(k) {
            snapshot.insert_slot(k.0, k.1, *v);
        }
    }
    if let (Some(c), Some(k), true) = (cache, key, asked) {
        c.put(Kind::State, &k, &snapshot_to_json(&state));
    }
    Ok(head)
}
