//! Property tests of the readers that take untrusted text: fixtures and bundles, policy and
//! request bodies. Whatever the input, they return a value or an error — no panic — and what
//! they accept is self-consistent. (The JSON-RPC response reader has its own, in
//! src/rpc/client.rs, against a loopback server.) Case counts are kept small for CI; raise
//! PROPTEST_CASES to search longer.

use chaintrace::policy::jcs::{canonicalize, parse_exact};
use chaintrace::replay::trace_fixture;
use chaintrace::source::fixture::Fixture;
use chaintrace::trace::{TracerKind, TracerSpec};
use proptest::prelude::*;
use serde_json::Value;

const BUNDLE: &str = include_str!("../../fixtures/reverted-nested.json");

/// Arbitrary JSON values, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[0-9a-fA-Fx ]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The bundle with one of its members (at any depth) replaced by an arbitrary value.
fn mutated_bundle() -> impl Strategy<Value = Value> {
    let base: Value = serde_json::from_str(BUNDLE).unwrap();
    let mut paths = Vec::new();
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        if let Value::Object(m) = v {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                walk(x, p, out);
            }
        }
    }
    walk(&base, String::new(), &mut paths);
    (proptest::sample::select(paths), json()).prop_map(move |(path, v)| {
        let mut b = base.clone();
        if let Some(slot) = b.pointer_mut(&path) {
            *slot = v;
        }
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_fixture_of_any_shape_is_read_or_refused(v in json()) {
        let _ = Fixture::from_json(&v);
    }

    #[test]
    fn a_mutated_bundle_is_read_or_refused_and_replays_or_fails_cleanly(v in mutated_bundle()) {
        if let Ok(fx) = Fixture::from_json(&v) {
            let spec = TracerSpec::new(TracerKind::Call, None).unwrap();
            let _ = trace_fixture(&fx, &spec, None);
        }
    }

    #[test]
    fn fixture_text_with_flipped_bytes_is_read_or_refused(at in 0..BUNDLE.len(), byte in any::<u8>()) {
        let mut b = BUNDLE.as_bytes().to_vec();
        b[at] = byte;
        let text = String::from_utf8_lossy(&b);
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            let _ = Fixture::from_json(&v);
        }
    }

    #[test]
    fn request_text_is_read_or_refused_and_canonical_form_is_stable(text in "[\\[\\]{}:,\"a-c0-9. eE+-]{0,64}") {
        if let Ok(v) = parse_exact(&text) {
            let c = canonicalize(&v);
            let again = parse_exact(&c).expect("canonical JSON parses");
            prop_assert_eq!(canonicalize(&again), c);
        }
    }

    #[test]
    fn any_json_value_round_trips_through_the_canonical_form(v in json()) {
        let c = canonicalize(&v);
        let back = parse_exact(&c).expect("canonical JSON parses");
        prop_assert_eq!(canonicalize(&back), c);
    }
}

/// A word that is small, huge, or an ABI offset/length chosen to overflow a hand-written
/// decoder (`0xFFFFFFFFFFFFFFE0` plus 32 wraps a 64-bit index).
fn hostile_word() -> impl Strategy<Value = [u8; 32]> {
    prop_oneof![
        any::<[u8; 32]>(),
        (0u64..512).prop_map(|n| alloy_primitives::U256::from(n).to_be_bytes::<32>()),
        Just(alloy_primitives::U256::from(0xFFFF_FFFF_FFFF_FFE0u64).to_be_bytes::<32>()),
        Just(alloy_primitives::U256::MAX.to_be_bytes::<32>()),
    ]
}

/// Log data of whole words, most of them hostile, or any bytes at all.
fn log_data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(hostile_word(), 0..8).prop_map(|w| w.concat()),
        proptest::collection::vec(any::<u8>(), 0..200),
    ]
}

/// A topic: one of the events `--assets` reads, an address-shaped word, or anything.
fn topic() -> impl Strategy<Value = alloy_primitives::B256> {
    use chaintrace::replay::assets::tokens::{
        DEPOSIT, TRANSFER, TRANSFER_BATCH, TRANSFER_SINGLE, WITHDRAWAL,
    };
    prop_oneof![
        prop_oneof![
            Just(TRANSFER),
            Just(TRANSFER_SINGLE),
            Just(TRANSFER_BATCH),
            Just(DEPOSIT),
            Just(WITHDRAWAL)
        ],
        any::<[u8; 20]>().prop_map(|a| alloy_primitives::Address::from(a).into_word()),
        any::<[u8; 32]>().prop_map(alloy_primitives::B256::from),
    ]
}

fn frame_with_log(
    topics: Vec<alloy_primitives::B256>,
    data: Vec<u8>,
    value: Option<alloy_primitives::U256>,
) -> chaintrace::trace::call::CallFrame {
    use alloy_primitives::address;
    use chaintrace::trace::call::{CallFrame, CallKind, CallLog};
    let token = address!("00000000000000000000000000000000000000aa");
    CallFrame {
        from: address!("00000000000000000000000000000000000000f0"),
        gas: 100_000,
        gas_used: 50_000,
        to: Some(token),
        input: Default::default(),
        output: None,
        error: None,
        revert_reason: None,
        calls: Vec::new(),
        logs: vec![CallLog {
            address: token,
            topics,
            data: data.into(),
            index: 0,
            position: 0,
        }],
        value,
        kind: CallKind::Call,
        from_node: false,
        steps: None,
        create_address: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever a contract logs or answers, `--assets` reads it or ignores it, never panics
    /// (this runs in a debug build, where arithmetic overflow panics).
    #[test]
    fn asset_decoders_take_any_log_or_answer(
        topics in proptest::collection::vec(topic(), 0..5),
        data in log_data(),
        value in proptest::option::of(0u64..10).prop_map(|v| v.map(alloy_primitives::U256::from)),
    ) {
        let f = frame_with_log(topics, data.clone(), value);
        let _ = chaintrace::replay::assets::tokens::token_moves(&f);
        let _ = chaintrace::replay::assets::metadata::decode_symbol(&data);
        let _ = chaintrace::replay::assets::metadata::decode_decimals(&data);
    }
}

/// The TransferBatch the hand-written decoder overflowed on: its `ids` offset word is
/// `0xFFFFFFFFFFFFFFE0`. Nothing is read from it, and nothing panics.
#[test]
fn a_transfer_batch_with_an_overflowing_offset_moves_nothing() {
    use chaintrace::replay::assets::tokens::{token_moves, TRANSFER_BATCH};
    let word = |a: alloy_primitives::Address| a.into_word();
    let topics = vec![
        TRANSFER_BATCH,
        word(alloy_primitives::Address::repeat_byte(1)),
        word(alloy_primitives::Address::repeat_byte(2)),
        word(alloy_primitives::Address::repeat_byte(3)),
    ];
    let mut data = alloy_primitives::U256::from(0xFFFF_FFFF_FFFF_FFE0u64)
        .to_be_bytes::<32>()
        .to_vec();
    data.extend(alloy_primitives::U256::from(64).to_be_bytes::<32>());
    data.extend([0u8; 64]);
    assert!(token_moves(&frame_with_log(topics, data, None)).is_empty());
}

/// The verdict of `policy` (text) on `body`: `None` when the policy or the request is refused.
fn policy_verdict(policy: &Value, body: &Value) -> Option<bool> {
    use chaintrace::policy::request::{method_of, tx_fields};
    let policy = chaintrace::policy::Policy::from_json(policy).ok()?;
    let fields = tx_fields(body).ok()?;
    Some(policy.evaluate(method_of(body)?, &fields).allowed)
}

/// Every member name of `v` (objects inside arrays too), as the path of keys and indices to
/// the object that holds it, and the name.
fn member_names(v: &Value, at: &mut Vec<Value>, out: &mut Vec<(Vec<Value>, String)>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                out.push((at.clone(), k.clone()));
                at.push(Value::String(k.clone()));
                member_names(child, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                at.push(Value::from(i));
                member_names(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// Each one-character change of `name`: a character deleted, replaced by another letter, its
/// case swapped, or a letter inserted, at every position.
fn one_character_changes(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    for i in 0..=chars.len() {
        let mut inserted = chars.clone();
        inserted.insert(i, 's');
        out.push(inserted.iter().collect());
        if i == chars.len() {
            break;
        }
        let mut deleted = chars.clone();
        deleted.remove(i);
        out.push(deleted.iter().collect());
        let mut replaced = chars.clone();
        replaced[i] = if chars[i] == 'e' { 'a' } else { 'e' };
        out.push(replaced.iter().collect());
        let mut cased = chars.clone();
        cased[i] = if chars[i].is_ascii_lowercase() {
            chars[i].to_ascii_uppercase()
        } else {
            chars[i].to_ascii_lowercase()
        };
        out.push(cased.iter().collect());
    }
    out.retain(|n| n != name);
    out
}

/// A policy with a misspelled member never allows what the policy as written denies: every
/// member name of every bundled policy (rules, conditions, ABIs), changed by one character in
/// every way, gives a refusal or the same verdict on every bundled request and on token
/// transfers (to the treasury and elsewhere, small and large) — never a more permissive one.
#[test]
fn a_misspelled_policy_member_never_allows_more() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/policy");
    let read =
        |path: std::path::PathBuf| chaintrace::policy::read_json(path.to_str().unwrap()).unwrap();
    let files = |sub: &str| {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{dir}/{sub}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        paths
    };
    let transfer = |to: &str, amount: u64| {
        serde_json::json!({"method": "eth_sendTransaction", "caip2": "eip155:1329",
            "params": {"transaction": {"to": "0x5FbDB2315678afecb367f032d93F642f64180aa3",
            "data": format!("0xa9059cbb{:0>64}{amount:064x}", to.trim_start_matches("0x"))}}})
    };
    let mut requests: Vec<Value> = files("requests").into_iter().map(read).collect();
    for to in [
        "70997970C51812dc3A010C7d01b50e0d17dc79C8",
        "90F79bf6EB2c4F870365E785982E1f101E93b906",
    ] {
        for amount in [1, 1_000_000, 1_000_001] {
            requests.push(transfer(to, amount));
        }
    }
    let (mut mutants, mut refused) = (0, 0);
    for path in files("policies") {
        let policy = read(path.clone());
        let verdicts: Vec<_> = requests
            .iter()
            .map(|r| policy_verdict(&policy, r))
            .collect();
        let mut names = Vec::new();
        member_names(&policy, &mut Vec::new(), &mut names);
        for (at, name) in names {
            for changed in one_character_changes(&name) {
                let mut mutant = policy.clone();
                let mut holder = &mut mutant;
                for step in &at {
                    holder = match step {
                        Value::String(k) => &mut holder[k.as_str()],
                        i => &mut holder[i.as_u64().unwrap() as usize],
                    };
                }
                let o = holder.as_object_mut().unwrap();
                if o.contains_key(&changed) {
                    continue;
                }
                let value = o.remove(&name).unwrap();
                o.insert(changed.clone(), value);
                mutants += 1;
                for (request, before) in requests.iter().zip(&verdicts) {
                    let after = policy_verdict(&mutant, request);
                    refused += usize::from(after.is_none());
                    assert!(
                        after.is_none() || after == *before,
                        "{}: {name:?} at {at:?} written {changed:?} turns {before:?} into \
                         {after:?} for {request}",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(mutants > 1000, "only {mutants} mutants");
    eprintln!("{mutants} one-character mutants, {refused} refusals");
}
