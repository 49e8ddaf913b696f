//! JSON ABIs, a small ABI decoder, and [`Decoder`], which turns calldata, revert data and logs
//! into text for people.
//!
//! The decoder is deliberately strict (dirty padding, out-of-range lengths and offsets make it
//! give up): a trace renderer is better off printing a bare signature than a confident but wrong
//! decoding of data that merely shares a selector.
//!
//! Names come from the user's ABI first and from the built-in tables in
//! [`signatures`](super::signatures) second.

use std::fmt;

use alloy_primitives::{hex, keccak256, Address, B256, I256, U256};
use serde_json::Value;

use super::revert::{abi_string, panic_reason, ERROR_SELECTOR, PANIC_SELECTOR};
use super::signatures;

/// Type nesting deeper than this is rejected, which bounds recursion on hostile input.
const MAX_DEPTH: usize = 32;

/// Why an ABI file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AbiError {
    #[error("invalid ABI JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an ABI: expected a JSON array or an object with an \"abi\" array")]
    NotAnAbi,
    #[error("ABI item {index}: {reason}")]
    Item { index: usize, reason: String },
}

/// An ABI type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamType {
    Address,
    Bool,
    /// `uint<N>`, N in bits.
    Uint(usize),
    /// `int<N>`, N in bits.
    Int(usize),
    /// `bytes<N>`, N in bytes.
    FixedBytes(usize),
    /// `function`: an address and a selector, 24 bytes.
    Function,
    Bytes,
    String,
    Array(Box<ParamType>),
    FixedArray(Box<ParamType>, usize),
    Tuple(Vec<ParamType>),
}

impl ParamType {
    /// Parses a canonical-style type such as `uint256`, `(address,bytes)[]` or `bytes32[4]`.
    pub fn parse(s: &str) -> Option<ParamType> {
        let mut p = Parser::new(s);
        let t = p.ty(0)?;
        p.skip_ws();
        p.at_end().then_some(t)
    }

    /// Whether the encoding lives in the tail (behind an offset) rather than inline.
    pub fn is_dynamic(&self) -> bool {
        match self {
            ParamType::Bytes | ParamType::String | ParamType::Array(_) => true,
            ParamType::FixedArray(t, _) => t.is_dynamic(),
            ParamType::Tuple(ts) => ts.iter().any(ParamType::is_dynamic),
            _ => false,
        }
    }

    /// Bytes this type takes in the head of an enclosing tuple.
    fn head_size(&self) -> usize {
        if self.is_dynamic() {
            return 32;
        }
        match self {
            ParamType::FixedArray(t, k) => t.head_size().saturating_mul(*k),
            ParamType::Tuple(ts) => ts
                .iter()
                .fold(0usize, |a, t| a.saturating_add(t.head_size())),
            _ => 32,
        }
    }
}

/// Canonical form, as hashed into selectors.
impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Address => f.write_str("address"),
            ParamType::Bool => f.write_str("bool"),
            ParamType::Uint(n) => write!(f, "uint{n}"),
            ParamType::Int(n) => write!(f, "int{n}"),
            ParamType::FixedBytes(n) => write!(f, "bytes{n}"),
            ParamType::Function => f.write_str("function"),
            ParamType::Bytes => f.write_str("bytes"),
            ParamType::String => f.write_str("string"),
            ParamType::Array(t) => write!(f, "{t}[]"),
            ParamType::FixedArray(t, k) => write!(f, "{t}[{k}]"),
            ParamType::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A named parameter of a function, error or event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// May be empty.
    pub name: String,
    pub kind: ParamType,
    /// Only meaningful for event parameters.
    pub indexed: bool,
}

/// A parsed declaration such as `transfer(address to,uint256 amount)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub params: Vec<Param>,
}

impl Declaration {
    /// Parses `name(type [indexed] [name], ...)`; names and `indexed` are optional.
    pub fn parse(s: &str) -> Option<Declaration> {
        let mut p = Parser::new(s);
        p.skip_ws();
        let name = p.word();
        p.skip_ws();
        if name.is_empty() || !p.eat(b'(') {
            return None;
        }
        let params = p.params(0)?;
        p.skip_ws();
        p.at_end().then(|| Declaration {
            name: name.to_string(),
            params,
        })
    }

    /// The canonical signature, e.g. `transfer(address,uint256)`.
    pub fn signature(&self) -> String {
        signature_of(&self.name, &self.params)
    }
}

fn signature_of(name: &str, params: &[Param]) -> String {
    let types: Vec<String> = params.iter().map(|p| p.kind.to_string()).collect();
    format!("{name}({})", types.join(","))
}

/// Recursive-descent parser for types and declarations.
struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser { s, pos: 0 }
    }

    fn at_end(&self) -> bool {
        self.pos == self.s.len()
    }

    fn skip_ws(&mut self) {
        let rest = &self.s[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.as_bytes().get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// An identifier or number (possibly empty).
    fn word(&mut self) -> &'a str {
        let rest = &self.s[self.pos..];
        let len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
            .count();
        self.pos += len;
        &rest[..len]
    }

    fn ty(&mut self, depth: usize) -> Option<ParamType> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_ws();
        let base = if self.eat(b'(') {
            ParamType::Tuple(
                self.params(depth + 1)?
                    .into_iter()
                    .map(|p| p.kind)
                    .collect(),
            )
        } else {
            elementary(self.word())?
        };
        self.dims(base, depth)
    }

    /// Array suffixes: `[]`, `[3]`, repeated.
    fn dims(&mut self, mut t: ParamType, depth: usize) -> Option<ParamType> {
        let mut n = depth;
        while self.eat(b'[') {
            n += 1;
            if n > MAX_DEPTH {
                return None;
            }
            let size = self.word();
            t = if size.is_empty() {
                ParamType::Array(Box::new(t))
            } else {
                ParamType::FixedArray(Box::new(t), digits(size)?)
            };
            if !self.eat(b']') {
                return None;
            }
        }
        Some(t)
    }

    /// A parameter list after its `(`, through the closing `)`.
    fn params(&mut self, depth: usize) -> Option<Vec<Param>> {
        let mut params = Vec::new();
        self.skip_ws();
        if self.eat(b')') {
            return Some(params);
        }
        loop {
            let kind = self.ty(depth)?;
            self.skip_ws();
            let mut word = self.word();
            let indexed = word == "indexed";
            if indexed {
                self.skip_ws();
                word = self.word();
            }
            self.skip_ws();
            params.push(Param {
                name: word.to_string(),
                kind,
                indexed,
            });
            if self.eat(b')') {
                return Some(params);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
}

fn digits(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn elementary(name: &str) -> Option<ParamType> {
    let bits = |n: &str| digits(n).filter(|n| n % 8 == 0 && (8..=256).contains(n));
    Some(match name {
        "address" => ParamType::Address,
        "bool" => ParamType::Bool,
        "string" => ParamType::String,
        "bytes" => ParamType::Bytes,
        "function" => ParamType::Function,
        "uint" => ParamType::Uint(256),
        "int" => ParamType::Int(256),
        _ => {
            if let Some(n) = name.strip_prefix("uint") {
                ParamType::Uint(bits(n)?)
            } else if let Some(n) = name.strip_prefix("int") {
                ParamType::Int(bits(n)?)
            } else if let Some(n) = name.strip_prefix("bytes") {
                ParamType::FixedBytes(digits(n).filter(|n| (1..=32).contains(n))?)
            } else {
                return None;
            }
        }
    })
}

/// A function of an ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub inputs: Vec<Param>,
    pub outputs: Vec<Param>,
    /// Canonical signature.
    pub signature: String,
    pub selector: [u8; 4],
}

/// A custom error of an ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomError {
    pub name: String,
    pub inputs: Vec<Param>,
    pub signature: String,
    pub selector: [u8; 4],
}

/// An event of an ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub inputs: Vec<Param>,
    pub anonymous: bool,
    pub signature: String,
    pub topic: B256,
}

/// A contract ABI: its functions, errors and events (constructor, fallback and receive entries
/// carry nothing to look up and are skipped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Abi {
    pub functions: Vec<Function>,
    pub errors: Vec<CustomError>,
    pub events: Vec<Event>,
}

impl Abi {
    /// Loads a JSON ABI: a bare array, or an object with an `abi` key (Foundry and Hardhat
    /// artifacts), whose value may also be the array as a JSON string.
    pub fn from_json(json: &str) -> Result<Abi, AbiError> {
        let v: Value = serde_json::from_str(json)?;
        let nested;
        let items = match &v {
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
        for (index, item) in items.iter().enumerate() {
            abi.add_item(item)
                .map_err(|reason| AbiError::Item { index, reason })?;
        }
        Ok(abi)
    }

    fn add_item(&mut self, item: &Value) -> Result<(), String> {
        // Very old solc output omits `type` for functions.
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("function");
        if !matches!(kind, "function" | "error" | "event") {
            return Ok(());
        }
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{kind} without a name"))?
            .to_string();
        let inputs = json_params(item.get("inputs"))?;
        let signature = signature_of(&name, &inputs);
        match kind {
            "function" => {
                let outputs = json_params(item.get("outputs"))?;
                let selector = signatures::selector(&signature);
                self.functions.push(Function {
                    name,
                    inputs,
                    outputs,
                    signature,
                    selector,
                });
            }
            "error" => {
                let selector = signatures::selector(&signature);
                self.errors.push(CustomError {
                    name,
                    inputs,
                    signature,
                    selector,
                });
            }
            _ => {
                let anonymous = item
                    .get("anonymous")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let topic = keccak256(signature.as_bytes());
                self.events.push(Event {
                    name,
                    inputs,
                    anonymous,
                    signature,
                    topic,
                });
            }
        }
        Ok(())
    }

    /// Adds the entries of `other` (several `--abi` files act as one ABI). Lookups return the
    /// first match, so on a clash the entry already here wins.
    pub fn merge(&mut self, other: Abi) {
        self.functions.extend(other.functions);
        self.errors.extend(other.errors);
        self.events.extend(other.events);
    }

    /// The function with this selector.
    pub fn function(&self, selector: [u8; 4]) -> Option<&Function> {
        self.functions.iter().find(|f| f.selector == selector)
    }

    /// The custom error with this selector.
    pub fn error(&self, selector: [u8; 4]) -> Option<&CustomError> {
        self.errors.iter().find(|e| e.selector == selector)
    }

    /// The non-anonymous event with this topic0.
    pub fn event(&self, topic: &B256) -> Option<&Event> {
        self.events
            .iter()
            .find(|e| !e.anonymous && e.topic == *topic)
    }
}

fn json_params(v: Option<&Value>) -> Result<Vec<Param>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(ps)) => ps.iter().map(|p| json_param(p, 0)).collect(),
        Some(_) => Err("parameters are not an array".to_string()),
    }
}

fn json_param(v: &Value, depth: usize) -> Result<Param, String> {
    if depth > MAX_DEPTH {
        return Err("types nested too deeply".to_string());
    }
    let ty = v
        .get("type")
        .and_then(Value::as_str)
        .ok_or("parameter without a type")?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let indexed = v.get("indexed").and_then(Value::as_bool).unwrap_or(false);
    let kind = match ty.strip_prefix("tuple") {
        Some(suffix) => {
            let components = v
                .get("components")
                .and_then(Value::as_array)
                .ok_or("tuple without components")?;
            let inner = components
                .iter()
                .map(|c| json_param(c, depth + 1).map(|p| p.kind))
                .collect::<Result<Vec<_>, _>>()?;
            let mut p = Parser::new(suffix);
            p.dims(ParamType::Tuple(inner), depth)
                .filter(|_| p.at_end())
                .ok_or_else(|| format!("unsupported type {ty:?}"))?
        }
        None => ParamType::parse(ty).ok_or_else(|| format!("unsupported type {ty:?}"))?,
    };
    Ok(Param {
        name,
        kind,
        indexed,
    })
}

/// A decoded ABI value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    Address(Address),
    Bool(bool),
    Uint(U256),
    Int(I256),
    /// `bytes<N>`, `function`, and hashed indexed event parameters.
    FixedBytes(Vec<u8>),
    Bytes(Vec<u8>),
    String(String),
    /// Both `T[]` and `T[k]`.
    Array(Vec<Token>),
    Tuple(Vec<Token>),
}

/// Human values: checksummed addresses, decimal integers, `0x` bytes, quoted strings.
impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(
            f: &mut fmt::Formatter<'_>,
            open: &str,
            items: &[Token],
            close: &str,
        ) -> fmt::Result {
            f.write_str(open)?;
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            f.write_str(close)
        }
        match self {
            Token::Address(a) => f.write_str(&a.to_checksum(None)),
            Token::Bool(b) => write!(f, "{b}"),
            Token::Uint(u) => write!(f, "{u}"),
            Token::Int(i) => write!(f, "{i}"),
            Token::FixedBytes(b) | Token::Bytes(b) => write!(f, "0x{}", hex::encode(b)),
            // Debug quoting escapes quotes and control characters, which keeps a trace line on
            // one line whatever the string holds.
            Token::String(s) => write!(f, "{s:?}"),
            Token::Array(ts) => list(f, "[", ts, "]"),
            Token::Tuple(ts) => list(f, "(", ts, ")"),
        }
    }
}

/// Decodes ABI-encoded `data` (without a selector) as a tuple of `types`.
///
/// Returns `None` when the data is too short, an offset or length points outside the data, or a
/// value has dirty padding for its type. Trailing bytes are allowed.
pub fn decode_args(types: &[ParamType], data: &[u8]) -> Option<Vec<Token>> {
    decode_seq(types.iter(), data)
}

fn word(data: &[u8], at: usize) -> Option<&[u8; 32]> {
    data.get(at..at.checked_add(32)?)?.try_into().ok()
}

fn word_usize(data: &[u8], at: usize) -> Option<usize> {
    usize::try_from(U256::from_be_bytes(*word(data, at)?)).ok()
}

/// Decodes consecutive values laid out as a tuple at the start of `data`; offsets of dynamic
/// members are relative to that start.
fn decode_seq<'t>(types: impl Iterator<Item = &'t ParamType>, data: &[u8]) -> Option<Vec<Token>> {
    let mut head = 0usize;
    let mut out = Vec::new();
    for t in types {
        if t.is_dynamic() {
            let offset = word_usize(data, head)?;
            out.push(decode_one(t, data, offset)?);
            head = head.checked_add(32)?;
        } else {
            out.push(decode_one(t, data, head)?);
            head = head.checked_add(t.head_size())?;
        }
    }
    Some(out)
}

/// Decodes one value whose encoding starts at `at`.
fn decode_one(t: &ParamType, data: &[u8], at: usize) -> Option<Token> {
    let rest = data.get(at..)?;
    match t {
        ParamType::Bytes | ParamType::String => {
            let len = word_usize(rest, 0)?;
            let bytes = rest.get(32..32usize.checked_add(len)?)?.to_vec();
            Some(match t {
                ParamType::String => Token::String(String::from_utf8_lossy(&bytes).into_owned()),
                _ => Token::Bytes(bytes),
            })
        }
        ParamType::Array(inner) => {
            let len = word_usize(rest, 0)?;
            let elems = rest.get(32..)?;
            // Each element takes at least a word of head, so a length beyond that is garbage
            // (and would otherwise allocate or loop for a very long time).
            if len.checked_mul(32)? > elems.len() {
                return None;
            }
            decode_seq(std::iter::repeat_n(&**inner, len), elems).map(Token::Array)
        }
        ParamType::FixedArray(inner, k) => {
            let per = if inner.is_dynamic() {
                32
            } else {
                inner.head_size().max(32)
            };
            if k.checked_mul(per)? > rest.len() {
                return None;
            }
            decode_seq(std::iter::repeat_n(&**inner, *k), rest).map(Token::Array)
        }
        ParamType::Tuple(ts) => decode_seq(ts.iter(), rest).map(Token::Tuple),
        _ => decode_word(t, word(rest, 0)?),
    }
}

/// Decodes a single-word value, rejecting dirty padding.
fn decode_word(t: &ParamType, w: &[u8; 32]) -> Option<Token> {
    let raw = U256::from_be_bytes(*w);
    match t {
        ParamType::Address => w[..12]
            .iter()
            .all(|b| *b == 0)
            .then(|| Token::Address(Address::from_slice(&w[12..]))),
        ParamType::Bool => match raw {
            x if x.is_zero() => Some(Token::Bool(false)),
            x if x == U256::from(1) => Some(Token::Bool(true)),
            _ => None,
        },
        ParamType::Uint(n) => (*n == 256 || (raw >> *n).is_zero()).then_some(Token::Uint(raw)),
        ParamType::Int(n) => {
            // The bits above N must all copy the sign bit.
            let ok = *n == 256 || {
                let high = raw >> *n;
                if raw.bit(n - 1) {
                    high == U256::MAX >> *n
                } else {
                    high.is_zero()
                }
            };
            ok.then(|| Token::Int(I256::from_raw(raw)))
        }
        ParamType::FixedBytes(n) => fixed(w, *n),
        ParamType::Function => fixed(w, 24),
        _ => None,
    }
}

fn fixed(w: &[u8; 32], n: usize) -> Option<Token> {
    w[n..]
        .iter()
        .all(|b| *b == 0)
        .then(|| Token::FixedBytes(w[..n].to_vec()))
}

/// `name(a: 1, 2)`: named arguments where the declaration has names.
fn format_call(name: &str, params: &[Param], tokens: &[Token]) -> String {
    let args: Vec<String> = params
        .iter()
        .zip(tokens)
        .map(|(p, t)| match p.name.as_str() {
            "" => t.to_string(),
            n => format!("{n}: {t}"),
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

fn kinds(params: &[Param]) -> Vec<ParamType> {
    params.iter().map(|p| p.kind.clone()).collect()
}

/// Decodes an event's parameters: indexed ones from topics 1.., the rest from data.
/// Indexed dynamic values are only their hash, shown as such.
fn decode_event(params: &[Param], topics: &[B256], data: &[u8]) -> Option<Vec<Token>> {
    let data_types: Vec<ParamType> = params
        .iter()
        .filter(|p| !p.indexed)
        .map(|p| p.kind.clone())
        .collect();
    let mut data_tokens = decode_args(&data_types, data)?.into_iter();
    let mut topic_iter = topics.iter().skip(1);
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        if p.indexed {
            let topic = topic_iter.next()?;
            let tok = if p.kind.is_dynamic()
                || matches!(p.kind, ParamType::FixedArray(..) | ParamType::Tuple(_))
            {
                Token::FixedBytes(topic.to_vec())
            } else {
                decode_word(&p.kind, &topic.0)?
            };
            out.push(tok);
        } else {
            out.push(data_tokens.next()?);
        }
    }
    topic_iter.next().is_none().then_some(out)
}

/// Names calls, reverts and logs with an optional user ABI and the built-in tables.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    abi: Option<Abi>,
}

impl Decoder {
    pub fn new(abi: Option<Abi>) -> Self {
        Decoder { abi }
    }

    pub fn abi(&self) -> Option<&Abi> {
        self.abi.as_ref()
    }

    /// The function's name (`transfer`) from the ABI or the built-in table.
    pub fn function_name(&self, input: &[u8]) -> Option<String> {
        let sel = selector_of(input)?;
        if let Some(f) = self.abi.as_ref().and_then(|a| a.function(sel)) {
            return Some(f.name.clone());
        }
        signatures::function(sel).map(|k| k.name().to_string())
    }

    /// Calldata as text: `transfer(to: 0x…, amount: 1000)` when it decodes,
    /// `transfer(address,uint256)` when only the signature is known, `0x12345678` (the selector)
    /// otherwise, and `()` for empty input.
    pub fn describe_call(&self, input: &[u8]) -> String {
        if input.is_empty() {
            return "()".to_string();
        }
        let Some(sel) = selector_of(input) else {
            return format!("0x{}", hex::encode(input));
        };
        let args = &input[4..];
        if let Some(f) = self.abi.as_ref().and_then(|a| a.function(sel)) {
            return match decode_args(&kinds(&f.inputs), args) {
                Some(tokens) => format_call(&f.name, &f.inputs, &tokens),
                None => f.signature.clone(),
            };
        }
        if let Some(k) = signatures::function(sel) {
            return describe_known(k, args);
        }
        format!("0x{}", hex::encode(sel))
    }

    /// Like [`describe_call`](Self::describe_call), but an empty input that moves value is
    /// `receive()`, which is what it runs on a contract.
    pub fn describe_call_with_value(&self, input: &[u8], value: Option<U256>) -> String {
        if input.is_empty() && value.is_some_and(|v| !v.is_zero()) {
            return "receive()".to_string();
        }
        self.describe_call(input)
    }

    /// Revert data as text: `Error("text")`, `Panic(0x12: division or modulo by zero)`, a custom
    /// error with decoded arguments, or `custom error 0xdeadbeef (N bytes of data)`.
    /// `None` for empty data.
    pub fn describe_revert(&self, output: &[u8]) -> Option<String> {
        if output.is_empty() {
            return None;
        }
        let Some(sel) = selector_of(output) else {
            return Some(format!("revert data 0x{}", hex::encode(output)));
        };
        let args = &output[4..];
        if sel == ERROR_SELECTOR {
            if let Some(s) = abi_string(args) {
                return Some(format!("Error({s:?})"));
            }
        } else if sel == PANIC_SELECTOR {
            if let Some(w) = word(args, 0) {
                let code = U256::from_be_bytes(*w);
                return Some(format!("Panic({code:#x}: {})", panic_reason(code)));
            }
        }
        if let Some(e) = self.abi.as_ref().and_then(|a| a.error(sel)) {
            return Some(match decode_args(&kinds(&e.inputs), args) {
                Some(tokens) => format_call(&e.name, &e.inputs, &tokens),
                None => format!("{} ({} bytes of undecodable data)", e.signature, args.len()),
            });
        }
        if let Some(k) = signatures::error(sel) {
            return Some(describe_known(k, args));
        }
        Some(format!(
            "custom error 0x{} ({} bytes of data)",
            hex::encode(sel),
            args.len()
        ))
    }

    /// The event's name when its topic0 is known.
    pub fn event_name(&self, topics: &[B256]) -> Option<String> {
        let t0 = topics.first()?;
        if let Some(e) = self.abi.as_ref().and_then(|a| a.event(t0)) {
            return Some(e.name.clone());
        }
        signatures::event(t0).map(|k| k.name().to_string())
    }

    /// A log as text: `Transfer(from: 0x…, to: 0x…, value: 5)` when it decodes; the signature plus
    /// raw topics and data when only the name is known; raw topics and data otherwise.
    pub fn describe_log(&self, topics: &[B256], data: &[u8]) -> String {
        let raw = || {
            let ts: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
            format!("topics=[{}] data=0x{}", ts.join(", "), hex::encode(data))
        };
        let Some(t0) = topics.first() else {
            return format!("anonymous log {}", raw());
        };
        if let Some(e) = self.abi.as_ref().and_then(|a| a.event(t0)) {
            return match decode_event(&e.inputs, topics, data) {
                Some(tokens) => format_call(&e.name, &e.inputs, &tokens),
                None => format!("{} {}", e.signature, raw()),
            };
        }
        if let Some(k) = signatures::event(t0) {
            if let Some(text) = describe_known_event(k, topics, data) {
                return text;
            }
            return format!("{} {}", k.signature, raw());
        }
        format!("log {}", raw())
    }
}

fn selector_of(input: &[u8]) -> Option<[u8; 4]> {
    input.get(..4)?.try_into().ok()
}

/// A built-in function or error with decoded arguments, or its signature if they don't decode.
fn describe_known(k: &signatures::Known, args: &[u8]) -> String {
    let Some(decl) = Declaration::parse(k.declaration) else {
        return k.signature.clone();
    };
    match decode_args(&kinds(&decl.params), args) {
        Some(tokens) => format_call(&decl.name, &decl.params, &tokens),
        None => k.signature.clone(),
    }
}

/// A built-in event. The table's `indexed` markers are tried first; when the topic count
/// disagrees (ERC-721's `Transfer` indexes its third parameter, ERC-20's does not) the first
/// `topics - 1` parameters are taken as indexed, which fits every standard event sharing a topic.
fn describe_known_event(k: &signatures::Known, topics: &[B256], data: &[u8]) -> Option<String> {
    let mut decl = Declaration::parse(k.declaration)?;
    if let Some(tokens) = decode_event(&decl.params, topics, data) {
        return Some(format_call(&decl.name, &decl.params, &tokens));
    }
    let n = topics.len().checked_sub(1)?;
    for (i, p) in decl.params.iter_mut().enumerate() {
        p.indexed = i < n;
    }
    let tokens = decode_event(&decl.params, topics, data)?;
    Some(format_call(&decl.name, &decl.params, &tokens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, b256};

    fn w(v: u64) -> [u8; 32] {
        U256::from(v).to_be_bytes()
    }

    fn addr_word(a: Address) -> [u8; 32] {
        a.into_word().0
    }

    fn calldata(sig: &str, words: &[[u8; 32]]) -> Vec<u8> {
        let mut v = signatures::selector(sig).to_vec();
        for x in words {
            v.extend_from_slice(x);
        }
        v
    }

    const ALICE: Address = address!("00000000000000000000000000000000000a11ce");

    const ABI: &str = r#"{"abi": [
        {"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[{"name":"","type":"bool"}],"stateMutability":"nonpayable"},
        {"type":"function","name":"batch","inputs":[{"name":"calls","type":"tuple[]","components":[{"name":"target","type":"address"},{"name":"data","type":"bytes"}]}],"outputs":[]},
        {"type":"error","name":"InsufficientBalance","inputs":[{"name":"needed","type":"uint256"},{"name":"available","type":"uint256"}]},
        {"type":"event","name":"Moved","anonymous":false,"inputs":[{"name":"who","type":"address","indexed":true},{"name":"amount","type":"int256","indexed":false}]},
        {"type":"constructor","inputs":[]},
        {"type":"receive","stateMutability":"payable"}
    ]}"#;

    #[test]
    fn parses_types_and_declarations() {
        let t = ParamType::parse("(address,bytes)[]").unwrap();
        assert_eq!(t.to_string(), "(address,bytes)[]");
        assert!(t.is_dynamic());
        assert_eq!(ParamType::parse("uint").unwrap().to_string(), "uint256");
        assert_eq!(
            ParamType::parse("bytes32[2][]").unwrap().to_string(),
            "bytes32[2][]"
        );
        assert!(ParamType::parse("uint7").is_none());
        assert!(ParamType::parse("bytes33").is_none());
        let d =
            Declaration::parse("Transfer(address indexed from, address indexed to, uint256 value)")
                .unwrap();
        assert_eq!(d.signature(), "Transfer(address,address,uint256)");
        assert!(d.params[0].indexed && !d.params[2].indexed);
        assert_eq!(d.params[2].name, "value");
    }

    #[test]
    fn builtin_tables_parse_and_agree_with_canonical() {
        for decl in signatures::all_declarations() {
            let parsed = Declaration::parse(decl).unwrap_or_else(|| panic!("unparsable: {decl}"));
            assert_eq!(parsed.signature(), signatures::canonical(decl), "{decl}");
        }
    }

    #[test]
    fn loads_artifact_and_bare_array() {
        let abi = Abi::from_json(ABI).unwrap();
        assert_eq!(abi.functions.len(), 2);
        assert_eq!(abi.functions[0].selector, [0xa9, 0x05, 0x9c, 0xbb]);
        assert_eq!(abi.functions[1].signature, "batch((address,bytes)[])");
        assert_eq!(
            abi.errors[0].signature,
            "InsufficientBalance(uint256,uint256)"
        );
        assert_eq!(abi.events[0].signature, "Moved(address,int256)");
        let bare = r#"[{"type":"function","name":"f","inputs":[{"name":"x","type":"uint8[3]"}]}]"#;
        assert_eq!(
            Abi::from_json(bare).unwrap().functions[0].signature,
            "f(uint8[3])"
        );
        assert!(matches!(Abi::from_json("{}"), Err(AbiError::NotAnAbi)));
        assert!(matches!(
            Abi::from_json(
                "[{\"type\":\"function\",\"name\":\"g\",\"inputs\":[{\"type\":\"fixed128x18\"}]}]"
            ),
            Err(AbiError::Item { index: 0, .. })
        ));
        assert!(matches!(Abi::from_json("nope"), Err(AbiError::Json(_))));
    }

    #[test]
    fn decodes_static_dynamic_and_nested() {
        // (uint256, string, (address,bytes)[], int8, bool, bytes2)
        let types: Vec<ParamType> = [
            "uint256",
            "string",
            "(address,bytes)[]",
            "int8",
            "bool",
            "bytes2",
        ]
        .iter()
        .map(|t| ParamType::parse(t).unwrap())
        .collect();
        let mut d = Vec::new();
        d.extend(w(7)); // uint256
        d.extend(w(6 * 32)); // string offset
        d.extend(w(8 * 32)); // array offset
        d.extend(U256::MAX.to_be_bytes::<32>()); // int8 = -1
        d.extend(w(1)); // bool
        let mut b2 = [0u8; 32];
        b2[..2].copy_from_slice(&[0xbe, 0xef]);
        d.extend(b2);
        // string "hi"
        d.extend(w(2));
        let mut s = [0u8; 32];
        s[..2].copy_from_slice(b"hi");
        d.extend(s);
        // array of one tuple
        d.extend(w(1));
        d.extend(w(32)); // offset of tuple 0 relative to element area
        d.extend(addr_word(ALICE));
        d.extend(w(64)); // bytes offset within tuple
        d.extend(w(3));
        let mut b = [0u8; 32];
        b[..3].copy_from_slice(&[1, 2, 3]);
        d.extend(b);
        let tokens = decode_args(&types, &d).unwrap();
        let text: Vec<String> = tokens.iter().map(Token::to_string).collect();
        assert_eq!(
            text,
            [
                "7",
                "\"hi\"",
                "[(0x00000000000000000000000000000000000A11cE, 0x010203)]",
                "-1",
                "true",
                "0xbeef"
            ]
        );
        // Truncated data and dirty padding are refused.
        assert!(decode_args(&types, &d[..100]).is_none());
        let mut dirty = w(2);
        dirty[0] = 1;
        assert!(decode_args(&[ParamType::Bool], &dirty).is_none());
        assert!(decode_args(&[ParamType::Uint(8)], &w(256)).is_none());
        assert!(decode_args(&[ParamType::Int(8)], &w(128)).is_none());
        // A huge array length must not allocate or loop.
        let mut huge = w(32).to_vec();
        huge.extend(U256::MAX.to_be_bytes::<32>());
        assert!(decode_args(&[ParamType::Array(Box::new(ParamType::Uint(256)))], &huge).is_none());
    }

    #[test]
    fn describe_call_variants() {
        let plain = Decoder::default();
        let with_abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
        let input = calldata("transfer(address,uint256)", &[addr_word(ALICE), w(1000)]);
        assert_eq!(
            with_abi.describe_call(&input),
            "transfer(to: 0x00000000000000000000000000000000000A11cE, amount: 1000)"
        );
        // Built-in table: decoded with the table's parameter names.
        assert_eq!(
            plain.describe_call(&input),
            "transfer(to: 0x00000000000000000000000000000000000A11cE, amount: 1000)"
        );
        assert_eq!(plain.function_name(&input).as_deref(), Some("transfer"));
        // Known signature, undecodable arguments.
        let short = calldata("transfer(address,uint256)", &[addr_word(ALICE)]);
        assert_eq!(plain.describe_call(&short), "transfer(address,uint256)");
        assert_eq!(with_abi.describe_call(&short), "transfer(address,uint256)");
        // Unknown selector.
        assert_eq!(
            plain.describe_call(&[0x12, 0x34, 0x56, 0x78, 0xff]),
            "0x12345678"
        );
        assert_eq!(plain.function_name(&[0x12, 0x34, 0x56, 0x78]), None);
        assert_eq!(plain.describe_call(&[0xab]), "0xab");
        // Empty input.
        assert_eq!(plain.describe_call(&[]), "()");
        assert_eq!(
            plain.describe_call_with_value(&[], Some(U256::from(1))),
            "receive()"
        );
        assert_eq!(plain.describe_call_with_value(&[], Some(U256::ZERO)), "()");
        assert_eq!(
            plain.describe_call(&calldata("totalSupply()", &[])),
            "totalSupply()"
        );
    }

    #[test]
    fn describe_revert_variants() {
        let plain = Decoder::default();
        let with_abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
        let mut err = ERROR_SELECTOR.to_vec();
        err.extend(w(32));
        err.extend(w(4));
        let mut s = [0u8; 32];
        s[..4].copy_from_slice(b"nope");
        err.extend(s);
        assert_eq!(
            plain.describe_revert(&err).as_deref(),
            Some("Error(\"nope\")")
        );
        let mut panic = PANIC_SELECTOR.to_vec();
        panic.extend(w(0x12));
        assert_eq!(
            plain.describe_revert(&panic).as_deref(),
            Some("Panic(0x12: division or modulo by zero)")
        );
        let custom = calldata("InsufficientBalance(uint256,uint256)", &[w(5), w(1)]);
        assert_eq!(
            with_abi.describe_revert(&custom).as_deref(),
            Some("InsufficientBalance(needed: 5, available: 1)")
        );
        // Without the ABI the same selector is OpenZeppelin's error from the built-in table.
        assert_eq!(
            plain.describe_revert(&custom).as_deref(),
            Some("InsufficientBalance(balance: 5, needed: 1)")
        );
        let unknown = calldata("Nope(uint256,uint256)", &[w(5), w(1)]);
        assert_eq!(
            plain.describe_revert(&unknown).as_deref(),
            Some(
                format!(
                    "custom error 0x{} (64 bytes of data)",
                    hex::encode(&unknown[..4])
                )
                .as_str()
            )
        );
        let oz = calldata("OwnableUnauthorizedAccount(address)", &[addr_word(ALICE)]);
        assert_eq!(
            plain.describe_revert(&oz).as_deref(),
            Some("OwnableUnauthorizedAccount(account: 0x00000000000000000000000000000000000A11cE)")
        );
        assert_eq!(
            plain.describe_revert(&[0xde, 0xad, 0xbe, 0xef]).as_deref(),
            Some("custom error 0xdeadbeef (0 bytes of data)")
        );
        assert_eq!(plain.describe_revert(&[]), None);
        assert_eq!(
            plain.describe_revert(&[1, 2]).as_deref(),
            Some("revert data 0x0102")
        );
    }

    #[test]
    fn describe_log_variants() {
        let plain = Decoder::default();
        let transfer = b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
        let from = ALICE.into_word();
        let to = Address::repeat_byte(0x22).into_word();
        // ERC-20: value in data.
        assert_eq!(
            plain.describe_log(&[transfer, from, to], &w(5)),
            "Transfer(from: 0x00000000000000000000000000000000000A11cE, to: 0x2222222222222222222222222222222222222222, value: 5)"
        );
        // ERC-721: all three indexed, empty data.
        let id = B256::from(w(9));
        assert_eq!(
            plain.describe_log(&[transfer, from, to, id], &[]),
            "Transfer(from: 0x00000000000000000000000000000000000A11cE, to: 0x2222222222222222222222222222222222222222, value: 9)"
        );
        // Known topic, undecodable.
        assert_eq!(
            plain.describe_log(&[transfer], &[1]),
            format!("Transfer(address,address,uint256) topics=[{transfer}] data=0x01")
        );
        // Unknown topic.
        let t = B256::repeat_byte(0xab);
        assert_eq!(
            plain.describe_log(&[t], &[]),
            format!("log topics=[{t}] data=0x")
        );
        // ABI event with a signed value.
        let abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
        let moved = signatures::event_topic("Moved(address,int256)");
        assert_eq!(
            abi.describe_log(&[moved, from], &U256::MAX.to_be_bytes::<32>()),
            "Moved(who: 0x00000000000000000000000000000000000A11cE, amount: -1)"
        );
        assert_eq!(abi.event_name(&[moved]).as_deref(), Some("Moved"));
        assert_eq!(plain.event_name(&[transfer]).as_deref(), Some("Transfer"));
    }
}
