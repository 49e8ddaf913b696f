//! `chaintrace dap`: the Debug Adapter Protocol on stdin/stdout (or one TCP client), for
//! editors (see `src/debug/dap.rs`, docs/debug.md and editors/).
//!
//! A `launch` request's arguments are `debug`'s options in JSON: `tx` (a hash) with `rpcUrl`,
//! or `fixture`, or `bundle`; `abi` (a path or a list), `hardfork`, `chainRules`,
//! `codeOverride` (a `ADDRESS=ARTIFACT` pair or a list), `stateSource`, `noProject`, and
//! `args`, any further `debug` flags as strings. They are read by `debug`'s own parser, so a
//! launch means what the same `chaintrace debug` command line means.

use std::io::{BufReader, BufWriter};

use chaintrace::debug::{dap, Session};
use clap::{Args, Parser};
use serde_json::Value;

use super::common::CliError;
use super::debug::DebugArgs;

/// Serve the Debug Adapter Protocol for editors (VS Code, nvim-dap, Helix): step through a
/// mined transaction, a fixture or a bundle at the source level, backwards too.
#[derive(Args, Debug)]
pub struct DapArgs {
    /// Accept one client on this TCP address (e.g. 127.0.0.1:4711) instead of stdin/stdout.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
}

/// `debug`'s flags, parsed from a launch request.
#[derive(Parser, Debug)]
#[command(name = "launch", no_binary_name = true)]
struct LaunchArgs {
    #[command(flatten)]
    debug: DebugArgs,
}

/// The `debug` command line a launch request's arguments stand for.
fn command_line(args: &Value) -> Result<Vec<String>, String> {
    let mut argv = Vec::new();
    let text = |v: &Value, key: &str| -> Result<Vec<String>, String> {
        match v {
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(a) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("launch: {key} must be strings"))
                })
                .collect(),
            _ => Err(format!(
                "launch: {key} must be a string or a list of strings"
            )),
        }
    };
    for (key, flag) in [
        ("rpcUrl", "--rpc-url"),
        ("fixture", "--fixture"),
        ("bundle", "--bundle"),
        ("abi", "--abi"),
        ("hardfork", "--hardfork"),
        ("chainRules", "--chain-rules"),
        ("codeOverride", "--code-override"),
        ("stateSource", "--state-source"),
    ] {
        if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
            for value in text(v, key)? {
                argv.push(flag.to_string());
                argv.push(value);
            }
        }
    }
    if args.get("noProject").and_then(Value::as_bool) == Some(true) {
        argv.push("--no-project".into());
    }
    if let Some(v) = args.get("args").filter(|v| !v.is_null()) {
        argv.extend(text(v, "args")?);
    }
    if let Some(v) = args.get("tx").filter(|v| !v.is_null()) {
        argv.extend(text(v, "tx")?);
    }
    Ok(argv)
}

/// Opens the session a launch request asks for, or says why not (`debug`'s own messages).
fn launch(args: &Value) -> Result<Session, String> {
    let argv = command_line(args)?;
    let parsed = LaunchArgs::try_parse_from(&argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        format!(
            "launch {}: {}",
            argv.join(" "),
            first.trim_start_matches("error: ")
        )
    })?;
    parsed
        .debug
        .open()
        .map(|(session, _)| session)
        .map_err(|e| e.message)
}

impl DapArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let mut launcher = launch;
        match &self.listen {
            None => {
                let stdin = std::io::stdin().lock();
                let stdout = BufWriter::new(std::io::stdout().lock());
                dap::serve(stdin, stdout, &mut launcher)
                    .map_err(|e| CliError::source(format!("dap: {e}")))?;
            }
            Some(addr) => {
                let listener = std::net::TcpListener::bind(addr)
                    .map_err(|e| CliError::input(format!("dap --listen {addr}: {e}")))?;
                let local = listener.local_addr().map(|a| a.to_string());
                eprintln!(
                    "chaintrace dap: listening on {}",
                    local.unwrap_or_else(|_| addr.clone())
                );
                let (stream, _) = listener
                    .accept()
                    .map_err(|e| CliError::source(format!("dap: {e}")))?;
                let reader = BufReader::new(
                    stream
                        .try_clone()
                        .map_err(|e| CliError::source(format!("dap: {e}")))?,
                );
                dap::serve(reader, BufWriter::new(stream), &mut launcher)
                    .map_err(|e| CliError::source(format!("dap: {e}")))?;
            }
        }
        Ok(0)
    }
}
