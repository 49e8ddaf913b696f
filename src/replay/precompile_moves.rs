//! `eth_simulateV1`'s state overrides of precompiles, as go-ethereum's
//! `override.StateOverride.Apply` makes them (`internal/ethapi/override/override.go`): any
//! override of a precompile's address (code, balance, anything) takes the precompile away for
//! that block, so that its account runs as any other; `movePrecompileToAddress` puts it at
//! another address first. geth warms the fork's own precompile addresses nonetheless
//! (`StateDB.Prepare` with `vm.ActivePrecompiles(rules)`), which [`Modified::warm`] gives the
//! run's first frame.
//!
//! revm keeps a precompile set by `&'static` reference and a precompile's function privately, so
//! a modified set is made once per distinct modification and kept for the life of the process
//! (at most [`MAX_SETS`] of them; past that, requests needing a new one are refused), and a
//! moved precompile runs through one of [`MAX_MOVES`] slot functions, each calling the
//! precompile its run put in this thread's slot.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use alloy_primitives::Address;
use revm::precompile::{Precompile, PrecompileError, PrecompileFn, PrecompileResult, Precompiles};
use revm::primitives::AddressSet;

/// The most precompiles one block may move.
pub const MAX_MOVES: usize = 16;
/// The most distinct modified sets the process keeps.
pub const MAX_SETS: usize = 256;

/// A block's precompile set with overrides applied.
pub struct Modified {
    pub set: Precompiles,
    /// The precompile each slot function runs (slot `k`: the `k`-th move's).
    slots: Vec<Precompile>,
    /// The addresses the fork's own set warms.
    pub warm: &'static AddressSet,
}

impl std::fmt::Debug for Modified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Modified")
            .field("set", &self.set.addresses().collect::<Vec<_>>())
            .finish()
    }
}

thread_local! {
    static SLOTS: RefCell<Vec<Precompile>> = const { RefCell::new(Vec::new()) };
}

impl Modified {
    /// Points this thread's slot functions at this set's moved precompiles (before a run).
    pub fn install_slots(&self) {
        SLOTS.with(|s| s.borrow_mut().clone_from(&self.slots));
    }
}

fn run_slot(k: usize, input: &[u8], gas: u64, reservoir: u64) -> PrecompileResult {
    match SLOTS.with(|s| s.borrow().get(k).cloned()) {
        Some(p) => p.execute(input, gas, reservoir),
        None => Err(PrecompileError::Fatal(format!(
            "moved precompile slot {k} is not installed"
        ))),
    }
}

macro_rules! slots {
    ($($name:ident = $k:expr),* $(,)?) => {
        $(fn $name(input: &[u8], gas: u64, reservoir: u64) -> PrecompileResult {
            run_slot($k, input, gas, reservoir)
        })*
        const SLOT_FNS: [PrecompileFn; MAX_MOVES] = [$($name),*];
    };
}

slots!(
    s0 = 0,
    s1 = 1,
    s2 = 2,
    s3 = 3,
    s4 = 4,
    s5 = 5,
    s6 = 6,
    s7 = 7,
    s8 = 8,
    s9 = 9,
    s10 = 10,
    s11 = 11,
    s12 = 12,
    s13 = 13,
    s14 = 14,
    s15 = 15,
);

/// What the overrides do to the precompiles: removed addresses, and moves (to, from).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Plan {
    pub removed: Vec<Address>,
    pub moves: Vec<(Address, Address)>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.moves.is_empty()
    }
}

/// geth's `StateOverride.Apply` over `active`, in address order: `accounts` are the overridden
/// addresses, sorted, each with its `movePrecompileToAddress`; the errors are geth's texts.
pub fn plan(accounts: &[(Address, Option<Address>)], active: &Precompiles) -> Result<Plan, String> {
    let mut out = Plan::default();
    let mut dirty: Vec<Address> = Vec::new();
    for (addr, move_to) in accounts {
        if dirty.contains(addr) {
            return Err(format!(
                "account {} has already been overridden by a precompile",
                addr.to_checksum(None)
            ));
        }
        let is_precompile = active.contains(addr);
        if let Some(to) = move_to {
            if !is_precompile {
                return Err(format!(
                    "account {} is not a precompile",
                    addr.to_checksum(None)
                ));
            }
            if accounts.iter().any(|(a, _)| a == to) {
                return Err(format!(
                    "account {} is already overridden",
                    to.to_checksum(None)
                ));
            }
            out.moves.push((*to, *addr));
            dirty.push(*to);
        }
        if is_precompile {
            out.removed.push(*addr);
        }
    }
    if out.moves.len() > MAX_MOVES {
        return Err(format!(
            "at most {MAX_MOVES} precompiles can be moved in one block"
        ));
    }
    Ok(out)
}

type Key = (usize, Plan);

/// The set `plan` makes of `active` (made once per process, see the module's comment).
pub fn modified(active: &'static Precompiles, plan: &Plan) -> Result<&'static Modified, String> {
    static SETS: OnceLock<Mutex<HashMap<Key, &'static Modified>>> = OnceLock::new();
    let key = (active as *const Precompiles as usize, plan.clone());
    let mut sets = SETS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(m) = sets.get(&key) {
        return Ok(m);
    }
    if sets.len() >= MAX_SETS {
        return Err(format!(
            "this server has made {MAX_SETS} distinct precompile overrides, its limit; restart \
             it for more"
        ));
    }
    let mut removed = Precompiles::default();
    removed.extend(plan.removed.iter().filter_map(|a| active.get(a).cloned()));
    let mut set = active.difference(&removed);
    let mut slots = Vec::new();
    for (k, (to, from)) in plan.moves.iter().enumerate() {
        let Some(p) = active.get(from).cloned() else {
            continue;
        };
        set.extend([Precompile::new(p.id().clone(), *to, SLOT_FNS[k])]);
        slots.push(p);
    }
    let m: &'static Modified = Box::leak(Box::new(Modified {
        set,
        slots,
        warm: active.addresses_set(),
    }));
    sets.insert(key, m);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, hex};
    use revm::precompile::PrecompileSpecId;

    #[test]
    fn moved_precompiles_run_at_their_new_address_and_leave_the_old_one() {
        let active = Precompiles::new(PrecompileSpecId::CANCUN);
        let ecrecover = address!("0000000000000000000000000000000000000001");
        let sha256 = address!("0000000000000000000000000000000000000002");
        let to = address!("0000000000000000000000000000000000123456");
        let plan = plan(&[(ecrecover, Some(to)), (sha256, None)], active).unwrap();
        assert_eq!(plan.removed, vec![ecrecover, sha256]);
        assert_eq!(plan.moves, vec![(to, ecrecover)]);
        let m = modified(active, &plan).unwrap();
        assert!(std::ptr::eq(m, modified(active, &plan).unwrap()));
        assert!(!m.set.contains(&ecrecover) && !m.set.contains(&sha256));
        assert!(m.warm.contains(&ecrecover));
        m.install_slots();
        // ecrecover of a zero signature recovers nothing; the moved one answers the same.
        let input = hex!("00");
        let here = m.set.get(&to).unwrap().execute(&input, 10_000, 0).unwrap();
        let there = active
            .get(&ecrecover)
            .unwrap()
            .execute(&input, 10_000, 0)
            .unwrap();
        assert_eq!((here.gas_used, here.bytes), (there.gas_used, there.bytes));

        let bad = [(
            address!("c000000000000000000000000000000000000000"),
            Some(to),
        )];
        assert_eq!(
            super::plan(&bad, active).unwrap_err(),
            "account 0xC000000000000000000000000000000000000000 is not a precompile"
        );
    }
}
