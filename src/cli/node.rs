//! `chaintrace node status|doctor|split-check`: the operator toolkit.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use chaintrace::node::crash::write_report;
use chaintrace::node::doctor::DoctorOptions;
use chaintrace::node::doctor_steps::{diagnose, render_diagnosis};
use chaintrace::node::split::split_check;
use chaintrace::node::split_settings::{check_tracing, confirm_log, render_split};
use chaintrace::node::status::{node_status, render_status};
use chaintrace::node::NodeError;
use chaintrace::rpc::operator::{OperatorClient, OperatorError};
use chaintrace::rpc::{redact_url, RpcClient};
use clap::{Args, Subcommand};
use serde::Serialize;

use super::common::{exit, CliError};

/// Run and watch nodes of the 1329/1328 chain.
#[derive(Subcommand, Debug)]
pub enum NodeCommand {
    /// Sync state, peers and lag from the operator interface (CometBFT RPC, port 26657).
    Status(StatusArgs),
    /// Diagnose a node log (FILE or stdin) with ordered steps.
    Doctor(DoctorArgs),
    /// Pre-flight of the EVM state-store split migration of a node home.
    SplitCheck(SplitCheckArgs),
}

impl NodeCommand {
    pub fn run(&self) -> Result<u8, CliError> {
        match self {
            NodeCommand::Status(a) => a.run(),
            NodeCommand::Doctor(a) => a.run(),
            NodeCommand::SplitCheck(a) => a.run(),
        }
    }
}

impl From<NodeError> for CliError {
    fn from(e: NodeError) -> Self {
        match e {
            NodeError::Operator(OperatorError::BadUrl(_))
            | NodeError::Io { .. }
            | NodeError::Config { .. } => CliError::input(e.to_string()),
            _ => CliError::source(e.to_string()),
        }
    }
}

fn print_json<T: Serialize>(v: &T) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, v).map_err(std::io::Error::other)?;
    writeln!(out)?;
    Ok(())
}

fn seconds(s: f64, flag: &str) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| CliError::input(format!("{flag} must be a positive number of seconds")))
}

/// Report a node's height, sync state, peers and lag, sampling `/status` twice.
///
/// Exit codes: 0 the height moves; 5 it did not move between the samples; 2 the node is
/// unreachable, timed out or answered garbage.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Operator RPC URL, e.g. http://127.0.0.1:26657 (tcp:// is read as http://).
    #[arg(long, default_value = "http://127.0.0.1:26657")]
    pub url: String,
    /// Seconds between the two /status samples.
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    pub interval: f64,
    /// Seconds to wait for each answer before calling the node hung.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Print JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
}

impl StatusArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let interval = seconds(self.interval, "--interval")?;
        let timeout = seconds(self.timeout, "--timeout")?;
        let client = OperatorClient::new(&self.url, timeout).map_err(NodeError::from)?;
        let status = node_status(&client, interval)?;
        if self.json {
            print_json(&status)?;
        } else {
            render_status(&status, &mut std::io::stdout().lock())?;
        }
        Ok(if status.height_moving {
            exit::OK
        } else {
            exit::BLOCKER
        })
    }
}

/// Classify a node log and print a diagnosis with ordered steps.
///
/// Exit code 0 whether or not problems are found (read `problems` in --json); 1 when the log
/// cannot be read.
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Log file; reads stdin when omitted or `-`.
    #[arg(long, value_name = "FILE")]
    pub log: Option<String>,
    /// The node's home directory, to fill paths into the steps.
    #[arg(long, value_name = "DIR")]
    pub home: Option<String>,
    /// Write a crash report (context before the last crash, stack trace, diagnosis) into DIR.
    #[arg(long, value_name = "DIR")]
    pub crash_report: Option<PathBuf>,
    /// Print JSON instead of the diagnosis text.
    #[arg(long)]
    pub json: bool,
}

impl DoctorArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let bytes = match self.log.as_deref() {
            None | Some("-") => {
                let mut b = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut b)
                    .map_err(|e| CliError::input(format!("cannot read the log from stdin: {e}")))?;
                b
            }
            Some(path) => std::fs::read(path)
                .map_err(|e| CliError::input(format!("cannot read {path}: {e}")))?,
        };
        // Logs may hold stray non-UTF-8 bytes (binary garbage after a crash): keep going.
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let opts = DoctorOptions {
            home: self.home.clone(),
        };
        let diagnosis = diagnose(&lines, &opts);
        let crash = self
            .crash_report
            .as_deref()
            .map(|dir| write_report(dir, &lines, &diagnosis))
            .transpose()?;
        if self.json {
            print_json(&serde_json::json!({ "diagnosis": diagnosis, "crashReport": crash }))?;
        } else {
            let mut out = std::io::stdout().lock();
            render_diagnosis(&diagnosis, &mut out)?;
            if let Some(c) = &crash {
                writeln!(out)?;
                match c.crash_line {
                    Some(l) => writeln!(out, "crash report: crash at line {l}; context lines {}–{} (the last {}), stack trace lines {}–{}", c.context_first, c.context_last, c.window, c.stack_first.unwrap_or(l), c.stack_last.unwrap_or(l))?,
                    None => writeln!(out, "crash report: no crash in the log; context lines {}–{} (the last {})", c.context_first, c.context_last, c.window)?,
                }
                for f in &c.files {
                    writeln!(out, "  wrote {f}")?;
                }
            }
        }
        Ok(exit::OK)
    }
}

/// Pre-flight of the EVM state-store split migration, from config/app.toml, config/config.toml
/// and data/ of a node home.
///
/// Exit codes: 0 no blocker; 5 at least one blocker; 1 the home or its config cannot be read.
#[derive(Args, Debug)]
pub struct SplitCheckArgs {
    /// The node's home directory (holding config/ and data/).
    #[arg(long, value_name = "DIR")]
    pub home: PathBuf,
    /// A start-up log of the node, to confirm the split is active. A line confirms only when
    /// its backend= is this home's ss-backend and its dir= this home's data/evm_ss; otherwise
    /// it is a blocker naming both values.
    #[arg(long, value_name = "FILE")]
    pub log: Option<String>,
    /// The node's EVM JSON-RPC URL (or a foundry.toml [rpc_endpoints] alias), to check
    /// debug_traceBlockByNumber works.
    #[arg(long, value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Seconds to wait for the JSON-RPC answer (1 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub rpc_timeout: u64,
    /// Print JSON instead of the report text.
    #[arg(long)]
    pub json: bool,
}

impl SplitCheckArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        if !self.home.is_dir() {
            return Err(CliError::input(format!(
                "{} is not a directory: pass the node's home with --home",
                self.home.display()
            )));
        }
        let mut report = split_check(&self.home)?;
        if let Some(path) = &self.log {
            let bytes = std::fs::read(path)
                .map_err(|e| CliError::input(format!("cannot read {path}: {e}")))?;
            confirm_log(&String::from_utf8_lossy(&bytes), &mut report);
        }
        if let Some(url) = super::common::resolve_rpc_url(self.rpc_url.as_deref(), None)? {
            let client = RpcClient::new(&url, Duration::from_secs(self.rpc_timeout.max(1)))
                .map_err(|e| CliError::input(format!("bad --rpc-url {}: {e}", redact_url(&url))))?;
            check_tracing(&client, &mut report);
        }
        if self.json {
            print_json(&report)?;
        } else {
            render_split(&report, &mut std::io::stdout().lock())?;
        }
        Ok(if report.blockers > 0 {
            exit::BLOCKER
        } else {
            exit::OK
        })
    }
}
