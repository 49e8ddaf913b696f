//! Operator toolkit for nodes of the 1329/1328 chain (node binary `chaind`).
//!
//! * [`status`]: what a node's operator interface (CometBFT RPC, port 26657) says about sync,
//!   peers and lag, sampled twice to tell a moving height from a stuck one.
//! * [`doctor`]: a diagnosis of a node log by the error classes of the chain's operator
//!   documentation, with ordered steps; [`crash`] collects a crash report around a panic.
//! * [`split`]: a pre-flight of the EVM state-store split migration from a node's home.
//!
//! Everything here reads text and files and returns plain values; printing is left to the
//! pure renderers next to each value and to the CLI.

pub mod config_checks;
pub mod crash;
pub mod doctor;
pub mod doctor_home;
pub mod doctor_steps;
pub mod logtime;
pub mod split;
pub mod split_report;
pub mod split_settings;
mod split_store;
pub mod status;

/// Stands for the node's home directory in a step when it is not known.
pub const UNKNOWN_HOME: &str = "<node_home>";

/// Says where to find [`UNKNOWN_HOME`].
pub const WHERE_HOME: &str = "<node_home> is the node's home directory, the one holding config/ \
     and data/: the --home chaind runs with (its service unit shows it: `systemctl cat chaind`). \
     Pass --home to have it filled in.";

/// What every state-sync or reset fix says first, as the chain's operator documentation does:
/// back up the validator key, its signing state and the genesis file, and keep them through the
/// sync (a validator whose signing state goes back signs twice and is slashed).
pub fn backup_before_sync(home: &str) -> String {
    format!(
        "stop the node and back up {home}/config/priv_validator_key.json, \
         {home}/data/priv_validator_state.json and {home}/config/genesis.json, and keep them \
         through the state sync (the reset sets priv_validator_state.json back to height 0: put \
         the backed-up one back, and check all three are there, unchanged, before restarting, or \
         a validator may sign twice and be slashed)"
    )
}

/// The reset before a state sync, keeping the address book.
pub fn reset_command(home: &str) -> String {
    format!("`chaind tendermint unsafe-reset-all --home {home} --keep-addr-book`")
}

/// Errors of the operator toolkit. URLs in messages are always redacted.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The operator interface could not be read.
    #[error(transparent)]
    Operator(#[from] crate::rpc::operator::OperatorError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A configuration file is not valid TOML.
    #[error("{path} is not valid TOML: {reason}")]
    Config { path: String, reason: String },
}
