//! `serve`'s `trace_filter` against anvil's own on the scenario chain, through a proxy that
//! refuses `trace_filter` (so nothing is forwarded): the whole chain unfiltered equal to
//! anvil's entries mapped to reth's (`parity_live::as_reth`: reth drops precompile calls that
//! anvil lists), and for address filters, union and intersection, `after` and `count`, the
//! entries anvil's own filter selects (named by transaction and action) equal to ours.
//!
//! Departures from anvil, each reth's rule (reth `crates/rpc/rpc/src/trace.rs`,
//! `TraceApi::trace_filter`): a range past the node's head is "block not found" (-32001; anvil
//! traces what it has), and the range bound is `--max-filter-blocks` (reth's 100 by default,
//! anvil's fixed 300) with reth's message.

use serde_json::{json, Value};

use crate::anvil;
use crate::parity_live::as_reth;
use crate::proxy::Proxy;
use crate::serve_support::Serve;

fn post(serve: &Serve, params: Value) -> Value {
    let text = serve.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trace_filter", "params": [params]})
            .to_string(),
    );
    serde_json::from_str(&text).unwrap()
}

fn result(serve: &Serve, params: Value) -> Value {
    let v = post(serve, params.clone());
    assert!(v.get("error").is_none(), "trace_filter {params}: {v}");
    v["result"].clone()
}

fn error_code(serve: &Serve, params: Value) -> (i64, String) {
    let v = post(serve, params.clone());
    let e = &v["error"];
    assert!(
        e.is_object(),
        "trace_filter {params}: expected an error, got {v}"
    );
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

/// An entry's identity, what anvil's filter and ours must agree on whatever the numbering.
fn identity(e: &Value) -> Value {
    json!([
        e["transactionHash"],
        e["type"],
        e["action"],
        e["result"],
        e["error"]
    ])
}

/// The identities of a list of entries, in order.
pub(crate) fn identities(v: &Value) -> Vec<Value> {
    v.as_array().unwrap().iter().map(identity).collect()
}

#[test]
fn trace_filter_answers_as_anvil_over_a_node_without_it() {
    let s = anvil::scenario();
    let proxy = Proxy::start(&s.url, &["--deny", "trace_filter"]);
    // The proxy really refuses the method: an answer below cannot be anvil's forwarded.
    let (_, refused) = chaintrace::rpc::transport::post_json(
        &proxy.url,
        &[],
        json!({"jsonrpc": "2.0", "id": 1, "method": "trace_filter", "params": [{}]}).to_string(),
        std::time::Duration::from_secs(30),
        1 << 20,
    )
    .unwrap_or_else(|e| panic!("POST {}: {}", proxy.url, e.reason()));
    let refused: Value = serde_json::from_str(&refused).unwrap();
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let serve = Serve::start(&proxy.url, &[]);
    let head = anvil::parse_u64(&s.anvil.rpc("eth_blockNumber", json!([])));
    let whole = json!({"fromBlock": "0x0", "toBlock": format!("{head:#x}")});

    // The whole chain, unfiltered.
    let all = result(&serve, whole.clone());
    let want = as_reth(&s.anvil.rpc("trace_filter", json!([whole])));
    assert_eq!(all, want, "trace_filter over blocks 0..{head}");
    let all = all.as_array().unwrap().clone();
    assert!(all.len() > 20, "the scenario gives {} entries", all.len());

    // Address filters: anvil selects the entries, ours must be the same ones, in order.
    let (sender, logger, hub) = (s.addr("sender"), s.addr("Logger"), s.addr("Hub"));
    let filters = [
        json!({"fromAddress": [sender]}),
        json!({"toAddress": [logger]}),
        json!({"toAddress": [hub, logger], "mode": "union", "fromAddress": [sender]}),
        json!({"fromAddress": [sender], "toAddress": [hub], "mode": "intersection"}),
        json!({"fromAddress": [hub]}),
        json!({"after": 3, "count": 5}),
        json!({"fromAddress": [sender], "after": 2}),
        json!({"fromAddress": [sender], "count": 1}),
        json!({"after": 100000}),
    ];
    let mut compared = 0;
    for f in filters {
        let mut f = f.clone();
        f["fromBlock"] = json!("0x0");
        f["toBlock"] = json!(format!("{head:#x}"));
        let ours = result(&serve, f.clone());
        // anvil's entries as reth's: its precompile calls dropped, its error names reth's (the
        // numbering of what is left is checked against the whole chain's below).
        let theirs = as_reth(&s.anvil.rpc("trace_filter", json!([f])));
        let (a, b) = (identities(&ours), identities(&theirs));
        if a != b {
            let at = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            panic!(
                "trace_filter {f}: {} entries, anvil {}; first difference at {at}: ours {:?}, anvil {:?}",
                a.len(),
                b.len(),
                a.get(at),
                b.get(at)
            );
        }
        // Each entry ours returns is the whole chain's entry, numbering included.
        for e in ours.as_array().unwrap() {
            assert!(all.contains(e), "{f}: {e} is not among the chain's entries");
        }
        compared += 1;
    }
    // One block, by a sender that sent nothing there: nothing.
    let tx = s.tx(&s.txs[0].label);
    let n = s.anvil.receipt(tx.hash)["blockNumber"].clone();
    assert_eq!(
        result(
            &serve,
            json!({"fromBlock": n, "toBlock": n, "fromAddress": [s.addr("carol")]})
        ),
        json!([])
    );
    // `count` 0 asks for nothing: an error at once (reth and anvil answer `[]`, `take(0)`).
    let (code, msg) = error_code(&serve, json!({"count": 0}));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32602,
            "invalid parameters: count must be at least 1 (0 asks for no entry)"
        )
    );

    // Bad input: JSON-RPC errors, never a hang.
    let (code, msg) = error_code(&serve, json!({"fromBlock": "0x5", "toBlock": "0x2"}));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32602,
            "invalid parameters: fromBlock cannot be greater than toBlock"
        )
    );
    let (code, msg) = error_code(&serve, json!({"fromBlock": format!("{:#x}", head + 10)}));
    assert_eq!(code, -32001, "{msg}");
    assert!(msg.starts_with("block not found"), "{msg}");
    let (code, msg) = error_code(&serve, json!({"fromAddress": ["0x12"]}));
    assert_eq!(code, -32602, "{msg}");
    let (code, _) = error_code(&serve, json!({"fromBlock": "latest"}));
    assert_eq!(code, -32602);
    let v = serde_json::from_str::<Value>(&serve.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trace_filter", "params": []}).to_string(),
    ))
    .unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");

    // The range bound: reth's rule, toBlock - fromBlock at most --max-filter-blocks.
    let tight = Serve::start(&proxy.url, &["--max-filter-blocks", "2"]);
    let three = result(&tight, json!({"fromBlock": "0x1", "toBlock": "0x3"}));
    let want: Vec<&Value> = all
        .iter()
        .filter(|e| (1..=3).contains(&e["blockNumber"].as_u64().unwrap()))
        .collect();
    assert_eq!(three.as_array().unwrap().iter().collect::<Vec<_>>(), want);
    let (code, msg) = error_code(&tight, json!({"fromBlock": "0x1", "toBlock": "0x4"}));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32602,
            "Block range too large; currently limited to 2 blocks"
        )
    );
    eprintln!(
        "trace_filter: {} entries over blocks 0..{head} and {compared} filters equal to anvil's",
        all.len()
    );
}
