//! The "state changes" of `tx` and `call`: what the transaction changed in storage, by
//! variable (`names::state`), worked out by one more local run of it under the access
//! inspector (its writes with their values before and after, and the KECCAK256 preimages that
//! give mapping keys exactly) — on the state the trace already fetched, so no round trip — and
//! only where a loaded artifact has a `storageLayout`. Printed after the tree (and its asset
//! changes), or as `stateChanges` in `--json --decode`.

use std::io::Write;

use chaintrace::names::state::{StateChange, StateChanges};
use chaintrace::names::Names;
use chaintrace::replay::access::trace_access_keyed;
use chaintrace::replay::mined::Mined;
use chaintrace::source::cache::Cache;
use chaintrace::source::rpc::RpcSource;
use chaintrace::trace::TracerSpec;
use serde_json::{json, Value};

use super::common::{CliError, TraceArgs};

/// Whether state changes are shown: the call tree or `--json --decode` of it, and some loaded
/// artifact has a `storageLayout`.
pub fn wanted(args: &TraceArgs, spec: &TracerSpec, names: &Names) -> bool {
    matches!(spec, TracerSpec::Call(_))
        && !args.wants_gas()
        && (!args.json || args.decode)
        && names.has_layouts()
}

/// The storage changes of `mined`'s transaction, by variable; notes go to stderr.
pub fn of_mined(
    mined: &mut Mined,
    source: &RpcSource,
    cache: Option<&Cache>,
    names: &Names,
) -> Result<StateChanges, CliError> {
    let ((rows, preimages), _) = mined.run(source, cache, |db, env, tx, _| {
        trace_access_keyed(db, env, tx)
            .map(|(rows, preimages, outcome)| ((rows, preimages), outcome))
    })?;
    let changes = names.state_changes(&mined.snapshot, &rows, &preimages);
    for n in &changes.notes {
        note!("note: {n}");
    }
    Ok(changes)
}

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
    let mut order: Vec<alloy_primitives::Address> = Vec::new();
    for c in &changes.changes {
        if !order.contains(&c.address) {
            order.push(c.address);
        }
    }
    for a in order {
        let of: Vec<&StateChange> = changes.changes.iter().filter(|c| c.address == a).collect();
        match of.first().and_then(|c| c.contract.as_deref()) {
            Some(n) => writeln!(out, "  {} ({n})", a.to_checksum(None))?,
            None => writeln!(out, "  {}", a.to_checksum(None))?,
        }
        for c in of {
            writeln!(out, "    {}", line(c))?;
        }
    }
    Ok(())
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
