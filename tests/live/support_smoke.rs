//! Smoke test of the live-node support module: the scenario runs on a local
//! anvil, every transaction has a receipt with the expected status, and
//! anvil's own callTracer / prestateTracer answer for each one.

use crate::anvil;
use serde_json::json;
use std::time::Instant;

#[test]
fn scenario_receipts_and_node_traces() {
    let t0 = Instant::now();
    let s = anvil::scenario();
    eprintln!(
        "scenario(): {} txs in {:?} at {}",
        s.txs.len(),
        t0.elapsed(),
        s.url
    );

    assert_eq!(s.anvil.chain_id(), 31337);
    assert!(s.multi_tx_block.len() >= 3);

    let mut blocks = std::collections::BTreeMap::<u64, usize>::new();
    for tx in &s.txs {
        let r = s.anvil.receipt(tx.hash);
        let want = if tx.expect_success { "0x1" } else { "0x0" };
        assert_eq!(r["status"], want, "{}: {} receipt {r}", tx.label, tx.hash);
        *blocks
            .entry(anvil::parse_u64(&r["blockNumber"]))
            .or_default() += 1;

        let call = s.anvil.trace(tx.hash, json!({"tracer": "callTracer"}));
        assert!(
            call["type"].is_string(),
            "{}: callTracer gave {call}",
            tx.label
        );
        assert_eq!(
            call.get("error").is_none(),
            tx.expect_success,
            "{}: callTracer error field vs expected status: {call}",
            tx.label
        );
        let pre = s.anvil.trace(tx.hash, json!({"tracer": "prestateTracer"}));
        assert!(pre.is_object(), "{}: prestateTracer gave {pre}", tx.label);
    }
    assert!(
        blocks.values().any(|&n| n >= 3),
        "no block with 3+ txs: {blocks:?}"
    );
    eprintln!("smoke total: {:?}", t0.elapsed());
}
