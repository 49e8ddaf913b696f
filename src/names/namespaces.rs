//! ERC-7201 namespaced storage: a struct annotated `/// @custom:storage-location
//! erc7201:<id>` (OpenZeppelin 5's upgradeable contracts) lives at
//! `keccak256(abi.encode(uint256(keccak256(id)) - 1)) & ~bytes32(uint256(0xff))`, where solc's
//! `storageLayout` does not list it. The struct is read from the build's AST and laid out by
//! solc's rules ([`super::ast_layout`]), then added to the contract's layout as one variable,
//! `$<StructName>` (`$ERC20Storage._balances[0x…]`), at that location. A namespace with a
//! member this does not lay out exactly (a user-defined value type, a struct the AST does not
//! hold) is left out whole, with the reason: its slots stay raw.
//!
//! Only the namespaces of the contract's own linearized bases are added.

use alloy_primitives::{keccak256, U256};
use serde_json::{json, Value};

use super::ast_layout::{AstContract, AstStorage, AstStruct, Builder};

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

/// `layout` (solc's `storageLayout` of `contract`) with the ERC-7201 namespaces of the
/// contract's linearized bases added, each as one variable `$<StructName>` at its location;
/// and, for each namespace left out, why.
pub fn with_namespaces(
    layout: Option<&Value>,
    contract: &str,
    files: &[(&str, &AstStorage)],
) -> (Option<Value>, Vec<String>) {
    let (added, why) = added_namespaces(layout, contract, files);
    (added.or_else(|| layout.cloned()), why)
}

/// [`with_namespaces`], the layout given only where a namespace was added (`None`: `layout`
/// as it is).
pub fn added_namespaces(
    layout: Option<&Value>,
    contract: &str,
    files: &[(&str, &AstStorage)],
) -> (Option<Value>, Vec<String>) {
    let mut why = Vec::new();
    let contracts: Vec<(&str, &AstContract)> = files
        .iter()
        .flat_map(|(p, a)| a.contracts.iter().map(move |c| (*p, c)))
        .filter(|(_, c)| c.name == contract)
        .collect();
    // Two contracts of one name in the build: which one this is, the AST does not say.
    let [(file, c)] = contracts[..] else {
        return (None, why);
    };
    // A layout that has them already (one compiled from metadata and kept) gets none twice.
    let present: Vec<&str> = layout
        .and_then(|l| l.get("storage"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("label").and_then(Value::as_str))
        .collect();
    let mut spaces: Vec<&AstStruct> = files
        .iter()
        .flat_map(|(_, a)| a.structs.iter())
        .filter(|s| s.namespace.is_some() && c.bases.contains(&s.scope))
        .filter(|s| !present.contains(&format!("${}", s.name).as_str()))
        .collect();
    if spaces.is_empty() {
        return (None, why);
    }
    let asts: Vec<&AstStorage> = files.iter().map(|(_, a)| *a).collect();
    let mut b = Builder::new(&asts, format!("{file}:{contract}"));
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
    // A layout of another shape is left as it is.
    let Some(o) = out.as_object_mut() else {
        return (None, why);
    };
    if let Some(Value::Array(list)) = o.get_mut("storage") {
        list.extend(storage);
    } else {
        return (None, why);
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
