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
//! anvil's state. Its receipts carry no L1-fee fields (the self-check line says so)
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
    let watch = set_fees_and_probe(&a);
    let acc = a.accounts();
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

/// Sets the fees in anvil's L1Block predeploy and the probe's code; returns what the probe
/// logs the balances of: the BaseFeeVault, the L1FeeVault, the OperatorFeeVault and account 1.
fn set_fees_and_probe(a: &Anvil) -> Vec<String> {
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
    watch
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
             its fork Jovian but charges Isthmus's fees whatever fork it names",
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
    // for (anvil's nodeInfo does: `anvil_node_info_gives_the_op_mode`); here
    // --chain-rules optimism says it. Replayed from the block's start (rpc), the probe's
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
                    // The self-check says which L1-fee fields it compared: anvil's receipts
                    // carry none.
                    "logs; the receipt has no L1-fee fields to compare)",
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

/// A bundle captured from the OP-mode anvil records the rules the node ran (`chainRules`
/// optimism, `opDevFork` Isthmus): replayed offline, the user's transaction pays the same L1
/// and operator fees, its sender's balance after it in the prestate diff equal to anvil's own.
#[test]
fn a_bundle_records_the_op_rules_it_was_captured_under() {
    let (a, _block, hashes, watch) = op_block();
    let path =
        std::env::temp_dir().join(format!("chaintrace-op-bundle-{}.json", std::process::id()));
    let out = path.to_str().unwrap();
    let run = chaintrace(&[
        "bundle",
        "capture",
        &hashes[1],
        "--rpc-url",
        a.url(),
        "--chain-rules",
        "optimism",
        "-o",
        out,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bundle: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(bundle["chainRules"], json!("optimism"), "{bundle}");
    assert_eq!(bundle["opDevFork"], json!("Isthmus"), "{bundle}");
    let run = chaintrace(&[
        "tx",
        "--fixture",
        out,
        "--tracer",
        "prestateTracer",
        "--tracer-config",
        r#"{"diffMode":true}"#,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("self-check: replay matches the receipt"),
        "{}",
        run.stderr
    );
    let ours: Value = serde_json::from_str(&run.stdout).unwrap();
    let node = a.trace(
        hashes[1].parse().unwrap(),
        json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
    );
    let user = watch[3].to_lowercase();
    assert_eq!(
        ours["post"][&user]["balance"], node["post"][&user]["balance"],
        "ours {ours}\nnode {node}"
    );
    let _ = std::fs::remove_file(&path);
}

/// op-geth's `FlzCompressLen` (core/types/rollup_cost.go), ported here so that the test's
/// expected L1 data fee is its own hand computation: the FastLZ size of a transaction's
/// encoding, which Fjord's L1 cost is priced by.
fn flz_compress_len(ib: &[u8]) -> u64 {
    let mut n = 0u64;
    let mut ht = vec![0u32; 8192];
    let u24 = |i: u32| -> u32 {
        let i = i as usize;
        u32::from(ib[i]) | (u32::from(ib[i + 1]) << 8) | (u32::from(ib[i + 2]) << 16)
    };
    let cmp = |p: u32, q: u32, e: u32| -> u32 {
        // Go's `for e -= q; l < e; l++`: a mismatch ends the loop after one more `l++`.
        let (mut l, mut e) = (0u32, e - q);
        while l < e {
            if ib[(p + l) as usize] != ib[(q + l) as usize] {
                e = 0;
            }
            l += 1;
        }
        l
    };
    let literals = |n: &mut u64, r: u32| {
        *n += 0x21 * u64::from(r / 0x20);
        let r = r % 0x20;
        if r != 0 {
            *n += u64::from(r) + 1;
        }
    };
    let hash = |v: u32| (2_654_435_769u32.wrapping_mul(v) >> 19) & 0x1fff;
    let mut a = 0u32;
    let ip_limit = (ib.len() as u32).saturating_sub(13);
    let mut ip = a + 2;
    while ip < ip_limit {
        let (mut r, mut d);
        loop {
            let s = u24(ip);
            let h = hash(s) as usize;
            r = ht[h];
            ht[h] = ip;
            d = ip.wrapping_sub(r);
            if ip >= ip_limit {
                break;
            }
            ip += 1;
            if d <= 0x1fff && s == u24(r) {
                break;
            }
        }
        if ip >= ip_limit {
            break;
        }
        ip -= 1;
        if ip > a {
            literals(&mut n, ip - a);
        }
        let l = cmp(r + 3, ip + 3, ip_limit + 9);
        // match(l)
        let m = l - 1;
        n += 3 * u64::from(m / 262) + if m % 262 >= 6 { 3 } else { 2 };
        // ip = setNextHash(setNextHash(ip + l))
        ip += l;
        for _ in 0..2 {
            ht[hash(u24(ip)) as usize] = ip;
            ip += 1;
        }
        a = ip;
    }
    literals(&mut n, ib.len() as u32 - a);
    n
}

fn u128_of(v: &Value) -> u128 {
    u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// What the user transaction `hash` paid, worked by hand from the L1Block values
/// `set_fees_and_probe` set and the node's own receipt and block: `[base fee, priority fee, L1
/// data fee, operator fee]`.
fn hand_fees(a: &Anvil, hash: &str) -> [u128; 4] {
    let receipt = a.receipt(hash.parse().unwrap());
    let gas_used = u128_of(&receipt["gasUsed"]);
    let price = u128_of(&receipt["effectiveGasPrice"]);
    let header = a.rpc(
        "eth_getBlockByNumber",
        json!([receipt["blockNumber"], false]),
    );
    let base_fee = u128_of(&header["baseFeePerGas"]);
    let raw = a.rpc("eth_getRawTransactionByHash", json!([hash]));
    let raw = alloy_primitives::hex::decode(raw.as_str().unwrap()).unwrap();
    // Fjord (rollup_cost.go NewL1CostFuncFjord) with L1 base fee 1 gwei, scalars 1368 and
    // 810,949, blob base fee 3: max(100e6, -42,585,600 + 836,500 × fastlz) × (1368 × 1e9 × 16
    // + 810,949 × 3) / 1e12.
    let fastlz = i128::from(flz_compress_len(&raw) as u32);
    let size = (-42_585_600 + 836_500 * fastlz).max(100_000_000) as u128;
    let l1 = size * (1368 * 1_000_000_000 * 16 + 810_949 * 3) / 1_000_000_000_000;
    // Isthmus's operator fee (what anvil 1.7.1 charges): gasUsed × scalar 2 / 1e6 + 1000.
    let operator = gas_used * 2 / 1_000_000 + 1000;
    let base = gas_used * base_fee;
    let priority = gas_used * (price - base_fee);
    assert!(l1 > 0 && priority > 0 && base > 0);
    [base, priority, l1, operator]
}

/// `--assets` and the gas report split an OP user transaction's cost into L2 execution (base
/// fee and tip), the L1 data fee and the operator fee, each where it went; a deposit's mint is
/// a native inflow to its sender. Every expected amount is worked here from the L1Block values
/// `op_block` set and the node's own receipt and block.
#[test]
fn op_costs_are_split_and_a_mint_is_an_inflow() {
    // The FastLZ port against op-geth's own TestFlzCompressLen vectors first.
    assert_eq!(flz_compress_len(&[]), 0);
    assert_eq!(flz_compress_len(&[1; 1000]), 21);
    assert_eq!(flz_compress_len(&[0; 1000]), 21);

    let (a, _, hashes, watch) = op_block();
    let [base, priority, l1, operator] = hand_fees(&a, &hashes[1]);

    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&[
            "--rpc-url",
            a.url(),
            "--no-cache",
            "--chain-rules",
            "optimism",
        ]);
        let run = chaintrace(&all);
        assert!(run.code == 0, "{args:?}: {}", run.stderr);
        run
    };
    // The gas report's cost: its JSON member and its table.
    let gas = run(&["gas", &hashes[1], "--json"]);
    let v: Value = serde_json::from_str(&gas.stdout).unwrap();
    let want = json!({
        "l2Execution": (base + priority).to_string(), "baseFee": base.to_string(),
        "priorityFee": priority.to_string(), "l1DataFee": l1.to_string(),
        "operatorFee": operator.to_string(), "total": (base + priority + l1 + operator).to_string(),
    });
    assert_eq!(v["cost"], want, "{}", gas.stdout);
    let gas = run(&["gas", &hashes[1]]);
    assert!(
        gas.stdout
            .contains("cost (native; L2 execution = base fee + priority fee)"),
        "{}",
        gas.stdout
    );

    // --assets: the fee split, the vaults credited, nothing burned.
    let assets = run(&["tx", &hashes[1], "--assets", "--json", "--decode"]);
    let v: Value = serde_json::from_str(&assets.stdout).unwrap();
    let fee = &v["assetChanges"]["fee"];
    assert_eq!(
        fee["op"],
        json!({
            "l2Execution": (base + priority).to_string(), "baseFee": base.to_string(),
            "priorityFee": priority.to_string(), "l1DataFee": l1.to_string(),
            "operatorFee": operator.to_string(),
        }),
        "{fee}"
    );
    assert_eq!(
        fee["paid"],
        json!((base + priority + l1 + operator).to_string())
    );
    assert_eq!(fee["burned"], json!("0"));
    let native = &v["assetChanges"]["native"];
    let change_of = |who: &str| {
        native
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["address"].as_str().unwrap().eq_ignore_ascii_case(who))
            .map(|n| n["change"].clone())
            .unwrap_or_else(|| panic!("{who} not in {native}"))
    };
    assert_eq!(change_of(&watch[0]), json!(base.to_string()));
    assert_eq!(change_of(&watch[1]), json!(l1.to_string()));
    assert_eq!(change_of(&watch[2]), json!(operator.to_string()));
    // The sender: value 5 and everything it paid.
    let paid = base + priority + l1 + operator + 5;
    assert_eq!(change_of(&watch[3]), json!(format!("-{paid}")));
    let human = run(&["tx", &hashes[1], "--assets"]);
    for w in [
        "(BaseFeeVault)",
        "(L1FeeVault)",
        "(OperatorFeeVault)",
        "L2 execution ",
        " to the BaseFeeVault, priority fee ",
        " to the L1FeeVault, operator fee ",
        "; nothing burned",
    ] {
        assert!(human.stdout.contains(w), "{w:?} not in\n{}", human.stdout);
    }

    // The deposit: 2 minted to its sender, which sent 1 on.
    let dep = run(&["tx", &hashes[0], "--assets", "--json", "--decode"]);
    let v: Value = serde_json::from_str(&dep.stdout).unwrap();
    assert_eq!(v["assetChanges"]["minted"], json!("2000000000000000000"));
    let from = a.rpc("eth_getTransactionByHash", json!([hashes[0]]))["from"].clone();
    let sender = v["assetChanges"]["native"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| {
            n["address"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case(from.as_str().unwrap())
        })
        .cloned();
    assert_eq!(
        sender.map(|n| n["change"].clone()),
        Some(json!("1000000000000000000")),
        "{}",
        dep.stdout
    );
    let human = run(&["tx", &hashes[0], "--assets"]);
    assert!(
        human
            .stdout
            .contains("minted from L1 (deposit): 2 native to "),
        "{}",
        human.stdout
    );

    // The HTML report says the same: the cost split among its facts, the deposit's mark (its
    // mint and the source hash this test sent) and its mint under the asset changes.
    let units = |wei: u128| {
        let s = format!("{}.{:018}", wei / 10u128.pow(18), wei % 10u128.pow(18));
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let html = |h: &str| {
        let path = std::env::temp_dir().join(format!(
            "chaintrace-op-{}-{}.html",
            &h[2..10],
            std::process::id()
        ));
        run(&["tx", h, "--html", path.to_str().unwrap()]);
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        text
    };
    let page = html(&hashes[1]);
    let cost = format!(
        "<tr><td>cost</td><td class=\"a\">{} native: L2 execution {} native (base fee {} native, \
         priority fee {} native), L1 data fee {} native, operator fee {} native</td></tr>",
        units(base + priority + l1 + operator),
        units(base + priority),
        units(base),
        units(priority),
        units(l1),
        units(operator)
    );
    assert!(page.contains(&cost), "{cost} not in the report");
    let page = html(&hashes[0]);
    let mark = format!(
        "<tr><td>deposit from L1</td><td class=\"a\">mint 2 native, source hash 0x{}aa</td></tr>",
        "0".repeat(62)
    );
    assert!(page.contains(&mark), "{mark} not in the report");
    assert!(
        page.contains("<p>minted from L1 (deposit): 2 native to "),
        "no mint in the report's asset changes"
    );
}

/// `--chain-config FILE`: a custom OP chain's op-geth genesis config (its `optimism` member and
/// the OP fork times as op-geth's `params/config.go` names them) applies its forks to the
/// node's blocks, with no evidence or `--chain-rules` needed, in `tx`, `serve` and a bundle
/// captured under it (which records the schedule); a config of another chain id is refused as
/// bad input.
#[test]
fn a_chain_config_file_gives_a_custom_op_chains_forks() {
    let (a, _, hashes, _) = op_block();
    let dir = std::env::temp_dir().join(format!("chaintrace-op-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, chain_id: u64| {
        let path = dir.join(name);
        let genesis = json!({
            "config": {
                "chainId": chain_id, "londonBlock": 0, "mergeNetsplitBlock": 0,
                "terminalTotalDifficulty": 0, "shanghaiTime": 0, "cancunTime": 0,
                "pragueTime": 0, "bedrockBlock": 0, "regolithTime": 0, "canyonTime": 0,
                "ecotoneTime": 0, "fjordTime": 0, "graniteTime": 0, "holoceneTime": 0,
                "isthmusTime": 0,
                "optimism": {"eip1559Elasticity": 6, "eip1559Denominator": 50}
            },
            "alloc": {}
        });
        std::fs::write(&path, genesis.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let ours = write("genesis.json", 31337);
    // The user transaction alone shows nothing of the OP stack; the config says it is one.
    for source in ["prestate", "rpc"] {
        let run = chaintrace(&[
            "tx",
            &hashes[1],
            "--rpc-url",
            a.url(),
            "--no-cache",
            "--state-source",
            source,
            "--chain-config",
            &ours,
        ]);
        assert_eq!(run.code, 0, "{source}: {}", run.stderr);
        assert_says(
            &run.stderr,
            &[
                &format!("the OP stack's rules applied (--chain-config {ours} has the OP stack)"),
                "the schedule of --chain-config, Isthmus at this block",
                "self-check: replay matches the receipt",
            ],
        );
    }
    // `serve` with the same config: geth's debug_traceTransaction of the user transaction
    // charges the custom chain's fees, the sender's balance after it anvil's own.
    let serve = crate::serve_support::Serve::start(a.url(), &["--chain-config", &ours]);
    let config = json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}});
    let served: Value =
        serde_json::from_str(&serve.result("debug_traceTransaction", json!([hashes[1], config])))
            .unwrap();
    let node = a.trace(hashes[1].parse().unwrap(), config);
    let sender = a.rpc("eth_getTransactionByHash", json!([hashes[1]]))["from"]
        .as_str()
        .unwrap()
        .to_lowercase();
    assert_eq!(
        served["post"][&sender]["balance"], node["post"][&sender]["balance"],
        "served {served}\nnode {node}"
    );
    drop(serve);

    // `bundle capture` records the custom chain's schedule (`opChainConfig`, op-geth's names),
    // which chain 31337 alone does not give: offline, the user pays the same fees, its balance
    // after it anvil's own; the same bundle without the member replays under Ethereum's rules.
    let bundle_path = dir.join("bundle.json");
    let bundle_file = bundle_path.to_str().unwrap();
    let run = chaintrace(&[
        "bundle",
        "capture",
        &hashes[1],
        "--rpc-url",
        a.url(),
        "--chain-config",
        &ours,
        "-o",
        bundle_file,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(&bundle_path).unwrap()).unwrap();
    let zero = |forks: &[&str]| {
        let mut c = json!({"chainId": 31337, "bedrockBlock": 0, "optimism": {}});
        for f in forks {
            c[format!("{f}Time")] = json!(0);
        }
        c
    };
    assert_eq!(
        bundle["opChainConfig"],
        zero(&["regolith", "canyon", "ecotone", "fjord", "granite", "holocene", "isthmus"]),
        "{bundle}"
    );
    assert!(bundle.get("opDevFork").is_none(), "{bundle}");
    let offline = |file: &str| -> (Value, String) {
        let run = chaintrace(&[
            "tx",
            "--fixture",
            file,
            "--tracer",
            "prestateTracer",
            "--tracer-config",
            r#"{"diffMode":true}"#,
            "--json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        (serde_json::from_str(&run.stdout).unwrap(), run.stderr)
    };
    let (replayed, stderr) = offline(bundle_file);
    assert_says(&stderr, &["self-check: replay matches the receipt"]);
    assert_eq!(
        replayed["post"][&sender]["balance"], node["post"][&sender]["balance"],
        "bundle {replayed}\nnode {node}"
    );
    bundle.as_object_mut().unwrap().remove("opChainConfig");
    let bare = dir.join("bare.json");
    std::fs::write(&bare, bundle.to_string()).unwrap();
    let (replayed, _) = offline(bare.to_str().unwrap());
    assert_ne!(
        replayed["post"][&sender]["balance"],
        node["post"][&sender]["balance"]
    );

    let other = write("other.json", 901);
    let run = chaintrace(&[
        "tx",
        &hashes[1],
        "--rpc-url",
        a.url(),
        "--chain-config",
        &other,
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_says(
        &run.stderr,
        &[&format!(
            "--chain-config {other} is chain 901's, but the node serves chain 31337"
        )],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A user transaction alone in its block on anvil `args`, calling the probe (so its log holds
/// the sender's balance while it runs: what the L1 and operator fees took before it ran), and a
/// transfer with calldata to an account in the next block. Returns the node and both hashes.
fn lone_user_txs(args: &[&str]) -> (Anvil, String, String) {
    let a = Anvil::start_with_args(args);
    set_fees_and_probe(&a);
    let acc = a.accounts();
    let data = format!("0x{}", "ab01".repeat(60));
    let (probe, r) = a.send_and_wait(json!({
        "from": acc[1], "to": PROBE, "data": data, "gas": "0x20000", "maxPriorityFeePerGas": "0x7",
    }));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    let (transfer, r) = a.send_and_wait(json!({
        "from": acc[1], "to": acc[3], "value": "0x5", "data": data, "gas": "0x20000",
        "maxPriorityFeePerGas": "0x7",
    }));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    (a, format!("{probe:?}"), format!("{transfer:?}"))
}

/// anvil's `anvil_nodeInfo` names an OP fork only in OP mode (`hardFork` Jovian under
/// `--network optimism`, Holocene with `--hardfork holocene` too; an Ethereum fork otherwise). chaintrace asks it in the first batch, beside
/// `web3_clientVersion`, and takes the OP stack's rules from it for a user transaction alone in
/// its block (no deposit beside it, no OP field in anvil's receipt), with no `--chain-rules`; a
/// plain anvil stays Ethereum. The fork anvil 1.7.1 names is not the one it runs: named
/// Holocene it still charges Isthmus's operator fee (the L1Block here sets one, slot 8, which
/// Holocene would not charge: a Holocene replay's log is 1,000 wei off), so the forks through
/// Isthmus apply and the note says so.
/// The probe's log of the sender's balance holds the rules to anvil's: the other rules' replay
/// departs from the receipt (exit 4).
#[test]
fn anvil_node_info_gives_the_op_mode() {
    let cases: [(&[&str], Option<&str>); 3] = [
        (&["--network", "optimism"], Some("Jovian")),
        (
            &["--network", "optimism", "--hardfork", "holocene"],
            Some("Holocene"),
        ),
        (&[], None),
    ];
    for (args, op) in cases {
        let (a, probe, _) = lone_user_txs(args);
        let fork = a.rpc("anvil_nodeInfo", json!([]))["hardFork"].clone();
        let fork = fork.as_str().unwrap_or_default().to_string();
        let is_op_fork = chaintrace::chain::op::OpFork::from_name(&fork).is_some();
        assert_eq!(is_op_fork, op.is_some(), "{args:?}: hardFork {fork}");
        for source in ["prestate", "rpc"] {
            let run = chaintrace(&[
                "tx",
                &probe,
                "--rpc-url",
                a.url(),
                "--no-cache",
                "--state-source",
                source,
            ]);
            assert_eq!(run.code, 0, "{args:?} {source}: {}", run.stderr);
            assert_says(&run.stderr, &["self-check: replay matches the receipt"]);
            match op {
                Some(named) => {
                    assert_eq!(fork, named);
                    assert_says(
                        &run.stderr,
                        &[
                            &format!(
                                "note: anvil/v1.7.1 is a dev node: its OP mode (anvil --network \
                                 optimism) names its fork {named} but charges Isthmus's \
                                 fees whatever fork it names"
                            ),
                            "note: chain 31337: the OP stack's rules applied (its anvil_nodeInfo \
                             names the OP fork ",
                            "; the node is anvil/v1.7.1), every OP fork through Isthmus: deposits",
                        ],
                    );
                }
                None => assert!(
                    !run.stderr.contains("OP stack"),
                    "{args:?} {source}: {}",
                    run.stderr
                ),
            }
        }
        let other = if op.is_some() { "ethereum" } else { "optimism" };
        let run = chaintrace(&[
            "tx",
            &probe,
            "--rpc-url",
            a.url(),
            "--no-cache",
            "--chain-rules",
            other,
        ]);
        assert_eq!(
            run.code, 4,
            "{args:?} --chain-rules {other}: {}",
            run.stderr
        );
    }
}

/// The L1 data fee costs no round trip of its own on the RPC path: the L1Block predeploy's fee
/// slots and the vaults come in the state batch with the sender and recipient
/// (`obvious_accounts`). The loopback proxy counts a user transfer's replay on the OP-mode
/// anvil under the OP stack's rules and under Ethereum's: `tx --state-source rpc` and `block N`
/// make the same HTTP requests, round trips and state requests. On the fast path the node's
/// prestateTracer leaves the L1Block and the vaults out (op-geth's looks up only the sender,
/// the recipient and the coinbase; anvil's alike), so the OP replay asks for them in the
/// header's batch: the same requests and round trips, that batch counted as a state request
/// (exact from the parent block: the transaction is first in its block).
#[test]
fn the_l1_fee_costs_no_extra_round_trip() {
    let (a, _, transfer) = lone_user_txs(&["--network", "optimism"]);
    let block = anvil::parse_u64(&a.receipt(transfer.parse().unwrap())["blockNumber"]).to_string();
    // Round trips are periods with a request in flight: with anvil answering in microseconds,
    // two requests sent together may or may not overlap at the proxy. A delay makes requests
    // sent together overlap, so the count is the client's sequencing, not the machine's load.
    let p = crate::proxy::Proxy::start(a.url(), &["--delay-ms", "25"]);
    let mut rows = Vec::new();
    let runs: [(&str, Vec<&str>); 3] = [
        (
            "tx, rpc path",
            vec!["tx", &transfer, "--state-source", "rpc"],
        ),
        ("block", vec!["block", &block]),
        (
            "tx, fast path",
            vec!["tx", &transfer, "--state-source", "prestate"],
        ),
    ];
    for (what, args) in &runs {
        let mut counts = Vec::new();
        for rules in [None, Some("ethereum")] {
            p.reset();
            let mut all = args.clone();
            all.extend(["--rpc-url", &p.url]);
            if all[0] == "tx" {
                all.push("--no-cache");
            }
            if let Some(r) = rules {
                all.extend(["--chain-rules", r]);
            }
            let run = chaintrace(&all);
            assert_eq!(run.code, 0, "{what} {rules:?}: {}", run.stderr);
            assert_eq!(
                run.stderr.contains("the OP stack's rules applied"),
                rules.is_none(),
                "{}",
                run.stderr
            );
            let s = p.stats();
            let n = |k: &str| s[k].as_u64().unwrap();
            counts.push([n("requests"), n("roundTrips"), n("stateRequests")]);
        }
        rows.push(format!(
            "{what}: OP {:?}, Ethereum {:?}",
            counts[0], counts[1]
        ));
        if *what == "tx, fast path" {
            let [r, t, st] = counts[1];
            assert_eq!(counts[0], [r, t, st + 1], "{what}: OP vs Ethereum");
            assert_eq!(t, 2, "{what}");
        } else {
            assert_eq!(counts[0], counts[1], "{what}: OP vs Ethereum");
        }
    }
    // The figures, for docs/benchmarks.md (`cargo test … -- --nocapture`).
    println!(
        "[requests, round trips, state requests]: {}",
        rows.join("; ")
    );
}

/// A user transaction after its block's deposit stays on the fast path, as on an op-geth
/// node, whose prestateTracer leaves out what the fees read (the L1Block slots, the vaults):
/// the L1Block slots are read at the transaction's own block in the header's batch (only the
/// deposit that opens a block writes them), so the replay costs the node's two round trips.
/// The vaults' balances at a later transaction are known to no one but a replay of the block's
/// start: a tracer that cannot show them leaves them uncredited and stays fast; one that can
/// (a JavaScript tracer's `db`) replays the block's start, and reads the L1FeeVault credited
/// by exactly the L1 fee worked by hand. Each fast run's output is the RPC path's.
#[test]
fn a_later_transaction_of_an_op_block_stays_on_the_fast_path() {
    const L1_FEE_VAULT: &str = "0x420000000000000000000000000000000000001a";
    let (a, block, hashes, _) = op_block();
    let user = &hashes[1];
    assert_eq!(
        a.receipt(user.parse().unwrap())["transactionIndex"],
        json!("0x1")
    );
    let [base, priority, l1, operator] = hand_fees(&a, user);
    // What op-geth's prestateTracer gives: anvil's own looks up what op-revm's fee code read.
    let mut drop = Vec::new();
    for who in [
        L1_BLOCK,
        "0x4200000000000000000000000000000000000019",
        L1_FEE_VAULT,
    ] {
        drop.extend(["--drop-prestate", who]);
    }
    drop.extend([
        "--drop-prestate",
        "0x420000000000000000000000000000000000001b",
    ]);
    // A delay, so that requests sent together overlap (see the_l1_fee_costs_no_extra_round_trip).
    drop.extend(["--delay-ms", "25"]);
    let p = crate::proxy::Proxy::start(a.url(), &drop);
    let run = |source: &str, args: &[&str]| {
        p.reset();
        let mut all = args.to_vec();
        all.extend(["--rpc-url", &p.url, "--no-cache", "--state-source", source]);
        all.extend(["--chain-rules", "optimism"]);
        let run = chaintrace(&all);
        assert_eq!(run.code, 0, "{args:?} {source}: {}", run.stderr);
        assert_says(&run.stderr, &["self-check: replay matches the receipt"]);
        let s = p.stats();
        (run, s["roundTrips"].as_u64().unwrap())
    };
    let cases: [&[&str]; 4] = [
        &["tx", user, "--json"],
        &["tx", user, "--json", "--decode", "--assets"],
        &[
            "tx",
            user,
            "--json",
            "--tracer",
            "prestateTracer",
            "--tracer-config",
            r#"{"diffMode":true}"#,
        ],
        &["gas", user, "--json"],
    ];
    for args in cases {
        let (fast, trips) = run("prestate", args);
        assert_eq!(trips, 2, "{args:?}: {}", fast.stderr);
        assert!(!fast.stderr.contains("lacks"), "{args:?}: {}", fast.stderr);
        let (rpc, _) = run("rpc", args);
        assert_eq!(fast.stdout, rpc.stdout, "{args:?}");
    }
    let (gas, _) = run("prestate", &["gas", user, "--json"]);
    let v: Value = serde_json::from_str(&gas.stdout).unwrap();
    assert_eq!(
        v["cost"]["l1DataFee"],
        json!(l1.to_string()),
        "{}",
        gas.stdout
    );
    assert_eq!(
        v["cost"]["total"],
        json!((base + priority + l1 + operator).to_string())
    );
    // Cached: the fee reads are kept with the block's state; a second trace asks only the
    // node's identity.
    let dir = std::env::temp_dir().join(format!("chaintrace-op-fast-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let mut cached = Vec::new();
    for _ in 0..2 {
        p.reset();
        let args = ["tx", user, "--json", "--rpc-url", &p.url, "--cache-dir", d];
        let run = chaintrace(&[&args[..], &["--state-source", "prestate"]].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        let s = p.stats();
        cached.push((
            run.stdout,
            s["requests"].as_u64(),
            s["stateRequests"].as_u64(),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(cached[0].0, cached[1].0);
    assert_eq!((cached[1].1, cached[1].2), (Some(1), Some(0)), "{cached:?}");
    // A tracer whose `db` can read a vault: the block's start is replayed.
    let script = format!(
        "{{result: function(ctx, db) {{ return db.getBalance(toAddress('{L1_FEE_VAULT}')).toString(); }}, \
         fault: function() {{}}}}"
    );
    let (js, _) = run("prestate", &["tx", user, "--json", "--tracer", &script]);
    assert_says(&js.stderr, &["the node's prestate lacks"]);
    let parent = format!("{:#x}", block - 1);
    let before = u128_of(&a.rpc("eth_getBalance", json!([L1_FEE_VAULT, parent])));
    assert_eq!(
        js.stdout.trim(),
        format!("\"{}\"", before + l1),
        "{}",
        js.stderr
    );
}

/// A prestateTracer diff (diffMode) over an OP user transaction is op-geth's: its tracer looks
/// up the sender, the recipient and the block's coinbase at the transaction's start (op-geth
/// `eth/tracers/native/prestate.go`, `OnTxStart`: `lookupAccount(from)`, `lookupAccount(t.to)`,
/// `lookupAccount(env.Coinbase)`, before `buyGas` takes any fee) and what the transaction's
/// opcodes touch, and diffs only those (`processDiffState` walks `t.pre`). On an OP chain the
/// coinbase is the SequencerFeeVault (`0x4200…0011`, set here with `anvil_setCoinbase`), so the
/// diff shows its tip; the BaseFeeVault, L1FeeVault and OperatorFeeVault, credited after the
/// run without an opcode, are absent from it. `--assets` shows all four credits. Every amount
/// is worked by hand (`hand_fees`), and the whole diff is compared.
#[test]
fn a_prestate_diff_shows_the_coinbase_vault_and_leaves_the_other_vaults_out() {
    const SEQUENCER_FEE_VAULT: &str = "0x4200000000000000000000000000000000000011";
    let a = Anvil::start_with_args(&["--network", "optimism"]);
    let watch = set_fees_and_probe(&a);
    a.rpc("anvil_setCoinbase", json!([SEQUENCER_FEE_VAULT]));
    // Not empty, so that the lookup lists it with its balance.
    a.rpc("anvil_setBalance", json!([SEQUENCER_FEE_VAULT, "0x1000"]));
    let acc = a.accounts();
    let (from, to) = (format!("{:?}", acc[1]), format!("{:?}", acc[3]));
    let (hash, receipt) = a.send_and_wait(json!({
        "from": from, "to": to, "value": "0x5", "maxPriorityFeePerGas": "0x7",
        "data": format!("0x{}", "ab01".repeat(60)), "gas": "0x20000",
    }));
    assert_eq!(receipt["status"], json!("0x1"), "{receipt}");
    let hash = format!("{hash:?}");
    let block = anvil::parse_u64(&receipt["blockNumber"]);
    let header = a.rpc(
        "eth_getBlockByNumber",
        json!([format!("{block:#x}"), false]),
    );
    assert_eq!(header["miner"], json!(SEQUENCER_FEE_VAULT), "{header}");
    let [base, priority, l1, operator] = hand_fees(&a, &hash);
    let parent = format!("{:#x}", block - 1);
    let balance = |who: &str| u128_of(&a.rpc("eth_getBalance", json!([who, parent])));
    let nonce = anvil::parse_u64(&a.rpc("eth_getTransactionCount", json!([from, parent])));
    let account = |balance: u128, nonce: u64| {
        let mut v = json!({"balance": format!("{balance:#x}")});
        if nonce > 0 {
            v["nonce"] = json!(nonce);
        }
        v
    };
    let (b_from, b_to, b_seq) = (balance(&from), balance(&to), balance(SEQUENCER_FEE_VAULT));
    assert_eq!(b_seq, 0x1000);
    let want = json!({
        "pre": {
            from.to_lowercase(): account(b_from, nonce),
            to.to_lowercase(): account(b_to, 0),
            SEQUENCER_FEE_VAULT: account(b_seq, 0),
        },
        "post": {
            from.to_lowercase(): account(b_from - base - priority - l1 - operator - 5, nonce + 1),
            to.to_lowercase(): account(b_to + 5, 0),
            SEQUENCER_FEE_VAULT: account(b_seq + priority, 0),
        },
    });
    let run = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        a.url(),
        "--no-cache",
        "--json",
        "--tracer",
        "prestateTracer",
        "--tracer-config",
        r#"{"diffMode":true}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_says(&run.stderr, &["self-check: replay matches the receipt"]);
    let got: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(got, want, "{}", run.stdout);
    for vault in &watch[..3] {
        assert!(
            !run.stdout.contains(&vault.to_lowercase()),
            "{vault}: {}",
            run.stdout
        );
    }

    // --assets: the four vaults credited, each with its hand-computed amount.
    let run = chaintrace(&[
        "tx",
        &hash,
        "--rpc-url",
        a.url(),
        "--no-cache",
        "--assets",
        "--json",
        "--decode",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let native = &v["assetChanges"]["native"];
    let change_of = |who: &str| {
        native
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["address"].as_str().unwrap().eq_ignore_ascii_case(who))
            .map(|n| n["change"].clone())
            .unwrap_or_else(|| panic!("{who} not in {native}"))
    };
    for (who, amount) in [
        (watch[0].as_str(), base),
        (watch[1].as_str(), l1),
        (watch[2].as_str(), operator),
        (SEQUENCER_FEE_VAULT, priority),
    ] {
        assert_eq!(change_of(who), json!(amount.to_string()), "{who}");
    }
}
