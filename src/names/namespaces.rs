//! ERC-7201 namespaced storage: a struct annotated `/// @custom:storage-location
//! erc7201:<id>` (OpenZeppelin 5's upgradeable contracts) lives at
//! `keccak256(abi.encode(uint256(keccak256(id)) - 1)) & ~bytes32(uint256(0xff))`, where solc's
//! `storageLayout` does not list it. The struct is read from the build's AST and laid out by
//! solc's rules (packing, structs and arrays starting a slot, mappings, dynamic arrays and
//! `string`/`bytes` one slot), then added to the contract's layout as one variable,
//! `$<StructName>` (`$ERC20Storage._balances[0x…]`), at that location. A namespace with a
//! member this does not lay out exactly (a user-defined value type, a struct the AST does not
//! hold) is left out whole, with the reason: its slots stay raw.
//!
//! Only the namespaces of the contract's own linearized bases are added.

use std::collections::HashMap;

use alloy_primitives::{keccak256, U256};
use serde_json::{json, Map, Value};

/// A struct definition of an AST: its members' type names, and its ERC-7201 namespace.
#[derive(Clone, Debug)]
pub struct AstStruct {
    pub id: i64,
    /// `ERC20Upgradeable.ERC20Storage`.
    pub canonical: String,
    pub name: String,
    /// The contract (or file) it is defined in.
    pub scope: i64,
    /// `openzeppelin.storage.ERC20` of `@custom:storage-location erc7201:…`.
    pub namespace: Option<String>,
    pub members: Vec<(String, Value)>,
}

/// A contract definition: its name and linearized bases (itself first).
#[derive(Clone, Debug)]
pub struct AstContract {
    pub id: i64,
    pub name: String,
    pub bases: Vec<i64>,
}

/// What one source's AST says about storage beyond solc's `storageLayout`.
#[derive(Clone, Debug, Default)]
pub struct AstStorage {
    pub structs: Vec<AstStruct>,
    pub contracts: Vec<AstContract>,
    /// Each enum's id and member count (its stored width).
    pub enums: Vec<(i64, usize)>,
}

/// The ERC-7201 annotation of a struct's documentation.
pub(crate) fn erc7201(doc: &Value) -> Option<String> {
    let text = match doc {
        Value::String(s) => s.as_str(),
        v => v.get("text")?.as_str()?,
    };
    let at = text.find("@custom:storage-location")?;
    let rest = text[at + "@custom:storage-location".len()..].trim_start();
    let id = rest.strip_prefix("erc7201:")?;
    let id: String = id.chars().take_while(|c| !c.is_whitespace()).collect();
    (!id.is_empty()).then_some(id)
}

/// `keccak256(abi.encode(uint256(keccak256(id)) - 1)) & ~bytes32(uint256(0xff))`.
pub fn location(id: &str) -> U256 {
    let inner = U256::from_be_bytes(keccak256(id.as_bytes()).0) - U256::from(1);
    U256::from_be_bytes(keccak256(inner.to_be_bytes::<32>()).0) & !U256::from(0xff)
}

/// Lays out AST types into solc `storageLayout` `types` entries.
struct Builder<'a> {
    structs: HashMap<i64, &'a AstStruct>,
    enums: HashMap<i64, usize>,
    types: Map<String, Value>,
}

/// One laid-out type: its id in `types`, byte size, and whether it packs with its neighbours.
struct Laid {
    id: String,
    bytes: U256,
    packs: bool,
}

const MAX_DEPTH: u32 = 32;

fn strip_location(s: &str) -> &str {
    for suffix in [
        " storage ref",
        " storage pointer",
        " memory",
        " calldata",
        " storage",
    ] {
        if let Some(t) = s.strip_suffix(suffix) {
            return t;
        }
    }
    s
}

impl Builder<'_> {
    fn add(&mut self, id: &str, v: Value) -> String {
        self.types.entry(id.to_string()).or_insert(v);
        id.to_string()
    }

    fn ty(&mut self, node: &Value, depth: u32) -> Result<Laid, String> {
        if depth > MAX_DEPTH {
            return Err("types nested too deep".into());
        }
        let kind = node.get("nodeType").and_then(Value::as_str).unwrap_or("");
        let type_string = node
            .pointer("/typeDescriptions/typeString")
            .and_then(Value::as_str)
            .map(strip_location);
        let type_id = node
            .pointer("/typeDescriptions/typeIdentifier")
            .and_then(Value::as_str)
            .unwrap_or("");
        let inplace = |label: &str, bytes: u64| json!({"encoding": "inplace", "label": label, "numberOfBytes": bytes.to_string()});
        match kind {
            "ElementaryTypeName" => {
                let label = type_string
                    .or_else(|| node.get("name").and_then(Value::as_str))
                    .ok_or("an elementary type without a name")?;
                let bytes = match label {
                    "string" | "bytes" => {
                        let id = self.add(
                            &format!("erc7201 {label}"),
                            json!({"encoding": "bytes", "label": label, "numberOfBytes": "32"}),
                        );
                        return Ok(Laid {
                            id,
                            bytes: U256::from(32),
                            packs: false,
                        });
                    }
                    "bool" => 1,
                    "address" | "address payable" => 20,
                    l => {
                        let bits = |p: &str| l.strip_prefix(p).and_then(|w| w.parse::<u64>().ok());
                        match (bits("uint").or(bits("int")), bits("bytes")) {
                            (Some(b), _) if b % 8 == 0 && (8..=256).contains(&b) => b / 8,
                            (_, Some(n)) if (1..=32).contains(&n) => n,
                            _ => return Err(format!("the type {l} is not laid out here")),
                        }
                    }
                };
                let id = self.add(&format!("erc7201 {label}"), inplace(label, bytes));
                Ok(Laid {
                    id,
                    bytes: U256::from(bytes),
                    packs: true,
                })
            }
            "Mapping" => {
                let key = self.ty(
                    node.get("keyType").ok_or("a mapping without a key")?,
                    depth + 1,
                )?;
                let value = self.ty(
                    node.get("valueType").ok_or("a mapping without a value")?,
                    depth + 1,
                )?;
                let label = format!(
                    "mapping({} => {})",
                    self.label(&key.id),
                    self.label(&value.id)
                );
                let id = self.add(
                    &format!("erc7201 {label}"),
                    json!({"encoding": "mapping", "label": label, "key": key.id, "value": value.id,
                        "numberOfBytes": "32"}),
                );
                Ok(Laid {
                    id,
                    bytes: U256::from(32),
                    packs: false,
                })
            }
            "ArrayTypeName" => {
                let base = self.ty(
                    node.get("baseType").ok_or("an array without a base")?,
                    depth + 1,
                )?;
                let base_label = self.label(&base.id).to_string();
                let Some(length) = node.get("length").filter(|l| !l.is_null()) else {
                    let label = format!("{base_label}[]");
                    let id = self.add(
                        &format!("erc7201 {label}"),
                        json!({"encoding": "dynamic_array", "label": label, "base": base.id,
                            "numberOfBytes": "32"}),
                    );
                    return Ok(Laid {
                        id,
                        bytes: U256::from(32),
                        packs: false,
                    });
                };
                let n = length
                    .get("value")
                    .and_then(Value::as_str)
                    .or_else(|| {
                        type_string
                            .and_then(|s| s.rsplit_once('['))
                            .and_then(|(_, n)| n.strip_suffix(']'))
                    })
                    .and_then(|n| U256::from_str_radix(n, 10).ok())
                    .ok_or("an array whose length is not a literal")?;
                let slots = if base.packs && base.bytes <= U256::from(16) {
                    let per = U256::from(32) / base.bytes;
                    n.div_ceil(per)
                } else {
                    n.checked_mul(base.bytes.div_ceil(U256::from(32)))
                        .ok_or("an array too large")?
                };
                let label = format!("{base_label}[{n}]");
                let bytes = slots
                    .checked_mul(U256::from(32))
                    .ok_or("an array too large")?;
                let id = self.add(
                    &format!("erc7201 {label}"),
                    json!({"encoding": "inplace", "label": label, "base": base.id,
                        "numberOfBytes": bytes.to_string()}),
                );
                Ok(Laid {
                    id,
                    bytes,
                    packs: false,
                })
            }
            "UserDefinedTypeName" => {
                let decl = node
                    .get("referencedDeclaration")
                    .and_then(Value::as_i64)
                    .ok_or("a user-defined type without its declaration")?;
                let label = type_string.unwrap_or("").to_string();
                if type_id.starts_with("t_struct") {
                    self.laid_struct(decl, depth + 1)
                } else if type_id.starts_with("t_enum") {
                    let n = self
                        .enums
                        .get(&decl)
                        .ok_or_else(|| format!("the enum {label} is not in the AST"))?;
                    let bytes = if *n <= 256 { 1 } else { 2 };
                    let id = self.add(&format!("erc7201 {label}"), inplace(&label, bytes));
                    Ok(Laid {
                        id,
                        bytes: U256::from(bytes),
                        packs: true,
                    })
                } else if type_id.starts_with("t_contract") {
                    let id = self.add(&format!("erc7201 {label}"), inplace(&label, 20));
                    Ok(Laid {
                        id,
                        bytes: U256::from(20),
                        packs: true,
                    })
                } else {
                    Err(format!("the type {label} is not laid out here"))
                }
            }
            other => Err(format!("the type node {other:?} is not laid out here")),
        }
    }

    fn label(&self, id: &str) -> &str {
        self.types
            .get(id)
            .and_then(|t| t.get("label"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// A struct by solc's rules: value types packed in declaration order, a struct or an
    /// array starting a slot and the member after it starting the next.
    fn laid_struct(&mut self, decl: i64, depth: u32) -> Result<Laid, String> {
        let s = *self
            .structs
            .get(&decl)
            .ok_or_else(|| format!("the struct {decl} is not in the AST"))?;
        let id = format!("erc7201 struct {}", s.canonical);
        if let Some(t) = self.types.get(&id) {
            let bytes = t
                .get("numberOfBytes")
                .and_then(Value::as_str)
                .and_then(|b| U256::from_str_radix(b, 10).ok())
                .unwrap_or(U256::from(32));
            return Ok(Laid {
                id,
                bytes,
                packs: false,
            });
        }
        let (mut slot, mut off) = (U256::ZERO, 0u64);
        let mut members = Vec::new();
        for (name, node) in &s.members {
            let m = self.ty(node, depth + 1)?;
            if m.packs && m.bytes <= U256::from(32) {
                let size = m.bytes.to::<u64>();
                if off + size > 32 {
                    slot += U256::from(1);
                    off = 0;
                }
                members.push(
                    json!({"label": name, "slot": slot.to_string(), "offset": off,
                    "type": m.id}),
                );
                off += size;
            } else {
                if off > 0 {
                    slot += U256::from(1);
                    off = 0;
                }
                members.push(json!({"label": name, "slot": slot.to_string(), "offset": 0,
                    "type": m.id}));
                slot += m.bytes.div_ceil(U256::from(32)).max(U256::from(1));
            }
        }
        if off > 0 {
            slot += U256::from(1);
        }
        let bytes = slot.max(U256::from(1)) * U256::from(32);
        self.types.insert(
            id.clone(),
            json!({"encoding": "inplace", "label": format!("struct {}", s.canonical),
                "numberOfBytes": bytes.to_string(), "members": members}),
        );
        Ok(Laid {
            id,
            bytes,
            packs: false,
        })
    }
}

/// `layout` (solc's `storageLayout` of `contract`) with the ERC-7201 namespaces of the
/// contract's linearized bases added, each as one variable `$<StructName>` at its location;
/// and, for each namespace left out, why.
pub fn with_namespaces(
    layout: Option<&Value>,
    contract: &str,
    asts: &[&AstStorage],
) -> (Option<Value>, Vec<String>) {
    let mut why = Vec::new();
    let contracts: Vec<&AstContract> = asts
        .iter()
        .flat_map(|a| a.contracts.iter())
        .filter(|c| c.name == contract)
        .collect();
    // Two contracts of one name in the build: which one this is, the AST does not say.
    let [c] = contracts[..] else {
        return (layout.cloned(), why);
    };
    let mut b = Builder {
        structs: asts
            .iter()
            .flat_map(|a| a.structs.iter())
            .map(|s| (s.id, s))
            .collect(),
        enums: asts.iter().flat_map(|a| a.enums.iter().copied()).collect(),
        types: Map::new(),
    };
    let mut spaces: Vec<&AstStruct> = asts
        .iter()
        .flat_map(|a| a.structs.iter())
        .filter(|s| s.namespace.is_some() && c.bases.contains(&s.scope))
        .collect();
    if spaces.is_empty() {
        return (layout.cloned(), why);
    }
    // Most base-like first, as the bases are linearized (the contract itself first).
    spaces.sort_by_key(|s| std::cmp::Reverse(c.bases.iter().position(|b| *b == s.scope)));
    let mut storage: Vec<Value> = Vec::new();
    for s in spaces {
        let ns = s.namespace.as_deref().unwrap_or_default();
        let saved = b.types.clone();
        match b.laid_struct(s.id, 0) {
            Ok(laid) => storage.push(json!({
                "label": format!("${}", s.name),
                "slot": location(ns).to_string(),
                "offset": 0,
                "type": laid.id,
            })),
            Err(e) => {
                b.types = saved;
                why.push(format!(
                    "the ERC-7201 namespace erc7201:{ns} ({}) is not laid out: {e}",
                    s.canonical
                ));
            }
        }
    }
    let mut out = layout
        .cloned()
        .unwrap_or_else(|| json!({"storage": [], "types": {}}));
    let Some(o) = out.as_object_mut() else {
        return (layout.cloned(), why);
    };
    if let Some(Value::Array(list)) = o.get_mut("storage") {
        list.extend(storage);
    } else {
        return (layout.cloned(), why);
    }
    match o.get_mut("types") {
        Some(Value::Object(t)) => {
            for (k, v) in b.types {
                t.entry(k).or_insert(v);
            }
        }
        _ => {
            o.insert("types".into(), Value::Object(b.types));
        }
    }
    (Some(out), why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erc7201_locations_are_openzeppelins() {
        // ERC20Upgradeable's ERC20StorageLocation and OwnableUpgradeable's.
        assert_eq!(
            format!("{:#066x}", location("openzeppelin.storage.ERC20")),
            "0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00"
        );
        assert_eq!(
            format!("{:#066x}", location("openzeppelin.storage.Ownable")),
            "0x9016d09d72d40fdae2fd8ceac6b6234c7706214fd39c1cd1e609a0528c199300"
        );
        assert_eq!(
            erc7201(&json!({"text": "@custom:storage-location erc7201:a.b.C\n"})).as_deref(),
            Some("a.b.C")
        );
        assert_eq!(erc7201(&json!({"text": "@custom:other x"})), None);
    }
}
