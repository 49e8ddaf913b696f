//! `chaintrace block`: trace every transaction of a block.

use std::io::Write;

use chaintrace::render::json::write_trace;
use chaintrace::replay::remote::replay_block;
use chaintrace::replay::EvmEnv;
use chaintrace::source::StateSnapshot;
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
    /// No progress bar and no self-check summary on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub out: super::columnar::OutArgs,
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
        let tracer = tracer_id(
            &self.trace.tracer,
            self.trace.tracer_config.as_deref(),
            self.trace.gas_report,
        );
        let (parts, skipped) = prepare(&self.out, root, chain_id, &tracer, range)?;
        let segments: Vec<(u64, u64)> = parts.iter().map(|p| (p.from, p.to)).collect();
        let count = parts.len();
        let mut sink = PartitionSink::new(root, chain_id, self.out.format, spec, parts);
        let (code, passes) = super::range::run(
            source, chain_id, &segments, spec, hardfork, self.quiet, &mut sink,
        )?;
        report_rpc(source, passes);
        if !self.quiet {
            eprintln!(
                "wrote {} of {count} partitions ({} rows) to {}; {skipped} already finished",
                sink.written,
                sink.rows,
                root.display()
            );
        }
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
        if let Some(range) = super::range::parse_range(&self.block) {
            let range = range?;
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
            let Some(root) = &self.out.out else {
                let (code, passes) = super::range::run(
                    &source,
                    chain_id,
                    &[range],
                    &spec,
                    hardfork,
                    self.quiet,
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
        let mut block = source.block(&block_ref)?;
        let spec_id = source.prepare_block(chain_id, &mut block.info, hardfork)?;
        let env = EvmEnv::new(spec_id, chain_id, &block.info);
        let replay = if block.txs.is_empty() {
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
        let empty = StateSnapshot::default();
        let (traces, passes, snapshot) = match &replay {
            None => (&[][..], 0, &empty),
            Some(r) => (&r.traces[..], r.passes, &r.snapshot),
        };
        let hashes: Vec<_> = traces.iter().map(|t| t.hash).collect();
        let receipts = source.receipts(&hashes)?;
        let currency = chaintrace::chain::currency(chain_id);
        if self.trace.json {
            // geth's debug_traceBlock shape: [{"txHash": ..., "result": ...}], written item by
            // item so struct logs stream from their spools.
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            out.write_all(b"[")?;
            for (i, t) in traces.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
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
                traces.len()
            )?;
            super::names::attach_explorer(
                &mut names,
                &self.trace,
                chain_id,
                source.client.timeout(),
            );
            for (i, t) in traces.iter().enumerate() {
                writeln!(std::io::stdout().lock(), "\n#{i} {:?}", t.hash)?;
                let decoder = super::names::decoder_for(&names, &self.trace, t, snapshot);
                print_trace(t, &self.trace, &decoder, currency)?;
            }
        }
        if let Some(n) = replay.as_ref().and_then(|r| r.splice_note(&env)) {
            eprintln!("note: {n}");
        }
        report_rpc(&source, passes);
        let mut code = exit::OK;
        for (k, (t, receipt)) in traces.iter().zip(receipts).enumerate() {
            let state = replay.as_ref().and_then(|r| r.state_check(k));
            if finish(t, Some(&receipt), true, state.as_ref()) == exit::DIVERGED {
                code = exit::DIVERGED;
            }
        }
        if code == exit::OK {
            eprintln!(
                "self-check: {} transactions match their receipts",
                traces.len()
            );
        }
        Ok(code)
    }
}
