//! The state changes by variable (`names::state`) as people and scripts read them: the
//! "state changes" section after the tree, and `stateChanges` of `--json --decode`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use alloy_primitives::{Address, B256, U256};
use chaintrace::names::state::{StateChange, StateChanges};
use chaintrace::trace::prestate::AccountState;
use serde_json::{json, Value};

/// `before → after`; for a transient variable, zero through each value written that stood
/// (`false → true → false`).
fn values(c: &StateChange) -> String {
    chaintrace::render::state_changes::values(c).join(" → ")
}

/// One line: `Token._balances[0x…]: 10000 → 9800`, `Pool.locked (transient): false → true →
/// false`, or a raw slot with why it is raw.
pub fn line(c: &StateChange) -> String {
    let owner = c
        .contract
        .as_deref()
        .map(|n| format!("{n}."))
        .unwrap_or_default();
    let transient = if c.transient { " (transient)" } else { "" };
    match (&c.var, &c.raw) {
        (Some(v), _) => format!("{owner}{}{transient}: {}", v.name, values(c)),
        (None, why) => format!(
            "{owner}slot {:#066x}{transient}: {} (raw: {})",
            c.slot,
            values(c),
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
/// stderr with `--json` (stdout stays geth's JSON), like the what-if table. A diff not shown
/// ([`StateChanges::shown`]: only compiled layouts, nothing differs) is left out, and with none
/// shown, the section.
pub fn print_diff(ids: &[String], diffs: &[StateChanges], json: bool) -> std::io::Result<()> {
    let shown: Vec<_> = ids.iter().zip(diffs).filter(|(_, d)| d.shown()).collect();
    if shown.is_empty() {
        return Ok(());
    }
    let mut text = Vec::new();
    writeln!(text, "state after: mined → patched")?;
    for (id, d) in shown {
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
                if !c.slots.is_empty() {
                    let slots: Vec<String> = c.slots.iter().map(|s| format!("{s:#066x}")).collect();
                    m.insert("slots".into(), json!(slots));
                }
                if c.transient {
                    m.insert("transient".into(), json!(true));
                    let writes: Vec<&str> = c.writes.iter().map(|w| w.text.as_str()).collect();
                    m.insert("writes".into(), json!(writes));
                }
            }
            o
        })
        .collect();
    Value::Array(items)
}

/// A storage slot of a prestateTracer diff: its value in `pre` and in `post` (geth leaves out
/// a slot that became zero, and one that was zero before).
fn diff_slots(pre: Option<&AccountState>, post: Option<&AccountState>) -> Vec<(B256, B256, B256)> {
    let of = |a: Option<&AccountState>| a.and_then(|a| a.storage.clone()).unwrap_or_default();
    let (before, after) = (of(pre), of(post));
    let keys: BTreeSet<B256> = before.keys().chain(after.keys()).copied().collect();
    keys.into_iter()
        .map(|k| {
            let b = before.get(&k).copied().unwrap_or_default();
            let a = after.get(&k).copied().unwrap_or_default();
            (k, b, a)
        })
        .filter(|(_, b, a)| b != a)
        .collect()
}

/// Every storage slot of a prestateTracer diff (`pre`, `post`), with its value before and
/// after, by address: what [`render_prestate_diff`] names.
pub fn prestate_diff_slots(
    pre: &BTreeMap<Address, AccountState>,
    post: &BTreeMap<Address, AccountState>,
) -> Vec<(Address, U256, U256, U256)> {
    let addresses: BTreeSet<Address> = pre.keys().chain(post.keys()).copied().collect();
    addresses
        .into_iter()
        .flat_map(|a| {
            diff_slots(pre.get(&a), post.get(&a))
                .into_iter()
                .map(move |(k, b, v)| (a, k.into(), b.into(), v.into()))
        })
        .collect()
}

/// A prestateTracer diff (`diffMode`) for people: per account what changed — balance, nonce,
/// code — then each storage slot before → after, named by variable with values decoded where
/// `named` (the slots named by `names::state::Namer`) has it, raw words (and why) where not.
/// `--json` stays geth's result.
pub fn render_prestate_diff(
    pre: &BTreeMap<Address, AccountState>,
    post: &BTreeMap<Address, AccountState>,
    named: Option<&StateChanges>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(out, "state diff (prestateTracer diffMode)")?;
    let addresses: BTreeSet<Address> = pre.keys().chain(post.keys()).copied().collect();
    if addresses.is_empty() {
        return writeln!(out, "  (nothing changed)");
    }
    let by_slot = |a: Address, slot: U256| -> Vec<&StateChange> {
        named.map_or(Vec::new(), |n| {
            n.changes
                .iter()
                .filter(|c| c.address == a && c.slot == slot && !c.transient)
                .collect()
        })
    };
    for a in addresses {
        let (p, q) = (pre.get(&a), post.get(&a));
        let slots = diff_slots(p, q);
        let contract = slots
            .iter()
            .flat_map(|(k, _, _)| by_slot(a, (*k).into()))
            .find_map(|c| c.contract.clone());
        match contract {
            Some(n) => writeln!(out, "  {} ({n})", a.to_checksum(None))?,
            None => writeln!(out, "  {}", a.to_checksum(None))?,
        }
        let Some(q) = q else {
            writeln!(out, "    (not in post: the account was deleted)")?;
            continue;
        };
        if let Some(b) = q.balance {
            let was = p.and_then(|p| p.balance).unwrap_or_default();
            writeln!(out, "    balance: {was} → {b} wei")?;
        }
        let was = p.map_or(0, |p| p.nonce);
        if q.nonce != 0 && q.nonce != was {
            writeln!(out, "    nonce: {was} → {}", q.nonce)?;
        }
        if let Some(c) = &q.code {
            let was = p.and_then(|p| p.code.as_ref()).map_or(0, |c| c.len());
            writeln!(out, "    code: {was} → {} bytes", c.len())?;
        }
        for (k, b, v) in slots {
            let names = by_slot(a, k.into());
            let raw = names.iter().find(|c| c.var.is_none());
            match (names.as_slice(), raw) {
                ([], _) => writeln!(out, "    {k}: {b} → {v}")?,
                (_, Some(r)) => writeln!(
                    out,
                    "    {k}: {b} → {v} (raw: {})",
                    r.raw.as_deref().unwrap_or("not named")
                )?,
                ([one], None) => writeln!(out, "    {k} {}", bare(one))?,
                (many, None) => {
                    writeln!(out, "    {k}")?;
                    for c in many {
                        writeln!(out, "      {}", bare(c))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// A named change without its contract: `_balances[0x…]: 10000 → 9800`.
fn bare(c: &StateChange) -> String {
    let name = c.var.as_ref().map_or("", |v| v.name.as_str());
    format!("{name}: {}", values(c))
}
