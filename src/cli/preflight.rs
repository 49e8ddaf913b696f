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
    address, body_of, method_of, parse_caip2, redacted_body, transaction_of, tx_fields, validate,
    Redactor,
};
use chaintrace::policy::simulate::{simulate, NotSimulated};
use chaintrace::policy::verdict::render_verdict;
use chaintrace::policy::{read_json, Evaluation, Policy, PolicyError, Verdict, VerdictKind};
use chaintrace::render::abi::Abi;
use chaintrace::render::decoder::Decoder;
use chaintrace::source::error::SourceError;
use clap::Args;

use super::common::{exit, CliError, RpcArgs};

/// Check an /rpc request as the wallet provider would sign it: the body (method, caip2 matching
/// the node's chain, hex-string transaction fields) and its RFC 8785 canonical form, the policy,
/// and a local simulation at `latest`. Prints one verdict. A personal_sign request (a message)
/// is checked without a node.
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
    /// The wallet's address: the simulation's sender (params.transaction.from, if given, must
    /// agree).
    #[arg(long, value_name = "ADDRESS")]
    pub from: Option<String>,
    /// The chain the request is meant for; must agree with the node's eth_chainId (for a
    /// message, with the body's caip2). `wallet rpc` adds caip2 from it to a personal_sign body
    /// that has none, as the provider requires caip2 on every /rpc request.
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
    /// The simulation's sender; for a message, `--from` if given (else `None`).
    pub from: Option<Address>,
}

/// Who will sign the request, which decides where its sender comes from when neither `--from`
/// nor `params.transaction.from` gives it.
#[derive(Clone, Copy)]
pub enum Signer<'a> {
    /// `preflight`: nobody; a missing sender is an error.
    Nobody,
    /// `wallet send`: the local key, whose address is the sender.
    LocalKey(Address),
    /// `wallet rpc`: the provider. Nothing is asked of it before the verdict: without a sender
    /// the body and the policy are still judged (neither reads the sender), and only for a
    /// request they allow is the wallet's address found, by this function (which may ask the
    /// provider), before the simulation. Every `/rpc` request needs `caip2`: a message without
    /// one gets `--chain`'s.
    Provider(&'a dyn Fn() -> Result<Address, CliError>),
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
        self.check_with(redactor, Signer::Nobody)
    }

    /// [`check`](Self::check) for a request `signer` will sign.
    pub fn check_with(&self, redactor: &mut Redactor, signer: Signer) -> Result<Checked, CliError> {
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
        self.verdict(doc, signer).map_err(|mut e| {
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

    /// The simulation's sender: `--from`, else `params.transaction.from`, else the local key's
    /// address, else `None` for the provider (see [`Signer::Provider`]), else an error saying
    /// how to give it. `--from` and a `from` in the body that disagree are refused: the
    /// simulation would run as another account than the one that signs.
    fn sender(
        &self,
        tx: Option<&serde_json::Map<String, serde_json::Value>>,
        signer: Signer,
    ) -> Result<Option<Address>, CliError> {
        let in_body = match tx.and_then(|t| t.get("from")).filter(|v| !v.is_null()) {
            Some(v) => Some(address(v).ok_or_else(|| {
                CliError::input("params.transaction.from is not a 20-byte 0x address")
            })?),
            None => None,
        };
        let flag = match &self.from {
            Some(f) => Some(f.trim().parse::<Address>().map_err(|_| {
                CliError::input(format!(
                    "malformed --from {}: expected a 20-byte 0x address",
                    chaintrace::redact::quoted(f)
                ))
            })?),
            None => None,
        };
        match (flag, in_body, signer) {
            (Some(f), Some(b), _) if f != b => Err(CliError::input(format!(
                "--from is {f} but params.transaction.from is {b}: the simulation would run as \
                 another account than the one that signs"
            ))),
            (Some(f), _, _) => Ok(Some(f)),
            (None, Some(b), _) => Ok(Some(b)),
            (None, None, Signer::LocalKey(a)) => Ok(Some(a)),
            (None, None, Signer::Provider(_)) => Ok(None),
            (None, None, Signer::Nobody) => Err(CliError::input(
                "no sender: params.transaction has no `from`; pass --from WALLET_ADDRESS",
            )),
        }
    }

    fn verdict(
        &self,
        doc: Result<serde_json::Value, CliError>,
        signer: Signer,
    ) -> Result<Checked, CliError> {
        let doc = doc?;
        let policy = Policy::from_json(&read_json(&self.policy)?)?;
        let mut body = body_of(&doc).clone();
        let method = method_of(&body).unwrap_or("").to_string();
        // A message is signed, not executed: no sender, no node, no simulation.
        let message = signs_message(&method);
        let provider = matches!(signer, Signer::Provider(_));
        if message && provider && body.get("caip2").is_none() {
            // The provider requires caip2 on every /rpc request; a message's chain can only
            // come from --chain (a policy names a chain type, not a chain).
            if let Some(c) = &self.chain {
                let p = resolve_chain(c).ok_or_else(|| {
                    CliError::input(format!(
                        "unknown --chain {c:?}: use 1329, 1328, mainnet or testnet"
                    ))
                })?;
                body["caip2"] = serde_json::json!(format!("eip155:{}", p.id));
                note!(
                    "caip2 eip155:{} added to the message request (--chain)",
                    p.id
                );
            }
        }
        let body = &body;
        let tx = transaction_of(body);
        let method = method.as_str();
        let from = if message {
            // No sender is needed; a --from given is still read, and a signature held to it.
            match &self.from {
                Some(_) => self.sender(None, Signer::Nobody)?,
                None => None,
            }
        } else {
            self.sender(tx, signer)?
        };
        let decoder = self.decoder()?;
        let (source, chain_id, chain_from) = if message {
            let id = body
                .get("caip2")
                .and_then(serde_json::Value::as_str)
                .and_then(parse_caip2);
            (None, id, "the request's caip2 is")
        } else {
            let source = self.rpc.source()?;
            let id = source.chain_id()?;
            (Some(source), Some(id), "the node is")
        };
        if let Some(c) = &self.chain {
            let p = resolve_chain(c).ok_or_else(|| {
                CliError::input(format!(
                    "unknown --chain {c:?}: use 1329, 1328, mainnet or testnet"
                ))
            })?;
            if let Some(id) = chain_id.filter(|id| *id != p.id) {
                return Err(CliError::input(format!(
                    "--chain {c} is chain {} but {chain_from} chain {id}",
                    p.id
                )));
            }
        }
        let mut issues = validate(body, chain_id);
        if message && provider && body.get("caip2").is_none() {
            issues.push(chaintrace::policy::request::RequestIssue {
                path: "caip2".into(),
                problem: "is required on every /rpc request, a message's too (e.g. \
                          \"eip155:1329\"): add it to the request or pass --chain"
                    .into(),
            });
        }
        let warnings = chaintrace::policy::request::warnings(body);
        let canonical = canonicalize(&redacted_body(body));
        let evaluation = match tx_fields(body) {
            Ok(fields) => policy.evaluate(method, &fields),
            Err(e) => Evaluation {
                allowed: false,
                reason: format!("cannot be evaluated: {e}"),
                matched_rules: Vec::new(),
                rules: Vec::new(),
            },
        };
        // Signed by the provider with no sender known: what the body and the policy refuse is
        // judged without one (and nothing is asked of the provider); only a request they allow
        // has the wallet's address found, for the simulation.
        let from = match (from, signer) {
            (None, Signer::Provider(find))
                if !message && issues.is_empty() && evaluation.allowed =>
            {
                Some(find()?)
            }
            (from, _) => from,
        };
        let on_chain = source.as_ref().zip(chain_id).zip(from);
        let simulation = match (tx, on_chain) {
            // A message (personal_sign) is signed, not executed.
            _ if message => None,
            (None, _) => Some(Err(NotSimulated::NoTransaction)),
            (Some(_), None) => Some(Err(NotSimulated::NoNodeOrSender)),
            (Some(t), Some(((source, chain_id), from))) => {
                Some(match simulate(source, chain_id, from, t, &decoder) {
                    Ok(s) => Ok(s),
                    Err(chaintrace::replay::Error::Source(e @ SourceError::BadData { .. }))
                        if !issues.is_empty() =>
                    {
                        Err(NotSimulated::Unusable(e))
                    }
                    Err(e) => return Err(e.into()),
                })
            }
        };
        let verdict = Verdict::new(
            chain_id,
            chain_id.and_then(preset).map(|p| p.name.to_string()),
            canonical,
            issues,
            warnings,
            evaluation,
            simulation,
        );
        Ok(Checked {
            verdict,
            body: body.clone(),
            from,
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
