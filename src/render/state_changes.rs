//! A transaction's storage changes by variable as data (what `names::state` works
//! out, defined here, left of `names`, so that the HTML report and the columnar tables can
//! show them), and as the places that show them share them: the values of one change
//! (`before → after`, a transient variable's writes), and the rows of the `storage_changes`
//! table of `block A..B --out DIR`.

use alloy_primitives::{Address, U256};
use serde::Serialize;

/// A stored value as people read it: `text` exact (a decimal integer, a checksummed address,
/// `true`, `Kind.Active`, `0x…` bytes, a quoted string), and for a large integer its short
/// form (`9.8e21`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub text: String,
    pub short: Option<String>,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)?;
        match &self.short {
            Some(s) => write!(f, " [{s}]"),
            None => Ok(()),
        }
    }
}

/// One variable a transaction changed, or one raw slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateChange {
    pub address: Address,
    /// The artifact's contract name, where one matched the code.
    pub contract: Option<String>,
    pub slot: U256,
    /// The variable, where the layout names the slot; `None`: raw.
    pub var: Option<Named>,
    /// Why the slot is raw.
    pub raw: Option<String>,
    /// The value before and after: decoded by type when named, the slot's words when raw.
    /// Transient: zero, and the last value written that stood.
    pub before: Shown,
    pub after: Shown,
    /// The slots a `bytes`/`string` value spans, its length slot (`slot`) first, then its data
    /// words: empty when it lies in `slot` alone.
    pub slots: Vec<U256>,
    /// A transient variable (TSTORE), cleared when the transaction ends.
    pub transient: bool,
    /// Transient: each value the transaction wrote to it that stood, in order (`before` the
    /// first, `after` the last).
    pub writes: Vec<Shown>,
}

/// A changed variable: its name, where it lies and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The storage variable's name (`_balances`).
    pub variable: String,
    /// Mapping keys, array indices and struct members from it down.
    pub key_path: Vec<String>,
    /// The whole name: `_allowances[0x…][0x…]`.
    pub name: String,
    /// solc's label of the value's type.
    pub ty: String,
    /// The value's byte offset in its slot.
    pub offset: u64,
    /// `length` for a dynamic array's length, `data word N` for a long string's data.
    pub part: Option<String>,
}

/// A transaction's storage changes, and notes for stderr (a malformed layout).
#[derive(Clone, Debug, Default)]
pub struct StateChanges {
    pub changes: Vec<StateChange>,
    pub notes: Vec<String>,
    /// Worked out only by layouts compiled from the build's metadata (no artifact declares
    /// one): when nothing changed, no section is shown, as for a build without layouts.
    pub quiet_if_empty: bool,
}

impl StateChanges {
    /// Whether the changes are shown (a section, `stateChanges`, the report's part).
    pub fn shown(&self) -> bool {
        !(self.quiet_if_empty && self.changes.is_empty())
    }
}

/// Most values a transient variable's change lists: past them, the first ones, how many more,
/// and the last.
pub const MAX_WRITES_SHOWN: usize = 6;

/// The values of `c` in order: `[before, after]`; for a transient variable zero, then each
/// value written that stood (past [`MAX_WRITES_SHOWN`], the first ones, `… N more`, the last).
pub fn values(c: &StateChange) -> Vec<String> {
    if !c.transient {
        return vec![c.before.to_string(), c.after.to_string()];
    }
    let mut parts = vec![c.before.to_string()];
    let n = c.writes.len();
    if n > MAX_WRITES_SHOWN {
        parts.extend(
            c.writes[..MAX_WRITES_SHOWN - 2]
                .iter()
                .map(|w| w.to_string()),
        );
        parts.push(format!("… {} more", n - MAX_WRITES_SHOWN + 1));
        parts.push(c.writes[n - 1].to_string());
    } else {
        parts.extend(c.writes.iter().map(|w| w.to_string()));
    }
    parts
}

/// One row of the `storage_changes` table: one variable a transaction changed, or one raw
/// slot (no variable, no key path, the slot's words before and after). Addresses and slots are
/// lowercase `0x` hex; values are the decoded text `stateChanges` of `--json --decode` gives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StorageChangeRow {
    pub address: String,
    /// The slot: a `bytes`/`string`'s length slot, a packed variable's shared slot.
    pub slot: String,
    /// The artifact's contract name, where one matched the code.
    pub contract: Option<String>,
    /// The storage variable (`_balances`); `None`: raw.
    pub variable: Option<String>,
    /// Mapping keys, array indices and struct members from the variable down; `None`: raw.
    pub key_path: Option<Vec<String>>,
    /// The whole name (`_allowances[0x…][0x…]`); `None`: raw.
    pub name: Option<String>,
    /// solc's label of the value's type; `None`: raw.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// The value's byte offset in its slot; `None`: raw.
    pub offset: Option<u64>,
    /// `length` of a dynamic array, `data word N` of a long string's data word.
    pub part: Option<String>,
    /// Decoded by type; the slot's word (`0x…`, 64 digits) when raw. A transient variable's
    /// `before` is zero and its `after` the last value written that stood.
    pub before: String,
    pub after: String,
    /// Transient storage (TSTORE), cleared when the transaction ends.
    pub transient: bool,
    /// Why the slot is raw.
    pub raw: Option<String>,
}

/// The `storage_changes` rows of one transaction's changes, in its write order.
pub fn storage_change_rows(changes: &StateChanges) -> Vec<StorageChangeRow> {
    changes
        .changes
        .iter()
        .map(|c| {
            let v = c.var.as_ref();
            StorageChangeRow {
                address: format!("{:#x}", c.address),
                slot: format!("{:#066x}", c.slot),
                contract: c.contract.clone(),
                variable: v.map(|v| v.variable.clone()),
                key_path: v.map(|v| v.key_path.clone()),
                name: v.map(|v| v.name.clone()),
                ty: v.map(|v| v.ty.clone()),
                offset: v.map(|v| v.offset),
                part: v.and_then(|v| v.part.clone()),
                before: c.before.text.clone(),
                after: c.after.text.clone(),
                transient: c.transient,
                raw: v
                    .is_none()
                    .then(|| c.raw.clone().unwrap_or_else(|| "not named".to_string())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::address;

    fn shown(t: &str) -> Shown {
        Shown {
            text: t.to_string(),
            short: None,
        }
    }

    fn change(var: Option<Named>, transient: bool, writes: &[&str]) -> StateChange {
        StateChange {
            address: address!("00000000000000000000000000000000000000Ab"),
            contract: Some("Token".into()),
            slot: U256::from(2),
            raw: var.is_none().then(|| "no layout".to_string()),
            var,
            before: shown("0"),
            after: shown(writes.last().copied().unwrap_or("7")),
            slots: Vec::new(),
            transient,
            writes: writes.iter().map(|w| shown(w)).collect(),
        }
    }

    #[test]
    fn rows_carry_the_variable_or_null_for_a_raw_slot() {
        let named = Named {
            variable: "_balances".into(),
            key_path: vec!["0x00000000000000000000000000000000000000Ab".into()],
            name: "_balances[0x00000000000000000000000000000000000000Ab]".into(),
            ty: "uint256".into(),
            offset: 0,
            part: None,
        };
        let rows = storage_change_rows(&StateChanges {
            quiet_if_empty: false,
            changes: vec![change(Some(named), false, &[]), change(None, false, &[])],
            notes: Vec::new(),
        });
        assert_eq!(rows[0].variable.as_deref(), Some("_balances"));
        assert_eq!(rows[0].key_path.as_ref().map(Vec::len), Some(1));
        assert_eq!(rows[0].raw, None);
        assert_eq!(
            rows[0].address,
            "0x00000000000000000000000000000000000000ab"
        );
        assert_eq!(rows[0].slot, format!("0x{}2", "0".repeat(63)));
        let j = serde_json::to_value(&rows[1]).unwrap();
        assert!(j["variable"].is_null() && j["key_path"].is_null() && j["type"].is_null());
        assert_eq!(j["raw"], "no layout");
    }

    #[test]
    fn transient_values_list_the_writes_that_stood() {
        let c = change(None, true, &["1", "2"]);
        assert_eq!(values(&c), ["0", "1", "2"]);
        let many: Vec<String> = (1..=9).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let c = change(None, true, &many);
        assert_eq!(values(&c), ["0", "1", "2", "3", "4", "… 4 more", "9"]);
    }
}
