//! `serve`'s Parity methods where `parity_live.rs` does not look: `trace_replayBlockTransactions`
//! with `["trace"]` against anvil's own for every scenario block (anvil's entries mapped to
//! reth's by the same named differences, `parity_live::as_reth`), and reth's answers to what it
//! does not have: `trace_get` as the `index`-th entry of `trace_transaction`'s list (reth
//! `TraceApi::trace_get_index`: `traces.into_iter().nth(index)`; `null` unless exactly one
//! index), `null` for an unknown transaction or block (reth's `Option` results), -32602 for a
//! malformed hash.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::anvil;
use crate::parity_live::as_reth;
use crate::serve_support::Serve;

/// The `result` of one call (`null` included); panics on an error.
fn call(serve: &Serve, method: &str, params: Value) -> Value {
    let text = serve
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v.get("error").is_none(), "{method}: {text}");
    v["result"].clone()
}

#[test]
fn replay_block_transactions_equal_anvils_and_trace_get_takes_list_indices() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let mut blocks = BTreeSet::new();
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let list = call(&serve, "trace_transaction", json!([hash]));
        let list = list.as_array().unwrap();
        for (i, entry) in list.iter().enumerate() {
            let got = call(&serve, "trace_get", json!([hash, [format!("{i:#x}")]]));
            assert_eq!(&got, entry, "{}: trace_get {i}", t.label);
        }
        let past = format!("{:#x}", list.len());
        assert_eq!(
            call(&serve, "trace_get", json!([hash, [past]])),
            Value::Null
        );
        assert_eq!(
            call(&serve, "trace_get", json!([hash, ["0x0", "0x0"]])),
            Value::Null
        );
        assert_eq!(call(&serve, "trace_get", json!([hash, []])), Value::Null);
        blocks.insert(anvil::parse_u64(&s.anvil.receipt(t.hash)["blockNumber"]));
    }
    for n in &blocks {
        let n = format!("{n:#x}");
        let got = call(
            &serve,
            "trace_replayBlockTransactions",
            json!([n, ["trace"]]),
        );
        let mut want = s
            .anvil
            .rpc("trace_replayBlockTransactions", json!([n, ["trace"]]));
        for r in want.as_array_mut().unwrap() {
            // as_reth groups entries by transaction: give anvil's bare entries their hash.
            let hash = r["transactionHash"].clone();
            let mut entries = r["trace"].clone();
            for e in entries.as_array_mut().unwrap() {
                e["transactionHash"] = hash.clone();
            }
            let mut entries = as_reth(&entries);
            for e in entries.as_array_mut().unwrap() {
                e.as_object_mut().unwrap().remove("transactionHash");
            }
            r["trace"] = entries;
        }
        assert_eq!(got, want, "trace_replayBlockTransactions {n}");
    }
    eprintln!(
        "parity: trace_get on {} transactions, trace_replayBlockTransactions on {} blocks equal to anvil's",
        s.txs.len(),
        blocks.len()
    );
}

#[test]
fn unknown_transaction_and_block_are_null_and_bad_params_refused() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let none = format!("{:?}", alloy_primitives::B256::repeat_byte(0x11));
    assert_eq!(
        call(&serve, "trace_transaction", json!([none])),
        Value::Null
    );
    assert_eq!(
        call(&serve, "trace_get", json!([none, ["0x0"]])),
        Value::Null
    );
    assert_eq!(
        call(&serve, "trace_block", json!(["0xffffff"])),
        Value::Null
    );
    let text = serve.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trace_transaction", "params": ["0x12"]})
            .to_string(),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], json!(-32602), "{text}");
}
