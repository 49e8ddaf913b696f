//! Splicing on tiny offline examples: node frames matched, diffs read, notes written.

use super::*;
use crate::trace::errors::FrameError;
use alloy_primitives::Bytes;
use serde_json::json;

/// A geth callTracer frame (every field geth always prints).
fn frame(to: &str, gas_used: &str, extra: Value) -> Value {
    let mut f = json!({"from": "0x00000000000000000000000000000000000000aa", "gas": "0x100000",
        "gasUsed": gas_used, "to": to, "input": "0x", "type": "CALL", "value": "0x0"});
    f.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    f
}

#[test]
fn frames_into_stateful_precompiles_are_taken_in_call_order() {
    let rules = crate::chain::rules::rules_at(1329, 200_000_000).unwrap();
    let inner = frame(
        "0x0000000000000000000000000000000000001005",
        "0x20",
        json!({"error": "execution reverted", "output": "0x"}),
    );
    let trace = frame(
        "0x00000000000000000000000000000000000000aa",
        "0x99",
        json!({"calls": [
            frame("0x0000000000000000000000000000000000001001", "0x10", json!({"output": "0x01"})),
            frame("0x0000000000000000000000000000000000000bbb", "0x50", json!({"calls": [inner]})),
            frame("0x0000000000000000000000000000000000001003", "0x30", json!({}))
        ]}),
    );
    let f = frames_from_call_trace(&trace, &rules).unwrap();
    assert_eq!(f.len(), 3);
    assert_eq!(f[0].gas_used, 0x10);
    assert_eq!(f[0].output, Some(Bytes::from(vec![1u8])));
    assert_eq!(f[1].error, Some(FrameError::Reverted));
}

/// A node answer that is not a callTracer frame (here an unreadable gasUsed) gives no
/// frames at all: nothing is spliced with a guessed gas of 0.
#[test]
fn an_unreadable_node_trace_gives_no_frames() {
    let rules = crate::chain::rules::rules_at(1329, 200_000_000).unwrap();
    let bad = frame(
        "0x00000000000000000000000000000000000000aa",
        "0x99",
        json!({"calls": [frame("0x0000000000000000000000000000000000001001", "lots", json!({}))]}),
    );
    assert_eq!(frames_from_call_trace(&bad, &rules), None);
    assert_eq!(frames_from_call_trace(&json!("oops"), &rules), None);
}

/// A node diff that is not geth's diff shape is no comparison: the self-check then never
/// claims the node's post-state agrees.
#[test]
fn an_unreadable_node_diff_checks_nothing() {
    let info = crate::source::chain_data::BlockInfo {
        number: 200_000_000,
        ..Default::default()
    };
    let env = crate::replay::EvmEnv::new(revm::primitives::hardfork::SpecId::PRAGUE, 1329, &info);
    let trace = frame(
        "0x00000000000000000000000000000000000000aa",
        "0x1",
        json!({}),
    );
    for diff in [
        json!({"pre": {}}),
        json!({"pre": {}, "post": {"0xzz": {}}}),
        json!(7),
    ] {
        let s = Splice::from_node(Ok(&trace), Some(&diff), &env, &Splice::default());
        s.record_post(&EvmState::default());
        assert_eq!(s.state_check(), None, "{diff}");
    }
    let good = json!({"pre": {}, "post": {}});
    let s = Splice::from_node(Ok(&trace), Some(&good), &env, &Splice::default());
    assert_eq!(s.state_check(), Some((0, Vec::new())));
}
