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

pub mod answer;
pub mod known;
pub mod local;

use std::sync::Mutex;
use std::time::Duration;

use alloy_primitives::Address;
use base64::Engine as _;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};

use crate::policy::jcs::canonicalize;
use crate::redact::{elide_hex, quoted, Redactor};
use crate::rpc::redact_url;
use crate::rpc::transport::{block_on, credentialed_client, send_keeping_location, Failure};

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
    /// The provider's documented 400 `Invalid authorization key IDs`, with the documentation's
    /// remedy: the wallet must exist first, and the key ids are registration ids.
    #[error(
        "the wallet provider refused the request: HTTP {status}: {message} — create the wallet \
         first (`chaintrace wallet create`) and pass its id (walletId) as --wallet; an \
         authorization key id must be the id the provider gave when the key's public key was \
         registered, not the key id the dashboard shows; or retry `chaintrace wallet create` \
         without --authorization-key-id (a wallet no authorization key may sign for)"
    )]
    AuthorizationKeyIds { status: u16, message: String },
    /// The provider answered with a redirect. It is never followed: the request carries the
    /// app's credentials (and an /rpc body signed for this address), which must not go to a
    /// host the user did not name.
    #[error(
        "the wallet provider answered HTTP {status}, a redirect to {location}: not followed, \
         nothing was sent there (the request carries APP_ID:APP_SECRET); if the provider has \
         moved, pass its new address as --wallet-api-url"
    )]
    Redirected { status: u16, location: String },
    /// A plain `http://` provider address off loopback: the Basic credentials would cross the
    /// network in clear text.
    #[error(
        "--wallet-api-url {url} is plain http on a host other than loopback: APP_ID:APP_SECRET \
         would be sent in clear text; use https, or pass --allow-insecure-http to accept that \
         (nothing was sent)"
    )]
    ClearText { url: String },
    /// The provider's answer is not what the API documents.
    #[error("the wallet provider sent an unusable answer: {0}")]
    BadAnswer(String),
    /// An /rpc request was accepted (2xx), so the provider may have signed or sent, but the
    /// answer does not say what it did. Never retried: a retry could sign or send twice.
    #[error(
        "the wallet provider answered HTTP {status} to the /rpc request, so it may have signed \
         or sent it, but {reason}; its answer: {body} — not retried: check the wallet before \
         sending again"
    )]
    UnreadableRpcAnswer {
        status: u16,
        reason: answer::AnswerError,
        body: String,
    },
}

/// The environment variables that may hold the authorization key: the documented name first,
/// then the older one.
pub const AUTHORIZATION_KEY_VARS: [&str; 2] =
    ["AUTHORIZATION_PRIVATE_KEY", "WALLET_AUTHORIZATION_KEY"];

/// The provider's API base, from `--wallet-api-url` or `WALLET_API_URL`: there is no default,
/// so nothing is ever sent to an address the user did not give. Plain `http://` is accepted on
/// loopback only (a local mock or tunnel), unless `allow_clear_text`: every request carries the
/// app's Basic credentials. Decided from the URL alone, before any connection.
pub fn api_base(flag: Option<&str>, allow_clear_text: bool) -> Result<String, WalletError> {
    let url = flag
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| {
            WalletError::Credentials(
                "no wallet provider given: pass --wallet-api-url URL or set WALLET_API_URL \
                 (nothing was sent)"
                    .into(),
            )
        })?;
    if !crate::rpc::transport::valid_url(url) {
        return Err(WalletError::Credentials(format!(
            "--wallet-api-url {} is not an http(s) URL",
            redact_url(url)
        )));
    }
    // User info would become a second Authorization header beside APP_ID:APP_SECRET's.
    if reqwest::Url::parse(url).is_ok_and(|u| !u.username().is_empty() || u.password().is_some()) {
        return Err(WalletError::Credentials(format!(
            "--wallet-api-url {} carries user info (USER:PASSWORD@): the provider's credentials \
             are APP_ID and APP_SECRET in the environment; remove it from the address (nothing \
             was sent)",
            redact_url(url)
        )));
    }
    if !allow_clear_text && !encrypted_or_local(url) {
        return Err(WalletError::ClearText {
            url: redact_url(url),
        });
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Whether requests to `url` stay off the network in clear: https, or http to a loopback host
/// (`localhost`, 127.0.0.0/8, `::1`). A name other than `localhost` is not resolved: it could
/// point anywhere.
fn encrypted_or_local(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    if u.scheme() == "https" {
        return true;
    }
    let Some(host) = u.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Checks a wallet id before it goes into a URL path.
pub fn check_wallet_id(wallet: &str) -> Result<(), WalletError> {
    if wallet.is_empty()
        || !wallet
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(WalletError::Credentials(format!(
            "--wallet {} is not a wallet id (letters, digits, - and _)",
            quoted(wallet)
        )));
    }
    Ok(())
}

/// The provider's API base and the app's credentials.
pub struct Provider {
    /// `{wallet_api_url}` (no trailing slash).
    pub api: String,
    pub app_id: String,
    app_secret: String,
    auth_key: Option<SigningKey>,
    pub timeout: Duration,
    /// Every credential in every form a provider could echo it in.
    credentials: Redactor,
    /// The requests sent, in order: `METHOD /path → outcome`.
    sent: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("api", &redact_url(&self.api))
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// Reads `APP_ID`, `APP_SECRET` and (optional until an /rpc request) the authorization key
    /// from `AUTHORIZATION_PRIVATE_KEY` (or `WALLET_AUTHORIZATION_KEY`) through `env`. Both set
    /// to different keys is refused: which one signs would be a guess.
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
        let mut found: Option<(&str, String)> = None;
        for name in AUTHORIZATION_KEY_VARS {
            let Some(v) = env(name).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            match &found {
                Some((first, prev)) if prev.trim() != v.trim() => {
                    return Err(WalletError::Credentials(format!(
                        "{first} and {name} are both set, to different keys: set one"
                    )))
                }
                Some(_) => {}
                None => found = Some((name, v)),
            }
        }
        let mut credentials = Redactor::default();
        credentials.add(&app_secret);
        credentials.add_exact(&app_secret);
        let pair = format!("{app_id}:{app_secret}");
        for engine in [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            credentials.add_exact(&engine.encode(&pair));
        }
        credentials.add_exact(&pair);
        let auth_key = found
            .map(|(name, k)| {
                // The key's text, its lines (PEM) and the part after `wallet-auth:`.
                credentials.add(&k);
                parse_authorization_key(&k)
                    .map_err(|e| WalletError::Credentials(format!("{name}: {e}")))
            })
            .transpose()?;
        if let Some(k) = &auth_key {
            use p256::pkcs8::EncodePrivateKey;
            if let Ok(der) = k.to_pkcs8_der() {
                credentials
                    .add_exact(&base64::engine::general_purpose::STANDARD.encode(der.as_bytes()));
            }
        }
        Ok(Provider {
            api: api.trim().trim_end_matches('/').to_string(),
            app_id,
            app_secret,
            auth_key,
            timeout,
            credentials,
            sent: Mutex::new(Vec::new()),
        })
    }

    /// The app secret, so callers can scrub it from anything they print.
    pub fn secret(&self) -> &str {
        &self.app_secret
    }

    /// Every credential in the forms a provider could echo it in (the secret, `APP_ID:APP_SECRET`
    /// and its base64, the authorization key's text), for callers to scrub what they print.
    pub fn credentials(&self) -> &Redactor {
        &self.credentials
    }

    /// The requests sent so far, in order, as `METHOD /path → outcome` (paths under the API
    /// base; no header, body or secret).
    pub fn sent(&self) -> Vec<String> {
        self.sent.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The wallet's address: `GET {api}/v1/wallets/{wallet}`, its `address` member. Credentialed,
    /// so asked only once a request may go out.
    pub fn wallet_address(&self, wallet: &str) -> Result<Address, WalletError> {
        check_wallet_id(wallet)?;
        let path = format!("/v1/wallets/{wallet}");
        let (status, text) = self.request(&path, None, None)?;
        let v = self.json_answer(status, &text)?;
        if let Some(id) = v.get("id").filter(|id| id.as_str() != Some(wallet)) {
            return Err(WalletError::BadAnswer(format!(
                "GET {path} answered for wallet {}, not {wallet}",
                elide_hex(&id.to_string())
            )));
        }
        v.get("address")
            .and_then(Value::as_str)
            .and_then(|a| a.parse::<Address>().ok().filter(|_| a.len() == 42))
            .ok_or_else(|| {
                WalletError::BadAnswer(format!(
                    "GET {path} has no `address` that is a 20-byte 0x address: {}",
                    elide_hex(&text.chars().take(300).collect::<String>())
                ))
            })
    }

    /// `POST {api}/v1/wallets` for an Ethereum wallet, under `policy_ids` and with
    /// `authorization_key_ids` when given (an empty list is left out of the body).
    pub fn create_wallet(
        &self,
        policy_ids: &[String],
        authorization_key_ids: &[String],
    ) -> Result<Value, WalletError> {
        let mut body = json!({"chain_type": "ethereum"});
        if !policy_ids.is_empty() {
            body["policy_ids"] = json!(policy_ids);
        }
        if !authorization_key_ids.is_empty() {
            body["authorization_key_ids"] = json!(authorization_key_ids);
        }
        let (status, text) = self.request("/v1/wallets", Some(&body), None)?;
        self.json_answer(status, &text)
    }

    /// Fails unless an authorization key is loaded: checked before anything is sent anywhere.
    pub fn require_authorization_key(&self) -> Result<&SigningKey, WalletError> {
        self.auth_key.as_ref().ok_or_else(|| {
            WalletError::Credentials(format!(
                "{} (or {}) is not set in the environment: /rpc requests must carry a \
                 wallet-authorization-signature",
                AUTHORIZATION_KEY_VARS[0], AUTHORIZATION_KEY_VARS[1]
            ))
        })
    }

    /// `POST {api}/v1/wallets/{wallet}/rpc` with `body`, signed with the authorization key; one
    /// attempt, never retried. The answer is the status and the provider's JSON; a 2xx answer
    /// that is not JSON is [`WalletError::UnreadableRpcAnswer`].
    pub fn rpc(&self, wallet: &str, body: &Value) -> Result<(u16, Value), WalletError> {
        let key = self.require_authorization_key()?;
        check_wallet_id(wallet)?;
        let path = format!("/v1/wallets/{wallet}/rpc");
        let url = format!("{}{path}", self.api);
        let signature = authorization_signature(key, &url, body, &self.app_id);
        let (status, text) = self.request(&path, Some(body), Some(&signature))?;
        if (200..300).contains(&status) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                return Ok((status, v));
            }
            return Err(WalletError::UnreadableRpcAnswer {
                status,
                reason: answer::AnswerError::NotJson,
                body: text.chars().take(2000).collect(),
            });
        }
        self.json_answer(status, &text).map(|v| (status, v))
    }

    /// One request to `{api}{path}` (POST with `body`, else GET), the app's credentials in its
    /// headers, on the client that follows no redirect and uses no clear-text proxy. The
    /// answer's text has every credential (and the request's signature) scrubbed; a 3xx is
    /// [`WalletError::Redirected`]. The request is logged in [`sent`](Self::sent).
    fn request(
        &self,
        path: &str,
        body: Option<&Value>,
        signature: Option<&str>,
    ) -> Result<(u16, String), WalletError> {
        let url = &format!("{}{path}", self.api);
        let verb = if body.is_some() { "POST" } else { "GET" };
        let log = |outcome: String| {
            if let Ok(mut sent) = self.sent.lock() {
                sent.push(format!("{verb} {path} → {outcome}"));
            }
        };
        let mut scrub = self.credentials.clone();
        if let Some(s) = signature {
            scrub.add_exact(s);
        }
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
        let client = credentialed_client();
        let mut req = match body {
            Some(b) => client.post(url).body(canonicalize(b)),
            None => client.get(url),
        }
        .timeout(self.timeout)
        .header("content-type", "application/json")
        .header("accept", "application/json");
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let answer = block_on(send_keeping_location(req, BODY_LIMIT)).map_err(|f: Failure| {
            log(format!("no answer ({})", f.reason()));
            WalletError::Unreachable {
                url: redact_url(url),
                reason: scrub.scrub(&f.reason()),
            }
        })?;
        let status = answer.status;
        if (300..400).contains(&status) {
            log(format!("HTTP {status}, a redirect, not followed"));
            let location = answer
                .location
                .map(|l| elide_hex(&scrub.scrub(&redact_url(&l))))
                .unwrap_or_else(|| "nowhere (no Location header)".into());
            return Err(WalletError::Redirected { status, location });
        }
        log(format!("HTTP {status}"));
        Ok((status, scrub.scrub(&answer.text)))
    }

    /// The JSON of an answer; a non-2xx status is [`WalletError::Refused`] with its message.
    fn json_answer(&self, status: u16, text: &str) -> Result<Value, WalletError> {
        let parsed: Option<Value> = serde_json::from_str(text).ok();
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
            // A provider's error text may echo the request: no key material from it.
            let message = elide_hex(&message);
            if status == 400 && message.contains("Invalid authorization key IDs") {
                return Err(WalletError::AuthorizationKeyIds { status, message });
            }
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
            "not a P-256 private key (PKCS#8 PEM, or base64 PKCS#8 DER with or without the \
             `wallet-auth:` prefix)"
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
    fn the_authorization_key_is_read_under_either_name() {
        let k = key();
        let b64 =
            base64::engine::general_purpose::STANDARD.encode(k.to_pkcs8_der().unwrap().as_bytes());
        let other = base64::engine::general_purpose::STANDARD.encode(
            SigningKey::from_slice(&[8u8; 32])
                .unwrap()
                .to_pkcs8_der()
                .unwrap()
                .as_bytes(),
        );
        let with = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = [("APP_ID", "a"), ("APP_SECRET", "s")]
                .iter()
                .chain(vars)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Provider::from_env("http://x", Duration::from_secs(1), move |n| {
                vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
            })
        };
        for name in AUTHORIZATION_KEY_VARS {
            let p = with(&[(name, &b64)]).unwrap();
            assert_eq!(p.require_authorization_key().unwrap(), &k, "{name}");
        }
        // The same key under both names is fine; two different keys are refused, unquoted.
        assert!(with(&[
            (AUTHORIZATION_KEY_VARS[0], &b64),
            (AUTHORIZATION_KEY_VARS[1], &b64)
        ])
        .is_ok());
        let e = with(&[
            (AUTHORIZATION_KEY_VARS[0], &b64),
            (AUTHORIZATION_KEY_VARS[1], &other),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "AUTHORIZATION_PRIVATE_KEY and WALLET_AUTHORIZATION_KEY are both set, to different keys: set one"
        );
        // Unreadable: the message names the variable, never the value.
        let e = with(&[(AUTHORIZATION_KEY_VARS[0], "wallet-auth:bm90IGEga2V5")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("AUTHORIZATION_PRIVATE_KEY: not a P-256 private key"),
            "{e}"
        );
        assert!(!e.contains("bm90"), "{e}");
        assert!(with(&[]).unwrap().require_authorization_key().is_err());
    }

    #[test]
    fn there_is_no_default_provider() {
        for flag in [None, Some(""), Some("  ")] {
            let e = api_base(flag, false).unwrap_err().to_string();
            assert!(
                e.contains("pass --wallet-api-url URL or set WALLET_API_URL"),
                "{e}"
            );
        }
        assert!(api_base(Some("api.example"), false).is_err());
        assert_eq!(
            api_base(Some(" https://api.example/ "), false).unwrap(),
            "https://api.example"
        );
    }

    /// Plain http carries the Basic credentials in clear text: only loopback, or with the
    /// opt-in. Nothing here connects anywhere (192.0.2.1 is a documentation address).
    #[test]
    fn plain_http_off_loopback_needs_the_opt_in() {
        for local in [
            "http://127.0.0.1:8080",
            "http://127.9.9.9",
            "http://localhost:3000/api",
            "http://[::1]:8080",
            "https://192.0.2.1",
        ] {
            assert!(api_base(Some(local), false).is_ok(), "{local}");
        }
        for remote in [
            "http://192.0.2.1:8080",
            "http://api.example",
            "http://localhost.example",
            "http://[2001:db8::1]",
        ] {
            let e = api_base(Some(remote), false).unwrap_err().to_string();
            assert!(
                e.contains("clear text") && e.contains("--allow-insecure-http"),
                "{e}"
            );
            assert_eq!(api_base(Some(remote), true).unwrap(), remote);
        }
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
}
