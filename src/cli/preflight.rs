//! `chaintrace preflight`: check an agent's /rpc request before the wallet provider signs it.
//!
//! Secrets (the app secret, the authorization private key) may sit in the environment or in the
//! request file's headers; none is needed here. Every string under a secret-named variable or
//! member is learnt first, and everything this command prints, errors included, is scrubbed of
//! them.

use std::io::Write;

use alloy_primitives::Address;
use chaintrace::chain::{preset, resolve_chain};
use chaintrace::policy::engine::signs_message;
use chaintrace::policy::jcs::canonicalize;
use chaintrace::policy::request::{
    address, body_of, method_of, redacted_body, transaction_of, tx_fields, validate, Redactor,
};
use chaintrace::policy::simulate::simulate;
use chaintrace::policy::verdict::render_verdict;
use chaintrace::policy::{read_json, Evaluation, Policy, PolicyError, Verdict, VerdictKind};
use chaintrace::render::abi::Abi;
use chaintrace::render::decoder::Decoder;
use chaintrace::source::rpc::SourceError;
use clap::Args;

use super::common::{exit, CliError, RpcArgs};

/// Check an /rpc request as the wallet provider would sign it: the body (method, caip2 matching
/// the node's chain, hex-string transaction fields) and its RFC 8785 canonical form, the policy,
/// and a local simulation at `latest`. Prints one verdict.
///
/// Exit codes: 0 sign (valid, allowed, would succeed); 3 allowed but would revert; 6 denied by
/// the policy; 7 invalid request body; 1 unreadable input or no sender; 2 node failure.
#[derive(Args, Debug, Clone)]
pub struct PreflightArgs {
    /// Policy JSON: {"rules": [{name, action, method, conditions}]}.
    #[arg(long, value_name = "FILE")]
    pub policy: String,
    /// The /rpc request body (or {"body": …, "headers": …}).
    #[arg(long, value_name = "FILE")]
    pub request: String,
    /// The wallet's address, when params.transaction has no `from`.
    #[arg(long, value_name = "ADDRESS")]
    pub from: Option<String>,
    /// The chain the request is meant for; must agree with the node's eth_chainId.
    #[arg(long, value_name = "CHAIN")]
    pub chain: Option<String>,
    /// JSON ABI (or a Foundry/Hardhat artifact) to name custom revert errors.
    #[arg(long, value_name = "FILE")]
    pub abi: Vec<String>,
    #[command(flatten)]
    pub rpc: RpcArgs,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A request checked by [`PreflightArgs::check`]: the verdict and the request file's body.
pub struct Checked {
    pub verdict: Verdict,
    /// The /rpc body (`body` of a {body, headers} file, else the whole document).
    pub body: serde_json::Value,
}

impl PreflightArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let mut redactor = Redactor::default();
        let checked = self.check(&mut redactor)?;
        self.print(&checked.verdict, &redactor, &mut std::io::stdout().lock())
    }

    /// The verdict on the request, printing nothing; `redactor` learns every secret of the
    /// environment and the request file first, and errors come out scrubbed.
    pub fn check(&self, redactor: &mut Redactor) -> Result<Checked, CliError> {
        redactor.add_env(std::env::vars());
        // Learn the request file's secrets before anything can fail and echo it.
        let doc = read_json(&self.request).map_err(|e| match e {
            // The provider would refuse this body: an invalid request, not a bad command line.
            PolicyError::DuplicateName { .. } => CliError {
                code: exit::INVALID_REQUEST,
                message: e.to_string(),
            },
            e => CliError::input(e.to_string()),
        });
        if let Ok(d) = &doc {
            redactor.add_json(d);
        }
        self.verdict(doc).map_err(|mut e| {
            e.message = redactor.scrub(&e.message);
            e
        })
    }

    /// Prints `verdict` (scrubbed) and returns its exit code.
    pub fn print(
        &self,
        verdict: &Verdict,
        redactor: &Redactor,
        out: &mut dyn Write,
    ) -> Result<u8, CliError> {
        let mut text = Vec::new();
        if self.json {
            serde_json::to_writer_pretty(&mut text, verdict).map_err(std::io::Error::other)?;
            text.push(b'\n');
        } else {
            render_verdict(verdict, &mut text)?;
        }
        out.write_all(redactor.scrub(&String::from_utf8_lossy(&text)).as_bytes())?;
        out.flush()?;
        Ok(verdict_code(verdict.verdict))
    }

    fn decoder(&self) -> Result<Decoder, CliError> {
        let mut abi: Option<Abi> = None;
        for path in &self.abi {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::input(format!("cannot read ABI {path}: {e}")))?;
            let a = Abi::from_json(&text).map_err(|e| CliError::input(format!("{path}: {e}")))?;
            match &mut abi {
                None => abi = Some(a),
                Some(prev) => prev.merge(a),
            }
        }
        Ok(Decoder::new(abi))
    }

    fn verdict(&self, doc: Result<serde_json::Value, CliError>) -> Result<Checked, CliError> {
        let doc = doc?;
        let policy = Policy::from_json(&read_json(&self.policy)?)?;
        let body = body_of(&doc);
        let tx = transaction_of(body);
        let from: Address = match (tx.and_then(|t| t.get("from")), &self.from) {
            (_, Some(f)) => f.trim().parse().map_err(|_| {
                CliError::input(format!(
                    "malformed --from {f:?}: expected a 20-byte 0x address"
                ))
            })?,
            (Some(v), None) => address(v).ok_or_else(|| {
                CliError::input("params.transaction.from is not a 20-byte 0x address")
            })?,
            // A message needs no sender: nothing is executed.
            (None, None) if method_of(body).is_some_and(signs_message) => Address::ZERO,
            (None, None) => {
                return Err(CliError::input(
                    "no sender: params.transaction has no `from`; pass --from WALLET_ADDRESS",
                ))
            }
        };
        let decoder = self.decoder()?;
        let source = self.rpc.source()?;
        let chain_id = source.chain_id()?;
        if let Some(c) = &self.chain {
            let p = resolve_chain(c).ok_or_else(|| {
                CliError::input(format!(
                    "unknown --chain {c:?}: use 1329, 1328, mainnet or testnet"
                ))
            })?;
            if p.id != chain_id {
                return Err(CliError::input(format!(
                    "--chain {c} is chain {} but the node is chain {chain_id}",
                    p.id
                )));
            }
        }
        let issues = validate(body, Some(chain_id));
        let warnings = chaintrace::policy::request::warnings(body);
        let canonical = canonicalize(&redacted_body(body));
        let method = method_of(body).unwrap_or("");
        let evaluation = match tx_fields(body) {
            Ok(fields) => policy.evaluate(method, &fields),
            Err(e) => Evaluation {
                allowed: false,
                reason: format!("cannot be evaluated: {e}"),
                matched_rules: Vec::new(),
                rules: Vec::new(),
            },
        };
        let simulation = match tx {
            // A message (personal_sign) is signed, not executed.
            None if signs_message(method) => None,
            None => Some(Err("the body has no params.transaction".to_string())),
            Some(t) => Some(match simulate(&source, chain_id, from, t, &decoder) {
                Ok(s) => Ok(s),
                Err(chaintrace::replay::Error::Source(e @ SourceError::BadData { .. }))
                    if !issues.is_empty() =>
                {
                    Err(e.to_string())
                }
                Err(e) => return Err(e.into()),
            }),
        };
        let verdict = Verdict::new(
            chain_id,
            preset(chain_id).map(|p| p.name.to_string()),
            canonical,
            issues,
            warnings,
            evaluation,
            simulation,
        );
        Ok(Checked {
            verdict,
            body: body.clone(),
        })
    }
}

/// The documented exit code of a verdict.
pub fn verdict_code(kind: VerdictKind) -> u8 {
    match kind {
        VerdictKind::Sign => exit::OK,
        VerdictKind::WouldRevert => exit::TX_FAILED,
        VerdictKind::Denied => exit::DENIED,
        VerdictKind::InvalidRequest => exit::INVALID_REQUEST,
    }
}
