//! Which contracts a trace touched, and which of them are proxies of which implementation.
//!
//! A proxy is recognised two ways: its EIP-1967 implementation slot or EIP-1822 `PROXIABLE`
//! slot holds an address in the replayed state (the snapshot holds every slot the replay read,
//! and a proxy reads its slot to forward), or it DELEGATECALLs with its own calldata in this
//! trace (which also covers beacon proxies, whose implementation comes from the beacon).

use std::collections::BTreeMap;

use alloy_primitives::{b256, Address, Bytes, B256, U256};

use crate::replay::TraceResult;
use crate::source::StateSnapshot;
use crate::trace::call::{CallFrame, CallKind};

/// `bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)`.
pub const EIP1967_IMPLEMENTATION: B256 =
    b256!("360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc");
/// `bytes32(uint256(keccak256("eip1967.proxy.admin")) - 1)`.
pub const EIP1967_ADMIN: B256 =
    b256!("b53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103");
/// `bytes32(uint256(keccak256("eip1967.proxy.beacon")) - 1)`.
pub const EIP1967_BEACON: B256 =
    b256!("a3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50");

/// The EIP-1967 slot `slot` is, by the text its hash is of (`eip1967.proxy.implementation`,
/// `…admin`, `…beacon`): named so on any contract.
pub fn eip1967_slot(slot: U256) -> Option<&'static str> {
    let s = B256::from(slot.to_be_bytes::<32>());
    [
        (EIP1967_IMPLEMENTATION, "eip1967.proxy.implementation"),
        (EIP1967_ADMIN, "eip1967.proxy.admin"),
        (EIP1967_BEACON, "eip1967.proxy.beacon"),
    ]
    .into_iter()
    .find_map(|(k, name)| (k == s).then_some(name))
}

/// The implementation a proxy's EIP-1967 slot holds in `state`.
pub fn eip1967_implementation(state: &StateSnapshot, proxy: Address) -> Option<Address> {
    slot_address(state, proxy, EIP1967_IMPLEMENTATION)
}

/// `keccak256("PROXIABLE")` (EIP-1822).
pub const EIP1822_PROXIABLE: B256 =
    b256!("c5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7");

/// Contracts of one trace: address → runtime code when the trace created it (a CREATE frame's
/// output), and the (proxy, implementation) pairs seen as DELEGATECALLs forwarding calldata.
#[derive(Debug, Default)]
pub struct Touched {
    pub contracts: BTreeMap<Address, Option<Bytes>>,
    pub delegations: Vec<(Address, Address)>,
}

/// The contracts a call tree or gas report touched.
pub fn touched(result: &TraceResult) -> Touched {
    let mut t = Touched::default();
    match result {
        TraceResult::Call(root) => walk(root, None, &mut t),
        TraceResult::Gas(report) => {
            for f in &report.frames {
                t.contracts.entry(f.code_address).or_insert(None);
                let parent = f.parent.and_then(|p| report.frames.get(p));
                if let Some(p) = parent {
                    if f.kind == CallKind::Delegatecall && f.input == p.input {
                        t.delegations.push((p.code_address, f.code_address));
                    }
                }
            }
        }
        _ => {}
    }
    t
}

fn walk(f: &CallFrame, parent_input: Option<&Bytes>, t: &mut Touched) {
    if let Some(to) = f.to {
        let created = matches!(f.kind, CallKind::Create | CallKind::Create2) && f.error.is_none();
        let code = created.then(|| f.output.clone()).flatten();
        match t.contracts.get_mut(&to) {
            Some(slot) if slot.is_none() => *slot = code,
            Some(_) => {}
            None => {
                t.contracts.insert(to, code);
            }
        }
        if f.kind == CallKind::Delegatecall && parent_input == Some(&f.input) {
            t.delegations.push((f.from, to));
        }
    }
    for c in &f.calls {
        walk(c, Some(&f.input), t);
    }
}

fn slot_address(state: &StateSnapshot, addr: Address, slot: B256) -> Option<Address> {
    let v = state.storage.get(&(addr, U256::from_be_bytes(slot.0)))?;
    let word = v.to_be_bytes::<32>();
    let a = Address::from_slice(&word[12..]);
    (word[..12].iter().all(|b| *b == 0) && !a.is_zero()).then_some(a)
}

/// (proxy, implementation) pairs among the touched contracts.
pub fn implementations(t: &Touched, state: &StateSnapshot) -> Vec<(Address, Address)> {
    let mut out = Vec::new();
    for addr in t.contracts.keys() {
        for slot in [EIP1967_IMPLEMENTATION, EIP1822_PROXIABLE] {
            if let Some(imp) = slot_address(state, *addr, slot) {
                out.push((*addr, imp));
                break;
            }
        }
    }
    for pair in &t.delegations {
        if !out.iter().any(|(p, _)| *p == pair.0) {
            out.push(*pair);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eip1967_slots_are_their_texts_hash_minus_one() {
        for name in ["implementation", "admin", "beacon"] {
            let text = format!("eip1967.proxy.{name}");
            let slot = U256::from_be_bytes(alloy_primitives::keccak256(&text).0) - U256::from(1);
            assert_eq!(eip1967_slot(slot), Some(text.as_str()));
        }
        assert_eq!(eip1967_slot(U256::ZERO), None);
    }

    #[test]
    fn implementation_slots_and_forwarding_delegatecalls() {
        let (proxy, imp, uups, other) = (
            Address::repeat_byte(1),
            Address::repeat_byte(2),
            Address::repeat_byte(3),
            Address::repeat_byte(4),
        );
        let mut state = StateSnapshot::partial();
        state.insert_slot(
            proxy,
            U256::from_be_bytes(EIP1967_IMPLEMENTATION.0),
            U256::from_be_slice(imp.as_slice()),
        );
        state.insert_slot(
            uups,
            U256::from_be_bytes(EIP1822_PROXIABLE.0),
            U256::from_be_slice(imp.as_slice()),
        );
        // A word with dirty upper bytes is not an address.
        state.insert_slot(
            other,
            U256::from_be_bytes(EIP1967_IMPLEMENTATION.0),
            U256::MAX,
        );
        let mut t = Touched::default();
        for a in [proxy, uups, other] {
            t.contracts.insert(a, None);
        }
        t.delegations.push((other, imp));
        let pairs = implementations(&t, &state);
        assert_eq!(pairs, vec![(proxy, imp), (uups, imp), (other, imp)]);
    }
}
