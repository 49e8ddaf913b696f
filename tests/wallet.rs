//! `chaintrace wallet`: the provider client against a local mock provider (loopback) that checks
//! what the documentation asks of every request — Basic auth, the `wallet-app-id` header, the
//! RFC 8785 canonical body, and on /rpc the authorization signature, verified with the public
//! key — and answers the documented error when it does not hold; and self-custodial sends on a
//! live anvil (a send that is mined, one the policy denies, one whose simulation reverts).

#[path = "support/anvil.rs"]
mod anvil;
#[path = "support/http.rs"]
mod http;
#[path = "support/run.rs"]
mod run;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::EncodePrivateKey;
use run::Run;
use serde_json::{json, Value};

const APP_ID: &str = "app-123";
const APP_SECRET: &str = "app-secret-9f8e7d6c5b4a";
/// anvil's first dev account.
const DEV_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const TX_HASH: &str = "0x6b2c1f0e9d8c7b6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa9988";

fn chaintrace(args: &[&str], env: &[(&str, &str)]) -> Run {
    run::cmd(args).no_cache().envs(env).run()
}

/// One request as the mock saw it, and what it found wrong.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    problems: Vec<String>,
    body: String,
}

/// A mock wallet provider on loopback. It knows the app's credentials and the public half of
/// the authorization key, and checks every request the way the documentation describes.
struct Mock {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Mock {
    fn start(public: VerifyingKey) -> Mock {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let base = Arc::new(Mutex::new(String::new()));
        let base_in = base.clone();
        let url = http::serve(move |r: &http::Request| {
            let (path, body) = (r.path.clone(), r.body.clone());
            let base = base_in.lock().unwrap().clone();
            let mut problems = Vec::new();
            let basic = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{APP_ID}:{APP_SECRET}"))
            );
            if r.header("authorization") != Some(basic.as_str()) {
                problems.push("basic auth".to_string());
            }
            if r.header("wallet-app-id") != Some(APP_ID) {
                problems.push("wallet-app-id".to_string());
            }
            if r.header("content-type") != Some("application/json") {
                problems.push("content-type".to_string());
            }
            let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if chaintrace::policy::jcs::canonicalize(&parsed) != body {
                problems.push("body is not RFC 8785 canonical".to_string());
            }
            let (status, answer) = if problems.iter().any(|p| p == "basic auth") {
                (401, json!({"error": "Invalid app ID or app secret"}))
            } else if path == "/v1/wallets" {
                (
                    200,
                    json!({"id": "w1", "address": "0x1111111111111111111111111111111111111111",
                        "chain_type": "ethereum", "policy_ids": parsed["policy_ids"]}),
                )
            } else if path == "/v1/wallets/w1/rpc" {
                let payload = chaintrace::policy::jcs::canonicalize(&json!({
                    "version": 1, "method": "POST", "url": format!("{base}{path}"),
                    "body": parsed, "headers": {"wallet-app-id": APP_ID}}));
                let valid = r
                    .header("wallet-authorization-signature")
                    .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                    .and_then(|der| Signature::from_der(&der).ok())
                    .is_some_and(|sig| public.verify(payload.as_bytes(), &sig).is_ok());
                if valid {
                    (
                        200,
                        json!({"method": "eth_sendTransaction", "data": {"hash": TX_HASH}}),
                    )
                } else {
                    problems.push("signature".to_string());
                    (400, json!({"error": "Invalid authorization key IDs"}))
                }
            } else {
                (404, json!({"error": "not found"}))
            };
            log.lock().unwrap().push(Seen {
                path,
                problems,
                body,
            });
            http::Reply::Answer(status, answer.to_string())
        });
        *base.lock().unwrap() = url.clone();
        Mock { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn auth_key() -> (SigningKey, String) {
    let key = SigningKey::from_slice(&[0x42; 32]).unwrap();
    let der = key.to_pkcs8_der().unwrap();
    let text = format!(
        "wallet-auth:{}",
        base64::engine::general_purpose::STANDARD.encode(der.as_bytes())
    );
    (key, text)
}

fn policy(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/policy/policies")
        .join(format!("{name}.json"))
        .display()
        .to_string()
}

fn write_request(anvil: &anvil::Anvil, name: &str, tx: Value) -> String {
    let dir = std::env::temp_dir().join(format!(
        "chaintrace-wallet-{}-{}",
        std::process::id(),
        anvil.port
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let body = json!({"method": "eth_sendTransaction", "caip2": "eip155:31337",
        "chain_type": "ethereum", "params": {"transaction": tx}});
    std::fs::write(&p, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    p.display().to_string()
}

fn assert_no_secrets(r: &Run, secrets: &[&str]) {
    for s in secrets {
        assert!(!r.stdout.contains(s), "secret on stdout: {}", r.stdout);
        assert!(!r.stderr.contains(s), "secret on stderr: {}", r.stderr);
    }
}

#[test]
fn provider_requests_carry_what_the_documentation_asks() {
    let (key, key_text) = auth_key();
    let mock = Mock::start(VerifyingKey::from(&key));
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("WALLET_AUTHORIZATION_KEY", key_text.as_str()),
        ("WALLET_API_URL", mock.url.as_str()),
    ];
    // create
    let r = chaintrace(
        &["wallet", "create", "--policy-id", "p1", "--policy-id", "p2"],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("wallet w1"), "{}", r.stdout);
    assert!(r
        .stdout
        .contains("address 0x1111111111111111111111111111111111111111"));
    let seen = mock.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/wallets");
    assert!(seen[0].problems.is_empty(), "{:?}", seen[0]);
    assert_eq!(
        seen[0].body,
        r#"{"chain_type":"ethereum","policy_ids":["p1","p2"]}"#
    );
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);

    // rpc: pre-flight on anvil first, then the signed request.
    let a = anvil::Anvil::start();
    let sender = format!("{:?}", a.sender());
    let req = write_request(
        &a,
        "send.json",
        json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x2386f26fc10000"}),
    );
    let any = policy("allow-any-send");
    let args = [
        "wallet",
        "rpc",
        "--wallet",
        "w1",
        "--policy",
        &any,
        "--request",
        &req,
        "--rpc-url",
        &a.url,
    ];
    let r = chaintrace(&args, &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), TX_HASH);
    let seen = mock.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].path, "/v1/wallets/w1/rpc");
    assert!(seen[1].problems.is_empty(), "{:?}", seen[1]);
    assert!(seen[1]
        .body
        .starts_with(r#"{"caip2":"eip155:31337","chain_type":"ethereum""#));
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);

    // Another key than the one the provider knows: its documented error, exit 2.
    let (_, other) = {
        let k = SigningKey::from_slice(&[0x43; 32]).unwrap();
        let der = k.to_pkcs8_der().unwrap();
        (
            k,
            base64::engine::general_purpose::STANDARD.encode(der.as_bytes()),
        )
    };
    let mut bad_env = env;
    bad_env[2] = ("WALLET_AUTHORIZATION_KEY", other.as_str());
    let r = chaintrace(&args, &bad_env);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("HTTP 400: Invalid authorization key IDs"),
        "{}",
        r.stderr
    );
    assert_eq!(mock.seen().last().unwrap().problems, vec!["signature"]);
    assert_no_secrets(&r, &[APP_SECRET, &other]);

    // A wrong app secret: the provider's 401, exit 2, the secret never printed.
    let mut wrong = env;
    wrong[1] = ("APP_SECRET", "wrong-secret-000111");
    let r = chaintrace(&["wallet", "create", "--policy-id", "p1"], &wrong);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("HTTP 401"), "{}", r.stderr);
    assert_no_secrets(&r, &["wrong-secret-000111"]);

    // Denied by the policy: exit 6 and nothing reaches the provider.
    let before = mock.seen().len();
    let deny = policy("deny-only");
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &deny,
            "--request",
            &req,
            "--rpc-url",
            &a.url,
        ],
        &env,
    );
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(
        r.stderr.contains("not sent: the policy denies the request"),
        "{}",
        r.stderr
    );
    assert_eq!(mock.seen().len(), before);

    // No authorization key: refused before anything is sent.
    let r = chaintrace(
        &args,
        &env[..2]
            .iter()
            .chain(&env[3..])
            .copied()
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("WALLET_AUTHORIZATION_KEY is not set"),
        "{}",
        r.stderr
    );
    assert_eq!(mock.seen().len(), before);
}

/// `wallet send --policy POLICY --request REQ --rpc-url <anvil> EXTRA` with `env`.
fn send(a: &anvil::Anvil, policy: &str, req: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let args = [
        &[
            "wallet",
            "send",
            "--policy",
            policy,
            "--request",
            req,
            "--rpc-url",
            &a.url,
        ][..],
        extra,
    ]
    .concat();
    chaintrace(&args, env)
}

fn nonce(a: &anvil::Anvil) -> u64 {
    anvil::parse_u64(&a.rpc("eth_getTransactionCount", json!([a.sender(), "latest"])))
}

#[test]
fn self_custodial_sends_on_anvil() {
    let a = anvil::Anvil::start();
    let reverter = a.deploy(&anvil::creation_code("Reverter"));
    let sender = format!("{:?}", a.sender());
    let any = policy("allow-any-send");
    let env = [("PRIVATE_KEY", DEV_KEY)];
    let key_hex = DEV_KEY.trim_start_matches("0x");

    // Allowed and simulated fine: signed locally, broadcast, mined.
    let before = nonce(&a);
    let req = write_request(
        &a,
        "send.json",
        json!({"to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x2386f26fc10000"}),
    );
    let r = send(&a, &any, &req, &[], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let hash = r.stdout.trim().to_string();
    let receipt = a.receipt(hash.parse().expect("a tx hash on stdout"));
    assert_eq!(receipt["status"], json!("0x1"));
    assert_eq!(
        receipt["from"].as_str().unwrap().to_lowercase(),
        sender.to_lowercase()
    );
    assert_eq!(nonce(&a), before + 1);
    assert_no_secrets(&r, &[key_hex]);

    // Denied: nothing broadcast.
    let deny = policy("deny-only");
    let r = send(&a, &deny, &req, &[], &env);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(nonce(&a), before + 1);
    assert_no_secrets(&r, &[key_hex]);

    // The simulation reverts: not sent without --allow-revert.
    let data = format!(
        "0x{}",
        alloy_primitives::hex::encode(anvil::selector("failString()"))
    );
    let req = write_request(
        &a,
        "revert.json",
        json!({"to": format!("{reverter:#x}"), "value": "0x0", "data": data, "gas_limit": "0x30d40"}),
    );
    let r = send(&a, &any, &req, &[], &env);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("not sent: the simulation reverts"),
        "{}",
        r.stderr
    );
    assert_eq!(nonce(&a), before + 1);
    // With --allow-revert it goes out and fails on chain, as simulated.
    let r = send(&a, &any, &req, &["--allow-revert"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let receipt = a.receipt(r.stdout.trim().parse().unwrap());
    assert_eq!(receipt["status"], json!("0x0"));
    assert_eq!(nonce(&a), before + 2);

    // A `from` that is not the key's address is refused before signing.
    let req = write_request(
        &a,
        "other-from.json",
        json!({"from": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "to": sender, "value": "0x1"}),
    );
    let r = send(&a, &any, &req, &[], &env);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("refusing to sign"), "{}", r.stderr);
    assert_eq!(nonce(&a), before + 2);
    // No key at all.
    let r = send(&a, &any, &req, &[], &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("PRIVATE_KEY is not set"), "{}", r.stderr);
}

#[test]
fn self_custodial_send_json_prints_json_only_and_bad_keys_are_not_echoed() {
    let a = anvil::Anvil::start();
    let any = policy("allow-any-send");
    let before = nonce(&a);
    let req = write_request(
        &a,
        "send-json.json",
        json!({"to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1"}),
    );
    let r = send(&a, &any, &req, &["--json"], &[("PRIVATE_KEY", DEV_KEY)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // stdout is one JSON document: the hash, the sender, the nonce and gas limit used.
    let sent: Value = serde_json::from_str(&r.stdout).expect("JSON only on stdout");
    let receipt = a.receipt(sent["hash"].as_str().unwrap().parse().unwrap());
    assert_eq!(receipt["status"], json!("0x1"));
    assert_eq!(sent["nonce"], json!(before));
    assert_eq!(
        sent["from"].as_str().unwrap().to_lowercase(),
        format!("{:?}", a.sender()).to_lowercase()
    );
    assert!(sent["gasLimit"].as_u64().unwrap() >= 21_000);
    assert_no_secrets(&r, &[DEV_KEY.trim_start_matches("0x")]);
    assert_eq!(nonce(&a), before + 1);

    // A key that is not one: refused (exit 1), nothing sent, and the text is not echoed.
    let bad = format!("0x{}", "zq".repeat(32));
    let r = send(
        &a,
        &any,
        &req,
        &["--json"],
        &[("PRIVATE_KEY", bad.as_str())],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("PRIVATE_KEY is not"), "{}", r.stderr);
    assert_no_secrets(&r, &[&bad[2..]]);
    assert_eq!(nonce(&a), before + 1);
}
