//! What a transaction changed in storage, by variable: each slot it wrote whose value differs
//! after it, named and decoded by the storage layout of the contract's artifact
//! ([`super::layout`]), in the order the transaction first wrote them; a slot no layout names
//! is kept raw (its words), with the reason.

use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, U256};

use super::layout::{Part, Shown, StorageLayout};
use super::{code_of, Names};
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
        let mut known: BTreeMap<Address, Known> = BTreeMap::new();
        let mut out = StateChanges::default();
        for r in writes {
            let slot = r.slot.unwrap_or_default();
            let k = known
                .entry(r.address)
                .or_insert_with(|| self.known(state, &r.address, &mut out.notes));
            let raw = |reason: &str| StateChange {
                address: r.address,
                contract: k.contract.clone(),
                slot,
                var: None,
                raw: Some(reason.to_string()),
                before: word(r.before),
                after: word(r.after),
            };
            let layout = match &k.layout {
                Ok(l) => l,
                Err(why) => {
                    out.changes.push(raw(why));
                    continue;
                }
            };
            let vars = layout.vars_at(slot, preimages);
            if vars.is_empty() {
                out.changes
                    .push(raw("not named by its layout from this run's hashes"));
                continue;
            }
            let enums = |e: &str| k.enums.iter().find(|(n, _)| n == e).map(|(_, m)| m.clone());
            let before_len = out.changes.len();
            for v in vars {
                if layout.bits(&v, r.before) == layout.bits(&v, r.after) {
                    continue;
                }
                out.changes.push(StateChange {
                    address: r.address,
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
                    before: layout.show(&v, r.before, &enums),
                    after: layout.show(&v, r.after, &enums),
                });
            }
            if out.changes.len() == before_len {
                out.changes
                    .push(raw("the bytes that changed hold no variable of its layout"));
            }
        }
        out
    }

    /// The artifact and layout naming the contract at `addr`, or why there is none; a
    /// malformed layout adds a note.
    fn known(&self, state: &StateSnapshot, addr: &Address, notes: &mut Vec<String>) -> Known {
        let none = |why: &str| Known {
            contract: None,
            layout: Err(why.to_string()),
            enums: Vec::new(),
        };
        let Some(code) = code_of(state, addr) else {
            return none("no code before the transaction to match an artifact to");
        };
        let Some(a) = self.artifact_for_code(&code) else {
            return none("no loaded artifact matches its code");
        };
        let contract = (!a.name.is_empty()).then(|| a.name.clone());
        let layout = match &a.storage_layout {
            None => Err(format!("the artifact {} has no storageLayout", a.name)),
            Some(v) => StorageLayout::parse(v).map_err(|e| {
                notes.push(format!(
                    "the storageLayout of {} is malformed ({e}): the slots of {} are shown raw",
                    a.name,
                    addr.to_checksum(None)
                ));
                format!("the storageLayout of {} is malformed", a.name)
            }),
        };
        let enums = a
            .sources
            .iter()
            .flat_map(|s| s.unit.files.values())
            .flat_map(|f| f.enums.iter().cloned())
            .collect();
        Known {
            contract,
            layout,
            enums,
        }
    }
}
