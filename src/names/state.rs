//! What a transaction changed in storage, by variable: each slot it wrote whose value differs
//! after it, named and decoded by the storage layout of the contract's artifact
//! ([`super::layout`]), in the order the transaction first wrote them; a slot no layout names
//! is kept raw (its words), with the reason.
//!
//! [`Namer`] names any slot (reads too, for `access`): the EIP-1967 proxy slots on any contract
//! ([`super::proxy::eip1967_slot`]); a proxy's storage (its code matching no artifact with
//! variables of its own, its EIP-1967 implementation slot holding a contract whose code matches
//! one) by the implementation's layout; ERC-7201 namespaces from the AST
//! ([`super::namespaces`]) beside solc's `storageLayout`.

use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, U256};

use super::layout::{Part, Shown, StorageLayout};
use super::{code_of, proxy, Artifact, Names};
use crate::replay::access::{Access, Preimages};
use crate::source::StateSnapshot;

/// One variable a transaction changed, or one raw slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateChange {
    pub address: Address,
    /// The artifact's contract name, where one matched the code.
    pub contract: Option<String>,
    pub slot: U256,
    /// The variable, where the layout names the slot; `None`: raw.
    pub var: Option<Named>,
    /// Why the slot is raw.
    pub raw: Option<String>,
    /// The value before and after: decoded by type when named, the slot's words when raw.
    pub before: Shown,
    pub after: Shown,
}

/// A changed variable: its name, where it lies and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The storage variable's name (`_balances`).
    pub variable: String,
    /// Mapping keys, array indices and struct members from it down.
    pub key_path: Vec<String>,
    /// The whole name: `_allowances[0x…][0x…]`.
    pub name: String,
    /// solc's label of the value's type.
    pub ty: String,
    /// The value's byte offset in its slot.
    pub offset: u64,
    /// `length` for a dynamic array's length, `data word N` for a long string's data.
    pub part: Option<String>,
}

/// A transaction's storage changes, and notes for stderr (a malformed layout).
#[derive(Clone, Debug, Default)]
pub struct StateChanges {
    pub changes: Vec<StateChange>,
    pub notes: Vec<String>,
}

fn word(v: U256) -> Shown {
    Shown {
        text: B256::from(v).to_string(),
        short: None,
    }
}

/// What names one contract's slots: its artifact's name and checked layout, or why none.
struct Known {
    contract: Option<String>,
    layout: Result<StorageLayout, String>,
    enums: Vec<(String, Vec<String>)>,
}

impl Names {
    /// Whether any loaded artifact carries a `storageLayout`: only then are state changes
    /// worked out.
    pub fn has_layouts(&self) -> bool {
        self.index
            .artifacts
            .iter()
            .any(|a| a.storage_layout.is_some())
    }

    /// The storage changes among `rows` (an access run's), named by the layouts of the
    /// artifacts matching each contract's code in `state` (the pre-state), keys exact from the
    /// run's `preimages`: written slots whose value differs after the transaction, in the order
    /// it first wrote them; a packed slot gives each variable whose bytes changed.
    pub fn state_changes(
        &self,
        state: &StateSnapshot,
        rows: &[Access],
        preimages: &Preimages,
    ) -> StateChanges {
        let mut writes: Vec<&Access> = rows
            .iter()
            .filter(|r| r.written && !r.transient && r.slot.is_some() && r.before != r.after)
            .collect();
        writes.sort_by_key(|r| r.write_order);
        let mut namer = Namer::new(self, state, preimages);
        let mut changes = Vec::new();
        for r in writes {
            let slot = r.slot.unwrap_or_default();
            changes.extend(namer.slot(r.address, slot, r.before, r.after, true));
        }
        StateChanges {
            changes,
            notes: namer.notes,
        }
    }
}

/// Names the slots of one run's contracts: each contract's layout found once (a malformed
/// one noted once), keys exact from the run's preimages.
pub struct Namer<'a> {
    names: &'a Names,
    state: &'a StateSnapshot,
    preimages: &'a Preimages,
    known: BTreeMap<Address, Known>,
    /// For stderr: a malformed layout, a namespace not laid out.
    pub notes: Vec<String>,
}

fn address_word(v: U256) -> Shown {
    let w = v.to_be_bytes::<32>();
    match w[..12].iter().all(|b| *b == 0) {
        true => Shown {
            text: Address::from_slice(&w[12..]).to_checksum(None),
            short: None,
        },
        false => word(v),
    }
}

impl<'a> Namer<'a> {
    /// A namer over `state` (the pre-state the contracts' code and proxies' implementations
    /// are read from) and the run's `preimages`.
    pub fn new(names: &'a Names, state: &'a StateSnapshot, preimages: &'a Preimages) -> Self {
        Namer {
            names,
            state,
            preimages,
            known: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// The variables storage `slot` of `address` holds, each with its value in `before` and
    /// `after`: with `changed`, only those whose own bytes differ. One raw entry, with the
    /// reason, where nothing names the slot.
    pub fn slot(
        &mut self,
        address: Address,
        slot: U256,
        before: U256,
        after: U256,
        changed: bool,
    ) -> Vec<StateChange> {
        if !self.known.contains_key(&address) {
            let k = self.known_for(&address);
            self.known.insert(address, k);
        }
        let k = &self.known[&address];
        let raw = |reason: &str| StateChange {
            address,
            contract: k.contract.clone(),
            slot,
            var: None,
            raw: Some(reason.to_string()),
            before: word(before),
            after: word(after),
        };
        if let Some(name) = proxy::eip1967_slot(slot) {
            return vec![StateChange {
                address,
                contract: k.contract.clone(),
                slot,
                var: Some(Named {
                    variable: name.to_string(),
                    key_path: Vec::new(),
                    name: name.to_string(),
                    ty: "address".into(),
                    offset: 0,
                    part: None,
                }),
                raw: None,
                before: address_word(before),
                after: address_word(after),
            }];
        }
        let layout = match &k.layout {
            Ok(l) => l,
            Err(why) => return vec![raw(why)],
        };
        let vars = layout.vars_at(slot, self.preimages);
        if vars.is_empty() {
            return vec![raw("not named by its layout from this run's hashes")];
        }
        let enums = |e: &str| k.enums.iter().find(|(n, _)| n == e).map(|(_, m)| m.clone());
        let mut out = Vec::new();
        for v in vars {
            if changed && layout.bits(&v, before) == layout.bits(&v, after) {
                continue;
            }
            out.push(StateChange {
                address,
                contract: k.contract.clone(),
                slot,
                var: Some(Named {
                    variable: v.variable.clone(),
                    key_path: v.key_path(),
                    name: v.name(),
                    ty: layout.label(&v.ty).to_string(),
                    offset: v.offset,
                    part: match v.part {
                        Part::Value => None,
                        Part::Length => Some("length".into()),
                        Part::Data(n) => Some(format!("data word {n}")),
                    },
                }),
                raw: None,
                before: layout.show(&v, before, &enums),
                after: layout.show(&v, after, &enums),
            });
        }
        if out.is_empty() {
            out.push(raw("the bytes that changed hold no variable of its layout"));
        }
        out
    }

    /// The artifact and layout naming the contract at `addr`, or why there is none: its own
    /// artifact's, or, for a proxy whose own artifact declares no variables (or none matches),
    /// its EIP-1967 implementation's. A malformed layout adds a note.
    fn known_for(&mut self, addr: &Address) -> Known {
        let none = |why: &str| Known {
            contract: None,
            layout: Err(why.to_string()),
            enums: Vec::new(),
        };
        let Some(code) = code_of(self.state, addr) else {
            return none("no code before the transaction to match an artifact to");
        };
        let own = self.names.artifact_for_code(&code);
        let declares = |a: &Artifact| {
            a.storage_layout
                .as_ref()
                .and_then(|l| l.get("storage"))
                .and_then(|s| s.as_array())
                .is_some_and(|s| !s.is_empty())
        };
        let implementation = proxy::eip1967_implementation(self.state, *addr)
            .and_then(|i| code_of(self.state, &i))
            .and_then(|c| self.names.artifact_for_code(&c))
            .filter(|a| a.storage_layout.is_some());
        let a = match (own, implementation) {
            (Some(o), _) if declares(o) => o,
            (_, Some(i)) => i,
            (Some(o), None) => o,
            (None, None) => return none("no loaded artifact matches its code"),
        };
        let contract = (!a.name.is_empty()).then(|| a.name.clone());
        let files: Vec<_> = a
            .sources
            .iter()
            .flat_map(|s| s.unit.files.values())
            .collect();
        let asts: Vec<_> = files.iter().map(|f| &f.storage).collect();
        let (with, why) =
            super::namespaces::with_namespaces(a.storage_layout.as_ref(), &a.name, &asts);
        for w in why {
            self.notes.push(format!("{w}: its slots are shown raw"));
        }
        let layout = match &with {
            None => Err(format!("the artifact {} has no storageLayout", a.name)),
            Some(v) => StorageLayout::parse(v).map_err(|e| {
                self.notes.push(format!(
                    "the storageLayout of {} is malformed ({e}): the slots of {} are shown raw",
                    a.name,
                    addr.to_checksum(None)
                ));
                format!("the storageLayout of {} is malformed", a.name)
            }),
        };
        let enums = files.iter().flat_map(|f| f.enums.iter().cloned()).collect();
        Known {
            contract,
            layout,
            enums,
        }
    }
}
