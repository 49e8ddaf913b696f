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
