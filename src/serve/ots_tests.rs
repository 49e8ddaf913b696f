//! `ots.rs`'s tests: Erigon's tracer rules over call trees, its paging, the parameters.

use super::*;

fn frame(kind: CallKind, from: u8, to: u8, value: u64, calls: Vec<CallFrame>) -> CallFrame {
    let mut f: CallFrame = serde_json::from_value(json!({
        "from": Address::repeat_byte(from), "gas": "0x0", "gasUsed": "0x0",
        "to": Address::repeat_byte(to), "input": "0x12345678",
        "type": kind.as_str(),
    }))
    .unwrap();
    f.value = (kind != CallKind::Staticcall).then(|| U256::from(value));
    f.calls = calls;
    f
}

/// Erigon's rules: the transaction's own frame is no internal operation; a call that brings
/// value into a frame that self-destructs is one, and so is the self-destruct; a failed
/// CREATE is listed at the address it tried.
#[test]
fn internal_operations_follow_erigons_tracer() {
    let mut failed = frame(CallKind::Create, 2, 9, 0, vec![]);
    failed.to = None;
    failed.create_address = Some(Address::repeat_byte(9));
    failed.error = Some(crate::trace::errors::FrameError::Failed("reverted".into()));
    let root = frame(
        CallKind::Call,
        1,
        2,
        5,
        vec![
            frame(
                CallKind::Call,
                2,
                3,
                7,
                vec![frame(CallKind::Selfdestruct, 3, 4, 7, vec![])],
            ),
            frame(CallKind::Delegatecall, 2, 5, 5, vec![]),
            frame(CallKind::Call, 2, 6, 0, vec![]),
            failed,
        ],
    );
    let ops = internal_operations(&root);
    let got: Vec<(u8, u8, u8, u64)> = ops
        .iter()
        .map(|o| (o.kind, o.from.0[0], o.to.0[0], o.value.to::<u64>()))
        .collect();
    assert_eq!(got, [(0, 2, 3, 7), (1, 3, 4, 7), (2, 2, 9, 0)]);
    let entries = trace_entries(&root);
    let kinds: Vec<(&str, usize, Option<u64>)> = entries
        .iter()
        .map(|e| (e.kind, e.depth, e.value.map(|v| v.to::<u64>())))
        .collect();
    assert_eq!(
        kinds,
        [
            ("CALL", 0, Some(5)),
            ("CALL", 1, Some(7)),
            ("SELFDESTRUCT", 2, Some(7)),
            ("DELEGATECALL", 1, None),
            ("CALL", 1, Some(0)),
            ("CREATE", 1, Some(0)),
        ]
    );
    assert_eq!(entries[5].to, Address::repeat_byte(9));
    assert_eq!(
        serde_json::to_value(&entries[3]).unwrap(),
        json!({"type": "DELEGATECALL", "depth": 1, "from": Address::repeat_byte(2),
            "to": Address::repeat_byte(5), "value": null, "input": "0x12345678",
            "output": "0x"})
    );
}

/// Erigon's paging: page 0 is the last `size` transactions, a short first page holds the
/// rest, pages past it are empty.
#[test]
fn pages_count_from_the_last_transaction() {
    assert_eq!(page_range(6, 0, 4), 2..6);
    assert_eq!(page_range(6, 1, 4), 0..2);
    assert_eq!(page_range(6, 2, 4), 0..0);
    assert_eq!(page_range(6, 0, 25), 0..6);
    assert_eq!(page_range(0, 0, 25), 0..0);
    assert_eq!(page_range(6, u64::MAX, u64::MAX), 0..0);
}

#[test]
fn params_are_checked() {
    assert_eq!(number_param(&json!([7]), 0).unwrap(), 7);
    assert_eq!(number_param(&json!(["0x7"]), 0).unwrap(), 7);
    assert_eq!(number_param(&json!(["7"]), 0).unwrap_err().code, -32602);
    assert_eq!(block_param(&json!([]), 0).unwrap(), "latest");
    assert_eq!(block_param(&json!([16]), 0).unwrap(), "0x10");
    assert_eq!(block_param(&json!([{}]), 0).unwrap_err().code, -32602);
    let e = address_param(&json!(["0x12"]), 0).unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(
        e.message,
        "invalid argument 0: hex string has length 2, want 40 for common.Address"
    );
    assert_eq!(first_block(10, |b| Ok(b >= 4)).unwrap(), 4);
    assert_eq!(first_block(10, |_| Ok(false)).unwrap(), 11);
    assert_eq!(first_block(0, |_| Ok(true)).unwrap(), 0);
}

#[test]
fn every_method_goes_to_a_worker() {
    for m in METHODS {
        assert!(crate::serve::calls::traced_method(m), "{m}");
    }
}
