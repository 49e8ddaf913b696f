//! Storage variables from a Foundry/solc `storageLayout`: which variable a slot holds
//! (`totalSupply`, `balanceOf[0x…]`, `allowance[0x…][0x…]`, `owners.length`, `owners[3]`,
//! `config.fee`, every variable packed into it) and their values decoded by type.
//!
//! A mapping's slot is `keccak256(key . base)` and a dynamic array's data starts at
//! `keccak256(base)`: neither can be inverted, but the run computed each of them itself, so
//! the KECCAK256 preimages it hashed give every key and base exactly
//! (`replay::access::slot_path`). A slot whose preimage the run did not see is left unnamed:
//! no key is guessed.
//!
//! The layout is read once into a checked model ([`StorageLayout::parse`]): a layout that does
//! not hold together (a missing type, an offset past its slot, an unknown encoding) is refused
//! as a whole, and its contract's slots are shown raw.

use std::collections::HashMap;

use alloy_primitives::{hex, keccak256, Address, B256, I256, U256};
use serde_json::Value;

use crate::render::values::short_amount;
use crate::replay::access::{slot_path, Preimages, SlotStep, MAX_SLOT_OFFSET};

/// How solc stores a type (`encoding` of a `storageLayout` type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Inplace,
    Mapping,
    DynamicArray,
    Bytes,
}

/// A storage variable, or a struct's member: its name, slot (relative to its struct's),
/// byte offset in that slot and type id.
#[derive(Clone, Debug)]
struct Member {
    label: String,
    slot: U256,
    offset: u64,
    ty: String,
}

/// One entry of `types`.
#[derive(Clone, Debug)]
struct Type {
    label: String,
    encoding: Encoding,
    bytes: U256,
    /// A mapping's key and value types.
    key: Option<String>,
    value: Option<String>,
    /// An array's element type.
    base: Option<String>,
    /// A struct's members.
    members: Option<Vec<Member>>,
}

/// solc's `storageLayout` of one contract, checked: every type a variable, member, key, value
/// or element names exists, and every value narrower than a slot fits in it at its offset.
#[derive(Clone, Debug)]
pub struct StorageLayout {
    storage: Vec<Member>,
    types: HashMap<String, Type>,
    /// `keccak256(p)` and `p` for each fixed slot `p` of a dynamic array or `bytes`/`string`
    /// (a variable's, or a member's of a struct held in place): where their data starts is
    /// the layout's own fact, which an optimizer that folds the hash leaves the run no
    /// preimage for.
    fixed_data: Vec<(U256, U256)>,
}

/// Why a `storageLayout` was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(String);

/// Struct and static-array nesting walked at most: a layout whose types hold themselves in
/// place would otherwise never end.
const MAX_DEPTH: u32 = 64;

fn bad(what: impl Into<String>) -> Malformed {
    Malformed(what.into())
}

fn text<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, Malformed> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{at}: no `{key}` string")))
}

fn decimal(s: &str, at: &str) -> Result<U256, Malformed> {
    U256::from_str_radix(s, 10).map_err(|_| bad(format!("{at}: {s:?} is not a number")))
}

fn member(v: &Value, at: &str) -> Result<Member, Malformed> {
    let label = text(v, "label", at)?;
    let at = format!("{at} {label}");
    let offset = v
        .get("offset")
        .and_then(Value::as_u64)
        .filter(|o| *o < 32)
        .ok_or_else(|| bad(format!("{at}: no `offset` below 32")))?;
    Ok(Member {
        label: label.to_string(),
        slot: decimal(text(v, "slot", &at)?, &at)?,
        offset,
        ty: text(v, "type", &at)?.to_string(),
    })
}

fn members(v: &Value, at: &str) -> Result<Vec<Member>, Malformed> {
    v.as_array()
        .ok_or_else(|| bad(format!("{at}: not a list")))?
        .iter()
        .map(|m| member(m, at))
        .collect()
}

impl StorageLayout {
    /// Reads and checks solc's `storageLayout` (`{"storage": [...], "types": {...}}`).
    pub fn parse(v: &Value) -> Result<StorageLayout, Malformed> {
        let storage = members(
            v.get("storage").ok_or_else(|| bad("no `storage`"))?,
            "storage",
        )?;
        let mut types = HashMap::new();
        // solc writes `"types": null` for a contract without storage.
        match v.get("types") {
            Some(Value::Null) | None if storage.is_empty() => {}
            Some(Value::Object(o)) => {
                for (id, t) in o {
                    let at = format!("type {id}");
                    let encoding = match text(t, "encoding", &at)? {
                        "inplace" => Encoding::Inplace,
                        "mapping" => Encoding::Mapping,
                        "dynamic_array" => Encoding::DynamicArray,
                        "bytes" => Encoding::Bytes,
                        other => return Err(bad(format!("{at}: unknown encoding {other:?}"))),
                    };
                    let field = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
                    let ty = Type {
                        label: text(t, "label", &at)?.to_string(),
                        encoding,
                        bytes: decimal(text(t, "numberOfBytes", &at)?, &at)?,
                        key: field("key"),
                        value: field("value"),
                        base: field("base"),
                        members: t.get("members").map(|m| members(m, &at)).transpose()?,
                    };
                    types.insert(id.clone(), ty);
                }
            }
            _ => return Err(bad("no `types` object")),
        }
        let mut layout = StorageLayout {
            storage,
            types,
            fixed_data: Vec::new(),
        };
        layout.check()?;
        let mut fixed = Vec::new();
        layout.fixed(&layout.storage, U256::ZERO, &mut fixed, 0);
        layout.fixed_data = fixed
            .into_iter()
            .map(|p| (U256::from_be_bytes(keccak256(p.to_be_bytes::<32>()).0), p))
            .collect();
        Ok(layout)
    }

    fn check(&self) -> Result<(), Malformed> {
        let exists = |id: &str, at: &str| {
            self.types
                .contains_key(id)
                .then_some(())
                .ok_or_else(|| bad(format!("{at}: type {id} is not in `types`")))
        };
        let fits = |m: &Member, at: &str| -> Result<(), Malformed> {
            exists(&m.ty, at)?;
            let bytes = self.types[&m.ty].bytes;
            if (bytes < U256::from(32) && U256::from(m.offset) + bytes > U256::from(32))
                || (bytes >= U256::from(32) && m.offset != 0)
            {
                return Err(bad(format!(
                    "{at} {}: {bytes} bytes at offset {} do not fit a slot",
                    m.label, m.offset
                )));
            }
            Ok(())
        };
        for m in &self.storage {
            fits(m, "storage")?;
        }
        for (id, t) in &self.types {
            let at = format!("type {id}");
            match t.encoding {
                Encoding::Mapping => {
                    for k in [&t.key, &t.value] {
                        exists(
                            k.as_deref()
                                .ok_or_else(|| bad(format!("{at}: no key/value")))?,
                            &at,
                        )?;
                    }
                }
                Encoding::DynamicArray => exists(
                    t.base
                        .as_deref()
                        .ok_or_else(|| bad(format!("{at}: no base")))?,
                    &at,
                )?,
                _ => {}
            }
            if let (Encoding::Inplace, Some(base)) = (t.encoding, &t.base) {
                exists(base, &at)?;
            }
            for m in t.members.iter().flatten() {
                fits(m, &at)?;
            }
        }
        Ok(())
    }

    /// The fixed slots (`base` + each member's) of the dynamic arrays and `bytes`/`string`
    /// among `list`, through structs held in place.
    fn fixed(&self, list: &[Member], base: U256, out: &mut Vec<U256>, depth: u32) {
        for m in list {
            let (Some(t), Some(at)) = (self.types.get(&m.ty), base.checked_add(m.slot)) else {
                continue;
            };
            match (t.encoding, &t.members) {
                (Encoding::DynamicArray | Encoding::Bytes, _) => out.push(at),
                (Encoding::Inplace, Some(ms)) if depth < MAX_DEPTH => {
                    self.fixed(ms, at, out, depth + 1)
                }
                _ => {}
            }
        }
    }

    /// Whether `var` is a `bytes`/`string` (or one of its data words): a value that may span
    /// slots.
    pub fn is_bytes(&self, var: &Var) -> bool {
        self.types.get(&var.ty).map(|t| t.encoding) == Some(Encoding::Bytes)
    }

    /// The slot holding the length of the `bytes`/`string` `var` found at `slot`: `slot` itself
    /// for its length slot, else (a data word) the slot whose `keccak256` its data starts at,
    /// from the run's preimages or the layout's own fixed slots.
    pub fn bytes_slot(&self, var: &Var, slot: U256, preimages: &Preimages) -> Option<U256> {
        let Part::Data(n) = var.part else {
            return Some(slot);
        };
        let start = slot.checked_sub(n)?;
        if let Some(pre) = preimages.get(&B256::from(start.to_be_bytes::<32>())) {
            return (pre.len() == 32).then(|| U256::from_be_slice(pre));
        }
        self.fixed_data
            .iter()
            .find(|(h, _)| *h == start)
            .map(|(_, p)| *p)
    }

    /// solc's label of type `id` (`uint256`, `mapping(address => uint256)`, `enum Vault.Kind`).
    pub fn label(&self, id: &str) -> &str {
        self.types.get(id).map_or("", |t| t.label.as_str())
    }

    fn bytes(&self, id: &str) -> U256 {
        self.types.get(id).map_or(U256::from(32), |t| t.bytes)
    }

    /// How many slots a value of type `id` takes in place (`numberOfBytes` rounded up).
    fn slots(&self, id: &str) -> U256 {
        self.bytes(id).div_ceil(U256::from(32)).max(U256::from(1))
    }
}

/// One step from a storage variable down to what a slot holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A mapping key, shown by its type (a checksummed address, an integer, a quoted string).
    Key(String),
    /// An array index.
    Index(U256),
    /// A struct member.
    Member(String),
}

/// Which part of its value a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The value itself (for `bytes`/`string`, the short form or the long form's length).
    Value,
    /// A dynamic array's length.
    Length,
    /// Word `n` of a long `bytes`/`string`'s data, which spans slots from `keccak256(slot)`.
    Data(U256),
}

/// A variable (or one part of one) a slot holds, at `offset` bytes from the slot's low end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// The storage variable's name.
    pub variable: String,
    /// Keys, indices and members from the variable down.
    pub path: Vec<PathStep>,
    /// The value's type id (`types` key).
    pub ty: String,
    pub offset: u64,
    pub part: Part,
}

impl Var {
    fn then(&self, step: PathStep) -> Var {
        let mut v = self.clone();
        v.path.push(step);
        v
    }

    fn at(&self, ty: &str, offset: u64, part: Part) -> Var {
        Var {
            ty: ty.to_string(),
            offset,
            part,
            ..self.clone()
        }
    }

    /// The path as text: `[0x…]`, `[3]`, `.fee`, joined.
    fn path_text(path: &[PathStep]) -> String {
        path.iter()
            .map(|s| match s {
                PathStep::Key(k) => format!("[{k}]"),
                PathStep::Index(i) => format!("[{i}]"),
                PathStep::Member(m) => format!(".{m}"),
            })
            .collect()
    }

    /// `_allowances[0x…][0x…]`, `owners.length`, `name (data, word 2)`.
    pub fn name(&self) -> String {
        let mut s = format!("{}{}", self.variable, Var::path_text(&self.path));
        match self.part {
            Part::Value => {}
            Part::Length => s.push_str(".length"),
            Part::Data(n) => s.push_str(&format!(" (data, word {n})")),
        }
        s
    }

    /// The path's steps as strings: keys as shown, indices in decimal, member names.
    pub fn key_path(&self) -> Vec<String> {
        self.path
            .iter()
            .map(|s| match s {
                PathStep::Key(k) => k.clone(),
                PathStep::Index(i) => i.to_string(),
                PathStep::Member(m) => m.clone(),
            })
            .collect()
    }
}

impl StorageLayout {
    /// The variables storage `slot` holds, from the derivation the run's KECCAK256 preimages
    /// give it ([`slot_path`]), in layout order; several where variables are packed into the
    /// slot. Empty where the derivation does not fit the layout, or the run did not hash the
    /// slot's key: such a slot is shown raw, never named by a guess.
    pub fn vars_at(&self, slot: U256, preimages: &Preimages) -> Vec<Var> {
        let (mut root, mut steps) = slot_path(slot, preimages);
        // A derivation the run hashed may start in the data of a dynamic value at a fixed
        // slot, whose hash the compiler folded.
        let data = self.fixed_data.iter().find(|(h, _)| {
            root.checked_sub(*h)
                .is_some_and(|off| off < U256::from(MAX_SLOT_OFFSET))
        });
        if let Some((h, p)) = data {
            steps.insert(
                0,
                SlotStep {
                    key: None,
                    off: root - *h,
                },
            );
            root = *p;
        }
        let mut out = Vec::new();
        self.members(&self.storage, root, &steps, None, &mut out, 0);
        out
    }

    /// The variables of a list of variables or struct members (`within`: the struct's) at the
    /// slot `rel` slots into it, then down `steps`.
    fn members(
        &self,
        list: &[Member],
        rel: U256,
        steps: &[SlotStep],
        within: Option<&Var>,
        out: &mut Vec<Var>,
        depth: u32,
    ) {
        for m in list {
            let Some(r) = rel.checked_sub(m.slot) else {
                continue;
            };
            if r >= self.slots(&m.ty) {
                continue;
            }
            let at = match within {
                Some(v) => v.then(PathStep::Member(m.label.clone())),
                None => Var {
                    variable: m.label.clone(),
                    path: Vec::new(),
                    ty: m.ty.clone(),
                    offset: 0,
                    part: Part::Value,
                },
            };
            self.walk(
                &m.ty,
                r,
                steps,
                at.at(&m.ty, m.offset, Part::Value),
                out,
                depth,
            );
        }
    }

    /// The variables of the slot `rel` slots into a value of type `id` (`at`), then down
    /// `steps`.
    fn walk(
        &self,
        id: &str,
        rel: U256,
        steps: &[SlotStep],
        at: Var,
        out: &mut Vec<Var>,
        depth: u32,
    ) {
        let Some(t) = self.types.get(id).filter(|_| depth < MAX_DEPTH) else {
            return;
        };
        match t.encoding {
            Encoding::Mapping => {
                let Some((step, rest)) = steps.split_first() else {
                    return;
                };
                let (Some(key), Some(key_ty), Some(value)) = (&step.key, &t.key, &t.value) else {
                    return;
                };
                if !rel.is_zero() {
                    return;
                }
                if let Some(shown) = self.show_key(key_ty, key) {
                    let at = at.then(PathStep::Key(shown)).at(value, 0, Part::Value);
                    self.walk(value, step.off, rest, at, out, depth + 1);
                }
            }
            Encoding::DynamicArray => {
                if !rel.is_zero() {
                    return;
                }
                let Some((step, rest)) = steps.split_first() else {
                    out.push(at.at(id, 0, Part::Length));
                    return;
                };
                if let (None, Some(base)) = (&step.key, &t.base) {
                    self.element(base, None, step.off, rest, &at, out, depth);
                }
            }
            Encoding::Bytes => match steps {
                [] if rel.is_zero() => out.push(at),
                [step] if step.key.is_none() && rel.is_zero() => {
                    let offset = at.offset;
                    out.push(at.at(id, offset, Part::Data(step.off)))
                }
                _ => {}
            },
            Encoding::Inplace => {
                if let Some(members) = &t.members {
                    self.members(members, rel, steps, Some(&at), out, depth + 1);
                } else if let Some(base) = &t.base {
                    // A static array, in place: its length is in its label, `T[n]`.
                    let len = t
                        .label
                        .rsplit_once('[')
                        .and_then(|(_, n)| n.strip_suffix(']'))
                        .and_then(|n| U256::from_str_radix(n, 10).ok());
                    self.element(base, len, rel, steps, &at, out, depth);
                } else if rel.is_zero() && steps.is_empty() {
                    out.push(at);
                }
            }
        }
    }

    /// The elements of an array of `base` elements (at most `len`, when known) `off` slots into
    /// its data: one element, or every element packed into the slot.
    #[allow(clippy::too_many_arguments)]
    fn element(
        &self,
        base: &str,
        len: Option<U256>,
        off: U256,
        steps: &[SlotStep],
        at: &Var,
        out: &mut Vec<Var>,
        depth: u32,
    ) {
        let bytes = self.bytes(base);
        let within = |i: U256| len.is_none_or(|n| i < n);
        if bytes >= U256::from(32) {
            let span = self.slots(base);
            let (i, r) = (off / span, off % span);
            if within(i) {
                let at = at.then(PathStep::Index(i)).at(base, 0, Part::Value);
                self.walk(base, r, steps, at, out, depth + 1);
            }
            return;
        }
        if !steps.is_empty() || bytes.is_zero() {
            return;
        }
        let size = bytes.to::<u64>();
        let per = 32 / size;
        let Some(first) = off.checked_mul(U256::from(per)) else {
            return;
        };
        for k in 0..per {
            let i = first + U256::from(k);
            if within(i) {
                out.push(at.then(PathStep::Index(i)).at(base, k * size, Part::Value));
            }
        }
    }

    /// A mapping key as hashed, shown by its type: a checksummed address, an integer, a bool,
    /// a string, or hex.
    fn show_key(&self, key_type: &str, key: &[u8]) -> Option<String> {
        let t = self.types.get(key_type)?;
        let label = t.label.as_str();
        if t.encoding == Encoding::Bytes {
            return Some(match std::str::from_utf8(key) {
                Ok(s) if label == "string" => format!("{s:?}"),
                _ => format!("0x{}", hex::encode(key)),
            });
        }
        let word: [u8; 32] = key.try_into().ok()?;
        let word = U256::from_be_bytes(word);
        Some(if label == "bool" {
            (!word.is_zero()).to_string()
        } else if is_address(label) {
            address(word).to_checksum(None)
        } else if label.starts_with("uint") {
            word.to_string()
        } else if label.starts_with("int") {
            I256::from_raw(word).to_string()
        } else {
            B256::from(word).to_string()
        })
    }
}

/// The name of storage `slot` of a contract with `layout` (solc's `storageLayout`), from the
/// derivation the run's KECCAK256 preimages give it ([`slot_path`]): `_balances[0x…]`,
/// `_allowances[0x…][0x…]`, `positions[0x…].liquidity`, `owners[3]`, `config.fee`, the names
/// of the variables packed into one slot joined by `, ` (an array's packed elements as one
/// range, `flags[0…31]`). `None` where the layout is malformed, the derivation does not fit
/// it, or the run did not hash the slot's key: such a slot is shown raw, never named by a
/// guess.
pub fn exact_name(layout: &Value, slot: U256, preimages: &Preimages) -> Option<String> {
    let vars = StorageLayout::parse(layout).ok()?.vars_at(slot, preimages);
    let mut names: Vec<String> = Vec::new();
    let mut run: Option<(String, U256, U256)> = None;
    let close = |run: (String, U256, U256), names: &mut Vec<String>| {
        let (prefix, first, last) = run;
        names.push(match first == last {
            true => format!("{prefix}[{first}]"),
            false => format!("{prefix}[{first}…{last}]"),
        });
    };
    for v in vars {
        let (Some(PathStep::Index(i)), Part::Value) = (v.path.last(), v.part) else {
            if let Some(r) = run.take() {
                close(r, &mut names);
            }
            names.push(v.name());
            continue;
        };
        let prefix = format!(
            "{}{}",
            v.variable,
            Var::path_text(&v.path[..v.path.len() - 1])
        );
        match &mut run {
            Some((p, _, last)) if *p == prefix && *last + U256::from(1) == *i => *last = *i,
            _ => {
                if let Some(r) = run.replace((prefix, *i, *i)) {
                    close(r, &mut names);
                }
            }
        }
    }
    if let Some(r) = run {
        close(r, &mut names);
    }
    (!names.is_empty()).then(|| names.join(", "))
}

fn is_address(label: &str) -> bool {
    label == "address" || label == "address payable" || label.starts_with("contract ")
}

fn address(word: U256) -> Address {
    Address::from_word(B256::from(word.to_be_bytes::<32>()))
}

pub use crate::render::state_changes::Shown;

fn plain(text: String) -> Shown {
    Shown { text, short: None }
}

/// Enum member names by the enum's canonical name (`Vault.Kind`), from the sources' ASTs.
pub type Enums<'a> = &'a dyn Fn(&str) -> Option<Vec<String>>;

impl StorageLayout {
    /// `var`'s own bytes of the slot holding `word` (`offset`, the type's `numberOfBytes`), as
    /// an integer; the whole word for a value that fills its slot.
    pub fn bits(&self, var: &Var, word: U256) -> U256 {
        let bytes = self.bytes(&var.ty);
        let whole = var.part != Part::Value
            || bytes >= U256::from(32)
            || self.types.get(&var.ty).map(|t| t.encoding) != Some(Encoding::Inplace);
        if whole {
            return word;
        }
        let bits = bytes.to::<usize>() * 8;
        (word >> (var.offset as usize * 8)) & ((U256::from(1) << bits) - U256::from(1))
    }

    /// `var`'s value in the slot holding `word`, read from its own bytes (`offset`, the type's
    /// `numberOfBytes`) and shown by its type. An enum is named by its member where `enums`
    /// knows it, else shown as `Vault.Kind(2)`; a type this does not read (a user-defined value
    /// type, a function) as the hex of its bytes.
    pub fn show(&self, var: &Var, word: U256, enums: Enums<'_>) -> Shown {
        let Some(t) = self.types.get(&var.ty) else {
            return plain(format!("{word:#x}"));
        };
        match var.part {
            Part::Length => return integer(word, false, 256),
            Part::Data(_) => return plain(B256::from(word).to_string()),
            Part::Value => {}
        }
        if t.encoding == Encoding::Bytes {
            return short_bytes(word, t.label == "string");
        }
        let n = t.bytes.min(U256::from(32)).to::<usize>();
        let bits = n * 8;
        let v = self.bits(var, word);
        let label = t.label.as_str();
        let width = |prefix: &str| {
            label
                .strip_prefix(prefix)
                .and_then(|w| w.parse::<usize>().ok())
                .filter(|_| label.len() > prefix.len())
        };
        if label == "bool" {
            plain((!v.is_zero()).to_string())
        } else if is_address(label) {
            plain(address(v).to_checksum(None))
        } else if label == "uint" || width("uint").is_some() {
            integer(v, false, bits)
        } else if label == "int" || width("int").is_some() {
            integer(v, true, bits)
        } else if width("bytes").is_some() {
            plain(format!(
                "0x{}",
                hex::encode(&v.to_be_bytes::<32>()[32 - n..])
            ))
        } else if let Some(e) = label.strip_prefix("enum ") {
            let short = e.rsplit('.').next().unwrap_or(e);
            let member = enums(e).and_then(|ms| {
                let i = usize::try_from(v).ok()?;
                ms.get(i).cloned()
            });
            plain(match member {
                Some(m) => format!("{short}.{m}"),
                None => format!("{e}({v})"),
            })
        } else {
            plain(format!(
                "0x{}",
                hex::encode(&v.to_be_bytes::<32>()[32 - n..])
            ))
        }
    }
}

/// An integer of `bits` bits (`signed`: two's complement), exact, with its short form.
fn integer(v: U256, signed: bool, bits: usize) -> Shown {
    if signed && bits > 0 && v.bit(bits - 1) {
        let raw = if bits >= 256 {
            v
        } else {
            v | (U256::MAX << bits)
        };
        let i = I256::from_raw(raw);
        return Shown {
            text: i.to_string(),
            short: short_amount(i.unsigned_abs(), "-"),
        };
    }
    Shown {
        text: v.to_string(),
        short: short_amount(v, ""),
    }
}

/// Most bytes of one long `bytes`/`string` read from its data words: a length past it (a
/// corrupt or hostile slot can declare any) reads no more, and the value says where it was cut.
pub const MAX_SPAN_BYTES: u64 = 4096;

/// How many data words past its length slot a `bytes`/`string` whose length slot holds `word`
/// takes: none when it is in place, else its length in words, at most [`MAX_SPAN_BYTES`]'s.
pub fn span_words(word: U256) -> u64 {
    if word.as_limbs()[0] & 1 == 0 {
        return 0;
    }
    let len: U256 = word >> 1usize;
    let len = len.saturating_to::<u64>().min(MAX_SPAN_BYTES);
    len.div_ceil(32)
}

/// A whole `bytes`/`string` value from its length slot's `word` and its data words (`data(i)`:
/// word `i` from `keccak256(slot)`, `None` where it was not read): in place when short, else
/// joined across its slots (a quoted string, or `0x` hex for bytes and for text that is not
/// UTF-8), its length beside it (`[70 bytes]`); past [`MAX_SPAN_BYTES`] cut and saying so.
pub fn spanning_bytes(word: U256, string: bool, data: &dyn Fn(u64) -> Option<U256>) -> Shown {
    if word.as_limbs()[0] & 1 == 0 {
        return short_bytes(word, string);
    }
    let len: U256 = word >> 1usize;
    let kept = len.saturating_to::<u64>().min(MAX_SPAN_BYTES) as usize;
    let mut bytes = Vec::with_capacity(kept.div_ceil(32) * 32);
    for i in 0..kept.div_ceil(32) as u64 {
        match data(i) {
            Some(w) => bytes.extend_from_slice(&w.to_be_bytes::<32>()),
            None => return plain(format!("(long: {len} bytes, data word {i} not read)")),
        }
    }
    bytes.truncate(kept);
    let cut = U256::from(kept) < len;
    let text = match std::str::from_utf8(&bytes) {
        Ok(s) if string => format!("{s:?}"),
        // Cut inside a character: the text up to it.
        Err(e) if string && cut && e.error_len().is_none() => {
            format!(
                "{:?}",
                std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("")
            )
        }
        _ => format!("0x{}", hex::encode(&bytes)),
    };
    match cut {
        true => plain(format!("{text} (truncated after {kept} of {len} bytes)")),
        false => Shown {
            text,
            short: Some(format!("{len} bytes")),
        },
    }
}

/// A `bytes`/`string` slot: in place when short (data in the high bytes, `length * 2` in the
/// lowest), else `length * 2 + 1`, the data spanning the slots from `keccak256(slot)`.
fn short_bytes(word: U256, string: bool) -> Shown {
    let low = word.as_limbs()[0];
    if low & 1 == 1 {
        let len = (word - U256::from(1)) >> 1;
        return plain(format!(
            "(long: {len} bytes, in the slots from keccak256(slot))"
        ));
    }
    let len = (low & 0xff) as usize / 2;
    let bytes = word.to_be_bytes::<32>();
    // In place, the bytes past the length are zero; anything else is not this encoding.
    if len > 31 || bytes[len..31].iter().any(|b| *b != 0) {
        return plain(B256::from(word).to_string());
    }
    let data = &bytes[..len];
    plain(match std::str::from_utf8(data) {
        Ok(s) if string => format!("{s:?}"),
        _ => format!("0x{}", hex::encode(data)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{keccak256, Bytes};
    use serde_json::json;

    /// The preimage map a run that hashed each of `inputs` leaves.
    fn hashed(inputs: &[Vec<u8>]) -> Preimages {
        inputs
            .iter()
            .map(|i| (keccak256(i), Bytes::from(i.clone())))
            .collect()
    }

    fn word(v: U256) -> Vec<u8> {
        v.to_be_bytes::<32>().to_vec()
    }

    /// Layouts as solc writes them (`numberOfBytes`, `encoding`, members' slots); each slot's
    /// name comes from the preimages a run hashed, mapping keys shown by their type.
    #[test]
    fn names_come_from_the_preimages_the_run_hashed() {
        let layout = json!({"storage": [
            {"label": "totalSupply", "slot": "0", "offset": 0, "type": "t_uint256"},
            {"label": "balanceOf", "slot": "1", "offset": 0, "type": "t_mapping(t_address,t_uint256)"},
            {"label": "allowance", "slot": "2", "offset": 0, "type": "t_mapping(t_address,t_mapping(t_address,t_uint256))"},
            {"label": "owners", "slot": "3", "offset": 0, "type": "t_array(t_address)dyn_storage"},
            {"label": "paused", "slot": "4", "offset": 0, "type": "t_bool"},
            {"label": "decimals", "slot": "4", "offset": 1, "type": "t_uint8"},
            {"label": "positions", "slot": "5", "offset": 0, "type": "t_mapping(t_bytes32,t_struct(Position)_storage)"},
            {"label": "names", "slot": "6", "offset": 0, "type": "t_mapping(t_string_memory_ptr,t_uint256)"}],
            "types": {
              "t_address": {"encoding": "inplace", "label": "address", "numberOfBytes": "20"},
              "t_bool": {"encoding": "inplace", "label": "bool", "numberOfBytes": "1"},
              "t_uint8": {"encoding": "inplace", "label": "uint8", "numberOfBytes": "1"},
              "t_uint128": {"encoding": "inplace", "label": "uint128", "numberOfBytes": "16"},
              "t_uint256": {"encoding": "inplace", "label": "uint256", "numberOfBytes": "32"},
              "t_bytes32": {"encoding": "inplace", "label": "bytes32", "numberOfBytes": "32"},
              "t_string_memory_ptr": {"encoding": "bytes", "label": "string", "numberOfBytes": "32"},
              "t_array(t_address)dyn_storage": {"encoding": "dynamic_array", "label": "address[]", "base": "t_address", "numberOfBytes": "32"},
              "t_mapping(t_address,t_uint256)": {"encoding": "mapping", "key": "t_address", "value": "t_uint256", "label": "mapping(address => uint256)", "numberOfBytes": "32"},
              "t_mapping(t_address,t_mapping(t_address,t_uint256))": {"encoding": "mapping", "key": "t_address", "value": "t_mapping(t_address,t_uint256)", "label": "mapping(address => mapping(address => uint256))", "numberOfBytes": "32"},
              "t_mapping(t_string_memory_ptr,t_uint256)": {"encoding": "mapping", "key": "t_string_memory_ptr", "value": "t_uint256", "label": "mapping(string => uint256)", "numberOfBytes": "32"},
              "t_mapping(t_bytes32,t_struct(Position)_storage)": {"encoding": "mapping", "key": "t_bytes32", "value": "t_struct(Position)_storage", "label": "mapping(bytes32 => struct Position)", "numberOfBytes": "32"},
              "t_struct(Position)_storage": {"encoding": "inplace", "label": "struct Position", "numberOfBytes": "64", "members": [
                {"label": "liquidity", "slot": "0", "offset": 0, "type": "t_uint128"},
                {"label": "fees", "slot": "1", "offset": 0, "type": "t_uint256"}]}}});
        let a = Address::repeat_byte(0xaa);
        let b = Address::repeat_byte(0xbb);
        let (aw, bw) = (a.into_word().to_vec(), b.into_word().to_vec());
        let at = |pre: &[u8]| U256::from_be_bytes(keccak256(pre).0);
        let bal_a = [aw.clone(), word(U256::from(1))].concat();
        let allow_a = [aw.clone(), word(U256::from(2))].concat();
        let allow_ab = [bw.clone(), word(at(&allow_a))].concat();
        let owners = word(U256::from(3));
        let pos_key = [vec![0x11; 32], word(U256::from(5))].concat();
        let name_key = [b"alice".to_vec(), word(U256::from(6))].concat();
        let pre = hashed(&[
            bal_a.clone(),
            allow_a,
            allow_ab.clone(),
            owners.clone(),
            pos_key.clone(),
            name_key.clone(),
        ]);
        let name = |slot: U256| exact_name(&layout, slot, &pre);
        let name_with = |pre: &Preimages, slot: U256| exact_name(&layout, slot, pre);
        assert_eq!(name(U256::ZERO).as_deref(), Some("totalSupply"));
        assert_eq!(
            name(at(&bal_a)),
            Some(format!("balanceOf[{}]", a.to_checksum(None)))
        );
        assert_eq!(
            name(at(&allow_ab)),
            Some(format!(
                "allowance[{}][{}]",
                a.to_checksum(None),
                b.to_checksum(None)
            ))
        );
        assert_eq!(name(U256::from(3)).as_deref(), Some("owners.length"));
        assert_eq!(
            name(at(&owners) + U256::from(7)).as_deref(),
            Some("owners[7]")
        );
        assert_eq!(name(U256::from(4)).as_deref(), Some("paused, decimals"));
        let pos = format!("positions[{}]", B256::repeat_byte(0x11));
        assert_eq!(name(at(&pos_key)), Some(format!("{pos}.liquidity")));
        assert_eq!(
            name(at(&pos_key) + U256::from(1)),
            Some(format!("{pos}.fees"))
        );
        assert_eq!(name(at(&name_key)).as_deref(), Some("names[\"alice\"]"));
        // An array at a fixed slot: where its data starts is the layout's own fact, hashed by
        // the run or not (an optimizer folds `keccak256(3)`).
        assert_eq!(
            name_with(&Preimages::new(), at(&owners) + U256::from(2)).as_deref(),
            Some("owners[2]")
        );
        // A key the run never hashed: the slot stays raw, whatever keys would fit.
        let bal_b = [bw, word(U256::from(1))].concat();
        assert_eq!(name(at(&bal_b)), None);
        // A slot past every variable.
        assert_eq!(name(U256::from(9)), None);
    }

    fn packed_layout() -> Value {
        json!({"storage": [
            {"label": "owner", "slot": "0", "offset": 0, "type": "t_address"},
            {"label": "paused", "slot": "0", "offset": 20, "type": "t_bool"},
            {"label": "kind", "slot": "0", "offset": 21, "type": "t_enum(Kind)1"},
            {"label": "mode", "slot": "0", "offset": 22, "type": "t_enum(Mode)2"},
            {"label": "tick", "slot": "0", "offset": 23, "type": "t_int24"},
            {"label": "tag", "slot": "0", "offset": 26, "type": "t_bytes4"},
            {"label": "name", "slot": "1", "offset": 0, "type": "t_string_storage"},
            {"label": "flags", "slot": "2", "offset": 0, "type": "t_array(t_uint8)3_storage"},
            {"label": "big", "slot": "3", "offset": 0, "type": "t_uint256"}],
            "types": {
              "t_address": {"encoding": "inplace", "label": "address", "numberOfBytes": "20"},
              "t_bool": {"encoding": "inplace", "label": "bool", "numberOfBytes": "1"},
              "t_enum(Kind)1": {"encoding": "inplace", "label": "enum Vault.Kind", "numberOfBytes": "1"},
              "t_enum(Mode)2": {"encoding": "inplace", "label": "enum Vault.Mode", "numberOfBytes": "1"},
              "t_int24": {"encoding": "inplace", "label": "int24", "numberOfBytes": "3"},
              "t_bytes4": {"encoding": "inplace", "label": "bytes4", "numberOfBytes": "4"},
              "t_uint8": {"encoding": "inplace", "label": "uint8", "numberOfBytes": "1"},
              "t_uint256": {"encoding": "inplace", "label": "uint256", "numberOfBytes": "32"},
              "t_string_storage": {"encoding": "bytes", "label": "string", "numberOfBytes": "32"},
              "t_array(t_uint8)3_storage": {"encoding": "inplace", "label": "uint8[3]", "base": "t_uint8", "numberOfBytes": "32"}}})
    }

    /// One packed slot read variable by variable, each from its own bytes and by its type.
    #[test]
    fn a_packed_slot_is_split_into_its_variables_each_shown_by_type() {
        let l = StorageLayout::parse(&packed_layout()).unwrap();
        let pre = Preimages::new();
        let vars = l.vars_at(U256::ZERO, &pre);
        let names: Vec<String> = vars.iter().map(Var::name).collect();
        assert_eq!(names, ["owner", "paused", "kind", "mode", "tick", "tag"]);
        let owner = Address::repeat_byte(0x5f);
        // tag 0xdeadbeef, tick -60, mode 1 (no names known), kind 2, paused.
        let mut word = U256::from_be_slice(owner.as_slice());
        word |= U256::from(1) << 160;
        word |= U256::from(2) << 168;
        word |= U256::from(1) << 176;
        word |= U256::from(0x1000000u32 - 60) << 184;
        word |= U256::from(0xdeadbeefu32) << 208;
        let enums = |e: &str| (e == "Vault.Kind").then(|| vec!["A".into(), "B".into(), "C".into()]);
        let shown: Vec<String> = vars
            .iter()
            .map(|v| l.show(v, word, &enums).to_string())
            .collect();
        assert_eq!(
            shown,
            [
                owner.to_checksum(None),
                "true".into(),
                "Kind.C".into(),
                "Vault.Mode(1)".into(),
                "-60".into(),
                "0xdeadbeef".into(),
            ]
        );
        // Integers exact, with cast's short form beside large ones.
        let big = l.vars_at(U256::from(3), &pre);
        let v = U256::from(9_800u64) * U256::from(10u64).pow(U256::from(18));
        assert_eq!(
            l.show(&big[0], v, &enums).to_string(),
            "9800000000000000000000 [9.8e21]"
        );
        // A static array's packed elements, no more than its length.
        let flags = l.vars_at(U256::from(2), &pre);
        let names: Vec<String> = flags.iter().map(Var::name).collect();
        assert_eq!(names, ["flags[0]", "flags[1]", "flags[2]"]);
        let w = U256::from(0x030201u32);
        let shown: Vec<String> = flags
            .iter()
            .map(|v| l.show(v, w, &enums).to_string())
            .collect();
        assert_eq!(shown, ["1", "2", "3"]);
        assert_eq!(
            exact_name(&packed_layout(), U256::from(2), &pre).as_deref(),
            Some("flags[0…2]")
        );
    }

    /// Strings in place (`length * 2` in the lowest byte) and long ones (`length * 2 + 1`,
    /// the data from `keccak256(slot)`), each data word named.
    #[test]
    fn strings_short_in_place_and_long_across_slots() {
        let l = StorageLayout::parse(&packed_layout()).unwrap();
        let name = &l.vars_at(U256::from(1), &Preimages::new())[0];
        let mut short = [0u8; 32];
        short[..5].copy_from_slice(b"Token");
        short[31] = 10;
        let none = |_: &str| None;
        assert_eq!(
            l.show(name, U256::from_be_bytes(short), &none).text,
            "\"Token\""
        );
        assert_eq!(l.show(name, U256::ZERO, &none).text, "\"\"");
        assert_eq!(
            l.show(name, U256::from(2 * 40 + 1), &none).text,
            "(long: 40 bytes, in the slots from keccak256(slot))"
        );
        let data = U256::from_be_bytes(keccak256(word(U256::from(1))).0) + U256::from(1);
        let pre = hashed(&[word(U256::from(1))]);
        let second = l.vars_at(data, &pre);
        assert_eq!(second[0].name(), "name (data, word 1)");
    }

    /// A long string joined from its words, its length beside it; cut at the cap (inside a
    /// character: before it) and saying so; a word not read said, never guessed.
    #[test]
    fn long_values_are_joined_and_bounded() {
        let text = "é".repeat(40); // 80 bytes
        let words: Vec<U256> = text
            .as_bytes()
            .chunks(32)
            .map(|c| {
                let mut w = [0u8; 32];
                w[..c.len()].copy_from_slice(c);
                U256::from_be_bytes(w)
            })
            .collect();
        let data = |i: u64| words.get(i as usize).copied();
        let len = U256::from(80 * 2 + 1);
        let shown = spanning_bytes(len, true, &data);
        assert_eq!(shown.text, format!("{text:?}"));
        assert_eq!(shown.to_string(), format!("{text:?} [80 bytes]"));
        assert_eq!(span_words(len), 3);
        assert!(spanning_bytes(len, false, &data)
            .text
            .starts_with("0xc3a9c3a9"));
        // A declared length past the cap reads the cap's words, no more.
        let huge = (U256::from(1u64) << 200) | U256::from(1);
        assert_eq!(span_words(huge), MAX_SPAN_BYTES / 32);
        let filler = |_: u64| Some(U256::from_be_bytes([b'a'; 32]));
        let cut = spanning_bytes(huge, true, &filler);
        assert!(cut.text.starts_with("\"aaaa"), "{}", cut.text);
        assert!(cut.text.ends_with(&format!(
            "(truncated after 4096 of {} bytes)",
            huge >> 1usize
        )));
        // 4096 bytes of two-byte characters after one byte: cut inside the last one.
        let odd = |i: u64| {
            let mut w = [0u8; 32];
            for (j, b) in w.iter_mut().enumerate() {
                let at = i as usize * 32 + j;
                *b = if at == 0 {
                    b'x'
                } else if at % 2 == 1 {
                    0xc3
                } else {
                    0xa9
                };
            }
            Some(U256::from_be_bytes(w))
        };
        let cut = spanning_bytes(huge, true, &odd);
        assert!(cut.text.starts_with("\"xéé"), "{}", cut.text);
        assert_eq!(
            spanning_bytes(len, true, &|_| None).text,
            "(long: 80 bytes, data word 0 not read)"
        );
    }

    /// A layout that does not hold together is refused whole, never half read.
    #[test]
    fn malformed_layouts_are_refused_not_guessed() {
        let mut missing = packed_layout();
        missing["types"].as_object_mut().unwrap().remove("t_bool");
        assert!(StorageLayout::parse(&missing).is_err());
        let mut overflow = packed_layout();
        overflow["storage"][5]["offset"] = json!(30);
        assert!(StorageLayout::parse(&overflow).is_err());
        assert!(StorageLayout::parse(&json!({"storage": "x"})).is_err());
        assert!(StorageLayout::parse(&json!([1, 2])).is_err());
        assert!(exact_name(&missing, U256::ZERO, &Preimages::new()).is_none());
        // A struct holding itself in place ends.
        let looped = json!({"storage": [{"label": "s", "slot": "0", "offset": 0, "type": "t_s"}],
            "types": {"t_s": {"encoding": "inplace", "label": "struct S", "numberOfBytes": "32",
                "members": [{"label": "s", "slot": "0", "offset": 0, "type": "t_s"}]}}});
        let l = StorageLayout::parse(&looped).unwrap();
        assert!(l.vars_at(U256::ZERO, &Preimages::new()).is_empty());
        // No storage at all: solc's `"types": null`.
        let empty = StorageLayout::parse(&json!({"storage": [], "types": null})).unwrap();
        assert!(empty.vars_at(U256::ZERO, &Preimages::new()).is_empty());
    }
}
