//! Command-line interface: clap definitions, one file per subcommand. Each subcommand converts
//! its arguments into library types, calls the library and returns an exit code.

pub mod block;
pub mod bundle;
pub mod call;
pub mod common;
pub mod tx;

use clap::{Parser, Subcommand};

pub use common::CliError;

/// Replay EVM transactions locally and explain them with geth-exact traces.
///
/// Exit codes: 0 traced and the transaction succeeded; 1 bad input or usage; 2 RPC or source
/// failure; 3 traced and the transaction failed at top level; 4 the replay diverged from the
/// chain's receipt.
#[derive(Parser, Debug)]
#[command(name = "chaintrace", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Trace one transaction (by hash, or --fixture FILE offline).
    Tx(tx::TxArgs),
    /// Trace every transaction of a block.
    Block(block::BlockArgs),
    /// Trace a simulated call on a block's state.
    Call(call::CallArgs),
    /// Replay bundles: self-contained offline copies of a transaction and its pre-state.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
}

impl Cli {
    pub fn run(&self) -> Result<u8, CliError> {
        match &self.command {
            Command::Tx(a) => a.run(),
            Command::Block(a) => a.run(),
            Command::Call(a) => a.run(),
            Command::Bundle(b) => b.run(),
        }
    }
}
