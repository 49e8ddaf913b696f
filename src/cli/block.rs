//! `chaintrace block`: trace every transaction of a block.

use std::io::Write;

use chaintrace::names::state::StateChanges;
use chaintrace::render::decoded::write_decoded;
use chaintrace::render::json::write_trace;
use chaintrace::replay::remote::{replay_block, replay_txs_from};
use chaintrace::replay::EvmEnv;
use chaintrace::replay::TraceResult;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::prestate::PrestateResult;
use clap::Args;

use super::common::finish;
use super::common::{exit, print_trace, report_rpc, CliError, RpcArgs, TraceArgs};

/// Trace every transaction of a block (geth's debug_traceBlockByNumber / ByHash).
#[derive(Args, Debug)]
pub struct BlockArgs {
    /// Block number (decimal or 0x hex), `latest`, block hash, or an inclusive range `A..B`
    /// (streams NDJSON: one {"block","txHash","result"} line per transaction).
    pub block: String,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Print the node's own debug_traceBlockByNumber/ByHash with the same tracer and config.
    #[arg(long)]
    pub remote: bool,
    #[command(flatten)]
    pub out: super::columnar::OutArgs,
    #[command(flatten)]
    pub whatif: super::whatif::WhatIfArgs,
    #[command(flatten)]
    pub assets: super::assets::AssetArgs,
}

impl BlockArgs {
    /// `block A..B --out DIR`: the partitions left to write, replayed into a [`PartitionSink`].
    fn run_out(
        &self,
        root: &std::path::Path,
        source: &chaintrace::source::rpc::RpcSource,
        chain_id: u64,
        range: (u64, u64),
        spec: &chaintrace::trace::TracerSpec,
        hardfork: Option<revm::primitives::hardfork::SpecId>,
    ) -> Result<u8, CliError> {
        use super::columnar::{prepare, tracer_id, PartitionSink};
        // `--abi` with storage layouts: the `storage_changes` table.
        let names = match self.trace.abi.is_empty() {
            true => None,
            false => Some(super::names::load_names(&self.trace)?),
        };
        let names = names.filter(|n| {
            let has = n.has_layouts();
            if !has {
                note!(
                    "note: no artifact of --abi has a storageLayout, metadata to compile one \
                     from, or an AST to compute one from: no storage_changes table (build with \
                     storageLayout in outputSelection, e.g. forge's \
                     extra_output = [\"storageLayout\"])"
                );
            }
            has
        });
        let tracer = tracer_id(
            &self.trace.tracer,
            self.trace.tracer_config.as_deref(),
            self.trace.wants_gas(),
            self.assets.assets,
            names.is_some(),
        );
        let (parts, skipped) = prepare(&self.out, root, chain_id, &tracer, range)?;
        let segments: Vec<(u64, u64)> = parts.iter().map(|p| (p.from, p.to)).collect();
        let count = parts.len();
        let mut sink = PartitionSink::new(
            root,
            chain_id,
            self.out.format,
            spec,
            parts,
            self.assets.assets,
            names.is_some(),
        );
        let extras = super::range::Extras {
            assets: self.assets.assets,
            storage: names.as_ref(),
        };
        let (code, passes) = super::range::run(
            source,
            chain_id,
            &segments,
            spec,
            hardfork,
            super::output::quiet(),
            extras,
            &mut sink,
        )?;
        report_rpc(source, passes);
        note!(
            "wrote {} of {count} partitions ({} rows) to {}; {skipped} already finished",
            sink.written,
            sink.rows,
            root.display()
        );
        Ok(code)
    }
}

/// Normalises a block reference to a JSON-RPC block tag or hash.
pub fn parse_block_ref(s: &str) -> Result<String, CliError> {
    let t = s.trim();
    let bad = || {
        CliError::input(format!(
            "malformed block {s:?}: expected a number, 0x hex number, latest or a block hash"
        ))
    };
    match t {
        "latest" | "earliest" | "pending" | "safe" | "finalized" => Ok(t.to_string()),
        _ if t.len() == 66 && t.starts_with("0x") => {
            t.parse::<alloy_primitives::B256>().map_err(|_| bad())?;
            Ok(t.to_string())
        }
        _ if t.starts_with("0x") => u64::from_str_radix(&t[2..], 16)
            .map(|n| format!("{n:#x}"))
            .map_err(|_| bad()),
        _ => t
            .parse::<u64>()
            .map(|n| format!("{n:#x}"))
            .map_err(|_| bad()),
    }
}

impl BlockArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let patch = self.whatif.patch()?;
        if patch.is_some()
            && (super::range::parse_range(&self.block).is_some()
                || self.remote
                || self.out.out.is_some())
        {
            return Err(CliError::input(
                "--code-override replays one block locally: it cannot be used with a range \
                 A..B, --out or --remote",
            ));
        }
        if self.assets.assets {
            self.check_assets(patch.is_some())?;
        }
        if let Some(range) = super::range::parse_range(&self.block) {
            let range = range?;
            if self.trace.by_line || self.trace.by_function {
                return Err(CliError::input(
                    "--by-line and --by-function print tables per transaction: use them with \
                     tx, call, gas or a single block, not a range A..B",
                ));
            }
            if let Some(shard) = &self.out.shard {
                super::columnar::parse_shard(shard)?;
            }
            // Partitions are for tables: the callTracer records logs (the `logs` table) unless
            // --tracer-config says otherwise, with or without --json.
            let spec = match self.out.out {
                Some(_) => {
                    let mut t = self.trace.clone();
                    t.json = false;
                    t.spec(None)?
                }
                None => self.trace.spec(None)?,
            };
            let hardfork = self.trace.hardfork()?;
            let source = self.rpc.source()?;
            let chain_id = source.chain_id()?;
            source.check_replayable(chain_id)?;
            let Some(root) = &self.out.out else {
                let (code, passes) = super::range::run(
                    &source,
                    chain_id,
                    &[range],
                    &spec,
                    hardfork,
                    super::output::quiet(),
                    super::range::Extras::default(),
                    &mut super::range::Stdout,
                )?;
                report_rpc(&source, passes);
                return Ok(code);
            };
            return self.run_out(root, &source, chain_id, range, &spec, hardfork);
        }
        if self.out.out.is_some() {
            return Err(CliError::input(
                "--out writes partitions of a block range: give the block as A..B",
            ));
        }
        if self.trace.flamegraph.is_some() {
            return Err(CliError::input(
                "--flamegraph draws one transaction: use it with tx, call or gas",
            ));
        }
        let block_ref = parse_block_ref(&self.block)?;
        if self.remote {
            return super::state::run_remote_block(&self.rpc, &self.trace, &block_ref);
        }
        let hardfork = self.trace.hardfork()?;
        let mut names = super::names::load_names(&self.trace)?;
        let spec = super::names::with_source_steps(self.trace.spec(None)?, &names, &self.trace);
        let source = self.rpc.source()?;
        let chain_id = source.chain_id()?;
        source.check_replayable(chain_id)?;
        let mut block = source.block(&block_ref)?;
        let spec_id = source.prepare_block(chain_id, &mut block.info, hardfork)?;
        let env = EvmEnv::new(spec_id, chain_id, &block.info);
        let mut replay = if block.txs.is_empty() {
            None
        } else {
            Some(replay_block(
                &source,
                &block,
                &env,
                0,
                block.txs.len() - 1,
                &spec,
            )?)
        };
        // --code-override: the block again with the code replaced before its first transaction,
        // starting from the state the original replay fetched (the patched replay takes that
        // snapshot over and fills it further; every decoder below reads it). Its traces are the
        // ones printed.
        let (mut patched, overrides) = match (&patch, replay.as_mut()) {
            (Some(p), Some(r)) => {
                p.announce();
                let parent = source.parent_at(&block.info);
                // The artifacts' immutables from the code on chain before the block.
                let overrides = p.with_immutables(&|a| {
                    super::whatif::code_on_chain(&r.snapshot, &source, &parent, a)
                })?;
                let run = replay_txs_from(
                    &source,
                    &block.txs,
                    &env,
                    0,
                    &parent,
                    &spec,
                    &|db| overrides.apply(db),
                    // The original's snapshot moves in and comes back filled further.
                    std::mem::take(&mut r.snapshot),
                )?;
                (Some(run), Some(overrides))
            }
            _ => (None, None),
        };
        // What each transaction changed, by variable (one more local run of the block under
        // the access inspector, on the state already fetched); with --code-override, what ends
        // differently in the patched run than in the mined one.
        let mut state_passes = 0;
        let mut states: Vec<StateChanges> = Vec::new();
        let mut diffs: Vec<StateChanges> = Vec::new();
        if super::state_changes::wanted(&self.trace, &spec, &names) {
            use super::state_changes::{diff, named, of_block};
            let parent = source.parent_at(&block.info);
            match (replay.as_mut(), patched.as_mut(), overrides.as_ref()) {
                (Some(_), Some(p), Some(o)) => {
                    // Named by the layouts of the code on chain: the storage is the deployed
                    // contract's.
                    let taken = std::mem::take(&mut p.snapshot);
                    let (mined, snap, n) =
                        of_block(&names, &source, &block.txs, &env, &parent, taken, &|_| {})?;
                    let (ran, snap, m) =
                        of_block(&names, &source, &block.txs, &env, &parent, snap, &|db| {
                            o.apply(db)
                        })?;
                    p.snapshot = snap;
                    state_passes += n + m;
                    let mut notes: Vec<String> = Vec::new();
                    for (a, b) in mined.iter().zip(&ran) {
                        let d = diff(&names, &p.snapshot, a, b);
                        for n in &d.notes {
                            if !notes.contains(n) {
                                notes.push(n.clone());
                            }
                        }
                        diffs.push(d);
                    }
                    for n in notes {
                        note!("note: {n}");
                    }
                }
                (Some(r), None, _) => {
                    let taken = std::mem::take(&mut r.snapshot);
                    let (runs, snap, n) =
                        of_block(&names, &source, &block.txs, &env, &parent, taken, &|_| {})?;
                    r.snapshot = snap;
                    state_passes += n;
                    states = named(&names, &r.snapshot, &runs);
                }
                _ => {}
            }
        }
        // A prestateTracer diff for people: each transaction's slots named by variable, keys
        // from its own access run, as `tx` names them.
        let mut diffs_named: Vec<StateChanges> = Vec::new();
        if let (Some(r), None, false, true) = (
            replay.as_mut(),
            patched.as_ref(),
            self.trace.json,
            names.has_layouts(),
        ) {
            let slots: Option<Vec<_>> = r
                .traces
                .iter()
                .map(|t| match &t.result {
                    TraceResult::Prestate(PrestateResult::Diff { pre, post }) => {
                        Some(super::state_view::prestate_diff_slots(pre, post))
                    }
                    _ => None,
                })
                .collect();
            if let Some(slots) = slots.filter(|s| !s.is_empty()) {
                let parent = source.parent_at(&block.info);
                let taken = std::mem::take(&mut r.snapshot);
                let (runs, snap, n) = super::state_changes::of_block(
                    &names,
                    &source,
                    &block.txs,
                    &env,
                    &parent,
                    taken,
                    &|_| {},
                )?;
                r.snapshot = snap;
                state_passes += n;
                diffs_named =
                    super::state_changes::block_diff_slots(&names, &r.snapshot, &runs, &slots);
            }
        }
        let empty = StateSnapshot::default();
        let (traces, mut passes, mut snapshot) = match &replay {
            None => (&[][..], 0, &empty),
            Some(r) => (&r.traces[..], r.passes, &r.snapshot),
        };
        passes += state_passes;
        let hashes: Vec<_> = traces.iter().map(|t| t.hash).collect();
        let receipts = source.receipts(&hashes)?;
        if let Some(p) = &patched {
            passes += p.passes;
            snapshot = &p.snapshot;
        }
        let shown: &[chaintrace::replay::TracedTx] =
            patched.as_ref().map_or(traces, |p| &p.traces[..]);
        // The patched runs are named by the code they ran, not the chain's.
        let patched_view = overrides
            .as_ref()
            .map(|o| super::whatif::patched_view(snapshot, o));
        let original_snapshot = snapshot;
        let snapshot = patched_view.as_ref().unwrap_or(snapshot);
        let assets = match (&replay, self.assets.assets) {
            (Some(r), true) => {
                let parent = source.parent_at(&block.info);
                super::assets::block_assets(
                    r,
                    &env,
                    &block.txs,
                    Some((&source, &parent)),
                    &mut passes,
                )?
            }
            _ => Vec::new(),
        };
        let currency = chaintrace::chain::currency(chain_id);
        if self.trace.json {
            // geth's debug_traceBlock shape: [{"txHash": ..., "result": ...}], written item by
            // item so struct logs stream from their spools.
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            out.write_all(b"[")?;
            // With --decode, a call tree's item is `write_decoded`'s object with `txHash`
            // first: geth's result, its names, and the transaction's `stateChanges`.
            for (i, t) in shown.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                if self.trace.decode && matches!(t.result, TraceResult::Call(_)) {
                    let decoder = super::names::decoder_for(&names, &self.trace, t, snapshot);
                    let state = states
                        .get(i)
                        .filter(|s| s.shown())
                        .map(super::state_view::to_json);
                    let mut buf = Vec::new();
                    write_decoded(&mut buf, &t.result, &decoder, None, state.as_ref())?;
                    write!(out, "{{\"txHash\":\"{:?}\",", t.hash)?;
                    out.write_all(buf.get(1..).unwrap_or_default())?;
                    continue;
                }
                write!(out, "{{\"txHash\":\"{:?}\",\"result\":", t.hash)?;
                write_trace(&mut out, &t.result)?;
                out.write_all(b"}")?;
            }
            out.write_all(b"]\n")?;
            out.flush()?;
        } else {
            writeln!(
                std::io::stdout().lock(),
                "block {} ({} transactions)",
                block.info.number,
                shown.len()
            )?;
            super::names::attach_explorer(
                &mut names,
                &self.trace,
                chain_id,
                source.client.timeout(),
            );
            // One signature lookup for the whole block, before any transaction is named.
            let mut all: Vec<&chaintrace::replay::TracedTx> = shown.iter().collect();
            if patched.is_some() {
                all.extend(traces.iter()); // the what-if table names the originals' reverts
            }
            super::names::prefetch_signatures(&names, &self.trace, &all, snapshot);
            for (i, t) in shown.iter().enumerate() {
                writeln!(std::io::stdout().lock(), "\n#{i} {:?}", t.hash)?;
                let mut decoder = super::names::decoder_for(&names, &self.trace, t, snapshot);
                if let Some(p) = &patch {
                    p.name(&mut decoder);
                }
                print_trace(
                    t,
                    &self.trace,
                    &decoder,
                    currency,
                    assets.get(i),
                    diffs_named.get(i).or(states.get(i)),
                )?;
            }
        }
        if let Some(n) = replay.as_ref().and_then(|r| r.splice_note(&env)) {
            note!("note: {n}");
        }
        report_rpc(&source, passes);
        let mut code = exit::OK;
        for (k, (t, receipt)) in traces.iter().zip(receipts).enumerate() {
            let state = replay.as_ref().and_then(|r| r.state_check(k));
            if finish(t.hash, &t.outcome, Some(&receipt), true, state.as_ref()) == exit::DIVERGED {
                code = exit::DIVERGED;
            }
        }
        if code == exit::OK {
            note!(
                "self-check: {} transactions match their receipts",
                traces.len()
            );
        }
        if let Some(p) = &patched {
            self.compare(
                &names,
                traces,
                &p.traces,
                (original_snapshot, snapshot),
                &block.txs,
                patch.as_ref(),
            )?;
            if !diffs.is_empty() {
                let ids: Vec<String> = traces
                    .iter()
                    .enumerate()
                    .map(|(i, t)| format!("#{i} {:?}", t.hash))
                    .collect();
                super::state_view::print_diff(&ids, &diffs, self.trace.json)?;
            }
        }
        Ok(code)
    }
}

impl BlockArgs {
    /// `--assets` reads the callTracer's tree with logs, as mined.
    fn check_assets(&self, patched: bool) -> Result<(), CliError> {
        let range = super::range::parse_range(&self.block).is_some();
        if patched || self.remote {
            return Err(CliError::input(
                "--assets reads the block as mined, replayed locally: it cannot be used with \
                 --code-override or --remote",
            ));
        }
        if range && self.out.out.is_none() {
            return Err(CliError::input(
                "--assets with a range A..B writes the asset_changes table: add --out DIR",
            ));
        }
        if !range && self.trace.json {
            return Err(CliError::input(
                "block --assets adds to the human output; --json prints geth's result only",
            ));
        }
        let mut t = self.trace.clone();
        t.json = false;
        if super::assets::assets_call(&t.spec(None)?).is_none() {
            return Err(CliError::input(
                "--assets reads the call tree with its logs: use the callTracer (the default) \
                 without onlyTopCall or withLog false",
            ));
        }
        Ok(())
    }

    /// The what-if table of a block: each transaction's original and patched outcome.
    fn compare(
        &self,
        names: &chaintrace::names::Names,
        original: &[chaintrace::replay::TracedTx],
        patched: &[chaintrace::replay::TracedTx],
        (snapshot, patched_snapshot): (&StateSnapshot, &StateSnapshot),
        txs: &[chaintrace::replay::ReplayTx],
        patch: Option<&super::whatif::Patch>,
    ) -> Result<(), CliError> {
        use super::whatif::{outcome, print_table, table};
        let offline = self.trace.json && !self.trace.decode;
        let mut rows = Vec::new();
        for (i, (o, p)) in original.iter().zip(patched).enumerate() {
            let tx = Some(format!("#{i} {}…", &format!("{:?}", o.hash)[..10]));
            let to = txs.get(i).and_then(|t| t.env.kind.to().copied());
            let (od, mut pd) = if offline {
                (names.decoder(), names.decoder())
            } else {
                let mut od = names.decoder_for(&o.result, snapshot);
                super::names::add_looked_up(names, &o.result, &mut od);
                let mut pd = names.decoder_for(&p.result, patched_snapshot);
                super::names::add_looked_up(names, &p.result, &mut pd);
                (od, pd)
            };
            if let Some(patch) = patch {
                patch.name(&mut pd);
            }
            rows.push((tx.clone(), "original", outcome(o, &od, to)));
            rows.push((tx, "patched", outcome(p, &pd, to)));
        }
        print_table(&table(&rows), self.trace.json)
    }
}
