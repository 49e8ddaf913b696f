//! `chaintrace tx`: trace one mined transaction (from a node) or a fixture/bundle (offline).

use std::io::Write;

use chaintrace::replay::mined::Mined;
use chaintrace::replay::{fixture_snapshot, trace_fixture, ReplayError};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::TracerSpec;
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
    #[command(flatten)]
    pub whatif: super::whatif::WhatIfArgs,
}

impl TxArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let patch = self.whatif.patch()?;
        if patch.is_some() && (self.fixture.is_some() || self.remote) {
            return Err(CliError::input(
                "--code-override replays a mined transaction from a node locally: it cannot be \
                 used with --fixture or --remote",
            ));
        }
        let mut names = match &self.fixture {
            Some(f) => load_names(&with_fixture_sources(&self.trace, f))?,
            None => load_names(&self.trace)?,
        };
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
                e @ ReplayError::StructLog(_) => CliError::source(e.to_string()),
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
        let traced = match &spec {
            // geth's JSON of a struct log goes to stdout as the replay runs: written once.
            TracerSpec::StructLog(cfg)
                if self.trace.json && !self.trace.decode && patch.is_none() =>
            {
                let out = Box::new(std::io::stdout());
                mined.trace_struct_logs(&source, cache.as_ref(), cfg, out, "stdout")?
            }
            _ => mined.trace(&source, cache.as_ref(), &spec)?,
        };
        if let Some(patch) = &patch {
            let ctx = Ctx {
                source: &source,
                cache: cache.as_ref(),
                spec: &spec,
                hash,
            };
            return self.run_patched(patch, &mut mined, &ctx, traced, &mut names);
        }
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

/// A fixture's contracts travel beside it as `NAME.build-info.json` (solc's standard-JSON input
/// and output: sources, ABIs, source maps); they are read as if given with `--abi`, unless
/// `--no-project` says to look nowhere but the flags.
fn with_fixture_sources(args: &TraceArgs, fixture: &str) -> TraceArgs {
    let beside = std::path::Path::new(fixture).with_extension("build-info.json");
    let mut args = args.clone();
    if !args.names.no_project && beside.is_file() {
        args.abi.push(beside.display().to_string());
    }
    args
}

/// What a what-if replay of one transaction needs besides the transaction.
struct Ctx<'a> {
    source: &'a chaintrace::source::rpc::RpcSource,
    cache: Option<&'a chaintrace::source::cache::Cache>,
    spec: &'a chaintrace::trace::TracerSpec,
    hash: alloy_primitives::B256,
}

impl TxArgs {
    /// `--code-override`: the original run is checked against its receipt (its trace is not
    /// printed); the patched run is traced and printed, and the two outcomes compared.
    fn run_patched(
        &self,
        patch: &super::whatif::Patch,
        mined: &mut Mined,
        ctx: &Ctx<'_>,
        original: chaintrace::replay::TracedTx,
        names: &mut chaintrace::names::Names,
    ) -> Result<u8, CliError> {
        use super::whatif::{exit_code, outcome, print_table, table};
        patch.announce();
        if mined.env.splice.is_some() {
            eprintln!(
                "note: the patched run answers calls into the chain's own precompiles with the \
                 node's frames of the mined transaction; where the new code calls them \
                 differently, those answers do not fit it"
            );
        }
        let original_code = finish(
            &original,
            Some(&mined.receipt),
            false,
            mined.state_check().as_ref(),
        );
        let patched = mined.trace_overridden(ctx.source, ctx.cache, ctx.spec, &patch.overrides)?;
        let currency = chaintrace::chain::currency(mined.chain_id);
        attach_explorer(
            names,
            &self.trace,
            mined.chain_id,
            ctx.source.client.timeout(),
        );
        super::names::prefetch_signatures(
            names,
            &self.trace,
            &[&original, &patched],
            &mined.snapshot,
        );
        let mut decoder = decoder_for(names, &self.trace, &patched, &mined.snapshot);
        patch.name(&mut decoder);
        print_trace(&patched, &self.trace, &decoder, currency)?;
        // The original's reason with its own contracts' names (the code that ran then).
        let original_decoder = if self.trace.json && !self.trace.decode {
            names.decoder()
        } else {
            let mut d = names.decoder_for(&original.result, &mined.snapshot);
            super::names::add_looked_up(names, &original.result, &mut d);
            d
        };
        let to = mined.target.env.kind.to().copied();
        let rows = [
            (None, "original", outcome(&original, &original_decoder, to)),
            (None, "patched", outcome(&patched, &decoder, to)),
        ];
        print_table(&table(&rows), self.trace.json)?;
        if !self.trace.json {
            if let Some(url) = chaintrace::chain::explorer_tx_url(
                mined.chain_id,
                &format!("{:?}", ctx.hash),
                self.explorer.as_deref(),
            ) {
                writeln!(std::io::stdout().lock(), "explorer: {url}")?;
            }
        }
        print_note(mined);
        report(ctx.source, ctx.cache, Some(mined), mined.passes);
        Ok(exit_code(original_code, patched.outcome.success))
    }
}
