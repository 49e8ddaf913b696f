//! The state changes by variable (`names::state`) as people and scripts read them: the
//! "state changes" section after the tree, and `stateChanges` of `--json --decode`.

use std::io::Write;

use chaintrace::names::state::{StateChange, StateChanges};
use serde_json::{json, Value};

/// One line: `Token._balances[0x…]: 10000 → 9800`, or a raw slot with why it is raw.
fn line(c: &StateChange) -> String {
    let owner = c
        .contract
        .as_deref()
        .map(|n| format!("{n}."))
        .unwrap_or_default();
    match (&c.var, &c.raw) {
        (Some(v), _) => format!("{owner}{}: {} → {}", v.name, c.before, c.after),
        (None, why) => format!(
            "{owner}slot {:#066x}: {} → {} (raw: {})",
            c.slot,
            c.before,
            c.after,
            why.as_deref().unwrap_or("not named")
        ),
    }
}

/// The "state changes" section: per contract, in the order the transaction first wrote to
/// it, each change in write order.
pub fn render(changes: &StateChanges, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "state changes")?;
    if changes.changes.is_empty() {
        return writeln!(out, "(no storage changed)");
    }
    by_contract(&changes.changes, "  ", out)
}

/// Changes grouped per contract (in first-change order), each under its address.
fn by_contract(changes: &[StateChange], indent: &str, out: &mut impl Write) -> std::io::Result<()> {
    let mut order: Vec<alloy_primitives::Address> = Vec::new();
    for c in changes {
        if !order.contains(&c.address) {
            order.push(c.address);
        }
    }
    for a in order {
        let of: Vec<&StateChange> = changes.iter().filter(|c| c.address == a).collect();
        match of.first().and_then(|c| c.contract.as_deref()) {
            Some(n) => writeln!(out, "{indent}{} ({n})", a.to_checksum(None))?,
            None => writeln!(out, "{indent}{}", a.to_checksum(None))?,
        }
        for c in of {
            writeln!(out, "{indent}  {}", line(c))?;
        }
    }
    Ok(())
}

/// What-if's by-variable diff: per transaction (`ids[i]`), each variable whose value after it
/// differs between the mined run (left) and the patched one (right). On stdout for people, on
/// stderr with `--json` (stdout stays geth's JSON), like the what-if table.
pub fn print_diff(ids: &[String], diffs: &[StateChanges], json: bool) -> std::io::Result<()> {
    let mut text = Vec::new();
    writeln!(text, "state after: mined → patched")?;
    for (id, d) in ids.iter().zip(diffs) {
        writeln!(text, "  {id}")?;
        if d.changes.is_empty() {
            writeln!(text, "    (every slot ends the same)")?;
        } else {
            by_contract(&d.changes, "    ", &mut text)?;
        }
    }
    if json {
        std::io::stderr().lock().write_all(&text)
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(b"\n")?;
        out.write_all(&text)?;
        out.flush()
    }
}

/// `stateChanges` of `--json --decode`: one object per changed variable or raw slot, in write
/// order.
pub fn to_json(changes: &StateChanges) -> Value {
    let items: Vec<Value> = changes
        .changes
        .iter()
        .map(|c| {
            let mut o = json!({
                "address": c.address.to_checksum(None),
                "contract": c.contract,
                "variable": c.var.as_ref().map(|v| &v.variable),
                "keyPath": c.var.as_ref().map_or(&[][..], |v| &v.key_path[..]),
                "type": c.var.as_ref().map(|v| &v.ty),
                "slot": format!("{:#066x}", c.slot),
                "offset": c.var.as_ref().map(|v| v.offset),
                "before": c.before.text,
                "after": c.after.text,
            });
            if let Some(m) = o.as_object_mut() {
                if let Some(v) = &c.var {
                    m.insert("name".into(), json!(v.name));
                    if let Some(p) = &v.part {
                        m.insert("part".into(), json!(p));
                    }
                }
                if let Some(r) = &c.raw {
                    m.insert("raw".into(), json!(r));
                }
            }
            o
        })
        .collect();
    Value::Array(items)
}
