//! The wallet-provider client: create a wallet, send an /rpc request the provider signs, and the
//! self-custodial path that signs locally and broadcasts.
//!
//! Every provider request carries HTTP Basic auth (`APP_ID:APP_SECRET`), the `wallet-app-id`
//! header and `Content-Type: application/json`; the body is the RFC 8785 canonical form of the
//! JSON sent. `/rpc` requests also carry `wallet-authorization-signature`.
//!
//! **Assumption** (the provider's documentation does not fix the algorithm): the authorization
//! signature is ECDSA P-256 (SHA-256) over the RFC 8785 canonical JSON of
//! `{"version":1,"method":"POST","url":URL,"body":BODY,"headers":{"wallet-app-id":APP_ID}}`,
//! DER-encoded and base64 (standard alphabet). It is made in one function,
//! [`authorization_signature`], so another scheme is a one-function change.

pub mod local;

use std::time::Duration;

use base64::Engine as _;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};

use crate::policy::jcs::canonicalize;
use crate::rpc::redact_url;
use crate::rpc::transport::{post_json, Failure};

/// Largest provider answer accepted.
const BODY_LIMIT: u64 = 8 << 20;

/// Why a provider request failed. Messages never hold the app secret or the key.
#[derive(Debug, thiserror::Error)]
pub enum WalletError {
    /// A credential is missing or unreadable (the message names the variable, never its value).
    #[error("{0}")]
    Credentials(String),
    /// No answer from the provider.
    #[error("cannot reach the wallet provider at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// The provider answered with an error status.
    #[error("the wallet provider refused the request: HTTP {status}: {message}")]
    Refused { status: u16, message: String },
    /// The provider's answer is not what the API documents.
    #[error("the wallet provider sent an unusable answer: {0}")]
    BadAnswer(String),
}

/// The provider's API base and the app's credentials.
pub struct Provider {
    /// `{wallet_api_url}` (no trailing slash).
    pub api: String,
    pub app_id: String,
    app_secret: String,
    auth_key: Option<SigningKey>,
    pub timeout: Duration,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("api", &redact_url(&self.api))
            .field("app_id", &self.app_id)
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// Reads `APP_ID`, `APP_SECRET` and (optional until an /rpc request) the authorization key
    /// from `WALLET_AUTHORIZATION_KEY` through `env`.
    pub fn from_env(
        api: &str,
        timeout: Duration,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Provider, WalletError> {
        let need = |name: &str| {
            env(name).filter(|v| !v.trim().is_empty()).ok_or_else(|| {
                WalletError::Credentials(format!("{name} is not set in the environment"))
            })
        };
        let app_id = need("APP_ID")?;
        let app_secret = need("APP_SECRET")?;
        let auth_key = env("WALLET_AUTHORIZATION_KEY")
            .filter(|v| !v.trim().is_empty())
            .map(|k| parse_authorization_key(&k))
            .transpose()?;
        Ok(Provider {
            api: api.trim().trim_end_matches('/').to_string(),
            app_id,
            app_secret,
            auth_key,
            timeout,
        })
    }

    /// The app secret, so callers can scrub it from anything they print.
    pub fn secret(&self) -> &str {
        &self.app_secret
    }

    /// `POST {api}/v1/wallets` for an Ethereum wallet under `policy_ids`.
    pub fn create_wallet(&self, policy_ids: &[String]) -> Result<Value, WalletError> {
        let url = format!("{}/v1/wallets", self.api);
        let body = json!({"chain_type": "ethereum", "policy_ids": policy_ids});
        self.post(&url, &body, None)
    }

    /// `POST {api}/v1/wallets/{wallet}/rpc` with `body`, signed with the authorization key.
    pub fn rpc(&self, wallet: &str, body: &Value) -> Result<Value, WalletError> {
        let key = self.auth_key.as_ref().ok_or_else(|| {
            WalletError::Credentials(
                "WALLET_AUTHORIZATION_KEY is not set in the environment: /rpc requests must \
                 carry a wallet-authorization-signature"
                    .into(),
            )
        })?;
        if wallet.is_empty()
            || !wallet
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(WalletError::Credentials(format!(
                "--wallet {wallet:?} is not a wallet id (letters, digits, - and _)"
            )));
        }
        let url = format!("{}/v1/wallets/{wallet}/rpc", self.api);
        let signature = authorization_signature(key, &url, body, &self.app_id);
        self.post(&url, body, Some(&signature))
    }

    fn post(&self, url: &str, body: &Value, signature: Option<&str>) -> Result<Value, WalletError> {
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.app_id, self.app_secret));
        let authorization = format!("Basic {basic}");
        let mut headers: Vec<(&str, &str)> = vec![
            ("authorization", authorization.as_str()),
            ("wallet-app-id", self.app_id.as_str()),
        ];
        if let Some(s) = signature {
            headers.push(("wallet-authorization-signature", s));
        }
        let (status, text) = post_json(url, &headers, canonicalize(body), self.timeout, BODY_LIMIT)
            .map_err(|f: Failure| WalletError::Unreachable {
                url: redact_url(url),
                reason: f.reason(),
            })?;
        let text = text.replace(&self.app_secret, "***");
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        if !(200..300).contains(&status) {
            let message = parsed
                .as_ref()
                .and_then(|v| {
                    v.get("error").or_else(|| v.get("message")).map(|m| {
                        m.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| m.to_string())
                    })
                })
                .unwrap_or_else(|| text.chars().take(300).collect());
            return Err(WalletError::Refused { status, message });
        }
        parsed.ok_or_else(|| {
            WalletError::BadAnswer(format!(
                "not JSON: {}",
                text.chars().take(200).collect::<String>()
            ))
        })
    }
}

/// The transaction hash in an /rpc answer (`data.hash`, or `hash`).
pub fn answer_hash(v: &Value) -> Option<&str> {
    v.pointer("/data/hash")
        .or_else(|| v.get("hash"))
        .and_then(Value::as_str)
}

/// The `wallet-authorization-signature` of a POST to `url` with `body` (see the module docs for
/// the assumption this makes): ECDSA P-256 over the canonical JSON of the request, DER, base64.
pub fn authorization_signature(key: &SigningKey, url: &str, body: &Value, app_id: &str) -> String {
    let payload = json!({
        "version": 1,
        "method": "POST",
        "url": url,
        "body": body,
        "headers": {"wallet-app-id": app_id},
    });
    let signature: Signature = key.sign(canonicalize(&payload).as_bytes());
    base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes())
}

/// Reads an authorization private key: PKCS#8 PEM, or base64 of PKCS#8 DER, optionally with
/// the provider's `wallet-auth:` prefix.
pub fn parse_authorization_key(text: &str) -> Result<SigningKey, WalletError> {
    use p256::pkcs8::DecodePrivateKey;
    let bad = || {
        WalletError::Credentials(
            "WALLET_AUTHORIZATION_KEY is not a P-256 private key (PKCS#8 PEM, or base64 \
             PKCS#8 DER with or without the `wallet-auth:` prefix)"
                .into(),
        )
    };
    let t = text.trim();
    if t.starts_with("-----BEGIN") {
        return SigningKey::from_pkcs8_pem(t).map_err(|_| bad());
    }
    let t = t.strip_prefix("wallet-auth:").unwrap_or(t);
    let der = base64::engine::general_purpose::STANDARD
        .decode(t)
        .map_err(|_| bad())?;
    SigningKey::from_pkcs8_der(&der).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use p256::pkcs8::EncodePrivateKey;

    fn key() -> SigningKey {
        SigningKey::from_slice(&[7u8; 32]).unwrap()
    }

    #[test]
    fn signature_verifies_over_the_canonical_request() {
        let k = key();
        let body =
            json!({"method": "eth_sendTransaction", "params": {"transaction": {"to": "0x01"}}});
        let sig =
            authorization_signature(&k, "https://api.example/v1/wallets/w1/rpc", &body, "app");
        let der = base64::engine::general_purpose::STANDARD
            .decode(sig)
            .unwrap();
        let sig = Signature::from_der(&der).unwrap();
        let payload = r#"{"body":{"method":"eth_sendTransaction","params":{"transaction":{"to":"0x01"}}},"headers":{"wallet-app-id":"app"},"method":"POST","url":"https://api.example/v1/wallets/w1/rpc","version":1}"#;
        VerifyingKey::from(&k)
            .verify(payload.as_bytes(), &sig)
            .unwrap();
    }

    #[test]
    fn keys_are_read_in_every_documented_form() {
        let k = key();
        let der = k.to_pkcs8_der().unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_bytes());
        let pem = k.to_pkcs8_pem(Default::default()).unwrap();
        for text in [b64.clone(), format!("wallet-auth:{b64}"), pem.to_string()] {
            assert_eq!(parse_authorization_key(&text).unwrap(), k);
        }
        let e = parse_authorization_key("wallet-auth:bm90IGEga2V5").unwrap_err();
        assert!(!e.to_string().contains("bm90"), "{e}");
    }

    #[test]
    fn hash_is_found_where_providers_put_it() {
        assert_eq!(
            answer_hash(&json!({"data": {"hash": "0xab"}})),
            Some("0xab")
        );
        assert_eq!(answer_hash(&json!({"hash": "0xcd"})), Some("0xcd"));
        assert_eq!(answer_hash(&json!({})), None);
    }
}
