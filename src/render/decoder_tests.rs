//! Tests of [`Decoder`](super::Decoder), [`Abi`] loading and strict decoding.

use super::*;
use crate::render::abi::AbiError;
use crate::render::values::{decode_types, Shown};
use alloy_dyn_abi::DynSolType;
use alloy_primitives::{address, b256};

fn w(v: u64) -> [u8; 32] {
    U256::from(v).to_be_bytes()
}

fn addr_word(a: Address) -> [u8; 32] {
    a.into_word().0
}

fn calldata(sig: &str, words: &[[u8; 32]]) -> Vec<u8> {
    let mut v = signatures::selector(sig).to_vec();
    for x in words {
        v.extend_from_slice(x);
    }
    v
}

const ALICE: Address = address!("00000000000000000000000000000000000a11ce");

const ABI: &str = r#"{"abi": [
    {"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[{"name":"","type":"bool"}],"stateMutability":"nonpayable"},
    {"type":"function","name":"batch","inputs":[{"name":"calls","type":"tuple[]","components":[{"name":"target","type":"address"},{"name":"data","type":"bytes"}]}],"outputs":[]},
    {"type":"error","name":"InsufficientBalance","inputs":[{"name":"needed","type":"uint256"},{"name":"available","type":"uint256"}]},
    {"type":"event","name":"Moved","anonymous":false,"inputs":[{"name":"who","type":"address","indexed":true},{"name":"amount","type":"int256","indexed":false}]},
    {"type":"constructor","inputs":[]},
    {"type":"receive","stateMutability":"payable"}
]}"#;

fn types(ts: &[&str]) -> Vec<DynSolType> {
    ts.iter().map(|t| DynSolType::parse(t).unwrap()).collect()
}

fn shown(values: &[alloy_dyn_abi::DynSolValue]) -> Vec<String> {
    values.iter().map(|v| Shown(v).to_string()).collect()
}

#[test]
fn loads_artifact_and_bare_array() {
    let abi = Abi::from_json(ABI).unwrap();
    assert_eq!(abi.len(), 4);
    let transfer = abi.function([0xa9, 0x05, 0x9c, 0xbb]).unwrap();
    assert_eq!(transfer.name, "transfer");
    let batch = signatures::selector("batch((address,bytes)[])");
    assert_eq!(
        abi.function(batch).unwrap().signature(),
        "batch((address,bytes)[])"
    );
    let err = signatures::selector("InsufficientBalance(uint256,uint256)");
    assert_eq!(abi.error(err).unwrap().name, "InsufficientBalance");
    let moved = signatures::event_topic("Moved(address,int256)");
    assert_eq!(abi.event(&moved).unwrap().name, "Moved");
    let bare = r#"[{"type":"function","name":"f","inputs":[{"name":"x","type":"uint8[3]"}]}]"#;
    let f = signatures::selector("f(uint8[3])");
    assert!(Abi::from_json(bare).unwrap().function(f).is_some());
    // Very old solc output: no `type`, no `outputs`.
    let old = r#"[{"name":"g","inputs":[]}]"#;
    assert!(Abi::from_json(old)
        .unwrap()
        .function(signatures::selector("g()"))
        .is_some());
    assert!(matches!(Abi::from_json("{}"), Err(AbiError::NotAnAbi)));
    assert!(matches!(
        Abi::from_json(
            "[{\"type\":\"function\",\"name\":\"g\",\"inputs\":[{\"type\":\"fixed128x18\"}]}]"
        ),
        Err(AbiError::Item { index: 0, .. })
    ));
    assert!(matches!(Abi::from_json("nope"), Err(AbiError::Json(_))));
    // Merging the same interface twice keeps one candidate.
    let mut twice = Abi::from_json(ABI).unwrap();
    twice.merge(Abi::from_json(ABI).unwrap());
    assert_eq!(twice.len(), 4);
}

#[test]
fn declarations_file() {
    let abi = Abi::from_declarations(
        "# comment\nfoo(uint256 x)\nerror Bad(address who)\nevent E(uint8 indexed a, string s)\n",
    )
    .unwrap();
    assert_eq!(abi.len(), 3);
    assert!(matches!(
        Abi::from_declarations("ok()\nnot a declaration"),
        Err(AbiError::Line { line: 2, .. })
    ));
}

#[test]
fn decodes_static_dynamic_and_nested() {
    let ts = types(&[
        "uint256",
        "string",
        "(address,bytes)[]",
        "int8",
        "bool",
        "bytes2",
    ]);
    let mut d = Vec::new();
    d.extend(w(7)); // uint256
    d.extend(w(6 * 32)); // string offset
    d.extend(w(8 * 32)); // array offset
    d.extend(U256::MAX.to_be_bytes::<32>()); // int8 = -1
    d.extend(w(1)); // bool
    let mut b2 = [0u8; 32];
    b2[..2].copy_from_slice(&[0xbe, 0xef]);
    d.extend(b2);
    d.extend(w(2)); // string "hi"
    let mut s = [0u8; 32];
    s[..2].copy_from_slice(b"hi");
    d.extend(s);
    d.extend(w(1)); // array of one tuple
    d.extend(w(32)); // offset of tuple 0 relative to the element area
    d.extend(addr_word(ALICE));
    d.extend(w(64)); // bytes offset within the tuple
    d.extend(w(3));
    let mut b = [0u8; 32];
    b[..3].copy_from_slice(&[1, 2, 3]);
    d.extend(b);
    let values = decode_types(ts.clone(), &d).unwrap();
    assert_eq!(
        shown(&values),
        [
            "7",
            "\"hi\"",
            "[(0x00000000000000000000000000000000000A11cE, 0x010203)]",
            "-1",
            "true",
            "0xbeef"
        ]
    );
    // Trailing bytes are allowed; truncated data and dirty padding are refused.
    let mut trailing = d.clone();
    trailing.extend([0xff; 7]);
    assert!(decode_types(ts.clone(), &trailing).is_some());
    assert!(decode_types(ts, &d[..100]).is_none());
    let mut dirty = w(2);
    dirty[0] = 1;
    assert!(decode_types(types(&["bool"]), &dirty).is_none());
    assert!(decode_types(types(&["bool"]), &w(2)).is_none());
    assert!(decode_types(types(&["uint8"]), &w(256)).is_none());
    assert!(decode_types(types(&["int8"]), &w(128)).is_none());
    let mut dirty_addr = addr_word(ALICE);
    dirty_addr[0] = 1;
    assert!(decode_types(types(&["address"]), &dirty_addr).is_none());
    let mut dirty_b2 = b2;
    dirty_b2[5] = 1;
    assert!(decode_types(types(&["bytes2"]), &dirty_b2).is_none());
    // Huge array lengths must not allocate or loop.
    for len in [U256::MAX, U256::from(u32::MAX)] {
        let mut huge = w(32).to_vec();
        huge.extend(len.to_be_bytes::<32>());
        assert!(decode_types(types(&["uint256[]"]), &huge).is_none());
    }
}

#[test]
fn describe_call_variants() {
    let plain = Decoder::default();
    let with_abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
    let input = calldata("transfer(address,uint256)", &[addr_word(ALICE), w(1000)]);
    assert_eq!(
        with_abi.describe_call(&input),
        "transfer(to: 0x00000000000000000000000000000000000A11cE, amount: 1000)"
    );
    // Bundled table: decoded with the table's parameter names.
    assert_eq!(
        plain.describe_call(&input),
        "transfer(to: 0x00000000000000000000000000000000000A11cE, amount: 1000)"
    );
    assert_eq!(plain.function_name(&input).as_deref(), Some("transfer"));
    // Known signature, undecodable arguments.
    let short = calldata("transfer(address,uint256)", &[addr_word(ALICE)]);
    assert_eq!(plain.describe_call(&short), "transfer(address,uint256)");
    assert_eq!(with_abi.describe_call(&short), "transfer(address,uint256)");
    // Unknown selector.
    assert_eq!(
        plain.describe_call(&[0x12, 0x34, 0x56, 0x78, 0xff]),
        "0x12345678"
    );
    assert_eq!(plain.function_name(&[0x12, 0x34, 0x56, 0x78]), None);
    assert_eq!(plain.describe_call(&[0xab]), "0xab");
    // Empty input.
    assert_eq!(plain.describe_call(&[]), "()");
    assert_eq!(
        plain.describe_call_with_value(&[], Some(U256::from(1))),
        "receive()"
    );
    assert_eq!(plain.describe_call_with_value(&[], Some(U256::ZERO)), "()");
    assert_eq!(
        plain.describe_call(&calldata("totalSupply()", &[])),
        "totalSupply()"
    );
}

#[test]
fn contract_abi_comes_first_and_ambiguity_shows_every_decoding() {
    let input = calldata("transfer(address,uint256)", &[addr_word(ALICE), w(5)]);
    let mut d = Decoder::default();
    let mine = Abi::from_declarations("transfer(address recipient, uint256 wad)").unwrap();
    d.add_contract(ALICE, Arc::new(mine));
    assert_eq!(
        d.describe_call_at(Some(ALICE), &input, None),
        "transfer(recipient: 0x00000000000000000000000000000000000A11cE, wad: 5)"
    );
    // Another address: the bundled table.
    assert_eq!(
        d.describe_call_at(Some(Address::ZERO), &input, None),
        "transfer(to: 0x00000000000000000000000000000000000A11cE, amount: 5)"
    );
    // A selector collision between a --signatures entry and the bundled table: both decode,
    // both are shown. (`collate_propagate_storage(bytes16)` is the classic collision with
    // `burn(uint256)`, 0x42966c68.)
    let mut amb = Decoder::default();
    amb.add_signatures(Abi::from_declarations("collate_propagate_storage(bytes16 x)").unwrap());
    assert_eq!(
        signatures::selector("collate_propagate_storage(bytes16)"),
        signatures::selector("burn(uint256)")
    );
    let mut word = [0u8; 32];
    word[15] = 1;
    let burn = calldata("burn(uint256)", &[word]);
    assert_eq!(
        amb.describe_call(&burn),
        "collate_propagate_storage(x: 0x00000000000000000000000000000001) | burn(amount: 340282366920938463463374607431768211456)"
    );
    assert_eq!(
        amb.function_name(&burn).as_deref(),
        Some("collate_propagate_storage|burn")
    );
    // Only the candidate that decodes is shown.
    assert_eq!(
        amb.describe_call(&calldata("burn(uint256)", &[w(5)])),
        "burn(amount: 5)"
    );
    // The same signature from two sources is one candidate.
    amb.add_signatures(Abi::from_declarations("transfer(address dst, uint256 rawAmount)").unwrap());
    assert_eq!(
        amb.describe_call(&input),
        "transfer(dst: 0x00000000000000000000000000000000000A11cE, rawAmount: 5)"
    );
}

#[test]
fn describe_revert_variants() {
    let plain = Decoder::default();
    let with_abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
    let mut err = ERROR_SELECTOR.to_vec();
    err.extend(w(32));
    err.extend(w(4));
    let mut s = [0u8; 32];
    s[..4].copy_from_slice(b"nope");
    err.extend(s);
    assert_eq!(
        plain.describe_revert(&err).as_deref(),
        Some("Error(\"nope\")")
    );
    let mut panic = PANIC_SELECTOR.to_vec();
    panic.extend(w(0x12));
    assert_eq!(
        plain.describe_revert(&panic).as_deref(),
        Some("Panic(0x12: division or modulo by zero)")
    );
    let custom = calldata("InsufficientBalance(uint256,uint256)", &[w(5), w(1)]);
    assert_eq!(
        with_abi.describe_revert(&custom).as_deref(),
        Some("InsufficientBalance(needed: 5, available: 1)")
    );
    // Without the ABI the same selector is OpenZeppelin's error from the bundled table.
    assert_eq!(
        plain.describe_revert(&custom).as_deref(),
        Some("InsufficientBalance(balance: 5, needed: 1)")
    );
    let unknown = calldata("Nope(uint256,uint256)", &[w(5), w(1)]);
    assert_eq!(
        plain.describe_revert(&unknown),
        Some(format!(
            "custom error 0x{} (64 bytes of data)",
            hex::encode(&unknown[..4])
        ))
    );
    let oz = calldata(
        "ERC20InsufficientBalance(address,uint256,uint256)",
        &[addr_word(ALICE), w(1), w(2)],
    );
    assert_eq!(&oz[..4], &hex::decode("e450d38c").unwrap());
    assert_eq!(
        plain.describe_revert(&oz).as_deref(),
        Some("ERC20InsufficientBalance(sender: 0x00000000000000000000000000000000000A11cE, balance: 1, needed: 2)")
    );
    assert_eq!(
        plain.describe_revert(&[0xde, 0xad, 0xbe, 0xef]).as_deref(),
        Some("custom error 0xdeadbeef (0 bytes of data)")
    );
    assert_eq!(plain.describe_revert(&[]), None);
    assert_eq!(
        plain.describe_revert(&[1, 2]).as_deref(),
        Some("revert data 0x0102")
    );
}

#[test]
fn describe_log_variants() {
    let plain = Decoder::default();
    let transfer = b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
    let from = ALICE.into_word();
    let to = Address::repeat_byte(0x22).into_word();
    // ERC-20: value in data.
    assert_eq!(
        plain.describe_log(&[transfer, from, to], &w(5)),
        "Transfer(from: 0x00000000000000000000000000000000000A11cE, to: 0x2222222222222222222222222222222222222222, value: 5)"
    );
    // ERC-721: all three indexed, empty data.
    let id = B256::from(w(9));
    assert_eq!(
        plain.describe_log(&[transfer, from, to, id], &[]),
        "Transfer(from: 0x00000000000000000000000000000000000A11cE, to: 0x2222222222222222222222222222222222222222, tokenId: 9)"
    );
    // Known topic, undecodable.
    assert_eq!(
        plain.describe_log(&[transfer], &[1]),
        format!("Transfer(address,address,uint256) topics=[{transfer}] data=0x01")
    );
    // Unknown topic; no topic at all.
    let t = B256::repeat_byte(0xab);
    assert_eq!(
        plain.describe_log(&[t], &[]),
        format!("log topics=[{t}] data=0x")
    );
    assert_eq!(
        plain.describe_log(&[], &[]),
        "anonymous log topics=[] data=0x"
    );
    // ABI event with a signed value.
    let abi = Decoder::new(Some(Abi::from_json(ABI).unwrap()));
    let moved = signatures::event_topic("Moved(address,int256)");
    assert_eq!(
        abi.describe_log(&[moved, from], &U256::MAX.to_be_bytes::<32>()),
        "Moved(who: 0x00000000000000000000000000000000000A11cE, amount: -1)"
    );
    assert_eq!(abi.event_name(&[moved]).as_deref(), Some("Moved"));
    assert_eq!(plain.event_name(&[transfer]).as_deref(), Some("Transfer"));
    // A dirty address topic does not decode.
    let mut dirty = from;
    dirty.0[0] = 1;
    assert!(plain
        .describe_log(&[transfer, dirty, to], &w(5))
        .starts_with("Transfer(address,address,uint256) topics="));
}
