//! `chaintrace dap` on a mined transaction: the OpenZeppelin project's refused deposit
//! (`tests/contracts/oz/`, OpenZeppelin Contracts 5.4.0 from npm, solc-js 0.8.30 with the
//! optimizer, so `deposit` and `withdraw` share SafeERC20's `_callOptionalReturn`) mined on
//! anvil and opened by `launch {tx, rpcUrl, abi}`, as an editor opens it.
//!
//! The stepping model at every step: the client walks every EVM step of the transaction
//! (`stepIn` with `granularity: instruction`) and then every line (`stepIn`), and at each stop
//! every frame of the stack that has a source must lie inside the function it names. The
//! functions' extents are found in the `.sol` texts on disk by their declarations and brace
//! matching (comments and strings skipped), not by chaintrace. Walking back line by line from
//! the end stops at the same steps as walking forwards. Then the `revert` filter stops at the
//! token's revert with the decoded error, and a step back leaves it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::anvil::{calldata, hex0x, w_addr, w_u};
use crate::dap_client::Client;
use crate::oz_sources::refused_deposit;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contracts/oz");

/// The line extents (1-based, inclusive) of each declaration named `name` in `text`: functions,
/// modifiers, and `constructor` / `fallback` / `receive`, each from its keyword to the brace
/// that closes its body; declarations without a body are left out.
fn extents(text: &str, name: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    // What is code: comments and string literals blanked out, so their braces do not count.
    let mut code = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                code[i] = b' ';
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            while i < b.len() && !b[i..].starts_with(b"*/") {
                if b[i] != b'\n' {
                    code[i] = b' ';
                }
                i += 1;
            }
            for c in &mut code[i..(i + 2).min(b.len())] {
                *c = b' ';
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                code[i] = b' ';
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    let code = String::from_utf8_lossy(&code).into_owned();
    let heads: Vec<String> = match name {
        "constructor" | "fallback" | "receive" => vec![name.to_string()],
        n => vec![format!("function {n}"), format!("modifier {n}")],
    };
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    for head in heads {
        let mut from = 0;
        while let Some(k) = code[from..].find(&head) {
            let at = from + k;
            from = at + head.len();
            let before_ok = at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric();
            let after = code[from..].trim_start();
            if !before_ok || !after.starts_with('(') {
                continue;
            }
            // The body: the first `{` before any `;` (a declaration without a body ends there).
            let rest = &code[from..];
            let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
                continue;
            };
            if semi.is_some_and(|s| s < open) {
                continue;
            }
            let mut depth = 0usize;
            let mut end = None;
            for (j, c) in rest[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(from + open + j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(end) = end {
                out.push((line_of(at), line_of(end)));
            }
        }
    }
    out
}

/// Checks every frame of a stop's stack that has a source: its line lies inside a declaration
/// of the function its name gives, in its file. Returns how many frames were checked.
fn check_stack(
    c: &mut Client,
    texts: &mut BTreeMap<String, String>,
    at: &str,
) -> Result<usize, String> {
    let r = c.request("stackTrace", json!({"threadId": 1}));
    assert_eq!(r["success"], true, "{r}");
    let mut checked = 0;
    for f in r["body"]["stackFrames"].as_array().unwrap() {
        let Some(path) = f["source"]["path"].as_str() else {
            continue;
        };
        let name = f["name"].as_str().unwrap();
        let line = f["line"].as_u64().unwrap() as usize;
        let function = name
            .split_once('(')
            .map_or(name, |(head, _)| head)
            .rsplit_once('.')
            .map_or("", |(_, f)| f);
        if function.is_empty() {
            continue;
        }
        let text = texts.entry(path.to_string()).or_insert_with(|| {
            let on_disk = if Path::new(path).is_absolute() {
                Path::new(path).to_path_buf()
            } else {
                Path::new(DIR).join(path)
            };
            std::fs::read_to_string(&on_disk).unwrap_or_else(|e| panic!("{on_disk:?}: {e}"))
        });
        let spans = extents(text, function);
        if !spans.iter().any(|&(a, b)| a <= line && line <= b) {
            return Err(format!(
                "{at}: frame {name} is shown at {path}:{line}, outside {function} ({spans:?})"
            ));
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn every_step_of_a_mined_transaction_is_inside_the_function_its_stack_names() {
    let w = refused_deposit("solc-output.json");
    let mut c = Client::start();
    let init = c.request("initialize", json!({"adapterID": "chaintrace"}));
    assert_eq!(init["body"]["supportsSteppingGranularity"], true, "{init}");
    let launch = c.request(
        "launch",
        json!({"tx": w.hash, "rpcUrl": w.anvil.url(), "abi": format!("{DIR}/solc-output.json"),
            "stopOnEntry": true}),
    );
    assert_eq!(launch["success"], true, "{launch}");
    c.event("initialized");
    assert_eq!(c.request("configurationDone", json!({}))["success"], true);
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "entry", "{stopped}");

    // Every EVM step, forwards, to the last (where stepping on stays).
    let mut texts = BTreeMap::new();
    let mut wrong = Vec::new();
    let (mut steps, mut frames) = (0usize, 0usize);
    let mut at = c.step();
    assert_eq!(at, 0);
    loop {
        match check_stack(&mut c, &mut texts, &format!("step {at}")) {
            Ok(n) => frames += n,
            Err(e) => wrong.push(e),
        }
        steps += 1;
        let r = c.request(
            "stepIn",
            json!({"threadId": 1, "granularity": "instruction"}),
        );
        assert_eq!(r["success"], true, "{r}");
        c.event("stopped");
        let next = c.step();
        if next == at {
            break;
        }
        assert_eq!(next, at + 1, "one instruction from step {at}");
        at = next;
    }
    assert!(steps > 300, "only {steps} steps");
    assert!(frames > steps, "{frames} frames checked over {steps} steps");
    assert!(
        wrong.is_empty(),
        "{} of {steps} steps show a frame outside its function:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // Every line stop from the entry (`stepIn`: the next line, into calls, as the TUI's `n`
    // walks), the same check; then the revert.
    c.request("reverseContinue", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let (mut stops, mut at) = (0usize, 0usize);
    let mut forward = vec![0usize];
    loop {
        if let Err(e) = check_stack(&mut c, &mut texts, &format!("line stop {stops}")) {
            wrong.push(e);
        }
        c.request("stepIn", json!({"threadId": 1}));
        c.event("stopped");
        let next = c.step();
        if next == at {
            break;
        }
        at = next;
        forward.push(at);
        stops += 1;
        assert!(stops < 5_000, "no end to the line stops");
    }
    // Back from the end, line by line: the same stops, in reverse (the model's `N` and the
    // adapter's stepBack are one move).
    let mut backward = vec![at];
    while at > 0 {
        c.request("stepBack", json!({"threadId": 1}));
        c.event("stopped");
        let prev = c.step();
        assert!(prev < at, "stepBack from {at} went to {prev}");
        at = prev;
        backward.push(at);
    }
    backward.reverse();
    assert_eq!(
        backward, forward,
        "line stops backwards differ from forwards"
    );
    assert!(stops > 10, "only {stops} line stops");
    eprintln!("{steps} steps ({frames} frames checked), {stops} line stops");
    assert!(
        wrong.is_empty(),
        "{} of {stops} line stops show a frame outside its function:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // A breakpoint on the function by the name the tree and the stack print it under (the
    // running contract's, `Coin.transferFrom`, declared in ERC20.sol) stops there.
    let set = c.request(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "Coin.transferFrom"}]}),
    );
    assert_eq!(set["body"]["breakpoints"][0]["verified"], true, "{set}");
    c.request("reverseContinue", json!({"threadId": 1}));
    c.event("stopped");
    c.request("continue", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let top = c.top_frame();
    assert!(
        top["name"]
            .as_str()
            .unwrap()
            .starts_with("Coin.transferFrom("),
        "{top}"
    );
    c.request("setFunctionBreakpoints", json!({"breakpoints": []}));

    // The `revert` filter: the token's revert, its error decoded, in ERC20.sol.
    c.request("reverseContinue", json!({"threadId": 1}));
    c.event("stopped");
    c.request("setExceptionBreakpoints", json!({"filters": ["revert"]}));
    c.request("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "exception", "{stopped}");
    let text = stopped["body"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("reverted: ERC20InsufficientAllowance("),
        "{text}"
    );
    let top = c.top_frame();
    assert_eq!(top["source"]["name"], "ERC20.sol", "{top}");
    let failing = c.step();
    c.request("stepBack", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "step");
    assert!(c.step() < failing);

    assert_eq!(c.request("disconnect", json!({}))["success"], true);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// The check's own ground: declarations found by text in Vault.sol, interfaces' bodiless
/// declarations left out, braces in OpenZeppelin's NatSpec comments not counted.
#[test]
fn the_check_finds_functions_by_their_text() {
    let vault = std::fs::read_to_string(format!("{DIR}/Vault.sol")).unwrap();
    assert_eq!(extents(&vault, "deposit"), [(26, 29)]);
    assert_eq!(extents(&vault, "withdraw"), [(31, 34)]);
    assert_eq!(extents(&vault, "constructor"), [(11, 13), (22, 24)]);
    let ierc20 = std::fs::read_to_string(format!(
        "{DIR}/@openzeppelin/contracts/token/ERC20/IERC20.sol"
    ))
    .unwrap();
    assert_eq!(extents(&ierc20, "transferFrom"), []);
    let erc20 = std::fs::read_to_string(format!(
        "{DIR}/@openzeppelin/contracts/token/ERC20/ERC20.sol"
    ))
    .unwrap();
    let spend = extents(&erc20, "_spendAllowance");
    assert_eq!(spend.len(), 1);
    let (a, b) = spend[0];
    let body: Vec<&str> = erc20.lines().skip(a - 1).take(b - a + 1).collect();
    assert!(body[0].contains("function _spendAllowance("), "{body:?}");
    assert_eq!(body.last().unwrap().trim(), "}");
}

/// What a call returned, in the adapter's Return values scope at its last step: the token's
/// `transfer` returns `true` (OpenZeppelin's ERC20), decoded by its ABI's output.
#[test]
fn a_successful_call_shows_what_it_returned_at_its_last_step() {
    let w = refused_deposit("solc-output.json");
    let to = alloy_primitives::Address::repeat_byte(0x77);
    let (h, r) = w.anvil.send_and_wait(json!({
        "to": w.coin,
        "data": hex0x(&calldata("transfer(address,uint256)", &[w_addr(to), w_u(5)])),
    }));
    assert_eq!(r["status"], "0x1", "{r}");
    let mut c = Client::start();
    c.request("initialize", json!({"adapterID": "chaintrace"}));
    let launch = c.request(
        "launch",
        json!({"tx": format!("{h:?}"), "rpcUrl": w.anvil.url(),
            "abi": format!("{DIR}/solc-output.json"), "stopOnEntry": true}),
    );
    assert_eq!(launch["success"], true, "{launch}");
    c.event("initialized");
    c.request("configurationDone", json!({}));
    c.event("stopped");
    let returned = |c: &mut Client| {
        let top = c.top_frame();
        let scopes = c.request("scopes", json!({"frameId": top["id"]}));
        let scope = scopes["body"]["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "Return values")
            .unwrap()["variablesReference"]
            .clone();
        c.request("variables", json!({"variablesReference": scope}))["body"]["variables"].clone()
    };
    // Nothing is returned before the last step.
    assert_eq!(returned(&mut c), json!([]));
    c.run_to_last_step();
    assert_eq!(
        returned(&mut c),
        json!([{"name": "_0", "value": "true", "variablesReference": 0}])
    );
}
