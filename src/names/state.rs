//! What a transaction changed in storage, by variable: each slot it wrote whose value differs
//! after it, named and decoded by the storage layout of the contract's artifact
//! ([`super::layout`]), in the order the transaction first wrote them; a slot no layout names
//! is kept raw (its words), with the reason.
//!
//! A `bytes`/`string` is one change, whole: its value before and after read from every slot it
//! spans (its length slot and the data words from `keccak256(slot)`, at most
//! [`MAX_SPAN_BYTES`](super::layout::MAX_SPAN_BYTES) of them; the words the transaction did
//! not write read after it, [`Names::span_values`]). Transient storage (TSTORE) is named by the
//! artifact's `transientStorageLayout`: each variable the transaction wrote, from zero (where
//! every transaction starts it) through the values it wrote that stood, marked transient.
//!
//! [`Namer`] names any slot (reads too, for `access`): the EIP-1967 proxy slots on any contract
//! ([`super::proxy::eip1967_slot`]); a proxy's storage (its code matching no artifact with
//! variables of its own, its EIP-1967 implementation slot holding a contract whose code matches
//! one) by the implementation's layout; ERC-7201 namespaces from the AST
//! ([`super::namespaces`]) beside solc's `storageLayout`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use alloy_primitives::{keccak256, Address, B256, U256};
use serde_json::Value;

use super::ast_layout::{self, AstLayouts, AstStorage};
use super::layout::{span_words, spanning_bytes, Part, Shown, StorageLayout, Var};
use super::{code_of, proxy, Artifact, Names};
use crate::replay::access::{Access, Keyed, Preimages, Values};
use crate::source::StateSnapshot;

pub use crate::render::state_changes::{Named, StateChange, StateChanges};

fn word(v: U256) -> Shown {
    Shown {
        text: B256::from(v).to_string(),
        short: None,
    }
}

/// What names one contract's slots: its artifact's name and checked layouts, or why none.
struct Known {
    contract: Option<String>,
    layout: Result<StorageLayout, String>,
    /// Its `transientStorageLayout`.
    transient: Result<StorageLayout, String>,
    enums: Vec<(String, Vec<String>)>,
}

/// The written persistent slots whose value differs after the run, in the order it first wrote
/// them.
fn changed_writes(rows: &[Access]) -> Vec<&Access> {
    let mut writes: Vec<&Access> = rows
        .iter()
        .filter(|r| r.written && !r.transient && r.slot.is_some() && r.before != r.after)
        .collect();
    writes.sort_by_key(|r| r.write_order);
    writes
}

/// Each persistent slot of `rows` with its value before and after the run.
fn row_values(rows: &[Access]) -> BTreeMap<(Address, U256), (U256, U256)> {
    rows.iter()
        .filter(|r| !r.transient)
        .filter_map(|r| Some(((r.address, r.slot?), (r.before, r.after))))
        .collect()
}

/// Where the data of a `bytes`/`string` whose length is at `slot` starts.
fn data_start(slot: U256) -> U256 {
    U256::from_be_bytes(keccak256(slot.to_be_bytes::<32>()).0)
}

/// The values before and after of the slots a whole value is read from.
type Reader<'r> = &'r dyn Fn(Address, U256) -> Option<(U256, U256)>;

/// How a change to a `bytes`/`string` is shown whole: the slots' values, and the values
/// already shown (by address and length slot), each once.
struct Spans<'s> {
    value: Reader<'s>,
    joined: &'s mut BTreeSet<(Address, U256)>,
}

impl Names {
    /// What `make` gives for `key` (a contract and its artifact), made once per run.
    fn laid_out(&self, key: (Address, usize), make: impl FnOnce() -> LaidOut) -> Arc<LaidOut> {
        let hit = self
            .index
            .laid
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned());
        if let Some(hit) = hit {
            return hit;
        }
        let made = Arc::new(make());
        if let Ok(mut m) = self.index.laid.lock() {
            m.insert(key, made.clone());
        }
        made
    }

    /// Whether any loaded artifact carries a `storageLayout`, or the solc metadata one may be
    /// compiled from, or an AST with state variables one may be computed from, or Sourcify is
    /// asked for verified ones: only then are state changes worked out.
    pub fn has_layouts(&self) -> bool {
        self.local_layouts() || self.asks_sourcify()
    }

    /// [`has_layouts`](Self::has_layouts) from the loaded artifacts alone.
    fn local_layouts(&self) -> bool {
        self.layouts_declared() || self.index.artifacts.iter().any(Artifact::may_lay_out)
    }

    /// Whether some loaded artifact declares a layout itself (rather than one compiled from
    /// its metadata when needed).
    pub fn layouts_declared(&self) -> bool {
        self.index.artifacts.iter().any(Artifact::declares_layout)
    }

    /// The slots the by-variable view of an access run's `rows` needs beyond them, read by
    /// `read` on the state after the run (a slot no row lists held the same before it): the
    /// length slot and data words of each `bytes`/`string` whose slots it changed, at most
    /// [`MAX_SPAN_BYTES`](super::layout::MAX_SPAN_BYTES) of data each, before and after.
    pub fn span_values(
        &self,
        state: &StateSnapshot,
        rows: &[Access],
        preimages: &Preimages,
        read: &mut dyn FnMut(Address, U256) -> U256,
    ) -> Values {
        let at = row_values(rows);
        let mut namer = Namer::new(self, state, preimages);
        let mut values = Values::new();
        let mut done = BTreeSet::new();
        for r in changed_writes(rows) {
            let slot = r.slot.unwrap_or_default();
            for base in namer.bytes_slots(r.address, slot) {
                if !done.insert((r.address, base)) {
                    continue;
                }
                let mut get = |s: U256| match at.get(&(r.address, s)) {
                    Some(v) => *v,
                    None => {
                        let v = *values
                            .entry((r.address, s))
                            .or_insert_with(|| read(r.address, s));
                        (v, v)
                    }
                };
                let (b, a) = get(base);
                let start = data_start(base);
                for i in 0..span_words(b).max(span_words(a)) {
                    get(start + U256::from(i));
                }
            }
        }
        values
    }

    /// The storage changes of an access run (`keyed`), named by the layouts of the artifacts
    /// matching each contract's code in `state` (the pre-state), keys exact from the run's
    /// preimages: written slots whose value differs after the transaction, in the order it
    /// first wrote them; a packed slot gives each variable whose bytes changed, a
    /// `bytes`/`string` one change read whole from its slots. Then the transient variables it
    /// wrote, in the same order.
    pub fn state_changes(&self, state: &StateSnapshot, keyed: &Keyed) -> StateChanges {
        let at = row_values(&keyed.rows);
        let value = |a: Address, s: U256| {
            at.get(&(a, s))
                .copied()
                .or_else(|| keyed.values.get(&(a, s)).map(|v| (*v, *v)))
        };
        let mut joined = BTreeSet::new();
        let written: Vec<Address> = keyed
            .rows
            .iter()
            .filter(|r| r.write_order.is_some() || !r.transient_writes.is_empty())
            .map(|r| r.address)
            .collect();
        self.fetch_verified(state, &written);
        let mut namer = Namer::new(self, state, &keyed.preimages);
        let mut changes = Vec::new();
        for r in changed_writes(&keyed.rows) {
            let slot = r.slot.unwrap_or_default();
            let spans = Spans {
                value: &value,
                joined: &mut joined,
            };
            changes.extend(namer.named(r.address, slot, r.before, r.after, true, Some(spans)));
        }
        let mut transient: Vec<&Access> = keyed
            .rows
            .iter()
            .filter(|r| r.transient && !r.transient_writes.is_empty())
            .collect();
        transient.sort_by_key(|r| r.write_order);
        for r in transient {
            let slot = r.slot.unwrap_or_default();
            changes.extend(namer.transient(r.address, slot, &r.transient_writes));
        }
        // Only Sourcify to name by, and it verified none of the contracts written: nothing to
        // say beyond the trace.
        if !self.local_layouts() && !namer.found_any() {
            return StateChanges {
                changes: Vec::new(),
                notes: Vec::new(),
                quiet_if_empty: true,
            };
        }
        StateChanges {
            changes,
            notes: namer.notes,
            quiet_if_empty: !self.layouts_declared(),
        }
    }
}

/// Names the slots of one run's contracts: each contract's layout found once (a malformed
/// one noted once), keys exact from the run's preimages.
pub struct Namer<'a> {
    names: &'a Names,
    state: &'a StateSnapshot,
    preimages: &'a Preimages,
    known: BTreeMap<Address, Arc<Known>>,
    /// For stderr: a malformed layout, a namespace not laid out.
    pub notes: Vec<String>,
}

/// The layouts of artifact `a` computed from its build's ASTs (`asts`, each source's path and
/// declarations): `None` when they do not hold the contract, the reason when they hold it but do
/// not lay it out exactly.
fn computed_layout(
    a: &Artifact,
    asts: &[(&str, &AstStorage)],
) -> Option<Result<AstLayouts, String>> {
    // A combined-JSON key names the source too (`src/Token.sol:Token`); else the metadata's
    // compilation target, when there is metadata.
    let (path, name) = match a.name.rsplit_once(':') {
        Some((p, n)) => (Some(p.to_string()), n),
        None => {
            let target = a
                .sources()
                .and_then(|s| s.metadata.as_deref()?.target())
                .map(str::to_string);
            (target, a.name.as_str())
        }
    };
    ast_layout::contract_layouts(name, path.as_deref(), asts).transpose()
}

impl Namer<'_> {
    /// `note` among the run's notes, once.
    fn note_once(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Whether an artifact (loaded or fetched) matched any contract named so far.
    pub fn found_any(&self) -> bool {
        self.known
            .values()
            .any(|k| k.contract.is_some() || k.layout.is_ok() || k.transient.is_ok())
    }
}

/// Variable `v` of `layout` at `slot` of `address`, its value `before` and `after` shown by type.
#[allow(clippy::too_many_arguments)]
fn change(
    address: Address,
    k: &Known,
    layout: &StorageLayout,
    v: &Var,
    slot: U256,
    before: U256,
    after: U256,
    enums: super::layout::Enums<'_>,
) -> StateChange {
    StateChange {
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
        before: layout.show(v, before, enums),
        after: layout.show(v, after, enums),
        slots: Vec::new(),
        transient: false,
        writes: Vec::new(),
    }
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
        self.named(address, slot, before, after, changed, None)
    }

    fn know(&mut self, address: Address) {
        if !self.known.contains_key(&address) {
            let k = self.known_for(&address);
            self.known.insert(address, k);
        }
    }

    /// The length slots of the `bytes`/`string` variables storage `slot` of `address` holds
    /// (or holds a data word of).
    fn bytes_slots(&mut self, address: Address, slot: U256) -> Vec<U256> {
        self.know(address);
        let Ok(layout) = &self.known[&address].layout else {
            return Vec::new();
        };
        layout
            .vars_at(slot, self.preimages)
            .iter()
            .filter(|v| layout.is_bytes(v))
            .filter_map(|v| layout.bytes_slot(v, slot, self.preimages))
            .collect()
    }

    /// [`slot`](Self::slot); with `spans`, a `bytes`/`string` is one change read whole from
    /// its slots (once, whichever of its slots comes first), or none where its value is the
    /// same.
    fn named(
        &mut self,
        address: Address,
        slot: U256,
        before: U256,
        after: U256,
        changed: bool,
        mut spans: Option<Spans<'_>>,
    ) -> Vec<StateChange> {
        self.know(address);
        let k = &self.known[&address];
        let raw = |reason: &str| StateChange {
            address,
            contract: k.contract.clone(),
            slot,
            var: None,
            raw: Some(reason.to_string()),
            before: word(before),
            after: word(after),
            slots: Vec::new(),
            transient: false,
            writes: Vec::new(),
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
                slots: Vec::new(),
                transient: false,
                writes: Vec::new(),
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
        // A `bytes`/`string` shown whole, or found the same whole.
        let mut whole = false;
        for v in vars {
            if changed && layout.bits(&v, before) == layout.bits(&v, after) {
                continue;
            }
            let base = layout.bytes_slot(&v, slot, self.preimages);
            if let (Some(sp), Some(base), true) = (spans.as_mut(), base, layout.is_bytes(&v)) {
                if let Some((lb, la)) = (sp.value)(address, base) {
                    whole = true;
                    if !sp.joined.insert((address, base)) {
                        continue;
                    }
                    let start = data_start(base);
                    let string = layout.label(&v.ty) == "string";
                    let word_at = |i: u64| (sp.value)(address, start + U256::from(i));
                    let shown_before = spanning_bytes(lb, string, &|i| word_at(i).map(|w| w.0));
                    let shown_after = spanning_bytes(la, string, &|i| word_at(i).map(|w| w.1));
                    if shown_before == shown_after {
                        continue;
                    }
                    let words = span_words(lb).max(span_words(la));
                    let slots = match words {
                        0 => Vec::new(),
                        n => std::iter::once(base)
                            .chain((0..n).map(|i| start + U256::from(i)))
                            .collect(),
                    };
                    let value = Var {
                        part: Part::Value,
                        ..v.clone()
                    };
                    out.push(StateChange {
                        slot: base,
                        slots,
                        before: shown_before,
                        after: shown_after,
                        ..change(address, k, layout, &value, slot, before, after, &enums)
                    });
                    continue;
                }
            }
            out.push(change(address, k, layout, &v, slot, before, after, &enums));
        }
        if out.is_empty() && !whole {
            out.push(raw("the bytes that changed hold no variable of its layout"));
        }
        out
    }

    /// The transient variables transient slot `slot` of `address` holds, each shown from zero
    /// (where every transaction starts it) through the values `writes` (the TSTOREs to the slot
    /// that stood, in order) gave it: those whose own bytes some write changed. One raw entry,
    /// with the reason, where nothing names the slot.
    pub fn transient(&mut self, address: Address, slot: U256, writes: &[U256]) -> Vec<StateChange> {
        self.know(address);
        let k = &self.known[&address];
        let last = writes.last().copied().unwrap_or_default();
        let raw = |reason: &str| {
            let mut seen = Vec::new();
            let mut prev = U256::ZERO;
            for w in writes {
                if *w != prev {
                    seen.push(word(*w));
                    prev = *w;
                }
            }
            StateChange {
                address,
                contract: k.contract.clone(),
                slot,
                var: None,
                raw: Some(reason.to_string()),
                before: word(U256::ZERO),
                after: word(last),
                slots: Vec::new(),
                transient: true,
                writes: seen,
            }
        };
        let layout = match &k.transient {
            Ok(l) => l,
            Err(why) => return vec![raw(why)],
        };
        let vars = layout.vars_at(slot, self.preimages);
        if vars.is_empty() {
            return vec![raw("not a transient variable of its layout")];
        }
        let enums = |e: &str| k.enums.iter().find(|(n, _)| n == e).map(|(_, m)| m.clone());
        let mut out = Vec::new();
        for v in vars {
            let mut seen = Vec::new();
            let mut prev = layout.bits(&v, U256::ZERO);
            for w in writes {
                let b = layout.bits(&v, *w);
                if b != prev {
                    seen.push(layout.show(&v, *w, &enums));
                    prev = b;
                }
            }
            if seen.is_empty() {
                continue;
            }
            out.push(StateChange {
                transient: true,
                writes: seen,
                ..change(address, k, layout, &v, slot, U256::ZERO, last, &enums)
            });
        }
        if out.is_empty() {
            out.push(raw(
                "the bytes written hold no transient variable of its layout",
            ));
        }
        out
    }

    /// The artifact and layout naming the contract at `addr`, or why there is none: its own
    /// artifact's, or, for a proxy whose own artifact declares no variables (or none matches),
    /// its EIP-1967 implementation's. A malformed layout adds a note.
    fn known_for(&mut self, addr: &Address) -> Arc<Known> {
        let none = |why: &str| {
            Arc::new(Known {
                contract: None,
                layout: Err(why.to_string()),
                transient: Err(why.to_string()),
                enums: Vec::new(),
            })
        };
        let Some(code) = code_of(self.state, addr) else {
            return none("no code before the transaction to match an artifact to");
        };
        // Sourcify's verified compilation where no loaded artifact matches
        // ([`Names::fetch_verified`] fetched it).
        let loaded = self.names.artifact_for_code(&code);
        let fetched_own = loaded
            .is_none()
            .then(|| self.names.fetched_for_code(&code))
            .flatten();
        let own = loaded.or(fetched_own.as_deref());
        let declares = |a: &Artifact| {
            [a.storage_layout(), a.transient_layout()].iter().any(|l| {
                l.and_then(|l| l.get("storage"))
                    .and_then(|s| s.as_array())
                    .is_some_and(|s| !s.is_empty())
            })
        };
        let implementation_code =
            proxy::eip1967_implementation(self.state, *addr).and_then(|i| code_of(self.state, &i));
        let fetched_implementation = implementation_code
            .as_ref()
            .and_then(|c| self.names.fetched_for_code(c));
        let implementation = implementation_code
            .as_ref()
            .and_then(|c| self.names.artifact_for_code(c))
            .or(fetched_implementation.as_deref());
        let a = match (own, implementation) {
            (Some(o), _) if declares(o) => o,
            (_, Some(i)) => i,
            (Some(o), None) => o,
            (None, None) => return none("no loaded artifact matches its code"),
        };
        // Laid out once per run for each contract and artifact: the trace's namer and the
        // access run's both ask.
        let key = (*addr, a as *const Artifact as usize);
        let laid = self.names.laid_out(key, || {
            let mut notes = Notes::default();
            let known = Arc::new(lay_out(self.names, addr, a, &mut notes));
            LaidOut { known, notes }
        });
        for (note, once) in &laid.notes.0 {
            match once {
                true => self.note_once(note.clone()),
                false => self.notes.push(note.clone()),
            }
        }
        laid.known.clone()
    }
}

/// A contract laid out, and the notes doing so made (each namer that asks makes them its own).
pub(super) struct LaidOut {
    known: Arc<Known>,
    notes: Notes,
}

/// Notes made while laying out a contract, each with whether it is added once.
#[derive(Default)]
struct Notes(Vec<(String, bool)>);

impl Notes {
    fn note(&mut self, note: String) {
        self.0.push((note, false));
    }

    fn note_once(&mut self, note: String) {
        self.0.push((note, true));
    }
}

/// What names the slots of `addr`, whose artifact (its own or its implementation's) is `a`.
fn lay_out(names: &Names, addr: &Address, a: &Artifact, notes: &mut Notes) -> Known {
    let contract = (!a.name.is_empty()).then(|| a.name.clone());
    // Declared by the build, made ready when it was loaded (its compilation's files are not
    // read here); else compiled from the metadata or computed from the ASTs.
    let undeclared;
    let (with, transient_layout, left_out, enums) = match a.declared() {
        Some(d) => (
            d.namespaced.as_ref().or(a.storage_layout()),
            a.transient_layout(),
            &d.left_out,
            d.enums.clone(),
        ),
        None => {
            undeclared = undeclared_layout(names, a, notes);
            (
                undeclared.storage.as_ref(),
                undeclared.transient.as_ref(),
                &undeclared.left_out,
                undeclared.enums.clone(),
            )
        }
    };
    for w in left_out {
        notes.note(format!("{w}: its slots are shown raw"));
    }
    let layout = match with {
        None => Err(format!("the artifact {} has no storageLayout", a.name)),
        Some(v) => StorageLayout::parse(v).map_err(|e| {
            notes.note(format!(
                "the storageLayout of {} is malformed ({e}): the slots of {} are shown raw",
                a.name,
                addr.to_checksum(None)
            ));
            format!("the storageLayout of {} is malformed", a.name)
        }),
    };
    let transient = match transient_layout {
        None => Err(format!(
            "the artifact {} has no transientStorageLayout",
            a.name
        )),
        Some(v) => StorageLayout::parse(v).map_err(|e| {
            notes.note(format!(
                "the transientStorageLayout of {} is malformed ({e}): the transient slots of {} \
                 are shown raw",
                a.name,
                addr.to_checksum(None)
            ));
            format!("the transientStorageLayout of {} is malformed", a.name)
        }),
    };
    Known {
        contract,
        layout,
        transient,
        enums,
    }
}

/// The layouts of a contract whose build declares none: compiled from its metadata, else
/// computed from its compilation's ASTs by solc's rules; its bases' ERC-7201 namespaces added.
struct Undeclared {
    storage: Option<Value>,
    transient: Option<Value>,
    /// Each namespace left out, and why.
    left_out: Vec<String>,
    /// Every enum of the compilation, in its files' order.
    enums: Vec<(String, Vec<String>)>,
}

fn undeclared_layout(names: &Names, a: &Artifact, notes: &mut Notes) -> Undeclared {
    // A build without layouts (Foundry's default artifacts): compiled from the metadata.
    let rebuilt = names.rebuilt_layout(a);
    let files = a
        .sources()
        .map_or_else(Vec::new, |s| s.unit.files_in_order());
    let asts: Vec<(&str, &AstStorage)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.storage()))
        .collect();
    // Not compiled: computed from the build's AST by solc's rules.
    let compiled = rebuilt
        .as_ref()
        .is_some_and(|r| r.storage.is_some() || r.transient.is_some());
    let computed = (!compiled).then(|| computed_layout(a, &asts)).flatten();
    match (&computed, &rebuilt) {
        (Some(Ok(_)), Some(r)) => {
            notes.note_once(format!("{}; computed from its AST by solc's rules", r.note))
        }
        (Some(Ok(_)), None) => notes.note_once(format!(
            "the build has no storageLayout for {}: computed from its AST by solc's rules",
            a.name
        )),
        (Some(Err(why)), _) => {
            if let Some(r) = &rebuilt {
                notes.note_once(r.note.clone());
            }
            notes.note_once(format!(
                "the build has no storageLayout for {}, and its AST was not laid out: {why}",
                a.name
            ));
        }
        (None, Some(r)) => notes.note_once(r.note.clone()),
        (None, None) => {}
    }
    let computed = computed.and_then(Result::ok);
    let (storage, transient) = match (&computed, &rebuilt) {
        (Some(c), _) => (Some(&c.storage), Some(&c.transient)),
        (None, Some(r)) => (r.storage.as_ref(), r.transient.as_ref()),
        (None, None) => (None, None),
    };
    let (storage, left_out) = super::namespaces::with_namespaces(storage, &a.name, &asts);
    Undeclared {
        storage,
        transient: transient.cloned(),
        left_out,
        enums: files
            .iter()
            .flat_map(|f| f.enums().iter().cloned())
            .collect(),
    }
}
