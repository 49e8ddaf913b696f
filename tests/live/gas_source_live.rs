//! Gas by source (`chaintrace gas --by-line --by-function`, `--flamegraph --by-function`) on
//! the pinned anvil, with the contracts of `tests/contracts/srcmap/` (solc's own standard-JSON
//! output, committed). What each row must hold comes from the `.sol` text and the transaction's
//! input (a loop of `n` rounds calls `_mix` `n` times; `_depth(n)` recurses `n + 1` levels), from
//! EVM prices (a fresh storage slot costs 22,100), and from anvil's own struct logs, mapped to
//! lines by this test's own reading of the source map.

use super::sources_live::{code, deploy_leaf, legacy_path, output, viair_path, SRC};
use crate::{anvil, run};
use std::collections::BTreeMap;
use std::path::Path;

use alloy_primitives::{Address, B256};
use anvil::{calldata, hex0x, w_addr, w_u, Anvil, EXPLICIT_GAS};
use serde_json::{json, Value};

/// The 1-based line of the first line of `file` containing `needle`.
fn line_of(file: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {file}"))
        + 1
}

struct World {
    anvil: Anvil,
    profile: Address,
    middle: Address,
    via: Address,
}

fn world() -> World {
    // Struct logs of mined transactions need --steps-tracing.
    let anvil = Anvil::start_with_args(&["--steps-tracing"]);
    let legacy = output("solc-output.json");
    let viair = output("solc-output-viair.json");
    let profile = anvil.deploy(&code(&legacy, "GasProfile.sol", "GasProfile"));
    let (_, leaf) = deploy_leaf(&anvil, &legacy);
    let middle = anvil.deploy(&anvil::with_ctor_args(
        &code(&legacy, "Middle.sol", "Middle"),
        &[w_addr(leaf)],
    ));
    let via = anvil.deploy(&code(&viair, "ViaIr.sol", "ViaIr"));
    World {
        anvil,
        profile,
        middle,
        via,
    }
}

impl World {
    fn send(&self, to: Address, data: Vec<u8>, status: &str) -> B256 {
        let (h, r) = self.anvil.send_and_wait(json!({
            "to": to, "data": hex0x(&data), "gas": format!("{EXPLICIT_GAS:#x}"),
        }));
        assert_eq!(r["status"], status, "{to}: {r}");
        h
    }

    /// `chaintrace gas HASH --json` with `extra`; the exit code must be `code`.
    fn gas_json(&self, hash: B256, extra: &[&str], code: i32) -> (Value, String) {
        let hash = format!("{hash:?}");
        let mut args = vec!["gas", &hash, "--rpc-url", self.anvil.url(), "--json"];
        args.extend_from_slice(extra);
        let r = run::cmd(&args).no_cache().run();
        assert_eq!(r.code, code, "{}", r.stderr);
        (serde_json::from_str(&r.stdout).unwrap(), r.stderr)
    }
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// Σ selfGas of `rows`.
fn self_sum(rows: &Value) -> u64 {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| u64_of(r, "selfGas"))
        .sum()
}

/// The by-function row of `Contract.function`.
fn function<'a>(report: &'a Value, contract: &str, name: &str) -> &'a Value {
    report["byFunction"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["contract"] == contract && f["function"] == name)
        .unwrap_or_else(|| panic!("no {contract}.{name} in {}", report["byFunction"]))
}

/// The by-line row of `file:line`.
fn line<'a>(report: &'a Value, file: &str, line: usize) -> &'a Value {
    report["byLine"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["file"] == file && l["line"] == line)
        .unwrap_or_else(|| panic!("no {file}:{line} in {}", report["byLine"]))
}

/// Every unit of execution gas is in exactly one line row and one function row.
fn assert_reconciles(report: &Value) {
    let execution = u64_of(&report["transaction"], "executionGas");
    let ops: u64 = report["opcodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| u64_of(o, "gas"))
        .sum();
    assert_eq!(ops, execution, "opcode table");
    assert_eq!(self_sum(&report["byLine"]), execution, "by line");
    assert_eq!(self_sum(&report["byFunction"]), execution, "by function");
    for rows in [&report["byLine"], &report["byFunction"]] {
        for r in rows.as_array().unwrap() {
            let (s, i) = (u64_of(r, "selfGas"), u64_of(r, "inclusiveGas"));
            assert!(
                s <= i && i <= execution,
                "self {s} ≤ inclusive {i} ≤ {execution}: {r}"
            );
        }
    }
}

/// Decodes a solc source map (`s:l:f:j;…`) into (start, file) per instruction.
fn decode_map(map: &str) -> Vec<(i64, i64)> {
    let (mut s, mut f) = (0i64, -1i64);
    map.split(';')
        .map(|item| {
            let parts: Vec<&str> = item.split(':').collect();
            if let Some(p) = parts.first().filter(|p| !p.is_empty()) {
                s = p.parse().unwrap();
            }
            if let Some(p) = parts.get(2).filter(|p| !p.is_empty()) {
                f = p.parse().unwrap();
            }
            (s, f)
        })
        .collect()
}

#[test]
fn gas_by_line_and_function_follows_internal_functions_and_recursion() {
    let w = world();
    let n = 12u64;
    let h = w.send(
        w.profile,
        calldata("run(uint256)", &[w_u(n as u128)]),
        "0x1",
    );
    let (report, _) = w.gas_json(
        h,
        &["--abi", &legacy_path(), "--by-line", "--by-function"],
        0,
    );
    assert_reconciles(&report);
    let execution = u64_of(&report["transaction"], "executionGas");

    let file = "GasProfile.sol";
    let run = function(&report, "GasProfile", "run");
    assert_eq!(run["calls"], 1, "{run}");
    assert_eq!(u64_of(run, "inclusiveGas"), execution, "{run}");
    assert_eq!(run["line"], line_of(file, "function run("));
    let mix = function(&report, "GasProfile", "_mix");
    assert_eq!(mix["calls"], n, "{mix}");
    assert_eq!(mix["line"], line_of(file, "function _mix("));
    let depth = function(&report, "GasProfile", "_depth");
    assert_eq!(depth["calls"], n + 1, "{depth}");
    // Recursion is counted once: the outermost call holds all of it.
    let depth_incl = u64_of(depth, "inclusiveGas");
    let outer = line(&report, file, line_of(file, "acc = _depth(n);"));
    let inner = line(&report, file, line_of(file, "return _depth(n - 1) + 1;"));
    assert!(
        u64_of(outer, "inclusiveGas") >= depth_incl,
        "{outer} vs {depth}"
    );
    assert!(
        u64_of(inner, "inclusiveGas") < depth_incl,
        "{inner} vs {depth}"
    );
    // A fresh slot: SSTORE 0 → non-zero, cold, costs 22,100; the line's few other opcodes (a
    // keccak of 64 bytes, MSTOREs, pushes) add well under 200.
    let store = line(&report, file, line_of(file, "slots[n] = s;"));
    let store_gas = u64_of(store, "selfGas");
    assert!((22_100..22_300).contains(&store_gas), "{store}");
    assert_eq!(store["source"], "slots[n] = s;");
    // The loop body's line holds the checked addition solc generates for `s += …` and the
    // call into `_mix` (n rounds).
    let body = line(&report, file, line_of(file, "s += _mix(i);"));
    assert!(u64_of(body, "inclusiveGas") >= u64_of(mix, "inclusiveGas"));

    // Against anvil's own struct logs: gas per pc mapped to lines by this test's reading of
    // the source map. A line the map gives the user's file gets at least that much; what is
    // left over (generated code, charged to the user's statement that called it) is exactly
    // what the map gives no user file.
    let legacy = output("solc-output.json");
    let id = legacy["sources"][file]["id"].as_i64().unwrap();
    let deployed = &legacy["contracts"][file]["GasProfile"]["evm"]["deployedBytecode"];
    let entries = decode_map(deployed["sourceMap"].as_str().unwrap());
    let bytecode = alloy_primitives::hex::decode(deployed["object"].as_str().unwrap()).unwrap();
    let mut ix = vec![0usize; bytecode.len()];
    let (mut pc, mut k) = (0, 0);
    while pc < bytecode.len() {
        let op = bytecode[pc];
        let width = if (0x60..=0x7f).contains(&op) {
            1 + (op - 0x5f) as usize
        } else {
            1
        };
        for slot in ix.iter_mut().skip(pc).take(width) {
            *slot = k;
        }
        pc += width;
        k += 1;
    }
    let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
    let logs = w.anvil.trace(h, json!({}));
    let (mut naive, mut generated) = (BTreeMap::<usize, u64>::new(), 0u64);
    for step in logs["structLogs"].as_array().unwrap() {
        let pc = step["pc"].as_u64().unwrap() as usize;
        let cost = step["gasCost"].as_u64().unwrap();
        let (start, f) = entries[ix[pc]];
        if f == id {
            let start = start as usize;
            *naive
                .entry(text[..start].matches('\n').count() + 1)
                .or_default() += cost;
        } else {
            generated += cost;
        }
    }
    // Code the optimizer shares between functions carries one function's location in the map
    // (a return tail `_mix` and `_depth` share); run by the other, its gas is that other's,
    // on its declaration line: only a function's declaration line may get less than the map
    // gives it, and what it loses stays within the file's lines.
    let declared = |l: usize| {
        text.lines()
            .nth(l - 1)
            .unwrap()
            .trim()
            .starts_with("function ")
    };
    let mut extra: i64 = 0;
    for (l, gas) in &naive {
        let ours = u64_of(line(&report, file, *l), "selfGas");
        assert!(
            ours >= *gas || declared(*l),
            "line {l}: ours {ours} < anvil's {gas}"
        );
        extra += ours as i64 - *gas as i64;
    }
    let extra = u64::try_from(extra).expect("no gas lost");
    let generated_rows: u64 = report["byLine"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["file"].is_null())
        .map(|r| u64_of(r, "selfGas"))
        .sum();
    assert_eq!(extra + generated_rows, generated, "generated code");

    // For people: the tables end with totals equal to the execution gas.
    let hash = format!("{h:?}");
    let abi = legacy_path();
    let svg = std::env::temp_dir().join(format!("chaintrace-gas-fn-{}.svg", std::process::id()));
    let r = run::cmd(&[
        "gas",
        &hash,
        "--rpc-url",
        w.anvil.url(),
        "--abi",
        &abi,
        "--by-function",
        "--flamegraph",
        svg.to_str().unwrap(),
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let total = execution
        .to_string()
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    let fn_table = r
        .stdout
        .split("by function (execution gas)")
        .nth(1)
        .unwrap();
    assert!(fn_table.contains("GasProfile._depth"), "{}", r.stdout);
    let total_row = fn_table.lines().find(|l| l.contains("total")).unwrap();
    assert!(total_row.contains(&total), "{total_row} vs {total}");
    // The flamegraph's frames are the functions: `_depth` once per level of its recursion.
    let text = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_file(&svg).ok();
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts).unwrap();
    let titles: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .collect();
    let levels = titles
        .iter()
        .filter(|t| t.starts_with("GasProfile._depth ("))
        .count() as u64;
    assert_eq!(levels, n + 1, "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("GasProfile._mix (")));
    let root = titles
        .iter()
        .find_map(|t| t.strip_prefix("all ("))
        .map(|r| {
            r.split(' ')
                .next()
                .unwrap()
                .replace(',', "")
                .parse::<u64>()
                .unwrap()
        });
    assert_eq!(root, Some(execution));
}

#[test]
fn gas_by_source_across_frames_failures_and_via_ir() {
    let w = world();
    // A revert two frames down (STATICCALL into Leaf, `_check`'s require).
    let h = w.send(w.middle, calldata("midRevert(uint256)", &[w_u(5)]), "0x0");
    let abi = legacy_path();
    let (report, _) = w.gas_json(h, &["--abi", &abi, "--by-function", "--by-line"], 3);
    assert_reconciles(&report);
    let execution = u64_of(&report["transaction"], "executionGas");
    let mid = function(&report, "Middle", "midRevert");
    assert_eq!(u64_of(mid, "inclusiveGas"), execution, "{mid}");
    for (c, f) in [("Leaf", "leafRevert"), ("Leaf", "_check")] {
        assert_eq!(function(&report, c, f)["calls"], 1, "{c}.{f}");
    }
    let require = line(&report, "Leaf.sol", line_of("Leaf.sol", "require(x > 10"));
    assert!(u64_of(require, "selfGas") > 0, "{require}");
    // Out of gas in a child: the gas it burned is charged where it stopped.
    let h = w.send(w.middle, calldata("starve(uint256)", &[w_u(9)]), "0x0");
    let (report, _) = w.gas_json(h, &["--abi", &abi, "--by-line", "--by-function"], 3);
    assert_reconciles(&report);
    let sstore = line(&report, "Leaf.sol", line_of("Leaf.sol", "fresh = v;"));
    assert!(u64_of(sstore, "selfGas") > 5_000, "{sstore}");
    // viaIR: functions and lines from its own output. Its optimizer maps the code it inlined
    // into the dispatcher (here the SSTORE of `count += by`) to the contract's span, so that
    // gas is on the `contract` line, as the map says.
    let h = w.send(w.via, calldata("bump(uint256)", &[w_u(2)]), "0x1");
    let (report, _) = w.gas_json(
        h,
        &["--abi", &viair_path(), "--by-function", "--by-line"],
        0,
    );
    assert_reconciles(&report);
    function(&report, "ViaIr", "bump");
    line(&report, "ViaIr.sol", line_of("ViaIr.sol", "require(by < 5"));
    let contract = line(
        &report,
        "ViaIr.sol",
        line_of("ViaIr.sol", "contract ViaIr {"),
    );
    assert!(u64_of(contract, "selfGas") >= 20_000, "{contract}");
}

#[test]
fn gas_by_source_without_a_source_map_says_so() {
    let w = world();
    let h = w.send(w.profile, calldata("run(uint256)", &[w_u(3)]), "0x1");
    let (report, stderr) = w.gas_json(h, &["--no-project", "--by-line", "--by-function"], 0);
    assert!(stderr.contains("no source map is loaded"), "{stderr}");
    assert_reconciles(&report);
    let rows = report["byLine"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0]["location"],
        format!("{:?} (no source map)", w.profile),
        "{rows:?}"
    );
    // Ranges are refused: the tables are per transaction.
    let r = run::cmd(&["block", "1..2", "--rpc-url", w.anvil.url(), "--by-line"])
        .no_cache()
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("per transaction"), "{}", r.stderr);
}

/// One inherited function run by two deployed contracts is two rows (`Token.Base._update`,
/// `Vault.Base._update`), each with its own calls; an overloaded name shows its parameter
/// types (read from the `.sol` text's declarations by the test).
#[test]
fn gas_by_function_keys_rows_by_the_contract_that_ran_them() {
    let w = world();
    let legacy = output("solc-output.json");
    let token = w.anvil.deploy(&code(&legacy, "Inherit.sol", "Token"));
    let vault = w.anvil.deploy(&code(&legacy, "Inherit.sol", "Vault"));
    let router = w.anvil.deploy(&code(&legacy, "Inherit.sol", "Router"));
    let h = w.send(
        router,
        calldata("both(address,address)", &[w_addr(token), w_addr(vault)]),
        "0x1",
    );
    let (report, _) = w.gas_json(
        h,
        &["--abi", &legacy_path(), "--by-function", "--by-line"],
        0,
    );
    let rows = report["byFunction"].as_array().unwrap();
    let update: Vec<&Value> = rows
        .iter()
        .filter(|f| f["contract"] == "Base" && f["function"] == "_update")
        .collect();
    let by = |deployed: &str| {
        update
            .iter()
            .find(|f| f["deployed"] == deployed)
            .unwrap_or_else(|| panic!("no {deployed}.Base._update in {rows:#?}"))
    };
    assert_eq!(update.len(), 2, "{rows:#?}");
    // Token minted twice, the vault took one deposit.
    assert_eq!(by("Token")["calls"], 2, "{rows:#?}");
    assert_eq!(by("Vault")["calls"], 1, "{rows:#?}");
    let decl = line_of("Inherit.sol", "function _update(");
    assert_eq!(by("Token")["line"], decl);
    // The overloads, told apart by their types; a function declared where it runs has no
    // "deployed".
    for sig in ["mint(uint256)", "mint(uint256,uint256)"] {
        let row = function(&report, "Token", sig);
        assert_eq!(row["calls"], 1, "{sig}: {rows:#?}");
        assert!(row.get("deployed").is_none(), "{row}");
    }
    let deposit = function(&report, "Vault", "deposit");
    assert_eq!(deposit["calls"], 1, "{rows:#?}");
    assert_reconciles(&report);
}
