//! Tests of the call tree renderer (`tree.rs`).

use super::*;
use crate::render::abi::Abi;
use crate::render::revert::ERROR_SELECTOR;
use crate::render::signatures;
use alloy_primitives::{Bytes, B256};

fn a(b: u8) -> Address {
    Address::repeat_byte(b)
}

fn w(v: u64) -> [u8; 32] {
    U256::from(v).to_be_bytes()
}

fn calldata(sig: &str, words: &[[u8; 32]]) -> Bytes {
    let mut v = signatures::selector(sig).to_vec();
    for x in words {
        v.extend_from_slice(x);
    }
    v.into()
}

fn error_string(s: &str) -> Bytes {
    let mut v = ERROR_SELECTOR.to_vec();
    v.extend(w(32));
    v.extend(w(s.len() as u64));
    let mut padded = s.as_bytes().to_vec();
    padded.resize(s.len().div_ceil(32) * 32, 0);
    v.extend(padded);
    v.into()
}

fn frame(kind: CallKind, from: Address, to: Address, input: Bytes, gas_used: u64) -> CallFrame {
    CallFrame {
        from,
        gas: 100_000,
        gas_used,
        to: Some(to),
        input,
        output: None,
        error: None,
        revert_reason: None,
        calls: Vec::new(),
        logs: Vec::new(),
        value: (kind != CallKind::Staticcall).then_some(U256::ZERO),
        kind,
        from_node: false,
        steps: None,
        create_address: None,
    }
}

fn log(address: Address, topics: Vec<B256>, data: &[u8], position: u64) -> CallLog {
    CallLog {
        address,
        topics,
        data: Bytes::copy_from_slice(data),
        index: 0,
        position,
    }
}

/// A → B transfer(…) with 1.5 ETH, reverting with the reason of its last subcall:
///   B → C balanceOf (static), B → D unknown selector with a log before and after a
///   delegatecall, B → C transfer reverting with Error("nope").
fn sample() -> CallFrame {
    let transfer_topic = signatures::event_topic("Transfer(address,address,uint256)");
    let mut root = frame(
        CallKind::Call,
        a(0xaa),
        a(0xbb),
        calldata(
            "transfer(address,uint256)",
            &[a(0xcc).into_word().0, w(1000)],
        ),
        50_000,
    );
    root.value = Some(U256::from(1_500_000_000_000_000_000u128));
    root.error = Some(FrameError::Reverted);
    root.output = Some(error_string("nope"));

    let balance = frame(
        CallKind::Staticcall,
        a(0xbb),
        a(0xcc),
        calldata("balanceOf(address)", &[a(0xaa).into_word().0]),
        2_600,
    );

    let mut other = frame(
        CallKind::Call,
        a(0xbb),
        a(0xdd),
        Bytes::from_static(&[0x12, 0x34, 0x56, 0x78]),
        1_234_567,
    );
    other.value = Some(U256::from(1_000_000_000_000u64));
    other.logs.push(log(
        a(0xdd),
        vec![transfer_topic, a(0xbb).into_word(), a(0xdd).into_word()],
        &w(5),
        0,
    ));
    other
        .logs
        .push(log(a(0xdd), vec![B256::repeat_byte(0x01)], &[0xff], 1));
    other.calls.push(frame(
        CallKind::Delegatecall,
        a(0xdd),
        a(0xee),
        Bytes::new(),
        100,
    ));

    let mut failing = frame(
        CallKind::Call,
        a(0xbb),
        a(0xcc),
        calldata("transfer(address,uint256)", &[a(0xdd).into_word().0, w(5)]),
        5_000,
    );
    failing.error = Some(FrameError::Reverted);
    failing.output = Some(error_string("nope"));
    failing.revert_reason = Some("nope".into());

    root.calls = vec![balance, other, failing];
    root
}

fn render(root: &CallFrame, opts: &TreeOptions) -> String {
    let mut out = Vec::new();
    render_call_tree(root, &Decoder::default(), opts, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn renders_plain_tree_with_logs_and_revert_summary() {
    let text = render(&sample(), &TreeOptions::default());
    let expected = "\
CALL 0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa → 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB transfer(to: 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC, amount: 1000) value 1.5 ETH gas 50,000 ✗ execution reverted: Error(\"nope\")
├─ STATICCALL 0xbBbB…BBbB → 0xCcCC…cccC balanceOf(account: 0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa) gas 2,600 ✓
├─ CALL 0xbBbB…BBbB → 0xDDdD…DDDd 0x12345678 value 0.000001 ETH gas 1,234,567 ✓
│  ├─ emit Transfer(from: 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB, to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, value: 5)
│  ├─ DELEGATECALL 0xDDdD…DDDd → 0xEeee…EEeE () gas 100 ✓
│  └─ emit log topics=[0x0101010101010101010101010101010101010101010101010101010101010101] data=0xff
└─ CALL 0xbBbB…BBbB → 0xCcCC…cccC transfer(to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, amount: 5) gas 5,000 ✗ execution reverted: Error(\"nope\")
reverted: Error(\"nope\") at 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC transfer(to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, amount: 5) (gas 5,000)
";
    assert_eq!(text, expected);
    assert!(!text.contains('\x1b'));
}

#[test]
fn hides_logs_when_asked_and_skips_summary_on_success() {
    let mut root = sample();
    root.error = None;
    root.output = None;
    root.calls.pop();
    let opts = TreeOptions {
        show_logs: false,
        ..TreeOptions::default()
    };
    let text = render(&root, &opts);
    assert!(!text.contains("emit"));
    assert!(!text.contains("reverted:"));
    assert_eq!(text.lines().count(), 4);
    assert!(text
        .lines()
        .nth(3)
        .unwrap()
        .starts_with("   └─ DELEGATECALL"));
}

#[test]
fn color_marks_failures_and_dims_addresses() {
    let opts = TreeOptions {
        color: true,
        ..TreeOptions::default()
    };
    let text = render(&sample(), &opts);
    assert!(text.starts_with("\x1b[1;31mCALL\x1b[0m \x1b[2m0xaAaA"));
    assert!(text.contains("\x1b[1;31m✗ execution reverted: Error(\"nope\")\x1b[0m"));
    assert!(text.contains("\x1b[32m✓\x1b[0m"));
    assert!(text.contains("\x1b[1;31mreverted: Error(\"nope\")\x1b[0m at \x1b[2m0xCcCC"));
}

#[test]
fn origin_stops_at_a_frame_with_its_own_reason() {
    let mut root = sample();
    root.output = Some(error_string("outer"));
    let abi = Abi::default();
    let mut out = Vec::new();
    render_call_tree(
        &root,
        &Decoder::new(Some(abi)),
        &TreeOptions::default(),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with("reverted: Error(\"outer\") at 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB transfer(to: 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC, amount: 1000) (gas 50,000)\n"));
    // Out of gas with no data: the error itself is the reason.
    let mut oog = frame(CallKind::Call, a(1), a(2), Bytes::new(), 100_000);
    oog.error = Some("out of gas".into());
    assert!(render(&oog, &TreeOptions::default()).ends_with(
        "reverted: out of gas at 0x0202020202020202020202020202020202020202 () (gas 100,000)\n"
    ));
}

#[test]
fn failed_frames_show_their_source_and_the_stack_follows() {
    use crate::render::source::{Location, SourceNotes, StackEntry};
    let loc = |line: usize, text: &str, span: (usize, usize)| Location {
        file: "src/C.sol".into(),
        line,
        column: span.0 + 1,
        text: text.into(),
        span,
        changed: false,
    };
    let mut notes = SourceNotes::default();
    notes
        .frames
        .insert(vec![], loc(7, "    c.transfer(d, 5);", (4, 20)));
    notes
        .frames
        .insert(vec![2], loc(12, "        require(ok, \"nope\");", (8, 30)));
    notes.stack = vec![
        StackEntry {
            contract: "C".into(),
            function: "transfer".into(),
            location: loc(12, "", (8, 30)),
            reached_by: Some(CallKind::Call),
            args: Vec::new(),
            undecided: Vec::new(),
        },
        StackEntry {
            contract: "B".into(),
            function: "transfer".into(),
            location: loc(7, "", (4, 20)),
            reached_by: None,
            args: Vec::new(),
            undecided: vec![9, 11],
        },
    ];
    let mut d = Decoder::default();
    d.set_sources(notes);
    let mut out = Vec::new();
    render_call_tree(&sample(), &d, &TreeOptions::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with("✗ execution reverted: Error(\"nope\") at src/C.sol:7:5"));
    assert_eq!(lines[1], "│    7 | c.transfer(d, 5);");
    assert_eq!(lines[2], "│      | ^^^^^^^^^^^^^^^^");
    assert!(lines[8].ends_with("at src/C.sol:12:9"), "{text}");
    assert_eq!(lines[9], "        12 | require(ok, \"nope\");");
    assert_eq!(lines[10], "           | ^^^^^^^^^^^^^^^^^^^^");
    assert!(text.ends_with(
        "Solidity stack trace:\n  at C.transfer (src/C.sol:12:9), reached by CALL\n  at B.transfer (src/C.sol:7:5; one of its calls at lines 9, 11: the source map cannot tell which)\n"
    ));
    // On a terminal the span itself is marked too.
    let mut out = Vec::new();
    let color = TreeOptions {
        color: true,
        ..TreeOptions::default()
    };
    render_call_tree(&sample(), &d, &color, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("| \x1b[4;31mc.transfer(d, 5)\x1b[0m"),
        "{text}"
    );
    // No notes, no change.
    assert_eq!(render(&sample(), &TreeOptions::default()), {
        let mut out = Vec::new();
        let mut d = Decoder::default();
        d.set_sources(SourceNotes::default());
        render_call_tree(&sample(), &d, &TreeOptions::default(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    });
}

#[test]
fn formats_values_and_gas() {
    assert_eq!(group("0"), "0");
    assert_eq!(group("999"), "999");
    assert_eq!(group("1000"), "1,000");
    assert_eq!(group("1234567"), "1,234,567");
    let eth = |wei: u128| format_value(U256::from(wei), "ETH");
    assert_eq!(eth(1_500_000_000_000_000_000), "1.5 ETH");
    assert_eq!(eth(1_000_000_000_000), "0.000001 ETH");
    assert_eq!(eth(1_000_000_000_000_000_000_000), "1,000 ETH");
    assert_eq!(eth(1_234_567_890_000_000_000), "1.234567 ETH");
    assert_eq!(eth(1_000), "1,000 wei");
    assert_eq!(
        format_value(U256::from(2_000_000_000_000_000_000u128), "xDAI"),
        "2 xDAI"
    );
}

#[test]
fn creates_and_selfdestructs() {
    let mut root = frame(
        CallKind::Create,
        a(1),
        a(2),
        Bytes::from(vec![0u8; 1500]),
        60_000,
    );
    let mut sd = frame(CallKind::Selfdestruct, a(2), a(3), Bytes::new(), 0);
    sd.value = Some(U256::from(2_000_000_000_000_000_000u128));
    root.calls.push(sd);
    let text = render(&root, &TreeOptions::default());
    assert_eq!(
        text,
        "CREATE 0x0101010101010101010101010101010101010101 → 0x0202020202020202020202020202020202020202 new contract (1,500 bytes of init code) gas 60,000 ✓\n\
         └─ SELFDESTRUCT 0x0202…0202 → 0x0303…0303 value 2 ETH ✓\n"
    );
}

fn deposit(mint: u128, is_system_tx: bool) -> (Address, Deposit) {
    let d = Deposit {
        source_hash: B256::repeat_byte(0x5e),
        mint: Some(U256::from(mint)),
        is_system_tx,
    };
    (a(1), d)
}

#[test]
fn marks_a_deposit_with_its_mint_and_source_hash() {
    let mut root = frame(CallKind::Call, a(1), a(2), Bytes::new(), 21_000);
    root.value = Some(U256::from(1_000_000_000_000_000_000u128));
    let opts = TreeOptions {
        deposit: Some(deposit(2_500_000_000_000_000_000, false)),
        ..TreeOptions::default()
    };
    let hash = format!("0x{}", "5e".repeat(32));
    assert_eq!(
        render(&root, &opts),
        format!(
            "deposit from L1: CALL 0x0101010101010101010101010101010101010101 → 0x0202020202020202020202020202020202020202 receive() value 1 ETH mint 2.5 ETH gas 21,000 ✓\n   source hash {hash}\n"
        )
    );
    // With subcalls the source hash line keeps the tree's bar; below the top nothing changes.
    root.calls
        .push(frame(CallKind::Call, a(2), a(3), Bytes::new(), 100));
    let text = render(&root, &opts);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], format!("│  source hash {hash}"));
    assert!(
        lines[2].starts_with("└─ CALL 0x0202…0202 → 0x0303…0303"),
        "{text}"
    );
    // A deposit minting nothing says no mint.
    let opts = TreeOptions {
        deposit: Some(deposit(0, true)),
        ..TreeOptions::default()
    };
    let text = render(&frame(CallKind::Call, a(1), a(2), Bytes::new(), 0), &opts);
    assert!(
        text.starts_with("deposit from L1 (system transaction): CALL 0x0101"),
        "{text}"
    );
    assert!(!text.contains("mint"), "{text}");
}

#[test]
fn a_failed_deposit_names_its_sender_not_the_stop_frame() {
    // op-geth's frame of a failed deposit (`failed_deposit.json`): STOP from the zero address.
    let mut root = frame(CallKind::Stop, Address::ZERO, a(0), Bytes::new(), 200_000);
    root.to = None;
    root.value = None;
    root.error = Some(FrameError::Failed("failed deposit transaction".into()));
    let opts = TreeOptions {
        deposit: Some(deposit(1_000_000_000_000_000, false)),
        ..TreeOptions::default()
    };
    assert_eq!(
        render(&root, &opts),
        format!(
            "deposit from L1: 0x0101010101010101010101010101010101010101 mint 0.001 ETH gas 200,000 ✗ failed deposit transaction (nothing ran: the mint is kept, the nonce bumped)\n   source hash 0x{}\n",
            "5e".repeat(32)
        )
    );
}
