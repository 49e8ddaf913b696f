//! `chaintrace wallet`: the wallet-provider client. `create` makes a wallet; `rpc` pre-flights a
//! request and only then has the provider sign and send it; `send` pre-flights, signs locally
//! with `PRIVATE_KEY` and broadcasts. Nothing is sent unless the pre-flight allows it and the
//! simulation succeeds (or `--allow-revert`). Verdicts go to stderr, the hash to stdout.

use std::io::Write;
use std::time::Duration;

use chaintrace::policy::request::{transaction_of, Redactor};
use chaintrace::policy::VerdictKind;
use chaintrace::wallet::local::{sign, LocalKey};
use chaintrace::wallet::{answer_hash, Provider, WalletError};
use clap::{Args, Subcommand};
use serde_json::json;

use super::common::{exit, CliError};
use super::preflight::{verdict_code, PreflightArgs};

#[derive(Subcommand, Debug)]
pub enum WalletCommand {
    /// Create an Ethereum wallet at the provider (POST {wallet_api_url}/v1/wallets).
    Create(CreateArgs),
    /// Pre-flight an /rpc request, then have the provider sign and send it
    /// (POST {wallet_api_url}/v1/wallets/{id}/rpc, signed with WALLET_AUTHORIZATION_KEY).
    Rpc(ProviderRpcArgs),
    /// Pre-flight a request, then sign it locally with PRIVATE_KEY and broadcast it
    /// (eth_sendRawTransaction).
    Send(LocalSendArgs),
}

/// Where the provider is. Credentials come from the environment: APP_ID, APP_SECRET and, for
/// /rpc, WALLET_AUTHORIZATION_KEY.
#[derive(Args, Debug, Clone)]
pub struct ProviderArgs {
    /// The provider's API base.
    #[arg(
        long,
        value_name = "URL",
        env = "WALLET_API_URL",
        default_value = "https://api.privy.io"
    )]
    pub wallet_api_url: String,
    /// Seconds to wait for the provider (1 to 600).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub provider_timeout: u64,
}

impl ProviderArgs {
    fn provider(&self) -> Result<Provider, CliError> {
        Provider::from_env(
            &self.wallet_api_url,
            Duration::from_secs(self.provider_timeout),
            |k| std::env::var(k).ok(),
        )
        .map_err(|e| CliError::input(e.to_string()))
    }
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// A policy the wallet is created under (repeatable).
    #[arg(long = "policy-id", value_name = "ID", required = true)]
    pub policy_ids: Vec<String>,
    /// Print the provider's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ProviderRpcArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// The provider's wallet id.
    #[arg(long, value_name = "ID")]
    pub wallet: String,
    #[command(flatten)]
    pub preflight: PreflightArgs,
    /// Send even when the simulation reverts (the provider then signs a failing transaction).
    #[arg(long)]
    pub allow_revert: bool,
}

#[derive(Args, Debug)]
pub struct LocalSendArgs {
    #[command(flatten)]
    pub preflight: PreflightArgs,
    /// Send even when the simulation reverts.
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

fn provider_error(e: WalletError, redactor: &Redactor) -> CliError {
    let code = match e {
        WalletError::Credentials(_) => exit::BAD_INPUT,
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
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        redactor.add(provider.secret());
        let wallet = provider
            .create_wallet(&self.policy_ids)
            .map_err(|e| provider_error(e, &redactor))?;
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
            eprintln!("sending although the simulation reverts (--allow-revert)");
            Ok(Ok(()))
        }
        kind => {
            eprintln!(
                "not sent: {}",
                match kind {
                    VerdictKind::WouldRevert =>
                        "the simulation reverts (--allow-revert sends anyway)",
                    VerdictKind::Denied => "the policy denies the request",
                    _ => "the request body is invalid",
                }
            );
            Ok(Err(verdict_code(kind).max(code)))
        }
    }
}

impl ProviderRpcArgs {
    fn run(&self) -> Result<u8, CliError> {
        let provider = self.provider.provider()?;
        let mut redactor = Redactor::default();
        redactor.add_env(std::env::vars());
        redactor.add(provider.secret());
        let checked = self.preflight.check(&mut redactor)?;
        if let Err(code) = gate(
            &self.preflight,
            &checked.verdict,
            &redactor,
            self.allow_revert,
        )? {
            return Ok(code);
        }
        let answer = provider
            .rpc(&self.wallet, &checked.body)
            .map_err(|e| provider_error(e, &redactor))?;
        let mut out = std::io::stdout().lock();
        if self.preflight.json {
            writeln!(out, "{}", redactor.scrub(&answer.to_string()))?;
            return Ok(exit::OK);
        }
        let hash = answer_hash(&answer).ok_or_else(|| {
            CliError::source(format!(
                "the wallet provider answered without a transaction hash: {}",
                redactor.scrub(&answer.to_string())
            ))
        })?;
        writeln!(out, "{hash}")?;
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
        let key = LocalKey::parse(&key).map_err(CliError::input)?;
        let mut pre = self.preflight.clone();
        if pre.from.is_none() {
            pre.from = Some(format!("{:?}", key.address()));
        }
        let checked = pre.check(&mut redactor)?;
        if let Err(code) = gate(&pre, &checked.verdict, &redactor, self.allow_revert)? {
            return Ok(code);
        }
        let tx = transaction_of(&checked.body).ok_or_else(|| {
            CliError::input("send broadcasts transactions: the body has no params.transaction")
        })?;
        let source = pre.rpc.source()?;
        let signed = sign(tx, &key, checked.verdict.chain_id, &source.client)
            .map_err(|e| CliError::input(redactor.scrub(&e)))?;
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
        eprintln!(
            "sent: nonce {}, gas limit {}, from {:?}",
            signed.nonce,
            signed.gas_limit,
            key.address()
        );
        let mut out = std::io::stdout().lock();
        if pre.json {
            // --json: stdout holds JSON only.
            let sent = json!({
                "hash": format!("{:?}", signed.hash),
                "from": format!("{:?}", key.address()),
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
