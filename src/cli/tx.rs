//! `chaintrace tx`: trace one mined transaction (from a node) or a fixture/bundle (offline).

use alloy_primitives::B256;
use chaintrace::chain::{preset, ForkSchedule};
use chaintrace::replay::remote::replay_block;
use chaintrace::replay::selfcheck::{compare, Divergence};
use chaintrace::replay::{trace_fixture, EvmEnv, TracedTx};
use chaintrace::source::fixture::Fixture;
use chaintrace::source::rpc::RpcSource;
use clap::Args;
use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use super::common::{exit, print_trace, report_rpc, CliError, RpcArgs, TraceArgs};

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
}

/// Parses a 32-byte hash given on the command line.
pub fn parse_hash(s: &str, what: &str) -> Result<B256, CliError> {
    let t = s.trim();
    if !(t.len() == 66 && t.starts_with("0x")) {
        return Err(CliError::input(format!(
            "malformed {what} {s:?}: expected 0x followed by 64 hex digits"
        )));
    }
    t.parse()
        .map_err(|_| CliError::input(format!("malformed {what} {s:?}: not hex")))
}

/// The fork schedule for a chain id, honouring `--hardfork`.
pub fn spec_for(chain_id: u64, number: u64, timestamp: u64, hardfork: Option<SpecId>) -> SpecId {
    hardfork.unwrap_or_else(|| {
        ForkSchedule::for_chain(chain_id, SpecId::OSAKA).spec_at(number, timestamp)
    })
}

/// Reports the self-check on stderr and turns the outcome into the documented exit code.
pub fn finish(t: &TracedTx, receipt: Option<&Value>, quiet: bool) -> u8 {
    let divergences: Vec<Divergence> = receipt.map(|r| compare(&t.outcome, r)).unwrap_or_default();
    if !divergences.is_empty() {
        eprintln!(
            "self-check FAILED for {}: the replay differs from the receipt",
            t.hash
        );
        for d in &divergences {
            eprintln!("  {d}");
        }
        return exit::DIVERGED;
    }
    if receipt.is_some() && !quiet {
        eprintln!(
            "self-check: replay matches the receipt (status {}, gasUsed {}, {} logs)",
            if t.outcome.success {
                "success"
            } else {
                "failed"
            },
            t.outcome.gas_used,
            t.outcome.logs.len()
        );
    }
    if t.outcome.success {
        exit::OK
    } else {
        exit::TX_FAILED
    }
}

impl TxArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let decoder = self.trace.decoder()?;
        let hardfork = self.trace.hardfork()?;
        if let Some(path) = &self.fixture {
            let fx = Fixture::load(path).map_err(|e| CliError::input(e.to_string()))?;
            let spec = self.trace.spec(fx.tracer_config.as_ref())?;
            let traced = trace_fixture(&fx, &spec, hardfork)
                .map_err(|e| CliError::input(format!("{path}: {e}")))?;
            let currency = preset(fx.schedule.chain_id)
                .map(|p| p.currency)
                .unwrap_or("ETH");
            print_trace(&traced, &self.trace, &decoder, currency)?;
            return Ok(finish(&traced, fx.receipt.as_ref(), false));
        }
        let hash = parse_hash(self.hash.as_deref().unwrap_or_default(), "transaction hash")?;
        let spec = self.trace.spec(None)?;
        let source = self.rpc.source()?;
        let (traced, receipt, chain_id, passes) = trace_remote(&source, hash, &spec, hardfork)?;
        let currency = preset(chain_id).map(|p| p.currency).unwrap_or("ETH");
        print_trace(&traced, &self.trace, &decoder, currency)?;
        report_rpc(&source, passes);
        Ok(finish(&traced, Some(&receipt), false))
    }
}

/// Fetches a mined transaction and its block, replays the block up to it, and traces it.
pub fn trace_remote(
    source: &RpcSource,
    hash: B256,
    spec: &chaintrace::trace::TracerSpec,
    hardfork: Option<SpecId>,
) -> Result<(TracedTx, Value, u64, usize), CliError> {
    let chain_id = source.chain_id()?;
    let (tx, receipt) = source.tx_and_receipt(hash)?;
    let block_hash = tx
        .get("blockHash")
        .and_then(Value::as_str)
        .filter(|_| !receipt.is_null())
        .ok_or_else(|| {
            CliError::source(format!("transaction {hash} is not mined yet (no receipt)"))
        })?;
    let block = source.block(block_hash)?;
    let index = block
        .txs
        .iter()
        .position(|t| t.hash == hash)
        .ok_or_else(|| {
            CliError::source(format!(
                "transaction {hash} is not in its block {block_hash}"
            ))
        })?;
    let spec_id = spec_for(chain_id, block.info.number, block.info.timestamp, hardfork);
    let env = EvmEnv::new(spec_id, chain_id, &block.info);
    let replay = replay_block(source, &block, &env, index, index, spec)?;
    let passes = replay.passes;
    let traced = replay
        .traces
        .into_iter()
        .next()
        .ok_or_else(|| CliError::source("replay produced no trace"))?;
    Ok((traced, receipt, chain_id, passes))
}
