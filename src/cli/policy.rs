//! `chaintrace policy check`: evaluate a wallet provider policy against a request, offline.

use std::io::Write;

use chaintrace::chain::resolve_chain;
use chaintrace::policy::request::{body_of, method_of, parse_caip2, tx_fields, Redactor};
use chaintrace::policy::verdict::render_rules;
use chaintrace::policy::{read_json, Policy, PolicyError};
use clap::{Args, Subcommand};

use super::common::{exit, CliError};

/// Wallet provider policies.
#[derive(Subcommand, Debug)]
pub enum PolicyCommand {
    /// Evaluate a policy against an /rpc request and explain which rules matched.
    Check(CheckArgs),
}

impl PolicyCommand {
    pub fn run(&self) -> Result<u8, CliError> {
        match self {
            PolicyCommand::Check(a) => a.run(),
        }
    }
}

impl From<PolicyError> for CliError {
    fn from(e: PolicyError) -> Self {
        CliError::input(e.to_string())
    }
}

/// Evaluate POLICY against the /rpc request body in REQUEST, as the provider's engine would:
/// default deny; allowed only when an ALLOW rule matches and no DENY rule does.
///
/// Exit codes: 0 allowed; 6 denied; 7 a JSON object repeats a member name; 1 unreadable or
/// invalid policy or request.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Policy JSON: {"rules": [{name, action, method, conditions}]}.
    #[arg(long, value_name = "FILE")]
    pub policy: String,
    /// The /rpc request body (or {"body": …, "headers": …}).
    #[arg(long, value_name = "FILE")]
    pub request: String,
    /// The chain the request must name (1329, 1328, mainnet, testnet, 0x531, eip155:1329).
    #[arg(long, value_name = "CHAIN")]
    pub chain: Option<String>,
    /// Print JSON instead of the explanation.
    #[arg(long)]
    pub json: bool,
}

impl CheckArgs {
    /// Messages are scrubbed of the request's and the environment's secrets, as preflight's.
    pub fn run(&self) -> Result<u8, CliError> {
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        let doc = read_json(&self.request).map_err(|e| match e {
            // A repeated member name makes the body one a provider refuses (exit 7, as preflight).
            PolicyError::DuplicateName { .. } => CliError {
                code: exit::INVALID_REQUEST,
                message: e.to_string(),
            },
            e => CliError::from(e),
        });
        if let Ok(d) = &doc {
            redactor.add_json(d);
        }
        self.run_scrubbed(doc).map_err(|mut e| {
            e.message = redactor.scrub(&e.message);
            e
        })
    }

    fn run_scrubbed(&self, doc: Result<serde_json::Value, CliError>) -> Result<u8, CliError> {
        let doc = doc?;
        let policy = Policy::from_json(&read_json(&self.policy)?)?;
        let body = body_of(&doc);
        let method = method_of(body).ok_or_else(|| {
            CliError::input(format!("{}: the request has no `method`", self.request))
        })?;
        if let Some(c) = &self.chain {
            let preset = resolve_chain(c).ok_or_else(|| {
                CliError::input(format!(
                    "unknown --chain {c:?}: use 1329, 1328, mainnet or testnet"
                ))
            })?;
            let named = body
                .get("caip2")
                .and_then(|v| v.as_str())
                .and_then(parse_caip2);
            if named != Some(preset.id) {
                return Err(CliError::input(format!(
                    "the request's caip2 must be {} for --chain {c}",
                    preset.caip2()
                )));
            }
        }
        let tx = tx_fields(body).map_err(|e| CliError::input(format!("{}: {e}", self.request)))?;
        let eval = policy.evaluate(method, &tx);
        let mut out = std::io::stdout().lock();
        if self.json {
            serde_json::to_writer_pretty(&mut out, &eval).map_err(std::io::Error::other)?;
            writeln!(out)?;
        } else {
            let decision = if eval.allowed { "ALLOWED" } else { "DENIED" };
            writeln!(out, "{decision}: {}", eval.reason)?;
            render_rules(&eval, "  ", &mut out)?;
        }
        Ok(if eval.allowed { exit::OK } else { exit::DENIED })
    }
}
