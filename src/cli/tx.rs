//! `chaintrace tx`: trace one mined transaction (from a node) or a fixture/bundle (offline).

use std::io::Write;

use chaintrace::replay::mined::Mined;
use chaintrace::replay::{fixture_snapshot, trace_fixture, ReplayError};
use chaintrace::source::fixture::Fixture;
use clap::Args;
use serde_json::json;

use super::common::{finish, parse_hash, print_trace, CliError, RpcArgs, TraceArgs};
use super::names::{attach_explorer, decoder_for, load_names};
use super::state::{
    node_result_code, node_tracer_options, print_node_result, print_note, report, StateArgs,
};

/// Trace one transaction: by hash from a node, or offline from a fixture or replay bundle.
#[derive(Args, Debug)]
pub struct TxArgs {
    /// Transaction hash (0x + 64 hex digits).
    #[arg(required_unless_present = "fixture", conflicts_with = "fixture")]
    pub hash: Option<String>,
    /// Replay a geth tracetest fixture or a bundle from `chaintrace bundle capture`, offline.
    #[arg(long, value_name = "FILE")]
    pub fixture: Option<String>,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub state: StateArgs,
    /// Explorer link template for the transaction in human output, `{hash}` replaced (e.g.
    /// https://explorer.example/tx/{hash}); defaults to the chain preset's.
    #[arg(long, value_name = "TEMPLATE", env = "CHAINTRACE_EXPLORER")]
    pub explorer: Option<String>,
    /// Print the node's own debug_traceTransaction with the same tracer and config instead of
    /// replaying locally.
    #[arg(long)]
    pub remote: bool,
}

impl TxArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let mut names = load_names(&self.trace)?;
        let hardfork = self.trace.hardfork()?;
        if let Some(path) = &self.fixture {
            if self.remote {
                return Err(CliError::input(
                    "--remote asks the node for its own trace; a --fixture is replayed locally \
                     (drop one of them)",
                ));
            }
            let fx = Fixture::load(path).map_err(|e| CliError::input(e.to_string()))?;
            let spec = super::names::with_source_steps(
                self.trace.spec(fx.tracer_config.as_ref())?,
                &names,
                &self.trace,
            );
            let traced = trace_fixture(&fx, &spec, hardfork).map_err(|e| match e {
                // The trace could not be kept: the machine's fault, not the fixture's.
                ReplayError::Output(m) => CliError::source(m),
                e => CliError::input(format!("{path}: {e}")),
            })?;
            let currency = chaintrace::chain::currency(fx.schedule.chain_id);
            let state = fixture_snapshot(&fx);
            let decoder = decoder_for(&names, &self.trace, &traced, &state);
            print_trace(&traced, &self.trace, &decoder, currency)?;
            return Ok(finish(&traced, fx.receipt.as_ref(), false, None));
        }
        let hash = parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
        if self.remote {
            let source = self.rpc.source()?;
            let opts = node_tracer_options(&self.trace)?;
            let (v, currency) =
                super::state::node_trace(&source, "debug_traceTransaction", json!([hash, opts]))?;
            print_node_result(&v, &self.trace, &names.decoder(), currency)?;
            report(&source, None, None, 0);
            return Ok(node_result_code(&v));
        }
        let spec = super::names::with_source_steps(self.trace.spec(None)?, &names, &self.trace);
        let source = self.rpc.source()?;
        let cache = self.state.cache();
        let mut mined = Mined::load(&source, cache.as_ref(), hash, self.state.mode(), hardfork)?;
        let traced = mined.trace(&source, cache.as_ref(), &spec)?;
        let currency = chaintrace::chain::currency(mined.chain_id);
        attach_explorer(
            &mut names,
            &self.trace,
            mined.chain_id,
            source.client.timeout(),
        );
        let decoder = decoder_for(&names, &self.trace, &traced, &mined.snapshot);
        print_trace(&traced, &self.trace, &decoder, currency)?;
        if !self.trace.json {
            if let Some(url) = chaintrace::chain::explorer_tx_url(
                mined.chain_id,
                &format!("{hash:?}"),
                self.explorer.as_deref(),
            ) {
                writeln!(std::io::stdout().lock(), "explorer: {url}")?;
            }
        }
        print_note(&mined);
        report(&source, cache.as_ref(), Some(&mined), mined.passes);
        Ok(finish(
            &traced,
            Some(&mined.receipt),
            false,
            mined.state_check().as_ref(),
        ))
    }
}
