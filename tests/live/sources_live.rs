//! Where it failed, in the source: the contracts of `tests/contracts/srcmap/` (solc's own
//! standard-JSON output committed, see `scripts/build-srcmap-contracts.sh`) run on the pinned
//! anvil, traced by the binary with the output given as `--abi FILE`, laid out as a Foundry
//! project (`out/` + `out/build-info/` + `cache/`, as forge 1.7.1 writes them) and as a Hardhat
//! project (`artifacts/build-info/`). Every expected `file:line:column` is found in the `.sol`
//! text by the test, never taken from chaintrace's output.

use crate::{anvil, http, run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use alloy_primitives::{Address, B256, U256};
use anvil::{calldata, hex0x, w_addr, w_b32, w_u, with_ctor_args, Anvil, EXPLICIT_GAS};
use serde_json::{json, Value};

pub(crate) const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contracts/srcmap");

pub(crate) fn output(name: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(SRC).join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

pub(crate) fn legacy_path() -> String {
    format!("{SRC}/solc-output.json")
}

pub(crate) fn viair_path() -> String {
    format!("{SRC}/solc-output-viair.json")
}

/// `file:line:column` of the first occurrence of `needle` in `file` (after the first line
/// containing `after`, when given), columns counted from 1.
pub(crate) fn at(file: &str, needle: &str, after: Option<&str>) -> String {
    let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
    let from = after.map_or(0, |a| {
        text.find(a).unwrap_or_else(|| panic!("{a:?} in {file}"))
    });
    let offset = from
        + text[from..]
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {file}"));
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    format!("{file}:{line}:{column}")
}

/// Deploys MathLib, then Leaf linked to it (its placeholder `__$<34 hex>$__` becomes the
/// library's address); returns both addresses.
pub(crate) fn deploy_leaf(anvil: &Anvil, legacy: &Value) -> (Address, Address) {
    let math = anvil.deploy(&code(legacy, "MathLib.sol", "MathLib"));
    let mut leaf_code = code(legacy, "Leaf.sol", "Leaf");
    let at = leaf_code.find("__$").expect("Leaf links MathLib");
    let placeholder = leaf_code[at..at + 40].to_string();
    leaf_code = leaf_code.replace(&placeholder, &alloy_primitives::hex::encode(math));
    (math, anvil.deploy(&leaf_code))
}

/// The deployed test contracts.
struct World {
    anvil: Anvil,
    addr: BTreeMap<&'static str, Address>,
}

pub(crate) fn code(out: &Value, file: &str, name: &str) -> String {
    out["contracts"][file][name]["evm"]["bytecode"]["object"]
        .as_str()
        .unwrap()
        .to_string()
}

fn world() -> World {
    let anvil = Anvil::start();
    let legacy = output("solc-output.json");
    let viair = output("solc-output-viair.json");
    let mut addr = BTreeMap::new();
    let (math, leaf) = deploy_leaf(&anvil, &legacy);
    let middle = anvil.deploy(&with_ctor_args(
        &code(&legacy, "Middle.sol", "Middle"),
        &[w_addr(leaf)],
    ));
    let proxy = anvil.deploy(&with_ctor_args(
        &code(&legacy, "Proxy.sol", "Proxy"),
        &[w_addr(leaf)],
    ));
    let factory = anvil.deploy(&code(&legacy, "Factory.sol", "Factory"));
    let via = anvil.deploy(&code(&viair, "ViaIr.sol", "ViaIr"));
    addr.insert("MathLib", math);
    addr.insert("Leaf", leaf);
    addr.insert("Middle", middle);
    addr.insert("Proxy", proxy);
    addr.insert("Factory", factory);
    addr.insert("ViaIr", via);
    World { anvil, addr }
}

impl World {
    /// Sends a transaction that must fail; returns its hash.
    fn fail(&self, to: &str, data: Vec<u8>) -> String {
        let (h, r) = self.anvil.send_and_wait(json!({
            "to": self.addr[to], "data": hex0x(&data), "gas": format!("{EXPLICIT_GAS:#x}"),
        }));
        assert_eq!(r["status"], "0x0", "{to}: expected a failure, got {r}");
        format!("{h:?}")
    }

    fn trace(&self, hash: &str, extra: &[&str]) -> run::Run {
        let mut args = vec!["tx", hash, "--rpc-url", self.anvil.url()];
        args.extend_from_slice(extra);
        let r = run::cmd(&args).no_cache().run();
        assert!(
            r.code == 3,
            "chaintrace: exit {} (3: the transaction failed): {}",
            r.code,
            r.stderr
        );
        r
    }

    /// The human tree with the legacy and viaIR outputs given as `--abi`.
    fn tree(&self, hash: &str) -> String {
        self.trace(hash, &["--abi", &legacy_path(), "--abi", &viair_path()])
            .stdout
    }
}

/// The tree line of the frame (`CALL`, `STATICCALL`…) whose line contains `what`, and the two
/// lines under it (source and carets).
/// Sends `tx`, which must fail, and traces it with the legacy output as `--abi`: the tree
/// (exit 3: the transaction failed).
pub(crate) fn failed_tree(anvil: &Anvil, tx: Value) -> String {
    let (h, r) = anvil.send_and_wait(tx);
    assert_eq!(r["status"], "0x0", "expected a failure: {r}");
    let hash = format!("{h:?}");
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        &legacy_path(),
    ])
    .no_cache()
    .run();
    assert_eq!(
        r.code, 3,
        "exit {} (3: the transaction failed): {}",
        r.code, r.stderr
    );
    r.stdout
}

pub(crate) fn frame_lines<'a>(tree: &'a str, what: &str) -> (&'a str, &'a str, &'a str) {
    let lines: Vec<&str> = tree.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?} in\n{tree}"));
    (
        lines[i],
        lines.get(i + 1).unwrap_or(&""),
        lines.get(i + 2).unwrap_or(&""),
    )
}

/// The `Solidity stack trace:` lines after the tree.
pub(crate) fn stack(tree: &str) -> Vec<String> {
    tree.lines()
        .skip_while(|l| *l != "Solidity stack trace:")
        .skip(1)
        .map(|l| l.trim().to_string())
        .collect()
}

fn u(v: u64) -> [u8; 32] {
    w_u(v as u128)
}

#[test]
fn require_in_an_internal_function_across_a_staticcall() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let tree = w.tree(&h);
    let require = at("Leaf.sol", "require(x > 10", None);
    let (line, source, carets) = frame_lines(&tree, "STATICCALL");
    assert!(line.ends_with(&format!(" at {require}")), "{tree}");
    assert!(
        source.contains("| require(x > 10, \"leaf: too small\");"),
        "{tree}"
    );
    assert!(
        carets
            .trim_end()
            .ends_with("| ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"),
        "{tree}"
    );
    // The top frame re-reverts at the call expression.
    let call = at("Middle.sol", "leaf.leafRevert(x)", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {call}")),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![
            format!("at Leaf._check(x: 5) ({require})"),
            format!(
                "at Leaf.leafRevert(x: 5) ({}), reached by STATICCALL",
                at("Leaf.sol", "_check(x)", None)
            ),
            format!("at Middle.midRevert(x: 5) ({call})"),
        ],
        "{tree}"
    );
}

#[test]
fn custom_error_panic_modifier_library_invalid_and_abi_decoding() {
    let w = world();
    // A custom error.
    let tree = w.tree(&w.fail("Leaf", calldata("deny(uint256)", &[u(7)])));
    // solc maps the revert to the error's construction.
    let revert = at("Leaf.sol", "Denied(code, msg.sender)", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {revert}")),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![format!("at Leaf.deny(code: 7) ({revert})")],
        "{tree}"
    );

    // Panic(0x11) inside an internal function: the checked `a + b`, not the compiler's helper.
    let max = U256::MAX.to_be_bytes::<32>();
    let tree = w.tree(&w.fail("Leaf", calldata("addUp(uint256,uint256)", &[max, u(1)])));
    let add = at("Leaf.sol", "a + b", None);
    // The arguments, from the call data: uint256 max (with its short form) and 1.
    let big = format!("{} [1.1579e77]", U256::MAX);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {add}")),
        "{tree}"
    );
    assert!(tree.contains("| return a + b;"), "{tree}");
    assert_eq!(
        stack(&tree),
        vec![
            format!("at Leaf._add(a: {big}, b: 1) ({add})"),
            format!(
                "at Leaf.addUp(a: {big}, b: 1) ({})",
                at("Leaf.sol", "_add(a, b)", None)
            ),
        ],
        "{tree}"
    );

    // A modifier's require: the modifier.
    let tree = w.tree(&w.fail("Leaf", calldata("guarded(uint256)", &[u(0)])));
    let req = at("Leaf.sol", "require(x > 0", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {req}")),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![
            format!("at Leaf.positive ({req})"),
            format!(
                "at Leaf.guarded(x: 0) ({})",
                at("Leaf.sol", "function guarded", None)
            ),
        ],
        "{tree}"
    );

    // A linked library reached by DELEGATECALL.
    let tree = w.tree(&w.fail("Leaf", calldata("subtract(uint256,uint256)", &[u(1), u(2)])));
    let lib = at("MathLib.sol", "require(b <= a", None);
    let (line, source, _) = frame_lines(&tree, "DELEGATECALL");
    assert!(line.ends_with(&format!(" at {lib}")), "{tree}");
    assert!(
        source.contains("| require(b <= a, \"lib: underflow\");"),
        "{tree}"
    );
    let call = at("Leaf.sol", "MathLib.checkedSub(a, b)", None);
    assert_eq!(
        stack(&tree),
        vec![
            format!("at MathLib.checkedSub(a: 1, b: 2) ({lib}), reached by DELEGATECALL"),
            format!("at Leaf.subtract(a: 1, b: 2) ({call})"),
        ],
        "{tree}"
    );

    // INVALID in inline assembly.
    let tree = w.tree(&w.fail("Leaf", calldata("broken()", &[])));
    let invalid = at("Leaf.sol", "invalid()", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {invalid}")),
        "{tree}"
    );

    // Calldata too short for leafRevert(uint256): the ABI decoder's revert is the function's.
    let tree = w.tree(&w.fail("Leaf", calldata("leafRevert(uint256)", &[])));
    let sig = at("Leaf.sol", "function leafRevert", None);
    let (line, source, _) = frame_lines(&tree, "leafRevert");
    assert!(line.ends_with(&format!(" at {sig}")), "{tree}");
    assert!(
        source.contains("| function leafRevert(uint256 x) external view returns (uint256) {"),
        "{tree}"
    );
}

#[test]
fn proxy_create2_constructor_out_of_gas_and_via_ir() {
    let w = world();
    // Through a proxy: the implementation's frame in Leaf.sol, the proxy's assembly revert.
    let tree = w.tree(&w.fail("Proxy", calldata("leafRevert(uint256)", &[u(3)])));
    let require = at("Leaf.sol", "require(x > 10", None);
    let (line, _, _) = frame_lines(&tree, "DELEGATECALL");
    assert!(line.ends_with(&format!(" at {require}")), "{tree}");
    // One frame, one line: the proxy's frame is at the call that failed, in the tree as in the
    // stack — not at the assembly `revert` passing the failure on.
    let call = at("Proxy.sol", "delegatecall(gas()", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {call}")),
        "{tree}"
    );
    let st = stack(&tree);
    assert_eq!(
        st.first(),
        Some(&format!("at Leaf._check(x: 3) ({require})")),
        "{tree}"
    );
    assert!(st[1].ends_with("reached by DELEGATECALL"), "{tree}");
    assert_eq!(
        st.last(),
        Some(&format!("at Proxy.fallback ({call})")),
        "{tree}"
    );

    // A reverting constructor under CREATE2: the creation source map.
    let salt = B256::repeat_byte(7);
    let tree = w.tree(&w.fail(
        "Factory",
        calldata("make(bytes32,uint256)", &[w_b32(salt), u(0)]),
    ));
    let ctor = at("Factory.sol", "require(s != 0", None);
    let (line, source, _) = frame_lines(&tree, "CREATE2");
    assert!(line.ends_with(&format!(" at {ctor}")), "{tree}");
    assert!(
        source.contains("| require(s != 0, \"fragile: zero seed\");"),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![
            // A constructor is not entered by a jump: no values to read.
            format!("at Fragile.constructor ({ctor}), reached by CREATE2"),
            format!(
                "at Factory.make(salt: {salt:?}, s: 0) ({})",
                at("Factory.sol", "new Fragile{salt: salt}(s)", None)
            ),
        ],
        "{tree}"
    );

    // Out of gas at an SSTORE, caught by a require(ok).
    let tree = w.tree(&w.fail("Middle", calldata("starve(uint256)", &[u(1)])));
    let store = at("Leaf.sol", "fresh = v", None);
    let (line, _, _) = frame_lines(&tree, "store(");
    assert!(line.contains("out of gas"), "{tree}");
    assert!(line.ends_with(&format!(" at {store}")), "{tree}");
    let req = at("Middle.sol", "require(ok, \"mid: store failed\")", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {req}")),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![format!("at Middle.starve(v: 1) ({req})")],
        "{tree}"
    );

    // viaIR code: the function is inlined into the dispatcher and its revert given the
    // contract's span; the failing condition is the last thing the frame ran inside it.
    let tree = w.tree(&w.fail("ViaIr", calldata("bump(uint256)", &[u(9)])));
    let req = at("ViaIr.sol", "by < 5", None);
    assert!(
        tree.lines()
            .next()
            .unwrap()
            .ends_with(&format!(" at {req}")),
        "{tree}"
    );
    assert_eq!(
        stack(&tree),
        vec![format!("at ViaIr.bump ({req})")],
        "{tree}"
    );
}

#[test]
fn json_stays_geths_and_decode_carries_the_stack() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let plain = w.trace(&h, &["--json"]).stdout;
    let with_maps = w.trace(&h, &["--json", "--abi", &legacy_path()]).stdout;
    assert_eq!(plain, with_maps, "--json is geth's result, byte for byte");
    assert!(!plain.contains(".sol"));

    let decoded: Value = serde_json::from_str(
        &w.trace(&h, &["--json", "--decode", "--abi", &legacy_path()])
            .stdout,
    )
    .unwrap();
    let req = at("Leaf.sol", "require(x > 10", None);
    let parts: Vec<&str> = req.split(':').collect();
    assert_eq!(
        decoded["stack"][0],
        json!({"contract": "Leaf", "function": "_check", "file": parts[0],
            "line": parts[1].parse::<u64>().unwrap(), "column": parts[2].parse::<u64>().unwrap(),
            "args": [{"name": "x", "value": "5"}]})
    );
    assert_eq!(decoded["stack"].as_array().unwrap().len(), 3);
    assert_eq!(decoded["stack"][2]["function"], "midRevert");
    assert_eq!(
        decoded["decoded"][1]["at"]["line"],
        decoded["stack"][0]["line"]
    );
    // The result inside is geth's, unchanged.
    let inner: Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(decoded["result"], inner);
}

#[test]
fn no_source_map_no_noise() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let bare = w.trace(&h, &[]).stdout;
    assert!(!bare.contains("Solidity stack trace"), "{bare}");
    assert!(!bare.contains(".sol"), "{bare}");
    assert!(!bare.contains(" | "), "{bare}");
    // Only the viaIR output: nothing of the legacy contracts matches.
    let other = w.trace(&h, &["--abi", &viair_path()]).stdout;
    assert_eq!(bare, other);
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chaintrace-srcmap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A Foundry project as forge 1.7.1 leaves it (no `ast` in artifacts): `src/*.sol`,
/// `out/<File>/<Name>.json` with `bytecode`/`deployedBytecode` `{object, sourceMap,
/// linkReferences}`, `id`, `metadata.settings.compilationTarget` and solc's `metadata.sources`
/// (each source's keccak256); `out/build-info/<id>.json`
/// with `{id, source_id_to_path, language}`; `cache/solidity-files-cache.json` naming each
/// artifact's build. A stale build info (ids shuffled) sits beside the right one.
fn foundry_project(dir: &Path) {
    std::fs::write(dir.join("foundry.toml"), "[profile.default]\n").unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("out/build-info")).unwrap();
    std::fs::create_dir_all(dir.join("cache")).unwrap();
    let out = output("solc-output.json");
    let mut ids = serde_json::Map::new();
    let mut stale = serde_json::Map::new();
    let mut files = serde_json::Map::new();
    for (file, s) in out["sources"].as_object().unwrap() {
        let path = format!("src/{file}");
        std::fs::copy(Path::new(SRC).join(file), dir.join(&path)).unwrap();
        let id = s["id"].as_u64().unwrap();
        ids.insert(id.to_string(), json!(path));
        stale.insert((id + 1).to_string(), json!(path));
        let mut arts = serde_json::Map::new();
        for (name, c) in out["contracts"][file].as_object().unwrap() {
            let d = dir.join("out").join(file);
            std::fs::create_dir_all(&d).unwrap();
            let artifact = json!({
                "abi": c["abi"],
                "bytecode": {"object": format!("0x{}", c["evm"]["bytecode"]["object"].as_str().unwrap()),
                    "sourceMap": c["evm"]["bytecode"]["sourceMap"],
                    "linkReferences": c["evm"]["bytecode"]["linkReferences"]},
                "deployedBytecode": {"object": format!("0x{}", c["evm"]["deployedBytecode"]["object"].as_str().unwrap()),
                    "sourceMap": c["evm"]["deployedBytecode"]["sourceMap"],
                    "linkReferences": c["evm"]["deployedBytecode"]["linkReferences"],
                    "immutableReferences": c["evm"]["deployedBytecode"]["immutableReferences"]},
                "metadata": {"settings": {"compilationTarget": {path.clone(): name}},
                    "sources": metadata_sources(c, "src/")},
                "id": id,
            });
            std::fs::write(d.join(format!("{name}.json")), artifact.to_string()).unwrap();
            arts.insert(
                name.clone(),
                json!({"0.8.30": {"default": {"path": format!("{file}/{name}.json"), "build_id": "b1"}}}),
            );
        }
        files.insert(path.clone(), json!({"sourceName": path, "artifacts": arts}));
    }
    let build = json!({"id": "b1", "source_id_to_path": ids, "language": "Solidity"});
    std::fs::write(dir.join("out/build-info/b1.json"), build.to_string()).unwrap();
    let old = json!({"id": "b0", "source_id_to_path": stale, "language": "Solidity"});
    std::fs::write(dir.join("out/build-info/b0.json"), old.to_string()).unwrap();
    let cache = json!({"_format": "", "paths": {"artifacts": "out", "build_infos": "out/build-info"},
        "files": files, "builds": ["b1"]});
    std::fs::write(
        dir.join("cache/solidity-files-cache.json"),
        cache.to_string(),
    )
    .unwrap();
}

/// solc's metadata `sources` of contract `c` (each source's keccak256 at build time), its paths
/// given `prefix` as the project's layout names them.
fn metadata_sources(c: &Value, prefix: &str) -> Value {
    let m: Value = serde_json::from_str(c["metadata"].as_str().expect("solc metadata")).unwrap();
    let renamed: serde_json::Map<String, Value> = m["sources"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (format!("{prefix}{k}"), v.clone()))
        .collect();
    Value::Object(renamed)
}

/// A Hardhat project: `artifacts/contracts/<File>/<Name>.json` (no source maps) and the build
/// info `artifacts/build-info/<id>.json` holding solc's input and output.
fn hardhat_project(dir: &Path) {
    std::fs::write(dir.join("hardhat.config.js"), "module.exports = {};\n").unwrap();
    let out = output("solc-output.json");
    let mut sources = serde_json::Map::new();
    for (file, _) in out["sources"].as_object().unwrap() {
        let path = format!("contracts/{file}");
        let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
        sources.insert(path, json!({"content": text}));
        for (name, c) in out["contracts"][file].as_object().unwrap() {
            let d = dir.join("artifacts/contracts").join(file);
            std::fs::create_dir_all(&d).unwrap();
            let artifact = json!({"_format": "hh-sol-artifact-1", "contractName": name,
                "sourceName": format!("contracts/{file}"), "abi": c["abi"],
                "bytecode": format!("0x{}", c["evm"]["bytecode"]["object"].as_str().unwrap()),
                "deployedBytecode": format!("0x{}", c["evm"]["deployedBytecode"]["object"].as_str().unwrap()),
                "linkReferences": {}, "deployedLinkReferences": {}});
            std::fs::write(d.join(format!("{name}.json")), artifact.to_string()).unwrap();
        }
    }
    // The output's paths become the input's (`contracts/Leaf.sol`).
    let output = renamed_sources(&out, "contracts/");
    let info = json!({"_format": "hh-sol-build-info-1", "id": "h1", "solcVersion": "0.8.30",
        "input": {"language": "Solidity", "sources": sources}, "output": output});
    std::fs::create_dir_all(dir.join("artifacts/build-info")).unwrap();
    std::fs::write(dir.join("artifacts/build-info/h1.json"), info.to_string()).unwrap();
}

/// `out` with every source path (`Leaf.sol`) given `prefix` (`contracts/Leaf.sol`), in
/// `sources` and `contracts` alike.
fn renamed_sources(out: &Value, prefix: &str) -> Value {
    let mut text = out.to_string();
    for file in out["sources"].as_object().unwrap().keys() {
        text = text.replace(&format!("\"{file}\""), &format!("\"{prefix}{file}\""));
    }
    serde_json::from_str(&text).unwrap()
}

/// A Hardhat 3 project as Hardhat 3 lays it out: artifacts (`hh3-artifact-1`) under
/// `artifacts/contracts/`, and the build info split in two: `build-info/<id>.json`
/// (`hh3-sol-build-info-1`: the compiler's input, sources under their input source names
/// `project/contracts/…`, and `userSourceNameMap` from the names users write) and
/// `build-info/<id>.output.json` (`hh3-sol-build-info-output-1`: the compiler's output).
fn hardhat3_project(dir: &Path) {
    std::fs::write(dir.join("hardhat.config.ts"), "export default {};\n").unwrap();
    let id = "solc-0_8_30-3f9c2b7d1e";
    let out = output("solc-output.json");
    let (mut sources, mut users) = (serde_json::Map::new(), serde_json::Map::new());
    for (file, _) in out["sources"].as_object().unwrap() {
        let input_name = format!("project/contracts/{file}");
        let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
        sources.insert(input_name.clone(), json!({"content": text}));
        users.insert(format!("contracts/{file}"), json!(input_name));
        for (name, c) in out["contracts"][file].as_object().unwrap() {
            let d = dir.join("artifacts/contracts").join(file);
            std::fs::create_dir_all(&d).unwrap();
            let artifact = json!({"_format": "hh3-artifact-1", "contractName": name,
                "sourceName": format!("contracts/{file}"), "abi": c["abi"],
                "bytecode": format!("0x{}", c["evm"]["bytecode"]["object"].as_str().unwrap()),
                "deployedBytecode": format!("0x{}", c["evm"]["deployedBytecode"]["object"].as_str().unwrap()),
                "linkReferences": {}, "deployedLinkReferences": {}, "immutableReferences": {},
                "inputSourceName": input_name, "buildInfoId": id});
            std::fs::write(d.join(format!("{name}.json")), artifact.to_string()).unwrap();
        }
    }
    let input = json!({"_format": "hh3-sol-build-info-1", "id": id, "solcVersion": "0.8.30",
        "solcLongVersion": "0.8.30+commit.73712a01", "userSourceNameMap": users,
        "input": {"language": "Solidity", "sources": sources, "settings": {}}});
    let output = json!({"_format": "hh3-sol-build-info-output-1", "id": id,
        "output": renamed_sources(&out, "project/contracts/")});
    let bi = dir.join("artifacts/build-info");
    std::fs::create_dir_all(&bi).unwrap();
    std::fs::write(bi.join(format!("{id}.json")), input.to_string()).unwrap();
    std::fs::write(bi.join(format!("{id}.output.json")), output.to_string()).unwrap();
}

#[test]
fn hardhat3_split_build_info_is_read_in_users_source_names() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let require = at("Leaf.sol", "require(x > 10", None);
    let dir = tmp("hardhat3");
    hardhat3_project(&dir);
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&dir)
        .run();
    assert_eq!(
        stack(&r.stdout).first(),
        Some(&format!("at Leaf._check(x: 5) (contracts/{require})")),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn foundry_and_hardhat_projects_are_found_without_flags() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let require = at("Leaf.sol", "require(x > 10", None);
    let line = require.split(':').nth(1).unwrap().to_string();
    let col = require.split(':').nth(2).unwrap().to_string();

    let foundry = tmp("foundry");
    foundry_project(&foundry);
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&foundry)
        .run();
    // Foundry's layout has no AST here: the function and its parameters are read from the
    // text, the values from the stack (the artifact's metadata says legacy code generation).
    let expect = format!("at Leaf._check(x: 5) (src/Leaf.sol:{line}:{col})");
    assert_eq!(
        stack(&r.stdout).first(),
        Some(&expect),
        "{}{}",
        r.stdout,
        r.stderr
    );

    let hardhat = tmp("hardhat");
    hardhat_project(&hardhat);
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&hardhat)
        .run();
    let expect = format!("at Leaf._check(x: 5) (contracts/Leaf.sol:{line}:{col})");
    assert_eq!(
        stack(&r.stdout).first(),
        Some(&expect),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&foundry);
    let _ = std::fs::remove_dir_all(&hardhat);
}

#[test]
fn a_bad_jump_is_located_at_its_jump() {
    // Hand-made: runtime `PUSH1 3; JUMP; STOP` (3 is no JUMPDEST), its source map pointing the
    // JUMP at `jump(3)` of a source written here.
    let dir = tmp("badjump");
    let text =
        "contract Bad {\n    fallback() external {\n        assembly { jump(3) }\n    }\n}\n";
    std::fs::write(dir.join("Bad.sol"), text).unwrap();
    let jump = text.find("jump(3)").unwrap();
    let three = text.find("3)").unwrap();
    let output = json!({
        "sources": {"Bad.sol": {"id": 0}},
        "contracts": {"Bad.sol": {"Bad": {"abi": [], "evm": {
            "bytecode": {"object": "6004600c60003960046000f360035600", "sourceMap": ""},
            "deployedBytecode": {"object": "60035600",
                "sourceMap": format!("{three}:1:0:-:0;{jump}:7:0:-:0;0:60:0")}}}}},
    });
    let file = dir.join("solc-output.json");
    std::fs::write(&file, output.to_string()).unwrap();
    let w = world();
    let bad = w.anvil.deploy("0x6004600c60003960046000f360035600");
    let (h, r) = w
        .anvil
        .send_and_wait(json!({"to": bad, "data": "0x", "gas": "0x30000"}));
    assert_eq!(r["status"], "0x0");
    let tree = w
        .trace(&format!("{h:?}"), &["--abi", file.to_str().unwrap()])
        .stdout;
    let first = tree.lines().next().unwrap();
    assert!(first.contains("invalid jump destination"), "{tree}");
    assert!(first.ends_with(" at Bad.sol:3:20"), "{tree}");
    assert!(tree.contains("| assembly { jump(3) }"), "{tree}");
    assert_eq!(
        stack(&tree),
        vec!["at Bad.fallback (Bad.sol:3:20)"],
        "{tree}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A what-if replay names where each run failed: the original and the patched run (here Middle
/// replaced by its own deployed code, read back from the node) both stop at Leaf's `require`,
/// and the comparison's location column says so for both.
#[test]
fn what_if_rows_say_where_each_run_failed() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let middle = format!("{:?}", w.addr["Middle"]);
    let deployed = w.anvil.rpc("eth_getCode", json!([middle, "latest"]));
    let pair = format!("{middle}={}", deployed.as_str().unwrap());
    let r = w.trace(&h, &["--abi", &legacy_path(), "--code-override", &pair]);
    let require = at("Leaf.sol", "require(x > 10", None);
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("original") || l.contains("patched"))
        .filter(|l| l.contains("reverted"))
        .collect();
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    for row in rows {
        assert!(row.contains(&require), "{row}\n{}", r.stdout);
    }
}

/// Sourcify's v2 answer for the deployed `name` of `file` (legacy output), in the shape of
/// argotorg/sourcify's `services/server/src/apiv2.yaml` (`VerifiedContract` with the fields
/// chaintrace asks for): the ABI, the verified sources and their ids, the compilation's name,
/// and both bytecodes with solc's own source maps.
fn sourcify_answer(w: &World, file: &str, name: &str) -> Value {
    let out = output("solc-output.json");
    let c = &out["contracts"][file][name]["evm"];
    let (mut sources, mut ids) = (serde_json::Map::new(), serde_json::Map::new());
    for (path, s) in out["sources"].as_object().unwrap() {
        let text = std::fs::read_to_string(Path::new(SRC).join(path)).unwrap();
        sources.insert(path.clone(), json!({"content": text}));
        ids.insert(path.clone(), json!({"id": s["id"]}));
    }
    let addr = w.addr[name];
    let onchain = w.anvil.rpc("eth_getCode", json!([addr, "latest"]));
    json!({
        "match": "exact_match", "creationMatch": "exact_match", "runtimeMatch": "exact_match",
        "chainId": w.anvil.chain_id().to_string(), "address": addr,
        "abi": out["contracts"][file][name]["abi"],
        "sources": sources, "sourceIds": ids,
        "compilation": {"language": "Solidity", "compiler": "solc",
            "compilerVersion": "0.8.30+commit.73712a01", "compilerSettings": {},
            "name": name, "fullyQualifiedName": format!("{file}:{name}")},
        "runtimeBytecode": {"onchainBytecode": onchain,
            "recompiledBytecode": format!("0x{}", c["deployedBytecode"]["object"].as_str().unwrap()),
            "sourceMap": c["deployedBytecode"]["sourceMap"],
            "linkReferences": c["deployedBytecode"]["linkReferences"],
            "immutableReferences": c["deployedBytecode"]["immutableReferences"]},
        "creationBytecode": {
            "recompiledBytecode": format!("0x{}", c["bytecode"]["object"].as_str().unwrap()),
            "sourceMap": c["bytecode"]["sourceMap"],
            "linkReferences": c["bytecode"]["linkReferences"]},
    })
}

#[test]
fn sourcify_gives_sources_and_maps_cached_on_disk() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let answers: Vec<(String, Value)> = [("Leaf.sol", "Leaf"), ("Middle.sol", "Middle")]
        .iter()
        .map(|(f, n)| (format!("{:#x}", w.addr[n]), sourcify_answer(&w, f, n)))
        .collect();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let mock = http::serve(move |r: &http::Request| {
        counter.fetch_add(1, Ordering::SeqCst);
        let target = r.path.to_lowercase();
        assert!(
            target.contains("fields=")
                && target.contains("sources")
                && target.contains("runtimebytecode"),
            "{target}"
        );
        match answers.iter().find(|(a, _)| target.contains(a.as_str())) {
            Some((_, body)) => http::Reply::Answer(200, body.to_string()),
            None => http::Reply::Answer(404, json!({"customCode": "not_found"}).to_string()),
        }
    });
    let cache = tmp("sourcify-cache");
    let trace = || {
        run::cmd(&[
            "tx",
            &h,
            "--rpc-url",
            w.anvil.url(),
            "--no-project",
            "--sourcify-url",
            &mock,
        ])
        .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
        .run()
    };
    let r = trace();
    assert_eq!(r.code, 3, "{}", r.stderr);
    // Sourcify's answer carries sources, not their ASTs: functions and their parameters come
    // from the text; this answer has no solc metadata, so no values are read.
    let require = at("Leaf.sol", "require(x > 10", None);
    let call = at("Middle.sol", "leaf.leafRevert(x)", None);
    assert_eq!(
        stack(&r.stdout),
        vec![
            format!("at Leaf._check(x) ({require})"),
            format!(
                "at Leaf.leafRevert(x) ({}), reached by STATICCALL",
                at("Leaf.sol", "_check(x)", None)
            ),
            format!("at Middle.midRevert(x) ({call})"),
        ],
        "{}{}",
        r.stdout,
        r.stderr
    );
    let first = hits.load(Ordering::SeqCst);
    assert!(first >= 2, "{first}");
    // Whole answers on disk per chain and address: the next run asks nothing.
    let chain = w.anvil.chain_id().to_string();
    assert!(cache
        .join("sourcify")
        .join(&chain)
        .join(format!("{:#x}.json", w.addr["Leaf"]))
        .is_file());
    let again = trace();
    assert_eq!(again.stdout, r.stdout, "{}", again.stderr);
    assert_eq!(hits.load(Ordering::SeqCst), first);
    // Gas by function follows Leaf's internal functions with Sourcify's maps.
    let g = run::cmd(&[
        "gas",
        &h,
        "--rpc-url",
        w.anvil.url(),
        "--no-project",
        "--sourcify-url",
        &mock,
        "--by-function",
        "--json",
    ])
    .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
    .run();
    assert_eq!(g.code, 3, "{}", g.stderr);
    let report: Value = serde_json::from_str(&g.stdout).unwrap();
    assert!(
        report["byFunction"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["contract"] == "Leaf" && f["function"] == "_check" && f["calls"] == 1),
        "{}",
        report["byFunction"]
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// A remote answer never chooses a local file (issue 31): Sourcify's answer names its sources
/// without their text — Leaf by an absolute path, Middle by a `../` path — and both paths lead
/// to files that exist here, every line of which says DECOY. Nothing of them is printed, in the
/// tree, the stack trace or the HTML report, and the answer is still used for what it carries
/// (names, the stack's functions).
#[test]
fn a_sourcify_answer_never_chooses_a_local_file() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let decoys = tmp("decoys");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let inside = root.join(format!("target/chaintrace-decoy-{}", std::process::id()));
    std::fs::create_dir_all(&inside).unwrap();
    let decoy = |dir: &Path, file: &str| -> PathBuf {
        let text = std::fs::read_to_string(Path::new(SRC).join(file)).unwrap();
        let marked: String = text.lines().map(|l| format!("{l} // DECOY\n")).collect();
        let p = dir.join(file);
        std::fs::write(&p, marked).unwrap();
        p
    };
    let leaf = decoy(&decoys, "Leaf.sol");
    decoy(&inside, "Middle.sol");
    let dir_name = root.file_name().unwrap().to_str().unwrap().to_string();
    let middle = format!(
        "../{dir_name}/target/chaintrace-decoy-{}/Middle.sol",
        std::process::id()
    );
    let renamed = |mut answer: Value| -> Value {
        for key in ["sources", "sourceIds"] {
            let m = answer[key].as_object_mut().unwrap();
            let leaf_v = m.remove("Leaf.sol").unwrap();
            let mid_v = m.remove("Middle.sol").unwrap();
            let strip = |v: Value| if key == "sources" { json!({}) } else { v };
            m.insert(leaf.to_str().unwrap().to_string(), strip(leaf_v));
            m.insert(middle.clone(), strip(mid_v));
        }
        answer
    };
    let answers: Vec<(String, Value)> = [("Leaf.sol", "Leaf"), ("Middle.sol", "Middle")]
        .iter()
        .map(|(f, n)| {
            (
                format!("{:#x}", w.addr[n]),
                renamed(sourcify_answer(&w, f, n)),
            )
        })
        .collect();
    let mock = http::serve(move |r: &http::Request| {
        let target = r.path.to_lowercase();
        match answers.iter().find(|(a, _)| target.contains(a.as_str())) {
            Some((_, body)) => http::Reply::Answer(200, body.to_string()),
            None => http::Reply::Answer(404, json!({"customCode": "not_found"}).to_string()),
        }
    });
    let cache = tmp("sourcify-decoy-cache");
    let html = decoys.join("report.html");
    for extra in [&[][..], &["--html", html.to_str().unwrap()][..]] {
        let mut args = vec![
            "tx",
            &h,
            "--rpc-url",
            w.anvil.url(),
            "--no-project",
            "--sourcify-url",
            &mock,
        ];
        args.extend_from_slice(extra);
        let r = run::cmd(&args)
            .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
            .run();
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(
            !r.stdout.contains("DECOY") && !r.stderr.contains("DECOY"),
            "a local file named by the answer was read:\n{}{}",
            r.stdout,
            r.stderr
        );
        // The answer's ABI still names the calls.
        assert!(r.stdout.contains("midRevert"), "{}", r.stdout);
    }
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(
        !report.contains("DECOY"),
        "the HTML report quotes a local file"
    );
    let _ = std::fs::remove_dir_all(&decoys);
    let _ = std::fs::remove_dir_all(&inside);
    let _ = std::fs::remove_dir_all(&cache);
}

/// Stale sources are never quoted as the truth (issue 31): `src/Leaf.sol` edited after the
/// build (a line added on top, so every line moved). In the Foundry layout the artifacts'
/// solc metadata records each source's keccak256: the edited file's hash differs, so its
/// location is not shown and says why, while the unedited Middle.sol is still located. In the
/// Hardhat layout the build info carries the build's own copy of the text, which is quoted.
#[test]
fn a_source_edited_after_the_build_is_never_quoted() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let require = at("Leaf.sol", "require(x > 10", None);
    let edit = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, format!("// edited after the build\n{text}")).unwrap();
    };

    let foundry = tmp("stale-foundry");
    foundry_project(&foundry);
    edit(&foundry.join("src/Leaf.sol"));
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&foundry)
        .run();
    assert_eq!(r.code, 3, "{}", r.stderr);
    let changed = "src/Leaf.sol (changed since the build: location not shown)";
    // The Foundry layout has no AST: Leaf's functions would come from its text, so the stack
    // says where and why instead of naming them.
    assert_eq!(
        stack(&r.stdout).first(),
        Some(&format!("at {changed}, reached by STATICCALL")),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains(&format!("at {changed}")), "{}", r.stdout);
    assert!(!r.stdout.contains("edited after the build"), "{}", r.stdout);
    // No line of the edited file is quoted; Middle.sol, unedited, still is.
    let middle = at("Middle.sol", "leaf.leafRevert(x)", None);
    assert!(
        stack(&r.stdout)
            .iter()
            .any(|l| l == &format!("at Middle.midRevert(x: 5) (src/{middle})")),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("src/Leaf.sol:"), "{}", r.stdout);

    let hardhat = tmp("stale-hardhat");
    hardhat_project(&hardhat);
    std::fs::create_dir_all(hardhat.join("contracts")).unwrap();
    for f in ["Leaf.sol", "Middle.sol"] {
        std::fs::copy(Path::new(SRC).join(f), hardhat.join("contracts").join(f)).unwrap();
    }
    edit(&hardhat.join("contracts/Leaf.sol"));
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&hardhat)
        .run();
    assert_eq!(
        stack(&r.stdout).first(),
        Some(&format!("at Leaf._check(x: 5) (contracts/{require})")),
        "the build's own copy is quoted: {}{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stdout.contains("edited after the build"), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&foundry);
    let _ = std::fs::remove_dir_all(&hardhat);
}

/// Reverts the EVM gives no reason for, explained as Hardhat's stack traces explain them (the
/// sentences checked against the transactions' own value and call data), and a non-payable
/// function's failure placed at its declaration, found in the `.sol` text.
#[test]
fn reverts_without_a_reason_are_explained() {
    let anvil = Anvil::start();
    let legacy = output("solc-output.json");
    let no_fallback = anvil.deploy(&code(&legacy, "Inference.sol", "NoFallback"));
    let strict = anvil.deploy(&code(&legacy, "Inference.sol", "StrictFallback"));
    let caller = anvil.deploy(&code(&legacy, "Inference.sol", "Caller"));
    let tree = |to: Address, data: Vec<u8>, value: u128| -> String {
        failed_tree(
            &anvil,
            json!({
                "to": to, "data": hex0x(&data), "value": anvil::qty(value),
                "gas": format!("{EXPLICIT_GAS:#x}"),
            }),
        )
    };

    let t = tree(no_fallback, calldata("test()", &[]), 1);
    let decl = at("Inference.sol", "function test()", None);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains("✗ execution reverted (`test()` is not payable but was sent 1 wei)")
            && first.ends_with(&format!(" at {decl}")),
        "{t}"
    );
    assert!(
        t.contains("reverted: no revert data: `test()` is not payable but was sent 1 wei"),
        "{t}"
    );
    assert_eq!(
        stack(&t).first().map(String::as_str),
        Some(format!("at NoFallback.test ({decl})").as_str()),
        "{t}"
    );

    let t = tree(no_fallback, vec![0xde, 0xad, 0xbe, 0xef], 0);
    assert!(
        t.contains("(no function matches selector 0xdeadbeef and there is no fallback function)"),
        "{t}"
    );

    let t = tree(no_fallback, vec![], 7);
    assert!(
        t.contains("(no receive or fallback function to take the 7 wei sent)"),
        "{t}"
    );

    let t = tree(strict, vec![0x12, 0x34, 0x56, 0x78], 1);
    let fallback = at("Inference.sol", "fallback()", None);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains("(the fallback function is not payable but was sent 1 wei)")
            && first.ends_with(&format!(" at {fallback}")),
        "{t}"
    );

    // A high-level call to an account without code: Solidity's EXTCODESIZE check.
    let eoa = Address::repeat_byte(0x5e);
    let t = tree(caller, calldata("callMissing(address)", &[w_addr(eoa)]), 0);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains("(function call to a non-contract account)")
            && first.ends_with(&format!(
                " at {}",
                at("Inference.sol", "NoFallback(a).test()", None)
            )),
        "{t}"
    );

    // A public array's getter asked past its end: the getter reverts with no data.
    let store = anvil.deploy(&code(&legacy, "Inference.sol", "Store"));
    let t = tree(store, calldata("items(uint256)", &[u(5)]), 0);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains("(array index out of bounds in the getter of the public `items`)")
            && first.ends_with(&format!(
                " at {}",
                at("Inference.sol", "uint256[] public items;", None)
            )),
        "{t}"
    );

    // `value()` returns nothing where the caller's interface declares a uint256.
    let silent = anvil.deploy(&code(&legacy, "Inference.sol", "Silent"));
    let asker = anvil.deploy(&code(&legacy, "Inference.sol", "Asker"));
    let t = tree(asker, calldata("ask(address)", &[w_addr(silent)]), 0);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains(
            "(the call returned 0 bytes of data, which the caller could not decode as the \
             values it expects)"
        ) && first.ends_with(&format!(
            " at {}",
            at("Inference.sol", "IValue(s).value()", None)
        )),
        "{t}"
    );
}

/// A contract whose artifact was rebuilt after the deployment (Inference.sol with one constant
/// changed, compiled by the same solc): its names vanish, and one line says why.
#[test]
fn an_artifact_rebuilt_since_the_deployment_is_named() {
    let anvil = Anvil::start();
    let legacy = output("solc-output.json");
    let deployed = anvil.deploy(&code(&legacy, "Inference.sol", "NoFallback"));
    let (h, r) = anvil.send_and_wait(json!({
        "to": deployed, "data": hex0x(&calldata("test()", &[])), "value": "0x1",
        "gas": format!("{EXPLICIT_GAS:#x}"),
    }));
    assert_eq!(r["status"], "0x0", "{r}");
    let hash = format!("{h:?}");
    let rebuilt = format!("{SRC}/rebuilt/solc-output.json");
    let r = run::cmd(&["tx", &hash, "--rpc-url", anvil.url(), "--abi", &rebuilt])
        .no_cache()
        .run();
    assert_eq!(r.code, 3, "{}", r.stderr);
    let said: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("runs code like the artifact NoFallback but not its code"))
        .collect();
    assert_eq!(said.len(), 1, "{}", r.stderr);
    assert!(
        said[0].contains(&deployed.to_checksum(None))
            && said[0].contains("rebuilt since it was deployed?"),
        "{}",
        said[0]
    );
    // With the artifact it was built from: nothing to say.
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        &legacy_path(),
    ])
    .no_cache()
    .run();
    assert!(!r.stderr.contains("runs code like"), "{}", r.stderr);
}

/// `chaintrace debug` on an anvil transaction, in a real terminal (tmux), inside a Foundry
/// project: jump to the revert, step back; the failing `require` (read from the `.sol` file)
/// is on screen and highlighted, and the call stack pane lists the internal functions of
/// `tx`'s stack trace, with their arguments.
#[test]
fn the_debugger_jumps_to_the_revert_in_a_foundry_project() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let foundry = tmp("debugger");
    foundry_project(&foundry);
    let r = run::cmd(&["tx", &h, "--rpc-url", w.anvil.url()])
        .no_cache()
        .dir(&foundry)
        .run();
    let stack = stack(&r.stdout);
    assert!(
        stack.len() >= 2 && stack[0].starts_with("at Leaf._check(x: 5)"),
        "{}",
        r.stdout
    );

    let t = crate::tmux::Tmux::start(
        &foundry,
        &["debug", &h, "--rpc-url", w.anvil.url()],
        &[("CHAINTRACE_NO_CACHE", "1")],
    );
    t.wait_for("step 1/", 120);
    t.keys(&["r"]);
    let at_revert = t.wait_for(" REVERT ", 30);
    let step = |s: &str| -> usize {
        let at = s.find("step ").unwrap() + 5;
        s[at..].split('/').next().unwrap().parse().unwrap()
    };
    let revert = step(&at_revert);
    t.keys(&["k"]);
    let back = t.wait_for(&format!("step {}/", revert - 1), 30);

    let require = at("Leaf.sol", "require(x > 10", None);
    let line: usize = require.split(':').nth(1).unwrap().parse().unwrap();
    let text = std::fs::read_to_string(Path::new(SRC).join("Leaf.sol")).unwrap();
    let failing = text.lines().nth(line - 1).unwrap().trim();
    assert!(
        t.screen().iter().any(|row| row.highlights(failing)),
        "{failing:?} is not highlighted:\n{back}"
    );
    for entry in &stack {
        // The pane wraps at its width: compare the function and where, as `tx` prints them.
        let head = entry.split(", reached by").next().unwrap();
        assert!(
            back.contains(head),
            "{head:?} not in the call stack:\n{back}"
        );
    }
    t.keys(&["q"]);
    t.wait_for("[exited 0]", 30);
    let _ = std::fs::remove_dir_all(&foundry);
}

/// The debugger where the tool works: behind a node that refuses every `debug_*` method (the
/// state from `eth_get*`), on a bundle captured from the node and replayed offline (the node
/// gone from the command line), and without any source map (`--no-project`, an ABI alone):
/// opcode level, the frames named from the ABI.
/// An editor's session over the Debug Adapter Protocol in the Foundry project's folder (the
/// project found as `tx` finds it): on the mined transaction by `{tx, rpcUrl}`, and offline on
/// its bundle by `{bundle}`. The `revert` filter stops at Leaf.sol's `require` with the stack
/// `tx` prints and the argument `x` = 5; a step back leaves the revert.
#[test]
fn an_editor_debugs_the_foundry_projects_transaction_and_its_bundle_over_dap() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let foundry = tmp("dap-foundry");
    foundry_project(&foundry);
    let require = at("Leaf.sol", "require(x > 10", None);
    let line: u64 = require.split(':').nth(1).unwrap().parse().unwrap();
    let bundle = foundry.join("tx.bundle.json");
    let r = run::cmd(&[
        "bundle",
        "capture",
        &h,
        "--rpc-url",
        w.anvil.url(),
        "-o",
        bundle.to_str().unwrap(),
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tree_stack = stack(&w.tree(&h));
    for launch in [
        json!({"tx": h, "rpcUrl": w.anvil.url()}),
        json!({"bundle": bundle.to_str().unwrap()}),
    ] {
        let mut c = crate::dap_client::Client::start_in(&foundry);
        c.request("initialize", json!({"adapterID": "chaintrace"}));
        let r = c.request("launch", launch.clone());
        assert_eq!(r["success"], true, "{launch}: {r}");
        c.event("initialized");
        c.request("setExceptionBreakpoints", json!({"filters": ["revert"]}));
        c.request("configurationDone", json!({}));
        let stopped = c.event("stopped");
        assert_eq!(
            stopped["body"]["reason"], "exception",
            "{launch}: {stopped}"
        );
        let frames = c.request("stackTrace", json!({"threadId": 1}))["body"]["stackFrames"].clone();
        let top = &frames[0];
        assert_eq!(top["name"], "Leaf._check(x: 5)", "{launch}: {frames}");
        assert_eq!(top["line"], line, "{launch}: {top}");
        assert!(
            top["source"]["path"]
                .as_str()
                .unwrap()
                .ends_with("Leaf.sol"),
            "{launch}: {top}"
        );
        // The same functions as `tx`'s Solidity stack trace, innermost first.
        let names: Vec<String> = frames
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f.get("source").is_some())
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names.len(), tree_stack.len(), "{names:?} vs {tree_stack:?}");
        for (n, t) in names.iter().zip(&tree_stack) {
            assert!(t.starts_with(&format!("at {n}")), "{n} vs {t}");
        }
        let scopes = c.request("scopes", json!({"frameId": top["id"]}));
        let args = scopes["body"]["scopes"][0]["variablesReference"].clone();
        let vars = c.request("variables", json!({"variablesReference": args}));
        assert_eq!(
            vars["body"]["variables"],
            json!([{"name": "x", "value": "5", "variablesReference": 0}]),
            "{launch}"
        );
        c.request("stepBack", json!({"threadId": 1}));
        assert_eq!(c.event("stopped")["body"]["reason"], "step");
        assert_eq!(c.request("disconnect", json!({}))["success"], true);
        assert!(c.child.wait().unwrap().success());
    }
}

#[test]
fn the_debugger_works_without_debug_apis_on_bundles_and_without_maps() {
    let w = world();
    let h = w.fail("Middle", calldata("midRevert(uint256)", &[u(5)]));
    let foundry = tmp("debugger-where");
    foundry_project(&foundry);
    let require = at("Leaf.sol", "require(x > 10", None);
    let line: usize = require.split(':').nth(1).unwrap().parse().unwrap();
    let text = std::fs::read_to_string(Path::new(SRC).join("Leaf.sol")).unwrap();
    let failing = text.lines().nth(line - 1).unwrap().trim().to_string();
    let check = |args: &[&str], dir: &Path, highlighted: bool, want: &[&str]| {
        let t = crate::tmux::Tmux::start(dir, args, &[("CHAINTRACE_NO_CACHE", "1")]);
        t.wait_for("step 1/", 120);
        t.keys(&["r"]);
        let screen = t.wait_for(" REVERT ", 30);
        assert_eq!(
            t.screen().iter().any(|row| row.highlights(&failing)),
            highlighted,
            "{args:?}: {failing:?} highlighted?\n{screen}"
        );
        for w in want {
            assert!(
                screen.contains(w),
                "{args:?}: {w:?} not on screen:\n{screen}"
            );
        }
        t.keys(&["q"]);
        t.wait_for("[exited 0]", 30)
    };

    // A node without debug_*: refused, the replay runs on eth_get* state.
    let p = crate::proxy::Proxy::start(w.anvil.url(), &["--deny", "debug_"]);
    let after = check(
        &["debug", &h, "--rpc-url", &p.url],
        &foundry,
        true,
        &["at Leaf._check(x: 5)"],
    );
    assert!(
        after.contains("self-check: replay matches the receipt (status failed"),
        "{after}"
    );

    // A bundle, offline.
    let bundle = foundry.join("tx.bundle.json");
    let out_file = bundle.to_str().unwrap();
    let r = run::cmd(&[
        "bundle",
        "capture",
        &h,
        "--rpc-url",
        w.anvil.url(),
        "-o",
        out_file,
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    check(
        &["debug", "--bundle", bundle.to_str().unwrap()],
        &foundry,
        true,
        &["at Leaf._check(x: 5)"],
    );

    // No source map: opcodes, and the frames named by the ABI given.
    let bare = tmp("debugger-bare");
    let out = output("solc-output.json");
    let abi: Vec<Value> = ["Middle.sol", "Leaf.sol"]
        .iter()
        .flat_map(|f| {
            let name = f.trim_end_matches(".sol");
            out["contracts"][f][name]["abi"].as_array().unwrap().clone()
        })
        .collect();
    let abi_file = bare.join("abi.json");
    std::fs::write(&abi_file, Value::Array(abi).to_string()).unwrap();
    check(
        &[
            "debug",
            &h,
            "--rpc-url",
            w.anvil.url(),
            "--no-project",
            "--abi",
            abi_file.to_str().unwrap(),
        ],
        &bare,
        false,
        &["no source map for", "midRevert(", "REVERT"],
    );
    let _ = std::fs::remove_dir_all(&foundry);
    let _ = std::fs::remove_dir_all(&bare);
}
