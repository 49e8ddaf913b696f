//! The address index: `chaintrace index A..B --out DIR` over the scenario chain, and `serve
//! --index DIR` answering `trace_filter` by address from it — the same entries as anvil's own
//! `trace_filter` (through a proxy that refuses the method), over a range far past
//! `--max-filter-blocks`, replaying only the blocks that touch the address — kept current as
//! blocks arrive, and after anvil's `anvil_reorg` never answering from the old chain.

use serde_json::{json, Value};

use crate::anvil;
use crate::parity_live::as_reth;
use crate::proxy::{self, Proxy};
use crate::serve_support::Serve;
use crate::trace_filter::identities;

fn filter(serve: &Serve, f: &Value) -> Result<Value, Value> {
    let text = serve.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trace_filter", "params": [f]}).to_string(),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    match v.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(v["result"].clone()),
    }
}

fn same_as_anvils(s: &anvil::Scenario, serve: &Serve, f: &Value) -> usize {
    let ours = filter(serve, f).unwrap_or_else(|e| panic!("trace_filter {f}: {e}"));
    let theirs = as_reth(&s.anvil.rpc("trace_filter", json!([f])));
    assert_eq!(identities(&ours), identities(&theirs), "trace_filter {f}");
    ours.as_array().unwrap().len()
}

#[test]
fn the_index_answers_trace_filter_by_address_and_follows_the_chain_through_a_reorg() {
    let s = anvil::scenario();
    let head = anvil::parse_u64(&s.anvil.rpc("eth_blockNumber", json!([])));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ix");
    let out_s = out.to_str().unwrap();
    let range = format!("1..{head}");
    let r = proxy::chaintrace(&["index", &range, "--out", out_s, "--rpc-url", &s.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("holds blocks 1..{head}")),
        "{}",
        r.stderr
    );
    // Again: nothing left to do.
    let again = proxy::chaintrace(&["index", &range, "--out", out_s, "--rpc-url", &s.url]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("already indexed"), "{}", again.stderr);
    // A gap after the index is refused (exit 1), as is another chain's node.
    let gap = format!("{}..{}", head + 5, head + 6);
    let bad = proxy::chaintrace(&["index", &gap, "--out", out_s, "--rpc-url", &s.url]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);

    let p = Proxy::start(&s.url, &["--deny", "trace_filter"]);
    // One block apart per request at most: only the index makes these ranges answerable.
    let serve = Serve::start(
        &p.url,
        &[
            "--index",
            out_s,
            "--index-poll",
            "1",
            "--max-filter-blocks",
            "8",
        ],
    );
    let plain = Serve::start(&p.url, &["--max-filter-blocks", "8"]);
    let whole = |extra: Value| {
        let mut f = json!({"fromBlock": "0x1", "toBlock": format!("{head:#x}")});
        for (k, v) in extra.as_object().unwrap() {
            f[k] = v.clone();
        }
        f
    };
    // Every scenario address whose history spans few enough blocks for the bound, by anvil's
    // own account: each asked as a recipient and as a sender, over the whole chain.
    let mut compared = 0;
    let mut addresses = 0;
    for (name, a) in &s.addresses {
        for side in ["toAddress", "fromAddress"] {
            let f = whole(json!({side: [a]}));
            let theirs = s.anvil.rpc("trace_filter", json!([f]));
            let blocks: std::collections::BTreeSet<u64> = theirs
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["blockNumber"].as_u64().unwrap())
                .collect();
            if blocks.is_empty() || blocks.len() > 8 {
                continue;
            }
            compared += same_as_anvils(&s, &serve, &f);
            addresses += 1;
            // Without the index the same range is refused.
            let e = filter(&plain, &f).unwrap_err();
            assert_eq!(e["code"], -32602, "{name}: {e}");
        }
    }
    assert!(addresses >= 3, "only {addresses} filters fit the bound");
    let logger = s.addr("Logger");
    let f = whole(json!({"toAddress": [logger], "after": 1, "count": 2}));
    if filter(&plain, &f).is_err() && filter(&serve, &f).is_ok() {
        compared += same_as_anvils(&s, &serve, &f);
    }
    assert!(compared > 0);
    // Before the index starts: an error, never a partial answer.
    let e = filter(
        &serve,
        &json!({"fromBlock": "0x0", "toBlock": "0x2", "toAddress": [logger]}),
    )
    .unwrap_err();
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("not in the address index"),
        "{e}"
    );

    // A new block: indexed by the time it is asked for (the query syncs first).
    let c = "0x000000000000000000000000000000000000c0de";
    s.anvil.rpc("anvil_setCode", json!([c, "0x600160005500"]));
    let alice = s.addr("alice");
    let (tx, _) = s
        .anvil
        .send_and_wait(json!({"from": alice, "to": c, "gas": "0x20000"}));
    let n = anvil::parse_u64(&s.anvil.receipt(tx)["blockNumber"]);
    let at = |f: Value| {
        let mut f = f;
        f["fromBlock"] = json!(format!("{:#x}", n.saturating_sub(20).max(1)));
        f["toBlock"] = json!(format!("{n:#x}"));
        f
    };
    let to_c = at(json!({"toAddress": [c]}));
    assert_eq!(same_as_anvils(&s, &serve, &to_c), 1);
    // anvil replaces that block with one whose transaction calls elsewhere.
    let d = "0x000000000000000000000000000000000000d00d";
    s.anvil.rpc("anvil_setCode", json!([d, "0x600260005500"]));
    s.anvil.rpc(
        "anvil_reorg",
        json!([1, [[{"from": alice, "to": d, "gas": "0x20000"}, 0]]]),
    );
    assert_eq!(
        anvil::parse_u64(&s.anvil.rpc("eth_blockNumber", json!([]))),
        n
    );
    // Never the old chain's answer: the transaction to `c` is gone, the one to `d` is there.
    assert_eq!(same_as_anvils(&s, &serve, &to_c), 0);
    assert_eq!(
        same_as_anvils(&s, &serve, &at(json!({"toAddress": [d]}))),
        1
    );
    drop(serve);
    // The file holds the new chain: extending it finds nothing stale.
    let after = format!("1..{n}");
    let r = proxy::chaintrace(&["index", &after, "--out", out_s, "--rpc-url", &s.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("already indexed"), "{}", r.stderr);
    assert!(!r.stderr.contains("no longer the node's"), "{}", r.stderr);
    eprintln!("index: {addresses} filters, {compared} entries over blocks 1..{head} equal to anvil's; a new block and a reorg followed");
}
