//! Storage layouts computed from the AST (`chaintrace::names::ast_layout`, what names a build
//! with neither a `storageLayout` nor metadata a solc could compile one from) compared whole
//! with the `storageLayout` and `transientStorageLayout` solc itself writes, for every contract
//! of: tests/contracts/layouts/Layouts.sol (every shape solc lays out: inheritance across
//! several bases, constants and immutables, packed value types, enums, contracts, user-defined
//! value types, function types, structs in structs, static arrays of small and large elements,
//! nested and dynamic arrays, mappings by string, bytes, enum and value type, `transient`
//! variables), the OpenZeppelin sources and test contracts in tests/contracts/oz, and EDR's
//! stack-trace suite, compiled by solc-js 0.8.30; and Uniswap v3's core (its pool's packed
//! `slot0`, `ticks`, `positions`, `observations[65535]`), compiled by solc-js 0.7.6.

use std::path::{Path, PathBuf};

use chaintrace::names::ast_layout::{contract_layouts, AstStorage};
use chaintrace::names::sources::AstDecls;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// solc-js (`SOLC_JS_DIR/node_modules/solc`) over every `.sol` under `dir`, by
/// scripts/compile-layouts.js.
fn compile(solc_js: &Path, dir: &str) -> Value {
    assert!(
        solc_js.join("node_modules/solc/package.json").is_file(),
        "{} lacks solc-js: run scripts/install-test-tools.sh",
        solc_js.display()
    );
    let out = std::env::temp_dir().join(format!(
        "chaintrace-layouts-{}-{}.json",
        std::process::id(),
        dir.trim_start_matches('/').replace('/', "-")
    ));
    let r = std::process::Command::new("node")
        .arg(Path::new(ROOT).join("scripts/compile-layouts.js"))
        .arg(solc_js)
        .arg(Path::new(ROOT).join(dir)) // an absolute `dir` stays itself
        .arg(&out)
        .output()
        .expect("node");
    assert!(
        r.status.success(),
        "compile-layouts.js {dir} failed: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(out);
    v
}

/// Every contract of a standard-JSON `output`: (storage layouts compared, transient layouts
/// compared, what differed).
fn compare(output: &Value) -> (usize, usize, Vec<String>) {
    let decls: Vec<(String, AstDecls)> = output["sources"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, s)| {
            let d = AstDecls::from_value(&s["ast"]).unwrap_or_else(|| panic!("{p}: no AST"));
            (p.clone(), d)
        })
        .collect();
    let files: Vec<(&str, &AstStorage)> = decls
        .iter()
        .map(|(p, d)| (p.as_str(), &d.storage))
        .collect();
    let (mut storage, mut transient, mut differ) = (0, 0, Vec::new());
    for (source, contracts) in output["contracts"].as_object().unwrap() {
        for (name, c) in contracts.as_object().unwrap() {
            let Some(want) = c.get("storageLayout") else {
                continue;
            };
            let got = match contract_layouts(name, Some(source), &files) {
                Ok(Some(got)) => got,
                Ok(None) => {
                    differ.push(format!("{source}:{name}: not in the ASTs"));
                    continue;
                }
                Err(e) => {
                    differ.push(format!("{source}:{name}: {e}"));
                    continue;
                }
            };
            if &got.storage != want {
                differ.push(format!(
                    "{source}:{name}: storageLayout\n  solc: {want}\n  ours: {}",
                    got.storage
                ));
            }
            storage += 1;
            if let Some(want) = c.get("transientStorageLayout") {
                if &got.transient != want {
                    differ.push(format!(
                        "{source}:{name}: transientStorageLayout\n  solc: {want}\n  ours: {}",
                        got.transient
                    ));
                }
                transient += 1;
            }
        }
    }
    (storage, transient, differ)
}

fn solc_js_0_8_30() -> PathBuf {
    Path::new(ROOT).join(".tools/js")
}

/// Each layout of the project's test contracts and the OpenZeppelin sources they vendor.
#[test]
fn layouts_computed_from_the_ast_are_solcs_for_every_shape_and_openzeppelin() {
    let mut shapes_seen = 0;
    let mut all = (0, 0, Vec::new());
    for dir in ["tests/contracts/layouts", "tests/contracts/oz"] {
        let output = compile(&solc_js_0_8_30(), dir);
        if dir.ends_with("layouts") {
            let l = &output["contracts"]["Layouts.sol"]["Layouts"]["storageLayout"];
            shapes_seen = l["storage"].as_array().unwrap().len();
        }
        let (s, t, d) = compare(&output);
        all.0 += s;
        all.1 += t;
        all.2.extend(d);
    }
    eprintln!(
        "ast layouts: {} storage and {} transient layouts compared with solc 0.8.30's",
        all.0, all.1
    );
    assert!(all.2.is_empty(), "{}", all.2.join("\n"));
    // Layouts.sol's 27 stored variables of every shape, its 3 transient ones; the OpenZeppelin
    // tree's contracts, interfaces and libraries.
    assert_eq!(shapes_seen, 27);
    assert_eq!(all.0, 35, "layouts compared");
    assert_eq!(all.0, all.1);
}

/// Every contract of EDR's stack-trace suite (compiled for tests/live/edr_suite.rs).
#[test]
fn layouts_computed_from_the_ast_are_solcs_for_edrs_suite() {
    crate::edr_suite::compile();
    let mut infos = Vec::new();
    let mut stack = vec![crate::edr_suite::build_dir()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "build-info.json") {
                infos.push(p);
            }
        }
    }
    let (mut storage, mut differ, mut builds) = (0, Vec::new(), 0);
    for p in &infos {
        let info: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let output = &info["output"];
        if output.get("errors").is_some() {
            continue; // a case solc 0.8.30 does not compile (edr_suite.rs skips it too)
        }
        builds += 1;
        let (s, _, d) = compare(output);
        storage += s;
        differ.extend(d.into_iter().map(|d| format!("{}: {d}", p.display())));
    }
    eprintln!("ast layouts: {storage} layouts of {builds} EDR builds compared with solc 0.8.30's");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(
        builds >= 100 && storage >= 200,
        "{builds} builds, {storage} layouts"
    );
}

/// Uniswap v3's core by solc 0.7.6: the pool's `slot0` struct packed in one slot, the ticks,
/// positions and the 65535 observations.
#[test]
fn layouts_computed_from_the_ast_are_solcs_for_uniswap_v3() {
    let output = compile(
        &Path::new(ROOT).join(".tools/solc-0.7.6"),
        "tests/contracts/uniswap-v3-core",
    );
    let pool = &output["contracts"]["contracts/UniswapV3Pool.sol"]["UniswapV3Pool"];
    let labels: Vec<&str> = pool["storageLayout"]["storage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"slot0") && labels.contains(&"observations"),
        "{labels:?}"
    );
    let (s, _, d) = compare(&output);
    eprintln!("ast layouts: {s} layouts of Uniswap v3's core compared with solc 0.7.6's");
    assert!(d.is_empty(), "{}", d.join("\n"));
    assert!(s >= 30, "{s} layouts compared");
}

/// Every contract, library and interface of OpenZeppelin Contracts as npm publishes them (5.7.0,
/// scripts/install-test-tools.sh): ERC4626, AccessControl, governance, the account abstraction
/// and cross-chain contracts, the transient-storage guards among them.
#[test]
fn layouts_computed_from_the_ast_are_solcs_for_openzeppelin_as_npm_publishes_it() {
    let oz = solc_js_0_8_30().join("node_modules/@openzeppelin/contracts");
    assert!(
        oz.join("package.json").is_file(),
        "{} is missing: run scripts/install-test-tools.sh",
        oz.display()
    );
    let dir = std::env::temp_dir().join(format!("chaintrace-oz-npm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("@openzeppelin")).unwrap();
    std::os::unix::fs::symlink(&oz, dir.join("@openzeppelin/contracts")).unwrap();
    let output = compile(&solc_js_0_8_30(), dir.to_str().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    let (s, t, d) = compare(&output);
    eprintln!("ast layouts: {s} storage and {t} transient layouts of OpenZeppelin 5.7.0 compared with solc 0.8.30's");
    assert!(d.is_empty(), "{}", d.join("\n"));
    assert!(s >= 250 && s == t, "{s} {t}");
}
