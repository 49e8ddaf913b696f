//! `chaintrace gas`: where a transaction's gas went — by opcode, frame and contract, the
//! transaction line (intrinsic, execution, refund, gas used), and a flamegraph.

use std::io::Write;

use chaintrace::render::gas::{gas_json, render_gas_tables, write_flamegraph};
use chaintrace::render::json::write_json;
use chaintrace::replay::{trace_fixture, TraceResult, TracedTx};
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::TracerSpec;
use clap::Args;
use serde_json::Value;

use super::common::{report_rpc, CliError, RpcArgs, TraceArgs};
use super::tx::{finish, parse_hash, trace_remote};

/// Gas tables and a flamegraph for one transaction (by hash, or --fixture FILE offline).
#[derive(Args, Debug)]
pub struct GasArgs {
    /// Transaction hash.
    #[arg(required_unless_present = "fixture", conflicts_with = "fixture")]
    pub hash: Option<String>,
    /// Replay a geth fixture or replay bundle offline.
    #[arg(long, value_name = "FILE")]
    pub fixture: Option<String>,
    /// Also write an SVG flamegraph of gas by call stack.
    #[arg(long, value_name = "FILE.svg")]
    pub flamegraph: Option<String>,
    /// In the flamegraph, split each frame's own gas by opcode.
    #[arg(long, requires = "flamegraph")]
    pub by_op: bool,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
}

impl GasArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let decoder = self.trace.decoder()?;
        let hardfork = self.trace.hardfork()?;
        let (traced, receipt): (TracedTx, Option<Value>) = match &self.fixture {
            Some(path) => {
                let fx = Fixture::load(path).map_err(|e| CliError::input(e.to_string()))?;
                let t = trace_fixture(&fx, &TracerSpec::Gas, hardfork)
                    .map_err(|e| CliError::input(format!("{path}: {e}")))?;
                (t, fx.receipt)
            }
            None => {
                let hash =
                    parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
                let source = self.rpc.source()?;
                let (t, receipt, _, passes) =
                    trace_remote(&source, hash, &TracerSpec::Gas, hardfork)?;
                report_rpc(&source, passes);
                (t, Some(receipt))
            }
        };
        let TraceResult::Gas(report) = &traced.result else {
            return Err(CliError::source("the gas profiler returned no report"));
        };
        if let Some(path) = &self.flamegraph {
            let file = std::fs::File::create(path)
                .map_err(|e| CliError::input(format!("cannot write {path}: {e}")))?;
            write_flamegraph(report, &decoder, self.by_op, std::io::BufWriter::new(file)).map_err(
                |e| CliError::source(format!("cannot write the flamegraph {path}: {e}")),
            )?;
            eprintln!("flamegraph: {path}");
        }
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        if self.trace.json {
            write_json(&mut out, &gas_json(report, &decoder))?;
            writeln!(out)?;
        } else {
            render_gas_tables(report, &decoder, &mut out)?;
        }
        out.flush()?;
        Ok(finish(&traced, receipt.as_ref(), false))
    }
}
