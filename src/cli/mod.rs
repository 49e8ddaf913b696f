//! Command-line interface: clap definitions, one file per subcommand. Each subcommand converts
//! its arguments into library types, calls the library and returns an exit code.

/// `eprintln!` for a note: what a run says on stderr besides its result, its warnings and its
/// errors (which chain rules, the `rpc:` counts, a passing self-check). `-q` silences it.
macro_rules! note {
    ($($arg:tt)*) => {
        if !$crate::cli::output::quiet() {
            eprintln!($($arg)*);
        }
    };
}

pub mod access;

/// Taken by the tests that start a process and by those that release an OS file lock and then
/// expect it free: a child forked by one holds a copy of every open descriptor until its exec,
/// and with it any `flock` lock another test is releasing at that moment.
#[cfg(test)]
pub(crate) static FORKS: std::sync::Mutex<()> = std::sync::Mutex::new(());
pub mod assets;
pub mod block;
pub mod bundle;
pub mod call;
pub mod call_bundle;
pub mod call_input;
pub mod columnar;
pub mod common;
pub mod dap;
pub mod debug;
pub mod diff;
pub mod foundry;
pub mod gas;
pub mod index;
pub mod manifest;
pub mod names;
pub mod node;
pub mod output;
pub mod policy;
pub mod preflight;
pub mod range;
pub mod report;
pub mod serve;
pub mod state;
pub mod state_changes;
pub mod state_view;
pub mod tx;
pub mod wallet;
pub mod whatif;

use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};

pub use common::CliError;
use output::ColorChoice;

/// Replay EVM transactions locally and explain them with geth-exact traces.
///
/// Exit codes: 0 traced and the transaction succeeded; 1 bad input or usage; 2 RPC or source
/// failure; 3 traced and the transaction failed at top level; 4 the replay diverged from the
/// chain's receipt; 5 a node check found a blocker; 6 a policy denies; 7 an invalid request body; 8 `diff` found the local and the node's
/// traces differ.
#[derive(Parser, Debug)]
#[command(name = "chaintrace", version, about, long_about)]
pub struct Cli {
    /// When to colour output and draw tables with box characters: auto (stdout is a terminal
    /// and NO_COLOR is unset or empty), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// No notes and no progress bars on stderr; warnings and errors are still printed.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Also the notes that matter only when something is in doubt (the fork a dev chain's block
    /// was replayed under), which are otherwise shown only when the self-check fails.
    #[arg(long, short, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
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
    /// Every account and slot a transaction read or wrote, with values before and after.
    Access(access::AccessArgs),
    /// Compare the local trace of a transaction with the node's own, field by field.
    Diff(diff::DiffArgs),
    /// Step through one transaction in the terminal, at the source level (by hash, or
    /// --fixture/--bundle FILE offline).
    Debug(debug::DebugArgs),
    /// Serve the Debug Adapter Protocol for editors (VS Code, nvim-dap, Helix): the same
    /// replay and step model as `debug`, backwards too.
    Dap(dap::DapArgs),
    /// Gas tables (by opcode, frame, contract) and a flamegraph for one transaction.
    Gas(gas::GasArgs),
    /// Replay bundles: self-contained offline copies of a transaction and its pre-state.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// Operator toolkit: node status, log doctor, state-store split pre-flight.
    #[command(subcommand)]
    Node(node::NodeCommand),
    /// Wallet provider policies: evaluate a policy against a request.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Check an agent's /rpc request before the wallet provider signs it.
    Preflight(preflight::PreflightArgs),
    /// Build or extend the address index of a block range (for `serve --index`).
    Index(index::IndexArgs),
    /// Serve geth's debug_trace* API from local replay over any plain node.
    Serve(serve::ServeArgs),
    /// Wallet provider client: create a wallet, send pre-flighted requests (provider-signed or
    /// self-custodial).
    #[command(subcommand)]
    Wallet(wallet::WalletCommand),
    /// Print a shell completion script on stdout, e.g.
    /// `chaintrace completions bash > ~/.local/share/bash-completion/completions/chaintrace`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout, e.g. `chaintrace man > chaintrace.1`.
    Man,
}

impl Cli {
    pub fn run(&mut self) -> Result<u8, CliError> {
        output::init(self.color, self.quiet, self.verbose);
        // `--no-cache` and `--cache-dir` reach every store under the cache directory (the
        // project's artifacts, compiled layouts, verified ABIs, signatures), not only the
        // chain data.
        let state = match &self.command {
            Command::Tx(a) => Some(&a.state),
            Command::Access(a) => Some(&a.state),
            Command::Diff(a) => Some(&a.state),
            Command::Debug(a) => Some(&a.state),
            Command::Serve(a) => Some(&a.state),
            _ => None,
        };
        if let Some(s) = state {
            names::set_cache_root(s.cache_root());
        }
        match &mut self.command {
            Command::Tx(a) => a.run(),
            Command::Block(a) => a.run(),
            Command::Call(a) => a.run(),
            Command::Access(a) => a.run(),
            Command::Diff(a) => a.run(),
            Command::Gas(a) => a.run(),
            Command::Debug(a) => a.run(),
            Command::Dap(a) => a.run(),
            Command::Bundle(b) => b.run(),
            Command::Node(n) => n.run(),
            Command::Policy(p) => p.run(),
            Command::Preflight(a) => a.run(),
            Command::Index(a) => a.run(),
            Command::Serve(a) => a.run(),
            Command::Wallet(w) => w.run(),
            Command::Completions { shell } => {
                // Generated into memory: clap_complete panics on a failed write (`| head`).
                let mut text = Vec::new();
                clap_complete::generate(*shell, &mut Cli::command(), "chaintrace", &mut text);
                print_bytes(&text)
            }
            Command::Man => {
                let mut text = Vec::new();
                clap_mangen::Man::new(Cli::command()).render(&mut text)?;
                print_bytes(&title_first(&text))
            }
        }
    }
}

/// The page with its `.TH` line first, as man-pages(7) has it: clap_mangen writes its
/// apostrophe string definition (`.ie`/`.el`, used only further down) before it.
fn title_first(page: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = page.split_inclusive(|&b| b == b'\n').collect();
    if let Some(i) = lines.iter().position(|l| l.starts_with(b".TH ")) {
        let title = lines.remove(i);
        lines.insert(0, title);
    }
    lines.concat()
}

/// Writes `bytes` on stdout (a closed pipe is the reader's choice: exit 0).
fn print_bytes(bytes: &[u8]) -> Result<u8, CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(common::exit::OK)
}
