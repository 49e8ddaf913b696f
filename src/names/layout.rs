//! Storage slot names from a Foundry/solc `storageLayout`: `totalSupply`, `balanceOf[0x…]`,
//! `allowance[0x…][0x…]`, `owners.length`, `owners[3]`, `config.fee`.
//!
//! A mapping's slot is `keccak256(key . base)`, which cannot be inverted; so keys are guessed
//! from the transaction (its sender and recipient, every account it touched, every word of its
//! calldata) and each guess is hashed against each mapping of the layout, two levels deep.

use std::collections::HashMap;

use alloy_primitives::{keccak256, Address, B256, U256};
use serde_json::Value;

/// Elements of a dynamic array named past its start (bounds the search, not the array).
const MAX_ARRAY_INDEX: u64 = 1 << 16;

struct Layout<'a> {
    types: &'a serde_json::Map<String, Value>,
}

fn slot_of(v: &Value) -> Option<U256> {
    let s = v.get("slot")?.as_str()?;
    U256::from_str_radix(s, 10).ok()
}

impl Layout<'_> {
    fn ty(&self, id: &str) -> Option<&Value> {
        self.types.get(id)
    }

    fn encoding(&self, id: &str) -> &str {
        self.ty(id)
            .and_then(|t| t.get("encoding"))
            .and_then(Value::as_str)
            .unwrap_or("inplace")
    }

    fn show_key(&self, key_type: &str, word: &B256) -> String {
        let label = self
            .ty(key_type)
            .and_then(|t| t.get("label"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if label == "address" || label.starts_with("contract ") {
            Address::from_word(*word).to_checksum(None)
        } else if label.starts_with("uint") {
            U256::from_be_bytes(word.0).to_string()
        } else {
            word.to_string()
        }
    }

    /// Names every slot a value of type `id` at `base` occupies, as far as `keys` reach.
    fn name(
        &self,
        id: &str,
        base: U256,
        label: String,
        keys: &[B256],
        depth: usize,
        out: &mut HashMap<U256, String>,
    ) {
        if depth > 3 {
            return;
        }
        match self.encoding(id) {
            "mapping" => {
                let Some(t) = self.ty(id) else { return };
                let key_type = t.get("key").and_then(Value::as_str).unwrap_or_default();
                let value_type = t.get("value").and_then(Value::as_str).unwrap_or_default();
                for k in keys {
                    let mut pre = [0u8; 64];
                    pre[..32].copy_from_slice(k.as_slice());
                    pre[32..].copy_from_slice(&base.to_be_bytes::<32>());
                    let slot = U256::from_be_bytes(keccak256(pre).0);
                    let l = format!("{label}[{}]", self.show_key(key_type, k));
                    self.name(value_type, slot, l, keys, depth + 1, out);
                }
            }
            "dynamic_array" => {
                out.entry(base).or_insert_with(|| format!("{label}.length"));
                let start = U256::from_be_bytes(keccak256(base.to_be_bytes::<32>()).0);
                out.insert(start, format!("{label}[0…]"));
            }
            _ => match self
                .ty(id)
                .and_then(|t| t.get("members"))
                .and_then(Value::as_array)
            {
                Some(members) => {
                    for m in members {
                        let (Some(off), Some(mty), Some(ml)) = (
                            slot_of(m),
                            m.get("type").and_then(Value::as_str),
                            m.get("label").and_then(Value::as_str),
                        ) else {
                            continue;
                        };
                        self.name(
                            mty,
                            base + off,
                            format!("{label}.{ml}"),
                            keys,
                            depth + 1,
                            out,
                        );
                    }
                }
                None => {
                    out.entry(base)
                        .and_modify(|e| {
                            e.push_str(", ");
                            e.push_str(&label);
                        })
                        .or_insert(label);
                }
            },
        }
    }
}

/// Names of the slots of a contract with `layout`, for mapping keys among `keys`.
pub fn slot_names(layout: &Value, keys: &[B256]) -> HashMap<U256, String> {
    let mut out = HashMap::new();
    let Some(types) = layout.get("types").and_then(Value::as_object) else {
        return out;
    };
    let l = Layout { types };
    for v in layout
        .get("storage")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(slot), Some(label), Some(ty)) = (
            slot_of(v),
            v.get("label").and_then(Value::as_str),
            v.get("type").and_then(Value::as_str),
        ) else {
            continue;
        };
        l.name(ty, slot, label.to_string(), keys, 0, &mut out);
    }
    out
}

/// The name of `slot` in a dynamic array's element area, if it is one: `label[i]`.
pub fn array_element(names: &HashMap<U256, String>, slot: U256) -> Option<String> {
    names.iter().find_map(|(start, label)| {
        let base = label.strip_suffix("[0…]")?;
        let i = slot.checked_sub(*start)?;
        (i < U256::from(MAX_ARRAY_INDEX)).then(|| format!("{base}[{i}]"))
    })
}

/// Candidate mapping keys from a transaction: addresses and calldata words.
pub fn candidate_keys(addresses: impl IntoIterator<Item = Address>, input: &[u8]) -> Vec<B256> {
    let mut keys: Vec<B256> = addresses.into_iter().map(|a| a.into_word()).collect();
    let args = input.get(4..).unwrap_or_default();
    keys.extend(args.chunks_exact(32).map(B256::from_slice));
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_values_mappings_and_nested_mappings() {
        let layout = json!({"storage": [
            {"label": "totalSupply", "slot": "0", "offset": 0, "type": "t_uint256"},
            {"label": "balanceOf", "slot": "1", "offset": 0, "type": "t_mapping(t_address,t_uint256)"},
            {"label": "allowance", "slot": "2", "offset": 0, "type": "t_mapping(t_address,t_mapping(t_address,t_uint256))"}],
            "types": {"t_address": {"encoding": "inplace", "label": "address"},
              "t_uint256": {"encoding": "inplace", "label": "uint256"},
              "t_mapping(t_address,t_uint256)": {"encoding": "mapping", "key": "t_address", "value": "t_uint256"},
              "t_mapping(t_address,t_mapping(t_address,t_uint256))": {"encoding": "mapping", "key": "t_address", "value": "t_mapping(t_address,t_uint256)"}}});
        let a = Address::repeat_byte(0xaa);
        let b = Address::repeat_byte(0xbb);
        let names = slot_names(&layout, &candidate_keys([a, b], &[]));
        assert_eq!(names[&U256::ZERO], "totalSupply");
        let mut pre = [0u8; 64];
        pre[..32].copy_from_slice(a.into_word().as_slice());
        pre[63] = 1;
        let bal = U256::from_be_bytes(keccak256(pre).0);
        assert_eq!(names[&bal], format!("balanceOf[{}]", a.to_checksum(None)));
        assert!(names.values().any(|n| *n
            == format!(
                "allowance[{}][{}]",
                a.to_checksum(None),
                b.to_checksum(None)
            )));
    }
}
