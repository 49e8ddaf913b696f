//! `call` inputs as cast users type them (`--sig` + arguments, `--value 1ether`, `--from`
//! defaulting to the zero address) and geth's `debug_traceCall` overrides, checked against the
//! test anvil: the local trace with `--state-override`/`--block-override` must equal anvil's own
//! `debug_traceCall` with the same overrides (`--remote`), and the overridden values must show.

use crate::{anvil, run};
use run::Run;

use alloy_primitives::U256;
use serde_json::{json, Value};

fn chaintrace(args: &[&str]) -> Run {
    run::cmd(args).no_cache().run()
}

/// Runs `call` locally and with `--remote`; both must succeed with the same JSON. The gas is
/// given, as the default gas of a call differs between nodes.
fn local_equals_remote(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.extend(["--gas", "1000000"]);
    let local = chaintrace(&args);
    assert!(local.code == 0 || local.code == 3, "{}", local.stderr);
    let mut remote_args = args.clone();
    remote_args.push("--remote");
    let remote = chaintrace(&remote_args);
    assert_eq!(remote.code, local.code, "{}", remote.stderr);
    let l: Value = serde_json::from_str(&local.stdout).expect("local JSON");
    let mut r: Value = serde_json::from_str(&remote.stdout).expect("remote JSON");
    // Known anvil difference (as in tests/live/live.rs): its top-level `gas` is the limit minus
    // intrinsic gas; geth's, and ours, is the call's gas limit.
    assert_eq!(l["gas"], json!("0xf4240"));
    r["gas"] = l["gas"].clone();
    assert_eq!(l, r, "local vs anvil debug_traceCall for {args:?}");
    l
}

#[test]
fn sig_args_value_units_and_overrides_match_anvil() {
    let s = anvil::scenario();
    let url = s.url.as_str();
    let reverter = format!("{:?}", s.addr("Reverter"));
    let sink = format!("{:?}", s.addr("Sink"));

    // --sig with arguments encodes like cast; the zero address is the default sender.
    let v = local_equals_remote(&[
        "call",
        "--to",
        &reverter,
        "--sig",
        "failCustom(uint256)",
        "7",
        "--rpc-url",
        url,
        "--json",
    ]);
    let expected_input = anvil::hex0x(&anvil::calldata("failCustom(uint256)", &[anvil::w_u(7)]));
    assert_eq!(v["input"], json!(expected_input));
    assert_eq!(
        v["from"],
        json!("0x0000000000000000000000000000000000000000")
    );
    assert_eq!(v["error"], json!("execution reverted"));

    // Without an ABI the human tree shows the custom error by selector.
    let human = chaintrace(&[
        "call",
        "--to",
        &reverter,
        "--sig",
        "failCustom(uint256)",
        "7",
        "--rpc-url",
        url,
    ]);
    assert_eq!(human.code, 3, "{}", human.stderr);
    assert!(human.stdout.contains("custom error 0x"), "{}", human.stdout);

    // --value with a unit and a balance override for the (zero-address) sender; value goes to
    // Sink's receive(), which logs it.
    let v = local_equals_remote(&[
        "call",
        "--to",
        &sink,
        "--value",
        "1.5ether",
        "--state-override",
        r#"{"0x0000000000000000000000000000000000000000": {"balance": "0x1bc16d674ec80000"}}"#,
        "--tracer-config",
        r#"{"withLog":true}"#,
        "--rpc-url",
        url,
        "--json",
    ]);
    assert_eq!(v["value"], json!("0x14d1120d7b160000"));
    assert_eq!(v["logs"].as_array().map(Vec::len), Some(1), "{v}");

    // `state` replaces Reverter's storage: attempts() reads slot 0.
    let slot0 = format!("0x{:064x}", 0);
    let five = format!("0x{:064x}", 5);
    let state = json!({ &reverter: {"state": {&slot0: &five}} }).to_string();
    let v = local_equals_remote(&[
        "call",
        "--to",
        &reverter,
        "--sig",
        "attempts()",
        "--state-override",
        &state,
        "--rpc-url",
        url,
        "--json",
    ]);
    assert_eq!(v["output"], json!(five));
    // `stateDiff` from a file.
    let dir = std::env::temp_dir().join(format!("chaintrace-call-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("override.json");
    let diff = json!({ &reverter: {"stateDiff": {&slot0: &five}} }).to_string();
    std::fs::write(&file, diff).unwrap();
    let v = local_equals_remote(&[
        "call",
        "--to",
        &reverter,
        "--sig",
        "attempts()",
        "--state-override",
        file.to_str().unwrap(),
        "--rpc-url",
        url,
        "--json",
    ]);
    assert_eq!(v["output"], json!(five));

    // Code override plus block override: NUMBER and TIMESTAMP returned by injected code.
    let probe = "0x0000000000000000000000000000000000c0ffee";
    for (opcode, field, value) in [("43", "number", 0x1234u64), ("42", "time", 0x5678)] {
        // OP PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
        let code = format!("0x{opcode}60005260206000f3");
        let state = json!({ probe: {"code": code} }).to_string();
        let block = json!({ field: format!("{value:#x}") }).to_string();
        let v = local_equals_remote(&[
            "call",
            "--to",
            probe,
            "--state-override",
            &state,
            "--block-override",
            &block,
            "--rpc-url",
            url,
            "--json",
        ]);
        assert_eq!(v["output"], json!(format!("0x{value:064x}")), "{field}");
    }
}

#[test]
fn bad_call_inputs_are_clear_errors() {
    for (args, needle) in [
        (
            vec![
                "--to",
                "0x0000000000000000000000000000000000000001",
                "--sig",
                "f(uint8)",
                "256",
            ],
            "argument 1 \"256\" is not a valid uint8",
        ),
        (
            vec![
                "--to",
                "0x0000000000000000000000000000000000000001",
                "--sig",
                "f(uint8,bool)",
                "1",
            ],
            "takes 2 argument(s), 1 given",
        ),
        (vec!["--value", "1 dollar"], "unknown unit"),
        (
            vec![
                "--state-override",
                r#"{"0x0000000000000000000000000000000000000001": {"balance": "0x01"}}"#,
            ],
            "leading zero",
        ),
        (
            vec![
                "--state-override",
                r#"{"0x0000000000000000000000000000000000000001": {"state": {}, "stateDiff": {}}}"#,
            ],
            "has both 'state' and 'stateDiff'",
        ),
        (
            vec!["--block-override", r#"{"withdrawals": []}"#],
            "not supported",
        ),
        (
            vec!["--block-override", "missing.json"],
            "cannot read --block-override missing.json",
        ),
    ] {
        let mut full = vec!["call"];
        full.extend(args.iter().copied());
        full.extend(["--rpc-url", "http://127.0.0.1:1"]);
        let r = chaintrace(&full);
        assert_eq!(r.code, 1, "{full:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{full:?}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
}

/// A call resolves its block once, header only: the chain id, the node's identity, the block's
/// header (`eth_getBlockByNumber` with `false`: no transactions) and its first transaction (what
/// it shows of the OP stack) ride in the first batch; then the state passes — one request
/// before them, where asking the chain id and the block apart made two.
#[test]
fn a_call_resolves_its_block_once_header_only() {
    let s = anvil::scenario();
    let proxy = crate::proxy::Proxy::start(&s.url, &[]);
    let sink = format!("{:?}", s.addr("Sink"));
    let run = chaintrace(&[
        "call",
        "--to",
        &sink,
        "--value",
        "1",
        "--rpc-url",
        &proxy.url,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats = proxy.stats();
    // One request before the state passes: the block is not asked again.
    assert_eq!(
        stats["requests"].as_u64().unwrap(),
        stats["stateRequests"].as_u64().unwrap() + 1,
        "{stats} {}",
        run.stderr
    );
}

/// A call's gas may exceed the block's gas limit, as in geth (`doCall` gives a call a gas pool of
/// its own; the RPC gas cap, not the block, bounds it): 12M gas in a block of 10M runs (below
/// Osaka's per-transaction cap of 2^24).
#[test]
fn a_call_may_use_more_gas_than_its_block_holds() {
    let s = anvil::scenario();
    let sink = format!("{:?}", s.addr("Sink"));
    let run = chaintrace(&[
        "call",
        "--to",
        &sink,
        "--value",
        "1",
        "--gas",
        "12000000",
        "--block-override",
        r#"{"gasLimit":"0x989680"}"#,
        "--rpc-url",
        &s.url,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["gas"], json!("0xb71b00"), "{v}");
    assert!(v.get("error").is_none(), "{v}");
}

/// `call --bundle`: two calls on one state, the second seeing the first's write. Ether sent into
/// Sink's `receive()` raises its `total`; `total()` read next returns the new value. Each trace
/// equals anvil's own `debug_traceCall` of the same call on the state it ran on: the first on
/// the block's, the second with Sink's `total` (slot 0) set by a state override to what the
/// first left.
#[test]
fn call_bundle_runs_calls_in_order_each_on_the_state_the_last_left() {
    let s = anvil::scenario();
    let url = s.url.as_str();
    let sink = s.addr("Sink");
    let alice = s.addr("alice");
    let total_of =
        |v: &Value| U256::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let total_call = anvil::hex0x(&anvil::calldata("total()", &[]));
    let before = total_of(&s.anvil.rpc(
        "eth_call",
        json!([{"to": sink, "data": total_call}, "latest"]),
    ));
    let dir = std::env::temp_dir().join(format!("chaintrace-call-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bundle.json");
    std::fs::write(
        &file,
        json!([
            {"from": alice, "to": sink, "value": "1ether", "gas": "1000000"},
            {"to": sink, "sig": "total()", "gas": "1000000"}
        ])
        .to_string(),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let run = chaintrace(&["call", "--bundle", path, "--rpc-url", url, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let traces: Value = serde_json::from_str(&run.stdout).expect("a JSON array");
    let traces = traces.as_array().expect("a JSON array");
    assert_eq!(traces.len(), 2);
    let after = before + U256::from(10u64).pow(U256::from(18));
    assert_eq!(
        traces[1]["output"],
        json!(format!("0x{after:064x}")),
        "{}",
        traces[1]
    );

    // Each trace is anvil's for the same call on the same state (its top-level `gas` mapped,
    // the difference named in local_equals_remote).
    let mapped = |mut v: Value, t: &Value| {
        v["gas"] = t["gas"].clone();
        v
    };
    let first = s.anvil.rpc(
        "debug_traceCall",
        json!([{"from": alice, "to": sink, "value": "0xde0b6b3a7640000", "gas": "0xf4240"},
            "latest", {"tracer": "callTracer"}]),
    );
    assert_eq!(mapped(first, &traces[0]), traces[0]);
    let second = s.anvil.rpc(
        "debug_traceCall",
        json!([{"to": sink, "data": total_call, "gas": "0xf4240"}, "latest",
            {"tracer": "callTracer", "stateOverrides": {sink.to_string(): {"stateDiff": {
                format!("0x{:064x}", 0): format!("0x{after:064x}")}}}}]),
    );
    assert_eq!(mapped(second, &traces[1]), traces[1]);

    // For people: each call's tree under its number.
    let run = chaintrace(&["call", "--bundle", path, "--rpc-url", url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("call 1 of 2:") && run.stdout.contains("call 2 of 2:"),
        "{}",
        run.stdout
    );

    // A call that fails at top level: exit 3 (exit::TX_FAILED), the traces still printed.
    let reverter = s.addr("Reverter");
    std::fs::write(
        &file,
        json!([{"from": alice, "to": sink, "value": "1wei"}, {"to": reverter, "sig": "failString()"}])
            .to_string(),
    )
    .unwrap();
    let run = chaintrace(&["call", "--bundle", path, "--rpc-url", url, "--json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let traces: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(traces[1]["error"], json!("execution reverted"), "{traces}");
    assert!(traces[0].get("error").is_none(), "{traces}");
    let _ = std::fs::remove_dir_all(&dir);
}
