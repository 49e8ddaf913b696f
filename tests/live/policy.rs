//! `policy check` and `preflight` end to end: every rule outcome offline, and pre-flights of
//! real requests against a live anvil (chain 31337), including that secrets never leak.

use crate::{anvil, run};
use std::path::{Path, PathBuf};

use alloy_primitives::Address;
use run::Run;
use serde_json::{json, Value};

fn chaintrace(args: &[&str], env: &[(&str, &str)]) -> Run {
    run::cmd(args).no_cache().envs(env).run()
}

fn data(rel: &str) -> String {
    format!("tests/data/policy/{rel}")
}

fn check(policy: &str, request: &str) -> (i32, Value) {
    let r = chaintrace(
        &[
            "policy",
            "check",
            "--policy",
            &data(&format!("policies/{policy}.json")),
            "--request",
            &data(&format!("requests/{request}.json")),
            "--json",
        ],
        &[],
    );
    assert!(r.stderr.is_empty(), "stderr: {}", r.stderr);
    (
        r.code,
        serde_json::from_str(&r.stdout).expect("JSON on stdout"),
    )
}

/// `policy check` of the policy `policy` (under tests/data/policy) against the request file at
/// `request`, with `extra` arguments.
fn check_file(policy: &str, request: &std::path::Path, extra: &[&str]) -> Run {
    let policy = data(&format!("policies/{policy}.json"));
    let args = [
        &[
            "policy",
            "check",
            "--policy",
            &policy,
            "--request",
            request.to_str().unwrap(),
        ][..],
        extra,
    ]
    .concat();
    chaintrace(&args, &[])
}

#[test]
fn allow_rule_matches_address_case_insensitively() {
    let (code, v) = check("allow-treasury", "send-small");
    assert_eq!(code, 0);
    assert_eq!(
        v,
        json!({
            "allowed": true,
            "reason": "ALLOW rule \"allow treasury\" matched and no DENY rule matched",
            "matchedRules": ["allow treasury"],
            "rules": [{
                "name": "allow treasury",
                "action": "ALLOW",
                "matched": true,
                "explanation": ["to eq 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 (to is 0x70997970c51812dc3a010c7d01b50e0d17dc79c8): true"]
            }]
        })
    );
}

#[test]
fn deny_wins_over_a_matching_allow() {
    let (code, v) = check("allow-with-cap", "send-large");
    assert_eq!(code, 6);
    assert_eq!(v["allowed"], false);
    assert_eq!(v["reason"], "DENY rule \"deny above 1 native\" matched");
    assert_eq!(
        v["matchedRules"],
        json!(["allow known recipients", "deny above 1 native"])
    );
    let (code, v) = check("allow-with-cap", "send-small");
    assert_eq!(
        (code, &v["matchedRules"]),
        (0, &json!(["allow known recipients"]))
    );
}

#[test]
fn unmatched_allow_is_default_deny() {
    let (code, v) = check("allow-treasury", "send-other");
    assert_eq!(code, 6);
    assert_eq!(v["reason"], "default deny: no ALLOW rule matched");
    assert_eq!(v["matchedRules"], json!([]));
}

#[test]
fn deny_only_policy_blocks_everything() {
    for req in ["send-small", "send-large"] {
        let (code, v) = check("deny-only", req);
        assert_eq!(code, 6, "{req}");
        assert_eq!(v["allowed"], false);
    }
    let (_, v) = check("deny-only", "send-small");
    assert_eq!(
        v["reason"],
        "default deny: the policy has no ALLOW rule, so it blocks everything"
    );
}

#[test]
fn value_range_compares_wei_as_integers_with_camel_case_source() {
    let (code, v) = check("allow-value-range", "send-small");
    assert_eq!(code, 0);
    assert_eq!(
        v["rules"][0]["explanation"],
        json!([
            "value gte 1 (value is 10000000000000000 wei): true",
            "value lte 50000000000000000 (value is 10000000000000000 wei): true"
        ])
    );
    let (code, _) = check("allow-value-range", "send-large");
    assert_eq!(code, 6);
}

#[test]
fn rule_applies_to_its_method_only() {
    let (code, v) = check("sign-only", "send-small");
    assert_eq!(code, 6);
    assert_eq!(
        v["rules"][0]["explanation"],
        json!(["applies to eth_signTransaction, the request is eth_sendTransaction"])
    );
    let (code, _) = check("sign-only", "sign-small");
    assert_eq!(code, 0);
}

#[test]
fn invalid_policies_are_bad_input_with_the_reason() {
    let cases = [
        (
            "invalid-number-value",
            "wei amounts are decimal strings, not JSON numbers",
        ),
        (
            "invalid-address-operator",
            "`to` is an address: use eq or in, not gt",
        ),
    ];
    for (policy, needle) in cases {
        let r = chaintrace(
            &[
                "policy",
                "check",
                "--policy",
                &data(&format!("policies/{policy}.json")),
                "--request",
                &data("requests/send-small.json"),
            ],
            &[],
        );
        assert_eq!(r.code, 1, "{policy}: {}", r.stderr);
        assert!(r.stdout.is_empty());
        assert!(r.stderr.contains(needle), "{policy}: {}", r.stderr);
    }
}

#[test]
fn human_output_explains_each_rule() {
    let r = chaintrace(
        &[
            "policy",
            "check",
            "--policy",
            &data("policies/allow-with-cap.json"),
            "--request",
            &data("requests/send-large.json"),
        ],
        &[],
    );
    assert_eq!(r.code, 6);
    assert_eq!(
        r.stdout,
        "DENIED: DENY rule \"deny above 1 native\" matched\n\
         \x20 ALLOW \"allow known recipients\": matched\n\
         \x20   to in [0x70997970c51812dc3a010c7d01b50e0d17dc79c8, 0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc] (to is 0x70997970c51812dc3a010c7d01b50e0d17dc79c8): true\n\
         \x20 DENY \"deny above 1 native\": matched\n\
         \x20   value gt 1000000000000000000 (value is 2000000000000000000 wei): true\n"
    );
}

#[test]
fn chain_flag_must_match_the_request() {
    let base = [
        "policy",
        "check",
        "--policy",
        "tests/data/policy/policies/allow-treasury.json",
        "--request",
        "tests/data/policy/requests/send-small.json",
    ];
    let ok = chaintrace(&[&base[..], &["--chain", "mainnet"]].concat(), &[]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let bad = chaintrace(&[&base[..], &["--chain", "testnet"]].concat(), &[]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("must be eip155:1328"), "{}", bad.stderr);
}

// ------------------------------------------------------------------ preflight (live)

const FAKE_APP_SECRET: &str = "fake-app-secret-5d1b9c7e3a";
const FAKE_AUTH_KEY: &str = "wallet-auth:MIGHAgEAMBMfakeAuthorizationKey0123456789";
const FAKE_SIGNATURE: &str = "fake-signature-MEUCIQDx9";

struct Live {
    anvil: anvil::Anvil,
    reverter: Address,
    dir: PathBuf,
}

fn live() -> Live {
    let a = anvil::Anvil::start();
    let reverter = a.deploy(&anvil::creation_code("Reverter"));
    let dir = std::env::temp_dir().join(format!(
        "chaintrace-preflight-{}-{}",
        std::process::id(),
        a.port
    ));
    std::fs::create_dir_all(&dir).unwrap();
    Live {
        anvil: a,
        reverter,
        dir,
    }
}

impl Live {
    fn write(&self, name: &str, v: &Value) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
        p.display().to_string()
    }

    fn preflight(&self, policy: &str, request: &str, extra: &[&str]) -> Run {
        let args = [
            &[
                "preflight",
                "--policy",
                policy,
                "--request",
                request,
                "--rpc-url",
                &self.anvil.url,
            ][..],
            extra,
        ]
        .concat();
        chaintrace(
            &args,
            &[
                ("PRIVY_APP_SECRET", FAKE_APP_SECRET),
                ("AUTHORIZATION_PRIVATE_KEY", FAKE_AUTH_KEY),
            ],
        )
    }
}

fn body(tx: Value) -> Value {
    json!({"method": "eth_sendTransaction", "caip2": "eip155:31337", "chain_type": "ethereum",
           "params": {"transaction": tx}})
}

fn assert_no_secrets(r: &Run) {
    for s in [
        FAKE_APP_SECRET,
        FAKE_AUTH_KEY,
        "MIGHAgEAMBMfakeAuthorizationKey0123456789",
        FAKE_SIGNATURE,
    ] {
        assert!(!r.stdout.contains(s), "secret {s} on stdout: {}", r.stdout);
        assert!(!r.stderr.contains(s), "secret {s} on stderr: {}", r.stderr);
    }
}

fn policy_path(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(data(&format!("policies/{name}.json")))
        .display()
        .to_string()
}

#[test]
fn preflight_live_verdicts() {
    let l = live();
    let sender = format!("{:#x}", l.anvil.sender());
    let any = policy_path("allow-any-send");

    // 1. A transfer the policy allows: sign, exit 0, 21000 gas.
    let req = l.write(
        "ok.json",
        &body(json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x2386f26fc10000"})),
    );
    let r = l.preflight(&any, &req, &["--json"]);
    assert_eq!(r.code, 0, "stderr: {}\nstdout: {}", r.stderr, r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "sign");
    assert_eq!(v["allowed"], true);
    assert_eq!(v["matchedRules"], json!(["allow sends"]));
    assert_eq!(v["wouldRevert"], false);
    assert_eq!(v["revertReason"], Value::Null);
    assert_eq!(v["gasUsed"], 21000);
    assert_eq!(v["caip2"], "eip155:31337");
    assert_eq!(v["requestErrors"], json!([]));
    assert_eq!(
        v["canonicalBody"],
        format!(
            r#"{{"caip2":"eip155:31337","chain_type":"ethereum","method":"eth_sendTransaction","params":{{"transaction":{{"from":"{sender}","to":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","value":"0x2386f26fc10000"}}}}}}"#
        )
    );

    // 2. Allowed, but the call reverts: exit 3 with the decoded reason.
    let data = format!(
        "0x{}",
        alloy_primitives::hex::encode(anvil::selector("failString()"))
    );
    let req = l.write(
        "revert.json",
        &body(json!({"from": sender, "to": format!("{:#x}", l.reverter), "value": "0x0", "data": data, "gas_limit": "0x30d40"})),
    );
    let r = l.preflight(&any, &req, &["--json"]);
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "would-revert");
    assert_eq!(v["wouldRevert"], true);
    assert_eq!(v["revertReason"], "Error(\"chaintrace: plain revert\")");
    assert!(v["gasUsed"].as_u64().unwrap() > 21000);
    let human = l.preflight(&any, &req, &[]);
    assert_eq!(human.code, 3);
    assert!(
        human.stdout.contains("simulation would REVERT at block")
            && human.stdout.contains("Error(\"chaintrace: plain revert\")"),
        "{}",
        human.stdout
    );

    // 3. Denied by the policy: exit 6, and the simulation still reports.
    let req = l.write(
        "big.json",
        &body(json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1bc16d674ec80000"})),
    );
    let r = l.preflight(&policy_path("allow-with-cap"), &req, &["--json"]);
    assert_eq!(r.code, 6, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (v["verdict"].as_str(), v["allowed"].as_bool()),
        (Some("denied"), Some(false))
    );
    assert_eq!(v["wouldRevert"], false);

    // 4. A JSON number in the transaction: invalid body, exit 7, with the RFC 8785 reason.
    let text = format!(
        r#"{{"method":"eth_sendTransaction","caip2":"eip155:31337","params":{{"transaction":{{"from":"{sender}","to":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","value":123456789012345678901}}}}}}"#
    );
    let p = l.dir.join("number.json");
    std::fs::write(&p, text).unwrap();
    let r = l.preflight(&any, p.to_str().unwrap(), &["--json"]);
    assert_eq!(r.code, 7, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "invalid-request");
    assert_eq!(v["requestErrors"][0]["path"], "params.transaction.value");
    let problem = v["requestErrors"][0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("RFC 8785-canonicalised before signing")
            && problem.contains("would be signed as 123456789012345680000"),
        "{problem}"
    );

    // 5. The caip2 names another chain than the node's: invalid body.
    let req = l.write(
        "wrong-chain.json",
        &json!({"method": "eth_sendTransaction", "caip2": "eip155:1329",
                "params": {"transaction": {"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1"}}}),
    );
    let r = l.preflight(&any, &req, &["--json"]);
    assert_eq!(r.code, 7);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["requestErrors"],
        json!([{"path": "caip2", "problem": "\"eip155:1329\" names chain 1329, but the node is chain 31337 (eip155:31337)"}])
    );
}

#[test]
fn preflight_never_prints_secrets() {
    let l = live();
    let sender = format!("{:#x}", l.anvil.sender());
    let any = policy_path("allow-any-send");
    // Secrets in the headers of the request file and, wrongly, in the body itself.
    let doc = json!({
        "headers": {
            "privy-app-id": "app-id-123",
            "authorization": format!("Basic {FAKE_APP_SECRET}"),
            "privy-authorization-signature": FAKE_SIGNATURE,
        },
        "authorization_private_key": FAKE_AUTH_KEY,
        "body": {
            "method": "eth_sendTransaction", "caip2": "eip155:31337",
            "app_secret": FAKE_APP_SECRET,
            "params": {"transaction": {"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1"}}
        }
    });
    let req = l.write("secrets.json", &doc);
    for extra in [&["--json"][..], &[][..]] {
        let r = l.preflight(&any, &req, extra);
        assert_eq!(r.code, 7, "{}", r.stderr);
        assert_no_secrets(&r);
        assert!(r.stdout.contains("app_secret"), "{}", r.stdout);
        assert!(r.stdout.contains("***"), "{}", r.stdout);
    }
    // Error paths scrub too: a secret as the --from value and an unreachable node.
    let r = chaintrace(
        &[
            "preflight",
            "--policy",
            &any,
            "--request",
            &req,
            "--rpc-url",
            "http://127.0.0.1:1",
            "--from",
            FAKE_APP_SECRET,
        ],
        &[
            ("PRIVY_APP_SECRET", FAKE_APP_SECRET),
            ("AUTHORIZATION_PRIVATE_KEY", FAKE_AUTH_KEY),
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("malformed --from"), "{}", r.stderr);
    assert_no_secrets(&r);
    let clean = l.write(
        "clean.json",
        &body(json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": "0x1"})),
    );
    let r = chaintrace(
        &[
            "preflight",
            "--policy",
            &any,
            "--request",
            &clean,
            "--rpc-url",
            "http://127.0.0.1:1",
            "--rpc-timeout",
            "2",
        ],
        &[("PRIVY_APP_SECRET", FAKE_APP_SECRET)],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_no_secrets(&r);
}

/// RFC 8785 forbids repeated member names: a body that names a denied `to` and then an allowed
/// one is refused (exit 7, the key named), never evaluated last-wins as ALLOWED.
#[test]
fn a_body_repeating_a_member_name_is_refused() {
    let dir = std::env::temp_dir().join(format!("chaintrace-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = dir.join("dup.json");
    std::fs::write(
        &body,
        r#"{"method":"eth_sendTransaction","caip2":"eip155:1329","chain_type":"ethereum","params":{"transaction":{"to":"0x90F79bf6EB2c4F870365E785982E1f101E93b906","to":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","value":"0x1"}}}"#,
    )
    .unwrap();
    let r = check_file("allow-treasury", &body, &[]);
    assert_eq!(r.code, 7, "{}", r.stderr);
    assert!(
        r.stderr.contains("duplicate member name \"to\""),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("ALLOW"), "{}", r.stdout);
    // Deep nesting is refused quickly (one pass, serde_json's nesting limit), not a crash.
    let deep = dir.join("deep.json");
    std::fs::write(
        &deep,
        format!("{}{}", "[".repeat(40_000), "]".repeat(40_000)),
    )
    .unwrap();
    let r = check_file("allow-treasury", &deep, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("recursion limit exceeded"),
        "{}",
        r.stderr
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A value wider than 256 bits is the request's fault (exit 7, the field named), not the node's.
#[test]
fn preflight_refuses_a_value_no_transaction_can_carry() {
    let l = live();
    let sender = format!("{:#x}", l.anvil.sender());
    let wide = format!("0x1{}", "0".repeat(100));
    let req = l.write(
        "wide.json",
        &body(json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": wide})),
    );
    let r = l.preflight(&policy_path("allow-any-send"), &req, &["--json"]);
    assert_eq!(r.code, 7, "stderr: {}\nstdout: {}", r.stderr, r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let errors = v["requestErrors"].to_string();
    assert!(errors.contains("params.transaction.value"), "{errors}");
    assert!(errors.contains("404 bits, more than the 256"), "{errors}");
    assert!(!r.stderr.contains("the node returned"), "{}", r.stderr);
}

/// `policy check` scrubs what the request's headers (and the environment) hold from its
/// messages, as `preflight` does.
#[test]
fn policy_check_messages_never_quote_a_header_secret() {
    let dir = std::env::temp_dir().join(format!("chaintrace-scrub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let req = dir.join("r.json");
    std::fs::write(
        &req,
        r#"{"headers": {"privy-authorization-signature": "sig-SECRET-1234567890"}, "body": {"method": "eth_sendTransaction", "caip2": "eip155:1329", "chain_type": "ethereum", "params": {"transaction": {"to": "sig-SECRET-1234567890"}}}}"#,
    )
    .unwrap();
    let r = check_file("allow-treasury", &req, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is not an address"), "{}", r.stderr);
    assert!(!r.stderr.contains("sig-SECRET"), "{}", r.stderr);
    std::fs::remove_dir_all(dir).ok();
}

/// `personal_sign` requests (`params: {message}`) are valid; rules name the method, and
/// `eth_sendTransaction` rules and conditions do not apply to them; nothing is simulated.
#[test]
fn personal_sign_requests_are_checked_by_their_own_rules() {
    let l = live();
    let policy = l.write(
        "ps-policy.json",
        &json!({"version": "1.0", "name": "p", "chain_type": "ethereum", "rules": [
            {"name": "sign messages", "method": "personal_sign", "conditions": [], "action": "ALLOW"},
            {"name": "treasury", "method": "eth_sendTransaction", "action": "ALLOW", "conditions": [
                {"field_source": "ethereum_transaction", "field": "to", "operator": "eq",
                 "value": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}]}]}),
    );
    let msg = l.write(
        "ps.json",
        &json!({"method": "personal_sign", "caip2": "eip155:31337", "chain_type": "ethereum",
                "params": {"message": "hello"}}),
    );
    let r = l.preflight(&policy, &msg, &["--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "sign");
    assert_eq!(v["matchedRules"], json!(["sign messages"]));
    assert_eq!(v["wouldRevert"], Value::Null);
    // A message without its text is an invalid request.
    let bad = l.write(
        "ps-bad.json",
        &json!({"method": "personal_sign", "caip2": "eip155:31337", "chain_type": "ethereum",
                "params": {"message": 7}}),
    );
    let r = l.preflight(&policy, &bad, &["--json"]);
    assert_eq!(r.code, 7, "{}", r.stdout);
    assert!(r.stdout.contains("params.message"), "{}", r.stdout);
    // A policy with only transaction rules denies a message (default deny).
    let r = l.preflight(&policy_path("allow-any-send"), &msg, &["--json"]);
    assert_eq!(r.code, 6, "{}", r.stdout);
}

/// `chain_id` alone may be a JSON integer (the documentation's example): accepted with a
/// warning that the form is not RFC 8785-safe for large values; numbers stay refused elsewhere.
#[test]
fn an_integer_chain_id_is_accepted_with_a_warning() {
    let l = live();
    let sender = format!("{:#x}", l.anvil.sender());
    let req = l.write(
        "chain-int.json",
        &body(
            json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
                     "value": "0x1", "chain_id": 31337}),
        ),
    );
    let r = l.preflight(&policy_path("allow-any-send"), &req, &["--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["requestErrors"], json!([]));
    assert_eq!(
        v["requestWarnings"][0]["path"],
        "params.transaction.chain_id"
    );
    assert!(v["requestWarnings"][0]["problem"]
        .as_str()
        .unwrap()
        .contains("2^53"));
    // Another chain's id is still an error, in either form.
    let other = l.write(
        "chain-other.json",
        &body(
            json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
                     "value": "0x1", "chain_id": 1329}),
        ),
    );
    let r = l.preflight(&policy_path("allow-any-send"), &other, &["--json"]);
    assert_eq!(r.code, 7, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("is chain 1329, but the node is chain 31337"),
        "{}",
        r.stdout
    );
    // A number anywhere else is refused.
    let value = l.write(
        "value-int.json",
        &body(
            json!({"from": sender, "to": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "value": 1}),
        ),
    );
    let r = l.preflight(&policy_path("allow-any-send"), &value, &["--json"]);
    assert_eq!(r.code, 7, "{}", r.stdout);
}

/// `ethereum_calldata` conditions decode the call with the condition's ABI: `transfer.to` and
/// `transfer.amount` of an ERC-20 transfer; a call to another function does not match.
#[test]
fn calldata_conditions_read_the_decoded_arguments() {
    let dir = std::env::temp_dir().join(format!("chaintrace-calldata-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let word = |hex: &str| format!("{hex:0>64}");
    let call = |selector: &str, to: &str, amount: u64| {
        format!("0x{selector}{}{}", word(to), word(&format!("{amount:x}")))
    };
    let treasury = "70997970c51812dc3a010c7d01b50e0d17dc79c8";
    let other = "90f79bf6eb2c4f870365e785982e1f101e93b906";
    let cases = [
        ("to treasury", call("a9059cbb", treasury, 500), 0),
        ("to another account", call("a9059cbb", other, 500), 6),
        ("too large", call("a9059cbb", treasury, 2_000_000), 6),
        ("approve, not transfer", call("095ea7b3", treasury, 500), 6),
    ];
    for (name, calldata, code) in cases {
        let req = dir.join("r.json");
        std::fs::write(
            &req,
            json!({"method": "eth_sendTransaction", "caip2": "eip155:1329", "chain_type": "ethereum",
                   "params": {"transaction": {"to": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "data": calldata}}})
            .to_string(),
        )
        .unwrap();
        let r = check_file("allow-erc20-transfer", &req, &["--json"]);
        assert_eq!(r.code, code, "{name}: {}\n{}", r.stderr, r.stdout);
    }
    std::fs::remove_dir_all(dir).ok();
}
