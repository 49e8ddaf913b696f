//! `chaintrace access <HASH>`: the state access pattern of a mined transaction — every account
//! and slot read or written, its value before and after, and the frames that touched it — as a
//! table, or JSON with `--json`. `--remote` prints the node's own `debug_traceStateAccess`.

use std::collections::HashMap;
use std::io::Write;

use alloy_primitives::{Address, U256};
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
    /// Print JSON: [{"address","slot"?,"transient"?,"read","written","before","after","touchedBy"}].
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

/// Renders the access pattern as a table: one row per account or slot, slots followed by their
/// name from a storage layout when known.
pub fn render_table(
    rows: &[Access],
    slot_names: &HashMap<(Address, U256), String>,
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
        let slot = match r.slot {
            None => "(account)".to_string(),
            Some(s) if r.transient => format!("{s:#x} (transient)"),
            Some(s) => match slot_names.get(&(r.address, s)) {
                Some(name) => format!("{s:#x} {name}"),
                None => format!("{s:#x}"),
            },
        };
        let value = |v: alloy_primitives::U256, n: Option<u64>| match n {
            Some(n) => format!("balance {v}, nonce {n}"),
            None => format!("{v:#x}"),
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
            value(r.before, r.nonce_before),
            value(r.after, r.nonce_after),
            by.join(", "),
        ]);
    }
    writeln!(out, "{t}")
}

impl AccessArgs {
    /// Slot names from the storage layouts of matching artifacts (`--abi`, the project), keys
    /// exact from the run's KECCAK256 `preimages`.
    fn slot_names(
        &self,
        rows: &[Access],
        mined: &Mined,
        preimages: &Preimages,
    ) -> Result<HashMap<(Address, U256), String>, CliError> {
        let cwd = std::env::current_dir().ok();
        let discover = if self.no_project {
            None
        } else {
            cwd.as_deref()
        };
        let names =
            Names::load(&self.abi, &[], discover).map_err(|e| CliError::input(e.to_string()))?;
        let slots: Vec<(Address, U256)> = rows
            .iter()
            .filter(|r| !r.transient)
            .filter_map(|r| r.slot.map(|s| (r.address, s)))
            .collect();
        Ok(names.slot_names(&mined.snapshot, &slots, preimages))
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
        let mut out = std::io::BufWriter::new(stdout.lock());
        if self.json {
            write_json(&mut out, &rows)?;
            writeln!(out)?;
        } else {
            let names = self.slot_names(&rows, &mined, &preimages)?;
            render_table(&rows, &names, &mut out)?;
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
