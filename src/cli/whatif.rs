//! What-if replays (`tx HASH --code-override ADDR=ARTIFACT|0xHEX`, `block N --code-override …`):
//! the mined transaction(s) replayed twice, as mined (with the receipt self-check) and with the
//! given contracts' runtime code replaced; the patched run's trace is printed, and a table sets
//! the two outcomes side by side (status, revert reason, location, gasUsed).
//!
//! The patched run has no receipt to be checked against: its self-check is skipped and stderr
//! says so. Its exit code is its own (0 success, 3 failed), never 4; a divergence of the
//! *original* run from its receipt (4) or an unreadable receipt (2) still wins, since the what-if
//! then rests on a replay that does not match the chain.

use std::io::Write;
use std::path::Path;

use alloy_primitives::{hex, Address, Bytes};
use chaintrace::names::artifacts::{fill_immutables, override_code, Immutable};
use chaintrace::names::Artifact;
use chaintrace::render::decoder::Decoder;
use chaintrace::replay::overrides::{AccountOverride, StateOverride};
use chaintrace::replay::TracedTx;
use clap::Args;
use comfy_table::presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED};
use comfy_table::{ContentArrangement, Table};

use super::common::{exit, CliError};

/// `--code-override`.
#[derive(Args, Debug, Clone, Default)]
pub struct WhatIfArgs {
    /// Replay the mined transaction(s) again with this contract's runtime code replaced — by a
    /// Foundry/Hardhat artifact's deployedBytecode (e.g. your fixed build) or by 0x-hex runtime
    /// code — and compare the two runs: status, revert reason, location, gasUsed. The patched
    /// run's trace is printed; its receipt self-check is skipped. Repeatable (one per address).
    #[arg(long = "code-override", value_name = "ADDR=ARTIFACT|0xHEX")]
    pub code_override: Vec<String>,
}

/// The replaced code of one run.
pub struct Patch {
    pub overrides: StateOverride,
    /// Artifacts whose code was used, by address: the patched contract is named by them.
    pub artifacts: Vec<(Address, Artifact)>,
    /// One line per replaced contract: `0x… ← Name (path, N bytes)`.
    pub described: Vec<String>,
    /// Notes about the code chosen (Hardhat artifacts list no immutables).
    pub notes: Vec<String>,
    /// Artifacts' immutables still zero in their code, by address: copied from the code on
    /// chain by [`Patch::with_immutables`] before the patched run.
    pub immutables: Vec<(Address, Vec<Immutable>)>,
}

impl WhatIfArgs {
    /// The patch the flags ask for, `None` without `--code-override`. Bad input (a malformed
    /// pair, an address twice, an artifact that cannot run as compiled) is refused here, before
    /// any node is asked.
    pub fn patch(&self) -> Result<Option<Patch>, CliError> {
        if self.code_override.is_empty() {
            return Ok(None);
        }
        let mut patch = Patch {
            overrides: StateOverride::default(),
            artifacts: Vec::new(),
            described: Vec::new(),
            notes: Vec::new(),
            immutables: Vec::new(),
        };
        for raw in &self.code_override {
            let bad = |why: &str| {
                CliError::input(format!(
                    "--code-override {raw:?}: {why} (expected ADDR=ARTIFACT or ADDR=0xHEX)"
                ))
            };
            let (addr, what) = raw
                .split_once('=')
                .ok_or_else(|| bad("no '=' between the address and the code"))?;
            let addr = addr.trim();
            let what = what.trim();
            let ok_addr = addr.len() == 42 && addr.starts_with("0x");
            let address: Address = ok_addr
                .then(|| addr.parse().ok())
                .flatten()
                .ok_or_else(|| bad(&format!("{addr:?} is not 0x followed by 40 hex digits")))?;
            if patch.overrides.0.contains_key(&address) {
                return Err(bad(&format!(
                    "{} is replaced twice",
                    address.to_checksum(None)
                )));
            }
            let code: Vec<u8> = if what.starts_with("0x") || what.starts_with("0X") {
                hex::decode(&what[2..])
                    .map_err(|e| bad(&format!("the code is not hex bytes: {e}")))?
            } else if what.is_empty() {
                return Err(bad("no code after '='"));
            } else {
                let got = override_code(Path::new(what))
                    .map_err(|e| CliError::input(format!("--code-override {raw:?}: {e}")))?;
                patch.described.push(format!(
                    "{} runs {} ({what}, {} bytes) instead of its code on chain",
                    address.to_checksum(None),
                    got.artifact.name,
                    got.code.len()
                ));
                patch.notes.extend(got.notes);
                if !got.immutables.is_empty() {
                    patch.immutables.push((address, got.immutables));
                }
                patch.artifacts.push((address, got.artifact));
                got.code
            };
            if what.starts_with("0x") || what.starts_with("0X") {
                patch.described.push(format!(
                    "{} runs the given code ({} bytes) instead of its code on chain",
                    address.to_checksum(None),
                    code.len()
                ));
            }
            patch.overrides.0.insert(
                address,
                AccountOverride {
                    code: Some(Bytes::from(code)),
                    ..AccountOverride::default()
                },
            );
        }
        Ok(Some(patch))
    }
}

impl Patch {
    /// Names the patched contracts by their artifacts' ABIs and names.
    pub fn name(&self, decoder: &mut Decoder) {
        for (addr, a) in &self.artifacts {
            decoder.add_contract(*addr, a.abi().clone());
            if !a.name.is_empty() {
                decoder.add_label(*addr, a.name.clone());
            }
        }
    }

    /// The overrides with each artifact's immutables copied from the code on chain at its
    /// address (`on_chain`; `None`: no account there), saying on stderr what was copied; an
    /// immutable that cannot be found there refuses the override, naming it.
    pub fn with_immutables(
        &self,
        on_chain: &dyn Fn(Address) -> Result<Option<Bytes>, CliError>,
    ) -> Result<StateOverride, CliError> {
        let mut overrides = self.overrides.clone();
        for (address, immutables) in &self.immutables {
            let Some(account) = overrides.0.get_mut(address) else {
                continue;
            };
            let Some(code) = account.code.as_ref() else {
                continue;
            };
            let mut code = code.to_vec();
            let chain = on_chain(*address)?.unwrap_or_default();
            let shown = address.to_checksum(None);
            let copied = fill_immutables(&mut code, immutables, &chain).map_err(|e| {
                CliError::input(format!(
                    "--code-override {shown}: the artifact's code reads immutables its \
                     constructor writes, to be copied from the code on chain: {e}"
                ))
            })?;
            let values: Vec<String> = copied
                .iter()
                .map(|(id, v)| format!("#{id} = {}", shown_word(v)))
                .collect();
            note!(
                "what-if: {shown}: immutable values copied from its code on chain ({})",
                values.join(", ")
            );
            account.code = Some(Bytes::from(code));
        }
        Ok(overrides)
    }

    /// The `what-if:` lines and notes, on stderr.
    pub fn announce(&self) {
        for d in &self.described {
            note!("what-if: {d}");
        }
        for n in &self.notes {
            note!("note: {n}");
        }
    }
}

/// One run's outcome, as the table shows it.
pub struct Outcome {
    pub status: String,
    pub reason: String,
    pub location: String,
    pub gas_used: u64,
}

/// Where a failed run stopped, in source terms: the innermost function of its Solidity stack
/// trace, else its top frame's location, when a source map matched the code that ran ("Where
/// it failed" in docs/names-and-sources.md); `None` for a success or without a map.
fn location(t: &TracedTx, decoder: &Decoder) -> Option<String> {
    if t.outcome.success {
        return None;
    }
    let notes = decoder.sources()?;
    notes
        .stack
        .first()
        .map(|e| e.location.at())
        .or_else(|| notes.frames.get(&Vec::new()).map(|l| l.at()))
}

/// `t`'s outcome; the revert reason named by `decoder` as the tree names it (`to` is the
/// transaction's recipient, whose ABI comes first).
pub fn outcome(t: &TracedTx, decoder: &Decoder, to: Option<Address>) -> Outcome {
    let o = &t.outcome;
    let (status, reason) = if o.success {
        ("success".to_string(), "-".to_string())
    } else if let Some(h) = &o.halt {
        ("failed".to_string(), h.clone())
    } else {
        (
            "reverted".to_string(),
            decoder
                .describe_revert_at(to, &o.output)
                .unwrap_or_else(|| "(no reason)".to_string()),
        )
    };
    Outcome {
        status,
        reason,
        location: location(t, decoder).unwrap_or_else(|| "-".to_string()),
        gas_used: o.gas_used,
    }
}

/// The side-by-side table: one row per run (`label`, e.g. "original" / "patched"), with a
/// leading transaction column when `rows` cover several transactions. Box drawing on a
/// terminal, ASCII when piped, under NO_COLOR or `--color never`, as the other tables.
pub fn table(rows: &[(Option<String>, &str, Outcome)]) -> String {
    let with_tx = rows.iter().any(|(tx, _, _)| tx.is_some());
    let mut t = Table::new();
    let style = if super::common::table_style(true).utf8 {
        UTF8_FULL_CONDENSED
    } else {
        ASCII_FULL_CONDENSED
    };
    t.load_style(style)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = Vec::new();
    if with_tx {
        header.push("tx");
    }
    header.extend(["run", "status", "revert reason", "location", "gasUsed"]);
    t.set_header(header);
    for (tx, run, o) in rows {
        let mut row = Vec::new();
        if with_tx {
            row.push(tx.clone().unwrap_or_default());
        }
        row.extend([
            run.to_string(),
            o.status.clone(),
            o.reason.clone(),
            o.location.clone(),
            o.gas_used.to_string(),
        ]);
        t.add_row(row);
    }
    t.to_string()
}

/// Prints the table: on stdout for people, on stderr with `--json` (stdout stays geth's JSON).
pub fn print_table(text: &str, json: bool) -> Result<(), CliError> {
    const SKIPPED: &str =
        "self-check: skipped for the patched run (its code is not the chain's: no receipt to \
         compare with)";
    if json {
        eprintln!("{text}");
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(out, "\n{text}")?;
        out.flush()?;
    }
    note!("{SKIPPED}");
    Ok(())
}

/// The exit code of a what-if: the original run's when its self-check failed or could not be
/// done (2, 4), else the patched run's (0 success, 3 failed) — never 4 for the patched run.
pub fn exit_code(original: u8, patched_success: bool) -> u8 {
    match original {
        exit::DIVERGED | exit::SOURCE => original,
        _ if patched_success => exit::OK,
        _ => exit::TX_FAILED,
    }
}

/// A 32-byte immutable as people read it: an address when it is one (12 zero bytes, then
/// something), else its hex.
fn shown_word(v: &[u8; 32]) -> String {
    if v[..12].iter().all(|&b| b == 0) && v[12..].iter().any(|&b| b != 0) {
        Address::from_slice(&v[12..]).to_checksum(None)
    } else {
        format!("0x{}", hex::encode(v))
    }
}

/// The code on chain at `a`: from `snapshot` (the original run's state) where it holds the
/// account, else read as of block `parent`; `None`: no account there.
pub fn code_on_chain(
    snapshot: &chaintrace::source::StateSnapshot,
    source: &chaintrace::source::rpc::RpcSource,
    parent: &str,
    a: Address,
) -> Result<Option<Bytes>, CliError> {
    if let Some(acc) = snapshot.accounts.get(&a) {
        return Ok(Some(acc.code.clone()));
    }
    let misses = chaintrace::source::Misses {
        accounts: [a].into(),
        ..Default::default()
    };
    let got = source.fetch_states(&[(parent, &misses)])?;
    Ok(got
        .first()
        .and_then(|s| s.accounts.get(&a))
        .map(|acc| acc.code.clone()))
}

/// `snapshot` with the overrides' code in place: what names a patched run (its frames' code
/// is matched to artifacts and source maps by the code that ran).
pub fn patched_view(
    snapshot: &chaintrace::source::StateSnapshot,
    overrides: &StateOverride,
) -> chaintrace::source::StateSnapshot {
    let mut view = snapshot.fork();
    for (a, o) in &overrides.0 {
        if let Some(code) = &o.code {
            let mut account = view.accounts.get(a).cloned().unwrap_or_default();
            account.code = code.clone();
            view.insert_account(*a, account);
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> WhatIfArgs {
        WhatIfArgs {
            code_override: v.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn pairs_parse_and_bad_ones_are_named() {
        let p = args(&["0x00000000000000000000000000000000000000aa=0x6000"])
            .patch()
            .unwrap()
            .unwrap();
        let code = &p.overrides.0.values().next().unwrap().code;
        assert_eq!(code.as_ref().map(|c| c.to_vec()), Some(vec![0x60u8, 0x00]));
        for (a, says) in [
            ("0xaa", "no '='"),
            ("0x12=0x00", "not 0x followed by 40 hex"),
            ("0x00000000000000000000000000000000000000aa=0xzz", "not hex"),
            ("0x00000000000000000000000000000000000000aa=", "no code"),
        ] {
            let e = args(&[a]).patch().err().unwrap();
            assert_eq!(e.code, exit::BAD_INPUT);
            assert!(e.message.contains(says), "{a}: {}", e.message);
        }
        let twice = "0x00000000000000000000000000000000000000aa=0x00";
        let e = args(&[twice, twice]).patch().err().unwrap();
        assert!(e.message.contains("replaced twice"), "{}", e.message);
        assert_eq!(exit_code(exit::DIVERGED, true), exit::DIVERGED);
        assert_eq!(exit_code(exit::TX_FAILED, true), exit::OK);
        assert_eq!(exit_code(exit::OK, false), exit::TX_FAILED);
    }
}
