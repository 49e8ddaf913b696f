//! JSON ABIs as sets of functions, errors and events indexed by selector and topic0.
//!
//! Items are alloy's (`alloy-json-abi`); decoding is done with `alloy-dyn-abi` in
//! [`values`](super::values) and named for people in `decoder`. The same
//! [`Abi`] type holds a user's ABI files, a contract's verified ABI, the bundled signature table
//! and `--signatures` files: each is just a set of items, and a selector may map to several items
//! (a collision, or overloads across contracts), which the decoder shows as candidates.

use std::collections::HashMap;

use alloy_dyn_abi::Specifier;
use alloy_json_abi::{AbiItem, Error as ErrorItem, Event, Function};
use alloy_primitives::B256;
use serde_json::Value;

mod stored;

pub use stored::{KeptBytes, LazyAbi};

/// Why an ABI file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AbiError {
    #[error("invalid ABI JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an ABI: expected a JSON array or an object with an \"abi\" array")]
    NotAnAbi,
    #[error("ABI item {index}: {source}")]
    Item { index: usize, source: ItemError },
    #[error("line {line}: {source}")]
    Line { line: usize, source: ItemError },
}

/// Why one item (a JSON ABI entry or a human-readable declaration) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// A function, error or event entry without a `name`.
    #[error("{0} without a name")]
    Unnamed(&'static str),
    /// An entry alloy cannot read as an ABI item.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A declaration that does not parse.
    #[error("cannot parse {line:?}: {source}")]
    Declaration {
        line: String,
        source: alloy_dyn_abi::parser::Error,
    },
    /// A parameter type alloy cannot decode.
    #[error("unsupported type: {0}")]
    Type(alloy_dyn_abi::Error),
}

/// A set of functions, errors and events, looked up by selector / topic0.
///
/// Constructor, fallback and receive entries carry nothing to look up and are skipped. Items that
/// are equal up to parameter names are kept once, so merging many artifacts that share an
/// interface does not turn every call into an "ambiguous" one.
#[derive(Clone, Debug, Default)]
pub struct Abi {
    functions: HashMap<[u8; 4], Vec<Function>>,
    errors: HashMap<[u8; 4], Vec<ErrorItem>>,
    events: HashMap<B256, Vec<Event>>,
    /// The contract's entry points besides its functions, when this is one contract's JSON ABI.
    entry: Option<EntryPoints>,
    /// Its constructor's parameters, when this is one contract's JSON ABI that declares one.
    constructor: Option<Vec<alloy_json_abi::Param>>,
}

/// A contract's fallback and receive functions, as its JSON ABI lists them: what a call that
/// matches no function meets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryPoints {
    /// `Some(payable)` when the contract has a fallback function.
    pub fallback: Option<bool>,
    pub receive: bool,
    /// Its constructor is payable (no constructor: not).
    pub payable_constructor: bool,
}

impl Abi {
    /// Loads a JSON ABI: a bare array, or an object with an `abi` key (Foundry and Hardhat
    /// artifacts, explorer answers), whose value may also be the array as a JSON string.
    pub fn from_json(json: &str) -> Result<Abi, AbiError> {
        let v: Value = serde_json::from_str(json)?;
        Abi::from_value(&v)
    }

    /// [`from_json`](Self::from_json) on parsed JSON.
    pub fn from_value(v: &Value) -> Result<Abi, AbiError> {
        let nested;
        let items = match v {
            Value::Array(items) => items,
            Value::Object(o) => match o.get("abi") {
                Some(Value::Array(items)) => items,
                Some(Value::String(s)) => {
                    nested = serde_json::from_str::<Value>(s)?;
                    nested.as_array().ok_or(AbiError::NotAnAbi)?
                }
                _ => return Err(AbiError::NotAnAbi),
            },
            _ => return Err(AbiError::NotAnAbi),
        };
        let mut abi = Abi::default();
        let mut entry = EntryPoints::default();
        for item in items {
            let payable = item.get("stateMutability").and_then(Value::as_str) == Some("payable")
                || item.get("payable").and_then(Value::as_bool) == Some(true);
            match item.get("type").and_then(Value::as_str) {
                Some("fallback") => entry.fallback = Some(payable),
                Some("receive") => entry.receive = true,
                Some("constructor") => entry.payable_constructor = payable,
                _ => {}
            }
        }
        abi.entry = Some(entry);
        for (index, item) in items.iter().enumerate() {
            let item = json_item(item).map_err(|source| AbiError::Item { index, source })?;
            if let Some(item) = item {
                abi.add(item)
                    .map_err(|source| AbiError::Item { index, source })?;
            }
        }
        Ok(abi)
    }

    /// Parses human-readable declarations, one per line: `function f(uint256 a)`,
    /// `error E(address who)`, `event T(address indexed from, uint256 value)`; a line without a
    /// keyword is a function. Blank lines and lines starting with `#` or `//` are skipped.
    pub fn from_declarations(text: &str) -> Result<Abi, AbiError> {
        let mut abi = Abi::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
                continue;
            }
            let err = |source| AbiError::Line {
                line: i + 1,
                source,
            };
            let item = parse_declaration(line).map_err(err)?;
            abi.add(item).map_err(err)?;
        }
        Ok(abi)
    }

    /// Adds one item; its parameter types must be ones alloy can decode.
    pub fn add(&mut self, item: AbiItem<'_>) -> Result<(), ItemError> {
        match item {
            AbiItem::Function(f) => {
                check_types(f.inputs.iter().map(|p| p.resolve()))?;
                let f = f.into_owned();
                push_unique(self.functions.entry(f.selector().0).or_default(), f);
            }
            AbiItem::Error(e) => {
                check_types(e.inputs.iter().map(|p| p.resolve()))?;
                let e = e.into_owned();
                push_unique(self.errors.entry(e.selector().0).or_default(), e);
            }
            AbiItem::Event(e) => {
                check_types(e.inputs.iter().map(|p| p.resolve()))?;
                let e = e.into_owned();
                push_unique(self.events.entry(e.selector()).or_default(), e);
            }
            AbiItem::Constructor(c) => {
                check_types(c.inputs.iter().map(|p| p.resolve()))?;
                self.constructor = Some(c.into_owned().inputs);
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds the entries of `other` (several `--abi` files act as one ABI). On a selector clash the
    /// entries already here come first.
    pub fn merge(&mut self, other: Abi) {
        // Several contracts' entry points and constructors are no one contract's.
        self.entry = None;
        self.constructor = None;
        for (k, v) in other.functions {
            let list = self.functions.entry(k).or_default();
            v.into_iter().for_each(|x| push_unique(list, x));
        }
        for (k, v) in other.errors {
            let list = self.errors.entry(k).or_default();
            v.into_iter().for_each(|x| push_unique(list, x));
        }
        for (k, v) in other.events {
            let list = self.events.entry(k).or_default();
            v.into_iter().for_each(|x| push_unique(list, x));
        }
    }

    /// The fallback and receive functions of the contract this JSON ABI is (`None` for
    /// declarations or a merge of several ABIs: unknown).
    pub fn entry_points(&self) -> Option<EntryPoints> {
        self.entry
    }

    /// The constructor's parameters (one contract's JSON ABI; `None` without a constructor).
    pub fn constructor(&self) -> Option<&[alloy_json_abi::Param]> {
        self.constructor.as_deref()
    }

    /// Every item, each on a line, in an order that does not depend on hash maps (tests).
    #[cfg(test)]
    pub(crate) fn item_lines(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .functions
            .iter()
            .map(|(k, f)| format!("{k:?} {f:?}"))
            .chain(self.errors.iter().map(|(k, e)| format!("{k:?} {e:?}")))
            .chain(self.events.iter().map(|(k, e)| format!("{k:?} {e:?}")))
            .collect();
        v.sort();
        v.push(format!("{:?} {:?}", self.entry, self.constructor));
        v
    }

    /// Every function with this selector, first added first.
    pub fn functions(&self, selector: [u8; 4]) -> &[Function] {
        self.functions.get(&selector).map_or(&[], Vec::as_slice)
    }

    /// Every custom error with this selector.
    pub fn errors(&self, selector: [u8; 4]) -> &[ErrorItem] {
        self.errors.get(&selector).map_or(&[], Vec::as_slice)
    }

    /// Every non-anonymous event with this topic0.
    pub fn events(&self, topic: &B256) -> &[Event] {
        self.events.get(topic).map_or(&[], Vec::as_slice)
    }

    /// The first function with this selector.
    pub fn function(&self, selector: [u8; 4]) -> Option<&Function> {
        self.functions(selector).first()
    }

    /// The first custom error with this selector.
    pub fn error(&self, selector: [u8; 4]) -> Option<&ErrorItem> {
        self.errors(selector).first()
    }

    /// The first non-anonymous event with this topic0.
    pub fn event(&self, topic: &B256) -> Option<&Event> {
        self.events(topic).iter().find(|e| !e.anonymous)
    }

    /// How many functions, errors and events the set holds.
    pub fn len(&self) -> usize {
        self.functions.values().map(Vec::len).sum::<usize>()
            + self.errors.values().map(Vec::len).sum::<usize>()
            + self.events.values().map(Vec::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One JSON ABI item; very old solc output omits `type` for functions.
fn json_item(v: &Value) -> Result<Option<AbiItem<'static>>, ItemError> {
    let kind = match v.get("type").and_then(Value::as_str).unwrap_or("function") {
        "function" => "function",
        "error" => "error",
        "event" => "event",
        "constructor" => "constructor",
        _ => return Ok(None),
    };
    if kind == "constructor" {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.entry("inputs").or_insert_with(|| Value::Array(vec![]));
            o.entry("stateMutability")
                .or_insert_with(|| Value::from("nonpayable"));
        }
        return serde_json::from_value::<AbiItem<'static>>(v)
            .map(Some)
            .map_err(ItemError::Json);
    }
    if v.get("name").and_then(Value::as_str).is_none() {
        return Err(ItemError::Unnamed(kind));
    }
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.entry("type").or_insert_with(|| Value::from("function"));
        // Old artifacts omit `outputs` or `stateMutability`; alloy wants them.
        if kind == "function" {
            o.entry("outputs").or_insert_with(|| Value::Array(vec![]));
            o.entry("stateMutability")
                .or_insert_with(|| Value::from("nonpayable"));
        }
        o.entry("inputs").or_insert_with(|| Value::Array(vec![]));
    }
    serde_json::from_value::<AbiItem<'static>>(v)
        .map(Some)
        .map_err(ItemError::Json)
}

/// A human-readable declaration; without a keyword it is a function.
pub fn parse_declaration(line: &str) -> Result<AbiItem<'static>, ItemError> {
    let keyword = line.split(|c: char| c.is_whitespace()).next();
    let item = match keyword {
        Some("function" | "error" | "event" | "constructor") => AbiItem::parse(line),
        _ => Function::parse(line).map(Into::into),
    };
    item.map_err(|source| ItemError::Declaration {
        line: line.to_string(),
        source,
    })
}

fn check_types(
    types: impl Iterator<Item = Result<alloy_dyn_abi::DynSolType, alloy_dyn_abi::Error>>,
) -> Result<(), ItemError> {
    for t in types {
        t.map_err(ItemError::Type)?;
    }
    Ok(())
}

/// Items that differ only in parameter names, internal types or mutability are one item.
trait Shape {
    fn shape(&self) -> String;
}

impl Shape for Function {
    fn shape(&self) -> String {
        self.signature()
    }
}

impl Shape for ErrorItem {
    fn shape(&self) -> String {
        self.signature()
    }
}

impl Shape for Event {
    fn shape(&self) -> String {
        let indexed: String = self
            .inputs
            .iter()
            .map(|p| if p.indexed { 'i' } else { '-' })
            .collect();
        format!("{}{indexed}{}", self.signature(), self.anonymous)
    }
}

fn push_unique<T: Shape>(list: &mut Vec<T>, item: T) {
    let shape = item.shape();
    if !list.iter().any(|x| x.shape() == shape) {
        list.push(item);
    }
}
