//! What a transaction changed, by variable: an OpenZeppelin ERC20 (`tests/contracts/oz/
//! State.sol`, OpenZeppelin Contracts 5.4.0 from npm built by solc-js 0.8.30 with
//! `storageLayout` selected) deployed on anvil, a `transfer`, an `approve` and a
//! `transferFrom`; and a contract with one packed slot, an enum, a string, a mapping by string
//! to a packed struct and a dynamic array. `tx --json --decode` gives `stateChanges`, each
//! variable checked against what `cast storage` reads at the transaction's block and the one
//! before, and against the token's getters through `cast call`.

use crate::anvil::{calldata, hex0x, w_addr, w_u, with_ctor_args, Anvil};
use crate::run;
use alloy_primitives::{keccak256, Address, U256};
use serde_json::{json, Value};
use std::path::PathBuf;

const OUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/oz/solc-output-state.json"
);

/// `cast ARGS` (the pinned cast 1.7.1); its stdout, trimmed.
pub(crate) fn cast(args: &[&str]) -> String {
    let cast = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/cast");
    let out = std::process::Command::new(cast)
        .args(args)
        .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "1")
        .output()
        .expect("run cast");
    assert!(
        out.status.success(),
        "cast {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn creation(name: &str) -> String {
    let out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    out["contracts"]["State.sol"][name]["evm"]["bytecode"]["object"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `tx HASH --json --decode` with the build's artifacts; its `stateChanges`.
fn state_changes(anvil: &Anvil, hash: &str) -> Value {
    let r = run::cmd(&[
        "tx",
        hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        OUT,
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v["stateChanges"].clone()
}

/// The block of a mined transaction.
pub(crate) fn block_of(anvil: &Anvil, hash: &str) -> u64 {
    let r = anvil.rpc("eth_getTransactionReceipt", json!([hash]));
    u64::from_str_radix(
        r["blockNumber"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap()
}

/// A mapping entry's slot by solc's rule: keccak256(key . slot).
fn entry(key: &[u8], slot: U256) -> U256 {
    let mut pre = key.to_vec();
    pre.extend_from_slice(&slot.to_be_bytes::<32>());
    U256::from_be_bytes(keccak256(pre).0)
}

pub(crate) fn slot_hex(s: U256) -> String {
    format!("{s:#066x}")
}

pub(crate) fn e18(n: u128) -> U256 {
    U256::from(n) * U256::from(10u64).pow(U256::from(18))
}

/// One named change as `stateChanges` lists it.
fn change(
    token: Address,
    variable: &str,
    keys: &[Address],
    slot: U256,
    before: U256,
    after: U256,
) -> Value {
    let key_path: Vec<String> = keys.iter().map(|k| k.to_checksum(None)).collect();
    let name = format!(
        "{variable}{}",
        key_path
            .iter()
            .map(|k| format!("[{k}]"))
            .collect::<String>()
    );
    json!({
        "address": token.to_checksum(None),
        "contract": "Token",
        "variable": variable,
        "keyPath": key_path,
        "type": "uint256",
        "slot": slot_hex(slot),
        "offset": 0,
        "before": before.to_string(),
        "after": after.to_string(),
        "name": name,
    })
}

/// Every named variable's before and after equal the slot's words `cast storage` reads at
/// the block before and at the transaction's block.
fn same_as_cast_storage(anvil: &Anvil, changes: &Value, block: u64) {
    for c in changes.as_array().unwrap() {
        let at = |b: u64| {
            let w = cast(&[
                "storage",
                c["address"].as_str().unwrap(),
                c["slot"].as_str().unwrap(),
                "--block",
                &b.to_string(),
                "--rpc-url",
                anvil.url(),
            ]);
            U256::from_str_radix(w.trim_start_matches("0x"), 16)
                .unwrap()
                .to_string()
        };
        assert_eq!(c["before"].as_str().unwrap(), at(block - 1), "{c}");
        assert_eq!(c["after"].as_str().unwrap(), at(block), "{c}");
    }
}

/// Every named variable's after equals its getter's answer at the transaction's block.
fn same_as_getters(anvil: &Anvil, changes: &Value, block: u64) {
    for c in changes.as_array().unwrap() {
        let keys: Vec<&str> = c["keyPath"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        let sig = match c["variable"].as_str().unwrap() {
            "_balances" => "balanceOf(address)(uint256)",
            "_allowances" => "allowance(address,address)(uint256)",
            "_totalSupply" => "totalSupply()(uint256)",
            other => panic!("no getter for {other}"),
        };
        let block = block.to_string();
        let mut args = vec!["call", c["address"].as_str().unwrap(), sig];
        args.extend(keys);
        args.extend(["--block", &block, "--rpc-url", anvil.url()]);
        let got = cast(&args);
        // cast prints a large amount with its short form after it: `9800… [9.8e21]`.
        let exact = got.split_whitespace().next().unwrap();
        assert_eq!(c["after"].as_str().unwrap(), exact, "{c}");
    }
}

#[test]
fn an_erc20_transfer_approve_and_transfer_from_named_by_variable() {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let (me, spender, to) = (accounts[0], accounts[1], accounts[2]);
    let supply = e18(10_000);
    let token = anvil.deploy(&with_ctor_args(&creation("Token"), &[supply.to_be_bytes()]));
    let send = |from: Address, data: Vec<u8>| {
        let (h, r) = anvil.send_and_wait(json!({"from": from, "to": token, "data": hex0x(&data)}));
        assert_eq!(r["status"], "0x1", "{r}");
        format!("{h:?}")
    };
    let word = |a: Address| w_addr(a).to_vec();
    let transfer = send(
        me,
        calldata(
            "transfer(address,uint256)",
            &[w_addr(spender), e18(200).to_be_bytes()],
        ),
    );
    let approve = send(
        me,
        calldata(
            "approve(address,uint256)",
            &[w_addr(spender), e18(500).to_be_bytes()],
        ),
    );
    let transfer_from = send(
        spender,
        calldata(
            "transferFrom(address,address,uint256)",
            &[w_addr(me), w_addr(to), w_u(300 * 10u128.pow(18))],
        ),
    );
    let balance = |a: Address| entry(&word(a), U256::ZERO);
    let allowance = entry(&word(spender), entry(&word(me), U256::from(1)));

    // A transfer: the sender's balance written first (OpenZeppelin's `_update`), then the
    // recipient's.
    let got = state_changes(&anvil, &transfer);
    assert_eq!(
        got,
        json!([
            change(token, "_balances", &[me], balance(me), supply, e18(9_800)),
            change(
                token,
                "_balances",
                &[spender],
                balance(spender),
                U256::ZERO,
                e18(200)
            ),
        ])
    );
    let block = block_of(&anvil, &transfer);
    same_as_cast_storage(&anvil, &got, block);
    same_as_getters(&anvil, &got, block);

    let got = state_changes(&anvil, &approve);
    assert_eq!(
        got,
        json!([change(
            token,
            "_allowances",
            &[me, spender],
            allowance,
            U256::ZERO,
            e18(500)
        )])
    );
    let block = block_of(&anvil, &approve);
    same_as_cast_storage(&anvil, &got, block);
    same_as_getters(&anvil, &got, block);

    // transferFrom: the allowance spent first (`_spendAllowance`), then the balances.
    let got = state_changes(&anvil, &transfer_from);
    assert_eq!(
        got,
        json!([
            change(
                token,
                "_allowances",
                &[me, spender],
                allowance,
                e18(500),
                e18(200)
            ),
            change(
                token,
                "_balances",
                &[me],
                balance(me),
                e18(9_800),
                e18(9_500)
            ),
            change(token, "_balances", &[to], balance(to), U256::ZERO, e18(300)),
        ])
    );
    let block = block_of(&anvil, &transfer_from);
    same_as_cast_storage(&anvil, &got, block);
    same_as_getters(&anvil, &got, block);

    // The human view: a "state changes" section after the tree, per contract.
    let r = run::cmd(&[
        "tx",
        &transfer_from,
        "--rpc-url",
        anvil.url(),
        "--abi",
        OUT,
        "--no-project",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let section = r
        .stdout
        .split("state changes\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{}", r.stdout));
    let (me, spender, to) = (
        me.to_checksum(None),
        spender.to_checksum(None),
        to.to_checksum(None),
    );
    assert_eq!(
        section.split("\nexplorer").next().unwrap().trim_end(),
        format!(
            "  {} (Token)\n    \
             Token._allowances[{me}][{spender}]: 500000000000000000000 [5e20] → 200000000000000000000 [2e20]\n    \
             Token._balances[{me}]: 9800000000000000000000 [9.8e21] → 9500000000000000000000 [9.5e21]\n    \
             Token._balances[{to}]: 0 → 300000000000000000000 [3e20]",
            token.to_checksum(None)
        )
    );
    // `call`: the same transfer simulated on the latest state names the same variables.
    let data = hex0x(&calldata(
        "transfer(address,uint256)",
        &[w_addr(accounts[2]), e18(1).to_be_bytes()],
    ));
    let from = accounts[0].to_checksum(None);
    let r = run::cmd(&[
        "call",
        "--from",
        &from,
        "--to",
        &token.to_checksum(None),
        "--data",
        &data,
        "--rpc-url",
        anvil.url(),
        "--abi",
        OUT,
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["stateChanges"],
        json!([
            change(
                token,
                "_balances",
                &[accounts[0]],
                balance(accounts[0]),
                e18(9_500),
                e18(9_499)
            ),
            change(
                token,
                "_balances",
                &[accounts[2]],
                balance(accounts[2]),
                e18(300),
                e18(301)
            ),
        ])
    );
    // Without --decode the JSON is geth's alone.
    let plain = run::cmd(&[
        "tx",
        &transfer_from,
        "--rpc-url",
        anvil.url(),
        "--abi",
        OUT,
        "--no-project",
        "--json",
    ])
    .no_cache()
    .run();
    assert!(!plain.stdout.contains("stateChanges"), "{}", plain.stdout);
    let unnamed = run::cmd(&[
        "tx",
        &transfer_from,
        "--rpc-url",
        anvil.url(),
        "--no-project",
        "--json",
    ])
    .no_cache()
    .run();
    assert_eq!(plain.stdout, unnamed.stdout);
}

/// A fresh anvil with the token deployed (10e18 to the first account) and a transfer of 7 to
/// the second: the chain, its accounts, the token and the transfer's hash.
fn token_transfer() -> (Anvil, Vec<Address>, Address, alloy_primitives::B256) {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let token = anvil.deploy(&with_ctor_args(
        &creation("Token"),
        &[e18(10).to_be_bytes()],
    ));
    let data = calldata("transfer(address,uint256)", &[w_addr(accounts[1]), w_u(7)]);
    let (h, _) = anvil.send_and_wait(json!({"to": token, "data": hex0x(&data)}));
    (anvil, accounts, token, h)
}

/// Sourcify's answer for the deployed Token, in the shape of argotorg/sourcify's
/// `services/server/src/apiv2.yaml` (`VerifiedContract`, the fields chaintrace asks for): the
/// ABI, the compilation's name, both bytecodes and solc's own `storageLayout`, all from the
/// build solc-js wrote; `layout` false: Sourcify has none (`null`).
fn sourcify_token(anvil: &Anvil, token: Address, layout: bool) -> Value {
    let out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    let c = &out["contracts"]["State.sol"]["Token"];
    let onchain = anvil.rpc("eth_getCode", json!([token, "latest"]));
    json!({
        "match": "exact_match", "creationMatch": "exact_match", "runtimeMatch": "exact_match",
        "chainId": anvil.chain_id().to_string(), "address": token,
        "abi": c["abi"],
        "compilation": {"language": "Solidity", "compiler": "solc",
            "compilerVersion": "0.8.30+commit.73712a01", "compilerSettings": {},
            "name": "Token", "fullyQualifiedName": "State.sol:Token"},
        "runtimeBytecode": {"onchainBytecode": onchain,
            "recompiledBytecode": format!("0x{}", c["evm"]["deployedBytecode"]["object"].as_str().unwrap()),
            "sourceMap": c["evm"]["deployedBytecode"]["sourceMap"],
            "linkReferences": c["evm"]["deployedBytecode"]["linkReferences"],
            "immutableReferences": c["evm"]["deployedBytecode"]["immutableReferences"]},
        "creationBytecode": {
            "recompiledBytecode": format!("0x{}", c["evm"]["bytecode"]["object"].as_str().unwrap()),
            "sourceMap": c["evm"]["bytecode"]["sourceMap"],
            "linkReferences": c["evm"]["bytecode"]["linkReferences"]},
        "storageLayout": if layout { c["storageLayout"].clone() } else { Value::Null },
    })
}

/// A contract nobody built here, verified on Sourcify: its storage named by the verified
/// compilation's `storageLayout` (asked for with the sources, cached with them), the same
/// `stateChanges` the build's own layout gives; where Sourcify has no layout, raw slots saying
/// so; where it verified nothing, no section at all.
#[test]
fn a_verified_contract_is_named_by_sourcifys_storage_layout() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (anvil, accounts, token, h) = token_transfer();
    let hash = format!("{h:?}");
    let expected = state_changes(&anvil, &hash);
    assert_eq!(expected.as_array().map(Vec::len), Some(2), "{expected}");
    let serve = |answer: Option<Value>| {
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        let token = format!("{token:#x}");
        let url = crate::http::serve(move |r: &crate::http::Request| {
            counter.fetch_add(1, Ordering::SeqCst);
            let target = r.path.to_lowercase();
            assert!(target.contains("storagelayout"), "{target}");
            match (&answer, target.contains(&token)) {
                (Some(a), true) => crate::http::Reply::Answer(200, a.to_string()),
                _ => {
                    crate::http::Reply::Answer(404, json!({"customCode": "not_found"}).to_string())
                }
            }
        });
        (url, hits)
    };
    let cache =
        std::env::temp_dir().join(format!("chaintrace-sourcify-layout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let run_with = |url: &str, extra: &[&str]| {
        let mut a = vec![
            "tx",
            hash.as_str(),
            "--rpc-url",
            anvil.url(),
            "--no-project",
            "--sourcify-url",
            url,
        ];
        a.extend(extra);
        let r = run::cmd(&a)
            .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
            .run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    };
    let (url, hits) = serve(Some(sourcify_token(&anvil, token, true)));
    let r = run_with(&url, &["--json", "--decode"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["stateChanges"], expected, "{}", r.stderr);
    let asked = hits.load(Ordering::SeqCst);
    assert!(asked >= 1, "{asked}");
    // The human section, and the next run from the cache alone.
    let r = run_with(&url, &[]);
    let section = format!(
        "state changes\n  {} (Token)\n    \
         Token._balances[{}]: 10000000000000000000 [1e19] → 9999999999999999993 [9.9999e18]\n    \
         Token._balances[{}]: 0 → 7\n",
        token.to_checksum(None),
        accounts[0].to_checksum(None),
        accounts[1].to_checksum(None)
    );
    assert!(r.stdout.contains(&section), "{}", r.stdout);
    assert_eq!(hits.load(Ordering::SeqCst), asked);
    let _ = std::fs::remove_dir_all(&cache);
    // Verified without a layout: raw slots, each saying why.
    let (url, _) = serve(Some(sourcify_token(&anvil, token, false)));
    let r = run_with(&url, &["--json", "--decode"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let changes = v["stateChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{v}");
    for c in changes {
        assert_eq!(c["contract"], "Token", "{c}");
        assert_eq!(c["raw"], "the artifact Token has no storageLayout", "{c}");
    }
    let _ = std::fs::remove_dir_all(&cache);
    // Not verified: geth's tree and names as before, no state changes.
    let (url, hits) = serve(None);
    let r = run_with(&url, &["--json", "--decode"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v.get("stateChanges").is_none(), "{v}");
    assert!(hits.load(Ordering::SeqCst) >= 1);
    let r = run_with(&url, &[]);
    assert!(!r.stdout.contains("state changes"), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&cache);
}

/// A malformed `storageLayout` (a type it names is missing): one note, every slot raw with
/// its words, the run otherwise as without it.
#[test]
fn a_malformed_layout_gives_one_note_and_raw_slots() {
    let (anvil, accounts, token, h) = token_transfer();
    let mut out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    out["contracts"]["State.sol"]["Token"]["storageLayout"]["types"]
        .as_object_mut()
        .unwrap()
        .remove("t_uint256");
    let dir = std::env::temp_dir().join(format!("chaintrace-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("solc-output.json");
    std::fs::write(&bad, out.to_string()).unwrap();
    let hash = format!("{h:?}");
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        bad.to_str().unwrap(),
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .matches("storageLayout of Token is malformed")
            .count(),
        1,
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let changes = v["stateChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{v}");
    let me = accounts[0];
    let slot = entry(&w_addr(me), U256::ZERO);
    assert_eq!(
        changes[0],
        json!({
            "address": token.to_checksum(None), "contract": "Token", "variable": null,
            "keyPath": [], "type": null, "slot": slot_hex(slot), "offset": null,
            "before": format!("{:#066x}", e18(10)), "after": format!("{:#066x}", e18(10) - U256::from(7)),
            "raw": "the storageLayout of Token is malformed",
        })
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A build without `storageLayout` (Foundry's default artifacts): the layout compiled from the
/// artifact's own solc metadata by a solc of its version names the same variables as the
/// build's own layout would, with one note; without that solc, the layout computed from the
/// build's AST does; without either, raw slots and a note saying why.
#[test]
fn a_build_without_layouts_is_named_by_layouts_compiled_from_its_metadata_or_its_ast() {
    let (anvil, _, _, h) = token_transfer();
    let hash = format!("{h:?}");
    let want = state_changes(&anvil, &hash);
    assert_eq!(want.as_array().unwrap().len(), 2, "{want}");

    // The build without layouts, beside its sources (as in its project).
    let mut out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    for per_file in out["contracts"].as_object_mut().unwrap().values_mut() {
        for c in per_file.as_object_mut().unwrap().values_mut() {
            let c = c.as_object_mut().unwrap();
            c.remove("storageLayout");
            c.remove("transientStorageLayout");
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("chaintrace-nolayout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let oz = root.join("tests/contracts/oz");
    for name in ["State.sol", "@openzeppelin"] {
        std::os::unix::fs::symlink(oz.join(name), dir.join(name)).unwrap();
    }
    let stripped = dir.join("solc-output.json");
    std::fs::write(&stripped, out.to_string()).unwrap();
    // solc-js 0.8.30 (the build's compiler) behind the `solc` stand-in.
    let solc_dir = dir.join("solc-0.8.30");
    std::fs::create_dir_all(&solc_dir).unwrap();
    let js = root.join(".tools/js/node_modules");
    assert!(
        js.join("solc/package.json").is_file(),
        "{} lacks solc-js: run scripts/install-test-tools.sh",
        js.display()
    );
    std::os::unix::fs::symlink(&js, solc_dir.join("node_modules")).unwrap();
    let solc = solc_dir.join("solc");
    std::fs::copy(root.join("scripts/solc-standin.js"), &solc).unwrap();
    std::fs::set_permissions(&solc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let tx = |extra: &[&str]| {
        let mut args = vec![
            "tx",
            &hash,
            "--rpc-url",
            anvil.url(),
            "--abi",
            stripped.to_str().unwrap(),
            "--no-project",
            "--json",
            "--decode",
        ];
        args.extend(extra);
        run::cmd(&args)
            .no_cache()
            .env("HOME", dir.to_str().unwrap())
            .env("XDG_CACHE_HOME", dir.join(".cache").to_str().unwrap())
            .env("PATH", "/nonexistent")
            .env_remove("CHAINTRACE_SOLC")
    };
    let r = tx(&["--solc", solc.to_str().unwrap()])
        .env("PATH", &std::env::var("PATH").unwrap())
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .matches("the build has no storageLayout for Token: compiled from its metadata with")
            .count(),
        1,
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["stateChanges"], want);

    // With a cache directory, the compiled layout is kept: the next run needs no compiler.
    let kept = dir.join("cache");
    let cached = |extra: &[&str]| {
        tx(extra)
            .env_remove("CHAINTRACE_NO_CACHE")
            .env("CHAINTRACE_CACHE_DIR", kept.to_str().unwrap())
    };
    let r = cached(&["--solc", solc.to_str().unwrap()])
        .env("PATH", &std::env::var("PATH").unwrap())
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("compiled from its metadata with"),
        "{}",
        r.stderr
    );
    let files = std::fs::read_dir(kept.join("layouts")).unwrap().count();
    assert_eq!(files, 1);
    let r = cached(&[]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the build has no storageLayout for Token: compiled from its metadata by an earlier run"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["stateChanges"], want);

    // No solc 0.8.30 anywhere: the layout computed from the build's AST by solc's rules names
    // the same variables.
    let r = tx(&[]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.starts_with(
                "note: the build has no storageLayout for Token, and none was compiled: no solc 0.8.30 was found"
            ) && l.ends_with("; computed from its AST by solc's rules"))
            .count(),
        1,
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["stateChanges"], want);

    // Nor an AST: raw slots, and why.
    for s in out["sources"].as_object_mut().unwrap().values_mut() {
        s.as_object_mut().unwrap().remove("ast");
    }
    std::fs::write(&stripped, out.to_string()).unwrap();
    let r = tx(&[]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .matches("the build has no storageLayout for Token, and none was compiled: no solc 0.8.30 was found")
            .count(),
        1,
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("computed from its AST"), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let changes = v["stateChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{v}");
    for c in changes {
        assert_eq!(c["variable"], Value::Null, "{c}");
        assert_eq!(c["raw"], "the artifact Token has no storageLayout", "{c}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Every kind of value read from its own bytes: a packed slot split into its variables, an enum
/// by member name (from the build's AST), a signed integer, a bytes4, a string in place, a
/// mapping by string to a packed struct, a dynamic array's length and packed element.
#[test]
fn values_are_decoded_by_type_from_their_own_bytes() {
    let anvil = Anvil::start();
    let me = anvil.sender();
    let registry = anvil.deploy(&creation("Registry"));
    let data = cast(&[
        "calldata",
        "update(uint8,int24,bytes4,string,string,uint128,int64)",
        "1",
        "-60",
        "0xdeadbeef",
        "Registry of things",
        "alice",
        "1000",
        "-5",
    ]);
    let (h, r) = anvil.send_and_wait(json!({"to": registry, "data": data}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let got = state_changes(&anvil, &hash);
    let entry_slot = entry(b"alice", U256::from(2));
    let marks = U256::from_be_bytes(keccak256(U256::from(3).to_be_bytes::<32>()).0);
    let me_s = me.to_checksum(None);
    let c = |slot: U256,
             variable: &str,
             keys: &[&str],
             ty: &str,
             offset: u64,
             before: &str,
             after: &str,
             name: &str| {
        json!({
            "address": registry.to_checksum(None), "contract": "Registry", "variable": variable,
            "keyPath": keys, "type": ty, "slot": slot_hex(slot), "offset": offset,
            "before": before, "after": after, "name": name,
        })
    };
    let zero = Address::ZERO.to_checksum(None);
    let mut length = c(
        U256::from(3),
        "marks",
        &[],
        "uint8[]",
        0,
        "0",
        "1",
        "marks.length",
    );
    length["part"] = json!("length");
    assert_eq!(
        got,
        json!([
            c(
                U256::ZERO,
                "owner",
                &[],
                "address",
                0,
                &zero,
                &me_s,
                "owner"
            ),
            c(
                U256::ZERO,
                "status",
                &[],
                "enum Registry.Status",
                20,
                "Status.Unset",
                "Status.Active",
                "status"
            ),
            c(U256::ZERO, "open", &[], "bool", 21, "false", "true", "open"),
            c(U256::ZERO, "tick", &[], "int24", 22, "0", "-60", "tick"),
            c(
                U256::ZERO,
                "tag",
                &[],
                "bytes4",
                25,
                "0x00000000",
                "0xdeadbeef",
                "tag"
            ),
            c(
                U256::from(1),
                "title",
                &[],
                "string",
                0,
                "\"\"",
                "\"Registry of things\"",
                "title"
            ),
            c(
                entry_slot,
                "entries",
                &["\"alice\"", "amount"],
                "uint128",
                0,
                "0",
                "1000",
                "entries[\"alice\"].amount"
            ),
            c(
                entry_slot,
                "entries",
                &["\"alice\"", "delta"],
                "int64",
                16,
                "0",
                "-5",
                "entries[\"alice\"].delta"
            ),
            c(
                entry_slot,
                "entries",
                &["\"alice\"", "live"],
                "bool",
                24,
                "false",
                "true",
                "entries[\"alice\"].live"
            ),
            length,
            c(marks, "marks", &["0"], "uint8", 0, "0", "232", "marks[0]"),
        ])
    );
    // The getters agree at the transaction's block.
    let block = block_of(&anvil, &hash).to_string();
    let call = |sig: &str, args: &[&str]| {
        let reg = registry.to_checksum(None);
        let mut a = vec!["call", reg.as_str(), sig];
        a.extend(args);
        a.extend(["--block", &block, "--rpc-url", anvil.url()]);
        cast(&a)
    };
    assert_eq!(call("owner()(address)", &[]), me_s);
    assert_eq!(call("status()(uint8)", &[]), "1");
    assert_eq!(call("tick()(int24)", &[]), "-60");
    assert_eq!(call("tag()(bytes4)", &[]), "0xdeadbeef");
    assert_eq!(call("title()(string)", &[]), "\"Registry of things\"");
    assert_eq!(
        call("entries(string)(uint128,int64,bool)", &["alice"])
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["1000", "-5", "true"]
    );
    assert_eq!(call("marks(uint256)(uint8)", &["0"]), "232");
}

/// `block` names each transaction's changes as `tx` does: `stateChanges` per item of
/// `--json --decode` (after geth's result and its names), the "state changes" section after
/// each tree; `--code-override` adds what ends differently, by variable, mined → patched.
#[test]
fn a_block_names_each_transactions_changes_and_a_what_if_diffs_them() {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let (me, to) = (accounts[0], accounts[1]);
    let supply = e18(10_000);
    let token = anvil.deploy(&with_ctor_args(&creation("Token"), &[supply.to_be_bytes()]));
    let data = calldata(
        "transfer(address,uint256)",
        &[w_addr(to), e18(200).to_be_bytes()],
    );
    let (h, r) = anvil.send_and_wait(json!({"from": me, "to": token, "data": hex0x(&data)}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let block = block_of(&anvil, &hash);
    let word = |a: Address| w_addr(a).to_vec();
    let expected = json!([
        change(
            token,
            "_balances",
            &[me],
            entry(&word(me), U256::ZERO),
            supply,
            e18(9_800)
        ),
        change(
            token,
            "_balances",
            &[to],
            entry(&word(to), U256::ZERO),
            U256::ZERO,
            e18(200)
        ),
    ]);
    let args = |extra: &[&str]| {
        let b = block.to_string();
        let mut a = vec![
            "block".to_string(),
            b,
            "--rpc-url".into(),
            anvil.url().to_string(),
            "--abi".into(),
            OUT.into(),
            "--no-project".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run_with = |extra: &[&str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run::cmd(&a).no_cache().run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    };
    let r = run_with(&["--json", "--decode"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["txHash"], json!(hash), "{v}");
    assert!(v[0]["result"]["calls"].is_null() && v[0]["result"]["to"].is_string());
    assert!(v[0]["decoded"].is_array(), "{v}");
    assert_eq!(v[0]["stateChanges"], expected);
    same_as_cast_storage(&anvil, &v[0]["stateChanges"], block);
    // Without --decode, geth's shape alone.
    let plain = run_with(&["--json"]);
    let p: Value = serde_json::from_str(&plain.stdout).unwrap();
    assert_eq!(p[0].as_object().unwrap().len(), 2, "{p}");
    assert_eq!(p[0]["result"], v[0]["result"]);
    // The human view: a section after the transaction's tree.
    let r = run_with(&[]);
    let (me_s, to_s) = (me.to_checksum(None), to.to_checksum(None));
    let section = format!(
        "state changes\n  {} (Token)\n    \
         Token._balances[{me_s}]: 10000000000000000000000 [1e22] → 9800000000000000000000 [9.8e21]\n    \
         Token._balances[{to_s}]: 0 → 200000000000000000000 [2e20]\n",
        token.to_checksum(None)
    );
    assert!(r.stdout.contains(&section), "{}", r.stdout);
    // What-if: the token's code replaced by the Registry's (no `transfer`: the patched run
    // reverts), every balance the mined run moved ends where it began.
    let registry = format!("{}=0x{}", token.to_checksum(None), runtime("Registry"));
    for cmd in ["block", "tx"] {
        let target = if cmd == "block" {
            block.to_string()
        } else {
            hash.clone()
        };
        let r = run::cmd(&[
            cmd,
            &target,
            "--rpc-url",
            anvil.url(),
            "--abi",
            OUT,
            "--no-project",
            "--code-override",
            &registry,
        ])
        .no_cache()
        .run();
        let diff = r
            .stdout
            .split("state after: mined → patched\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd}: {}\n{}", r.stdout, r.stderr));
        let want = format!(
            "  {} (Token)\n      \
             Token._balances[{me_s}]: 9800000000000000000000 [9.8e21] → 10000000000000000000000 [1e22]\n      \
             Token._balances[{to_s}]: 200000000000000000000 [2e20] → 0\n",
            token.to_checksum(None)
        );
        assert!(diff.contains(&want), "{cmd}: {diff}");
    }
}

fn runtime(name: &str) -> String {
    let out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    out["contracts"]["State.sol"][name]["evm"]["deployedBytecode"]["object"]
        .as_str()
        .unwrap()
        .to_string()
}

const UPGRADEABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/oz/solc-output-upgradeable.json"
);

/// An OpenZeppelin Contracts Upgradeable 5.4.0 ERC20 (`tests/contracts/oz/Upgradeable.sol`:
/// its balances in the ERC-7201 namespace `openzeppelin.storage.ERC20`, which solc's
/// `storageLayout` does not list) behind OpenZeppelin's `ERC1967Proxy`: a transfer through
/// the proxy names the proxy's storage by the implementation's variables, the namespace's
/// members `$ERC20Storage._balances[…]` beside its own `transfers`; `access` names the
/// EIP-1967 implementation slot the proxy read. Every value checked against `cast storage`
/// at the proxy and the token's getters.
#[test]
fn a_proxys_storage_is_named_by_its_implementations_namespaces() {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let (me, to) = (accounts[0], accounts[1]);
    let out: Value = serde_json::from_str(&std::fs::read_to_string(UPGRADEABLE).unwrap()).unwrap();
    let code = |file: &str, name: &str| {
        out["contracts"][file][name]["evm"]["bytecode"]["object"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let implementation = anvil.deploy(&code("Upgradeable.sol", "UpgradeableToken"));
    let supply = e18(1_000);
    let init = cast(&["calldata", "initialize(uint256)", &supply.to_string()]);
    let ctor = cast(&[
        "abi-encode",
        "f(address,bytes)",
        &implementation.to_checksum(None),
        &init,
    ]);
    let proxy = anvil.deploy(&format!(
        "{}{}",
        code(
            "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol",
            "ERC1967Proxy"
        ),
        ctor.trim_start_matches("0x")
    ));
    let data = calldata("transfer(address,uint256)", &[w_addr(to), w_u(7)]);
    let (h, r) = anvil.send_and_wait(json!({"from": me, "to": proxy, "data": hex0x(&data)}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        UPGRADEABLE,
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    let got = &got["stateChanges"];
    // keccak256(abi.encode(uint256(keccak256("openzeppelin.storage.ERC20")) - 1)) & ~0xff
    let ns = U256::from_str_radix(
        "52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00",
        16,
    )
    .unwrap();
    let balance = |a: Address| entry(&w_addr(a), ns);
    let named = |slot: U256, variable: &str, keys: Vec<String>, name: String, b: U256, a: U256| {
        json!({
            "address": proxy.to_checksum(None), "contract": "UpgradeableToken",
            "variable": variable, "keyPath": keys, "type": "uint256", "slot": slot_hex(slot),
            "offset": 0, "before": b.to_string(), "after": a.to_string(), "name": name,
        })
    };
    let bal = |a: Address, b: U256, after: U256| {
        let k = a.to_checksum(None);
        named(
            balance(a),
            "$ERC20Storage",
            vec!["_balances".into(), k.clone()],
            format!("$ERC20Storage._balances[{k}]"),
            b,
            after,
        )
    };
    assert_eq!(
        *got,
        json!([
            named(
                U256::ZERO,
                "transfers",
                vec![],
                "transfers".into(),
                U256::ZERO,
                U256::from(1)
            ),
            bal(me, supply, supply - U256::from(7)),
            bal(to, U256::ZERO, U256::from(7)),
        ])
    );
    let block = block_of(&anvil, &hash);
    same_as_cast_storage(&anvil, got, block);
    let b = block.to_string();
    for (a, want) in [(me, supply - U256::from(7)), (to, U256::from(7))] {
        let shown = cast(&[
            "call",
            &proxy.to_checksum(None),
            "balanceOf(address)(uint256)",
            &a.to_checksum(None),
            "--block",
            &b,
            "--rpc-url",
            anvil.url(),
        ]);
        assert_eq!(shown.split_whitespace().next().unwrap(), want.to_string());
    }
    // `access`: reads named too — the implementation slot the proxy forwarded by, the
    // namespace's members — with values decoded.
    let r = run::cmd(&[
        "access",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        UPGRADEABLE,
        "--no-project",
        "--json",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Value = serde_json::from_str(&r.stdout).unwrap();
    let row = |slot: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["slot"].as_str() == Some(slot))
            .unwrap_or_else(|| panic!("{slot}: {rows}"))
            .clone()
    };
    let imp = row("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc");
    assert_eq!(
        imp["variables"],
        json!([{
            "address": proxy.to_checksum(None), "contract": "UpgradeableToken",
            "variable": "eip1967.proxy.implementation", "keyPath": [], "type": "address",
            "slot": "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc",
            "offset": 0, "before": implementation.to_checksum(None),
            "after": implementation.to_checksum(None), "name": "eip1967.proxy.implementation",
        }]),
        "{imp}"
    );
    assert_eq!(
        imp["after"],
        json!(format!(
            "{:#x}",
            U256::from_be_slice(implementation.as_slice())
        ))
    );
    let mine = row(&format!("{:#x}", balance(me)));
    assert_eq!(
        mine["variables"][0]["name"],
        json!(format!("$ERC20Storage._balances[{}]", me.to_checksum(None)))
    );
    // The human table: the slot's name and its decoded values.
    let r = run::cmd(&[
        "access",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        UPGRADEABLE,
        "--no-project",
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc eip1967.proxy.implementation"
        ) && r.stdout.contains(&implementation.to_checksum(None)),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "$ERC20Storage._balances[{}]",
            to.to_checksum(None)
        )),
        "{}",
        r.stdout
    );
}

/// `tx --tracer prestateTracer --tracer-config '{"diffMode":true}'` for people: each storage
/// slot of the diff named by variable, its values decoded (the packed slot split into its
/// variables), the slot words and account fields as geth's diff gives them; `--json` stays
/// geth's diff, the same with or without artifacts.
#[test]
fn a_prestate_diff_names_each_slot_by_variable() {
    let anvil = Anvil::start();
    let me = anvil.sender();
    let registry = anvil.deploy(&creation("Registry"));
    let data = cast(&[
        "calldata",
        "update(uint8,int24,bytes4,string,string,uint128,int64)",
        "2",
        "-7",
        "0xcafe0001",
        "a title",
        "bob",
        "42",
        "3",
    ]);
    let (h, r) = anvil.send_and_wait(json!({"to": registry, "data": data}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let diff = [
        "--tracer",
        "prestateTracer",
        "--tracer-config",
        r#"{"diffMode":true}"#,
    ];
    let run_with = |extra: &[&str]| {
        let mut a = vec![
            "tx",
            hash.as_str(),
            "--rpc-url",
            anvil.url(),
            "--no-project",
        ];
        a.extend(diff);
        a.extend(extra);
        let r = run::cmd(&a).no_cache().run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let text = run_with(&["--abi", OUT]);
    let json_named = run_with(&["--abi", OUT, "--json"]);
    assert_eq!(json_named, run_with(&["--json"]));
    let geth: Value = serde_json::from_str(&json_named).unwrap();
    let post = &geth["post"][registry.to_checksum(None).to_lowercase()]["storage"];
    assert!(post.is_object(), "{geth}");
    let block = block_of(&anvil, &hash);
    let entry_slot = entry(b"bob", U256::from(2));
    let marks = U256::from_be_bytes(keccak256(U256::from(3).to_be_bytes::<32>()).0);
    let me_s = me.to_checksum(None);
    let reg_s = registry.to_checksum(None);
    let zero = Address::ZERO.to_checksum(None);
    // Every slot the diff lists, with the word cast storage reads after the transaction.
    for (slot, _) in post.as_object().unwrap() {
        let w = cast(&[
            "storage",
            &registry.to_checksum(None),
            slot,
            "--block",
            &block.to_string(),
            "--rpc-url",
            anvil.url(),
        ]);
        assert_eq!(post[slot].as_str().unwrap(), w, "{slot}");
        assert!(text.contains(&format!("    {slot}")), "{slot}: {text}");
    }
    let z = |s: U256| format!("{:?}", alloy_primitives::B256::from(s));
    let want = format!(
        "  {reg} (Registry)\n    \
         {s0}\n      \
         owner: {zero} → {me_s}\n      \
         status: Status.Unset → Status.Paused\n      \
         open: false → true\n      \
         tick: 0 → -7\n      \
         tag: 0x00000000 → 0xcafe0001\n    \
         {s1} title: \"\" → \"a title\"\n    \
         {s3} marks.length: 0 → 1\n",
        reg = registry.to_checksum(None),
        s0 = z(U256::ZERO),
        s1 = z(U256::from(1)),
        s3 = z(U256::from(3)),
    );
    assert!(text.contains(&want), "{text}");
    let entry_lines = format!(
        "    {}\n      \
         entries[\"bob\"].amount: 0 → 42\n      \
         entries[\"bob\"].delta: 0 → 3\n      \
         entries[\"bob\"].live: false → true\n",
        z(entry_slot)
    );
    assert!(text.contains(&entry_lines), "{text}");
    assert!(
        text.contains(&format!("    {} marks[0]: 0 → 42\n", z(marks))),
        "{text}"
    );
    // `call` of the same input on the block before, and `block` for each of its transactions,
    // name their diffs the same way.
    let shows_the_named_diff = |command: &[&str]| {
        let mut a = command.to_vec();
        a.extend(["--rpc-url", anvil.url(), "--no-project", "--abi", OUT]);
        a.extend(diff);
        let r = run::cmd(&a).no_cache().run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        for part in [&want, &entry_lines] {
            assert!(r.stdout.contains(part.as_str()), "{}", r.stdout);
        }
    };
    let before = (block - 1).to_string();
    shows_the_named_diff(&[
        "call", "--from", &me_s, "--to", &reg_s, "--data", &data, "--block", &before,
    ]);
    shows_the_named_diff(&["block", &block.to_string()]);
    // The getters agree at the transaction's block.
    let b = block.to_string();
    let call = |sig: &str, args: &[&str]| {
        let reg = registry.to_checksum(None);
        let mut a = vec!["call", reg.as_str(), sig];
        a.extend(args);
        a.extend(["--block", &b, "--rpc-url", anvil.url()]);
        cast(&a)
    };
    assert_eq!(call("status()(uint8)", &[]), "2");
    assert_eq!(call("tick()(int24)", &[]), "-7");
    assert_eq!(call("tag()(bytes4)", &[]), "0xcafe0001");
    assert_eq!(call("title()(string)", &[]), "\"a title\"");
    assert_eq!(
        call("entries(string)(uint128,int64,bool)", &["bob"])
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["42", "3", "true"]
    );
    // The sender's account: its nonce and balance as the diff gives them.
    let sender = &geth["post"][me_s.to_lowercase()];
    let nonce = sender["nonce"].as_u64().unwrap();
    assert!(
        text.contains(&format!("    nonce: {} → {nonce}\n", nonce - 1)),
        "{text}"
    );
    // Without artifacts the same view, every slot raw.
    let bare = run_with(&[]);
    assert!(
        bare.contains(&format!("    {}: {} → ", z(U256::ZERO), z(U256::ZERO))),
        "{bare}"
    );
    assert!(!bare.contains("owner"), "{bare}");
}

/// The debugger's storage by variable (the adapter's Storage scope, the TUI's storage pane):
/// at the last step of an ERC20 transfer, the token's balances by holder, keys exact, each
/// from the value read to the value written; the same numbers `cast storage` reads at the
/// blocks before and after.
#[test]
fn the_debuggers_storage_is_named_by_variable() {
    let anvil = Anvil::start();
    let accounts = anvil.accounts();
    let (me, to) = (accounts[0], accounts[1]);
    let supply = e18(10_000);
    let token = anvil.deploy(&with_ctor_args(&creation("Token"), &[supply.to_be_bytes()]));
    let (h, r) = anvil.send_and_wait(json!({"from": me, "to": token, "data": hex0x(&calldata(
        "transfer(address,uint256)",
        &[w_addr(to), e18(200).to_be_bytes()],
    ))}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let block = block_of(&anvil, &hash);
    let stored = |holder: Address, at: u64| {
        let slot = entry(&w_addr(holder), U256::ZERO);
        let word = cast(&[
            "storage",
            &token.to_checksum(None),
            &slot_hex(slot),
            "--rpc-url",
            anvil.url(),
            "--block",
            &at.to_string(),
        ]);
        U256::from_str_radix(word.trim_start_matches("0x"), 16).unwrap()
    };

    let mut c = crate::dap_client::Client::start();
    c.request("initialize", json!({"adapterID": "chaintrace"}));
    let launch = c.request(
        "launch",
        json!({"tx": hash, "rpcUrl": anvil.url(), "abi": OUT, "stopOnEntry": true,
            "args": ["--no-project"]}),
    );
    assert_eq!(launch["success"], true, "{launch}");
    c.event("initialized");
    c.request("configurationDone", json!({}));
    c.event("stopped");
    c.run_to_last_step();
    let top = c.top_frame();
    let scopes = c.request("scopes", json!({"frameId": top["id"]}));
    let storage = scopes["body"]["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Storage")
        .unwrap()["variablesReference"]
        .clone();
    let vars =
        c.request("variables", json!({"variablesReference": storage}))["body"]["variables"].clone();
    let value_of = |holder: Address| {
        let name = format!("_balances[{}]", holder.to_checksum(None));
        vars.as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {vars}"))["value"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (from_before, from_after) = (stored(me, block - 1), stored(me, block));
    let (to_before, to_after) = (stored(to, block - 1), stored(to, block));
    assert_eq!((from_before, from_after), (supply, e18(9_800)));
    // `before → after`, each exact (its short form in brackets after it).
    let exact = |text: String| -> (String, String) {
        let (a, b) = text.split_once(" → ").unwrap();
        let first = |s: &str| s.split(' ').next().unwrap().to_string();
        (first(a), first(b))
    };
    assert_eq!(
        exact(value_of(me)),
        (from_before.to_string(), from_after.to_string()),
        "{vars}"
    );
    assert_eq!(
        exact(value_of(to)),
        (to_before.to_string(), to_after.to_string()),
        "{vars}"
    );
    c.request("disconnect", json!({}));
}

/// The change of variable `name` (`slot0.tick`, `balanceOf[0x…]`) at `addr`.
pub(crate) fn change_of<'a>(list: &'a Value, addr: Address, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["address"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case(&addr.to_string())
                && c["name"] == name
        })
        .unwrap_or_else(|| panic!("{addr} {name} not among {list:#}"))
}

/// Word `i` of a call's hex result.
pub(crate) fn word(hex: &str, i: usize) -> U256 {
    U256::from_str_radix(&hex[2 + 64 * i..2 + 64 * (i + 1)], 16).unwrap()
}

/// Every change named, and each integer's or bool's value the bytes of its slot now
/// (`eth_getStorageAt`, at its offset and width): how many were read back.
pub(crate) fn read_back(anvil: &Anvil, list: &Value) -> usize {
    let mut n = 0;
    for c in list.as_array().unwrap() {
        assert!(c["variable"].is_string(), "unnamed: {c}");
        let Some(offset) = c["offset"].as_u64() else {
            continue;
        };
        let stored = anvil.rpc(
            "eth_getStorageAt",
            json!([c["address"], c["slot"], "latest"]),
        );
        let stored =
            U256::from_str_radix(stored.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
        let ty = c["type"].as_str().unwrap();
        let bits = match ty {
            t if t.starts_with("uint") => t[4..].parse::<usize>().unwrap(),
            t if t.starts_with("int") => t[3..].parse::<usize>().unwrap(),
            "bool" => 8,
            _ => continue,
        };
        let raw = (stored >> (offset as usize * 8)) & ((U256::from(1) << bits) - U256::from(1));
        let want = if ty.starts_with("int") && raw.bit(bits - 1) {
            format!("-{}", (U256::from(1) << bits) - raw)
        } else if ty == "bool" {
            (raw == U256::from(1)).to_string()
        } else {
            raw.to_string()
        };
        assert_eq!(c["after"], want, "{c}");
        n += 1;
    }
    n
}
