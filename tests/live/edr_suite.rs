//! EDR's (Hardhat's) Solidity stack-trace suite, all of it: every case of its `test-files/0_8`
//! (vendored in `tests/contracts/edr/0_8`, provenance in `tests/contracts/edr/README.md`) that
//! EDR's runner runs with solc 0.8.30 and the optimizer off, replayed on the pinned anvil and
//! judged as EDR's `compareStackTraces` judges (hardhat-tests'
//! `test/internal/hardhat-network/stack-traces/test.ts`).
//!
//! The cases are compiled at test time by `scripts/compile-edr-suite.js` with the pinned solc-js
//! (`.tools/js/node_modules/solc`, scripts/install-test-tools.sh), one compilation per case as
//! EDR's runner does, cached under `target/edr-suite/`. Each case runs on a fresh state of one
//! anvil per worker (`evm_snapshot`/`evm_revert` between cases); its failing transaction is
//! traced with `chaintrace tx HASH --abi <the case's build info>` (the compiler's input and
//! output, as EDR's runner gives EDR).
//!
//! Which cases count (M): EDR's runner skips a case whose test.json says `skip`, or whose `solc`
//! range the compiler's version does not satisfy (`defineTest`); of the others, the cases with
//! a transaction that has a `stackTrace` — the ones whose stack trace it compares. The rest
//! (console.log output, transactions that must succeed) judge no stack trace.
//!
//! All 222 cases match. [`NOT_YET`] stays as the ratchet's place: the test fails when a case
//! differs that is not listed there, and when a listed one starts to match.

use crate::{anvil, run};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use alloy_dyn_abi::{DynSolType, DynSolValue};
use alloy_primitives::Address;
use anvil::{hex0x, selector, Anvil};
use serde_json::{json, Value};

/// The cases that do not match yet (see the module's docs for why), a ratchet: the test fails
/// when any other case differs, and when one of these starts to match (take it off the list).
const NOT_YET: &[&str] = &[];

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SOLC_VERSION: (u64, u64, u64) = (0, 8, 30);

fn suite_dir() -> PathBuf {
    Path::new(ROOT).join("tests/contracts/edr/0_8")
}

pub(crate) fn build_dir() -> PathBuf {
    Path::new(ROOT).join("target/edr-suite/solc-0.8.30")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// The case directories (relative to the suite), sorted: every directory with a test.json.
fn cases(dir: &Path, rel: &str, acc: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            let name = p.file_name().unwrap().to_str().unwrap();
            let sub = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            cases(&p, &sub, acc);
        }
    }
    if dir.join("test.json").exists() {
        acc.push(rel.to_string());
    }
}

/// `semver.satisfies(0.8.30, range)` for the ranges the suite uses: `^0.x.y`.
fn solc_satisfies(range: &str) -> bool {
    let v = range
        .strip_prefix('^')
        .unwrap_or_else(|| panic!("solc range {range:?} is not one the suite uses"));
    let p: Vec<u64> = v.split('.').map(|n| n.parse().unwrap()).collect();
    let (maj, min, pat) = SOLC_VERSION;
    assert_eq!(p[0], 0, "solc range {range:?}");
    // ^0.a.b: >=0.a.b <0.(a+1).0
    maj == 0 && min == p[1] && pat >= p[2]
}

/// Why EDR's runner would not compare this case's stack trace, if it would not.
fn not_applicable(test: &Value) -> Option<&'static str> {
    if test["skip"] == true {
        return Some("skip");
    }
    if let Some(range) = test["solc"].as_str() {
        if !solc_satisfies(range) {
            return Some("solc range");
        }
    }
    let txs = test["transactions"].as_array().unwrap();
    if !txs.iter().any(|tx| tx.get("stackTrace").is_some()) {
        return Some("no stack trace");
    }
    None
}

/// Compiles the suite (cached): `scripts/compile-edr-suite.js` with the pinned solc-js; once
/// per test binary (tests/live/ast_layouts.rs reads the same outputs).
pub(crate) fn compile() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(compile_suite);
}

fn compile_suite() {
    let solc_js = Path::new(ROOT).join(".tools/js");
    assert!(
        solc_js.join("node_modules/solc/package.json").exists(),
        "solc-js is not installed in {}: run scripts/install-test-tools.sh",
        solc_js.display()
    );
    let out = std::process::Command::new("node")
        .arg(Path::new(ROOT).join("scripts/compile-edr-suite.js"))
        .arg(suite_dir())
        .arg(build_dir())
        .arg(&solc_js)
        .output()
        .expect("node");
    assert!(
        out.status.success(),
        "compile-edr-suite.js failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `test.json` parameter as text alloy's ABI coercion reads.
fn param_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(param_text).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// `params` ABI-encoded as the `inputs` of an ABI entry (EDR: ethereumjs-abi's `rawEncode`).
fn encode_params(inputs: &[Value], params: &[Value]) -> Result<Vec<u8>, String> {
    let mut values = Vec::new();
    for (input, p) in inputs.iter().zip(params) {
        let ty = input["type"].as_str().unwrap();
        let t = DynSolType::parse(ty).map_err(|e| format!("type {ty}: {e}"))?;
        values.push(
            t.coerce_str(&param_text(p))
                .map_err(|e| format!("{p} as {ty}: {e}"))?,
        );
    }
    Ok(DynSolValue::Tuple(values).abi_encode_params())
}

/// A deployed contract: its address and where the build has it.
struct Deployed {
    address: Address,
    file: String,
    contract: String,
}

/// What chaintrace printed for a case's failing transaction.
struct Traced {
    tx_index: usize,
    stdout: String,
    stderr: String,
    code: i32,
    expected: Vec<Value>,
}

/// Runs a case's transactions on `anvil` as EDR's runner does (`runTest`): deployments (with
/// libraries linked and constructor parameters), then calls (`data`, or `function`/`params`),
/// each with its `value` and `gas` (EDR's default: 4,000,000). A transaction without a
/// `stackTrace` must succeed; the one with one must fail, and is traced.
fn run_case(anvil: &Anvil, rel: &str, test: &Value) -> Result<Traced, String> {
    let build = build_dir().join(rel).join("build-info.json");
    let out = read_json(&build)["output"].take();
    if let Some(errors) = out.get("errors") {
        return Err(format!("compilation failed: {errors}"));
    }
    let mut deployed: Vec<Option<Deployed>> = Vec::new();
    let mut traced = None;
    for (i, tx) in test["transactions"].as_array().unwrap().iter().enumerate() {
        let value = match &tx["value"] {
            Value::Null => 0u128,
            Value::Number(n) => n.as_u64().unwrap().into(),
            Value::String(s) => s.parse().map_err(|e| format!("value {s}: {e}"))?,
            other => return Err(format!("tx {i}: value {other}")),
        };
        let gas = tx["gas"].as_u64().unwrap_or(4_000_000);
        let params: Vec<Value> = tx["params"].as_array().cloned().unwrap_or_default();
        let mut request = json!({
            "value": anvil::qty(value),
            "gas": format!("{gas:#x}"),
        });
        let creating = tx.get("file").is_some();
        if creating {
            let file = tx["file"].as_str().unwrap();
            let contract = tx["contract"].as_str().unwrap();
            let c = &out["contracts"][file][contract];
            let bytecode = &c["evm"]["bytecode"];
            let mut code = bytecode["object"]
                .as_str()
                .ok_or_else(|| format!("tx {i}: no {file}:{contract} in the build"))?
                .to_string();
            if let Some(refs) = bytecode["linkReferences"].as_object() {
                for (lib_file, libs) in refs {
                    for (lib, places) in libs.as_object().unwrap() {
                        let at = tx["libraries"][lib_file][lib]
                            .as_u64()
                            .ok_or_else(|| format!("tx {i}: library {lib_file}:{lib} missing"))?;
                        let addr = deployed
                            .get(at as usize)
                            .and_then(|d| d.as_ref())
                            .ok_or_else(|| format!("tx {i}: library tx {at} deployed nothing"))?
                            .address;
                        let hex = alloy_primitives::hex::encode(addr);
                        for p in places.as_array().unwrap() {
                            let start = p["start"].as_u64().unwrap() as usize * 2;
                            code.replace_range(start..start + 40, &hex);
                        }
                    }
                }
            }
            let mut data = alloy_primitives::hex::decode(&code).map_err(|e| e.to_string())?;
            let ctor = c["abi"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["type"] == "constructor");
            if let (Some(ctor), false) = (ctor, params.is_empty()) {
                let inputs = ctor["inputs"].as_array().unwrap();
                data.extend(encode_params(inputs, &params).map_err(|e| format!("tx {i}: {e}"))?);
            }
            request["data"] = json!(hex0x(&data));
        } else {
            let to = tx["to"].as_u64().unwrap() as usize;
            let target = deployed
                .get(to)
                .and_then(|d| d.as_ref())
                .ok_or_else(|| format!("tx {i}: tx {to} deployed no contract"))?;
            let data = if let Some(raw) = tx["data"].as_str() {
                raw.to_string()
            } else if let Some(name) = tx["function"].as_str() {
                let abi = out["contracts"][&target.file][&target.contract]["abi"]
                    .as_array()
                    .unwrap();
                let f = abi
                    .iter()
                    .find(|e| {
                        e["name"] == name
                            && e["inputs"].as_array().map(|a| a.len()) == Some(params.len())
                    })
                    .ok_or_else(|| format!("tx {i}: no function {name}/{}", params.len()))?;
                let inputs = f["inputs"].as_array().unwrap();
                let types: Vec<&str> = inputs.iter().map(|i| i["type"].as_str().unwrap()).collect();
                let mut data = selector(&format!("{name}({})", types.join(","))).to_vec();
                data.extend(encode_params(inputs, &params).map_err(|e| format!("tx {i}: {e}"))?);
                hex0x(&data)
            } else {
                "0x".to_string()
            };
            request["to"] = json!(target.address);
            request["data"] = json!(data);
        }
        let hash = anvil.send(request);
        let receipt = anvil.receipt(hash);
        let ok = receipt["status"] == "0x1";
        deployed.push(match (creating, ok) {
            (true, true) => Some(Deployed {
                address: receipt["contractAddress"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap(),
                file: tx["file"].as_str().unwrap().to_string(),
                contract: tx["contract"].as_str().unwrap().to_string(),
            }),
            _ => None,
        });
        let Some(expected) = tx["stackTrace"].as_array() else {
            if !ok {
                return Err(format!("transaction {i} shouldn't have failed"));
            }
            continue;
        };
        if ok {
            return Err(format!("transaction {i} should have failed"));
        }
        let r = run::cmd(&[
            "tx",
            &format!("{hash:?}"),
            "--rpc-url",
            anvil.url(),
            "--abi",
            build.to_str().unwrap(),
        ])
        .no_cache()
        .run();
        traced = Some(Traced {
            tx_index: i,
            stdout: r.stdout,
            stderr: r.stderr,
            code: r.code,
            expected: expected.clone(),
        });
        // EDR's cases have one failing transaction each; the rest would run on its state.
        break;
    }
    traced.ok_or_else(|| "no failing transaction".to_string())
}

/// A source reference as EDR's entries carry one: contract, file, function (none for a
/// contract-level reference), line.
#[derive(Debug, Clone, PartialEq)]
struct SourceRef {
    /// None for a free (file-level) function.
    contract: Option<String>,
    file: String,
    function: Option<String>,
    line: u64,
}

/// One entry of a Solidity stack trace in EDR's terms (`SolidityStackTraceEntry`): what
/// `compareStackTraces` reads of it.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    kind: String,
    message: String,
    value: Option<u128>,
    error_code: Option<String>,
    source: Option<SourceRef>,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.message.is_empty() {
            write!(f, " {:?}", self.message)?;
        }
        if let Some(v) = self.value {
            write!(f, " value {v}")?;
        }
        if let Some(c) = &self.error_code {
            write!(f, " errorCode {c}")?;
        }
        if let Some(s) = &self.source {
            let function = s.function.as_deref().unwrap_or("-");
            let contract = s.contract.as_deref().unwrap_or("-");
            write!(f, " {contract}.{function} {}:{}", s.file, s.line)?;
        }
        Ok(())
    }
}

/// EDR's expected entries (test.json `stackTrace`).
fn expected_entries(expected: &[Value]) -> Vec<Entry> {
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_u64().map(u128::from),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    expected
        .iter()
        .map(|e| Entry {
            kind: e["type"].as_str().unwrap().to_string(),
            message: e["message"].as_str().unwrap_or_default().to_string(),
            value: e.get("value").and_then(number),
            error_code: e["errorCode"].as_str().map(str::to_string),
            source: e.get("sourceReference").map(|s| SourceRef {
                contract: s["contract"].as_str().map(str::to_string),
                file: s["file"].as_str().unwrap().to_string(),
                // The receive function is `<receive>`, and `""` where a case gives it so (at
                // its declaration, where it invokes a modifier), as tests/live/edr_cases.rs
                // maps EDR's names.
                function: s["function"].as_str().map(|f| match f {
                    "" => "<receive>".to_string(),
                    f => f.to_string(),
                }),
                line: s["line"].as_u64().unwrap(),
            }),
        })
        .collect()
}

/// A line of chaintrace's `Solidity stack trace:` section: `at C.f(args) (file:line:col)`,
/// `at C (file:line:col)` (the contract, no function), with `, reached by CALL` when the
/// function is the first of a frame its caller entered by a call.
struct Frame {
    source: SourceRef,
    reached_by_call: bool,
}

fn parse_frame(line: &str) -> Result<Frame, String> {
    let bad = || format!("unreadable stack line {line:?}");
    let rest = line.strip_prefix("at ").ok_or_else(bad)?;
    let name_end = rest.find(['(', ' ']).ok_or_else(bad)?;
    let (contract, function) = match rest[..name_end].split_once('.') {
        Some((c, f)) => (c, Some(f)),
        None => (&rest[..name_end], None),
    };
    let (before, reached) = match rest.rsplit_once("), reached by ") {
        Some((b, _)) => (b, true),
        None => (rest.strip_suffix(')').ok_or_else(bad)?, false),
    };
    let loc = before.rsplit_once(" (").ok_or_else(bad)?.1;
    let mut parts = loc.split([':', ';']);
    let file = parts.next().ok_or_else(bad)?.to_string();
    let line_no = parts.next().and_then(|l| l.parse().ok()).ok_or_else(bad)?;
    // chaintrace's names for the special functions, in EDR's words.
    let function = function.map(|f| {
        match f {
            "fallback" => "<fallback>",
            "receive" => "<receive>",
            f => f,
        }
        .to_string()
    });
    Ok(Frame {
        source: SourceRef {
            // `at .f`: a free (file-level) function, of no contract.
            contract: (!contract.is_empty()).then(|| contract.to_string()),
            file,
            function,
            line: line_no,
        },
        reached_by_call: reached,
    })
}

/// A custom error's arguments as chaintrace prints them (`E(x: 0, a: 0x…, p: (4, 5))`) in
/// EDR's words (`E(0, "0x…", [4, 5])`: names dropped, hex quoted, tuples as arrays).
fn edr_custom_error(printed: &str) -> Option<String> {
    fn value(s: &[char], i: &mut usize, out: &mut String) -> Option<()> {
        // A name (`x: `) before the value.
        let start = *i;
        while *i < s.len() && (s[*i].is_alphanumeric() || s[*i] == '_') {
            *i += 1;
        }
        if s.get(*i) == Some(&':') && s.get(*i + 1) == Some(&' ') && *i > start {
            *i += 2;
        } else {
            *i = start;
        }
        match s.get(*i)? {
            '[' | '(' => {
                let close = if s[*i] == '[' { ']' } else { ')' };
                *i += 1;
                out.push('[');
                let mut first = true;
                while s.get(*i)? != &close {
                    if !first {
                        if s.get(*i)? != &',' {
                            return None;
                        }
                        *i += 1;
                        while s.get(*i) == Some(&' ') {
                            *i += 1;
                        }
                        out.push_str(", ");
                    }
                    first = false;
                    value(s, i, out)?;
                }
                *i += 1;
                out.push(']');
            }
            '"' => {
                out.push('"');
                *i += 1;
                while s.get(*i)? != &'"' {
                    if s[*i] == '\\' {
                        out.push(s[*i]);
                        *i += 1;
                    }
                    out.push(*s.get(*i)?);
                    *i += 1;
                }
                *i += 1;
                out.push('"');
            }
            _ => {
                let start = *i;
                while *i < s.len() && !matches!(s[*i], ',' | ')' | ']') {
                    *i += 1;
                }
                let atom: String = s[start..*i].iter().collect();
                if atom.starts_with("0x") {
                    out.push_str(&format!("\"{atom}\""));
                } else {
                    out.push_str(&atom);
                }
            }
        }
        Some(())
    }
    let open = printed.find('(')?;
    let chars: Vec<char> = printed[open..].chars().collect();
    let mut i = 0;
    let mut args = String::new();
    value(&chars, &mut i, &mut args)?;
    (i == chars.len()).then_some(())?;
    let inner = &args[1..args.len() - 1];
    Some(format!(
        "reverted with custom error '{}({inner})'",
        &printed[..open]
    ))
}

/// The innermost failure as chaintrace describes it (the `reverted: DESC at …` line), as EDR's
/// error entry: its type, message, value and error code.
fn error_entry(desc: &str) -> Entry {
    let entry = |kind: &str| Entry {
        kind: kind.to_string(),
        message: String::new(),
        value: None,
        error_code: None,
        source: None,
    };
    let wei = |text: &str| -> Option<u128> {
        let before = text.strip_suffix(" wei")?;
        before.rsplit(' ').next()?.replace(',', "").parse().ok()
    };
    if let Some(quoted) = desc
        .strip_prefix("Error(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let mut e = entry("REVERT_ERROR");
        e.message = serde_json::from_str(quoted).unwrap_or_else(|_| quoted.to_string());
        return e;
    }
    if let Some(code) = desc.strip_prefix("Panic(0x") {
        let mut e = entry("PANIC_ERROR");
        let end = code.find([':', ')']).unwrap_or(code.len());
        e.error_code = Some(code[..end].to_lowercase());
        return e;
    }
    if let Some(why) = desc.strip_prefix("no revert data: ") {
        let (kind, value) = if why.contains("` is not payable but was sent ") {
            ("FUNCTION_NOT_PAYABLE_ERROR", wei(why))
        } else if why
            .starts_with("there is no receive function, and the fallback function is not payable")
        {
            ("FALLBACK_NOT_PAYABLE_AND_NO_RECEIVE_ERROR", wei(why))
        } else if why.starts_with("the fallback function is not payable") {
            ("FALLBACK_NOT_PAYABLE_ERROR", wei(why))
        } else if why.starts_with("no function matches selector")
            && why.ends_with("and there is no fallback function")
        {
            ("UNRECOGNIZED_FUNCTION_WITHOUT_FALLBACK_ERROR", None)
        } else if why == "the call data matches no function and there is no fallback function"
            || why.starts_with("no receive or fallback function to take the")
        {
            ("MISSING_FALLBACK_OR_RECEIVE_ERROR", None)
        } else if why.starts_with("function call to a non-contract account") {
            ("NONCONTRACT_ACCOUNT_CALLED_ERROR", None)
        } else if why.starts_with("the call returned") && why.contains("could not decode") {
            ("RETURNDATA_SIZE_ERROR", None)
        } else if why.starts_with("the call data does not decode as") {
            ("INVALID_PARAMS_ERROR", None)
        } else if why.starts_with("a library called directly") {
            ("DIRECT_LIBRARY_CALL_ERROR", None)
        } else {
            ("REVERT_ERROR", None)
        };
        let mut e = entry(kind);
        e.value = value;
        return e;
    }
    if desc == "no revert data" {
        return entry("REVERT_ERROR");
    }
    if desc.starts_with("insufficient balance for transfer") {
        return entry("CALL_FAILED_ERROR");
    }
    if desc.starts_with("out of gas") {
        return entry("CONTRACT_CALL_RUN_OUT_OF_GAS_ERROR");
    }
    if let Some(message) = edr_custom_error(desc) {
        let mut e = entry("CUSTOM_ERROR");
        e.message = message;
        return e;
    }
    let mut e = entry("OTHER_EXECUTION_ERROR");
    e.message = desc.to_string();
    e
}

/// chaintrace's output for a failed transaction as EDR's entries: the stack's frames outermost
/// first as CALLSTACK_ENTRYs, the innermost as the error entry (its type from the failure's
/// description). EDR's runner traces with `ignoreContracts: true`: contracts whose names start
/// with "Ignored" are not recognized (edr_solidity's artifacts.rs). A call into one is one
/// UNRECOGNIZED_CONTRACT_CALLSTACK_ENTRY (UNRECOGNIZED_CREATE_… for its constructor), and its
/// failure an UNRECOGNIZED_CONTRACT_ERROR (…_CREATE_ERROR), none with a source reference.
fn actual_entries(stdout: &str) -> Result<Vec<Entry>, String> {
    let desc = stdout
        .lines()
        .find_map(|l| l.strip_prefix("reverted: "))
        .ok_or("no `reverted:` line")?;
    let desc = desc.rsplit_once(" at ").map_or(desc, |(d, _)| d);
    let lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "Solidity stack trace:")
        .skip(1)
        .map(str::trim)
        .take_while(|l| l.starts_with("at "))
        .collect();
    let frames = lines
        .iter()
        .map(|l| parse_frame(l))
        .collect::<Result<Vec<_>, _>>()?;
    // Outermost first, each call's frames grouped: a call's first function is the one
    // reached by the call.
    let mut calls: Vec<Vec<Frame>> = Vec::new();
    for f in frames.into_iter().rev() {
        let starts_call = calls.is_empty() || f.reached_by_call;
        if starts_call {
            calls.push(vec![f]);
        } else {
            calls.last_mut().unwrap().push(f);
        }
    }
    let mut error = error_entry(desc);
    let mut entries = Vec::new();
    let n = calls.len();
    for (i, call) in calls.into_iter().enumerate() {
        let innermost_call = i + 1 == n;
        let ignored = call[0]
            .source
            .contract
            .as_deref()
            .is_some_and(|c| c.starts_with("Ignored"));
        let create = call[0].source.function.as_deref() == Some("constructor");
        if ignored {
            if innermost_call {
                error.kind = if create {
                    "UNRECOGNIZED_CREATE_ERROR"
                } else {
                    "UNRECOGNIZED_CONTRACT_ERROR"
                }
                .to_string();
                error.error_code = None;
                error.value = None;
                if !desc.starts_with("Error(") {
                    error.message = String::new();
                }
                return Ok(entries.into_iter().chain([error]).collect());
            }
            entries.push(Entry {
                kind: if create {
                    "UNRECOGNIZED_CREATE_CALLSTACK_ENTRY"
                } else {
                    "UNRECOGNIZED_CONTRACT_CALLSTACK_ENTRY"
                }
                .to_string(),
                message: String::new(),
                value: None,
                error_code: None,
                source: None,
            });
            continue;
        }
        let m = call.len();
        for (j, f) in call.into_iter().enumerate() {
            if innermost_call && j + 1 == m {
                error.source = Some(f.source);
            } else {
                entries.push(Entry {
                    kind: "CALLSTACK_ENTRY".into(),
                    message: String::new(),
                    value: None,
                    error_code: None,
                    source: Some(f.source),
                });
            }
        }
    }
    entries.push(error);
    Ok(entries)
}

/// EDR's `compareStackTraces` with the optimizer off: the same length; each entry's type,
/// message (none expected: an empty one), value and error code (none expected: none), and
/// source reference (contract, file, function, line; none expected: none).
fn compare(actual: &[Entry], expected: &[Entry]) -> Result<(), String> {
    let show = |es: &[Entry]| {
        es.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let differs = |what: String| {
        Err(format!(
            "{what}\n      expected: {}\n      got:      {}",
            show(expected),
            show(actual)
        ))
    };
    if actual.len() != expected.len() {
        return differs(format!(
            "expected a trace of length {} but got one with length {}",
            expected.len(),
            actual.len()
        ));
    }
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        if a.kind != e.kind {
            return differs(format!("entry {i} type"));
        }
        if a.message != e.message {
            return differs(format!("entry {i} message"));
        }
        if a.value != e.value {
            return differs(format!("entry {i} value"));
        }
        if a.error_code != e.error_code {
            return differs(format!("entry {i} errorCode"));
        }
        match (&a.source, &e.source) {
            (_, None) if a.source.is_some() => {
                return differs(format!("entry {i} shouldn't have a sourceReference"))
            }
            (None, Some(_)) => return differs(format!("entry {i}: expected a source reference")),
            (Some(a), Some(e)) if a != e => {
                return differs(format!("entry {i} source reference"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Judges one traced case; `Err` says how it differs from EDR's expectation.
fn judge(t: &Traced) -> Result<(), String> {
    if t.code != 3 {
        return Err(format!(
            "chaintrace exit {} (3: the transaction failed): {}",
            t.code,
            t.stderr.trim()
        ));
    }
    let actual = actual_entries(&t.stdout)?;
    compare(&actual, &expected_entries(&t.expected))
}

/// Where the tree of each case is written, for reading a failure.
fn dump_dir() -> PathBuf {
    Path::new(ROOT).join("target/edr-suite/runs")
}

#[test]
fn edr_suite_0_8() {
    let started = Instant::now();
    compile();
    let mut all = Vec::new();
    cases(&suite_dir(), "", &mut all);
    let mut skipped: Vec<(String, &str)> = Vec::new();
    let mut todo: Vec<(String, Value)> = Vec::new();
    for rel in all {
        let test = read_json(&suite_dir().join(&rel).join("test.json"));
        match not_applicable(&test) {
            Some(why) => skipped.push((rel, why)),
            None => todo.push((rel, test)),
        }
    }
    // An optional filter: EDR_CASE=<substring of a case's path>.
    if let Ok(only) = std::env::var("EDR_CASE") {
        todo.retain(|(rel, _)| rel.contains(&only));
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(String, Result<(), String>)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    std::fs::create_dir_all(dump_dir()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let anvil = Anvil::start_with_args(&["--hardfork", "cancun"]);
                let mut snapshot = anvil.rpc("evm_snapshot", json!([]));
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((rel, test)) = todo.get(i) else {
                        break;
                    };
                    let verdict = run_case(&anvil, rel, test).and_then(|t| {
                        let dump = dump_dir().join(rel.replace('/', "__") + ".txt");
                        let _ = std::fs::write(
                            dump,
                            format!(
                                "exit {}\n{}\n--- stderr\n{}\n--- expected (tx {})\n{:#}\n",
                                t.code,
                                t.stdout,
                                t.stderr,
                                t.tx_index,
                                Value::Array(t.expected.clone())
                            ),
                        );
                        judge(&t)
                    });
                    results.lock().unwrap().push((rel.clone(), verdict));
                    assert_eq!(anvil.rpc("evm_revert", json!([snapshot])), json!(true));
                    snapshot = anvil.rpc("evm_snapshot", json!([]));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let failed: Vec<_> = results.iter().filter(|(_, r)| r.is_err()).collect();
    let mut report = format!(
        "EDR 0_8: {} of {} cases match ({} not applicable: {}; {:.0?})\n",
        results.len() - failed.len(),
        results.len(),
        skipped.len(),
        ["skip", "solc range", "no stack trace"]
            .iter()
            .map(|w| format!("{w} {}", skipped.iter().filter(|s| s.1 == *w).count()))
            .collect::<Vec<_>>()
            .join(", "),
        started.elapsed(),
    );
    for (rel, r) in &failed {
        report.push_str(&format!("  {rel}: {}\n", r.as_ref().unwrap_err()));
    }
    eprintln!("{report}");
    let failing: Vec<&str> = failed.iter().map(|(rel, _)| rel.as_str()).collect();
    let regressed: Vec<&&str> = failing.iter().filter(|c| !NOT_YET.contains(c)).collect();
    assert!(
        regressed.is_empty(),
        "cases that matched before differ: {regressed:?}\n{report}"
    );
    let fixed: Vec<&&str> = NOT_YET.iter().filter(|c| !failing.contains(c)).collect();
    assert!(
        fixed.is_empty(),
        "now matching, take them off NOT_YET: {fixed:?}\n{report}"
    );
}
