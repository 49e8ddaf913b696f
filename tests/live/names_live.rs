//! Where names come from, one test per source, on the test anvil's contracts
//! (tests/contracts, compiled artifacts committed): `--abi FILE`, `--signatures FILE`, a Foundry
//! `out/` tree, a Hardhat `artifacts/` tree, the project around the working directory found
//! without flags, deployed code matched to artifacts, the bundled table, and verified ABIs from an
//! Etherscan-compatible API and Sourcify served by a loopback mock (then from the disk cache),
//! with a proxy followed to its implementation. `--json` stays free of names throughout.

use crate::{anvil, http, run};
use run::Run;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

fn chaintrace_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    run::cmd(args).no_cache().dir(dir).envs(env).run()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chaintrace-names-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn contracts() -> Value {
    anvil::artifacts()["contracts"].clone()
}

/// The revert of "revert custom error (nested, bubbled)" with Reverter's ABI:
/// `Custom(code: 48879, who: <Hub>, why: "custom error")`.
fn custom_error_text(s: &anvil::Scenario) -> String {
    format!(
        "Custom(code: 48879, who: {}, why: \"custom error\")",
        s.addr("Hub").to_checksum(None)
    )
}

fn nested_tx(s: &anvil::Scenario) -> String {
    format!("{:?}", s.tx("revert custom error (nested, bubbled)").hash)
}

/// Writes a Foundry `out/` tree (`out/<File>.sol/<Name>.json`, deployedBytecode as an object).
fn foundry_project(dir: &Path) {
    std::fs::write(dir.join("foundry.toml"), "[profile.default]\n").unwrap();
    for (name, c) in contracts().as_object().unwrap() {
        let file = if name == "Hub" {
            "Hub.sol"
        } else {
            "Helpers.sol"
        };
        let d = dir.join("out").join(file);
        std::fs::create_dir_all(&d).unwrap();
        let artifact = json!({
            "abi": c["abi"],
            "bytecode": {"object": c["bytecode"], "linkReferences": {}},
            "deployedBytecode": {"object": c["deployedBytecode"], "linkReferences": {},
                "immutableReferences": c["immutableReferences"]},
            "methodIdentifiers": c["methodIdentifiers"],
            "storageLayout": c["storageLayout"],
        });
        std::fs::write(d.join(format!("{name}.json")), artifact.to_string()).unwrap();
    }
    // Build info is not an artifact and must be skipped.
    std::fs::create_dir_all(dir.join("out/build-info")).unwrap();
    std::fs::write(dir.join("out/build-info/x.json"), "{\"id\": 1}").unwrap();
}

/// Writes a Hardhat project (`artifacts/contracts/<File>.sol/<Name>.json` + `.dbg.json`).
fn hardhat_project(dir: &Path) {
    std::fs::write(dir.join("hardhat.config.js"), "module.exports = {};\n").unwrap();
    for (name, c) in contracts().as_object().unwrap() {
        let d = dir.join("artifacts/contracts/Helpers.sol");
        std::fs::create_dir_all(&d).unwrap();
        let artifact = json!({
            "_format": "hh-sol-artifact-1", "contractName": name,
            "sourceName": "contracts/Helpers.sol", "abi": c["abi"],
            "bytecode": c["bytecode"], "deployedBytecode": c["deployedBytecode"],
            "linkReferences": {}, "deployedLinkReferences": {},
        });
        std::fs::write(d.join(format!("{name}.json")), artifact.to_string()).unwrap();
        std::fs::write(
            d.join(format!("{name}.dbg.json")),
            "{\"_format\":\"hh-sol-dbg-1\"}",
        )
        .unwrap();
    }
}

#[test]
fn names_from_files_trees_projects_and_the_bundled_table() {
    let s = anvil::scenario();
    let url = s.url.as_str();
    let hash = nested_tx(&s);
    let want = custom_error_text(&s);
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));

    // No names: the custom error is a selector.
    let plain = chaintrace_in(here, &["tx", &hash, "--rpc-url", url], &[]);
    assert_eq!(plain.code, 3, "{}", plain.stderr);
    assert!(
        plain.stdout.contains("custom error 0x1d65a307"),
        "{}",
        plain.stdout
    );
    assert!(
        plain.stdout.contains("0x2630edec"),
        "failNested unnamed: {}",
        plain.stdout
    );

    // --abi FILE: one Foundry-style artifact.
    let dir = tmp("file");
    let reverter = dir.join("Reverter.json");
    std::fs::write(
        &reverter,
        json!({"abi": contracts()["Reverter"]["abi"]}).to_string(),
    )
    .unwrap();
    let r = chaintrace_in(
        here,
        &[
            "tx",
            &hash,
            "--rpc-url",
            url,
            "--abi",
            reverter.to_str().unwrap(),
        ],
        &[],
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    assert!(r.stdout.contains("failCustom(code: 48879)"), "{}", r.stdout);

    // --signatures FILE: human-readable declarations.
    let sigs = dir.join("sigs.txt");
    std::fs::write(
        &sigs,
        "# Hub and Reverter\nfunction failNested(uint256 code)\nerror Custom(uint256 code, address who, string why)\n",
    )
    .unwrap();
    let r = chaintrace_in(
        here,
        &[
            "tx",
            &hash,
            "--rpc-url",
            url,
            "--signatures",
            sigs.to_str().unwrap(),
        ],
        &[],
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    assert!(r.stdout.contains("failNested(code: 48879)"), "{}", r.stdout);

    // A Foundry out/ tree given as --abi DIR, and the same project found from its directory.
    let foundry = tmp("foundry");
    foundry_project(&foundry);
    let out_dir = foundry.join("out");
    let r = chaintrace_in(
        here,
        &[
            "tx",
            &hash,
            "--rpc-url",
            url,
            "--abi",
            out_dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    assert!(r.stdout.contains("failNested(code: 48879)"), "{}", r.stdout);
    let nested = foundry.join("src/deeper");
    std::fs::create_dir_all(&nested).unwrap();
    let r = chaintrace_in(&nested, &["tx", &hash, "--rpc-url", url], &[]);
    assert!(
        r.stdout.contains(&want),
        "auto-discovered Foundry project: {}",
        r.stdout
    );
    // Matched contracts carry their contract name in the tree.
    assert!(
        r.stdout.contains("Hub failNested(code: 48879)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Reverter failCustom(code: 48879)"),
        "{}",
        r.stdout
    );
    let off = chaintrace_in(
        &nested,
        &["tx", &hash, "--rpc-url", url, "--no-project"],
        &[],
    );
    assert!(
        off.stdout.contains("custom error 0x1d65a307"),
        "{}",
        off.stdout
    );
    // --json stays geth's: no names anywhere.
    let j = chaintrace_in(&nested, &["tx", &hash, "--rpc-url", url, "--json"], &[]);
    let plain_json = chaintrace_in(
        here,
        &["tx", &hash, "--rpc-url", url, "--json", "--no-project"],
        &[],
    );
    assert_eq!(j.stdout, plain_json.stdout);
    assert!(!j.stdout.contains("Custom("));

    // A Hardhat project, auto-discovered.
    let hardhat = tmp("hardhat");
    hardhat_project(&hardhat);
    let r = chaintrace_in(&hardhat, &["tx", &hash, "--rpc-url", url], &[]);
    assert!(
        r.stdout.contains(&want),
        "auto-discovered Hardhat project: {}",
        r.stdout
    );

    // Gas tables name functions from the project too.
    let g = chaintrace_in(&foundry, &["gas", &hash, "--rpc-url", url], &[]);
    assert!(g.stdout.contains("failNested"), "{}", g.stdout);
    assert!(g.stdout.contains("failCustom"), "{}", g.stdout);
    let labelled = format!("{:?} Reverter", s.addr("Reverter"));
    assert!(g.stdout.contains(&labelled), "{}", g.stdout);

    // The bundled table: an ERC-20 call named without any ABI (Logger has no such function).
    let logger = format!("{:?}", s.addr("Logger"));
    let alice = format!("{:?}", s.addr("alice"));
    let r = chaintrace_in(
        here,
        &[
            "call",
            "--to",
            &logger,
            "--sig",
            "transfer(address,uint256)",
            &alice,
            "5",
            "--rpc-url",
            url,
        ],
        &[],
    );
    let expected = format!(
        "transfer(to: {}, amount: 5)",
        s.addr("alice").to_checksum(None)
    );
    assert!(r.stdout.contains(&expected), "{}", r.stdout);
}

#[test]
fn deployed_code_matches_its_artifact_and_no_other() {
    let s = anvil::scenario();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contracts/artifacts.json");
    let all = chaintrace::names::artifacts::load_file(&path).unwrap();
    assert!(all.len() >= 9);
    for name in [
        "Logger",
        "DelegateTarget",
        "Reverter",
        "Burner",
        "Sink",
        "Hub",
    ] {
        let code = s.anvil.rpc("eth_getCode", json!([s.addr(name), "latest"]));
        let code = alloy_primitives::hex::decode(code.as_str().unwrap()).unwrap();
        let matched: Vec<&str> = all
            .iter()
            .filter(|a| a.matches(&code))
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(matched, [name], "deployed {name}");
    }
}

/// A loopback explorer: `GET /api?…&action=getabi&address=<api_addr>` answers Etherscan-style,
/// `GET /v2/contract/<chain>/<src_addr>?fields=abi` Sourcify-style; everything else is "not
/// verified" / 404. Counts requests.
fn mock_explorer(
    api_addr: String,
    api_abi: Value,
    src_addr: String,
    src_abi: Value,
) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let url = http::serve(move |r: &http::Request| {
        counter.fetch_add(1, Ordering::SeqCst);
        let target = r.path.to_lowercase();
        let (status, body) = if target.starts_with("/api?")
            && target.contains(&format!("address={api_addr}"))
        {
            assert!(target.contains("apikey=test-key"), "{target}");
            (
                200,
                json!({"status": "1", "message": "OK", "result": api_abi.to_string()}),
            )
        } else if target.starts_with("/api?") {
            (
                200,
                json!({"status": "0", "message": "NOTOK", "result": "Contract source code not verified"}),
            )
        } else if target.starts_with("/v2/contract/") && target.contains(&src_addr) {
            (200, json!({"abi": src_abi, "match": "exact_match"}))
        } else {
            (404, json!({"customCode": "not_found"}))
        };
        http::Reply::Answer(status, body.to_string())
    });
    (url, hits)
}

/// The node from foundry.toml's `[rpc_endpoints]` and the explorer key from its `[etherscan]`
/// entry for the traced chain, both through `${VAR}` placeholders, as cast reads them; no
/// ETHERSCAN_API_KEY and no project artifacts, so the names are the explorer's.
#[test]
fn node_alias_and_explorer_key_come_from_foundry_toml() {
    let s = anvil::scenario();
    let c = contracts();
    let reverter = format!("{:#x}", s.addr("Reverter"));
    let hub = format!("{:#x}", s.addr("Hub"));
    let (mock, hits) = mock_explorer(
        reverter,
        c["Reverter"]["abi"].clone(),
        hub,
        c["Hub"]["abi"].clone(),
    );
    let dir = tmp("foundry-toml-keys");
    let chain = s.anvil.chain_id();
    std::fs::write(
        dir.join("foundry.toml"),
        format!(
            "[rpc_endpoints]\ndevnet = \"${{NODE_URL}}\"\n\n[etherscan]\n\
             dev = {{ key = \"${{DEV_EXPLORER_KEY}}\", url = \"{mock}/api\", chain = {chain} }}\n"
        ),
    )
    .unwrap();
    let hash = nested_tx(&s);
    let env = [
        ("NODE_URL", s.url.as_str()),
        // The mock explorer answers only this key.
        ("DEV_EXPLORER_KEY", "test-key"),
        ("HOME", dir.to_str().unwrap()),
    ];
    let r = chaintrace_in(&dir, &["tx", &hash, "--rpc-url", "devnet"], &env);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stdout.contains(&custom_error_text(&s)), "{}", r.stdout);
    assert!(
        r.stderr.contains("names: verified ABIs fetched for"),
        "{}",
        r.stderr
    );
    assert!(hits.load(Ordering::SeqCst) >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verified_abis_from_a_mock_explorer_and_sourcify_are_cached_and_proxies_followed() {
    let s = anvil::scenario();
    let url = s.url.as_str();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let c = contracts();
    let reverter = format!("{:#x}", s.addr("Reverter"));
    let hub = format!("{:#x}", s.addr("Hub"));
    let (mock, hits) = mock_explorer(
        reverter.clone(),
        c["Reverter"]["abi"].clone(),
        hub.clone(),
        c["Hub"]["abi"].clone(),
    );
    let cache = tmp("cache");
    let env = [
        ("ETHERSCAN_API_KEY", "test-key"),
        ("CHAINTRACE_NO_CACHE", ""),
        ("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap()),
    ];
    let api = format!("{mock}/api");
    let hash = nested_tx(&s);
    let args = [
        "tx",
        &hash,
        "--rpc-url",
        url,
        "--explorer-api",
        &api,
        "--sourcify-url",
        &mock,
    ];
    let r = chaintrace_in(here, &args, &env);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stdout.contains(&custom_error_text(&s)), "{}", r.stdout);
    assert!(
        r.stdout.contains("failNested(code: 48879)"),
        "Hub from Sourcify: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains("names: verified ABIs fetched for"),
        "{}",
        r.stderr
    );
    let first = hits.load(Ordering::SeqCst);
    assert!(first >= 2, "{first}");
    // On disk per chain and address; a second run asks nothing for them.
    let chain = s.anvil.chain_id().to_string();
    assert!(cache
        .join("abi")
        .join(&chain)
        .join(format!("{reverter}.json"))
        .is_file());
    assert!(cache
        .join("abi")
        .join(&chain)
        .join(format!("{hub}.json"))
        .is_file());
    let again = chaintrace_in(here, &args, &env);
    assert_eq!(again.stdout, r.stdout);
    // Only contracts that are not verified (none in this tree besides the two) are asked again.
    assert_eq!(hits.load(Ordering::SeqCst) - first, 0, "{}", again.stderr);

    // An explorer that does not answer never fails the trace, and the names it would have given
    // are said to be missing because the lookup failed, not because nothing is verified.
    let down = chaintrace_in(
        here,
        &[
            "tx",
            &hash,
            "--rpc-url",
            url,
            "--explorer-api",
            "http://127.0.0.1:1/api",
            "--no-project",
        ],
        &[("ETHERSCAN_API_KEY", "test-key")],
    );
    assert_eq!(down.code, 3, "{}", down.stderr);
    assert!(
        down.stdout.contains("custom error 0x1d65a307"),
        "{}",
        down.stdout
    );
    assert!(
        down.stderr
            .contains("warning: names: lookups failed (their names are missing, not absent): ")
            && down
                .stderr
                .contains(&format!("{reverter} (explorer: connection refused)")),
        "{}",
        down.stderr
    );
    assert!(!down.stderr.contains("test-key"), "{}", down.stderr);
    // An explorer answering an HTTP error, or a page that is not JSON, likewise.
    for (status, body, why) in [
        (503, "{\"message\":\"busy\"}", "explorer: HTTP 503"),
        (
            200,
            "<html>maintenance</html>",
            "explorer: HTTP 200, answer is not JSON",
        ),
    ] {
        let broken = http::serve(move |_| http::Reply::Answer(status, body.into()));
        let r = chaintrace_in(
            here,
            &[
                "tx",
                &hash,
                "--rpc-url",
                url,
                "--explorer-api",
                &format!("{broken}/api"),
                "--no-project",
            ],
            &[("ETHERSCAN_API_KEY", "test-key")],
        );
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{reverter} ({why}")),
            "{why}: {}",
            r.stderr
        );
    }

    // A proxy (EIP-1167 clone of Reverter, injected with a state override) is named by its
    // implementation's verified ABI: the clone itself is not verified anywhere.
    let clone = "0x00000000000000000000000000000000000c10e5";
    let code = format!(
        "0x363d3d373d3d3d363d73{}5af43d82803e903d91602b57fd5bf3",
        &reverter[2..]
    );
    let state = json!({ clone: {"code": code} }).to_string();
    let r = chaintrace_in(
        here,
        &[
            "call",
            "--to",
            clone,
            "--sig",
            "failCustom(uint256)",
            "7",
            "--state-override",
            &state,
            "--rpc-url",
            url,
            "--explorer-api",
            &api,
        ],
        &env,
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stdout.contains("failCustom(code: 7)"), "{}", r.stdout);
    assert!(
        r.stdout.matches("failCustom(code: 7)").count() >= 2,
        "proxy and implementation frames: {}",
        r.stdout
    );
    assert!(r.stdout.contains("Custom(code: 7"), "{}", r.stdout);
}

/// An ERC-20 (tests/contracts/Token.sol): the bundled table names its calls, events and the
/// ERC-6093 error without any ABI; its Foundry storage layout names balance slots in `access`.
#[test]
fn token_calls_errors_and_balance_slots_are_named() {
    let node = anvil::Anvil::start();
    let url = node.url().to_string();
    let accts = node.accounts();
    let (sender, alice) = (accts[0], accts[1]);
    let code = anvil::with_ctor_args(&anvil::creation_code("Token"), &[anvil::w_u(1000)]);
    let token = node.deploy(&code);
    let transfer = |amount: u128| {
        json!({"to": token, "gas": "0x30000", "data": anvil::hex0x(&anvil::calldata(
            "transfer(address,uint256)", &[anvil::w_addr(alice), anvil::w_u(amount)]))})
    };
    let (ok, _) = node.send_and_wait(transfer(5));
    let (bad, r) = node.send_and_wait(transfer(5000));
    assert_eq!(r["status"], "0x0");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (s, a) = (sender.to_checksum(None), alice.to_checksum(None));

    let r = chaintrace_in(here, &["tx", &format!("{ok:?}"), "--rpc-url", &url], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("transfer(to: {a}, amount: 5)")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("emit Transfer(from: {s}, to: {a}, value: 5)")),
        "{}",
        r.stdout
    );
    // --json --decode: geth's result untouched, names beside it.
    let plain = chaintrace_in(
        here,
        &["tx", &format!("{ok:?}"), "--rpc-url", &url, "--json"],
        &[],
    );
    let dec = chaintrace_in(
        here,
        &[
            "tx",
            &format!("{ok:?}"),
            "--rpc-url",
            &url,
            "--json",
            "--decode",
            "--tracer-config",
            r#"{"withLog":true}"#,
        ],
        &[],
    );
    assert_eq!(dec.code, 0, "{}", dec.stderr);
    let plain_logs = chaintrace_in(
        here,
        &[
            "tx",
            &format!("{ok:?}"),
            "--rpc-url",
            &url,
            "--json",
            "--tracer-config",
            r#"{"withLog":true}"#,
        ],
        &[],
    );
    assert!(
        dec.stdout
            .starts_with(&format!("{{\"result\":{}", plain_logs.stdout.trim_end())),
        "{}",
        dec.stdout
    );
    assert!(!plain.stdout.contains("decoded"));
    let v: Value = serde_json::from_str(&dec.stdout).unwrap();
    assert_eq!(v["decoded"][0]["frame"], json!([]));
    assert_eq!(
        v["decoded"][0]["call"],
        json!(format!("transfer(to: {a}, amount: 5)"))
    );
    assert_eq!(
        v["decoded"][0]["logs"][0],
        json!(format!("Transfer(from: {s}, to: {a}, value: 5)"))
    );
    let r = chaintrace_in(here, &["tx", &format!("{bad:?}"), "--rpc-url", &url], &[]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let want = format!("ERC20InsufficientBalance(sender: {s}, balance: 995, needed: 5000)");
    assert!(r.stdout.contains(&want), "{}", r.stdout);

    // `access` inside a Foundry project whose artifacts carry storage layouts.
    let project = tmp("layout");
    foundry_project(&project);
    let r = chaintrace_in(
        &project,
        &["access", &format!("{ok:?}"), "--rpc-url", &url],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("balanceOf[{s}]")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("balanceOf[{a}]")),
        "{}",
        r.stdout
    );
    // Without the project the slots are bare; --json never carries names.
    let bare = chaintrace_in(
        &project,
        &[
            "access",
            &format!("{ok:?}"),
            "--rpc-url",
            &url,
            "--no-project",
        ],
        &[],
    );
    assert!(!bare.stdout.contains("balanceOf["), "{}", bare.stdout);
    // --json: the same rows as without names, each slot a layout names with its `variables`
    // beside them (issue 44); without the project, none.
    let ok_text = format!("{ok:?}");
    let json_rows = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["access", &ok_text, "--rpc-url", &url, "--json"];
        args.extend_from_slice(extra);
        serde_json::from_str(&chaintrace_in(&project, &args, &[]).stdout).unwrap()
    };
    let named = json_rows(&[]);
    let plain = json_rows(&["--no-project"]);
    assert!(!plain.to_string().contains("variables"), "{plain}");
    let mut stripped = named.clone();
    for row in stripped.as_array_mut().unwrap() {
        row.as_object_mut().unwrap().remove("variables");
    }
    assert_eq!(stripped, plain);
    assert!(
        named.to_string().contains("\"name\":\"balanceOf["),
        "{named}"
    );
}

/// Name sources that cannot be read are bad input (exit 1, one line), before any replay.
#[test]
fn unreadable_name_sources_are_bad_input() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tmp("bad");
    let not_abi = dir.join("not-abi.json");
    std::fs::write(&not_abi, "{\"hello\": 1}").unwrap();
    let bad_sigs = dir.join("sigs.txt");
    std::fs::write(
        &bad_sigs,
        "transfer(address,uint256)\nthis is not a declaration\n",
    )
    .unwrap();
    let fixture = "fixtures/reverted-nested.json";
    for (flag, path, needle) in [
        ("--abi", "missing.json", "cannot read missing.json"),
        ("--abi", not_abi.to_str().unwrap(), "not an ABI"),
        ("--signatures", bad_sigs.to_str().unwrap(), "line 2"),
        ("--signatures", "missing.txt", "cannot read missing.txt"),
    ] {
        let r = chaintrace_in(here, &["tx", "--fixture", fixture, flag, path], &[]);
        assert_eq!(r.code, 1, "{flag} {path}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{flag} {path}: {}", r.stderr);
        assert!(r.stdout.is_empty());
        assert!(!r.stderr.contains("panicked"));
    }
    // The same fixture with a good --signatures file traces as usual.
    let ok = dir.join("ok.txt");
    std::fs::write(&ok, "error Custom(uint256 code)\n").unwrap();
    let r = chaintrace_in(
        here,
        &[
            "tx",
            "--fixture",
            fixture,
            "--signatures",
            ok.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
}

/// A loopback signature database answering `/signature-database/v1/lookup` in the shape
/// Sourcify's 4byte service documents (services/4byte/src/openapi.yaml; openchain-compatible:
/// `null` for a function nothing is known for, `[]` for an event), from `known` (hash →
/// names), counting requests and keeping their targets.
fn mock_signature_db(
    known: Vec<(String, Vec<&'static str>)>,
) -> (String, Arc<AtomicUsize>, Arc<std::sync::Mutex<Vec<String>>>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (counter, targets) = (hits.clone(), seen.clone());
    let url = http::serve(move |r: &http::Request| {
        counter.fetch_add(1, Ordering::SeqCst);
        targets.lock().unwrap().push(r.path.clone());
        let Some(query) = r.path.strip_prefix("/signature-database/v1/lookup?") else {
            return http::Reply::Answer(404, "{}".into());
        };
        let mut result = json!({"function": {}, "event": {}});
        for pair in query.split('&') {
            let Some((space, list)) = pair.split_once('=') else {
                continue;
            };
            if space != "function" && space != "event" {
                continue;
            }
            for h in list.split(',') {
                let names = known.iter().find(|(k, _)| k.eq_ignore_ascii_case(h));
                let answer = match (names, space) {
                    (Some((_, ns)), _) => {
                        let mut items: Vec<Value> = ns
                            .iter()
                            .map(|n| json!({"name": n, "filtered": false, "hasVerifiedContract": true}))
                            .collect();
                        // Junk the database filters out must never be shown.
                        items.push(json!({"name": "junk_a1b2c3(uint8)", "filtered": true}));
                        Value::Array(items)
                    }
                    (None, "function") => Value::Null,
                    (None, _) => json!([]),
                };
                result[space][h] = answer;
            }
        }
        http::Reply::Answer(200, json!({"ok": true, "result": result}).to_string())
    });
    (url, hits, seen)
}

#[test]
fn unverified_errors_and_events_are_named_from_a_mock_signature_database_once_per_run() {
    let s = anvil::scenario();
    let url = s.url.as_str();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ping = format!(
        "{:?}",
        alloy_primitives::keccak256("Ping(address,uint256,bytes32)")
    );
    let (mock, hits, seen) = mock_signature_db(vec![
        ("0x1d65a307".into(), vec!["Custom(uint256,address,string)"]),
        ("0x2630edec".into(), vec!["failNested(uint256)"]),
        (ping, vec!["Ping(address,uint256,bytes32)"]),
    ]);
    let cache = tmp("sigdb");
    let env = [
        ("CHAINTRACE_NO_CACHE", ""),
        ("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap()),
        ("CHAINTRACE_SIGNATURE_DB_URL", mock.as_str()),
    ];
    let hash = nested_tx(&s);
    let hub = s.addr("Hub").to_checksum(None);
    let want = format!("Custom(48879, {hub}, \"custom error\")");

    // Without opt-in: no request, the custom error is a selector.
    let off = chaintrace_in(here, &["tx", &hash, "--rpc-url", url, "--no-project"], &env);
    assert_eq!(off.code, 3, "{}", off.stderr);
    assert!(
        off.stdout.contains("custom error 0x1d65a307"),
        "{}",
        off.stdout
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    // --lookup-signatures: exactly one request for the run; the custom error (no ABI given)
    // and the call are named, the filtered junk is not.
    let args = [
        "tx",
        &hash,
        "--rpc-url",
        url,
        "--no-project",
        "--lookup-signatures",
    ];
    let on = chaintrace_in(here, &args, &env);
    assert_eq!(on.code, 3, "{}", on.stderr);
    assert_eq!(hits.load(Ordering::SeqCst), 1, "{}", on.stderr);
    assert!(on.stdout.contains(&want), "{}", on.stdout);
    assert!(on.stdout.contains("failNested(48879)"), "{}", on.stdout);
    assert!(!on.stdout.contains("junk_a1b2c3"), "{}", on.stdout);
    let target = seen.lock().unwrap()[0].clone();
    assert!(target.contains("filter=true"), "{target}");
    assert!(
        target.contains("function=") && target.contains("0x1d65a307"),
        "{target}"
    );
    // Cached on disk per selector (negative answers too, for a while).
    assert!(cache.join("signatures/function/0x1d65a307.json").is_file());

    // A second run asks nothing: every answer is on disk.
    let again = chaintrace_in(here, &args, &env);
    assert_eq!(again.stdout, on.stdout);
    assert_eq!(hits.load(Ordering::SeqCst), 1, "{}", again.stderr);

    // The env opt-in, on a transaction with an event of a contract whose ABI is not given:
    // Ping (two indexed topics, then data) decodes; one more request, for this run.
    let logs = format!("{:?}", s.tx("LOG0..LOG4").hash);
    let mut env_on = env.to_vec();
    env_on.push(("CHAINTRACE_LOOKUP_SIGNATURES", "1"));
    let ev = chaintrace_in(
        here,
        &["tx", &logs, "--rpc-url", url, "--no-project"],
        &env_on,
    );
    assert_eq!(ev.code, 0, "{}", ev.stderr);
    assert_eq!(hits.load(Ordering::SeqCst), 2, "{}", ev.stderr);
    let sender = s.anvil.sender().to_checksum(None);
    assert!(
        ev.stdout
            .contains(&format!("Ping({sender}, 77, 0x6c6f67416c6c")),
        "{}",
        ev.stdout
    );
    // --json without --decode stays name-free and offline, opted in or not.
    let json_run = chaintrace_in(
        here,
        &[
            "tx",
            &logs,
            "--rpc-url",
            url,
            "--json",
            "--lookup-signatures",
        ],
        &env,
    );
    assert_eq!(json_run.code, 0, "{}", json_run.stderr);
    assert_eq!(hits.load(Ordering::SeqCst), 2);

    // A database that fails (HTTP 500, a page that is not JSON, refused): a warning naming the
    // failure; the trace is printed, names just missing, the exit code the transaction's.
    let broken = http::serve(|_| http::Reply::Answer(500, "{\"ok\":false}".into()));
    let html = http::serve(|_| http::Reply::Answer(200, "<html>".into()));
    for (db, says) in [
        (broken.as_str(), "HTTP 500"),
        (html.as_str(), "not JSON"),
        ("http://127.0.0.1:1", "connection refused"),
    ] {
        let r = chaintrace_in(
            here,
            &[
                "tx",
                &hash,
                "--rpc-url",
                url,
                "--no-project",
                "--lookup-signatures",
                "--signature-db-url",
                db,
            ],
            &[],
        );
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(r.stdout.contains("custom error 0x1d65a307"), "{}", r.stdout);
        assert!(
            r.stderr.contains("warning: signature lookup failed: ") && r.stderr.contains(says),
            "{db}: {}",
            r.stderr
        );
    }
}

/// A lookup of many keys goes out in chunks (issue 31: every key in one URL passed 8 KiB for a
/// block with ~120 unknown topics, and then nothing got named): 120 events, 3 requests of at
/// most 40 keys, every URL well under 8 KiB, all 120 named.
#[test]
fn many_unknown_topics_are_looked_up_in_chunks() {
    use chaintrace::names::signature_db::{SignatureDb, Wanted, KEYS_PER_REQUEST};
    let names: Vec<String> = (0..120).map(|i| format!("Event{i}(uint256)")).collect();
    let known: Vec<(String, Vec<&'static str>)> = names
        .iter()
        .map(|n| {
            let leaked: &'static str = Box::leak(n.clone().into_boxed_str());
            (
                format!("{:?}", alloy_primitives::keccak256(n)),
                vec![leaked],
            )
        })
        .collect();
    let (mock, hits, seen) = mock_signature_db(known.clone());
    let db = SignatureDb::new(mock, None, std::time::Duration::from_secs(10));
    let mut wanted = Wanted::default();
    for (topic, _) in &known {
        wanted
            .events
            .insert(topic.parse().unwrap(), std::iter::once(1).collect());
    }
    let abi = db.resolve(&wanted);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        120usize.div_ceil(KEYS_PER_REQUEST)
    );
    for target in seen.lock().unwrap().iter() {
        assert!(target.len() < 8 * 1024, "{} bytes", target.len());
    }
    for ((topic, _), n) in known.iter().zip(&names) {
        let event = abi.event(&topic.parse().unwrap());
        assert_eq!(
            event.map(|e| e.name.as_str()),
            n.split('(').next(),
            "{n} not named"
        );
    }
    assert!(db.failed.lock().unwrap().is_empty());
}

/// A cache entry that cannot be written is said on stderr, not dropped (issue 31): the cache
/// directory given is a file, so no entry can be made under it.
#[test]
fn a_cache_write_that_fails_is_warned() {
    let s = anvil::scenario();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mock, hits, seen) =
        mock_signature_db(vec![("0x2630edec".into(), vec!["failNested(uint256)"])]);
    let blocked = tmp("cache-is-a-file");
    std::fs::create_dir_all(&blocked).unwrap();
    let file = blocked.join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let env = [
        ("CHAINTRACE_NO_CACHE", ""),
        ("CHAINTRACE_CACHE_DIR", file.to_str().unwrap()),
        ("CHAINTRACE_SIGNATURE_DB_URL", mock.as_str()),
    ];
    let hash = nested_tx(&s);
    let r = chaintrace_in(
        here,
        &[
            "tx",
            &hash,
            "--rpc-url",
            &s.url,
            "--no-project",
            "--lookup-signatures",
        ],
        &env,
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stdout.contains("failNested(48879)"), "{}", r.stdout);
    assert!(
        r.stderr.contains("warning: cannot write cache entry"),
        "{} hits {:?} {}",
        hits.load(Ordering::SeqCst),
        seen.lock().unwrap(),
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&blocked);
}
