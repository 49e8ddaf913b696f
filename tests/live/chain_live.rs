//! Chain 1329's precompiles on a simulated chain: anvil started as chain 1329, with contracts
//! placed at the chain's precompile addresses (`anvil_setCode`) standing in for the node's
//! native precompiles. chaintrace, replaying under 1329's rules, must take those frames from the
//! node's callTracer (one extra round trip), and must say which frames are opaque when the node
//! serves no debug API.

use crate::{anvil, http, proxy, serve_support};
use proxy::{chaintrace as plain_chaintrace, Proxy, Run};
use serde_json::{json, Value};

/// What the chain's own node answers to `web3_clientVersion` (sei-chain `evmrpc/web3.go`:
/// "Geth/" + GOOS-GOARCH + "/" + Go's version).
const CHAIN_NODE_VERSION: &str = "Geth/linux-amd64/go1.24.4";

/// chaintrace against the simulated chain, which stands for the chain's own node: anvil answers
/// `web3_clientVersion` as itself (a local fork runs Ethereum's rules), so these runs say which
/// rules it stands for. `the_chains_node_is_told_by_its_client_version` shows the detection.
fn chaintrace(args: &[&str]) -> Run {
    let mut args = args.to_vec();
    args.extend(["--chain-rules", "chain"]);
    plain_chaintrace(&args)
}

const BANK: &str = "0x0000000000000000000000000000000000001001";
const STAKING: &str = "0x0000000000000000000000000000000000001005";
const CALLER: &str = "0x000000000000000000000000000000000000cafe";

/// A chain-1329 anvil where CALLER calls bank (returns 0x2a) and staking (reverts), storing
/// bank's answer; returns the node and the transaction's hash.
fn simulated_chain() -> (anvil::Anvil, String) {
    let a = anvil::Anvil::start_with_args(&["--chain-id", "1329", "--hardfork", "prague"]);
    // bank: return 32 bytes holding 0x2a; staking: revert with nothing.
    a.rpc("anvil_setCode", json!([BANK, "0x602a60005260206000f3"]));
    a.rpc("anvil_setCode", json!([STAKING, "0x60006000fd"]));
    // CALL(gas, bank, 0, 0, 0, 0, 32); POP; CALL(gas, staking, 0, 0, 0, 0, 0); POP;
    // SSTORE(0, MLOAD(0))
    let code = "0x602060006000600060006110015af150\
                600060006000600060006110055af150\
                600051600055 00"
        .replace([' ', '\n'], "");
    a.rpc("anvil_setCode", json!([CALLER, code]));
    let (h, r) = a.send_and_wait(json!({"to": CALLER, "gas": "0x30000"}));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    (a, format!("{h:?}"))
}

fn frames(v: &Value) -> Vec<(String, String, Option<String>)> {
    v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["to"].as_str().unwrap().to_string(),
                c["gasUsed"].as_str().unwrap().to_string(),
                c.get("output").and_then(Value::as_str).map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn precompile_frames_come_from_the_node_under_chain_1329_rules() {
    let (a, hash) = simulated_chain();
    // No --chain-rules: the proxy answers web3_clientVersion as the chain's node does.
    let p = Proxy::start(a.url(), &["--client-version", CHAIN_NODE_VERSION]);
    let run = plain_chaintrace(&["tx", &hash, "--rpc-url", &p.url, "--json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "note: chain 1329's own rules applied (the node is the chain's ({CHAIN_NODE_VERSION}))"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("2 chain precompile frame(s) taken from the node's callTracer"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(bank)") && run.stderr.contains("(staking)"));
    assert!(
        run.stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        run.stderr
    );
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let node = a.trace(hash.parse().unwrap(), json!({"tracer": "callTracer"}));
    assert_eq!(frames(&ours), frames(&node), "ours {ours}\nnode {node}");
    assert_eq!(ours["calls"][1]["error"], json!("execution reverted"));
}

#[test]
fn without_the_nodes_debug_api_precompile_frames_are_named_opaque() {
    let (a, hash) = simulated_chain();
    let p = Proxy::start(a.url(), &["--deny", "debug_"]);
    let run = chaintrace(&["tx", &hash, "--rpc-url", &p.url, "--json", "--no-cache"]);
    // revm runs the stand-in code the node serves at those addresses, so the receipt agrees.
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "2 chain precompile frame(s) opaque (the node gave no readable trace of them: its \
             debug_traceTransaction answered: "
        ) && run.stderr.contains("Method not found"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        run.stderr
    );
}

/// A chain-1329 anvil whose "bank" changes state the way the chain's bank precompile does
/// beneath the EVM: it sends 7 wei to X, writes its own slot 5, emits a log and returns 0x2a.
/// CALLER warms X, calls bank, then stores X's balance (slot 0) and bank's answer (slot 1): a
/// replay that does not learn bank's effects stores 0 in slot 0 and charges other SSTORE gas.
fn bank_with_effects() -> (anvil::Anvil, String) {
    let a = chain_with_bank();
    let (h, r) = a.send_and_wait(json!({"to": CALLER, "gas": "0x30000"}));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    assert_eq!(r["logs"].as_array().map(Vec::len), Some(1), "{r}");
    (a, format!("{h:?}"))
}

/// A chain-1329 anvil with that bank and CALLER installed.
fn chain_with_bank() -> anvil::Anvil {
    let a = anvil::Anvil::start_with_args(&["--chain-id", "1329", "--hardfork", "prague"]);
    // CALL(gas, 0xbeef, 7, 0, 0, 0, 0); POP; SSTORE(5, 9); MSTORE(0, 0x2a); LOG0(0, 32);
    // RETURN(0, 32)
    let bank = "0x6000600060006000600761beef5af150\
                6009600555 602a600052 60206000a0 60206000f3"
        .replace([' ', '\n'], "");
    a.rpc("anvil_setCode", json!([BANK, bank]));
    a.rpc("anvil_setBalance", json!([BANK, "0x3e8"]));
    // POP(BALANCE(0xbeef)); CALL(gas, bank, 0, 0, 0, 0, 32); POP;
    // SSTORE(0, BALANCE(0xbeef)); SSTORE(1, MLOAD(0))
    let code = "0x61beef3150 6020600060006000600061 10015af150 61beef31600055 600051600155 00"
        .replace([' ', '\n'], "");
    a.rpc("anvil_setCode", json!([CALLER, code]));
    a
}

/// Every line of `want` is somewhere in `stderr`.
fn assert_says(stderr: &str, want: &[&str]) {
    for w in want {
        assert!(stderr.contains(w), "{w:?} not in:\n{stderr}");
    }
}

/// The state bank changed reaches the replay from the node's prestate diff, so the rest of the
/// transaction runs as on the node: the callTracer result (with logs) is the node's whole JSON,
/// the receipt's gas and log agree, and so does the node's post-state.
#[test]
fn state_a_chain_precompile_changed_comes_from_the_nodes_diff() {
    let (a, hash) = bank_with_effects();
    let run = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        a.url(),
        "--json",
        "--no-cache",
        "--tracer-config",
        r#"{"withLog":true}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_says(
        &run.stderr,
        &[
            "1 chain precompile frame(s) taken from the node's callTracer",
            "3 state item(s) the chain precompiles changed written from the node's prestateTracer diff",
            "self-check: replay matches the receipt (status success",
            "and the node's post-state of",
        ],
    );
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut node = a.trace(
        hash.parse().unwrap(),
        json!({"tracer": "callTracer", "tracerConfig": {"withLog": true}}),
    );
    // geth's top frame has the transaction's gas limit; anvil's the limit less intrinsic gas
    // (a known anvil difference, tests/live/live.rs).
    assert_eq!(ours["gas"], json!("0x30000"));
    node["gas"] = ours["gas"].clone();
    assert_eq!(ours, node);
    // Slot 0 holds X's balance after bank's transfer: 7, as the node stored it.
    let slot0 = a.rpc("eth_getStorageAt", json!([CALLER, "0x0", "latest"]));
    assert_eq!(slot0, json!(format!("0x{:064x}", 7)));
}

/// In the human tree the frame taken from the node says so.
#[test]
fn the_tree_marks_frames_taken_from_the_node() {
    let (a, hash) = bank_with_effects();
    let run = chaintrace(&["tx", &hash, "--rpc-url", a.url(), "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("0x0000…1001") || l.contains("1001"))
        .unwrap_or_else(|| panic!("no bank frame in:\n{}", run.stdout));
    assert!(line.contains("(from node)"), "{line}");
}

/// A block where state changes between two listed transactions for a reason no listed
/// transaction explains, as on chain 1329 when a Cosmos transaction (not listed by
/// `eth_getBlock*`) sends funds or writes storage between two EVM transactions. Here anvil
/// mines both writes as EVM transactions, and the proxy leaves the first out of the block as the
/// chain's node does. The node's prestate for the second sees the change: the fast path must
/// match the receipt. Replaying the listed transactions on the parent block's state cannot see
/// it: the RPC path must report the divergence (exit 4), never "matches".
#[test]
fn a_hidden_state_change_is_right_on_the_fast_path_and_reported_on_the_rpc_path() {
    let a = anvil::Anvil::start_with_args(&["--chain-id", "1329", "--hardfork", "prague"]);
    let hashes = a.write_then_read();
    let (hidden, target) = (format!("{:?}", hashes[0]), format!("{:?}", hashes[1]));
    assert_eq!(a.receipt(hashes[1])["transactionIndex"], json!("0x1"));
    let p = Proxy::start(a.url(), &["--hide-tx", &hidden]);
    let block = a.receipt(hashes[1])["blockHash"].clone();
    let listed = p_rpc(&p.url, "eth_getBlockByHash", json!([block, false]));
    assert_eq!(listed["transactions"], json!([target]), "{listed}");

    let fast = chaintrace(&["tx", &target, "--rpc-url", &p.url, "--json", "--no-cache"]);
    assert_eq!(fast.code, 0, "{}", fast.stderr);
    assert!(
        fast.stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        fast.stderr
    );

    let rpc = chaintrace(&[
        "tx",
        &target,
        "--rpc-url",
        &p.url,
        "--json",
        "--no-cache",
        "--state-source",
        "rpc",
    ]);
    assert_eq!(rpc.code, 4, "{}", rpc.stderr);
    assert!(
        rpc.stderr.contains("self-check FAILED") && rpc.stderr.contains("gasUsed: replay"),
        "{}",
        rpc.stderr
    );
    assert!(!rpc.stderr.contains("matches"), "{}", rpc.stderr);
}

/// One JSON-RPC call through the proxy.
fn p_rpc(url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (_, text) = chaintrace::rpc::transport::post_json(
        url,
        &[],
        body.to_string(),
        std::time::Duration::from_secs(30),
        1 << 24,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["result"].clone()
}

/// `access` splices too: bank's frame from the node, its state corrected, the receipt agreeing.
#[test]
fn access_splices_chain_precompiles() {
    let (a, hash) = bank_with_effects();
    let run = chaintrace(&[
        "access",
        &hash,
        "--rpc-url",
        a.url(),
        "--json",
        "--no-cache",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("1 chain precompile frame(s) taken from the node's callTracer"),
        "{}",
        run.stderr
    );
    // The caller's slot 0 ends holding 7, X's balance after bank's transfer.
    assert!(
        run.stdout.contains(&format!("{:064x}", 7)) || run.stdout.contains("\"0x7\""),
        "{}",
        run.stdout
    );
}

/// `block` splices per transaction: one request for the block's node traces and diffs, bank's
/// effects written in the first transaction and seen by the second (which stores X's balance),
/// every receipt agreeing, and the callTracer results equal to the node's.
#[test]
fn block_replays_splice_each_transaction() {
    let a = chain_with_bank();
    // SSTORE(0, BALANCE(0xbeef))
    let reader = "0x000000000000000000000000000000000000feed";
    a.rpc("anvil_setCode", json!([reader, "0x61beef3160005500"]));
    let other = a.accounts()[1];
    let hashes = a.send_in_one_block(vec![
        json!({"to": CALLER, "gas": "0x30000"}),
        json!({"from": other, "to": reader, "gas": "0x30000"}),
    ]);
    let number = a.receipt(hashes[0])["blockNumber"]
        .as_str()
        .unwrap()
        .to_string();
    let run = chaintrace(&[
        "block",
        &number,
        "--rpc-url",
        a.url(),
        "--json",
        "--tracer-config",
        r#"{"withLog":true}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_says(
        &run.stderr,
        &[
            "1 chain precompile frame(s) taken from the node's callTracer",
            "3 state item(s) the chain precompiles changed written from the node's prestateTracer diff",
            "self-check: 2 transactions match their receipts",
        ],
    );
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut node = a.rpc(
        "debug_traceBlockByNumber",
        json!([number, {"tracer": "callTracer", "tracerConfig": {"withLog": true}}]),
    );
    // Known anvil differences (tests/live/live.rs): the top frame's gas is the limit less intrinsic
    // gas, gasUsed the block's running total, and log indexes count per transaction.
    for (o, n) in ours
        .as_array()
        .unwrap()
        .iter()
        .zip(node.as_array_mut().unwrap())
    {
        assert_eq!(o["result"]["gas"], json!("0x30000"));
        for k in ["gas", "gasUsed"] {
            n["result"][k] = o["result"][k].clone();
        }
    }
    assert_eq!(ours, node);
}

/// A CometBFT RPC as a chain-1329 node serves it on 26657 (CometBFT's `/block` and
/// `/abci_query` answers), saying the SSTORE set cost in force is `set_gas`; records the paths
/// asked.
fn consensus_rpc(set_gas: &'static str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use base64::Engine;
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    let url = http::serve(move |r| {
        log.lock().unwrap().push(r.path.clone());
        let height = |key: &str| -> u64 {
            r.path
                .split(['?', '&'])
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|v| v.parse().ok())
                .unwrap()
        };
        if r.path.starts_with("/block?") {
            let h = height("height=");
            let body = json!({"jsonrpc": "2.0", "id": -1, "result": {
                "block_id": {"hash": "AB"},
                "block": {"header": {"chain_id": "pacific-1", "height": h.to_string(),
                    "time": "2026-11-25T10:00:00.123456789Z"}}}});
            return http::Reply::Answer(200, body.to_string());
        }
        // QueryParamsRequest{subspace: "evm", key: "KeySeiSstoreSetGasEIP2200"}.
        let want = "0a0365766d12194b65795365695373746f726553657447617345495032323030";
        assert!(
            r.path
                .starts_with("/abci_query?path=%22/cosmos.params.v1beta1.Query/Params%22")
                && r.path.contains(&format!("data=0x{want}&")),
            "{}",
            r.path
        );
        // QueryParamsResponse{param: ParamChange{subspace, key, value: "\"<set_gas>\""}}.
        let value = format!("\"{set_gas}\"");
        let mut change = b"\x0a\x03evm\x12\x19KeySeiSstoreSetGasEIP2200".to_vec();
        change.push(0x1a);
        change.push(value.len() as u8);
        change.extend(value.as_bytes());
        let mut resp = vec![0x0a, change.len() as u8];
        resp.extend(change);
        let body = json!({"jsonrpc": "2.0", "id": -1, "result": {"response": {
            "code": 0, "log": "", "info": "", "index": "0", "key": null,
            "value": base64::engine::general_purpose::STANDARD.encode(resp),
            "proofOps": null, "height": height("height=").to_string(), "codespace": ""}}});
        http::Reply::Answer(200, body.to_string())
    });
    (url, asked)
}

/// `--consensus-rpc` reads the chain's SSTORE set cost at the block's height and the replay
/// prices with it: anvil prices 20,000, so a consensus layer saying 25,000 makes the replay of
/// a transaction that sets one zero slot cost exactly 5,000 more than anvil's receipt (exit 4),
/// and one saying 20,000 matches. Without it the note says the default was assumed.
#[test]
fn the_sstore_set_cost_is_read_from_the_consensus_layer() {
    let a = anvil::Anvil::start_with_args(&["--chain-id", "1329", "--hardfork", "prague"]);
    let c = "0x000000000000000000000000000000000000c0de";
    // SSTORE(0, 1)
    a.rpc("anvil_setCode", json!([c, "0x600160005500"]));
    let (h, r) = a.send_and_wait(json!({"to": c, "gas": "0x20000"}));
    let hash = format!("{h:?}");
    let used =
        u64::from_str_radix(r["gasUsed"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let number = u64::from_str_radix(
        r["blockNumber"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();

    let with_consensus = |url: &str| {
        chaintrace(&[
            "tx",
            &hash,
            "--rpc-url",
            a.url(),
            "--json",
            "--no-cache",
            "--consensus-rpc",
            url,
        ])
    };
    let (url, asked) = consensus_rpc("25000");
    let run = with_consensus(&url);
    assert_eq!(run.code, 4, "{}", run.stderr);
    let want = format!("gasUsed: replay {} but receipt {used}", used + 5_000);
    assert_says(&run.stderr, &[&want]);
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.contains(&format!("/block?height={number}")),
        "{asked:?}"
    );
    assert!(
        asked
            .iter()
            .any(|p| p.ends_with(&format!("&height={}", number - 1))),
        "{asked:?}"
    );

    let (url, _) = consensus_rpc("20000");
    let run = with_consensus(&url);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("SeiSstoreSetGasEIP2200"),
        "{}",
        run.stderr
    );

    // A consensus endpoint whose answer cannot be read is a failure to read (exit 2, naming
    // what was asked), never a replay on a guessed value.
    let garbage = http::serve(|_| http::Reply::Answer(200, "<html>maintenance</html>".into()));
    let run = with_consensus(&garbage);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_says(&run.stderr, &["consensus block header", "not JSON"]);
    assert!(!run.stderr.contains("matches"), "{}", run.stderr);

    let run = chaintrace(&["tx", &hash, "--rpc-url", a.url(), "--json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("it was not read (pass --consensus-rpc)"),
        "{}",
        run.stderr
    );
}

/// `serve` splices too: its `debug_traceTransaction` and `debug_traceBlockByNumber` on the
/// bank chain answer exactly what `tx --json` and `block --json` print.
#[test]
fn serve_splices_as_the_cli_does() {
    let (a, hash) = bank_with_effects();
    let number = a.receipt(hash.parse().unwrap())["blockNumber"]
        .as_str()
        .unwrap()
        .to_string();
    let cfg = r#"{"withLog":true}"#;
    let s = serve_support::Serve::start(a.url(), &["--chain-rules", "chain"]);
    let opts = json!({"tracer": "callTracer", "tracerConfig": {"withLog": true}});
    let served: Value =
        serde_json::from_str(&s.result("debug_traceTransaction", json!([hash, opts]))).unwrap();
    let cli = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        a.url(),
        "--json",
        "--no-cache",
        "--tracer-config",
        cfg,
    ]);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(served, serde_json::from_str::<Value>(&cli.stdout).unwrap());
    assert!(served["calls"][0]["calls"].is_array(), "{served}");
    // The request log names the rules applied, as the CLI's stderr does.
    assert!(
        s.log()
            .contains("chain 1329's own rules applied (--chain-rules)"),
        "{}",
        s.log()
    );

    let served: Value =
        serde_json::from_str(&s.result("debug_traceBlockByNumber", json!([number, opts]))).unwrap();
    let cli = chaintrace(&[
        "block",
        &number,
        "--rpc-url",
        a.url(),
        "--json",
        "--tracer-config",
        cfg,
    ]);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(served, serde_json::from_str::<Value>(&cli.stdout).unwrap());
}

/// The node's pre-state and diff as anvil's own prestateTracer prints them, and ours, with the
/// known anvil differences (`codeHash`, empty accounts) taken out the way tests/live/live.rs does.
fn prestates(url: &str, a: &anvil::Anvil, hash: &str, extra: &[&str]) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for cfg in [json!({}), json!({"diffMode": true})] {
        let cfg_s = cfg.to_string();
        let mut args = vec![
            "tx",
            hash,
            "--rpc-url",
            url,
            "--json",
            "--no-cache",
            "--tracer",
            "prestateTracer",
            "--tracer-config",
            &cfg_s,
        ];
        args.extend(extra);
        let run = plain_chaintrace(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let mut ours: Value = serde_json::from_str(&run.stdout).unwrap();
        let mut failures = Vec::new();
        anvil::strip_code_hash(&mut ours, hash, &mut failures);
        assert!(failures.is_empty(), "{failures:?}");
        let mut theirs = a.trace(
            hash.parse().unwrap(),
            json!({"tracer": "prestateTracer", "tracerConfig": cfg}),
        );
        anvil::drop_empty_accounts(&mut theirs);
        out.push((ours, theirs));
    }
    out
}

/// An anvil started with chain id 1329 is a local fork of the chain: it runs Ethereum's rules
/// (the base fee burned, the tip to the block's coinbase). chaintrace asks web3_clientVersion in
/// its first batch, sees anvil, and replays under Ethereum's rules: the prestate and diff equal
/// anvil's own. With --chain-rules chain the chain's fee rules apply, and say so: the fee
/// collector is credited instead of the coinbase, and the self-check still passes (gasUsed,
/// status and logs do not see fees) while the prestate differs from the node's.
#[test]
fn a_local_fork_of_chain_1329_runs_ethereums_rules() {
    let a = anvil::Anvil::start_with_args(&["--chain-id", "1329", "--hardfork", "prague"]);
    let to = "0x000000000000000000000000000000000000beef";
    let (h, r) = a.send_and_wait(json!({
        "to": to, "value": "0x1234", "gas": "0x10000",
        "maxPriorityFeePerGas": "0x3b9aca00", "maxFeePerGas": "0x77359400"
    }));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    let hash = format!("{h:?}");
    let coinbase = a.rpc("eth_getBlockByHash", json!([r["blockHash"], false]))["miner"]
        .as_str()
        .unwrap()
        .to_lowercase();
    let fee_collector = "0xf1829676db577682e944fc3493d451b67ff3e29f";

    let ethereum = prestates(a.url(), &a, &hash, &[]);
    for (ours, theirs) in &ethereum {
        assert_eq!(ours, theirs);
        assert!(!ours.to_string().contains(fee_collector), "{ours}");
    }
    // The tip went to the block's coinbase (empty before, so only the diff's post shows it).
    let diff = &ethereum[1].0;
    assert!(diff["post"].get(&coinbase).is_some(), "{diff}");
    let run = plain_chaintrace(&["tx", &hash, "--rpc-url", a.url(), "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_says(
        &run.stderr,
        &[
            "note: chain 1329 replayed under Ethereum's rules (the node is anvil/v1.7.1, which \
             runs Ethereum's rules); --chain-rules chain to apply the chain's own",
            "self-check: replay matches the receipt",
        ],
    );

    let chain = prestates(a.url(), &a, &hash, &["--chain-rules", "chain"]);
    let (diff, _) = &chain[1];
    let post = diff["post"].as_object().unwrap();
    assert!(post.contains_key(fee_collector), "{diff}");
    assert!(!post.contains_key(&coinbase), "{diff}");
    let run = chaintrace(&["tx", &hash, "--rpc-url", a.url(), "--no-cache"]);
    assert_says(
        &run.stderr,
        &["note: chain 1329's own rules applied (--chain-rules)"],
    );
}

/// A chain without a fork schedule here (anvil's 31337) is replayed under the fork its block
/// header shows, not the latest: a transfer with 1,000 bytes of calldata costs 37,000 gas before
/// Prague and 61,000 from Prague on (EIP-7623's floor), so replaying a Cancun block under Osaka
/// would fail the self-check. Where the fields fit two forks the later is taken and stderr says
/// so; --hardfork overrides.
#[test]
fn forks_of_unknown_chains_come_from_the_block_header() {
    let data = format!("0x{}", "ab".repeat(1000));
    for (fork, gas, note) in [
        ("prague", 61_000u64, Some("fits Prague to Osaka")),
        ("cancun", 37_000, None),
        ("shanghai", 37_000, None),
        ("paris", 37_000, Some("fits London to Paris")),
        ("london", 37_000, Some("fits London to Paris")),
        ("berlin", 37_000, Some("fits Frontier to Berlin")),
    ] {
        let a = anvil::Anvil::start_with_args(&["--hardfork", fork]);
        let mut tx = json!({"to": "0x000000000000000000000000000000000000beef", "data": data, "gas": "0x20000"});
        if fork == "berlin" {
            // Before London anvil takes only legacy fee fields.
            tx["gasPrice"] = json!("0x3b9aca00");
        }
        let (h, r) = a.send_and_wait(tx);
        assert_eq!(r["gasUsed"], json!(format!("{gas:#x}")), "{fork}: {r}");
        let hash = format!("{h:?}");
        // The fork note is a doubt: quiet while the self-check matches, said with -v.
        let quiet = plain_chaintrace(&["tx", &hash, "--rpc-url", a.url(), "--json", "--no-cache"]);
        assert_eq!(quiet.code, 0, "{fork}: {}", quiet.stderr);
        assert!(
            !quiet.stderr.contains("no fork schedule"),
            "{fork}: {}",
            quiet.stderr
        );
        let run = plain_chaintrace(&[
            "tx",
            &hash,
            "--rpc-url",
            a.url(),
            "--json",
            "--no-cache",
            "-v",
        ]);
        assert_eq!(run.code, 0, "{fork}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("self-check: replay matches the receipt"),
            "{fork}: {}",
            run.stderr
        );
        match note {
            Some(n) => assert!(run.stderr.contains(n), "{fork}: {}", run.stderr),
            None => assert!(
                !run.stderr.contains("no fork schedule"),
                "{fork}: {}",
                run.stderr
            ),
        }
        // --hardfork overrides: Osaka's floor makes the Cancun-era transfer cost 61,000.
        if fork == "cancun" {
            let run = plain_chaintrace(&[
                "tx",
                &hash,
                "--rpc-url",
                a.url(),
                "--json",
                "--no-cache",
                "--hardfork",
                "osaka",
            ]);
            assert_eq!(run.code, 4, "{}", run.stderr);
            assert!(
                run.stderr
                    .contains("gasUsed: replay 61000 but receipt 37000"),
                "{}",
                run.stderr
            );
            assert!(!run.stderr.contains("no fork schedule"), "{}", run.stderr);
        }
    }
}

/// A node that times out on the trace the splice asks for is reported as a timeout (exit 2,
/// naming the method), never as a node without a debug API whose frames are opaque, and
/// nothing is said to match.
#[test]
fn a_timeout_while_asking_for_frames_is_a_timeout() {
    let (a, hash) = simulated_chain();
    let p = Proxy::start(a.url(), &["--hang-on", "debug_"]);
    let run = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        &p.url,
        "--json",
        "--no-cache",
        "--state-source",
        "rpc",
        "--rpc-timeout",
        "1",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_says(&run.stderr, &["(debug_traceTransaction) timed out"]);
    assert!(
        !run.stderr.contains("opaque") && !run.stderr.contains("matches"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

/// A simulated call's chain-precompile frames come from the node's `debug_traceCall` of the
/// same call (issue 31: before, `call` asked the node for the whole block's traces, which
/// hold no entry for a simulated call, so its frames could never be known). The proxy refuses
/// `debug_traceBlock*`: the frames are taken all the same, and equal the node's own. With a
/// state override the node is not asked, and the note says so.
#[test]
fn a_simulated_calls_precompile_frames_come_from_the_nodes_trace_of_it() {
    let (a, _) = simulated_chain();
    let p = Proxy::start(
        a.url(),
        &[
            "--client-version",
            CHAIN_NODE_VERSION,
            "--deny",
            "debug_traceBlock",
        ],
    );
    let run = plain_chaintrace(&[
        "call",
        "--to",
        CALLER,
        "--gas",
        "0x30000",
        "--rpc-url",
        &p.url,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("2 chain precompile frame(s) taken from the node's callTracer"),
        "{}",
        run.stderr
    );
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let node = a.rpc(
        "debug_traceCall",
        json!([{"to": CALLER, "gas": "0x30000"}, "latest", {"tracer": "callTracer"}]),
    );
    assert_eq!(frames(&ours), frames(&node), "ours {ours}\nnode {node}");

    let run = plain_chaintrace(&[
        "call",
        "--to",
        CALLER,
        "--gas",
        "0x30000",
        "--rpc-url",
        &p.url,
        "--json",
        "--state-override",
        r#"{"0x000000000000000000000000000000000000beef": {"balance": "0x1"}}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a simulated call with overrides is not asked of the node"),
        "{}",
        run.stderr
    );
}

/// A bundle captured on the chain holds the state an earlier transaction of the block left
/// through one of the chain's precompiles (the capture now applies the earlier transactions
/// through the replay driver, with the node's frames and diff): CALLER calls bank (7 wei to
/// 0xbeef, bank's slot 5), then READER stores 0xbeef's balance. The bundle of READER's
/// transaction holds 0xbeef's 7 wei and replays offline matching its receipt. (Here bank's
/// stand-in code also runs in revm, so the capture without splices got this right too: a
/// precompile with no EVM code, which only a real chain node has, is not simulated.)
#[test]
fn a_bundle_after_a_precompile_call_holds_what_the_call_left() {
    let a = chain_with_bank();
    let reader = "0x000000000000000000000000000000000000dead";
    // SSTORE(0, BALANCE(0xbeef))
    a.rpc("anvil_setCode", json!([reader, "0x61beef3160005500"]));
    let hashes = a.send_in_one_block(vec![
        json!({"to": CALLER, "gas": "0x30000"}),
        json!({"to": reader, "gas": "0x20000"}),
    ]);
    let dir = std::env::temp_dir().join(format!("chaintrace-chain-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("b.json");
    let f = file.to_str().unwrap();
    let target = format!("{:?}", hashes[1]);
    let run = chaintrace(&["bundle", "capture", &target, "--rpc-url", a.url(), "-o", f]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bundle: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let beef = bundle["genesis"]["alloc"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("0x000000000000000000000000000000000000beef"))
        .map(|(_, v)| v["balance"].clone())
        .unwrap_or(Value::Null);
    assert_eq!(
        beef,
        json!("0x7"),
        "0xbeef's balance after bank's transfer: {}",
        bundle["genesis"]["alloc"]
    );
    let replay = plain_chaintrace(&["tx", "--fixture", f, "--tracer", "prestateTracer", "--json"]);
    assert_eq!(replay.code, 0, "{}", replay.stderr);
    assert!(
        replay
            .stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        replay.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `chaintrace debug` under chain 1329's rules: the node's frames of the chain's precompiles
/// spliced as `tx` splices them (the bank's answer stored), the staking precompile's failure
/// the first failure of a transaction that succeeded, and the self-check after the screen.
#[test]
fn the_debugger_replays_under_the_chains_rules() {
    let (a, hash) = simulated_chain();
    let t = crate::tmux::Tmux::start(
        std::path::Path::new("/"),
        &[
            "debug",
            &hash,
            "--rpc-url",
            a.url(),
            "--chain-rules",
            "chain",
        ],
        &[("CHAINTRACE_NO_CACHE", "1")],
    );
    let first = t.wait_for("step 1/", 120);
    assert!(first.contains(" │ succeeded │ "), "{first}");
    // The first failure: the call into staking, which ran no code here.
    t.keys(&["r"]);
    let at = t.wait_for(" CALL ", 30);
    assert!(at.contains("depth 0"), "{at}");
    // The SSTORE of the bank's answer: 0x2a, as the node's frame returned it.
    t.keys(&["/", "S", "S", "T", "O", "R", "E", "Enter"]);
    let store = t.wait_for(" SSTORE ", 30);
    // SSTORE's two inputs, marked: the slot, then the value.
    assert!(store.contains("  0◂ 0x0 "), "{store}");
    assert!(store.contains("  1◂ 0x2a "), "{store}");
    t.keys(&["q"]);
    let after = t.wait_for("[exited 0]", 30);
    assert!(
        after.contains("self-check: replay matches the receipt (status success"),
        "{after}"
    );
}
