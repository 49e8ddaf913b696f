//! The node's prestate diff, and the corrections it makes to a pass's state: what the
//! chain's precompiles changed beneath the EVM, written into the journal at the first spliced
//! frame.

use alloy_primitives::{Address, Bytes, B256, U256};
pub use alloy_rpc_types_trace::geth::DiffMode;
use revm::context_interface::journaled_state::account::JournaledAccountTr;
use revm::context_interface::{ContextTr, JournalTr};
use revm::state::{Bytecode, EvmState};
use serde::Deserialize;
use serde_json::Value;

/// Reads the node's `prestateTracer` result in diff mode (geth's `{pre: {addr: {balance, nonce,
/// code, storage}}, post: …}`, where a field left out is unchanged in `post` and zero in `pre`)
/// with alloy's geth trace types; `None` when the answer is not that shape.
pub fn read_node_diff(v: &Value) -> Option<DiffMode> {
    DiffMode::deserialize(v).ok()
}

/// A change the node's precompiles made that the local replay cannot make by itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Balance plus `add` minus `sub` (a difference, so EVM transfers after the frame still
    /// apply).
    Balance {
        address: Address,
        add: U256,
        sub: U256,
    },
    Nonce {
        address: Address,
        nonce: u64,
    },
    Code {
        address: Address,
        code: Bytes,
    },
    Storage {
        address: Address,
        slot: B256,
        value: B256,
    },
}

impl Correction {
    pub fn address(&self) -> Address {
        match self {
            Correction::Balance { address, .. }
            | Correction::Nonce { address, .. }
            | Correction::Code { address, .. }
            | Correction::Storage { address, .. } => *address,
        }
    }
}

/// Every field of `diff.post` that `state` (a pass's final state) ends with a different value,
/// except the accounts in `skip`; each flagged `true` when the pass left the field at the
/// node's pre-state value (a balance, nonce or code) or never touched it (a slot): only the
/// node's precompile changed it, so it can be corrected. A field the replay itself changed is a
/// divergence to report, not to overwrite.
pub fn differences(diff: &DiffMode, state: &EvmState, skip: &[Address]) -> Vec<(Correction, bool)> {
    let mut out = Vec::new();
    // alloy's account of the node's answer, where a field left out of `post` is unchanged
    // (the local prestateTracer writes geth's own shape, `trace::prestate::AccountState`).
    let empty = alloy_rpc_types_trace::geth::AccountState::default();
    for (&address, want) in &diff.post {
        if skip.contains(&address) {
            continue;
        }
        let pre = diff.pre.get(&address).unwrap_or(&empty);
        let local = state.get(&address);
        if let Some(n) = want.balance {
            let p = pre.balance.unwrap_or_default();
            let l = local.map_or(p, |a| a.info.balance);
            if l != n {
                let c = Correction::Balance {
                    address,
                    add: n.saturating_sub(l),
                    sub: l.saturating_sub(n),
                };
                out.push((c, l == p));
            }
        }
        if let Some(n) = want.nonce {
            let p = pre.nonce.unwrap_or_default();
            let l = local.map_or(p, |a| a.info.nonce);
            if l != n {
                out.push((Correction::Nonce { address, nonce: n }, l == p));
            }
        }
        if let Some(n) = &want.code {
            let p = pre.code.clone().unwrap_or_default();
            let l = local
                .and_then(|a| a.info.code.as_ref())
                .map(|c| c.original_bytes())
                .unwrap_or_else(|| p.clone());
            if &l != n {
                let c = Correction::Code {
                    address,
                    code: n.clone(),
                };
                out.push((c, l == p));
            }
        }
        for (&slot, &n) in &want.storage {
            let p = pre.storage.get(&slot).copied().unwrap_or_default();
            // A slot the replay accessed may have been written with its old value, which the
            // final state cannot tell from a read: only slots it never touched are corrected.
            let touched = local.and_then(|a| a.storage.get(&U256::from_be_bytes(slot.0)));
            let l = touched.map_or(p, |s| B256::from(s.present_value.to_be_bytes()));
            if l != n {
                let c = Correction::Storage {
                    address,
                    slot,
                    value: n,
                };
                out.push((c, touched.is_none()));
            }
        }
    }
    out
}

/// Writes `corrections` into the journal, leaving what was cold cold.
pub(super) fn correct<CTX>(ctx: &mut CTX, corrections: &[Correction])
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState>>,
{
    let journal = ctx.journal_mut();
    for c in corrections {
        let address = c.address();
        let was_cold = {
            let Ok(load) = journal.load_account_mut(address) else {
                continue;
            };
            let was_cold = load.is_cold;
            let mut account = load.data;
            match c {
                Correction::Balance { add, sub, .. } => {
                    if !add.is_zero() {
                        account.incr_balance(*add);
                    }
                    if !sub.is_zero() {
                        let b = *account.balance();
                        account.set_balance(b.saturating_sub(*sub));
                    }
                }
                Correction::Nonce { nonce, .. } => account.set_nonce(*nonce),
                Correction::Code { code, .. } => {
                    account.set_code_and_hash_slow(Bytecode::new_raw(code.clone()))
                }
                Correction::Storage { .. } => {}
            }
            was_cold
        };
        if let Correction::Storage { slot, value, .. } = c {
            let key = U256::from_be_bytes(slot.0);
            if let Ok(r) = journal.sstore(address, key, U256::from_be_bytes(value.0)) {
                if r.is_cold {
                    if let Some(s) = journal
                        .evm_state_mut()
                        .get_mut(&address)
                        .and_then(|a| a.storage.get_mut(&key))
                    {
                        s.mark_cold();
                    }
                }
            }
        }
        if was_cold {
            if let Some(a) = journal.evm_state_mut().get_mut(&address) {
                a.mark_cold();
            }
        }
    }
}
