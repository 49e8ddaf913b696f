//! [`Abi`] as it is kept between runs with a project's artifacts (`names/artifacts/cached.rs`):
//! its items in a shape of their own, every field always written, in order. alloy's serde for
//! its items is JSON's (tagged by `type`, `stateMutability` flattened, empty fields left out),
//! which a compact, field-order encoding cannot read back; and a field-order encoding is what
//! makes the stored form quick to read.

use std::collections::HashMap;

use alloy_json_abi::{
    Error as ErrorItem, Event, EventParam, Function, InternalType, Param, StateMutability,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Abi, AbiError, EntryPoints};

#[derive(Serialize, Deserialize)]
struct StoredParam {
    ty: String,
    name: String,
    components: Vec<StoredParam>,
    internal_type: Option<StoredInternal>,
}

#[derive(Serialize, Deserialize)]
enum StoredInternal {
    AddressPayable(String),
    Contract(String),
    Enum(Option<String>, String),
    Struct(Option<String>, String),
    Other(Option<String>, String),
}

#[derive(Serialize, Deserialize)]
struct StoredEventParam {
    ty: String,
    name: String,
    indexed: bool,
    components: Vec<StoredParam>,
    internal_type: Option<StoredInternal>,
}

#[derive(Serialize, Deserialize)]
struct StoredFunction {
    name: String,
    inputs: Vec<StoredParam>,
    outputs: Vec<StoredParam>,
    /// 0 pure, 1 view, 2 nonpayable, 3 payable.
    state_mutability: u8,
}

#[derive(Serialize, Deserialize)]
struct StoredEvent {
    name: String,
    inputs: Vec<StoredEventParam>,
    anonymous: bool,
}

#[derive(Serialize, Deserialize)]
struct StoredError {
    name: String,
    inputs: Vec<StoredParam>,
}

#[derive(Serialize, Deserialize)]
struct StoredAbi {
    functions: Vec<([u8; 4], Vec<StoredFunction>)>,
    errors: Vec<([u8; 4], Vec<StoredError>)>,
    events: Vec<([u8; 32], Vec<StoredEvent>)>,
    /// (fallback, receive, payable constructor).
    entry: Option<(Option<bool>, bool, bool)>,
    constructor: Option<Vec<StoredParam>>,
}

impl Serialize for Abi {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let stored = StoredAbi {
            functions: self
                .functions
                .iter()
                .map(|(k, v)| (*k, v.iter().map(function_to).collect()))
                .collect(),
            errors: self
                .errors
                .iter()
                .map(|(k, v)| (*k, v.iter().map(error_to).collect()))
                .collect(),
            events: self
                .events
                .iter()
                .map(|(k, v)| (k.0, v.iter().map(event_to).collect()))
                .collect(),
            entry: self
                .entry
                .map(|e| (e.fallback, e.receive, e.payable_constructor)),
            constructor: self
                .constructor
                .as_ref()
                .map(|c| c.iter().map(param_to).collect()),
        };
        stored.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Abi {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Abi, D::Error> {
        let s = StoredAbi::deserialize(d)?;
        Ok(Abi {
            functions: collect(s.functions, function_from),
            errors: collect(s.errors, error_from),
            events: s
                .events
                .into_iter()
                .map(|(k, v)| (k.into(), v.into_iter().map(event_from).collect()))
                .collect(),
            entry: s
                .entry
                .map(|(fallback, receive, payable_constructor)| EntryPoints {
                    fallback,
                    receive,
                    payable_constructor,
                }),
            constructor: s
                .constructor
                .map(|c| c.into_iter().map(param_from).collect()),
        })
    }
}

fn collect<K: std::hash::Hash + Eq, S, T>(
    items: Vec<(K, Vec<S>)>,
    from: fn(S) -> T,
) -> HashMap<K, Vec<T>> {
    items
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().map(from).collect()))
        .collect()
}

fn internal_to(t: &InternalType) -> StoredInternal {
    match t.clone() {
        InternalType::AddressPayable(s) => StoredInternal::AddressPayable(s),
        InternalType::Contract(s) => StoredInternal::Contract(s),
        InternalType::Enum { contract, ty } => StoredInternal::Enum(contract, ty),
        InternalType::Struct { contract, ty } => StoredInternal::Struct(contract, ty),
        InternalType::Other { contract, ty } => StoredInternal::Other(contract, ty),
    }
}

fn internal_from(t: StoredInternal) -> InternalType {
    match t {
        StoredInternal::AddressPayable(s) => InternalType::AddressPayable(s),
        StoredInternal::Contract(s) => InternalType::Contract(s),
        StoredInternal::Enum(contract, ty) => InternalType::Enum { contract, ty },
        StoredInternal::Struct(contract, ty) => InternalType::Struct { contract, ty },
        StoredInternal::Other(contract, ty) => InternalType::Other { contract, ty },
    }
}

fn param_to(p: &Param) -> StoredParam {
    StoredParam {
        ty: p.ty.clone(),
        name: p.name.clone(),
        components: p.components.iter().map(param_to).collect(),
        internal_type: p.internal_type.as_ref().map(internal_to),
    }
}

fn param_from(p: StoredParam) -> Param {
    Param {
        ty: p.ty,
        name: p.name,
        components: p.components.into_iter().map(param_from).collect(),
        internal_type: p.internal_type.map(internal_from),
    }
}

fn function_to(f: &Function) -> StoredFunction {
    StoredFunction {
        name: f.name.clone(),
        inputs: f.inputs.iter().map(param_to).collect(),
        outputs: f.outputs.iter().map(param_to).collect(),
        state_mutability: match f.state_mutability {
            StateMutability::Pure => 0,
            StateMutability::View => 1,
            StateMutability::NonPayable => 2,
            StateMutability::Payable => 3,
        },
    }
}

fn function_from(f: StoredFunction) -> Function {
    Function {
        name: f.name,
        inputs: f.inputs.into_iter().map(param_from).collect(),
        outputs: f.outputs.into_iter().map(param_from).collect(),
        state_mutability: match f.state_mutability {
            0 => StateMutability::Pure,
            1 => StateMutability::View,
            3 => StateMutability::Payable,
            _ => StateMutability::NonPayable,
        },
    }
}

fn error_to(e: &ErrorItem) -> StoredError {
    StoredError {
        name: e.name.clone(),
        inputs: e.inputs.iter().map(param_to).collect(),
    }
}

fn error_from(e: StoredError) -> ErrorItem {
    ErrorItem {
        name: e.name,
        inputs: e.inputs.into_iter().map(param_from).collect(),
    }
}

fn event_to(e: &Event) -> StoredEvent {
    StoredEvent {
        name: e.name.clone(),
        inputs: e
            .inputs
            .iter()
            .map(|p| StoredEventParam {
                ty: p.ty.clone(),
                name: p.name.clone(),
                indexed: p.indexed,
                components: p.components.iter().map(param_to).collect(),
                internal_type: p.internal_type.as_ref().map(internal_to),
            })
            .collect(),
        anonymous: e.anonymous,
    }
}

fn event_from(e: StoredEvent) -> Event {
    Event {
        name: e.name,
        inputs: e
            .inputs
            .into_iter()
            .map(|p| EventParam {
                ty: p.ty,
                name: p.name,
                indexed: p.indexed,
                components: p.components.into_iter().map(param_from).collect(),
                internal_type: p.internal_type.map(internal_from),
            })
            .collect(),
        anonymous: e.anonymous,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abi_given_as_text_reads_when_first_used_and_a_merge_as_merged_then() {
        let a = r#"[{"type":"function","name":"f","inputs":[{"name":"x","type":"uint256"}],
            "outputs":[],"stateMutability":"nonpayable"},{"type":"receive",
            "stateMutability":"payable"}]"#;
        let b = r#"[{"type":"event","name":"E","anonymous":false,
            "inputs":[{"name":"who","type":"address","indexed":true}]}]"#;
        let text = |t: &str| serde_json::value::RawValue::from_string(t.to_string()).unwrap();
        let (la, lb) = (LazyAbi::json(text(a)), LazyAbi::json(text(b)));
        let merged = LazyAbi::merged(vec![la.clone(), lb.clone()]).unwrap();
        let (ea, eb) = (Abi::from_json(a).unwrap(), Abi::from_json(b).unwrap());
        assert_eq!(la.get().item_lines(), ea.item_lines());
        assert_eq!(la.get().entry, ea.entry);
        let mut want = ea.clone();
        want.merge(eb);
        assert_eq!(merged.get().item_lines(), want.item_lines());
        assert_eq!(
            (merged.get().entry, merged.get().constructor.is_none()),
            (None, true)
        );
        // A clone shares the reading.
        assert!(std::sync::Arc::ptr_eq(la.get(), &la.clone().get().clone()));
        assert!(LazyAbi::merged(Vec::new()).is_none());
        // Not an ABI: an error when checked, empty when used.
        let bad = LazyAbi::json(text(
            r#"[{"type":"function","name":"f","inputs":[{"type":"uint7"}]}]"#,
        ));
        assert!(bad.check().is_err());
        assert_eq!(bad.get().item_lines(), Abi::default().item_lines());
        assert!(la.check().is_ok());
    }

    #[test]
    fn an_abi_reads_back_from_its_compact_stored_form_as_it_was() {
        let json = r#"[
          {"type":"function","name":"f","stateMutability":"payable",
           "inputs":[{"name":"p","type":"tuple","internalType":"struct C.P",
                      "components":[{"name":"a","type":"address","internalType":"address payable"},
                                    {"name":"k","type":"uint8","internalType":"enum C.Kind"}]}],
           "outputs":[{"name":"","type":"address","internalType":"contract IERC20"}]},
          {"type":"function","name":"g","stateMutability":"view","inputs":[],"outputs":[]},
          {"type":"error","name":"Bad","inputs":[{"name":"x","type":"uint256"}]},
          {"type":"event","name":"E","anonymous":false,
           "inputs":[{"name":"from","type":"address","indexed":true},
                     {"name":"v","type":"uint256[]","indexed":false,"internalType":"uint256[]"}]},
          {"type":"constructor","stateMutability":"payable",
           "inputs":[{"name":"owner","type":"address"}]},
          {"type":"fallback","stateMutability":"nonpayable"},
          {"type":"receive","stateMutability":"payable"}
        ]"#;
        let abi = Abi::from_json(json).unwrap();
        let bytes = rmp_serde::to_vec(&abi).unwrap();
        let back: Abi = rmp_serde::from_slice(&bytes).unwrap();
        // (Maps compared by key: two HashMaps print in their own orders.)
        assert_eq!(abi.functions.len(), back.functions.len());
        for (k, v) in &abi.functions {
            assert_eq!(v, &back.functions[k]);
        }
        assert_eq!(abi.errors.len(), back.errors.len());
        for (k, v) in &abi.errors {
            assert_eq!(v, &back.errors[k]);
        }
        assert_eq!(abi.events.len(), back.events.len());
        for (k, v) in &abi.events {
            assert_eq!(v, &back.events[k]);
        }
        assert_eq!(abi.entry, back.entry);
        assert_eq!(abi.constructor, back.constructor);
        assert!(abi.entry.is_some_and(|e| e.receive) && abi.constructor.is_some());
    }
}

/// Where a kept [`Abi`]'s stored form is read from, when first asked for.
pub trait KeptBytes: std::fmt::Debug + Send + Sync {
    /// The stored form; `None` when it cannot be read.
    fn bytes(&self) -> Option<Vec<u8>>;
}

/// An [`Abi`] as read, or read when first asked for: from its stored form (kept between runs),
/// from its JSON text (an artifact as loaded), or as the merge of others. A run uses the ABIs
/// of the few contracts it touched, and the merge of a whole project's only for what none of
/// those names. Clones share one reading.
#[derive(Clone, Debug, Default)]
pub struct LazyAbi(std::sync::Arc<Lazy>);

#[derive(Debug, Default)]
struct Lazy {
    abi: std::sync::OnceLock<std::sync::Arc<Abi>>,
    from: Option<AbiFrom>,
}

/// Where an ABI not yet read comes from.
#[derive(Debug)]
enum AbiFrom {
    Kept(std::sync::Arc<dyn KeptBytes>),
    /// A JSON ABI (an array of items); one that does not read is empty.
    Json(Box<serde_json::value::RawValue>),
    /// These merged in order ([`Abi::merge`]), the first one's copy merged into.
    Merge(Vec<LazyAbi>),
}

impl LazyAbi {
    fn of(from: AbiFrom) -> LazyAbi {
        LazyAbi(std::sync::Arc::new(Lazy {
            abi: Default::default(),
            from: Some(from),
        }))
    }

    /// An ABI already read.
    pub fn read(abi: Abi) -> LazyAbi {
        LazyAbi(std::sync::Arc::new(Lazy {
            abi: std::sync::Arc::new(abi).into(),
            from: None,
        }))
    }

    /// An ABI kept in its stored form (what [`LazyAbi::stored`] gave), read on first use.
    pub fn kept(kept: std::sync::Arc<dyn KeptBytes>) -> LazyAbi {
        LazyAbi::of(AbiFrom::Kept(kept))
    }

    /// A JSON ABI's text, read on first use ([`Abi::from_json`]); empty if it does not read
    /// ([`LazyAbi::check`] says why).
    pub fn json(text: Box<serde_json::value::RawValue>) -> LazyAbi {
        LazyAbi::of(AbiFrom::Json(text))
    }

    /// `parts` merged in order on first use; `None` for none.
    pub fn merged(parts: Vec<LazyAbi>) -> Option<LazyAbi> {
        match parts.len() {
            0 => None,
            _ => Some(LazyAbi::of(AbiFrom::Merge(parts))),
        }
    }

    /// Whether it reads: an ABI given as JSON text that is not one is an error.
    pub fn check(&self) -> Result<(), AbiError> {
        match &self.0.from {
            Some(AbiFrom::Json(text)) if self.0.abi.get().is_none() => {
                let abi = Abi::from_json(text.get())?;
                let _ = self.0.abi.set(std::sync::Arc::new(abi));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Its stored form; `None` when it cannot be written.
    pub fn stored(&self) -> Option<Vec<u8>> {
        match (&self.0.from, self.0.abi.get()) {
            (_, Some(abi)) => rmp_serde::to_vec(&**abi).ok(),
            (Some(AbiFrom::Kept(k)), None) => k.bytes(),
            _ => rmp_serde::to_vec(&**self.get()).ok(),
        }
    }

    /// The ABI, read the first time.
    pub fn get(&self) -> &std::sync::Arc<Abi> {
        self.0.abi.get_or_init(|| {
            std::sync::Arc::new(match &self.0.from {
                // What this program wrote, whole (a store is renamed into place and its length
                // checked when opened): an empty ABI only if the file was altered since.
                Some(AbiFrom::Kept(k)) => k
                    .bytes()
                    .and_then(|b| rmp_serde::from_slice(&b).ok())
                    .unwrap_or_default(),
                Some(AbiFrom::Json(text)) => Abi::from_json(text.get()).unwrap_or_default(),
                Some(AbiFrom::Merge(parts)) => {
                    let mut merged = (**parts[0].get()).clone();
                    for p in &parts[1..] {
                        merged.merge((**p.get()).clone());
                    }
                    merged
                }
                None => Abi::default(),
            })
        })
    }
}
