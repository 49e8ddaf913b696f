//! `chaintrace wallet`: the wallet-provider client. `create` makes a wallet; `rpc` pre-flights a
//! request and only then hands it to the provider; `send` pre-flights and signs locally with
//! `PRIVATE_KEY`. The request's `method` decides what happens: `eth_sendTransaction` signs and
//! broadcasts, `eth_signTransaction` signs and prints the signed transaction (nothing reaches a
//! node's `eth_sendRawTransaction`), `personal_sign` signs the message (EIP-191) and prints the
//! signature. Nothing goes out unless the pre-flight allows that method and, for a transaction,
//! the simulation succeeds (or `--allow-revert`). Verdicts go to stderr, the result to stdout.

use std::io::Write;
use std::time::Duration;

use alloy_primitives::Address;
use chaintrace::policy::engine::Method;
use chaintrace::policy::request::{message_bytes, method_of, transaction_of, Redactor};
use chaintrace::policy::VerdictKind;
use chaintrace::wallet::answer::{
    check_signed_transaction, message_signer, read_answer, AnswerError, RpcAnswer,
};
use chaintrace::wallet::local::{sign, sign_message, LocalKey};
use chaintrace::wallet::{api_base, check_wallet_id, known, Provider, WalletError};
use clap::{Args, Subcommand};
use serde_json::json;

use super::common::{exit, CliError};
use super::preflight::{verdict_code, Checked, PreflightArgs, Signer};

#[derive(Subcommand, Debug)]
pub enum WalletCommand {
    /// Create an Ethereum wallet at the provider (POST {wallet_api_url}/v1/wallets).
    Create(CreateArgs),
    /// Pre-flight an /rpc request, then have the provider carry out its method
    /// (POST {wallet_api_url}/v1/wallets/{id}/rpc, signed with AUTHORIZATION_PRIVATE_KEY) and
    /// print its answer: the hash, the signed transaction or the signature. A transaction
    /// without a sender (no --from, no `from`) is simulated as the wallet's address, from
    /// `wallet create`'s record or GET {wallet_api_url}/v1/wallets/{id}, asked only once the
    /// body and the policy allow the request. stderr lists every request sent to the provider.
    Rpc(ProviderRpcArgs),
    /// Pre-flight a request, then carry out its method with PRIVATE_KEY: eth_sendTransaction
    /// signs and broadcasts (eth_sendRawTransaction), eth_signTransaction signs and prints the
    /// signed transaction, personal_sign signs the message (EIP-191) and prints the signature.
    Send(LocalSendArgs),
}

/// Where the provider is. Credentials come from the environment: APP_ID, APP_SECRET and, for
/// /rpc, AUTHORIZATION_PRIVATE_KEY (or WALLET_AUTHORIZATION_KEY).
#[derive(Args, Debug, Clone)]
pub struct ProviderArgs {
    /// The provider's API base ({wallet_api_url}); required, there is no default. No user
    /// info (USER:PASSWORD@): the credentials are APP_ID and APP_SECRET.
    #[arg(
        long,
        value_name = "URL",
        env = "WALLET_API_URL",
        hide_env_values = true
    )]
    pub wallet_api_url: Option<String>,
    /// Accept a plain http:// provider address on a host other than loopback. Every request
    /// carries APP_ID:APP_SECRET (Basic auth), which then crosses the network in clear text.
    #[arg(long)]
    pub allow_insecure_http: bool,
    /// Seconds to wait for the provider (1 to 600).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub provider_timeout: u64,
}

impl ProviderArgs {
    fn provider(&self) -> Result<Provider, CliError> {
        let api = api_base(self.wallet_api_url.as_deref(), self.allow_insecure_http)
            .map_err(|e| CliError::input(e.to_string()))?;
        Provider::from_env(&api, Duration::from_secs(self.provider_timeout), |k| {
            std::env::var(k).ok()
        })
        .map_err(|e| CliError::input(e.to_string()))
    }
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// A policy the wallet is created under (repeatable; none is fine).
    #[arg(long = "policy-id", value_name = "ID")]
    pub policy_ids: Vec<String>,
    /// An authorization key allowed to sign the wallet's requests (repeatable): the id the
    /// provider gave when the key's public key was registered, not the dashboard's key id. Sent
    /// as `authorization_key_ids`; that snake_case spelling is an assumption about the REST
    /// API (its documentation shows authorizationKeyIds in SDK code).
    #[arg(long = "authorization-key-id", value_name = "ID")]
    pub authorization_key_ids: Vec<String>,
    /// Print the provider's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ProviderRpcArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// The provider's wallet id (the `id` that `wallet create` printed). A transaction's
    /// simulation runs as --from (or params.transaction.from); without either, once the body
    /// and the policy allow the request, as the address `wallet create` recorded for the id,
    /// else the one the provider gives (GET {wallet_api_url}/v1/wallets/{id}).
    #[arg(long, value_name = "ID")]
    pub wallet: String,
    #[command(flatten)]
    pub preflight: PreflightArgs,
    /// Go ahead even when the simulation reverts (the provider then signs a failing transaction).
    #[arg(long)]
    pub allow_revert: bool,
}

#[derive(Args, Debug)]
pub struct LocalSendArgs {
    #[command(flatten)]
    pub preflight: PreflightArgs,
    /// Go ahead even when the simulation reverts.
    #[arg(long)]
    pub allow_revert: bool,
}

impl WalletCommand {
    pub fn run(&self) -> Result<u8, CliError> {
        match self {
            WalletCommand::Create(a) => a.run(),
            WalletCommand::Rpc(a) => a.run(),
            WalletCommand::Send(a) => a.run(),
        }
    }
}

/// Lists on stderr every request sent to the provider (method and path, nothing secret).
fn list_requests(provider: &Provider) {
    let sent = provider.sent();
    if sent.is_empty() {
        eprintln!("provider requests: none");
    }
    for line in sent {
        eprintln!("provider request: {line}");
    }
}

fn provider_error(e: WalletError, redactor: &Redactor) -> CliError {
    let code = match e {
        WalletError::Credentials(_) | WalletError::ClearText { .. } => exit::BAD_INPUT,
        _ => exit::SOURCE,
    };
    CliError {
        code,
        message: redactor.scrub(&e.to_string()),
    }
}

impl CreateArgs {
    fn run(&self) -> Result<u8, CliError> {
        let provider = self.provider.provider()?;
        let result = self.create(&provider);
        list_requests(&provider);
        result
    }

    fn create(&self, provider: &Provider) -> Result<u8, CliError> {
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        redactor.merge(provider.credentials());
        let wallet = provider
            .create_wallet(&self.policy_ids, &self.authorization_key_ids)
            .map_err(|e| provider_error(e, &redactor))?;
        // Remembered, so that `wallet rpc` needs neither --from nor a request for the address.
        let id = wallet.get("id").and_then(|v| v.as_str());
        let address = wallet
            .get("address")
            .and_then(|v| v.as_str())
            .filter(|a| a.len() == 42)
            .and_then(|a| a.parse::<Address>().ok());
        if let (Some(id), Some(address), Some(dir)) = (id, address, super::names::cache_dir()) {
            if let Err(e) = known::record(&dir, &provider.api, id, address) {
                eprintln!(
                    "warning: cannot record wallet {id}'s address under {}: {e}",
                    dir.display()
                );
            }
        }
        let mut out = std::io::stdout().lock();
        if self.json {
            writeln!(out, "{}", redactor.scrub(&wallet.to_string()))?;
        } else {
            let field = |k: &str| {
                wallet
                    .get(k)
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .unwrap_or_else(|| "?".into())
            };
            writeln!(out, "wallet {}", field("id"))?;
            writeln!(out, "address {}", field("address"))?;
            writeln!(out, "chain_type {}", field("chain_type"))?;
            if let Some(p) = wallet.get("policy_ids") {
                writeln!(out, "policy_ids {p}")?;
            }
        }
        Ok(exit::OK)
    }
}

/// Prints the verdict on stderr and says whether the request may go out; `Err(code)` when not.
fn gate(
    pre: &PreflightArgs,
    verdict: &chaintrace::policy::Verdict,
    redactor: &Redactor,
    allow_revert: bool,
) -> Result<Result<(), u8>, CliError> {
    let code = pre.print(verdict, redactor, &mut std::io::stderr().lock())?;
    match verdict.verdict {
        VerdictKind::Sign => Ok(Ok(())),
        VerdictKind::WouldRevert if allow_revert => {
            eprintln!("going ahead although the simulation reverts (--allow-revert)");
            Ok(Ok(()))
        }
        kind => {
            eprintln!(
                "not sent: {}",
                match kind {
                    VerdictKind::WouldRevert =>
                        "the simulation reverts (--allow-revert goes ahead anyway)",
                    VerdictKind::Denied => "the policy denies the request",
                    _ => "the request body is invalid",
                }
            );
            Ok(Err(verdict_code(kind).max(code)))
        }
    }
}

/// The request's method, one of those the pre-flight accepted.
fn method(checked: &Checked) -> &str {
    method_of(&checked.body).unwrap_or_default()
}

/// The request's method, `command` naming the subcommand in the error; a request the
/// pre-flight passed always has one of [`Method`].
fn known_method(checked: &Checked, command: &str) -> Result<Method, CliError> {
    Method::parse(method(checked)).ok_or_else(|| {
        CliError::input(format!(
            "the request's method {} is not one {command} carries out",
            chaintrace::redact::quoted(method(checked))
        ))
    })
}

/// An answer the provider gave with a 2xx status that does not hold what its method promises:
/// it may have acted, so this is said, with the raw answer, and nothing is retried.
fn unreadable(
    status: u16,
    reason: AnswerError,
    answer: &serde_json::Value,
    redactor: &Redactor,
) -> CliError {
    let e = WalletError::UnreadableRpcAnswer {
        status,
        reason,
        body: answer.to_string().chars().take(2000).collect(),
    };
    CliError::source(redactor.scrub(&e.to_string()))
}

impl ProviderRpcArgs {
    fn run(&self) -> Result<u8, CliError> {
        // Everything that can be checked without sending is checked first: the provider's
        // address, the credentials and the wallet id.
        let provider = self.provider.provider()?;
        let result = self.send(&provider);
        list_requests(&provider);
        result
    }

    /// The wallet's address once the body and the policy allow the request: recorded by
    /// `wallet create`, else asked of the provider (one credentialed GET).
    fn wallet_address(
        &self,
        provider: &Provider,
        redactor: &Redactor,
    ) -> Result<Address, CliError> {
        if let Some(a) = super::names::cache_dir()
            .and_then(|dir| known::recorded(&dir, &provider.api, &self.wallet))
        {
            note!(
                "sender {a}: wallet {}'s address, as `wallet create` recorded it",
                self.wallet
            );
            return Ok(a);
        }
        let a = provider.wallet_address(&self.wallet).map_err(|e| {
            let mut e = provider_error(e, redactor);
            e.message = format!(
                "the request has no `from` and wallet {}'s address is unknown (pass --from \
                 WALLET_ADDRESS): {}; the request was not sent",
                self.wallet, e.message
            );
            e
        })?;
        note!(
            "sender {a}: wallet {}'s address, from the provider (the request has no `from`)",
            self.wallet
        );
        Ok(a)
    }

    fn send(&self, provider: &Provider) -> Result<u8, CliError> {
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        redactor.merge(provider.credentials());
        provider
            .require_authorization_key()
            .and_then(|_| check_wallet_id(&self.wallet))
            .map_err(|e| provider_error(e, &redactor))?;
        // Nothing reaches the provider before the body and the policy allow the request.
        let for_address = redactor.clone();
        let find = || self.wallet_address(provider, &for_address);
        let checked = self
            .preflight
            .check_with(&mut redactor, Signer::Provider(&find))?;
        if let Err(code) = gate(
            &self.preflight,
            &checked.verdict,
            &redactor,
            self.allow_revert,
        )? {
            return Ok(code);
        }
        let method = known_method(&checked, "wallet rpc")?;
        let (status, answer) = provider
            .rpc(&self.wallet, &checked.body)
            .map_err(|e| provider_error(e, &redactor))?;
        let read =
            read_answer(method, &answer).map_err(|r| unreadable(status, r, &answer, &redactor))?;
        // Hold what was signed to what was asked; a mismatch is never printed as the result.
        match &read {
            RpcAnswer::Sent(_) => {}
            RpcAnswer::SignedTransaction(raw) => {
                let tx = transaction_of(&checked.body).cloned().unwrap_or_default();
                let signer =
                    check_signed_transaction(raw, &tx, checked.verdict.chain_id, checked.from)
                        .map_err(|r| unreadable(status, r, &answer, &redactor))?;
                note!("signed by {signer}, not sent: the signed transaction matches the request");
            }
            RpcAnswer::Signature(sig) => {
                let msg =
                    message_bytes(&checked.body).map_err(|e| CliError::input(e.to_string()))?;
                let signer = message_signer(sig, &msg)
                    .map_err(|r| unreadable(status, r, &answer, &redactor))?;
                if let Some(want) = checked.from.filter(|w| *w != signer) {
                    let r = AnswerError::OtherSigner { signer, want };
                    return Err(unreadable(status, r, &answer, &redactor));
                }
                note!("signed by {signer} (recovered from the signature)");
            }
        }
        let mut out = std::io::stdout().lock();
        if self.preflight.json {
            writeln!(out, "{}", redactor.scrub(&answer.to_string()))?;
        } else {
            writeln!(out, "{}", read.text())?;
        }
        Ok(exit::OK)
    }
}

impl LocalSendArgs {
    fn run(&self) -> Result<u8, CliError> {
        let key = std::env::var("PRIVATE_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| CliError::input("PRIVATE_KEY is not set in the environment"))?;
        // Belt and braces: LocalKey's errors never quote the key, and nothing printed below
        // is scrubbed without it (and any other secret-named variable) in the redactor.
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        redactor.add(&key);
        redactor.add(key.trim().trim_start_matches("0x"));
        let key = LocalKey::parse(&key).map_err(|e| CliError::input(e.to_string()))?;
        let pre = &self.preflight;
        let signer = format!("{:?}", key.address());
        if let Some(f) = &pre.from {
            if f.trim().parse::<Address>().ok() != Some(key.address()) {
                return Err(CliError::input(format!(
                    "--from is {} but PRIVATE_KEY is the key of {signer}: refusing to sign",
                    chaintrace::redact::elide_hex(f.trim())
                )));
            }
        }
        // The sender is the key's address unless the request names one, which must be it.
        let checked = pre.check_with(&mut redactor, Signer::LocalKey(key.address()))?;
        if let Some(f) = checked.from.filter(|f| *f != key.address()) {
            return Err(CliError::input(format!(
                "`from` is {f} but PRIVATE_KEY is the key of {signer}: refusing to sign"
            )));
        }
        if let Err(code) = gate(pre, &checked.verdict, &redactor, self.allow_revert)? {
            return Ok(code);
        }
        let mut out = std::io::stdout().lock();
        let method = known_method(&checked, "wallet send")?;
        if method == Method::PersonalSign {
            let msg = message_bytes(&checked.body).map_err(|e| CliError::input(e.to_string()))?;
            let sig = sign_message(&key, &msg)
                .map_err(|e| CliError::input(redactor.scrub(&e.to_string())))?;
            note!(
                "signed the message ({} bytes, EIP-191) as {signer}",
                msg.len()
            );
            if pre.json {
                let v = json!({"signature": sig, "encoding": "hex", "from": signer});
                writeln!(out, "{}", redactor.scrub(&v.to_string()))?;
            } else {
                writeln!(out, "{sig}")?;
            }
            return Ok(exit::OK);
        }
        let broadcast = method == Method::SendTransaction;
        let tx = transaction_of(&checked.body)
            .ok_or_else(|| CliError::input("a transaction request needs params.transaction"))?;
        let chain_id = checked
            .verdict
            .chain_id
            .ok_or_else(|| CliError::input("the node's chain id is unknown"))?;
        let source = pre.rpc.source()?;
        let signed = sign(tx, &key, chain_id, &source.client)
            .map_err(|e| CliError::input(redactor.scrub(&e.to_string())))?;
        if !broadcast {
            note!(
                "signed, not sent (eth_signTransaction): nonce {}, gas limit {}, from {signer}",
                signed.nonce,
                signed.gas_limit
            );
            if pre.json {
                let v = json!({
                    "signedTransaction": signed.raw,
                    "hash": format!("{:?}", signed.hash),
                    "from": signer,
                    "nonce": signed.nonce,
                    "gasLimit": signed.gas_limit,
                });
                writeln!(out, "{}", redactor.scrub(&v.to_string()))?;
            } else {
                writeln!(out, "{}", signed.raw)?;
            }
            return Ok(exit::OK);
        }
        let sent = source
            .client
            .call("eth_sendRawTransaction", json!([signed.raw]))
            .map_err(|e| CliError::source(redactor.scrub(&e.to_string())))?;
        let hash = sent.as_str().unwrap_or_default().to_string();
        if !hash.eq_ignore_ascii_case(&format!("{:?}", signed.hash)) {
            eprintln!(
                "warning: the node answered {hash}, the signed transaction's hash is {:?}",
                signed.hash
            );
        }
        note!(
            "sent: nonce {}, gas limit {}, from {signer}",
            signed.nonce,
            signed.gas_limit
        );
        if pre.json {
            // --json: stdout holds JSON only.
            let sent = json!({
                "hash": format!("{:?}", signed.hash),
                "from": signer,
                "nonce": signed.nonce,
                "gasLimit": signed.gas_limit,
            });
            writeln!(out, "{}", redactor.scrub(&sent.to_string()))?;
        } else {
            writeln!(out, "{:?}", signed.hash)?;
        }
        Ok(exit::OK)
    }
}
