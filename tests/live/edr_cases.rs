//! Cases of EDR's (Hardhat's) Solidity stack-trace suite, replayed on the pinned anvil: each
//! case's `c.sol` and `test.json` as EDR has them (`tests/contracts/edr/<case>/`, provenance in
//! the README there), built by `scripts/build-srcmap-contracts.sh` with the optimizer off (EDR's
//! default). The test runs the case's transactions as EDR's `test.json` lists them, traces the
//! failing one with `chaintrace tx HASH --abi solc-output.json`, and compares the Solidity
//! stack with EDR's expected frames — contract, function, file and line of each, in order —
//! then with the whole lines chaintrace prints (columns found in the `.sol` text).

use crate::{anvil, run};
use std::path::{Path, PathBuf};

use alloy_primitives::{Address, U256};
use anvil::{hex0x, selector, Anvil, EXPLICIT_GAS};
use serde_json::{json, Value};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contracts/edr");

fn case_dir(case: &str) -> PathBuf {
    Path::new(DIR).join(case)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The build with the optimizer off (EDR's default) and the build under EDR's viaIR
/// configuration (Yul optimizer steps `u`).
const LEGACY: &str = "solc-output.json";
const VIA_IR: &str = "solc-output-viair.json";

/// `file:line:column` of the first occurrence of `needle` in the case's `c.sol`.
fn at(case: &str, needle: &str) -> String {
    let text = std::fs::read_to_string(case_dir(case).join("c.sol")).unwrap();
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {case}/c.sol"));
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    format!("c.sol:{line}:{column}")
}

/// What a case's failing transaction gave: chaintrace's tree and EDR's expected stack trace.
struct Failed {
    tree: String,
    expected: Vec<Value>,
    /// The addresses of the contracts the case deployed, in order.
    deployed: Vec<Address>,
    build: String,
}

/// One ABI word of a `test.json` parameter (the cases use small integers and booleans).
fn word(v: &Value) -> [u8; 32] {
    let n = match v {
        Value::Bool(b) => u128::from(*b),
        Value::Number(n) => u128::from(n.as_u64().expect("a small non-negative parameter")),
        other => panic!("parameter {other} is not one the cases use"),
    };
    U256::from(n).to_be_bytes()
}

/// Runs the case's transactions on a fresh anvil as EDR's `test.json` lists them: deployments
/// (`file`, `contract`), then calls (`to`: the index of a deployment; `function` and `params`
/// or raw `data`; `value`). The one transaction with a `stackTrace` must fail; it is traced
/// with `build` (one of the case's outputs) as `--abi`.
fn run_case(case: &str, build: &str) -> Failed {
    let dir = case_dir(case);
    let test = read_json(&dir.join("test.json"));
    let out = read_json(&dir.join(build));
    let anvil = Anvil::start();
    let mut deployed: Vec<(Address, String)> = Vec::new();
    let mut failed = None;
    for tx in test["transactions"].as_array().unwrap() {
        if let Some(contract) = tx["contract"].as_str() {
            let file = tx["file"].as_str().unwrap();
            let code = out["contracts"][file][contract]["evm"]["bytecode"]["object"]
                .as_str()
                .unwrap_or_else(|| panic!("{case}: no {file}:{contract} in the build"));
            deployed.push((anvil.deploy(code), contract.to_string()));
            continue;
        }
        let (to, contract) = &deployed[tx["to"].as_u64().unwrap() as usize];
        let data = match (tx["function"].as_str(), tx["data"].as_str()) {
            (Some(name), _) => {
                let abi = out["contracts"]["c.sol"][contract]["abi"]
                    .as_array()
                    .unwrap();
                let f = abi
                    .iter()
                    .find(|e| e["type"] == "function" && e["name"] == name)
                    .unwrap_or_else(|| panic!("{case}: no function {name}"));
                let types: Vec<&str> = f["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["type"].as_str().unwrap())
                    .collect();
                let mut data = selector(&format!("{name}({})", types.join(","))).to_vec();
                for p in tx["params"].as_array().into_iter().flatten() {
                    data.extend_from_slice(&word(p));
                }
                hex0x(&data)
            }
            (None, Some(raw)) => raw.to_string(),
            (None, None) => "0x".to_string(),
        };
        let value = tx["value"].as_u64().unwrap_or(0);
        let (h, r) = anvil.send_and_wait(json!({
            "to": to, "data": data, "value": anvil::qty(value.into()),
            "gas": format!("{EXPLICIT_GAS:#x}"),
        }));
        let Some(expected) = tx["stackTrace"].as_array() else {
            assert_eq!(
                r["status"], "0x1",
                "{case}: a setup transaction failed: {r}"
            );
            continue;
        };
        assert_eq!(r["status"], "0x0", "{case}: expected a failure, got {r}");
        let hash = format!("{h:?}");
        let output = dir.join(build);
        let run = run::cmd(&[
            "tx",
            &hash,
            "--rpc-url",
            anvil.url(),
            "--abi",
            output.to_str().unwrap(),
        ])
        .no_cache()
        .run();
        assert_eq!(
            run.code, 3,
            "{case}: exit {} (3: the transaction failed): {}",
            run.code, run.stderr
        );
        failed = Some((run.stdout, expected.clone()));
    }
    let (tree, expected) = failed.unwrap_or_else(|| panic!("{case}: no failing transaction"));
    Failed {
        tree,
        expected,
        deployed: deployed.into_iter().map(|(a, _)| a).collect(),
        build: build.to_string(),
    }
}

/// The `Solidity stack trace:` lines after the tree.
fn stack(tree: &str) -> Vec<String> {
    tree.lines()
        .skip_while(|l| *l != "Solidity stack trace:")
        .skip(1)
        .map(|l| l.trim().to_string())
        .collect()
}

/// (contract, function, file, line) of a stack line `at C.f(args) (file:line:col)[, …]`.
fn frame_of(line: &str) -> (String, String, String, u64) {
    let rest = line
        .strip_prefix("at ")
        .unwrap_or_else(|| panic!("{line:?}"));
    let name_end = rest.find(['(', ' ']).unwrap();
    let (contract, function) = rest[..name_end].split_once('.').unwrap();
    let loc = rest.rsplit_once(" (").unwrap().1;
    let loc = &loc[..loc.find(')').unwrap()];
    let mut parts = loc.split(':');
    let file = parts.next().unwrap().to_string();
    let line_no = parts.next().unwrap().parse().unwrap();
    (contract.into(), function.into(), file, line_no)
}

/// EDR's expected frames, innermost first as chaintrace prints them, its function names in
/// chaintrace's words: `<fallback>` is `fallback`, `<receive>` (and the `""` a case gives the
/// receive function, at its declaration) is `receive`.
fn edr_frames(expected: &[Value]) -> Vec<(String, String, String, u64)> {
    expected
        .iter()
        .rev()
        .map(|e| {
            let s = &e["sourceReference"];
            let function = match s["function"].as_str().unwrap() {
                "<fallback>" => "fallback",
                "<receive>" | "" => "receive",
                f => f,
            };
            (
                s["contract"].as_str().unwrap().to_string(),
                function.to_string(),
                s["file"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The case's Solidity stack equals EDR's frames, and is `lines` exactly. Under viaIR the
/// lines of call-stack entries are not compared with EDR's (its own runner compares none of
/// those entries there); `lines` still fixes them.
fn assert_stack(case: &str, f: &Failed, lines: &[String]) {
    let got = stack(&f.tree);
    let mut frames: Vec<_> = got.iter().map(|l| frame_of(l)).collect();
    let mut want = edr_frames(&f.expected);
    if f.build == VIA_IR {
        let kinds = f.expected.iter().rev().map(|e| e["type"].as_str());
        for ((got, want), kind) in frames.iter_mut().zip(want.iter_mut()).zip(kinds) {
            if kind == Some("CALLSTACK_ENTRY") {
                (got.3, want.3) = (0, 0);
            }
        }
    }
    assert_eq!(
        frames, want,
        "{case} ({}): not EDR's frames:\n{}",
        f.build, f.tree
    );
    assert_eq!(got, lines, "{case} ({}):\n{}", f.build, f.tree);
}

/// A proxy's fallback creates its implementation and delegates to it from an internal
/// function's assembly: the fallback is a frame at its call of `forward`, though no JUMP marks
/// an entry into it (the dispatcher runs it inline). Under viaIR, solc's source map gives the
/// DELEGATECALL (and every instruction of the block) the whole `assembly { … }` block, line
/// 17, not the `delegatecall` line (19): `forward` is shown there, as the map says. EDR's own
/// runner compares no call-stack entry and no line under viaIR (hardhat-tests'
/// `compareStackTraces`: "if IR is enabled, we ignore callstack entries").
#[test]
fn edr_proxy_fallback_frame() {
    for build in [LEGACY, VIA_IR] {
        proxy_fallback_frame(build);
    }
}

fn proxy_fallback_frame(build: &str) {
    let case = "proxy";
    let f = run_case(case, build);
    assert_eq!(f.expected.last().unwrap()["message"], "D failed");
    assert!(
        f.tree.contains("reverted: Error(\"D failed\") at "),
        "{}",
        f.tree
    );
    // The implementation C created: its first CREATE (C's nonce 1).
    let d = f.deployed[0].create(1);
    assert_stack(
        case,
        &f,
        &[
            format!("at D.r ({})", at(case, "revert(\"D failed\")")),
            format!("at D.fail ({}), reached by DELEGATECALL", at(case, "r();")),
            match build {
                // The argument's value is not shown where its stack place is not exact.
                VIA_IR => format!("at C.forward(implementation) ({})", at(case, "assembly {")),
                _ => format!(
                    "at C.forward(implementation: {d}) ({})",
                    at(case, "delegatecall(gas()")
                ),
            },
            match build {
                // The JUMP into `forward` is mapped to its argument.
                VIA_IR => format!("at C.fallback ({})", at(case, "address(d))")),
                _ => format!("at C.fallback ({})", at(case, "forward(address(d))")),
            },
        ],
    );
}

/// Value sent to a public state variable's getter, which is not payable: the failure is the
/// getter's, at the variable's declaration (EDR's FUNCTION_NOT_PAYABLE_ERROR).
fn funds_to_getter(case: &str, signature: &str) {
    for build in [LEGACY, VIA_IR] {
        funds_to_getter_in(case, signature, build);
    }
}

fn funds_to_getter_in(case: &str, signature: &str, build: &str) {
    let f = run_case(case, build);
    let [e] = &f.expected[..] else {
        panic!("{case}: one entry expected")
    };
    assert_eq!(e["type"], "FUNCTION_NOT_PAYABLE_ERROR");
    let value = e["value"].as_u64().unwrap();
    // The declaration, from its type: `uint[] public a;`.
    let text = std::fs::read_to_string(case_dir(case).join("c.sol")).unwrap();
    let decl = at(
        case,
        text.lines()
            .find(|l| l.contains(" public a;"))
            .unwrap()
            .trim(),
    );
    let first = f.tree.lines().next().unwrap();
    assert!(
        first.contains(&format!(
            "✗ execution reverted (`{signature}` is not payable but was sent {value} wei)"
        )) && first.ends_with(&format!(" at {decl}")),
        "{case}:\n{}",
        f.tree
    );
    assert_stack(case, &f, &[format!("at C.a ({decl})")]);
}

#[test]
fn edr_funds_to_public_array_getter() {
    funds_to_getter("funds-to-public-array-access", "a(uint256)");
}

#[test]
fn edr_funds_to_public_mapping_getter() {
    funds_to_getter("funds-to-public-mapping-access", "a(uint256)");
}

#[test]
fn edr_funds_to_public_nested_mapping_getter() {
    funds_to_getter(
        "funds-to-public-multiple-mapping-access",
        "a(uint256,uint8,int256)",
    );
}

/// A receive function's modifier calls a private function that reverts: the receive function
/// (at its declaration, where it invokes the modifier), the modifier at its call, the private
/// function at its `require` — with the optimizer off and under viaIR, where the modifier is a
/// function of its own whose JUMP into the private function the map spans as the whole
/// modifier.
#[test]
fn edr_modifier_calling_a_private_function() {
    let case = "modifier-private-method";
    for build in [LEGACY, VIA_IR] {
        modifier_calling_a_private_function(case, build);
    }
}

fn modifier_calling_a_private_function(case: &str, build: &str) {
    let f = run_case(case, build);
    assert!(
        f.tree.contains("reverted: Error(\"I'm reverted\") at "),
        "{}",
        f.tree
    );
    assert_stack(
        case,
        &f,
        &[
            format!("at C.checkReverted ({})", at(case, "require(!isReverted")),
            format!("at C.revertIf ({})", at(case, "checkReverted();")),
            format!("at C.receive ({})", at(case, "receive()")),
        ],
    );
}
