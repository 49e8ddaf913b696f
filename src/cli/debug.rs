//! `chaintrace debug`: step through a transaction in the terminal (see `src/debug/`).

use std::io::IsTerminal;

use chaintrace::debug::{ui, Session, Target};
use chaintrace::replay::mined::Mined;
use chaintrace::replay::{fixture_env, fixture_snapshot, fixture_tx, trace_fixture_on};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::{TracerKind, TracerSpec};
use clap::Args;

use super::common::{exit, finish, parse_hash, CliError, NameArgs, RpcArgs};
use super::names::{add_looked_up, attach_lookups, load_names_from, record_source_steps};
use super::state::{print_note, StateArgs};

/// Step through one transaction in the terminal: source, call stack with arguments, EVM stack,
/// memory, storage, return data and opcodes, from a node, a fixture or a bundle.
#[derive(Args, Debug)]
pub struct DebugArgs {
    /// Transaction hash (0x + 64 hex digits).
    #[arg(required_unless_present_any = ["fixture", "bundle"], conflicts_with_all = ["fixture", "bundle"])]
    pub hash: Option<String>,
    /// Debug a geth tracetest fixture offline (its `NAME.build-info.json` beside it is read).
    #[arg(long, value_name = "FILE", conflicts_with = "bundle")]
    pub fixture: Option<String>,
    /// Debug a bundle from `chaintrace bundle capture` offline.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<String>,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub state: StateArgs,
    /// Replay under this fork instead of the chain's schedule.
    #[arg(long, value_name = "NAME")]
    pub hardfork: Option<String>,
    /// ABIs and source maps: Foundry/Hardhat artifacts, solc standard-JSON output, a directory
    /// of them, or a JSON ABI. Repeatable. The project around the current directory is found
    /// without it.
    #[arg(long, value_name = "FILE|DIR")]
    pub abi: Vec<String>,
    #[command(flatten)]
    pub names: NameArgs,
    #[command(flatten)]
    pub whatif: super::whatif::WhatIfArgs,
}

/// What the self-check after a session compares: the traced run, the receipt, the state check.
pub(super) type Check = (
    chaintrace::replay::TracedTx,
    Option<serde_json::Value>,
    Option<(usize, Vec<String>)>,
);

/// A debug request's input, checked before anything is fetched.
struct Checked {
    hardfork: Option<revm::primitives::hardfork::SpecId>,
    patch: Option<super::whatif::Patch>,
    fixture: Option<Fixture>,
}

impl DebugArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        // Bad input is named before anything else; nothing is fetched without a terminal.
        let checked = self.check_input()?;
        if !std::io::stdout().is_terminal() {
            return Err(CliError::input(
                "chaintrace debug is interactive and needs a terminal on stdout; for output a \
                 script can read, trace with `chaintrace tx` (e.g. `chaintrace tx HASH --tracer \
                 opcodeTracer --json`, or `chaintrace tx HASH` for the call tree and the \
                 Solidity stack)",
            ));
        }
        let (mut session, check) = self.open_checked(checked)?;
        ui::run(&mut session, 0)?;
        // The replay checked against the receipt, as `tx` does; said once the screen is back.
        Ok(self_check(&session, check))
    }

    /// Opens the session: the replay, its steps and names (for the terminal and for `dap`).
    pub(super) fn open(&self) -> Result<(Session, Check), CliError> {
        let checked = self.check_input()?;
        self.open_checked(checked)
    }

    /// The flags and the fixture or hash checked, nothing fetched.
    fn check_input(&self) -> Result<Checked, CliError> {
        let hardfork = super::common::hardfork_arg(self.hardfork.as_deref())?;
        let patch = self.whatif.patch()?;
        let offline = self.fixture.as_ref().or(self.bundle.as_ref());
        if patch.is_some() && offline.is_some() {
            return Err(CliError::input(
                "--code-override replays a mined transaction from a node: it cannot be used \
                 with --fixture or --bundle",
            ));
        }
        let fixture = match offline {
            Some(path) => Some(Fixture::load(path).map_err(|e| CliError::input(e.to_string()))?),
            None => {
                parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
                None
            }
        };
        Ok(Checked {
            hardfork,
            patch,
            fixture,
        })
    }

    fn open_checked(&self, checked: Checked) -> Result<(Session, Check), CliError> {
        let Checked {
            hardfork,
            patch,
            fixture,
        } = checked;
        let offline = self.fixture.as_ref().or(self.bundle.as_ref());
        let mut abi = self.abi.clone();
        if let Some(path) = offline {
            let beside = std::path::Path::new(path).with_extension("build-info.json");
            if !self.names.no_project && beside.is_file() {
                abi.push(beside.display().to_string());
            }
        }
        let mut names = load_names_from(&abi, &self.names)?;
        let mut spec = TracerSpec::new(TracerKind::Call, None).expect("the default config");
        if let TracerSpec::Call(c) = &mut spec {
            // Names and the Solidity stack are shown: recorded as `tx` records them.
            record_source_steps(c, &names, &self.names, true);
        }
        let (target, decoder, title, check) = match (offline, fixture) {
            (Some(path), Some(fx)) => {
                let bad =
                    |e: chaintrace::replay::ReplayError| CliError::input(format!("{path}: {e}"));
                let snapshot = fixture_snapshot(&fx);
                let (traced, _) = trace_fixture_on(&fx, &spec, hardfork, &snapshot).map_err(bad)?;
                let mut decoder = names.decoder_for(&traced.result, &snapshot);
                add_looked_up(&names, &traced.result, &mut decoder);
                let tx = fixture_tx(&fx).map_err(bad)?;
                let target = Target {
                    env: fixture_env(&fx, hardfork),
                    tx,
                    snapshot,
                    pre: Default::default(),
                    index: None,
                };
                let receipt = fx.receipt.clone();
                (target, decoder, path.to_string(), (traced, receipt, None))
            }
            _ => {
                let hash =
                    parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
                let source = self.rpc.source()?;
                let cache = self.state.cache();
                let mut mined =
                    Mined::load(&source, cache.as_ref(), hash, self.state.mode(), hardfork)?;
                attach_lookups(
                    &mut names,
                    &self.names,
                    true,
                    mined.chain_id,
                    source.client.timeout(),
                );
                let traced = mined.trace(&source, cache.as_ref(), &spec)?;
                let overrides = match &patch {
                    Some(p) => {
                        p.announce();
                        let parent = mined.state_block().to_string();
                        Some(p.with_immutables(&|a| {
                            super::whatif::code_on_chain(&mined.snapshot, &source, &parent, a)
                        })?)
                    }
                    None => None,
                };
                let (pre, env) = mined.pre_state(&source, cache.as_ref(), overrides.as_ref())?;
                let mut decoder = names.decoder_for(&traced.result, &mined.snapshot);
                add_looked_up(&names, &traced.result, &mut decoder);
                if let Some(p) = &patch {
                    p.name(&mut decoder);
                }
                print_note(&mined);
                let state = mined.state_check();
                let receipt = Some(mined.receipt.clone());
                let target = Target {
                    snapshot: std::mem::take(&mut mined.snapshot),
                    pre,
                    env,
                    tx: mined.target.clone(),
                    index: Some(mined.index as u64),
                };
                let title = format!("Transaction {hash:?}");
                // A patched run is not the mined one: its receipt is not compared.
                let receipt = receipt.filter(|_| patch.is_none());
                (target, decoder, title, (traced, receipt, state))
            }
        };
        let mut session = Session::open(target, names, decoder, title)
            .map_err(|e| CliError::source(e.to_string()))?;
        // A what-if session is not the mined transaction: said on screen and to the editor.
        if let Some(p) = &patch {
            session.notes = p
                .described
                .iter()
                .map(|d| format!("what-if: {d}"))
                .collect();
        }
        Ok((session, check))
    }
}

/// The self-check's exit code after a session (the replay against the receipt, as `tx`
/// prints it): a divergence or a source failure, else 0 — a failed transaction is what was
/// debugged, not an error.
pub(super) fn self_check(session: &Session, check: Check) -> u8 {
    let (traced, receipt, state) = check;
    let code = finish(
        traced.hash,
        &session.outcome,
        receipt.as_ref(),
        false,
        state.as_ref(),
    );
    match code {
        exit::DIVERGED | exit::SOURCE => code,
        _ => exit::OK,
    }
}
