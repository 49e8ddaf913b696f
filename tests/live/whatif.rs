//! What-if replays (`--code-override ADDR=ARTIFACT|0xHEX`, issue 22 item 5) on anvil: a contract
//! whose call reverts is deployed and called; the mined transaction replayed with a fixed
//! runtime (given as 0x-hex and as a Foundry artifact) succeeds, the original still reverts. The
//! patched callTracer JSON must equal anvil's own `debug_traceCall` of the same transaction with
//! the same code as a state override (an independent peer), `block N --code-override` must give
//! the same trace, and the comparison table, skipped self-check and exit codes must hold.

use crate::{anvil, run};
use alloy_primitives::{keccak256, Address};
use serde_json::{json, Value};

/// Runtime code that writes slot 0 and reverts with `Error("broken")`.
const BUGGY: &str = concat!(
    "6001600055",                 // SSTORE(0, 1)
    "6308c379a060e01b600052",     // mem[0..4] = Error(string) selector
    "6020600452",                 // offset 0x20
    "6006602452",                 // length 6
    "6562726f6b656e60d01b604452", // "broken"
    "60646000fd",                 // REVERT(0, 100)
);

/// Runtime code that writes slot 0 and logs `Fixed()`.
fn fixed() -> String {
    let topic = alloy_primitives::hex::encode(keccak256("Fixed()"));
    // SSTORE(0, 2); PUSH32 topic; LOG1(0, 0, topic); STOP
    format!("60026000557f{topic}60006000a100")
}

/// Creation code returning `runtime`.
fn initcode(runtime: &str) -> String {
    let n = runtime.len() / 2;
    format!("0x60{n:02x}600c60003960{n:02x}6000f3{runtime}")
}

fn chaintrace(args: &[&str]) -> run::Run {
    run::cmd(args).no_cache().run()
}

/// anvil's `debug_traceCall` of the mined transaction `hash` at its parent block, with
/// `code` installed at `to` as a state override.
fn anvil_peer(a: &anvil::Anvil, hash: &str, to: Address, code: &str) -> Value {
    let tx = a.rpc("eth_getTransactionByHash", json!([hash]));
    let parent = anvil::parse_u64(&tx["blockNumber"]) - 1;
    a.rpc(
        "debug_traceCall",
        json!([
            {"from": tx["from"], "to": tx["to"], "data": tx["input"], "gas": tx["gas"],
             "value": tx["value"]},
            format!("{parent:#x}"),
            {"tracer": "callTracer", "tracerConfig": {"withLog": true},
             "stateOverrides": {format!("{to:?}"): {"code": format!("0x{code}")}}}
        ]),
    )
}

#[test]
fn a_fixed_build_turns_the_revert_into_success_and_anvil_agrees() {
    let a = anvil::Anvil::start();
    let url = a.url.clone();
    let fixed = fixed();
    let target = a.deploy(&initcode(BUGGY));
    let (h, receipt) = a.send_and_wait(json!({"to": target, "data": "0x", "gas": "0x30d40"}));
    assert_eq!(receipt["status"], "0x0", "the buggy call reverts on chain");
    let hash = format!("{h:?}");
    let pair = format!("{target:?}=0x{fixed}");

    // --json: stdout is exactly geth's JSON of the patched run; the table goes to stderr.
    let r = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &url,
        "--code-override",
        &pair,
        "--tracer-config",
        r#"{"withLog":true}"#,
        "--json",
    ]);
    assert_eq!(r.code, 0, "patched run succeeds: {}", r.stderr);
    let ours: Value = serde_json::from_str(&r.stdout).expect("stdout is one JSON value");
    assert!(ours.get("error").is_none(), "{ours}");
    assert_eq!(ours["logs"][0]["topics"][0], json!(keccak256("Fixed()")));
    let mut peer = anvil_peer(&a, &hash, target, &fixed);
    // Known anvil difference (tests/live/call_inputs.rs): its top-level `gas` is the limit minus
    // intrinsic gas; geth's, and ours, is the transaction's gas limit.
    assert_eq!(ours["gas"], json!("0x30d40"));
    peer["gas"] = ours["gas"].clone();
    assert_eq!(
        ours, peer,
        "patched trace vs anvil debug_traceCall with the code override"
    );
    for needle in [
        "what-if: ",
        "runs the given code (",
        "self-check: replay matches the receipt (status failed",
        "self-check: skipped for the patched run",
        "original",
        "patched",
        "Error(\"broken\")",
        "reverted",
        "success",
        "revert reason",
        "location",
        "gasUsed",
    ] {
        assert!(
            r.stderr.contains(needle),
            "{needle:?} missing from stderr:\n{}",
            r.stderr
        );
    }
    let original_gas = anvil::parse_u64(&receipt["gasUsed"]).to_string();
    let patched_gas = anvil::parse_u64(&ours["gasUsed"]).to_string();
    // Piped: ASCII, as every table for a file or pipe.
    assert!(!r.stderr.contains('│'), "{}", r.stderr);
    let table_rows: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with('|')).collect();
    let row = |run: &str| {
        *table_rows
            .iter()
            .find(|l| l.contains(&format!(" {run} ")))
            .unwrap_or_else(|| panic!("no {run} row: {}", r.stderr))
    };
    assert!(row("original").contains("reverted"), "{}", r.stderr);
    assert!(row("original").contains(&original_gas), "{}", r.stderr);
    assert!(row("patched").contains("success"), "{}", r.stderr);
    assert!(row("patched").contains(&patched_gas), "{}", r.stderr);

    // The same fixed code from a Foundry artifact: human output names its event and contract,
    // the table is on stdout.
    let dir = std::env::temp_dir().join(format!("chaintrace-whatif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("Fixed.json");
    std::fs::write(
        &artifact,
        json!({
            "abi": [{"type": "event", "name": "Fixed", "inputs": [], "anonymous": false}],
            "bytecode": {"object": initcode(&fixed), "linkReferences": {}},
            "deployedBytecode": {"object": format!("0x{fixed}"), "linkReferences": {},
                "immutableReferences": {}},
        })
        .to_string(),
    )
    .unwrap();
    let pair_file = format!("{target:?}={}", artifact.display());
    let h = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &url,
        "--code-override",
        &pair_file,
    ]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    for needle in [
        "Fixed()",
        "Fixed",
        "original",
        "patched",
        "Error(\"broken\")",
        "success",
    ] {
        assert!(
            h.stdout.contains(needle),
            "{needle:?} missing from stdout:\n{}",
            h.stdout
        );
    }
    assert!(h.stderr.contains("runs Fixed ("), "{}", h.stderr);
    assert!(
        h.stderr.contains("self-check: skipped for the patched run"),
        "{}",
        h.stderr
    );

    // The other way round: a call that succeeds on chain, replayed with the buggy code, fails:
    // exit 3, never 4.
    let good = a.deploy(&initcode(&fixed));
    let (g, receipt) = a.send_and_wait(json!({"to": good, "data": "0x", "gas": "0x30d40"}));
    assert_eq!(receipt["status"], "0x1");
    let back = chaintrace(&[
        "tx",
        &format!("{g:?}"),
        "--rpc-url",
        &url,
        "--code-override",
        &format!("{good:?}=0x{BUGGY}"),
    ]);
    assert_eq!(back.code, 3, "{}", back.stderr);
    assert!(back.stdout.contains("Error(\"broken\")"), "{}", back.stdout);

    // block N --code-override: the block's traces are the patched ones (geth's block shape).
    let n = anvil::parse_u64(&a.rpc("eth_getTransactionByHash", json!([hash]))["blockNumber"]);
    let b = chaintrace(&[
        "block",
        &n.to_string(),
        "--rpc-url",
        &url,
        "--code-override",
        &pair,
        "--tracer-config",
        r#"{"withLog":true}"#,
        "--json",
    ]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    let items: Value = serde_json::from_str(&b.stdout).expect("block JSON");
    assert_eq!(items, json!([{"txHash": hash, "result": ours}]));
    assert!(b.stderr.contains("#0 0x"), "{}", b.stderr);
    assert!(
        b.stderr
            .contains("self-check: 1 transactions match their receipts"),
        "{}",
        b.stderr
    );
    assert!(
        b.stderr.contains("self-check: skipped for the patched run"),
        "{}",
        b.stderr
    );
}

/// `chaintrace debug --code-override`: the fixed code is what runs (its LOG1, no revert), the
/// screen says which code was replaced, and the mined receipt is not compared with it; without
/// the override the same transaction reverts.
#[test]
fn the_debugger_steps_through_the_fixed_code() {
    let a = anvil::Anvil::start();
    let target = a.deploy(&initcode(BUGGY));
    let (h, _) = a.send_and_wait(json!({"to": target, "data": "0x", "gas": "0x30d40"}));
    let hash = format!("{h:?}");
    let pair = format!("{target:?}=0x{}", fixed());
    let dir = std::path::Path::new("/");
    let env = [("CHAINTRACE_NO_CACHE", "1")];

    let t = crate::tmux::Tmux::start(dir, &["debug", &hash, "--rpc-url", &a.url], &env);
    assert!(t.wait_for("step 1/", 120).contains(" │ failed"));
    t.keys(&["r"]);
    t.wait_for(" REVERT ", 30);
    t.keys(&["q"]);
    let after = t.wait_for("[exited 0]", 30);
    assert!(
        after.contains("self-check: replay matches the receipt"),
        "{after}"
    );

    let args = [
        "debug",
        &hash,
        "--rpc-url",
        &a.url,
        "--code-override",
        &pair,
    ];
    let t = crate::tmux::Tmux::start(dir, &args, &env);
    let first = t.wait_for("step 1/", 120);
    assert!(first.contains(" │ succeeded │ "), "{first}");
    // The session says it is not the mined code that runs.
    let replaced = format!(
        "what-if: {} runs the given code (",
        target.to_checksum(None)
    );
    assert!(
        first.contains(&replaced),
        "{replaced:?} not on screen:\n{first}"
    );
    t.keys(&["r"]);
    t.wait_for("nothing failed in this transaction", 30);
    t.keys(&["/", "L", "O", "G", "1", "Enter"]);
    t.wait_for(" LOG1 ", 30);
    t.keys(&["q"]);
    let after = t.wait_for("[exited 0]", 30);
    assert!(!after.contains("self-check"), "{after}");
}
