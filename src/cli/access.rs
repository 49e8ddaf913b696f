//! `chaintrace access <HASH>`: the state access pattern of a mined transaction — every account
//! and slot read or written, its value before and after, and the frames that touched it — as a
//! table, or JSON with `--json`. `--remote` prints the node's own `debug_traceStateAccess`.

use std::collections::HashMap;
use std::io::Write;

use alloy_primitives::{Address, U256};
use chaintrace::names::state::{Namer, StateChange, StateChanges};
use chaintrace::names::Names;

use chaintrace::render::json::write_json;
use chaintrace::replay::access::{trace_access_keyed, Access, Preimages};
use chaintrace::replay::mined::Mined;
use clap::Args;
use comfy_table::ContentArrangement;
use serde_json::json;

use super::common::{exit, CliError, RpcArgs};
use super::common::{finish, parse_hash};
use super::state::{print_note, report, StateArgs};

/// Every account and slot a transaction read or wrote, with values before and after.
#[derive(Args, Debug)]
pub struct AccessArgs {
    /// Transaction hash (0x + 64 hex digits).
    pub hash: String,
    /// Print JSON: [{"address","slot"?,"transient"?,"read","written","before","after","touchedBy"}],
    /// with "variables" on a slot a loaded storage layout names.
    #[arg(long)]
    pub json: bool,
    /// Print the node's own debug_traceStateAccess result instead of replaying locally.
    #[arg(long)]
    pub remote: bool,
    /// Replay under this fork instead of the chain's schedule.
    #[arg(long, value_name = "NAME")]
    pub hardfork: Option<String>,
    /// JSON ABI, artifact or artifact tree (Foundry `out/`): slots of contracts whose code matches
    /// an artifact with a `storageLayout` are named (`balanceOf[0x…]`). Repeatable.
    #[arg(long, value_name = "FILE|DIR")]
    pub abi: Vec<String>,
    /// Do not look for a Foundry/Hardhat project around the working directory.
    #[arg(long)]
    pub no_project: bool,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub state: StateArgs,
}

/// What each slot of the run holds, by variable, with the values before and after
/// (`names::state::Namer`): only for contracts an artifact matched.
pub type SlotVars = HashMap<(Address, U256), Vec<StateChange>>;

/// Renders the access pattern as a table: one row per account or slot; a slot of a contract an
/// artifact matched followed by the variables it holds (`_balances[0x…]`, packed ones joined by
/// `, `), its values decoded by their types, or marked raw with the reason.
pub fn render_table(
    rows: &[Access],
    slot_names: &SlotVars,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut t = super::common::table_style(true).table(&[]);
    t.set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "address",
            "slot",
            "access",
            "before",
            "after",
            "touched by",
        ]);
    for r in rows {
        let access = match (r.read, r.written) {
            (true, true) => "read+write",
            (false, true) => "write",
            _ => "read",
        };
        let vars = r
            .slot
            .filter(|_| !r.transient)
            .and_then(|s| slot_names.get(&(r.address, s)));
        let slot = match r.slot {
            None => "(account)".to_string(),
            Some(s) if r.transient => format!("{s:#x} (transient)"),
            Some(s) => match vars.map(|v| &v[..]) {
                Some([c, ..]) if c.var.is_none() => {
                    format!("{s:#x} (raw: {})", c.raw.as_deref().unwrap_or("not named"))
                }
                Some(v) => {
                    let names: Vec<&str> = v
                        .iter()
                        .filter_map(|c| c.var.as_ref().map(|n| n.name.as_str()))
                        .collect();
                    format!("{s:#x} {}", names.join(", "))
                }
                None => format!("{s:#x}"),
            },
        };
        let value = |v: alloy_primitives::U256, n: Option<u64>| match n {
            Some(n) => format!("balance {v}, nonce {n}"),
            None => format!("{v:#x}"),
        };
        let decoded = |after: bool| {
            let v = vars.filter(|v| v.iter().all(|c| c.var.is_some()))?;
            let shown: Vec<String> = v
                .iter()
                .map(|c| match after {
                    true => c.after.to_string(),
                    false => c.before.to_string(),
                })
                .collect();
            Some(shown.join(", "))
        };
        let by: Vec<String> = r
            .touched_by
            .iter()
            .map(|t| format!("#{} {:?}", t.frame, t.contract))
            .collect();
        t.add_row(vec![
            format!("{:?}", r.address),
            slot,
            access.to_string(),
            decoded(false).unwrap_or_else(|| value(r.before, r.nonce_before)),
            decoded(true).unwrap_or_else(|| value(r.after, r.nonce_after)),
            by.join(", "),
        ]);
    }
    writeln!(out, "{t}")
}

/// The JSON rows with, where a layout names a slot, `"variables"`: each variable it holds as
/// `stateChanges` lists them (name, key path, type, offset, before, after), or `"raw"` with
/// the reason.
fn with_variables(rows: &[Access], vars: &SlotVars) -> serde_json::Value {
    let items = rows
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            let found = r
                .slot
                .filter(|_| !r.transient)
                .and_then(|s| vars.get(&(r.address, s)));
            if let (Some(found), Some(o)) = (found, v.as_object_mut()) {
                let named = super::state_view::to_json(&StateChanges {
                    changes: found.clone(),
                    notes: Vec::new(),
                    quiet_if_empty: false,
                });
                o.insert("variables".into(), named);
            }
            v
        })
        .collect();
    serde_json::Value::Array(items)
}

impl AccessArgs {
    /// The variables each slot holds, by the storage layouts of matching artifacts (`--abi`,
    /// the project), keys exact from the run's KECCAK256 `preimages`, values before and after
    /// decoded; `None` when no artifact has a layout. Notes go to stderr.
    fn slot_vars(
        &self,
        rows: &[Access],
        mined: &Mined,
        preimages: &Preimages,
    ) -> Result<Option<SlotVars>, CliError> {
        let cwd = std::env::current_dir().ok();
        let discover = if self.no_project {
            None
        } else {
            cwd.as_deref()
        };
        let names =
            Names::load(&self.abi, &[], discover).map_err(|e| CliError::input(e.to_string()))?;
        if !names.has_layouts() {
            return Ok(None);
        }
        let mut namer = Namer::new(&names, &mined.snapshot, preimages);
        let mut out = SlotVars::new();
        for r in rows.iter().filter(|r| !r.transient) {
            let Some(s) = r.slot else { continue };
            let vars = namer.slot(r.address, s, r.before, r.after, false);
            // A contract no artifact matched is left as it was: no label on every slot.
            if vars.iter().any(|c| c.contract.is_some() || c.var.is_some()) {
                out.insert((r.address, s), vars);
            }
        }
        for n in &namer.notes {
            note!("note: {n}");
        }
        Ok(Some(out))
    }

    pub fn run(&self) -> Result<u8, CliError> {
        let hash = parse_hash(&self.hash, "transaction hash")?;
        let hardfork = super::common::hardfork_arg(self.hardfork.as_deref())?;
        let source = self.rpc.source()?;
        let stdout = std::io::stdout();
        if self.remote {
            let v = source
                .client
                .call("debug_traceStateAccess", json!([hash]))
                .map_err(|e| CliError::source(e.to_string()))?;
            let mut out = std::io::BufWriter::new(stdout.lock());
            if self.json {
                write_json(&mut out, &v)?;
            } else {
                serde_json::to_writer_pretty(&mut out, &v).map_err(std::io::Error::other)?;
            }
            writeln!(out)?;
            out.flush()?;
            report(&source, None, None, 0);
            return Ok(exit::OK);
        }
        let cache = self.state.cache();
        let mut mined = Mined::load(&source, cache.as_ref(), hash, self.state.mode(), hardfork)?;
        let ((rows, preimages), outcome) =
            mined.run(&source, cache.as_ref(), |db, env, tx, _| {
                trace_access_keyed(db, env, tx)
                    .map(|(rows, preimages, outcome)| ((rows, preimages), outcome))
            })?;
        let vars = self.slot_vars(&rows, &mined, &preimages)?;
        let mut out = std::io::BufWriter::new(stdout.lock());
        if self.json {
            match &vars {
                None => write_json(&mut out, &rows)?,
                Some(v) => write_json(&mut out, &with_variables(&rows, v))?,
            }
            writeln!(out)?;
        } else {
            render_table(&rows, &vars.unwrap_or_default(), &mut out)?;
        }
        out.flush()?;
        print_note(&mined);
        report(&source, cache.as_ref(), Some(&mined), mined.passes);
        Ok(finish(
            hash,
            &outcome,
            Some(&mined.receipt),
            true,
            mined.state_check().as_ref(),
        ))
    }
}
