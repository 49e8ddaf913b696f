//! Tests that need no node: geth's fixtures, the tracers on tiny programs, the CLI's exit codes and messages, the bad-input corpus, node tools on sample logs and homes, the architecture, the documentation's examples.
//!
//! One test binary with a module per suite (cargo's layout for large suites: each
//! `tests/*.rs` used to be linked against the whole crate on its own).

#[path = "../support/dap.rs"]
mod dap_client;
#[path = "../support/http.rs"]
mod http;
#[path = "../support/offline.rs"]
mod offline;
#[path = "../support/run.rs"]
mod run;
#[path = "../support/tmux.rs"]
mod tmux;

mod access;
mod architecture;
mod bad_input;
mod chain_rules;
mod cli;
mod conformance;
mod conventions;
mod dap;
mod debug_checkpoints;
mod debug_tui;
mod doc_examples;
mod erc7562;
mod failed_steps;
mod frontier;
mod node;
mod op_deposits;
mod op_fees;
mod other_l2;
mod properties;
mod tracers;
mod vscode_extension;
