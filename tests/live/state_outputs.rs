//! Storage changes by variable in the outputs beyond one transaction's text and JSON: the
//! `storage_changes` table of `block A..B --out DIR` (NDJSON and Parquet) and the "State
//! changes" section of the `--html` report. Contracts built by solc-js 0.8.30 with
//! `storageLayout` (`tests/contracts/oz/State.sol`: an OpenZeppelin ERC20 and a contract with
//! every kind of packed value; `Spans.sol`: long strings and transient variables) and one
//! contract no artifact describes (raw slots), run on anvil.
//!
//! Every row is checked against the world: raw words and every value held in one slot decoded
//! here by solc's packing rules from what `cast storage` reads at the block before and the
//! transaction's block; strings through their getters (`cast call`); transient variables
//! against the event the contract emits with their values as it ends; block and transaction
//! index against anvil's receipts. The rows are also those `tx --json --decode` gives as
//! `stateChanges` for the same transaction, and the Parquet files (read back by DuckDB, not by
//! the writer's library) hold the NDJSON rows column for column.

use crate::anvil::{calldata, hex0x, w_addr, with_ctor_args, Anvil};
use crate::run;
use crate::state_changes::{cast, e18};
use alloy_primitives::{hex, keccak256, Address, B256, U256};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const STATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/oz/solc-output-state.json"
);
const SPANS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/oz/solc-output-spans.json"
);

/// A contract no artifact describes: `SSTORE(calldata[0..32], calldata[32..64])`.
const RAW_CODE: &str = "0x602035600035550000";
const RAW_AT: &str = "0x0000000000000000000000000000000000005107";

fn creation(out: &str, file: &str, name: &str) -> String {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    v["contracts"][file][name]["evm"]["bytecode"]["object"]
        .as_str()
        .unwrap()
        .to_string()
}

/// What the world says of the transactions sent.
struct World {
    anvil: Anvil,
    /// Each transaction sent, by label.
    txs: Vec<(&'static str, B256)>,
    spans: Address,
}

/// Deployments and calls over several blocks, two of them in one block: token transfers, an
/// approval spent, every kind of packed value, a string and a bytes growing past one slot, a
/// guard held in transient storage, and a contract no artifact describes writing a slot.
fn world() -> World {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let (me, other, to) = (accounts[0], accounts[1], accounts[2]);
    let mut txs = Vec::new();
    let (h, token) = anvil.deploy_with(
        &with_ctor_args(
            &creation(STATE, "State.sol", "Token"),
            &[e18(10_000).to_be_bytes()],
        ),
        0,
    );
    txs.push(("deploy Token", h));
    let (h, registry) = anvil.deploy_with(&creation(STATE, "State.sol", "Registry"), 0);
    txs.push(("deploy Registry", h));
    let (h, spans) = anvil.deploy_with(&creation(SPANS, "Spans.sol", "Spans"), 0);
    txs.push(("deploy Spans", h));
    anvil.rpc("anvil_setCode", json!([RAW_AT, RAW_CODE]));
    let update = cast(&[
        "calldata",
        "update(uint8,int24,bytes4,string,string,uint128,int64)",
        "2",
        "-60",
        "0xdeadbeef",
        "Registry of things",
        "alice",
        "1000",
        "-5",
    ]);
    let transfer = calldata(
        "transfer(address,uint256)",
        &[w_addr(other), e18(200).to_be_bytes()],
    );
    // Two transactions of one block, from two senders.
    let both = anvil.send_in_one_block(vec![
        json!({"from": me, "to": token, "data": hex0x(&transfer), "gas": "0x100000"}),
        json!({"from": other, "to": registry, "data": update, "gas": "0x100000"}),
    ]);
    txs.push(("transfer", both[0]));
    txs.push(("update", both[1]));
    let send = |from: Address, to: Address, data: String| {
        let (h, r) = anvil.send_and_wait(json!({"from": from, "to": to, "data": data}));
        assert_eq!(r["status"], "0x1", "{r}");
        h
    };
    let approve = calldata(
        "approve(address,uint256)",
        &[w_addr(other), e18(500).to_be_bytes()],
    );
    txs.push(("approve", send(me, token, hex0x(&approve))));
    let spend = calldata(
        "transferFrom(address,address,uint256)",
        &[w_addr(me), w_addr(to), e18(300).to_be_bytes()],
    );
    txs.push(("transferFrom", send(other, token, hex0x(&spend))));
    let long = "a name that is far longer than thirty-one bytes, in three words";
    let set_name = cast(&["calldata", "setName(string)", long]);
    txs.push(("setName", send(me, spans, set_name)));
    let set_blob = cast(&[
        "calldata",
        "setBlob(bytes)",
        &format!("0x{}", "ab".repeat(40)),
    ]);
    txs.push(("setBlob", send(me, spans, set_blob)));
    let guarded = cast(&["calldata", "guarded(uint128,uint256)", "7", "99"]);
    txs.push(("guarded", send(me, spans, guarded)));
    let raw = format!(
        "0x{}{}",
        hex::encode(U256::from(5).to_be_bytes::<32>()),
        hex::encode(U256::from(0x1234).to_be_bytes::<32>())
    );
    let raw_at: Address = RAW_AT.parse().unwrap();
    txs.push(("raw write", send(me, raw_at, raw)));
    World { anvil, txs, spans }
}

/// `tx HASH --json --decode`'s `stateChanges`, each as a `storage_changes` row (lowercase
/// address, `key_path` null for a raw slot), without the columns the table has not.
fn tx_rows(anvil: &Anvil, hash: B256) -> Vec<Value> {
    let r = run::cmd(&[
        "tx",
        &format!("{hash:?}"),
        "--rpc-url",
        anvil.url(),
        "--abi",
        STATE,
        "--abi",
        SPANS,
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v["stateChanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let raw = c["variable"].is_null();
            json!({
                "address": c["address"].as_str().unwrap().to_lowercase(),
                "slot": c["slot"],
                "contract": c["contract"],
                "variable": c["variable"],
                "key_path": if raw { Value::Null } else { c["keyPath"].clone() },
                "name": c.get("name").cloned().unwrap_or(Value::Null),
                "type": c["type"],
                "offset": c["offset"],
                "part": c.get("part").cloned().unwrap_or(Value::Null),
                "before": c["before"],
                "after": c["after"],
                "transient": c.get("transient").cloned().unwrap_or(json!(false)),
                "raw": c.get("raw").cloned().unwrap_or(if raw { json!("not named") } else { Value::Null }),
            })
        })
        .collect()
}

fn word_at(anvil: &Anvil, address: &str, slot: &str, block: u64) -> U256 {
    let w = cast(&[
        "storage",
        address,
        slot,
        "--block",
        &block.to_string(),
        "--rpc-url",
        anvil.url(),
    ]);
    U256::from_str_radix(w.trim_start_matches("0x"), 16).unwrap()
}

/// Registry.Status's members, from State.sol.
const STATUS: [&str; 3] = ["Unset", "Active", "Paused"];

/// A value held in one slot, decoded here by solc's packing rules from the slot's `word`: the
/// type's bytes at `offset` from the right. `None` for a type this decoder does not read.
fn decode(ty: &str, offset: u64, part: Option<&str>, word: U256) -> Option<String> {
    if part == Some("length") {
        return Some(word.to_string());
    }
    let bits = |n: usize| -> U256 {
        let field = word >> (8 * offset as usize);
        if n >= 256 {
            field
        } else {
            field & ((U256::from(1) << n) - U256::from(1))
        }
    };
    if let Some(n) = ty.strip_prefix("uint") {
        return Some(bits(n.parse().ok()?).to_string());
    }
    if let Some(n) = ty.strip_prefix("int") {
        let n: usize = n.parse().ok()?;
        let v = bits(n);
        let negative = v.bit(n - 1);
        return Some(if negative {
            format!("-{}", (U256::from(1) << n) - v)
        } else {
            v.to_string()
        });
    }
    if let Some(n) = ty
        .strip_prefix("bytes")
        .and_then(|n| n.parse::<usize>().ok())
    {
        let b = bits(8 * n).to_be_bytes::<32>();
        return Some(format!("0x{}", hex::encode(&b[32 - n..])));
    }
    match ty {
        "bool" => Some((bits(8) == U256::from(1)).to_string()),
        "address" => {
            let b = bits(160).to_be_bytes::<32>();
            Some(Address::from_slice(&b[12..]).to_checksum(None))
        }
        "enum Registry.Status" => Some(format!("Status.{}", STATUS[bits(8).to::<usize>()])),
        _ => None,
    }
}

/// The getter of a string or bytes variable, by its name in the layout.
fn getter(variable: &str, ty: &str) -> String {
    let name = variable.trim_start_matches('_');
    format!("{name}()({ty})")
}

/// Checks each row against the world, returns how many were checked by words, by getters and
/// by the event: every row is checked by one of them.
fn check_against_the_world(anvil: &Anvil, spans: Address, rows: &[Value]) -> [usize; 3] {
    let mut by = [0usize; 3];
    for r in rows {
        let hash: B256 = r["tx_hash"].as_str().unwrap().parse().unwrap();
        let receipt = anvil.receipt(hash);
        let block = crate::anvil::parse_u64(&receipt["blockNumber"]);
        assert_eq!(r["block"], json!(block), "{r}");
        assert_eq!(
            r["tx_index"],
            json!(crate::anvil::parse_u64(&receipt["transactionIndex"])),
            "{r}"
        );
        let (addr, slot) = (r["address"].as_str().unwrap(), r["slot"].as_str().unwrap());
        if r["transient"] == json!(true) {
            // The values the contract saw as it ended, in its event: `Seen(locked, entered,
            // depth, scratch)`.
            let log = receipt["logs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| {
                    l["topics"][0]
                        == json!(format!(
                            "{:?}",
                            keccak256("Seen(bool,address,uint128,uint256)")
                        ))
                })
                .unwrap_or_else(|| panic!("no Seen event for {r}"));
            let seen = cast(&[
                "abi-decode",
                "--input",
                "f(bool,address,uint128,uint256)",
                log["data"].as_str().unwrap(),
            ]);
            let seen: Vec<&str> = seen.lines().map(str::trim).collect();
            let i = ["locked", "entered", "depth", "scratch"]
                .iter()
                .position(|v| r["variable"] == *v)
                .unwrap_or_else(|| panic!("a transient row of no Spans variable: {r}"));
            assert_eq!(r["after"], json!(seen[i]), "{r}");
            assert_eq!(r["address"], json!(format!("{spans:#x}")));
            by[2] += 1;
            continue;
        }
        let before = word_at(anvil, addr, slot, block - 1);
        let after = word_at(anvil, addr, slot, block);
        if r["variable"].is_null() {
            assert_eq!(r["before"], json!(format!("{:#066x}", before)), "{r}");
            assert_eq!(r["after"], json!(format!("{:#066x}", after)), "{r}");
            assert!(r["raw"].is_string() && r["key_path"].is_null(), "{r}");
            by[0] += 1;
            continue;
        }
        let ty = r["type"].as_str().unwrap();
        let offset = r["offset"].as_u64().unwrap();
        let part = r["part"].as_str();
        if let (Some(b), Some(a)) = (
            decode(ty, offset, part, before),
            decode(ty, offset, part, after),
        ) {
            assert_eq!(r["before"], json!(b), "{r}");
            assert_eq!(r["after"], json!(a), "{r}");
            by[0] += 1;
            continue;
        }
        assert!(ty == "string" || ty == "bytes", "no check for {r}");
        let sig = getter(r["variable"].as_str().unwrap(), ty);
        let at = |b: u64| {
            cast(&[
                "call",
                addr,
                &sig,
                "--block",
                &b.to_string(),
                "--rpc-url",
                anvil.url(),
            ])
        };
        assert_eq!(r["after"], json!(at(block)), "{r}");
        let existed =
            anvil.rpc("eth_getCode", json!([addr, format!("{:#x}", block - 1)])) != json!("0x");
        if existed {
            assert_eq!(r["before"], json!(at(block - 1)), "{r}");
        }
        by[1] += 1;
    }
    by
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

fn out_run(w: &World, dir: &Path, extra: &[&str]) -> run::Run {
    let last = w.anvil.block_number();
    let mut args = vec![
        "block".to_string(),
        format!("1..{last}"),
        "--rpc-url".into(),
        w.anvil.url().into(),
        "--out".into(),
        dir.to_str().unwrap().into(),
        "--partition-size".into(),
        "3".into(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run::cmd(&args).no_cache().env("CHAINTRACE_JOBS", "4").run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    r
}

#[test]
fn a_ranges_storage_changes_table_holds_every_change_by_variable() {
    let w = world();
    let base = std::env::temp_dir().join(format!("chaintrace-storage-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let names = ["--abi", STATE, "--abi", SPANS, "--no-project"];

    // NDJSON: the rows of part.storage_changes.ndjson, in chain order.
    let nd = base.join("ndjson");
    out_run(&w, &nd, &[&["--format", "ndjson"][..], &names[..]].concat());
    let m = manifest(&nd);
    assert!(
        m["tracer"].as_str().unwrap().ends_with(" storageChanges"),
        "{m}"
    );
    let mut rows: Vec<Value> = Vec::new();
    let mut listed = 0;
    for p in m["partitions"].as_array().unwrap() {
        let f = p["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["table"] == "storage_changes")
            .unwrap_or_else(|| panic!("no storage_changes file in {p}"));
        assert!(f["file"]
            .as_str()
            .unwrap()
            .ends_with("/part.storage_changes.ndjson"));
        let text = std::fs::read_to_string(nd.join(f["file"].as_str().unwrap())).unwrap();
        assert_eq!(f["rows"].as_u64().unwrap() as usize, text.lines().count());
        listed += text.lines().count();
        rows.extend(
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()),
        );
    }
    assert_eq!(listed, rows.len());
    assert!(m["partitions"].as_array().unwrap().len() >= 3, "{m}");

    // Per transaction: the rows `tx --json --decode` gives as `stateChanges`.
    let mut by_tx: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &rows {
        let mut r = r.clone();
        let hash = r["tx_hash"].as_str().unwrap().to_string();
        let o = r.as_object_mut().unwrap();
        for k in ["block", "tx_index", "tx_hash"] {
            o.remove(k);
        }
        by_tx.entry(hash).or_default().push(r);
    }
    for (label, hash) in &w.txs {
        let want = tx_rows(&w.anvil, *hash);
        let got = by_tx.remove(&format!("{hash:?}")).unwrap_or_default();
        assert_eq!(got, want, "{label}");
        // Registry and Spans have no constructor: their deployments write nothing.
        let writes = !matches!(*label, "deploy Registry" | "deploy Spans");
        assert_eq!(!got.is_empty(), writes, "{label}");
    }
    assert!(by_tx.is_empty(), "rows of no transaction sent: {by_tx:?}");

    // Against the world.
    let [words, getters, events] = check_against_the_world(&w.anvil, w.spans, &rows);
    assert_eq!(words + getters + events, rows.len());
    assert!(
        words >= 10 && getters >= 3 && events == 4,
        "{words} {getters} {events}"
    );
    let find = |f: &dyn Fn(&Value) -> bool| rows.iter().filter(|r| f(r)).count();
    assert!(find(&|r| r["raw"].is_string() && r["address"] == RAW_AT) == 1);
    assert!(find(&|r| r["name"] == "entries[\"alice\"].delta" && r["after"] == "-5") == 1);
    assert!(find(&|r| r["name"] == "status" && r["after"] == "Status.Paused") == 1);
    assert!(
        find(&|r| r["variable"] == "_allowances"
            && r["key_path"].as_array().is_some_and(|k| k.len() == 2))
            == 2
    );
    // Two transactions of one block: index 0 and 1 of the same block.
    let (t, u) = (w.txs[3].1, w.txs[4].1);
    let block_of = |h: B256| {
        rows.iter()
            .find(|r| r["tx_hash"] == json!(format!("{h:?}")))
            .map(|r| (r["block"].clone(), r["tx_index"].as_u64().unwrap()))
            .unwrap()
    };
    let ((bt, it), (bu, iu)) = (block_of(t), block_of(u));
    assert_eq!(bt, bu);
    assert_eq!(it + iu, 1);

    // Parquet: the same rows, read back by DuckDB (its own Parquet reader).
    #[cfg(feature = "parquet")]
    {
        let pq = base.join("parquet");
        out_run(&w, &pq, &names);
        let files: Vec<PathBuf> = walk(&pq)
            .into_iter()
            .filter(|p| p.ends_with("part.storage_changes.parquet"))
            .collect();
        let m = manifest(&pq);
        let listed = m["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["files"].as_array().unwrap().clone())
            .filter(|f| f["table"] == "storage_changes")
            .count();
        assert_eq!(files.len(), listed);
        let venv = crate::dask_example::pinned_venv();
        let query = format!(
            "import duckdb, json\n\
             rel = duckdb.sql(\"select * exclude (file_row_number) from \
             read_parquet('{}/**/part.storage_changes.parquet', file_row_number = true, hive_partitioning = false) \
             order by block, tx_index, file_row_number\")\n\
             cols = [c[0] for c in rel.description]\n\
             types = [str(t) for t in rel.types]\n\
             rows = [dict(zip(cols, r)) for r in rel.fetchall()]\n\
             print(json.dumps({{'types': dict(zip(cols, types)), 'rows': rows}}))\n",
            pq.display()
        );
        let q = std::process::Command::new(venv.join("bin/python"))
            .arg("-c")
            .arg(query)
            .output()
            .unwrap();
        assert!(
            q.status.success(),
            "duckdb: {}",
            String::from_utf8_lossy(&q.stderr)
        );
        let v: Value = serde_json::from_slice(&q.stdout).unwrap();
        assert_eq!(v["types"]["key_path"], "VARCHAR[]", "{}", v["types"]);
        assert_eq!(v["types"]["transient"], "BOOLEAN");
        assert_eq!(v["types"]["offset"], "UBIGINT");
        // In chain order: by block, index, and each file's own row order.
        assert_eq!(v["rows"], json!(rows));
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// Without `--abi` a range writes no `storage_changes` table.
#[test]
fn a_range_without_layouts_writes_no_storage_table() {
    let anvil = Anvil::start();
    let data = calldata(
        "transfer(address,uint256)",
        &[w_addr(anvil.accounts()[1]), e18(0).to_be_bytes()],
    );
    let token = anvil.deploy(&with_ctor_args(
        &creation(STATE, "State.sol", "Token"),
        &[e18(1).to_be_bytes()],
    ));
    anvil.send_and_wait(json!({"to": token, "data": hex0x(&data)}));
    let dir = std::env::temp_dir().join(format!("chaintrace-storage-none-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let last = anvil.block_number();
    let r = run::cmd(&[
        "block",
        &format!("1..{last}"),
        "--rpc-url",
        anvil.url(),
        "--out",
        dir.to_str().unwrap(),
        "--format",
        "ndjson",
        "--quiet",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = manifest(&dir);
    assert!(!m.to_string().contains("storage"), "{m}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The cells of each row of the table `id` in `html`, tags dropped and entities decoded, with
/// whether the row is marked raw.
fn table_rows(html: &str, id: &str) -> Vec<(bool, Vec<String>)> {
    let start = html
        .find(&format!("<table id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let text = |cell: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in cell.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    };
    table
        .split("<tr")
        .skip(2) // before the first row, the header
        .map(|row| {
            let raw = row.starts_with(" class=\"raw\"");
            let cells = row
                .split("<td")
                .skip(1)
                .map(|c| text(&c[c.find('>').unwrap() + 1..]).trim().to_string())
                .collect();
            (raw, cells)
        })
        .collect()
}

/// `tx --html`: a "State changes" section with the rows of the text view — contract, variable
/// with its key path, before → after — text from the chain escaped (a string and a mapping key
/// made of HTML), a raw slot marked raw, transient variables marked; every row the
/// transaction's `stateChanges`, and checked against `cast storage`, the getters and the event.
#[test]
fn the_html_report_has_a_state_changes_section() {
    let anvil = Anvil::start();
    let me = anvil.sender();
    let registry = anvil.deploy(&creation(STATE, "State.sol", "Registry"));
    let spans = anvil.deploy(&creation(SPANS, "Spans.sol", "Spans"));
    anvil.rpc("anvil_setCode", json!([RAW_AT, RAW_CODE]));
    let title = "<img src=x onerror=alert(1)> \"T\" & 'co'";
    let update = cast(&[
        "calldata",
        "update(uint8,int24,bytes4,string,string,uint128,int64)",
        "1",
        "7",
        "0x01020304",
        title,
        "<b>key</b>",
        "5",
        "-1",
    ]);
    let guarded = cast(&["calldata", "guarded(uint128,uint256)", "3", "4"]);
    let raw = format!(
        "0x{}{}",
        hex::encode(U256::from(9).to_be_bytes::<32>()),
        hex::encode(U256::from(0xbeef).to_be_bytes::<32>())
    );
    let dir = std::env::temp_dir().join(format!("chaintrace-state-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (label, to, data) in [
        ("update", registry, update),
        ("guarded", spans, guarded),
        ("raw", RAW_AT.parse().unwrap(), raw),
    ] {
        let (h, receipt) = anvil.send_and_wait(json!({"from": me, "to": to, "data": data}));
        assert_eq!(receipt["status"], "0x1", "{receipt}");
        let block = crate::anvil::parse_u64(&receipt["blockNumber"]);
        let html = dir.join(format!("{label}.html"));
        let r = run::cmd(&[
            "tx",
            &format!("{h:?}"),
            "--rpc-url",
            anvil.url(),
            "--abi",
            STATE,
            "--abi",
            SPANS,
            "--no-project",
            "--html",
            html.to_str().unwrap(),
        ])
        .no_cache()
        .run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        let text = std::fs::read_to_string(&html).unwrap();
        assert!(text.contains("<a href=\"#ct-state\">State changes</a>"));
        assert!(text.contains("<h2 id=\"ct-state\">State changes</h2>"));
        assert!(!text.contains("<img src=x"), "{label}: unescaped HTML");
        assert!(!text.contains("<b>key"), "{label}: unescaped HTML");
        let rows = table_rows(&text, "ct-state-table");
        // The same rows as `stateChanges`, in order.
        let want = tx_rows(&anvil, h);
        assert_eq!(rows.len(), want.len(), "{label}: {rows:?}");
        for ((raw, cells), c) in rows.iter().zip(&want) {
            let [contract, variable, before, after] = &cells[..] else {
                panic!("{label}: {cells:?}")
            };
            let address: Address = c["address"].as_str().unwrap().parse().unwrap();
            assert!(
                contract.starts_with(&address.to_checksum(None)),
                "{contract}"
            );
            if let Some(n) = c["contract"].as_str() {
                assert_eq!(*contract, format!("{} ({n})", address.to_checksum(None)));
            }
            // A large integer's short form follows its digits, as in the text view.
            let shown = |cell: &str, v: &Value| {
                let v = v.as_str().unwrap();
                cell == v || cell.starts_with(&format!("{v} ["))
            };
            assert!(shown(before, &c["before"]), "{label}: {before} / {c}");
            let transient = c["transient"] == json!(true);
            if transient {
                // Zero, then each value written that stood: the last is the `after`.
                assert!(variable.ends_with(" (transient)"), "{variable}");
                let last = after.rsplit(" → ").next().unwrap();
                assert!(shown(last, &c["after"]), "{label}: {after} / {c}");
            } else {
                assert!(shown(after, &c["after"]), "{label}: {after} / {c}");
            }
            assert_eq!(*raw, c["variable"].is_null(), "{label}: {cells:?}");
            match c["name"].as_str() {
                Some(name) => assert!(variable.starts_with(name), "{variable} / {name}"),
                None => {
                    assert!(variable.starts_with(&format!("slot {}", c["slot"].as_str().unwrap())));
                    assert!(variable.contains(" raw ("), "{variable}");
                }
            }
        }
        // Against the world: raw words and packed values by `cast storage`, strings by their
        // getters, transient variables by the event, through the table check.
        let keyed: Vec<Value> = want
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c["block"] = json!(block);
                c["tx_index"] = json!(crate::anvil::parse_u64(&receipt["transactionIndex"]));
                c["tx_hash"] = json!(format!("{h:?}"));
                c
            })
            .collect();
        let [words, getters, events] = check_against_the_world(&anvil, spans, &keyed);
        assert_eq!(words + getters + events, keyed.len());
        match label {
            "update" => {
                assert!(getters == 1 && events == 0, "{words} {getters}");
                assert!(rows
                    .iter()
                    .any(|(_, c)| c[1] == "entries[\"<b>key</b>\"].amount"));
                // The title, escaped in the file, reads back whole (as its getter gives it,
                // checked above).
                let t = rows.iter().find(|(_, c)| c[1] == "title").unwrap();
                assert!(t.1[3].contains("<img src=x onerror=alert(1)>"), "{t:?}");
                assert!(t.1[3].contains("& 'co'"), "{t:?}");
            }
            "guarded" => assert_eq!(events, 4),
            _ => assert!(rows.len() == 1 && rows[0].0, "{rows:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
