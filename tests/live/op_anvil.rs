//! The OP stack on a live node: anvil 1.7.1 `--network optimism`, the pinned anvil's OP mode
//! (op-revm's rules; `anvil_nodeInfo` says hardFork Jovian). A deposit (`"type":"0x7e"` with
//! `sourceHash`, `mint`, `isSystemTx`) sent through `eth_sendTransaction`, a user transaction
//! and a probe beside it in one block; chaintrace replays the block and each transaction with a
//! matching self-check.
//!
//! What anvil charges there (found by hand, and held below): the L1 data fee and the operator
//! fee priced from the L1Block predeploy's storage (0x4200…0015 has no code on anvil; its slots
//! are empty, so a fee of 0, until set), the base fee credited to the BaseFeeVault, the L1 fee
//! to the L1FeeVault, the tip to the block's miner (0x0 on anvil) — op-geth's rules on
//! anvil's state. Its receipts carry no L1-fee fields (nothing for the self-check to compare)
//! and no block opens with an L1 attributes deposit. The probe logs the vaults' and the user's
//! balances, so the self-check's log comparison holds chaintrace's fee charging to anvil's.

use crate::anvil::{self, Anvil};
use crate::proxy::chaintrace;
use serde_json::{json, Value};

const L1_BLOCK: &str = "0x4200000000000000000000000000000000000015";
const PROBE: &str = "0x000000000000000000000000000000000000c0de";

/// PUSH20 each address, BALANCE, MSTORE at 32·i; LOG0 of the words.
fn probe_code(watch: &[String]) -> String {
    let mut code = String::from("0x");
    for (i, a) in watch.iter().enumerate() {
        code.push_str(&format!("73{}3160{:02x}52", &a[2..], i * 32));
    }
    code.push_str(&format!("60{:02x}6000a000", watch.len() * 32));
    code
}

/// An OP-mode anvil with fees in the L1Block predeploy, and one block holding a deposit, a user
/// transaction with calldata and a call of the probe; returns the node, the block number and
/// the hashes in block order.
fn op_block() -> (Anvil, u64, Vec<String>, Vec<String>) {
    let a = Anvil::start_with_args(&["--network", "optimism", "--order", "fifo"]);
    let info = a.rpc("anvil_nodeInfo", json!([]));
    assert_eq!(info["hardFork"], json!("Jovian"), "{info}");
    let set = |n: u8, v: &str| {
        assert_eq!(v.len(), 66, "{v}");
        a.rpc(
            "anvil_setStorageAt",
            json!([L1_BLOCK, format!("{n:#x}"), v]),
        );
    };
    // L1 base fee 1 gwei; Ecotone scalars: base fee 1368 at bytes [16,20), blob 810949 at
    // [20,24); blob base fee 3; Isthmus operator fee: scalar 2 at [20,24), constant 1000.
    set(1, &format!("0x{:064x}", 1_000_000_000u64));
    set(
        3,
        &format!("0x{:032x}{:08x}{:08x}{:016x}", 0, 1368, 810_949, 0),
    );
    set(7, &format!("0x{:064x}", 3));
    set(8, &format!("0x{:040x}{:08x}{:016x}", 0, 2, 1000));
    let acc = a.accounts();
    let watch: Vec<String> = [
        "0x4200000000000000000000000000000000000019",
        "0x420000000000000000000000000000000000001a",
        "0x420000000000000000000000000000000000001b",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("{:?}", acc[1])])
    .collect();
    a.rpc("anvil_setCode", json!([PROBE, probe_code(&watch)]));
    let hashes = a.send_in_one_block(vec![
        json!({
            "type": "0x7e", "from": acc[2], "to": acc[4], "value": "0xde0b6b3a7640000",
            "mint": "0x1bc16d674ec80000", "gas": "0x30000", "isSystemTx": false,
            "sourceHash": "0x00000000000000000000000000000000000000000000000000000000000000aa",
        }),
        json!({
            "from": acc[1], "to": acc[3], "value": "0x5", "maxPriorityFeePerGas": "0x7",
            "data": format!("0x{}", "ab01".repeat(60)), "gas": "0x20000",
        }),
        json!({"from": acc[5], "to": PROBE, "gas": "0x20000", "maxPriorityFeePerGas": "0x3"}),
    ]);
    let block = anvil::parse_u64(&a.receipt(hashes[0])["blockNumber"]);
    let mut ordered: Vec<(u64, String)> = hashes
        .iter()
        .map(|h| {
            let r = a.receipt(*h);
            assert_eq!(r["status"], json!("0x1"), "{r}");
            (anvil::parse_u64(&r["transactionIndex"]), format!("{h:?}"))
        })
        .collect();
    ordered.sort();
    let hashes: Vec<String> = ordered.into_iter().map(|(_, h)| h).collect();
    (a, block, hashes, watch)
}

fn assert_says(stderr: &str, want: &[&str]) {
    for w in want {
        assert!(stderr.contains(w), "{w:?} not in:\n{stderr}");
    }
}

#[test]
fn an_op_anvil_block_replays_with_deposits_and_fees() {
    let (a, block, hashes, watch) = op_block();
    // The deposit opens the block (fifo), the user transaction and the probe follow.
    let first = a.rpc("eth_getTransactionByHash", json!([hashes[0]]));
    assert_eq!(first["type"], json!("0x7e"), "{first}");
    // anvil charged an L1 fee: the probe saw the L1FeeVault credited (word 1 of its log).
    let probe = a.receipt(hashes[2].parse().unwrap());
    let data = probe["logs"][0]["data"].as_str().unwrap().to_string();
    let word = |i: usize| &data[2 + 64 * i..2 + 64 * (i + 1)];
    assert_ne!(
        u128::from_str_radix(&word(1)[32..], 16).unwrap(),
        0,
        "{data}"
    );
    assert_ne!(
        u128::from_str_radix(&word(2)[32..], 16).unwrap(),
        0,
        "{data}"
    );
    assert_eq!(watch.len(), 4);

    // `block N`: the block's deposits show the OP stack; no flag needed.
    let run = chaintrace(&["block", &block.to_string(), "--rpc-url", a.url()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_says(
        &run.stderr,
        &[
            "note: anvil/v1.7.1 is a dev node: its OP mode (anvil --network optimism) names \
             its fork Jovian but charges Isthmus's operator fee",
            "note: chain 31337: the OP stack's rules applied (the block holds deposit \
             transactions (type 0x7e); the node is anvil/v1.7.1), every OP fork through \
             Isthmus: deposits",
            "self-check: 3 transactions match their receipts",
        ],
    );
    assert!(
        run.stdout.contains("deposit from L1: CALL "),
        "{}",
        run.stdout
    );

    // The deposit alone: the transaction shows the OP stack, on either state source.
    for source in ["prestate", "rpc"] {
        let run = chaintrace(&[
            "tx",
            &hashes[0],
            "--rpc-url",
            a.url(),
            "--no-cache",
            "--state-source",
            source,
        ]);
        assert_eq!(run.code, 0, "{source}: {}", run.stderr);
        assert_says(
            &run.stderr,
            &[
                "the OP stack's rules applied (the transaction is a deposit (type 0x7e)",
                "self-check: replay matches the receipt (status success, gasUsed 21000",
            ],
        );
        // The tree marks it: what L1 minted to `from` (2 ETH; chain 31337's currency has no
        // name) and where it came from.
        let top = run.stdout.lines().next().unwrap_or_default();
        assert!(
            top.starts_with("deposit from L1: CALL ")
                && top.contains(" value 1 native mint 2 native gas "),
            "{source}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!("source hash 0x{:064x}", 0xaa)),
            "{}",
            run.stdout
        );
    }

    // A user transaction shows nothing of the OP stack on a chain id chaintrace has no preset
    // for: --chain-rules optimism says it. Replayed from the block's start (rpc), the probe's
    // log holds the vault balances after chaintrace's own charging of the deposit and the user.
    for h in &hashes[1..] {
        for source in ["prestate", "rpc"] {
            let run = chaintrace(&[
                "tx",
                h,
                "--rpc-url",
                a.url(),
                "--no-cache",
                "--state-source",
                source,
                "--chain-rules",
                "optimism",
            ]);
            assert_eq!(run.code, 0, "{h} {source}: {}", run.stderr);
            assert_says(
                &run.stderr,
                &[
                    "the OP stack's rules applied (--chain-rules)",
                    "self-check: replay matches the receipt",
                ],
            );
        }
    }

    // The user paid gas, value, L1 fee and operator fee exactly as anvil charged them: the
    // sender's balance after it in chaintrace's prestate diff is anvil's.
    let diff = |args: &[&str]| -> Value {
        let mut all = vec![
            "tx",
            &hashes[1],
            "--rpc-url",
            a.url(),
            "--no-cache",
            "--tracer",
            "prestateTracer",
            "--tracer-config",
            r#"{"diffMode":true}"#,
            "--json",
        ];
        all.extend_from_slice(args);
        let run = chaintrace(&all);
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap()
    };
    let node = a.trace(
        hashes[1].parse().unwrap(),
        json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
    );
    let user = watch[3].to_lowercase();
    let ours = diff(&["--chain-rules", "optimism"]);
    assert_eq!(
        ours["post"][&user]["balance"], node["post"][&user]["balance"],
        "ours {ours}\nnode {node}"
    );
    // Under Ethereum's rules the L1 and operator fees are not taken: the balance differs.
    let eth = diff(&["--chain-rules", "ethereum"]);
    assert_ne!(
        eth["post"][&user]["balance"],
        node["post"][&user]["balance"]
    );
}
