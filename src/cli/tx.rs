//! `chaintrace tx`: trace one mined transaction (from a node) or a fixture/bundle (offline).

use std::io::Write;

use chaintrace::replay::mined::Mined;
use chaintrace::replay::{
    fixture_env, fixture_snapshot, fixture_tx, trace_fixture_call_tree, trace_fixture_on,
    CallTraced, ReplayError, TraceResult,
};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::prestate::PrestateResult;
use chaintrace::trace::TracerSpec;
use clap::Args;
use serde_json::json;

use super::assets::{assets_call, assets_config, compute};
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
    #[command(flatten)]
    pub assets: super::assets::AssetArgs,
    /// Also write a self-contained HTML report (call tree, revert location, asset changes, state
    /// diff, gas tables, flamegraph, self-check) to FILE; it loads nothing when opened.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
}

impl TxArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let patch = self.whatif.patch()?;
        self.assets.check(&self.trace)?;
        if patch.is_some() && self.assets.assets {
            return Err(CliError::input(
                "--assets reads the transaction as mined: it cannot be used with --code-override",
            ));
        }
        if self.html.is_some() && (patch.is_some() || self.remote) {
            return Err(CliError::input(
                "--html reports a local replay of the transaction as mined: it cannot be used \
                 with --remote or --code-override",
            ));
        }
        if self.remote && self.assets.assets {
            return Err(CliError::input(
                "--assets is read from a local replay: it cannot be used with --remote",
            ));
        }
        if patch.is_some() && (self.fixture.is_some() || self.remote) {
            return Err(CliError::input(
                "--code-override replays a mined transaction from a node locally: it cannot be \
                 used with --fixture or --remote",
            ));
        }
        let hardfork = self.trace.hardfork()?;
        if let Some(path) = &self.fixture {
            let names = load_names(&with_fixture_sources(&self.trace, path))?;
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
            let state = fixture_snapshot(&fx);
            let fixture_err = |e: ReplayError| match e {
                // The trace could not be kept: the machine's fault, not the fixture's.
                e @ ReplayError::StructLog(_) => CliError::source(e.to_string()),
                e => CliError::input(format!("{path}: {e}")),
            };
            let env = fixture_env(&fx, hardfork);
            let tx = fixture_tx(&fx).map_err(fixture_err)?;
            let tree = |config: &chaintrace::trace::call::CallTracerConfig| {
                trace_fixture_call_tree(&fx, config, hardfork, &state).map_err(fixture_err)
            };
            let assets_of =
                |(t, post): &(CallTraced, _)| compute(t, &env, &tx, post, &state, None, &mut 0);
            let (traced, assets) = match (self.wants_assets(&spec), assets_call(&spec)) {
                // The user's own run is the callTracer with logs: the changes are read from it.
                (true, Some(config)) => {
                    let run = tree(config)?;
                    let assets = assets_of(&run)?;
                    (run.0.into_traced(), Some(assets))
                }
                (wants, _) => {
                    let (traced, _) =
                        trace_fixture_on(&fx, &spec, hardfork, &state).map_err(fixture_err)?;
                    let config = assets_config();
                    let assets = match wants {
                        true => Some(assets_of(&tree(&config)?)?),
                        false => None,
                    };
                    (traced, assets)
                }
            };
            let currency = chaintrace::chain::currency(fx.schedule.chain_id);
            let decoder = decoder_for(&names, &self.trace, &traced, &state);
            print_trace(
                &traced,
                &self.trace,
                &decoder,
                currency,
                self.shown_assets(assets.as_ref()),
                None,
            )?;
            if let Some(html) = &self.html {
                let (call, diff, gas) = super::report::specs(&names);
                let run = |spec| trace_fixture_on(&fx, spec, hardfork, &state).map_err(fixture_err);
                let call = tree(&call)?;
                let assets = assets_of(&call)?;
                let runs = super::report::Runs {
                    diff: run(&diff)?.0,
                    gas: run(&gas)?.0,
                    call: call.0,
                    assets,
                    // A fixture's transaction is not run under the access inspector.
                    state: None,
                };
                let ctx = super::report::Context {
                    title: format!("Transaction {:?}", tx.hash),
                    facts: super::report::tx_facts(fx.schedule.chain_id, &tx, &runs.call, currency),
                    chain_id: fx.schedule.chain_id,
                    receipt: fx.receipt.as_ref(),
                    no_receipt: "the fixture has no receipt",
                    state_check: None,
                };
                super::report::write(html, ctx, &runs, &names, &self.trace, &state)?;
            }
            return Ok(finish(
                traced.hash,
                &traced.outcome,
                fx.receipt.as_ref(),
                false,
                None,
            ));
        }
        let hash = parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
        if self.remote {
            let names = load_names(&self.trace)?;
            let source = self.rpc.source()?;
            let opts = node_tracer_options(&self.trace)?;
            let (v, currency) =
                super::state::node_trace(&source, "debug_traceTransaction", json!([hash, opts]))?;
            print_node_result(&v, &self.trace, &names.decoder(), currency)?;
            report(&source, None, None, 0);
            return Ok(node_result_code(&v));
        }
        let spec = self.trace.spec(None)?;
        let source = self.rpc.source()?;
        let cache = self.state.cache();
        // The names are read from local files while the node is asked for the transaction and
        // its state: the two overlap (naming's cost is mostly hidden behind the round trips).
        // A names error is still reported before the node's.
        let (names, mined) = std::thread::scope(|s| {
            // The main thread's stack: a build is read as deep as serde_json lets it.
            let names = std::thread::Builder::new()
                .stack_size(8 << 20)
                .spawn_scoped(s, || load_names(&self.trace));
            let mined = Mined::load(&source, cache.as_ref(), hash, self.state.mode(), hardfork);
            let names = match names {
                Ok(t) => t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread to be had: one after the other.
                Err(_) => load_names(&self.trace),
            };
            (names, mined)
        });
        let mut names = names?;
        let spec = super::names::with_source_steps(spec, &names, &self.trace);
        let mut mined = mined?;
        names.read_ahead(
            &mined.snapshot,
            !self.trace.json || self.trace.decode,
            super::state_changes::wanted(&self.trace, &spec, &names),
        );
        attach_explorer(
            &mut names,
            &self.trace,
            mined.chain_id,
            source.client.timeout(),
        );
        let mut meta_passes = 0;
        // Failures are located by a second replay, only when a frame failed.
        let plain = match patch {
            None => super::names::without_source_steps(&spec),
            Some(_) => None,
        };
        let run_spec = plain.as_ref().unwrap_or(&spec);
        let (mut traced, assets) = match run_spec {
            // geth's JSON of a struct log goes to stdout as the replay runs: written once.
            TracerSpec::StructLog(cfg)
                if self.trace.json && !self.trace.decode && patch.is_none() =>
            {
                let out = Box::new(std::io::stdout());
                let t = mined.trace_struct_logs(&source, cache.as_ref(), cfg, out, "stdout")?;
                (t, None)
            }
            _ if patch.is_none() && self.wants_assets(&spec) => {
                let (traced, assets) = mined_assets(
                    &mut mined,
                    &source,
                    cache.as_ref(),
                    run_spec,
                    &mut meta_passes,
                )?;
                (traced, Some(assets))
            }
            _ => (mined.trace(&source, cache.as_ref(), run_spec)?, None),
        };
        if plain.is_some() && super::names::needs_source_steps(&traced.result) {
            traced = mined.trace(&source, cache.as_ref(), &spec)?;
        }
        // Gas by source follows internal functions while it runs: when Sourcify has the maps
        // of contracts no local artifact covers, run again with them.
        if matches!(&spec, TracerSpec::Gas(c) if c.marks.is_some())
            && names.prefetch_sources(&traced.result, &mined.snapshot)
        {
            traced = mined.trace(&source, cache.as_ref(), &spec)?;
        }
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
        let decoder = decoder_for(&names, &self.trace, &traced, &mined.snapshot);
        let changes = match super::state_changes::wanted(&self.trace, &spec, &names) {
            true => Some(super::state_changes::of_mined(
                &mut mined,
                &source,
                cache.as_ref(),
                &names,
            )?),
            false => None,
        };
        // A prestateTracer diff for people: its slots named by variable.
        let diff_named = match (&traced.result, self.trace.json || !names.has_layouts()) {
            (TraceResult::Prestate(PrestateResult::Diff { pre, post }), false) => {
                let slots = super::state_view::prestate_diff_slots(pre, post);
                Some(super::state_changes::of_prestate_diff(
                    &mut mined,
                    &source,
                    cache.as_ref(),
                    &names,
                    &slots,
                )?)
            }
            _ => None,
        };
        print_trace(
            &traced,
            &self.trace,
            &decoder,
            currency,
            self.shown_assets(assets.as_ref()),
            diff_named.as_ref().or(changes.as_ref()),
        )?;
        if !self.trace.json {
            if let Some(url) = chaintrace::chain::explorer_tx_url(
                mined.chain_id,
                &format!("{hash:?}"),
                self.explorer.as_deref(),
            ) {
                writeln!(std::io::stdout().lock(), "explorer: {url}")?;
            }
        }
        if let Some(html) = &self.html {
            let (call, diff, gas) = super::report::specs(&names);
            let (call_t, assets) =
                mined_tree_assets(&mut mined, &source, cache.as_ref(), &call, &mut meta_passes)?;
            // The state changes by variable: those shown already, or one more local run.
            let state = match (changes, names.has_layouts()) {
                (Some(c), _) => Some(c),
                (None, true) => Some(super::state_changes::of_mined(
                    &mut mined,
                    &source,
                    cache.as_ref(),
                    &names,
                )?),
                (None, false) => None,
            };
            let runs = super::report::Runs {
                diff: mined.trace(&source, cache.as_ref(), &diff)?,
                gas: mined.trace(&source, cache.as_ref(), &gas)?,
                call: call_t,
                assets,
                state,
            };
            let mut facts =
                super::report::tx_facts(mined.chain_id, &mined.target, &runs.call, currency);
            facts.insert(
                2,
                (
                    "block".to_string(),
                    format!("{} (transaction index {})", mined.info.number, mined.index),
                ),
            );
            let ctx = super::report::Context {
                title: format!("Transaction {hash:?}"),
                facts,
                chain_id: mined.chain_id,
                receipt: Some(&mined.receipt),
                no_receipt: "",
                state_check: mined.state_check(),
            };
            super::report::write(html, ctx, &runs, &names, &self.trace, &mined.snapshot)?;
        }
        print_note(&mined);
        report(
            &source,
            cache.as_ref(),
            Some(&mined),
            mined.passes + meta_passes,
        );
        // The process ends with this command: a project's names (tens of thousands of small
        // allocations, nothing to flush) are left to the exit rather than freed one by one.
        std::mem::forget(names);
        Ok(finish(
            traced.hash,
            &traced.outcome,
            Some(&mined.receipt),
            false,
            mined.state_check().as_ref(),
        ))
    }

    /// Whether asset changes are computed: asked for, shown by default with the call tree, or
    /// carried by `--json --decode`.
    fn wants_assets(&self, spec: &chaintrace::trace::TracerSpec) -> bool {
        let tree = matches!(spec, chaintrace::trace::TracerSpec::Call(_));
        self.assets.assets || (tree && (!self.trace.json || self.trace.decode))
    }

    /// The asset changes to print: always with `--assets` or `--json --decode`; with the tree
    /// by default only when something moved besides the fee.
    fn shown_assets<'a>(
        &self,
        assets: Option<&'a chaintrace::replay::assets::AssetChanges>,
    ) -> Option<&'a chaintrace::replay::assets::AssetChanges> {
        assets.filter(|a| self.assets.assets || self.trace.json || a.moved())
    }
}

/// Traces `mined` under `spec` and computes its asset changes (from the same run when `spec`
/// is the callTracer with logs, else from one more local run); `passes` counts the metadata
/// round trips.
pub fn mined_assets(
    mined: &mut Mined,
    source: &chaintrace::source::rpc::RpcSource,
    cache: Option<&chaintrace::source::cache::Cache>,
    spec: &chaintrace::trace::TracerSpec,
    passes: &mut usize,
) -> Result<
    (
        chaintrace::replay::TracedTx,
        chaintrace::replay::assets::AssetChanges,
    ),
    CliError,
> {
    if let Some(config) = assets_call(spec) {
        let (tree, assets) = mined_tree_assets(mined, source, cache, config, passes)?;
        return Ok((tree.into_traced(), assets));
    }
    let traced = mined.trace(source, cache, spec)?;
    let (_, assets) = mined_tree_assets(mined, source, cache, &assets_config(), passes)?;
    Ok((traced, assets))
}

/// `mined`'s call tree under the callTracer `config` (with logs) and the asset changes read
/// from it; `passes` counts the metadata round trips.
pub fn mined_tree_assets(
    mined: &mut Mined,
    source: &chaintrace::source::rpc::RpcSource,
    cache: Option<&chaintrace::source::cache::Cache>,
    config: &chaintrace::trace::call::CallTracerConfig,
    passes: &mut usize,
) -> Result<(CallTraced, chaintrace::replay::assets::AssetChanges), CliError> {
    let (tree, post) = mined.trace_call_tree_keeping_post(source, cache, config)?;
    let at = mined.state_block().to_string();
    let assets = compute(
        &tree,
        &mined.env,
        &mined.target,
        &post,
        &mined.snapshot,
        Some((source, &at)),
        passes,
    )?;
    Ok((tree, assets))
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
            note!(
                "note: the patched run answers calls into the chain's own precompiles with the \
                 node's frames of the mined transaction; where the new code calls them \
                 differently, those answers do not fit it"
            );
        }
        let original_code = finish(
            original.hash,
            &original.outcome,
            Some(&mined.receipt),
            false,
            mined.state_check().as_ref(),
        );
        // The artifacts' immutables from the code on chain: the original run's state holds it
        // where the transaction touched the account, else it is read at the parent block.
        let parent = mined.state_block().to_string();
        let overrides = patch.with_immutables(&|a| {
            super::whatif::code_on_chain(&mined.snapshot, ctx.source, &parent, a)
        })?;
        let patched = mined.trace_overridden(ctx.source, ctx.cache, ctx.spec, &overrides)?;
        let currency = chaintrace::chain::currency(mined.chain_id);
        // The patched run is named by the code it ran, not the chain's.
        let view = super::whatif::patched_view(&mined.snapshot, &overrides);
        super::names::prefetch_signatures(names, &self.trace, &[&original, &patched], &view);
        let mut decoder = decoder_for(names, &self.trace, &patched, &view);
        patch.name(&mut decoder);
        print_trace(&patched, &self.trace, &decoder, currency, None, None)?;
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
        // What ends differently in storage, by variable: the mined run and the patched one,
        // each once more under the access inspector.
        if super::state_changes::wanted(&self.trace, ctx.spec, names) {
            let access = super::state_changes::access(names);
            let (a, _) = mined.run(ctx.source, ctx.cache, &access)?;
            let (b, _) = mined.run_overridden(ctx.source, ctx.cache, &overrides, &access)?;
            // Named by the layouts of the code on chain: the storage is the deployed contract's.
            let d = super::state_changes::diff(names, &mined.snapshot, &a, &b);
            for n in &d.notes {
                note!("note: {n}");
            }
            super::state_view::print_diff(&[format!("{:?}", ctx.hash)], &[d], self.trace.json)?;
        }
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
