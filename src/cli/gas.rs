//! `chaintrace gas`: where a transaction's gas went — `tx --gas-report` under its own name.
//! The same report is available for simulated calls (`call --gas-report`) and for every
//! transaction of a block (`block --gas-report`).

use clap::Args;

use super::common::CliError;
use super::tx::TxArgs;

/// Gas tables (by opcode, frame, contract) and a flamegraph for one transaction (by hash, or
/// --fixture FILE offline). Same as `tx --gas-report`.
#[derive(Args, Debug)]
pub struct GasArgs {
    #[command(flatten)]
    pub tx: TxArgs,
}

impl GasArgs {
    pub fn run(&mut self) -> Result<u8, CliError> {
        self.tx.trace.gas_report = true;
        self.tx.run()
    }
}
