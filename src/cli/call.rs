//! `chaintrace call`: trace a simulated call on a block's state (geth's debug_traceCall).

use alloy_primitives::{Address, Bytes, U256};
use chaintrace::replay::env::default_call_gas;
use chaintrace::replay::remote::replay_txs;
use chaintrace::replay::{EvmEnv, ReplayTx};
use chaintrace::source::fixture::{parse_hex, parse_u256_str};
use clap::Args;

use super::block::parse_block_ref;
use super::common::{exit, print_trace, report_rpc, CliError, RpcArgs, TraceArgs};
use chaintrace::replay::mined::spec_for;

/// Trace a call that is not on chain, on the state after block `--block` (default latest).
#[derive(Args, Debug)]
pub struct CallArgs {
    /// Sender address.
    #[arg(long)]
    pub from: String,
    /// Recipient address; omit to simulate a contract creation with --data as init code.
    #[arg(long)]
    pub to: Option<String>,
    /// Calldata as hex.
    #[arg(long, default_value = "0x")]
    pub data: String,
    /// Value in wei (decimal or 0x hex).
    #[arg(long, default_value = "0")]
    pub value: String,
    /// Gas limit (default: the block's gas limit, capped at 2^24 from Osaka on, EIP-7825).
    #[arg(long)]
    pub gas: Option<String>,
    /// Gas price in wei (default 0: no fee is charged and the base fee is not enforced).
    #[arg(long, default_value = "0")]
    pub gas_price: String,
    /// Block whose resulting state the call runs on.
    #[arg(long, default_value = "latest")]
    pub block: String,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Print the node's own debug_traceCall with the same tracer and config.
    #[arg(long)]
    pub remote: bool,
}

fn parse_address(s: &str, flag: &str) -> Result<Address, CliError> {
    s.trim().parse().map_err(|_| {
        CliError::input(format!(
            "malformed {flag} {s:?}: expected a 20-byte 0x address"
        ))
    })
}

fn parse_quantity(s: &str, flag: &str) -> Result<U256, CliError> {
    parse_u256_str(s).map_err(|e| CliError::input(format!("malformed {flag}: {e}")))
}

impl CallArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let from = parse_address(&self.from, "--from")?;
        let to = self
            .to
            .as_deref()
            .map(|t| parse_address(t, "--to"))
            .transpose()?;
        let data: Bytes =
            parse_hex(&self.data).map_err(|e| CliError::input(format!("malformed --data: {e}")))?;
        let value = parse_quantity(&self.value, "--value")?;
        let gas_price = parse_quantity(&self.gas_price, "--gas-price")?;
        let gas_price =
            u128::try_from(gas_price).map_err(|_| CliError::input("--gas-price is too large"))?;
        let block_ref = parse_block_ref(&self.block)?;
        if self.remote {
            let mut call = serde_json::json!({"from": from, "data": data, "value": value,
                "gasPrice": format!("{gas_price:#x}")});
            if let Some(to) = to {
                call["to"] = serde_json::json!(to);
            }
            if let Some(g) = &self.gas {
                call["gas"] = serde_json::json!(parse_quantity(g, "--gas")?);
            }
            return super::state::run_remote_call(&self.rpc, &self.trace, call, &block_ref);
        }
        let spec = self.trace.spec(None)?;
        let hardfork = self.trace.hardfork()?;
        let decoder = self.trace.decoder()?;
        let source = self.rpc.source()?;
        let chain_id = source.chain_id()?;
        let block = source.block(&block_ref)?;
        let spec_id = spec_for(chain_id, &block.info, hardfork);
        let gas = match &self.gas {
            Some(g) => u64::try_from(parse_quantity(g, "--gas")?)
                .map_err(|_| CliError::input("--gas is too large"))?,
            None => default_call_gas(spec_id, block.info.gas_limit),
        };
        let env = EvmEnv::new(spec_id, chain_id, &block.info).for_call(gas_price);
        let tx = ReplayTx::simulated(from, to, data, value, gas, gas_price);
        let state_at = format!("{:#x}", block.info.number);
        let replay = replay_txs(
            &source,
            std::slice::from_ref(&tx),
            &env,
            0,
            &state_at,
            &spec,
        )?;
        let passes = replay.passes;
        let traced = replay
            .traces
            .into_iter()
            .next()
            .ok_or_else(|| CliError::source("replay produced no trace"))?;
        let currency = chaintrace::chain::currency(chain_id);
        print_trace(&traced, &self.trace, &decoder, currency)?;
        report_rpc(&source, passes);
        Ok(if traced.outcome.success {
            exit::OK
        } else {
            exit::TX_FAILED
        })
    }
}
