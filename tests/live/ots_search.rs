//! Otterscan's address history (`ots_searchTransactionsBefore`/`After`) from the address
//! index, against anvil 1.7.1's own answers through a proxy that refuses `ots_*`: every
//! scenario address, several page sizes and starting blocks, whole JSON equal.

use serde_json::{json, Value};

use crate::anvil;
use crate::proxy::{self, Proxy};
use crate::serve_support::Serve;

fn call(serve: &Serve, method: &str, params: Value) -> Result<Value, Value> {
    let text = serve
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    let v: Value = serde_json::from_str(&text).unwrap();
    match v.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(v["result"].clone()),
    }
}

#[test]
fn address_history_pages_equal_anvils() {
    let s = anvil::scenario();
    let head = anvil::parse_u64(&s.anvil.rpc("eth_blockNumber", json!([])));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ix");
    let out_s = out.to_str().unwrap();
    let r = proxy::chaintrace(&[
        "index",
        &format!("1..{head}"),
        "--out",
        out_s,
        "--rpc-url",
        &s.url,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p = Proxy::start(&s.url, &["--deny", "ots_"]);
    let serve = Serve::start(&p.url, &["--index", out_s]);
    // Without the index: an error naming what is missing, never an empty history.
    let plain = Serve::start(&p.url, &[]);
    let sender = s.addr("sender");
    let e = call(
        &plain,
        "ots_searchTransactionsBefore",
        json!([sender, 0, 25]),
    )
    .unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("--index"), "{e}");

    let mut pages = 0;
    let mut txs = 0;
    for (name, a) in &s.addresses {
        for size in [1u64, 2, 5, 25] {
            for block in [0, 2, head / 2, head, head + 1] {
                for method in [
                    "ots_searchTransactionsBefore",
                    "ots_searchTransactionsAfter",
                ] {
                    let params = json!([a, block, size]);
                    let theirs = s.anvil.rpc(method, params.clone());
                    let ours = call(&serve, method, params.clone())
                        .unwrap_or_else(|e| panic!("{name}: {method} {params}: {e}"));
                    assert_eq!(ours, theirs, "{name}: {method} {params}");
                    pages += 1;
                    txs += ours["txs"].as_array().unwrap().len();
                }
            }
        }
    }
    // Bad input: JSON-RPC errors.
    for bad in [
        json!(["0x12", 0, 25]),
        json!([sender, "x", 25]),
        json!([sender, 0, 0]),
    ] {
        let e = call(&serve, "ots_searchTransactionsBefore", bad.clone()).unwrap_err();
        assert_eq!(e["code"], -32602, "{bad}: {e}");
    }
    eprintln!("ots search: {pages} pages ({txs} transactions) equal to anvil's");
}
