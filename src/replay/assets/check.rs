//! The native changes, read from value transfers and fees, against the balances a state diff
//! shows (the prestateTracer's `diffMode` of the same replay): the two are found independently,
//! so agreement checks the transfer and fee rules.

use std::collections::BTreeMap;

use alloy_primitives::{Address, U256};

use super::{AssetChanges, Flow};
use crate::trace::prestate::PrestateResult;

/// Each account's balance change in a `diffMode` result: geth's `post` lists only what changed
/// (an absent balance is unchanged), and an account in `pre` but not in `post` was deleted.
pub fn balance_deltas(diff: &PrestateResult) -> BTreeMap<Address, Flow> {
    let mut out = BTreeMap::new();
    let PrestateResult::Diff { pre, post } = diff else {
        return out;
    };
    let accounts: std::collections::BTreeSet<&Address> = pre.keys().chain(post.keys()).collect();
    for a in accounts {
        let before = pre.get(a).and_then(|s| s.balance).unwrap_or_default();
        let after = match post.get(a) {
            Some(s) => s.balance.unwrap_or(before),
            None => U256::ZERO,
        };
        let f = Flow {
            credit: after,
            debit: before,
        };
        if !f.is_zero() {
            out.insert(*a, f);
        }
    }
    out
}

/// Where the native changes differ from the diff's balances: `address: assets X, diff Y`.
pub fn compare_with_diff(c: &AssetChanges, diff: &PrestateResult) -> Vec<String> {
    let from_diff = balance_deltas(diff);
    let mine: BTreeMap<Address, Flow> = c
        .native
        .iter()
        .map(|n| (n.address, n.total()))
        .filter(|(_, f)| !f.is_zero())
        .collect();
    let mut out = Vec::new();
    let keys: std::collections::BTreeSet<&Address> = from_diff.keys().chain(mine.keys()).collect();
    for a in keys {
        let x = mine.get(a).map_or("0".to_string(), Flow::decimal);
        let y = from_diff.get(a).map_or("0".to_string(), Flow::decimal);
        if x != y {
            out.push(format!("{a:#x}: asset changes {x} wei, state diff {y} wei"));
        }
    }
    out
}
