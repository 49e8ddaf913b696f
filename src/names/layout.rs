//! Storage slot names from a Foundry/solc `storageLayout`: `totalSupply`, `balanceOf[0x…]`,
//! `allowance[0x…][0x…]`, `owners.length`, `owners[3]`, `config.fee`.
//!
//! A mapping's slot is `keccak256(key . base)` and a dynamic array's data starts at
//! `keccak256(base)`: neither can be inverted, but the run computed each of them itself, so
//! the KECCAK256 preimages it hashed give every key and base exactly
//! (`replay::access::slot_path`). A slot whose preimage the run did not see is left unnamed:
//! no key is guessed.

use alloy_primitives::{Address, B256, U256};
use serde_json::Value;

use crate::replay::access::{slot_path, Preimages, SlotStep};

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
}

/// The name of storage `slot` of a contract with `layout` (solc's `storageLayout`), from the
/// derivation the run's KECCAK256 preimages give it ([`slot_path`]): `_balances[0x…]`,
/// `_allowances[0x…][0x…]`, `positions[0x…].liquidity`, `owners[3]`, `config.fee`, the names
/// of the variables packed into one slot joined by `, `. `None` where the derivation does not
/// fit the layout, or the run did not hash the slot's key: such a slot is shown raw, never
/// named by a guess.
pub fn exact_name(layout: &Value, slot: U256, preimages: &Preimages) -> Option<String> {
    let types = layout.get("types").and_then(Value::as_object)?;
    let l = Layout { types };
    let (root, steps) = slot_path(slot, preimages);
    let vars = layout.get("storage").and_then(Value::as_array)?;
    l.members(vars, root, &steps, |var| var.to_string())
}

impl Layout<'_> {
    /// How many slots a value of type `id` takes in place (`numberOfBytes` rounded up).
    fn slots(&self, id: &str) -> u64 {
        self.bytes(id).div_ceil(32).max(1)
    }

    /// The names, joined by `, `, of the slot `rel` slots into a list of variables or struct
    /// members (`{label, slot, type}`, each named by `name`), then down `steps`: the storage's
    /// variables at slot 0, or a struct's members.
    fn members(
        &self,
        list: &[Value],
        rel: U256,
        steps: &[SlotStep],
        name: impl Fn(&str) -> String,
    ) -> Option<String> {
        let mut names = Vec::new();
        for m in list {
            let (Some(off), Some(ty), Some(label)) = (
                slot_of(m),
                m.get("type").and_then(Value::as_str),
                m.get("label").and_then(Value::as_str),
            ) else {
                continue;
            };
            let Some(r) = rel.checked_sub(off) else {
                continue;
            };
            if r < U256::from(self.slots(ty)) {
                names.extend(self.walk(ty, r, steps, name(label)));
            }
        }
        (!names.is_empty()).then(|| names.join(", "))
    }

    fn bytes(&self, id: &str) -> u64 {
        self.ty(id)
            .and_then(|t| t.get("numberOfBytes"))
            .and_then(Value::as_str)
            .and_then(|b| b.parse::<u64>().ok())
            .unwrap_or(32)
    }

    /// The name of the slot `rel` slots into a value of type `id` named `label`, then down
    /// `steps`.
    fn walk(&self, id: &str, rel: U256, steps: &[SlotStep], label: String) -> Option<String> {
        let t = self.ty(id)?;
        match self.encoding(id) {
            "mapping" => {
                let (step, rest) = steps.split_first()?;
                let key = step.key.as_ref()?;
                if !rel.is_zero() {
                    return None;
                }
                let key_type = t.get("key").and_then(Value::as_str)?;
                let value = t.get("value").and_then(Value::as_str)?;
                let shown = self.show_key_bytes(key_type, key)?;
                self.walk(value, step.off, rest, format!("{label}[{shown}]"))
            }
            "dynamic_array" => {
                if !rel.is_zero() {
                    return None;
                }
                let Some((step, rest)) = steps.split_first() else {
                    return Some(format!("{label}.length"));
                };
                if step.key.is_some() {
                    return None;
                }
                let base = t.get("base").and_then(Value::as_str)?;
                self.element(base, step.off, rest, &label)
            }
            "bytes" => match steps.split_first() {
                None if rel.is_zero() => Some(label),
                Some((step, [])) if step.key.is_none() && rel.is_zero() => {
                    Some(format!("{label} (data, word {})", step.off))
                }
                _ => None,
            },
            _ => {
                if let Some(members) = t.get("members").and_then(Value::as_array) {
                    return self.members(members, rel, steps, |m| format!("{label}.{m}"));
                }
                if let Some(base) = t.get("base").and_then(Value::as_str) {
                    // A static array, in place.
                    return self.element(base, rel, steps, &label);
                }
                (rel.is_zero() && steps.is_empty()).then_some(label)
            }
        }
    }

    /// The element of an array of `base` elements `off` slots into its data: `label[i]`, or
    /// `label[i…j]` for the elements packed into one slot.
    fn element(&self, base: &str, off: U256, steps: &[SlotStep], label: &str) -> Option<String> {
        let bytes = self.bytes(base);
        if bytes >= 32 {
            let span = U256::from(self.slots(base));
            let (i, r) = (off / span, off % span);
            return self.walk(base, r, steps, format!("{label}[{i}]"));
        }
        if !steps.is_empty() {
            return None;
        }
        let per = U256::from(32 / bytes.max(1));
        let first = off * per;
        Some(match per == U256::from(1) {
            true => format!("{label}[{first}]"),
            false => format!("{label}[{first}…{}]", first + per - U256::from(1)),
        })
    }

    /// A mapping key as hashed, shown by its type: a checksummed address, an integer, a bool,
    /// a string, or hex.
    fn show_key_bytes(&self, key_type: &str, key: &[u8]) -> Option<String> {
        let label = self
            .ty(key_type)
            .and_then(|t| t.get("label"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let encoding = self.encoding(key_type);
        if encoding == "bytes" {
            return Some(match std::str::from_utf8(key) {
                Ok(s) if label == "string" => format!("{s:?}"),
                _ => format!("0x{}", alloy_primitives::hex::encode(key)),
            });
        }
        let word: [u8; 32] = key.try_into().ok()?;
        let word = B256::from(word);
        Some(if label == "bool" {
            (!word.is_zero()).to_string()
        } else if label.starts_with("int") {
            alloy_primitives::I256::from_raw(U256::from_be_bytes(word.0)).to_string()
        } else {
            self.show_key(key_type, &word)
        })
    }
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
        // A key the run never hashed: the slot stays raw, whatever keys would fit.
        let bal_b = [bw, word(U256::from(1))].concat();
        assert_eq!(name(at(&bal_b)), None);
        // A slot past every variable.
        assert_eq!(name(U256::from(9)), None);
    }
}
