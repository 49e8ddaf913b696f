//! `chaintrace wallet`: the provider client against a local mock provider (loopback) that checks
//! what the documentation asks of every request — Basic auth, the `wallet-app-id` header, the
//! RFC 8785 canonical body, and on /rpc the authorization signature, verified with the public
//! key — and answers the documented error when it does not hold, or each method's answer when it
//! does; and self-custodial requests on a live anvil behind a loopback node that counts every
//! JSON-RPC method it forwards (a send that is mined, one the policy denies, one whose
//! simulation reverts; a sign-only request that never reaches `eth_sendRawTransaction`; a
//! message signed without any node).

use crate::{anvil, http, run};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy_consensus::transaction::SignerRecoverable;
use alloy_consensus::{SignableTransaction, Transaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_primitives::{Address, Bytes, Signature as EcdsaSignature, TxKind, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
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

fn dev_signer() -> PrivateKeySigner {
    DEV_KEY.parse().unwrap()
}

/// One request as the mock saw it, and what it found wrong.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    problems: Vec<String>,
    body: String,
}

/// How the mock provider answers a valid /rpc request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// Each method's documented answer, made with anvil's first dev key (the wallet's).
    Documented,
    /// 200 with `{"method": …, "data": {}}`: accepted, but nothing said about what was done.
    EmptyData,
    /// eth_signTransaction: a transaction signed with one wei more than was asked.
    Tampered,
}

/// The provider's answer to `/rpc` `body`, as a Privy-like provider gives it: the wallet (anvil's
/// dev account 0) signs with alloy, independently of chaintrace's own signing code.
fn provider_answer(body: &Value, how: Answer) -> Value {
    let method = body["method"].as_str().unwrap_or_default();
    if how == Answer::EmptyData {
        return json!({"method": method, "data": {}});
    }
    let signer = dev_signer();
    match method {
        "eth_sendTransaction" => {
            json!({"method": method, "data": {"hash": TX_HASH, "caip2": body["caip2"]}})
        }
        "eth_signTransaction" => {
            let tx = &body["params"]["transaction"];
            let q = |v: &Value| {
                U256::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
            };
            let chain_id = tx["chain_id"]
                .as_u64()
                .unwrap_or_else(|| body["caip2"].as_str().unwrap()[7..].parse().unwrap());
            let mut value = q(&tx["value"]);
            if how == Answer::Tampered {
                value += U256::from(1);
            }
            let t = TxEip1559 {
                chain_id,
                nonce: 0,
                gas_limit: 21_000,
                max_fee_per_gas: 20_000_000_000,
                max_priority_fee_per_gas: 1_000_000_000,
                to: TxKind::Call(tx["to"].as_str().unwrap().parse().unwrap()),
                value,
                access_list: Default::default(),
                input: Bytes::new(),
            };
            let sig = signer.sign_hash_sync(&t.signature_hash()).unwrap();
            let env: TxEnvelope = t.into_signed(sig).into();
            let raw = Bytes::from(env.encoded_2718());
            json!({"method": method, "data": {"signed_transaction": raw, "encoding": "rlp"}})
        }
        "personal_sign" => {
            let p = &body["params"];
            let text = p["message"].as_str().unwrap();
            let msg = if p["encoding"] == "hex" {
                alloy_primitives::hex::decode(text).unwrap()
            } else {
                text.as_bytes().to_vec()
            };
            let sig = signer.sign_message_sync(&msg).unwrap();
            json!({"method": method, "data": {"signature": Bytes::from(sig.as_bytes().to_vec()), "encoding": "hex"}})
        }
        _ => json!({"error": "unknown method"}),
    }
}

/// A mock wallet provider on loopback. It knows the app's credentials and the public half of
/// the authorization key, and checks every request the way the documentation describes.
struct Mock {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    answer: Arc<Mutex<Answer>>,
}

impl Mock {
    fn start(public: VerifyingKey) -> Mock {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let answer = Arc::new(Mutex::new(Answer::Documented));
        let how = answer.clone();
        let base = Arc::new(Mutex::new(String::new()));
        let base_in = base.clone();
        let wallet_address = format!("{:?}", dev_signer().address());
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
            if r.method == "GET" {
                if !body.is_empty() {
                    problems.push("a GET with a body".to_string());
                }
            } else if chaintrace::policy::jcs::canonicalize(&parsed) != body {
                problems.push("body is not RFC 8785 canonical".to_string());
            }
            let (status, answer) = if problems.iter().any(|p| p == "basic auth") {
                (401, json!({"error": "Invalid app ID or app secret"}))
            } else if r.method == "GET" && path == "/v1/wallets/w1" {
                // Asked only once the body and the policy allow a request without `from`.
                (
                    200,
                    json!({"id": "w1", "address": wallet_address, "chain_type": "ethereum",
                        "policy_ids": [], "created_at": 1741834854578u64}),
                )
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
                    (200, provider_answer(&parsed, *how.lock().unwrap()))
                } else {
                    problems.push("signature".to_string());
                    (400, json!({"error": "Invalid authorization key IDs"}))
                }
            } else {
                (404, json!({"error": "not found"}))
            };
            log.lock().unwrap().push(Seen {
                method: r.method.clone(),
                path,
                problems,
                body,
            });
            http::Reply::Answer(status, answer.to_string())
        });
        *base.lock().unwrap() = url.clone();
        Mock { url, seen, answer }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn answer_with(&self, how: Answer) {
        *self.answer.lock().unwrap() = how;
    }
}

/// A node in front of anvil that forwards every request and counts each JSON-RPC method (in
/// batches too), so a test can prove what never reached the node.
struct CountingNode {
    url: String,
    /// Every JSON-RPC call forwarded: `{method, params}`.
    calls: Arc<Mutex<Vec<Value>>>,
}

impl CountingNode {
    fn before(upstream: &str) -> CountingNode {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let log = calls.clone();
        let upstream = upstream.to_string();
        let url = http::serve(move |r: &http::Request| {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let batch = match v {
                Value::Array(items) => items,
                one => vec![one],
            };
            for c in &batch {
                log.lock()
                    .unwrap()
                    .push(json!({"method": c["method"], "params": c["params"]}));
            }
            match chaintrace::rpc::transport::post_json(
                &upstream,
                &[],
                r.body.clone(),
                Duration::from_secs(30),
                1 << 30,
            ) {
                Ok((status, text)) => http::Reply::Answer(status, text),
                Err(e) => http::Reply::Answer(502, json!({"error": e.reason()}).to_string()),
            }
        });
        CountingNode { url, calls }
    }

    fn count(&self, method: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c["method"] == method)
            .count()
    }

    /// Calls asking for the next nonce to sign with (`eth_getTransactionCount [addr, "pending"]`;
    /// the simulation's state reads ask at a block number).
    fn pending_nonce_asks(&self) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c["method"] == "eth_getTransactionCount" && c["params"][1] == "pending")
            .count()
    }

    fn total(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

/// Writes `v` as pretty JSON into this test process's scratch directory.
fn write_json(name: &str, v: &Value) -> String {
    let dir = std::env::temp_dir().join(format!("chaintrace-wallet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p.display().to_string()
}

/// A policy with one unconditional ALLOW rule per method in `methods`.
fn allow(name: &str, methods: &[&str]) -> String {
    let rules: Vec<Value> = methods
        .iter()
        .map(|m| json!({"name": format!("allow {m}"), "method": m, "conditions": [], "action": "ALLOW"}))
        .collect();
    write_json(
        name,
        &json!({"version": "1.0", "name": name, "chain_type": "ethereum", "rules": rules}),
    )
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
        r.stderr.contains(
            "HTTP 400: Invalid authorization key IDs — create the wallet first (`chaintrace \
             wallet create`) and pass its id (walletId) as --wallet; an authorization key id \
             must be the id the provider gave when the key's public key was registered, not the \
             key id the dashboard shows; or retry `chaintrace wallet create` without \
             --authorization-key-id (a wallet no authorization key may sign for)"
        ),
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
        r.stderr.contains(
            "AUTHORIZATION_PRIVATE_KEY (or WALLET_AUTHORIZATION_KEY) is not set in the environment"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(mock.seen().len(), before);

    // The documented name, AUTHORIZATION_PRIVATE_KEY, signs the same way.
    let documented = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", mock.url.as_str()),
    ];
    let r = chaintrace(&args, &documented);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("{TX_HASH}\n"));
    let last = mock.seen().last().unwrap().clone();
    assert_eq!(last.path, "/v1/wallets/w1/rpc");
    assert!(last.problems.is_empty(), "{last:?}");
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);

    // A wallet with no policy, and one with authorization keys.
    let r = chaintrace(&["wallet", "create"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        mock.seen().last().unwrap().body,
        r#"{"chain_type":"ethereum"}"#
    );
    let r = chaintrace(
        &[
            "wallet",
            "create",
            "--authorization-key-id",
            "k1",
            "--authorization-key-id",
            "k2",
            "--policy-id",
            "p1",
        ],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        mock.seen().last().unwrap().body,
        r#"{"authorization_key_ids":["k1","k2"],"chain_type":"ethereum","policy_ids":["p1"]}"#
    );
}

/// The documentation's own /rpc body — `{method, caip2, params: {transaction: {to, value,
/// chain_id}}}`, no `from` — goes out as written. The body and the policy are judged first,
/// offline: a request they refuse is refused unsent (exit 7, 6), with zero requests at the
/// provider. One they allow is simulated as the wallet: `--from`; else the address `wallet
/// create` recorded for the id; else the provider's answer to one credentialed GET. stderr
/// lists every request sent to the provider.
#[test]
fn the_documented_body_without_from_is_judged_before_any_provider_request() {
    let (key, key_text) = auth_key();
    let mock = Mock::start(VerifyingKey::from(&key));
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", mock.url.as_str()),
    ];
    let a = anvil::Anvil::start();
    let doc_body = |caip2: &str| {
        json!({"method": "eth_sendTransaction", "caip2": caip2,
            "params": {"transaction": {"to": "0xE3070d3e4309afA3bC9a6b057685743CF42da77C",
                                       "value": "0x2386F26FC10000", "chain_id": 31337}}})
    };
    let req = write_json("doc-body.json", &doc_body("eip155:31337"));
    // The same body for another chain than the node's: an invalid request.
    let wrong_chain = write_json("doc-body-chain1.json", &doc_body("eip155:1"));
    let any = policy("allow-any-send");
    let deny = policy("deny-only");
    let rpc_args = |policy: &str, req: &str, extra: &[&str]| -> Vec<String> {
        [
            &[
                "wallet",
                "rpc",
                "--wallet",
                "w1",
                "--policy",
                policy,
                "--request",
                req,
                "--rpc-url",
                &a.url,
            ][..],
            extra,
        ]
        .concat()
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let rpc = |policy: &str, req: &str, extra: &[&str]| {
        let args = rpc_args(policy, req, extra);
        chaintrace(&args.iter().map(String::as_str).collect::<Vec<_>>(), &env)
    };
    let paths = |seen: &[Seen]| -> Vec<(String, String)> {
        seen.iter()
            .map(|s| (s.method.clone(), s.path.clone()))
            .collect()
    };
    // Denied by the policy, and invalid: their verdicts, and nothing reaches the provider.
    let r = rpc(&deny, &req, &[]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(
        r.stderr.contains("not sent: the policy denies the request"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.ends_with("provider requests: none\n"),
        "{}",
        r.stderr
    );
    let r = rpc(&any, &wrong_chain, &[]);
    assert_eq!(r.code, 7, "{}", r.stderr);
    assert!(
        r.stderr.contains("not sent: the request body is invalid"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.ends_with("provider requests: none\n"),
        "{}",
        r.stderr
    );
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);
    let seen = mock.seen();
    assert!(
        seen.is_empty(),
        "the provider was asked before a verdict: {seen:?}"
    );

    // Allowed, no sender: the wallet's address from one GET, then the simulation, then the
    // one /rpc request, the body as written.
    let dev = format!("{}", dev_signer().address());
    let r = rpc(&any, &req, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("{TX_HASH}\n"));
    let seen = mock.seen();
    assert_eq!(
        paths(&seen),
        [
            ("GET".to_string(), "/v1/wallets/w1".to_string()),
            ("POST".to_string(), "/v1/wallets/w1/rpc".to_string())
        ]
    );
    assert!(seen.iter().all(|s| s.problems.is_empty()), "{seen:?}");
    assert!(
        r.stderr.contains(&format!(
            "sender {dev}: wallet w1's address, from the provider (the request has no `from`)"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.ends_with(
            "provider request: GET /v1/wallets/w1 → HTTP 200\n\
             provider request: POST /v1/wallets/w1/rpc → HTTP 200\n"
        ),
        "{}",
        r.stderr
    );
    // The sender is found after the verdict's body and policy checks, before the simulation,
    // whose lines name it.
    let get_line = r.stderr.find("sender ").unwrap();
    let verdict_line = r.stderr.find("verdict").unwrap();
    assert!(get_line < verdict_line, "{}", r.stderr);
    assert_eq!(
        seen[1].body,
        r#"{"caip2":"eip155:31337","method":"eth_sendTransaction","params":{"transaction":{"chain_id":31337,"to":"0xE3070d3e4309afA3bC9a6b057685743CF42da77C","value":"0x2386F26FC10000"}}}"#
    );
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);

    // A wallet the provider does not know: its answer to the GET, exit 2, and no /rpc request.
    let before = mock.seen().len();
    let args = rpc_args(&any, &req, &[]);
    let args: Vec<&str> = args
        .iter()
        .map(|a| if a == "w1" { "w2" } else { a.as_str() })
        .collect();
    let r = chaintrace(&args, &env);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "provider request: GET /v1/wallets/w2 → HTTP 404\nerror: the request has no `from` \
         and wallet w2's address is unknown (pass --from WALLET_ADDRESS): the wallet provider \
         refused the request: HTTP 404: not found; the request was not sent\n"
    );
    assert_eq!(
        paths(&mock.seen()[before..]),
        [("GET".to_string(), "/v1/wallets/w2".to_string())]
    );

    // --from: no GET, the one /rpc request.
    let before = mock.seen().len();
    let r = rpc(&any, &req, &["--from", &dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("{TX_HASH}\n"));
    assert_eq!(
        paths(&mock.seen()[before..]),
        [("POST".to_string(), "/v1/wallets/w1/rpc".to_string())]
    );

    // `wallet create` records the wallet's address (the mock's w1 is 0x1111…, funded here so
    // that the simulation succeeds); `wallet rpc` then needs no GET.
    let cache =
        std::env::temp_dir().join(format!("chaintrace-wallet-cache-{}", std::process::id()));
    let cache = cache.display().to_string();
    let recorded = "0x1111111111111111111111111111111111111111";
    chaintrace::rpc::transport::post_json(
        &a.url,
        &[],
        json!({"jsonrpc": "2.0", "id": 1, "method": "anvil_setBalance",
            "params": [recorded, "0xde0b6b3a7640000"]})
        .to_string(),
        Duration::from_secs(10),
        1 << 20,
    )
    .unwrap();
    let with_cache = |args: &[&str]| {
        run::cmd(args)
            .envs(&env)
            .env("CHAINTRACE_CACHE_DIR", &cache)
            .run()
    };
    let r = with_cache(&["wallet", "create"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "provider request: POST /v1/wallets → HTTP 200\n");
    let before = mock.seen().len();
    let args = rpc_args(&any, &req, &[]);
    let r = with_cache(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "sender 0x1111111111111111111111111111111111111111: wallet w1's address, as \
             `wallet create` recorded it"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        paths(&mock.seen()[before..]),
        [("POST".to_string(), "/v1/wallets/w1/rpc".to_string())]
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// A loopback server that counts the requests it gets and answers 502: a proxy or a host the
/// provider client must never reach.
fn never_reached() -> (String, Arc<Mutex<Vec<String>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let log = got.clone();
    let url = http::serve(move |r: &http::Request| {
        log.lock()
            .unwrap()
            .push(format!("{} {} {:?}", r.method, r.path, r.headers));
        http::Reply::Answer(502, json!({"error": "never reached"}).to_string())
    });
    (url, got)
}

/// A provider that redirects is not followed: exit 2 naming the redirect's target (redacted),
/// and the target never gets the credentials or the signed body.
#[test]
fn provider_redirects_are_not_followed() {
    let (_, key_text) = auth_key();
    let (elsewhere, got) = never_reached();
    let target = format!(
        "{}/v1/wallets?token=tok-5e5e5e5e5e",
        elsewhere.replace("http://", "http://user:pw-7a7a7a7a@")
    );
    let shown = format!("{elsewhere}/v1/wallets?token=***");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let redirecting = http::serve(move |r: &http::Request| {
        log.lock().unwrap().push(format!("{} {}", r.method, r.path));
        http::Reply::Redirect(307, target.clone())
    });
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", redirecting.as_str()),
    ];
    let r = chaintrace(&["wallet", "create"], &env);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "provider request: POST /v1/wallets → HTTP 307, a redirect, not followed\n\
             error: the wallet provider answered HTTP 307, a redirect to {shown}: not followed, \
             nothing was sent there (the request carries APP_ID:APP_SECRET); if the provider \
             has moved, pass its new address as --wallet-api-url\n"
        )
    );
    // A signed /rpc request (a message: no node needed) is not re-sent either.
    let req = write_json(
        "redirect-ps.json",
        &json!({"method": "personal_sign", "caip2": "eip155:1329", "params": {"message": "hi"}}),
    );
    let msg_policy = allow("redirect-policy.json", &["personal_sign"]);
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &msg_policy,
            "--request",
            &req,
        ],
        &env,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("a redirect to {shown}: not followed")),
        "{}",
        r.stderr
    );
    assert_no_secrets(
        &r,
        &[APP_SECRET, &key_text, "pw-7a7a7a7a", "tok-5e5e5e5e5e"],
    );
    assert_eq!(
        *seen.lock().unwrap(),
        ["POST /v1/wallets", "POST /v1/wallets/w1/rpc"]
    );
    assert_eq!(*got.lock().unwrap(), Vec::<String>::new());
}

/// A provider's error text that echoes the request's headers (Basic credentials, the
/// authorization signature) or the key is printed with every credential hidden, in any form.
#[test]
fn provider_answers_echoing_credentials_are_scrubbed() {
    let (_, key_text) = auth_key();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{APP_ID}:{APP_SECRET}"));
    let basic_url =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{APP_ID}:{APP_SECRET}"));
    let echoed_key = key_text.clone();
    let signature = Arc::new(Mutex::new(String::new()));
    let sig_seen = signature.clone();
    let url = http::serve(move |r: &http::Request| {
        let sig = r
            .header("wallet-authorization-signature")
            .unwrap_or_default()
            .to_string();
        *sig_seen.lock().unwrap() = sig.clone();
        let auth = r.header("authorization").unwrap_or_default();
        let b64 = auth.trim_start_matches("Basic ");
        let decoded = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_default(),
        )
        .unwrap_or_default();
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&decoded);
        let message = format!(
            "rejected authorization: {auth} ({url_safe}, {decoded}); signature {sig}; \
             did you mean key {echoed_key}?"
        );
        http::Reply::Answer(401, json!({ "error": message }).to_string())
    });
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", url.as_str()),
    ];
    let r = chaintrace(&["wallet", "create"], &env);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "error: the wallet provider refused the request: HTTP 401: rejected authorization: \
             Basic *** (***, ***); signature ; did you mean key ***?"
        ),
        "{}",
        r.stderr
    );
    let req = write_json(
        "echo-ps.json",
        &json!({"method": "personal_sign", "caip2": "eip155:1329", "params": {"message": "hi"}}),
    );
    let msg_policy = allow("echo-policy.json", &["personal_sign"]);
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &msg_policy,
            "--request",
            &req,
        ],
        &env,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let sig = signature.lock().unwrap().clone();
    assert!(sig.len() > 40, "{sig}");
    assert!(
        r.stderr
            .contains("Basic *** (***, ***); signature ***; did you mean key ***?"),
        "{}",
        r.stderr
    );
    let key_b64 = key_text.trim_start_matches("wallet-auth:");
    assert_no_secrets(
        &r,
        &[
            APP_SECRET,
            &basic,
            &basic_url,
            &sig,
            key_b64,
            &format!("{APP_ID}:"),
        ],
    );
}

/// `HTTP_PROXY`/`ALL_PROXY` would see the Basic credentials of a plain http request: the
/// provider client ignores them (and an `HTTPS_PROXY`, for an http address).
#[test]
fn provider_requests_ignore_clear_text_proxies() {
    let (key, key_text) = auth_key();
    let mock = Mock::start(VerifyingKey::from(&key));
    let (proxy, got) = never_reached();
    let r = run::cmd(&["wallet", "create"])
        .no_cache()
        .envs(&[
            ("APP_ID", APP_ID),
            ("APP_SECRET", APP_SECRET),
            ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
            ("WALLET_API_URL", mock.url.as_str()),
            ("HTTP_PROXY", proxy.as_str()),
            ("http_proxy", proxy.as_str()),
            ("ALL_PROXY", proxy.as_str()),
            ("all_proxy", proxy.as_str()),
            ("HTTPS_PROXY", proxy.as_str()),
        ])
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("wallet w1\n"), "{}", r.stdout);
    assert_eq!(*got.lock().unwrap(), Vec::<String>::new());
    assert_eq!(mock.seen().len(), 1);
}

/// User info in the provider's address would be a second set of credentials: refused before
/// anything is sent, without echoing it; and `--help` never shows WALLET_API_URL's value.
#[test]
fn provider_addresses_with_user_info_are_refused_and_never_shown() {
    let (key, key_text) = auth_key();
    let mock = Mock::start(VerifyingKey::from(&key));
    let with_userinfo = mock.url.replace("http://", "http://admin:pa55-9c9c9c@");
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", with_userinfo.as_str()),
    ];
    let r = chaintrace(&["wallet", "create"], &env);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "error: --wallet-api-url {} carries user info (USER:PASSWORD@): the provider's \
             credentials are APP_ID and APP_SECRET in the environment; remove it from the \
             address (nothing was sent)\n",
            mock.url
        )
    );
    assert_no_secrets(&r, &["pa55-9c9c9c", "admin"]);
    assert!(mock.seen().is_empty(), "{:?}", mock.seen());
    for sub in ["create", "rpc"] {
        let r = chaintrace(&["wallet", sub, "--help"], &env);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("[env: WALLET_API_URL]"), "{}", r.stdout);
        assert_no_secrets(&r, &["pa55-9c9c9c", "admin", APP_SECRET]);
    }
}

/// A plain http:// provider off loopback would carry APP_ID:APP_SECRET in clear text: refused
/// from the URL alone, before any connection (192.0.2.1 is a documentation address; had a
/// connection been tried, the answer would be "cannot reach", exit 2).
#[test]
fn plain_http_provider_off_loopback_is_refused_before_any_connection() {
    let (_, key_text) = auth_key();
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
    ];
    let req = write_json(
        "clear-text.json",
        &json!({"method": "personal_sign", "caip2": "eip155:1329",
            "params": {"message": "hi"}}),
    );
    let msg_policy = allow("clear-text-policy.json", &["personal_sign"]);
    for args in [
        vec!["wallet", "create"],
        vec![
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &msg_policy,
            "--request",
            &req,
        ],
    ] {
        let args = [
            &args[..],
            &[
                "--wallet-api-url",
                "http://192.0.2.1:8080",
                "--provider-timeout",
                "1",
            ],
        ]
        .concat();
        let started = std::time::Instant::now();
        let r = chaintrace(&args, &env);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "--wallet-api-url http://192.0.2.1:8080 is plain http on a host other than \
                 loopback: APP_ID:APP_SECRET would be sent in clear text; use https, or pass \
                 --allow-insecure-http to accept that (nothing was sent)"
            ),
            "{}",
            r.stderr
        );
        assert!(!r.stderr.contains("cannot reach"), "{}", r.stderr);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(r.stdout, "");
    }
    // The help says what the opt-in costs, and that the REST spelling of the key ids is an
    // assumption.
    let r = chaintrace(&["wallet", "create", "--help"], &[]);
    assert!(r.stdout.contains("--allow-insecure-http"), "{}", r.stdout);
    assert!(r.stdout.contains("clear text"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("`authorization_key_ids`; that snake_case spelling is an assumption"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("not the dashboard's key id"),
        "{}",
        r.stdout
    );
}

/// `wallet rpc` reads each method's answer: the signed transaction of eth_signTransaction
/// (decoded and held to the request), the signature of personal_sign (recovered; no node
/// needed). A 2xx answer without what its method promises is exit 2, says the provider may
/// have acted, shows the answer, and is sent once.
#[test]
fn provider_answers_are_read_per_method() {
    let (key, key_text) = auth_key();
    let mock = Mock::start(VerifyingKey::from(&key));
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
        ("WALLET_API_URL", mock.url.as_str()),
    ];
    let a = anvil::Anvil::start();
    let node = CountingNode::before(&a.url);
    let dev = dev_signer().address();
    let to: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
        .parse()
        .unwrap();
    let sign_req = write_json(
        "rpc-sign.json",
        &json!({"method": "eth_signTransaction", "caip2": "eip155:31337",
            "params": {"transaction": {"to": to, "value": "0x2386f26fc10000", "chain_id": 31337}}}),
    );
    let sign_only = policy("sign-only");
    let dev_text = format!("{dev}");
    let rpc = |req: &str, extra: &[&str]| {
        let args = [
            &[
                "wallet",
                "rpc",
                "--wallet",
                "w1",
                "--policy",
                &sign_only,
                "--request",
                req,
                "--rpc-url",
                &node.url,
                "--from",
                &dev_text,
            ][..],
            extra,
        ]
        .concat();
        chaintrace(&args, &env)
    };

    // eth_signTransaction: the signed transaction on stdout, decoded here with alloy.
    let r = rpc(&sign_req, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let raw = alloy_primitives::hex::decode(r.stdout.trim()).expect("0x hex on stdout");
    let tx = TxEnvelope::decode_2718(&mut raw.as_slice()).unwrap();
    assert_eq!(tx.recover_signer().unwrap(), dev);
    assert_eq!(tx.to(), Some(to));
    assert_eq!(tx.value(), U256::from(10_000_000_000_000_000u64));
    assert_eq!(tx.chain_id(), Some(31337));
    assert!(
        r.stderr.contains(&format!("signed by {dev}, not sent")),
        "{}",
        r.stderr
    );
    assert_eq!(node.count("eth_sendRawTransaction"), 0);
    assert_eq!(node.count("eth_sendTransaction"), 0);
    // --json: the provider's answer, JSON only.
    let r = rpc(&sign_req, &["--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let answer: Value = serde_json::from_str(&r.stdout).expect("JSON only on stdout");
    assert_eq!(answer["method"], "eth_signTransaction");
    assert!(answer["data"]["signed_transaction"]
        .as_str()
        .unwrap()
        .starts_with("0x02"));

    // A policy that allows only sends denies the same request (the policy is read for the
    // request's method): exit 6, nothing reaches the provider.
    let before = mock.seen().len();
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &policy("allow-any-send"),
            "--request",
            &sign_req,
            "--rpc-url",
            &node.url,
        ],
        &env,
    );
    assert_eq!(r.code, 6, "{}", r.stderr);
    let after: Vec<(String, String)> = mock.seen()[before..]
        .iter()
        .map(|s| (s.method.clone(), s.path.clone()))
        .collect();
    assert_eq!(after, []);

    // The provider signs something else than was asked: exit 2, nothing on stdout.
    mock.answer_with(Answer::Tampered);
    let r = rpc(&sign_req, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("the signed transaction is not the one requested: value is 10000000000000001, the request's 10000000000000000"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("answered HTTP 200 to the /rpc request, so it may have signed or sent it"),
        "{}",
        r.stderr
    );

    // 2xx without the method's answer: exit 2, the raw answer shown, one request only.
    mock.answer_with(Answer::EmptyData);
    let before = mock.seen().len();
    let r = rpc(&sign_req, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains(r#"the wallet provider answered HTTP 200 to the /rpc request, so it may have signed or sent it, but it has no data.signed_transaction; its answer: {"data":{},"method":"eth_signTransaction"} — not retried: check the wallet before sending again"#),
        "{}",
        r.stderr
    );
    let rpc_posts = mock.seen()[before..]
        .iter()
        .filter(|s| s.path == "/v1/wallets/w1/rpc")
        .count();
    assert_eq!(rpc_posts, 1, "sent once, never retried");
    mock.answer_with(Answer::Documented);

    // personal_sign: no node at all; the signature recovers to the wallet's address. The
    // documentation's body has no caip2, which the provider requires on every /rpc request:
    // --chain fills it (the policy names a chain type, not a chain).
    let msg_policy = allow("ps-policy.json", &["personal_sign"]);
    for (message, encoding, bytes) in [
        ("hello agent", "utf-8", b"hello agent".to_vec()),
        ("0x68656c6c6f", "hex", b"hello".to_vec()),
    ] {
        let req = write_json(
            &format!("ps-{encoding}.json"),
            &json!({"method": "personal_sign", "params": {"message": message, "encoding": encoding}}),
        );
        let r = chaintrace(
            &[
                "wallet",
                "rpc",
                "--wallet",
                "w1",
                "--policy",
                &msg_policy,
                "--request",
                &req,
                "--chain",
                "1329",
            ],
            &env,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let sig = alloy_primitives::hex::decode(r.stdout.trim()).unwrap();
        assert_eq!(sig.len(), 65);
        let recovered = EcdsaSignature::from_raw(&sig)
            .unwrap()
            .recover_address_from_msg(&bytes)
            .unwrap();
        assert_eq!(recovered, dev);
        assert!(
            r.stderr
                .contains(&format!("signed by {dev} (recovered from the signature)")),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("chain      eip155:1329 ("),
            "{}",
            r.stderr
        );
        let last = mock.seen().last().unwrap().clone();
        assert_eq!(last.path, "/v1/wallets/w1/rpc");
        assert!(last.problems.is_empty(), "{last:?}");
        assert!(
            last.body
                .starts_with(r#"{"caip2":"eip155:1329","method":"personal_sign""#),
            "{}",
            last.body
        );
    }
    // Without caip2 and without --chain: an invalid request, never posted.
    let before = mock.seen().len();
    let req = write_json(
        "ps-no-caip2.json",
        &json!({"method": "personal_sign", "params": {"message": "hi"}}),
    );
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &msg_policy,
            "--request",
            &req,
        ],
        &env,
    );
    assert_eq!(r.code, 7, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("is required on every /rpc request, a message's too"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("not sent: the request body is invalid"),
        "{}",
        r.stderr
    );
    assert_eq!(mock.seen().len(), before, "{:?}", mock.seen());
    // --from names another signer than the one the signature recovers to: exit 2, not printed.
    let req = write_json(
        "ps-from.json",
        &json!({"method": "personal_sign", "params": {"message": "hi"}}),
    );
    let other = "0x90F79bf6EB2c4F870365E785982E1f101E93b906";
    let r = chaintrace(
        &[
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &msg_policy,
            "--request",
            &req,
            "--from",
            other,
            "--chain",
            "1329",
        ],
        &env,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let other: Address = other.parse().unwrap();
    assert!(
        r.stderr.contains(&format!(
            "but the signature is by {dev}, not by --from {other}"
        )),
        "{}",
        r.stderr
    );
    assert_no_secrets(&r, &[APP_SECRET, &key_text]);
}

/// Without `--wallet-api-url` or `WALLET_API_URL` there is no provider: bad input (exit 1),
/// and nothing reaches the node or any provider.
#[test]
fn without_a_provider_address_nothing_is_sent() {
    let (_, key_text) = auth_key();
    let a = anvil::Anvil::start();
    let node = CountingNode::before(&a.url);
    let req = write_json(
        "no-provider.json",
        &json!({"method": "eth_sendTransaction", "caip2": "eip155:31337",
            "params": {"transaction": {"from": a.sender(), "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1"}}}),
    );
    let any = policy("allow-any-send");
    let env = [
        ("APP_ID", APP_ID),
        ("APP_SECRET", APP_SECRET),
        ("AUTHORIZATION_PRIVATE_KEY", key_text.as_str()),
    ];
    for args in [
        vec![
            "wallet",
            "rpc",
            "--wallet",
            "w1",
            "--policy",
            &any,
            "--request",
            &req,
            "--rpc-url",
            &node.url,
        ],
        vec!["wallet", "create"],
    ] {
        let r = chaintrace(&args, &env);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert_eq!(
            r.stderr.trim_end(),
            "error: no wallet provider given: pass --wallet-api-url URL or set WALLET_API_URL (nothing was sent)"
        );
        assert_eq!(r.stdout, "");
    }
    // An empty WALLET_API_URL is no address either.
    let r = chaintrace(
        &["wallet", "create"],
        &[&env[..], &[("WALLET_API_URL", "")]].concat(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(node.total(), 0);
    // The help names the placeholder, not a vendor.
    let r = chaintrace(&["wallet", "rpc", "--help"], &[]);
    assert!(!r.stdout.contains("privy"), "{}", r.stdout);
    assert!(r.stdout.contains("{wallet_api_url}"), "{}", r.stdout);
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

/// The dev account's nonce once nothing of it is in flight. `wallet send` returns when the node
/// has taken the transaction, and anvil mines it on its own task a moment later, so "latest"
/// alone can lag one behind: read until "latest" equals "pending" (anvil keeps a transaction in
/// its pool until its block is stored, so the two agree only when it is mined or was never sent).
fn nonce(a: &anvil::Anvil) -> u64 {
    let count =
        |tag: &str| anvil::parse_u64(&a.rpc("eth_getTransactionCount", json!([a.sender(), tag])));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (latest, pending) = (count("latest"), count("pending"));
        if latest == pending {
            return latest;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the dev account's transactions were not mined in 30 s: latest {latest}, pending {pending}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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

/// Self-custodial: the request's method decides what `wallet send` does, and the policy is read
/// for that method. eth_signTransaction signs and prints the signed transaction — the node is
/// asked only for what the request leaves out, and never sees `eth_sendRawTransaction`;
/// personal_sign signs the message (EIP-191) without any node.
#[test]
fn self_custodial_method_decides_the_action() {
    let a = anvil::Anvil::start();
    let node = CountingNode::before(&a.url);
    let env = [("PRIVATE_KEY", DEV_KEY)];
    let dev = dev_signer().address();
    let to: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
        .parse()
        .unwrap();
    let before = nonce(&a);
    let sign_req = write_json(
        "local-sign.json",
        &json!({"method": "eth_signTransaction", "caip2": "eip155:31337", "chain_type": "ethereum",
            "params": {"transaction": {"to": to, "value": "0x2386f26fc10000"}}}),
    );
    let local = |policy: &str, req: &str, extra: &[&str], env: &[(&str, &str)]| {
        let args = [
            &[
                "wallet",
                "send",
                "--policy",
                policy,
                "--request",
                req,
                "--rpc-url",
                &node.url,
            ][..],
            extra,
        ]
        .concat();
        chaintrace(&args, env)
    };

    // The issue's case: a policy that only allows eth_signTransaction. The transaction is
    // signed and printed; the node never sees eth_sendRawTransaction.
    let sign_only = policy("sign-only");
    let r = local(&sign_only, &sign_req, &[], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        node.count("eth_sendRawTransaction"),
        0,
        "{:?}",
        node.calls.lock().unwrap()
    );
    assert_eq!(node.count("eth_sendTransaction"), 0);
    assert_eq!(
        node.pending_nonce_asks(),
        1,
        "the nonce was left out, so it was asked"
    );
    assert!(
        r.stderr.contains("signed, not sent (eth_signTransaction)"),
        "{}",
        r.stderr
    );
    let raw = alloy_primitives::hex::decode(r.stdout.trim()).expect("0x hex on stdout");
    let tx = TxEnvelope::decode_2718(&mut raw.as_slice()).unwrap();
    assert_eq!(tx.recover_signer().unwrap(), dev);
    assert_eq!(tx.to(), Some(to));
    assert_eq!(tx.value(), U256::from(10_000_000_000_000_000u64));
    assert_eq!(tx.chain_id(), Some(31337));
    assert_eq!(tx.nonce(), before);
    assert_eq!(nonce(&a), before, "nothing was broadcast");
    // The signed transaction is a real one: broadcast by the test itself, it is mined.
    let hash = a.rpc("eth_sendRawTransaction", json!([r.stdout.trim()]));
    let receipt = a.receipt(hash.as_str().unwrap().parse().unwrap());
    assert_eq!(receipt["status"], json!("0x1"));
    let before = nonce(&a);

    // --json: the signed transaction with its hash, JSON only.
    let r = local(&sign_only, &sign_req, &["--json"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON only on stdout");
    assert!(v["signedTransaction"].as_str().unwrap().starts_with("0x02"));
    assert_eq!(v["nonce"], json!(before));
    assert_eq!(node.count("eth_sendRawTransaction"), 0);

    // A request that gives every field: signed without asking the node anything beyond the
    // pre-flight's own reads (chain id, simulation).
    let full = write_json(
        "local-sign-full.json",
        &json!({"method": "eth_signTransaction", "caip2": "eip155:31337",
            "params": {"transaction": {"to": to, "value": "0x1", "nonce": "0x7", "gas_limit": "0x5208",
                "max_fee_per_gas": "0x77359400", "max_priority_fee_per_gas": "0x3b9aca00"}}}),
    );
    let (nonce_asks, estimates) = (node.pending_nonce_asks(), node.count("eth_estimateGas"));
    let r = local(&sign_only, &full, &[], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let raw = alloy_primitives::hex::decode(r.stdout.trim()).unwrap();
    let tx = TxEnvelope::decode_2718(&mut raw.as_slice()).unwrap();
    assert_eq!(
        (tx.nonce(), tx.gas_limit(), tx.max_fee_per_gas()),
        (7, 21_000, 2_000_000_000)
    );
    assert_eq!(node.count("eth_estimateGas"), estimates);
    assert_eq!(node.pending_nonce_asks(), nonce_asks);
    assert_eq!(node.count("eth_sendRawTransaction"), 0);

    // The same sign request under a policy that allows only sends: denied (exit 6), and a send
    // request under the sign-only policy: denied too. Nothing broadcast.
    let any_send = policy("allow-any-send");
    let r = local(&any_send, &sign_req, &[], &env);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let send_req = write_request(&a, "local-send.json", json!({"to": to, "value": "0x1"}));
    let r = local(&sign_only, &send_req, &[], &env);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(node.count("eth_sendRawTransaction"), 0);
    assert_eq!(nonce(&a), before);
    // eth_sendTransaction under a policy allowing it: the one broadcast of this test.
    let r = local(&any_send, &send_req, &[], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(node.count("eth_sendRawTransaction"), 1);
    assert_eq!(nonce(&a), before + 1);

    // --from another account than the key's: refused before anything is asked of the node.
    let asked = node.total();
    let other = "0x90F79bf6EB2c4F870365E785982E1f101E93b906";
    let r = local(&sign_only, &sign_req, &["--from", other], &env);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("refusing to sign"), "{}", r.stderr);
    assert_eq!(node.total(), asked);

    // personal_sign: no node (no --rpc-url); EIP-191, recovered here with alloy.
    let msg_policy = allow("local-ps-policy.json", &["personal_sign"]);
    for (message, encoding, bytes) in [
        (
            "I agree to the terms",
            "utf-8",
            b"I agree to the terms".to_vec(),
        ),
        ("0xdeadbeef", "hex", vec![0xde, 0xad, 0xbe, 0xef]),
    ] {
        let req = write_json(
            &format!("local-ps-{encoding}.json"),
            &json!({"method": "personal_sign", "params": {"message": message, "encoding": encoding}}),
        );
        let r = chaintrace(
            &["wallet", "send", "--policy", &msg_policy, "--request", &req],
            &env,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let sig = alloy_primitives::hex::decode(r.stdout.trim()).unwrap();
        assert_eq!(sig.len(), 65);
        assert!(sig[64] == 27 || sig[64] == 28);
        let recovered = EcdsaSignature::from_raw(&sig)
            .unwrap()
            .recover_address_from_msg(&bytes)
            .unwrap();
        assert_eq!(recovered, dev);
        // The JSON form carries the same signature.
        let r = chaintrace(
            &[
                "wallet",
                "send",
                "--policy",
                &msg_policy,
                "--request",
                &req,
                "--json",
            ],
            &env,
        );
        let v: Value = serde_json::from_str(&r.stdout).expect("JSON only on stdout");
        assert_eq!(
            alloy_primitives::hex::decode(v["signature"].as_str().unwrap()).unwrap(),
            sig
        );
        assert_eq!(v["from"], json!(format!("{dev:?}")));
    }
    // A message under a transaction-only policy: denied, nothing signed.
    let req = write_json(
        "local-ps-denied.json",
        &json!({"method": "personal_sign", "params": {"message": "hi"}}),
    );
    let r = chaintrace(
        &["wallet", "send", "--policy", &sign_only, "--request", &req],
        &env,
    );
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert_no_secrets(&r, &[DEV_KEY.trim_start_matches("0x")]);
}
