//! Storage layouts computed from a build's AST by solc's rules, for a build that has no
//! `storageLayout` and no metadata a solc could compile one from (issue 44), and for the
//! ERC-7201 namespaces solc's own layout does not list ([`super::namespaces`]).
//!
//! The output is solc's `storageLayout` JSON itself, type ids and labels included
//! (`t_mapping(t_address,t_uint256)`, `struct Vault.Position`), so the one reader
//! ([`super::layout::StorageLayout`]) names slots from either source, and a computed layout can
//! be compared with solc's whole (`layouts_from_the_ast_are_solcs` below,
//! tests/live/ast_layouts.rs). The rules:
//! - the state variables of the linearized bases, most basic first, each in declaration order;
//!   constants and immutables take no slot; `transient` ones are laid out apart, from slot 0;
//! - value types pack into a slot in order while they fit (an enum 1 byte, a contract 20, a
//!   user-defined value type its underlying type's size, an internal function 8, an external
//!   one 24); a struct or a static array starts a slot, and what follows it starts the next;
//! - a mapping, a dynamic array, `string` and `bytes` take one slot; a static array of a type
//!   of at most 16 bytes packs `32 / size` elements a slot, larger elements a slot (or more)
//!   each;
//! - a mapping's `string`/`bytes` key is a memory type (`t_string_memory_ptr`).
//!
//! A type this does not lay out exactly (a function type with reference-type parameters, a
//! declaration the ASTs do not hold) fails the whole contract with the reason: its slots stay
//! raw rather than named by a guess.

use std::collections::HashMap;

use alloy_primitives::U256;
use serde_json::{json, Map, Value};

/// A state variable, or a struct's member: its AST id, name and type.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AstMember {
    pub id: i64,
    pub name: String,
    pub type_name: Value,
    /// A `transient` state variable (solc 0.8.27 and later).
    pub transient: bool,
}

/// A struct definition of an AST: its members, and its ERC-7201 namespace.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AstStruct {
    pub id: i64,
    /// `ERC20Upgradeable.ERC20Storage`.
    pub canonical: String,
    pub name: String,
    /// The contract (or file) it is defined in.
    pub scope: i64,
    /// `openzeppelin.storage.ERC20` of `@custom:storage-location erc7201:…`.
    pub namespace: Option<String>,
    pub members: Vec<AstMember>,
}

/// A contract definition: its name, linearized bases (itself first) and the state variables
/// that take storage (constants and immutables left out).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AstContract {
    pub id: i64,
    pub name: String,
    pub bases: Vec<i64>,
    pub vars: Vec<AstMember>,
}

/// What one source's AST says about storage.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct AstStorage {
    pub structs: Vec<AstStruct>,
    pub contracts: Vec<AstContract>,
    /// Each enum's id and member count (its stored width).
    pub enums: Vec<(i64, usize)>,
    /// Each user-defined value type's id and underlying type.
    pub value_types: Vec<(i64, Value)>,
}

/// Struct, array and mapping nesting laid out at most.
const MAX_DEPTH: u32 = 32;

/// A type string without its data location (`string storage ref` is `string`).
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

/// The name in a user-defined type's AST identifier (`t_struct$_Entry_$35_storage_ptr` is
/// `Entry`): solc writes `(` as `$_`, `)` as `_$` and a `$` of the name as `$$$`.
fn identifier_name(type_id: &str, kind: &str) -> Option<String> {
    let rest = type_id.strip_prefix(kind)?.strip_prefix("$_")?;
    let (name, _) = rest.rsplit_once("_$")?;
    Some(name.replace("$$$", "$"))
}

/// One laid-out type: its id in `types`, its size in bytes, and whether it packs with its
/// neighbours (a value type).
pub struct Laid {
    pub id: String,
    pub bytes: U256,
    pub packs: bool,
}

/// Lays out AST types as solc's `storageLayout` `types` entries, for one contract.
pub struct Builder<'a> {
    structs: HashMap<i64, &'a AstStruct>,
    enums: HashMap<i64, usize>,
    value_types: HashMap<i64, &'a Value>,
    /// The fully qualified name written in each entry's `contract` (`State.sol:Registry`).
    contract: String,
    pub types: Map<String, Value>,
}

impl<'a> Builder<'a> {
    pub fn new(asts: &[&'a AstStorage], contract: String) -> Builder<'a> {
        Builder {
            structs: asts
                .iter()
                .flat_map(|a| a.structs.iter())
                .map(|s| (s.id, s))
                .collect(),
            enums: asts.iter().flat_map(|a| a.enums.iter().copied()).collect(),
            value_types: asts
                .iter()
                .flat_map(|a| a.value_types.iter())
                .map(|(id, t)| (*id, t))
                .collect(),
            contract,
            types: Map::new(),
        }
    }

    fn add(&mut self, id: String, v: Value) -> String {
        self.types.entry(id.clone()).or_insert(v);
        id
    }

    fn label(&self, id: &str) -> String {
        self.types
            .get(id)
            .and_then(|t| t.get("label"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    /// The type of an AST type node; `memory` for a mapping's key (where `string` and `bytes`
    /// are memory types).
    pub fn ty(&mut self, node: &Value, memory: bool, depth: u32) -> Result<Laid, String> {
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
        let value = |id: String, bytes: u64| Laid {
            id,
            bytes: U256::from(bytes),
            packs: true,
        };
        let slot = |id: String| Laid {
            id,
            bytes: U256::from(32),
            packs: false,
        };
        match kind {
            "ElementaryTypeName" => {
                let label = type_string
                    .or_else(|| node.get("name").and_then(Value::as_str))
                    .ok_or("an elementary type without a name")?;
                let bytes = match label {
                    "string" | "bytes" => {
                        let place = if memory { "memory_ptr" } else { "storage" };
                        let id = self.add(
                            format!("t_{label}_{place}"),
                            json!({"encoding": "bytes", "label": label, "numberOfBytes": "32"}),
                        );
                        return Ok(slot(id));
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
                let id = self.add(
                    format!("t_{}", label.replace(' ', "_")),
                    inplace(label, bytes),
                );
                Ok(value(id, bytes))
            }
            "Mapping" => {
                let key = self.ty(
                    node.get("keyType").ok_or("a mapping without a key")?,
                    true,
                    depth + 1,
                )?;
                let val = self.ty(
                    node.get("valueType").ok_or("a mapping without a value")?,
                    false,
                    depth + 1,
                )?;
                let label = format!(
                    "mapping({} => {})",
                    self.label(&key.id),
                    self.label(&val.id)
                );
                let id = self.add(
                    format!("t_mapping({},{})", key.id, val.id),
                    json!({"encoding": "mapping", "label": label, "key": key.id, "value": val.id,
                        "numberOfBytes": "32"}),
                );
                Ok(slot(id))
            }
            "ArrayTypeName" => {
                if memory {
                    return Err("an array in memory is not laid out here".into());
                }
                let base = self.ty(
                    node.get("baseType").ok_or("an array without a base")?,
                    false,
                    depth + 1,
                )?;
                let base_label = self.label(&base.id);
                if node.get("length").is_none_or(Value::is_null) {
                    let id = self.add(
                        format!("t_array({})dyn_storage", base.id),
                        json!({"encoding": "dynamic_array", "label": format!("{base_label}[]"),
                            "base": base.id, "numberOfBytes": "32"}),
                    );
                    return Ok(slot(id));
                }
                // The length as solc evaluated it (a constant, an expression) is the last
                // `[n]` of the type string; a bare literal otherwise.
                let n = type_string
                    .and_then(|s| s.strip_suffix(']'))
                    .and_then(|s| s.rsplit_once('['))
                    .map(|(_, n)| n)
                    .or_else(|| node.pointer("/length/value").and_then(Value::as_str))
                    .and_then(|n| U256::from_str_radix(n, 10).ok())
                    .ok_or("an array whose length is not known")?;
                let slots = if base.packs && base.bytes <= U256::from(16) {
                    n.div_ceil(U256::from(32) / base.bytes)
                } else {
                    n.checked_mul(base.bytes.div_ceil(U256::from(32)))
                        .ok_or("an array too large")?
                };
                let bytes = slots
                    .checked_mul(U256::from(32))
                    .ok_or("an array too large")?;
                let id = self.add(
                    format!("t_array({}){n}_storage", base.id),
                    json!({"encoding": "inplace", "label": format!("{base_label}[{n}]"),
                        "base": base.id, "numberOfBytes": bytes.to_string()}),
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
                let name = |kind: &str| {
                    identifier_name(type_id, kind)
                        .ok_or_else(|| format!("the type {label} has no name in its identifier"))
                };
                if type_id.starts_with("t_struct") {
                    if memory {
                        return Err("a struct in memory is not laid out here".into());
                    }
                    self.laid_struct(decl, depth + 1)
                } else if type_id.starts_with("t_enum") {
                    let n = self
                        .enums
                        .get(&decl)
                        .ok_or_else(|| format!("the enum {label} is not in the AST"))?;
                    let bytes = if *n <= 256 { 1 } else { 2 };
                    let id = self.add(
                        format!("t_enum({}){decl}", name("t_enum")?),
                        inplace(&label, bytes),
                    );
                    Ok(value(id, bytes))
                } else if type_id.starts_with("t_contract") {
                    let id = self.add(
                        format!("t_contract({}){decl}", name("t_contract")?),
                        inplace(&label, 20),
                    );
                    Ok(value(id, 20))
                } else if type_id.starts_with("t_userDefinedValueType") {
                    let under = *self
                        .value_types
                        .get(&decl)
                        .ok_or_else(|| format!("the value type {label} is not in the AST"))?;
                    // solc's `types` lists a value type alone, not its underlying type.
                    let kept = self.types.clone();
                    let u = self.ty(under, false, depth + 1);
                    self.types = kept;
                    let u = u?;
                    if !u.packs {
                        return Err(format!("the value type {label} is not laid out here"));
                    }
                    let bytes = u.bytes.to::<u64>();
                    let id = self.add(
                        format!(
                            "t_userDefinedValueType({}){decl}",
                            name("t_userDefinedValueType")?
                        ),
                        inplace(&label, bytes),
                    );
                    Ok(value(id, bytes))
                } else {
                    Err(format!("the type {label} is not laid out here"))
                }
            }
            "FunctionTypeName" => {
                let label = type_string.ok_or("a function type without its type string")?;
                let visibility = node.get("visibility").and_then(Value::as_str);
                let mutability = node
                    .get("stateMutability")
                    .and_then(Value::as_str)
                    .ok_or("a function type without its mutability")?;
                let bytes = match visibility {
                    Some("internal") => 8,
                    Some("external") => 24,
                    _ => return Err(format!("the function type {label} is not laid out here")),
                };
                // solc's `types` lists a function type alone, not its parameters' types.
                let kept = self.types.clone();
                // Parameters of value types only: a reference type's id depends on its data
                // location, which this does not reconstruct.
                let mut list = |key: &str| -> Result<String, String> {
                    let params = node
                        .pointer(&format!("/{key}/parameters"))
                        .and_then(Value::as_array)
                        .ok_or("a function type without its parameters")?;
                    let mut ids = Vec::new();
                    for p in params {
                        let t = self.ty(
                            p.get("typeName").ok_or("a parameter without a type")?,
                            true,
                            depth + 1,
                        )?;
                        if !t.packs {
                            return Err(format!("the function type {label} is not laid out here"));
                        }
                        ids.push(t.id);
                    }
                    Ok(ids.join(","))
                };
                let lists =
                    list("parameterTypes").and_then(|p| Ok((p, list("returnParameterTypes")?)));
                self.types = kept;
                let (params, returns) = lists?;
                let id = self.add(
                    format!(
                        "t_function_{}_{mutability}({params})returns({returns})",
                        visibility.unwrap_or_default()
                    ),
                    inplace(label, bytes),
                );
                Ok(value(id, bytes))
            }
            other => Err(format!("the type node {other:?} is not laid out here")),
        }
    }

    /// `vars` placed by solc's rules from slot 0: value types packed in order while they fit,
    /// a struct or an array starting a slot and the member after it starting the next. Each
    /// entry is solc's (`astId`, `contract`, `label`, `offset`, `slot`, `type`); the slots taken
    /// are returned beside them.
    pub fn place(&mut self, vars: &[&AstMember], depth: u32) -> Result<(Vec<Value>, U256), String> {
        let (mut slot, mut off) = (U256::ZERO, 0u64);
        let mut out = Vec::new();
        for var in vars {
            let m = self.ty(&var.type_name, false, depth + 1)?;
            let packed = m.packs && m.bytes <= U256::from(32);
            let size = if packed { m.bytes.to::<u64>() } else { 32 };
            if off > 0 && (!packed || off + size > 32) {
                slot += U256::from(1);
                off = 0;
            }
            out.push(
                json!({"astId": var.id, "contract": self.contract, "label": var.name,
                "offset": off, "slot": slot.to_string(), "type": m.id}),
            );
            if packed {
                off += size;
            } else {
                slot += m.bytes.div_ceil(U256::from(32)).max(U256::from(1));
            }
        }
        if off > 0 {
            slot += U256::from(1);
        }
        Ok((out, slot))
    }

    /// A struct by solc's rules ([`place`](Self::place)), its size a whole number of slots.
    pub fn laid_struct(&mut self, decl: i64, depth: u32) -> Result<Laid, String> {
        let s = *self
            .structs
            .get(&decl)
            .ok_or_else(|| format!("the struct {decl} is not in the AST"))?;
        let id = format!("t_struct({}){}_storage", s.name, s.id);
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
        if depth > MAX_DEPTH {
            return Err("types nested too deep".into());
        }
        let members: Vec<&AstMember> = s.members.iter().collect();
        let (members, slots) = self.place(&members, depth + 1)?;
        let bytes = slots.max(U256::from(1)) * U256::from(32);
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

/// A contract's `storageLayout` and `transientStorageLayout`, as solc writes them, computed
/// from its build's ASTs.
#[derive(Clone, Debug)]
pub struct AstLayouts {
    pub storage: Value,
    pub transient: Value,
}

/// The layouts of the contract `name` (in the source `path` when known: two contracts may
/// share a name) from `files`, each source's path and what its AST holds. `Ok(None)` when the
/// ASTs do not hold the contract; `Err` with the reason when they hold it but some type is
/// not laid out exactly.
pub fn contract_layouts(
    name: &str,
    path: Option<&str>,
    files: &[(&str, &AstStorage)],
) -> Result<Option<AstLayouts>, String> {
    let found: Vec<(&str, &AstContract)> = files
        .iter()
        .filter(|(p, _)| path.is_none_or(|want| want == *p))
        .flat_map(|(p, a)| a.contracts.iter().map(move |c| (*p, c)))
        .filter(|(_, c)| c.name == name)
        .collect();
    let [(file, c)] = found[..] else {
        return if found.is_empty() {
            Ok(None)
        } else {
            Err(format!(
                "{} contracts named {name} in the build, and no source path to tell them apart",
                found.len()
            ))
        };
    };
    let by_id: HashMap<i64, &AstContract> = files
        .iter()
        .flat_map(|(_, a)| a.contracts.iter())
        .map(|c| (c.id, c))
        .collect();
    let mut vars: Vec<&AstMember> = Vec::new();
    for base in c.bases.iter().rev() {
        let b = by_id
            .get(base)
            .ok_or_else(|| format!("its base contract {base} is not in the build's ASTs"))?;
        vars.extend(b.vars.iter());
    }
    if c.bases.is_empty() {
        vars.extend(c.vars.iter());
    }
    let asts: Vec<&AstStorage> = files.iter().map(|(_, a)| *a).collect();
    let fq = format!("{file}:{name}");
    let layout = |transient: bool| -> Result<Value, String> {
        let mine: Vec<&AstMember> = vars
            .iter()
            .copied()
            .filter(|v| v.transient == transient)
            .collect();
        let mut b = Builder::new(&asts, fq.clone());
        let (storage, _) = b.place(&mine, 0)?;
        let types = if b.types.is_empty() {
            Value::Null
        } else {
            Value::Object(b.types)
        };
        Ok(json!({"storage": storage, "types": types}))
    };
    Ok(Some(AstLayouts {
        storage: layout(false)?,
        transient: layout(true)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::sources::AstDecls;

    /// A solc output of tests/contracts/oz, and each of its sources' AST read.
    fn fixture(file: &str) -> (Value, Vec<(String, AstDecls)>) {
        let path = format!("{}/tests/contracts/oz/{file}", env!("CARGO_MANIFEST_DIR"));
        let out: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let decls = out["sources"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(p, s)| (p.clone(), AstDecls::from_value(&s["ast"]).unwrap()))
            .collect();
        (out, decls)
    }

    /// Every contract of solc 0.8.30's outputs in tests/contracts/oz (OpenZeppelin's ERC20,
    /// its upgradeable ERC20 and Ownable, ERC1967Proxy, the state-changes contracts with
    /// packed slots, enums, a mapping by string to a struct and a dynamic array): the layout
    /// computed from the AST is solc's `storageLayout`, whole.
    #[test]
    fn layouts_from_the_ast_are_solcs() {
        let mut compared = 0;
        for file in [
            "solc-output-state.json",
            "solc-output-upgradeable.json",
            "solc-output-spans.json",
        ] {
            let (out, decls) = fixture(file);
            let files: Vec<(&str, &AstStorage)> = decls
                .iter()
                .map(|(p, d)| (p.as_str(), &d.storage))
                .collect();
            for (source, contracts) in out["contracts"].as_object().unwrap() {
                for (name, c) in contracts.as_object().unwrap() {
                    let got = contract_layouts(name, Some(source), &files)
                        .unwrap_or_else(|e| panic!("{source}:{name}: {e}"))
                        .unwrap_or_else(|| panic!("{source}:{name} not in the ASTs"));
                    assert_eq!(got.storage, c["storageLayout"], "{source}:{name}");
                    if let Some(t) = c.get("transientStorageLayout") {
                        assert_eq!(&got.transient, t, "{source}:{name}");
                    }
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 28);
    }

    /// An AST that does not hold what a layout needs gives the reason, never a layout by a
    /// guess, a panic or a stack overflow.
    #[test]
    fn an_ast_short_of_a_layout_gives_the_reason() {
        let (_, decls) = fixture("solc-output-state.json");
        let layout = |decls: &[(String, AstDecls)], name: &str, path: Option<&str>| {
            let files: Vec<(&str, &AstStorage)> = decls
                .iter()
                .map(|(p, d)| (p.as_str(), &d.storage))
                .collect();
            contract_layouts(name, path, &files)
        };
        assert!(layout(&decls, "Token", None).unwrap().is_some());
        assert!(layout(&decls, "Nobody", None).unwrap().is_none());

        // Its base's source left out.
        let without: Vec<_> = decls
            .iter()
            .filter(|(p, _)| !p.ends_with("ERC20.sol"))
            .cloned()
            .collect();
        let e = layout(&without, "Token", None).unwrap_err();
        assert!(e.starts_with("its base contract "), "{e}");

        // A type node of another kind; a mapping nested past any real one.
        let registry_first = |ty: Value| {
            let mut odd = decls.clone();
            for (_, d) in odd.iter_mut() {
                for c in d
                    .storage
                    .contracts
                    .iter_mut()
                    .filter(|c| c.name == "Registry")
                {
                    c.vars[0].type_name = ty.clone();
                }
            }
            odd
        };
        let odd = registry_first(json!({"nodeType": "Weird"}));
        let e = layout(&odd, "Registry", None).unwrap_err();
        assert_eq!(e, "the type node \"Weird\" is not laid out here");
        let mut deep = json!({"nodeType": "ElementaryTypeName",
            "typeDescriptions": {"typeString": "uint256"}});
        for _ in 0..200 {
            deep = json!({"nodeType": "Mapping", "keyType": {"nodeType": "ElementaryTypeName",
                "typeDescriptions": {"typeString": "address"}}, "valueType": deep});
        }
        let e = layout(&registry_first(deep), "Registry", None).unwrap_err();
        assert_eq!(e, "types nested too deep");

        // Two contracts of one name and no source path to choose between them.
        let mut twice = decls.clone();
        twice.push(("Other.sol".into(), decls[0].1.clone()));
        let name = &decls[0].1.storage.contracts[0].name;
        let e = layout(&twice, name, None).unwrap_err();
        assert!(
            e.contains(&format!("contracts named {name} in the build")),
            "{e}"
        );
        assert!(layout(&twice, name, Some("Other.sol")).unwrap().is_some());
    }
}
