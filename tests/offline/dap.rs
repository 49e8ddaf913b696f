//! `chaintrace dap` driven by a Debug Adapter Protocol client (Content-Length framing over a
//! pipe, as VS Code and nvim-dap speak it) on the bundled fixture: a function breakpoint on
//! `failCustom`, its stack and its argument (`code` = 48879), continue to the revert at
//! Helpers.sol:65 (the `revert` exception filter), step back, and disconnect; bad messages
//! answered with errors, never a crash.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::dap_client::Client;

const FIXTURE: &str = "fixtures/reverted-nested.json";

fn revert_line() -> usize {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sol = std::fs::read_to_string(root.join("tests/contracts/Helpers.sol")).unwrap();
    1 + sol
        .lines()
        .position(|l| l.contains("revert Custom(code, msg.sender, \"custom error\")"))
        .unwrap()
}

#[test]
fn an_editor_stops_at_the_revert_shows_the_stack_and_arguments_and_steps_back() {
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({"adapterID": "chaintrace", "linesStartAt1": true}),
    );
    assert_eq!(init["success"], true, "{init}");
    assert_eq!(init["body"]["supportsStepBack"], true);
    assert_eq!(
        init["body"]["exceptionBreakpointFilters"][0]["filter"],
        "revert"
    );
    let launch = c.request("launch", json!({"fixture": FIXTURE, "stopOnEntry": false}));
    assert_eq!(launch["success"], true, "{launch}");
    c.event("initialized");
    // A breakpoint on a function the transaction enters, one on nothing, one in a file that
    // is not in the build.
    let f = c.request(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "failCustom"}, {"name": "noSuchFunction"}]}),
    );
    assert_eq!(f["body"]["breakpoints"][0]["verified"], true, "{f}");
    assert_eq!(f["body"]["breakpoints"][1]["verified"], false, "{f}");
    let elsewhere = c.request(
        "setBreakpoints",
        json!({"source": {"path": "/nowhere/Other.sol"}, "breakpoints": [{"line": 3}]}),
    );
    assert_eq!(elsewhere["success"], true, "{elsewhere}");
    assert_eq!(elsewhere["body"]["breakpoints"][0]["verified"], false);
    let ex = c.request("setExceptionBreakpoints", json!({"filters": ["revert"]}));
    assert_eq!(ex["success"], true, "{ex}");
    assert_eq!(c.request("configurationDone", json!({}))["success"], true);

    // Stopped entering failCustom: its frame, its argument.
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped}");
    let top = c.top_frame();
    assert_eq!(top["name"], "Reverter.failCustom(code: 48879)", "{top}");
    assert_eq!(top["source"]["name"], "Helpers.sol", "{top}");
    let threads = c.request("threads", json!({}));
    assert_eq!(threads["body"]["threads"][0]["id"], 1);
    let scopes = c.request("scopes", json!({"frameId": top["id"]}));
    let args = &scopes["body"]["scopes"][0];
    assert_eq!(args["name"], "Arguments", "{scopes}");
    let vars = c.request(
        "variables",
        json!({"variablesReference": args["variablesReference"]}),
    );
    assert_eq!(
        vars["body"]["variables"],
        json!([{"name": "code", "value": "48879", "variablesReference": 0}])
    );
    let eval = c.request(
        "evaluate",
        json!({"expression": "code", "frameId": top["id"]}),
    );
    assert_eq!(eval["body"]["result"], "48879", "{eval}");
    // The whole stack, as `tx` prints it.
    let stack = c.request("stackTrace", json!({"threadId": 1}));
    let names: Vec<&str> = stack["body"]["stackFrames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Reverter.failCustom(code: 48879)",
            "Hub.failInner(code: 48879)",
            "Hub.failNested(code: 48879)"
        ]
    );

    // Continue: the revert, at Helpers.sol's line, with the decoded error.
    let r = c.request("continue", json!({"threadId": 1}));
    assert_eq!(r["success"], true, "{r}");
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "exception", "{stopped}");
    let text = stopped["body"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "reverted: Custom(code: 48879, who: 0xa513E6E4b8f2a923D98304ec87F64353C4D5C853"
        ),
        "{text}"
    );
    let top = c.top_frame();
    assert_eq!(top["line"], revert_line(), "{top}");
    assert_eq!(top["name"], "Reverter.failCustom(code: 48879)", "{top}");
    // The source is served by reference where it is not on disk at the build's path.
    if let Some(reference) = top["source"]["sourceReference"].as_u64() {
        let s = c.request("source", json!({"sourceReference": reference}));
        let content = s["body"]["content"].as_str().unwrap();
        assert!(content.contains("revert Custom(code, msg.sender"), "{s}");
    }

    // Step back: the revert is inside its line, so first to that line's first step (as gdb's
    // reverse-step stops at the start of the current line), then to the line before it.
    let r = c.request("stepBack", json!({"threadId": 1}));
    assert_eq!(r["success"], true, "{r}");
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "step");
    let start = c.top_frame();
    assert_eq!(start["line"], top["line"], "{start} {top}");
    c.request("stepBack", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "step");
    let back = c.top_frame();
    assert!(
        back["line"] != top["line"] || back["name"] != top["name"],
        "{back} {top}"
    );
    // And forwards again to the revert.
    c.request("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "exception", "{stopped}");
    // Past the revert the transaction ends.
    c.request("continue", json!({"threadId": 1}));
    c.event("terminated");

    // Bad messages: an unknown command, a body that is not JSON; the adapter goes on.
    let unknown = c.request("frobnicate", json!({}));
    assert_eq!(unknown["success"], false);
    assert_eq!(unknown["message"], "unknown command: frobnicate");
    c.events.clear();
    c.write_raw(b"{not json");
    let out = c.event("output");
    assert!(
        out["body"]["output"].as_str().unwrap().contains("not JSON"),
        "{out}"
    );
    let bad_frame = c.request("scopes", json!({"frameId": 99}));
    assert_eq!(bad_frame["success"], false, "{bad_frame}");
    assert_eq!(c.request("disconnect", json!({}))["success"], true);
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < until, "the adapter did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A launch the adapter cannot open is an error response naming why; the client gone (its
/// input closed), the adapter exits.
#[test]
fn a_bad_launch_is_an_error_and_a_closed_client_ends_the_adapter() {
    let mut c = Client::start();
    c.request("initialize", json!({}));
    let r = c.request("launch", json!({"fixture": "fixtures/no-such-file.json"}));
    assert_eq!(r["success"], false, "{r}");
    assert!(
        r["message"].as_str().unwrap().contains("no-such-file"),
        "{r}"
    );
    let r = c.request("launch", json!({"tx": "0x12"}));
    assert_eq!(r["success"], false, "{r}");
    let r = c.request("stackTrace", json!({"threadId": 1}));
    assert_eq!(r["success"], false, "{r}");
    drop(c.input);
    let until = Instant::now() + Duration::from_secs(10);
    while c.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < until, "the adapter did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}
