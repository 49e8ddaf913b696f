//! Asset changes (`--assets`, `assetChanges` of `--json --decode`) on a live anvil 1.7.1:
//!
//! * native changes equal the balance deltas of anvil's own `prestateTracer` `diffMode` for
//!   every transaction of the shared scenario (transfers, CREATE endowments, self-destructs
//!   old and new, failed frames, fees);
//! * token changes equal the tokens' own balance getters read before and after each
//!   transaction (`tests/contracts/Tokens.sol`: ERC-20 with string and bytes32 symbols,
//!   ERC-721, ERC-1155 single and batch, WETH9 deposit/withdraw, a caught inner revert), and
//!   symbols and decimals equal the tokens' own `symbol()`/`decimals()`;
//! * the human table, the refusals, `block --assets` and `block A..B --out --assets`.

use crate::{anvil, offline, run};
use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, I256, U256};
use anvil::{calldata, creation_code, qty, w_addr, w_u, with_ctor_args, Anvil};
use serde_json::{json, Value};

fn chaintrace(args: &[&str]) -> run::Run {
    run::cmd(args).no_cache().run()
}

fn int(s: &str) -> I256 {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn u256(v: &Value) -> U256 {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    U256::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

fn delta(before: U256, after: U256) -> I256 {
    I256::from_raw(after).wrapping_sub(I256::from_raw(before))
}

/// Balance deltas of a `diffMode` result (geth's and anvil's shape): `post` lists what changed,
/// an account only in `pre` was deleted.
fn diff_deltas(diff: &Value) -> BTreeMap<Address, I256> {
    let mut out = BTreeMap::new();
    let empty = json!({});
    let pre = diff["pre"].as_object().unwrap();
    let post = diff["post"].as_object().unwrap();
    for a in pre.keys().chain(post.keys()) {
        let before = pre
            .get(a)
            .and_then(|s| s.get("balance"))
            .map(u256)
            .unwrap_or_default();
        let after = match post.get(a) {
            Some(s) => s.get("balance").map(u256).unwrap_or(before),
            None => U256::ZERO,
        };
        let _ = &empty;
        let d = delta(before, after);
        if d != I256::ZERO {
            out.insert(a.parse().unwrap(), d);
        }
    }
    out
}

/// `assetChanges` of `tx HASH --json --decode --assets`.
fn asset_changes(url: &str, hash: B256) -> Value {
    let r = chaintrace(&[
        "tx",
        &format!("{hash:?}"),
        "--rpc-url",
        url,
        "--json",
        "--decode",
        "--assets",
    ]);
    assert!(r.code == 0 || r.code == 3, "{hash}: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    v["assetChanges"].clone()
}

fn native_deltas(a: &Value) -> BTreeMap<Address, I256> {
    a["native"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let change = int(n["change"].as_str().unwrap());
            // The parts add up to the whole.
            assert_eq!(
                change,
                int(n["transfers"].as_str().unwrap()) + int(n["fee"].as_str().unwrap()),
                "{n}"
            );
            (n["address"].as_str().unwrap().parse().unwrap(), change)
        })
        .filter(|(_, d)| *d != I256::ZERO)
        .collect()
}

#[test]
fn native_changes_equal_anvils_state_diff_for_every_scenario_transaction() {
    let s = anvil::scenario();
    let mut failures = Vec::new();
    let mut fees = 0;
    for tx in &s.txs {
        let diff = s.anvil.trace(
            tx.hash,
            json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
        );
        let want = diff_deltas(&diff);
        let a = asset_changes(&s.url, tx.hash);
        let got = native_deltas(&a);
        if got != want {
            failures.push(format!(
                "{}: assets {got:?}\n   anvil diff {want:?}",
                tx.label
            ));
        }
        // The fee: paid by the sender, split into received and burned.
        let fee = &a["fee"];
        let paid = int(fee["paid"].as_str().unwrap());
        assert_eq!(
            paid,
            int(fee["received"].as_str().unwrap()) + int(fee["burned"].as_str().unwrap()),
            "{}",
            tx.label
        );
        let receipt = s.anvil.receipt(tx.hash);
        let price = u256(&receipt["effectiveGasPrice"]);
        let used = u256(&receipt["gasUsed"]);
        assert_eq!(
            fee["paid"].as_str().unwrap(),
            (price * used).to_string(),
            "{}: the fee is the receipt's gasUsed × effectiveGasPrice",
            tx.label
        );
        fees += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(fees, s.txs.len());
}

/// The token world: the contracts of Tokens.sol deployed and exercised, one transaction per
/// block.
struct Tokens {
    anvil: Anvil,
    addr: BTreeMap<&'static str, Address>,
    holders: Vec<Address>,
    /// (label, hash)
    txs: Vec<(&'static str, B256)>,
}

const ETH: u128 = 1_000_000_000_000_000_000;

fn tokens() -> Tokens {
    let anvil = Anvil::start();
    let accts = anvil.accounts();
    let (sender, alice, bob) = (accts[0], accts[1], accts[2]);
    let mut addr = BTreeMap::new();
    let mut txs = Vec::new();
    let (h, ast) = anvil.deploy_with(
        &with_ctor_args(&creation_code("AssetToken"), &[w_u(1_000_000_000)]),
        0,
    );
    txs.push(("deploy AssetToken (mint)", h));
    addr.insert("AssetToken", ast);
    for name in ["OldToken", "Nft", "Multi", "Weth", "Mover"] {
        let (h, a) = anvil.deploy_with(&creation_code(name), 0);
        if name == "OldToken" {
            txs.push(("deploy OldToken (mint)", h));
        }
        addr.insert(name, a);
    }
    let (_, plain) = anvil.deploy_with(&with_ctor_args(&creation_code("Token"), &[w_u(1_000)]), 0);
    addr.insert("Token", plain);
    let mover = addr["Mover"];
    let call = |label: &'static str, to: Address, data: Vec<u8>, value: u128| {
        let (h, r) = anvil
            .send_and_wait(json!({"to": to, "data": anvil::hex0x(&data), "value": qty(value)}));
        assert_eq!(r["status"], "0x1", "{label}: {r}");
        (label, h)
    };
    let t = "transfer(address,uint256)";
    txs.push(call(
        "ERC-20 transfer",
        ast,
        calldata(t, &[w_addr(alice), w_u(1_500_000)]),
        0,
    ));
    anvil.send_and_wait(
        json!({"to": ast, "data": anvil::hex0x(&calldata(t, &[w_addr(mover), w_u(10_000_000)]))}),
    );
    txs.push(call(
        "ERC-20 moved, inner transfer reverted and caught",
        mover,
        calldata(
            "pay(address,address,uint256)",
            &[w_addr(ast), w_addr(bob), w_u(2_000_000)],
        ),
        0,
    ));
    txs.push(call(
        "bytes32-symbol token transfer",
        addr["OldToken"],
        calldata(t, &[w_addr(bob), w_u(ETH / 3)]),
        0,
    ));
    txs.push(call(
        "token without symbol()",
        plain,
        calldata(t, &[w_addr(alice), w_u(7)]),
        0,
    ));
    let nft = addr["Nft"];
    txs.push(call(
        "ERC-721 mint",
        nft,
        calldata("mint(address,uint256)", &[w_addr(sender), w_u(42)]),
        0,
    ));
    txs.push(call(
        "ERC-721 transfer",
        nft,
        calldata(
            "transferFrom(address,address,uint256)",
            &[w_addr(sender), w_addr(alice), w_u(42)],
        ),
        0,
    ));
    let multi = addr["Multi"];
    for id in [1u128, 2] {
        anvil.send_and_wait(json!({"to": multi, "data": anvil::hex0x(&calldata("mint(address,uint256,uint256)", &[w_addr(sender), w_u(id), w_u(100)]))}));
    }
    txs.push(call(
        "ERC-1155 single",
        multi,
        calldata(
            "safeTransferFrom(address,address,uint256,uint256,bytes)",
            &[
                w_addr(sender),
                w_addr(bob),
                w_u(1),
                w_u(5),
                w_u(160),
                w_u(0),
            ],
        ),
        0,
    ));
    // safeBatchTransferFrom(from, to, [1, 2], [3, 4], "")
    let batch = calldata(
        "safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)",
        &[
            w_addr(sender),
            w_addr(alice),
            w_u(160),
            w_u(256),
            w_u(352),
            w_u(2),
            w_u(1),
            w_u(2),
            w_u(2),
            w_u(3),
            w_u(4),
            w_u(0),
        ],
    );
    txs.push(call("ERC-1155 batch", multi, batch, 0));
    let weth = addr["Weth"];
    txs.push(call("WETH deposit", weth, calldata("deposit()", &[]), ETH));
    txs.push(call(
        "WETH withdraw",
        weth,
        calldata("withdraw(uint256)", &[w_u(ETH / 4)]),
        0,
    ));
    txs.push(call(
        "wrap, send, unwrap in one transaction",
        mover,
        calldata("wrapAndSend(address,address)", &[w_addr(weth), w_addr(bob)]),
        ETH,
    ));
    Tokens {
        anvil,
        addr,
        holders: vec![sender, alice, bob, mover, weth],
        txs,
    }
}

/// An `eth_call` result as bytes, at block `at`.
fn call_at(a: &Anvil, to: Address, data: Vec<u8>, at: u64) -> Option<Vec<u8>> {
    match a.try_rpc(
        "eth_call",
        json!([{"to": to, "data": anvil::hex0x(&data)}, qty(at as u128)]),
    ) {
        Ok(Ok(v)) => {
            Some(alloy_primitives::hex::decode(v.as_str()?.trim_start_matches("0x")).ok()?)
        }
        _ => None,
    }
}

fn word_at(a: &Anvil, to: Address, data: Vec<u8>, at: u64) -> U256 {
    // No code at `to` yet (before its deployment) answers nothing: a balance of zero.
    call_at(a, to, data, at)
        .filter(|b| b.len() >= 32)
        .map(|b| U256::from_be_slice(&b[..32]))
        .unwrap_or_default()
}

/// The token's own balance getter for `holder` (and `id`), at block `at`.
fn balance(w: &Tokens, token: &str, holder: Address, id: Option<u128>, at: u64) -> U256 {
    let to = w.addr[token];
    match (token, id) {
        ("Nft", Some(id)) => {
            let owner = word_at(&w.anvil, to, calldata("ownerOf(uint256)", &[w_u(id)]), at);
            U256::from((owner == U256::from_be_slice(holder.as_slice())) as u8)
        }
        ("Multi", Some(id)) => word_at(
            &w.anvil,
            to,
            calldata("balanceOf(address,uint256)", &[w_addr(holder), w_u(id)]),
            at,
        ),
        _ => word_at(
            &w.anvil,
            to,
            calldata("balanceOf(address)", &[w_addr(holder)]),
            at,
        ),
    }
}

#[test]
fn token_changes_equal_the_tokens_own_balances() {
    let w = tokens();
    let url = w.anvil.url.clone();
    let by_addr: BTreeMap<Address, &str> = w.addr.iter().map(|(k, v)| (*v, *k)).collect();
    let mut failures = Vec::new();
    let mut seen_tokens = std::collections::BTreeSet::new();
    for (label, hash) in &w.txs {
        let a = asset_changes(&url, *hash);
        let block = anvil::parse_u64(&w.anvil.receipt(*hash)["blockNumber"]);
        // Ours, as (token name, id, holder) → change.
        let mut got = BTreeMap::new();
        for t in a["tokens"].as_array().unwrap() {
            let token: Address = t["token"].as_str().unwrap().parse().unwrap();
            let name = by_addr[&token];
            seen_tokens.insert(name);
            let id = t
                .get("id")
                .and_then(Value::as_str)
                .map(|s| s.parse::<u128>().unwrap());
            let holder: Address = t["address"].as_str().unwrap().parse().unwrap();
            got.insert((name, id, holder), int(t["change"].as_str().unwrap()));
        }
        // The tokens' own getters, before and after, for every holder and id in play.
        let mut want = BTreeMap::new();
        for (name, ids) in [
            ("AssetToken", vec![None]),
            ("OldToken", vec![None]),
            ("Token", vec![None]),
            ("Weth", vec![None]),
            ("Nft", vec![Some(42)]),
            ("Multi", vec![Some(1), Some(2)]),
        ] {
            for id in ids {
                for &h in &w.holders {
                    let d = delta(
                        balance(&w, name, h, id, block - 1),
                        balance(&w, name, h, id, block),
                    );
                    if d != I256::ZERO {
                        want.insert((name, id, h), d);
                    }
                }
            }
        }
        if got != want {
            failures.push(format!("{label}: assets {got:?}\n   getters {want:?}"));
        }
        // Symbols and decimals: what the token itself answers at the block, or null.
        for t in a["tokens"].as_array().unwrap() {
            let token: Address = t["token"].as_str().unwrap().parse().unwrap();
            let raw = call_at(&w.anvil, token, calldata("symbol()", &[]), block);
            let want_symbol = raw.and_then(|b| {
                if b.len() == 32 {
                    let end = b.iter().rposition(|x| *x != 0).map_or(0, |i| i + 1);
                    String::from_utf8(b[..end].to_vec()).ok()
                } else {
                    let len = U256::from_be_slice(&b[32..64]).to::<usize>();
                    String::from_utf8(b[64..64 + len].to_vec()).ok()
                }
            });
            assert_eq!(
                t["symbol"].as_str().map(str::to_string),
                want_symbol,
                "{label}: {t}"
            );
            if t["standard"] == "ERC-20" {
                let d = call_at(&w.anvil, token, calldata("decimals()", &[]), block)
                    .map(|b| U256::from_be_slice(&b[..32]).to::<u64>());
                assert_eq!(t["decimals"].as_u64(), d, "{label}: {t}");
            }
        }
        // Native changes here too equal anvil's own diff (WETH moves ether both ways).
        let diff = w.anvil.trace(
            *hash,
            json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
        );
        assert_eq!(native_deltas(&a), diff_deltas(&diff), "{label}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every token kind was seen.
    for name in ["AssetToken", "OldToken", "Token", "Nft", "Multi", "Weth"] {
        assert!(seen_tokens.contains(name), "{name} never moved");
    }
}

#[test]
fn the_human_output_shows_what_moved_and_refusals_are_clear() {
    let w = tokens();
    let url = w.anvil.url.clone();
    let hash = |label: &str| format!("{:?}", w.txs.iter().find(|(l, _)| *l == label).unwrap().1);
    let ast = w.addr["AssetToken"].to_checksum(None);
    // A token transfer: the section is there without asking.
    let r = chaintrace(&["tx", &hash("ERC-20 transfer"), "--rpc-url", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("asset changes"), "{}", r.stdout);
    assert!(r.stdout.contains(" AST "), "{}", r.stdout);
    assert!(r.stdout.contains("+1.5"), "{}", r.stdout);
    assert!(r.stdout.contains("-1.5"), "{}", r.stdout);
    assert!(r.stdout.contains("fee: "), "{}", r.stdout);
    assert!(r.stdout.contains("paid by"), "{}", r.stdout);
    let _ = ast;
    // A token whose symbol() cannot be read is named by its address.
    let r = chaintrace(&["tx", &hash("token without symbol()"), "--rpc-url", &url]);
    assert!(
        r.stdout.contains(&w.addr["Token"].to_checksum(None)),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("+7 (raw)"), "{}", r.stdout);
    // --assets with plain --json would change geth's output: refused.
    let r = chaintrace(&[
        "tx",
        &hash("ERC-20 transfer"),
        "--rpc-url",
        &url,
        "--json",
        "--assets",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--json --decode"), "{}", r.stderr);
    // Plain --json is geth's result, unchanged by any of this.
    let r = chaintrace(&["tx", &hash("ERC-20 transfer"), "--rpc-url", &url, "--json"]);
    assert!(!r.stdout.contains("assetChanges"));
    // A range without --out has nowhere to put the table.
    let r = chaintrace(&["block", "1..2", "--rpc-url", &url, "--assets"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--out"), "{}", r.stderr);
}

#[test]
fn blocks_and_ranges_carry_the_same_changes() {
    let w = tokens();
    let url = w.anvil.url.clone();
    let (label, hash) = w.txs.iter().find(|(l, _)| *l == "WETH deposit").unwrap();
    let block = anvil::parse_u64(&w.anvil.receipt(*hash)["blockNumber"]);
    let per_tx = asset_changes(&url, *hash);
    // block N --assets: the same table as tx.
    let r = chaintrace(&["block", &block.to_string(), "--rpc-url", &url, "--assets"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("asset changes"), "{label}: {}", r.stdout);
    assert!(r.stdout.contains("WETH"), "{}", r.stdout);
    // block A..B --out --assets: the asset_changes table holds the same rows.
    let dir = std::env::temp_dir().join(format!("chaintrace-assets-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let last = w.anvil.block_number();
    let r = chaintrace(&[
        "block",
        &format!("1..{last}"),
        "--rpc-url",
        &url,
        "--assets",
        "--out",
        dir.to_str().unwrap(),
        "--format",
        "ndjson",
        "--quiet",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut rows = Vec::new();
    for e in walk(&dir) {
        if e.ends_with("part.asset_changes.ndjson") {
            for line in std::fs::read_to_string(&e).unwrap().lines() {
                rows.push(serde_json::from_str::<Value>(line).unwrap());
            }
        }
    }
    let mine: Vec<&Value> = rows
        .iter()
        .filter(|r| r["tx_hash"] == json!(format!("{hash:?}")))
        .collect();
    let natives: Vec<(String, String)> = per_tx["native"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["address"].as_str().unwrap().to_lowercase(),
                n["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let tokens: Vec<(String, String)> = per_tx["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["address"].as_str().unwrap().to_lowercase(),
                n["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row_pairs = |std: &str| -> Vec<(String, String)> {
        mine.iter()
            .filter(|r| (r["standard"] == "native") == (std == "native"))
            .map(|r| {
                (
                    r["address"].as_str().unwrap().to_string(),
                    r["change"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(row_pairs("native"), natives);
    assert_eq!(row_pairs("token"), tokens);
    assert!(mine.iter().any(|r| r["symbol"] == "WETH"), "{mine:?}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["tracer"].as_str().unwrap().ends_with(" assets"));
    // The parquet table holds the same rows, column for column (a build with parquet).
    #[cfg(feature = "parquet")]
    parquet_holds_the_rows(&dir, &url, last, &rows);
    let _ = std::fs::remove_dir_all(&dir);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The fee by each chain's rule, computed by hand for a 21,000-gas transfer of 1 wei at base
/// fee 10 gwei and tip 1 gwei (as tests/chain_rules.rs does for the post-state): chains
/// 1329/1328 credit their fee collector `gasUsed × (baseFee + tip)` and burn nothing; Ethereum
/// pays the coinbase the tip and burns the base fee.
#[test]
fn fees_follow_each_chains_rule() {
    use alloy_primitives::{address, TxKind};
    use chaintrace::chain::rules::FEE_COLLECTOR;
    use chaintrace::replay::assets::{asset_changes, FeeInputs, FeeRecipient};
    use chaintrace::replay::{trace, EvmEnv, TraceResult};
    use chaintrace::source::StateSnapshot;
    use chaintrace::trace::{TracerKind, TracerSpec};
    use revm::primitives::hardfork::SpecId;

    const GWEI: u128 = 1_000_000_000;
    let sender = address!("00000000000000000000000000000000000000f0");
    let to = address!("00000000000000000000000000000000000000bb");
    let miner = address!("00000000000000000000000000000000000000c0");
    for chain_id in [1329u64, 1] {
        let mut snap = StateSnapshot::complete();
        snap.insert_account(sender, offline::account(10u128.pow(18), 0, ""));
        let mut info = offline::block(200_000_000, Some((10 * GWEI) as u64));
        info.coinbase = miner;
        let env = EvmEnv::new(SpecId::CANCUN, chain_id, &info);
        let mut t = offline::tx(sender, TxKind::Call(to));
        t.env.tx_type = 2;
        t.env.gas_limit = 21_000;
        t.env.gas_price = 11 * GWEI;
        t.env.gas_priority_fee = Some(GWEI);
        t.env.value = U256::from(1);
        t.env.chain_id = Some(chain_id);
        let spec = TracerSpec::new(TracerKind::Call, Some(&json!({"withLog": true}))).unwrap();
        let mut db = snap.db();
        let traced = trace(&mut db, &env, &t, &spec, 0).unwrap();
        let TraceResult::Call(root) = &traced.result else {
            unreachable!()
        };
        let c = asset_changes(root, Some(&FeeInputs::new(&env, &t, &traced.outcome)));
        let fee = c.fee.as_ref().unwrap();
        let paid = U256::from(21_000u128 * 11 * GWEI);
        assert_eq!(fee.paid, paid);
        assert_eq!(fee.payer, sender);
        if chain_id == 1329 {
            assert_eq!(fee.role, FeeRecipient::FeeCollector);
            assert_eq!(fee.recipient, FEE_COLLECTOR);
            assert_eq!(fee.received, paid);
            assert_eq!(fee.burned, U256::ZERO);
        } else {
            assert_eq!(fee.role, FeeRecipient::Coinbase);
            assert_eq!(fee.recipient, miner);
            assert_eq!(fee.received, U256::from(21_000u128 * GWEI));
            assert_eq!(fee.burned, U256::from(21_000u128 * 10 * GWEI));
        }
        // Per address: the sender's value and fee apart, the recipient's fee, the payee's value.
        let by: BTreeMap<Address, (String, String)> = c
            .native
            .iter()
            .map(|n| (n.address, (n.transfers.decimal(), n.fee.decimal())))
            .collect();
        assert_eq!(by[&sender], ("-1".to_string(), format!("-{paid}")));
        assert_eq!(by[&to], ("1".to_string(), "0".to_string()));
        assert_eq!(by[&fee.recipient].1, fee.received.to_string());
    }
}

/// `block --assets --out DIR.parquet` holds `rows` (the NDJSON parts' rows), column for column.
#[cfg(feature = "parquet")]
fn parquet_holds_the_rows(dir: &std::path::Path, url: &str, last: u64, rows: &[Value]) {
    let pq = dir.with_extension("parquet");
    let _ = std::fs::remove_dir_all(&pq);
    let r = chaintrace(&[
        "block",
        &format!("1..{last}"),
        "--rpc-url",
        url,
        "--assets",
        "--out",
        pq.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cols = [
        "tx_hash", "address", "asset", "standard", "token_id", "symbol", "change", "fee",
    ];
    let mut from_parquet = Vec::new();
    for e in walk(&pq) {
        if !e.ends_with("part.asset_changes.parquet") {
            continue;
        }
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&e).unwrap(),
        )
        .unwrap()
        .build()
        .unwrap();
        for b in reader {
            let b = b.unwrap();
            for i in 0..b.num_rows() {
                let row: Vec<Value> = cols
                    .iter()
                    .map(|c| {
                        let a = b.column_by_name(c).unwrap();
                        let a = a
                            .as_any()
                            .downcast_ref::<arrow_array::StringArray>()
                            .unwrap();
                        if arrow_array::Array::is_null(a, i) {
                            Value::Null
                        } else {
                            json!(a.value(i))
                        }
                    })
                    .collect();
                from_parquet.push(row);
            }
        }
    }
    let from_ndjson: Vec<Value> = rows
        .iter()
        .map(|r| Value::Array(cols.iter().map(|c| r[*c].clone()).collect()))
        .collect();
    let from_parquet: Vec<Value> = from_parquet.into_iter().map(Value::Array).collect();
    assert!(!from_ndjson.is_empty());
    assert_eq!(from_parquet, from_ndjson);
    let _ = std::fs::remove_dir_all(&pq);
}
