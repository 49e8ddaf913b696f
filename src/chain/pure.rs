//! The chain's two pure precompiles, run locally: json (0x…1003) and p256 (0x…1011).
//!
//! Both are ABI-encoded calls (not raw-input precompiles) behind the node's dynamic-gas wrapper
//! (`precompiles/common/precompiles.go`, `precompiles/json/json.go`, `precompiles/p256/p256.go`
//! at the node's HEAD). Every failure — unknown selector, undecodable arguments, value sent,
//! a missing key, a DELEGATECALL into p256 — is `execution reverted` with no data and all the
//! supplied gas used (the wrapper returns remaining gas 0 with the error).
//!
//! Gas, as the wrapper meters it: a calldata scan of `1000 + 3 × len(input)` (the KV store's
//! read costs), `3 ×` the bytes of every `string` argument the ABI decoder copies, then the
//! method's own charge: `100 ×` the JSON payload's length, or a flat 3450 for p256. That is in
//! the node's Cosmos gas units; EVM gas is the same only with the `PriorityNormalizer`
//! parameter at its default 1 and no gas-meter multiplier, which is assumed here. When the
//! node's own frame is at hand its gas is used instead (see `replay::splice`), and the
//! self-check compares the receipt either way. Older versions of these precompiles
//! (`legacy/vNNN`) are not modelled.

use alloy_dyn_abi::{DynSolType, DynSolValue};
use alloy_primitives::{keccak256, Bytes, U256};
use serde_json::value::RawValue;

/// What a pure precompile call did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PureOutcome {
    pub success: bool,
    pub output: Bytes,
    pub gas_used: u64,
}

/// The KV store's read costs (sei-cosmos `store/types/gas.go` `KVGasConfig`).
const READ_COST_FLAT: u64 = 1000;
const READ_COST_PER_BYTE: u64 = 3;
/// json.go `GasCostPerByte`.
const JSON_GAS_PER_BYTE: u64 = 100;
/// p256.go `P256VerifyGas`.
const P256_VERIFY_GAS: u64 = 3450;

/// How the call reached the precompile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallShape {
    pub value: U256,
    pub delegate: bool,
    /// The gas the call supplied.
    pub gas: u64,
}

fn selector(sig: &str) -> [u8; 4] {
    let h = keccak256(sig.as_bytes());
    [h[0], h[1], h[2], h[3]]
}

fn failed(gas: u64) -> PureOutcome {
    PureOutcome {
        success: false,
        output: Bytes::new(),
        gas_used: gas,
    }
}

/// Runs the pure precompile `name` ("json" or "p256"); `None` for any other name.
pub fn run(name: &str, input: &[u8], call: CallShape) -> Option<PureOutcome> {
    let methods: &[(&str, &str)] = match name {
        "json" => &[
            ("extractAsBytes(bytes,string)", "(bytes,string)"),
            ("extractAsBytesList(bytes,string)", "(bytes,string)"),
            ("extractAsUint256(bytes,string)", "(bytes,string)"),
            ("extractAsBytesFromArray(bytes,uint16)", "(bytes,uint16)"),
        ],
        "p256" => &[("verify(bytes)", "(bytes)")],
        _ => return None,
    };
    Some(run_method(name, methods, input, call).unwrap_or_else(|| failed(call.gas)))
}

/// `None` is a failure (all gas used).
fn run_method(
    name: &str,
    methods: &[(&str, &str)],
    input: &[u8],
    call: CallShape,
) -> Option<PureOutcome> {
    let sel: [u8; 4] = input.get(..4)?.try_into().ok()?;
    let (sig, args) = methods.iter().find(|(s, _)| selector(s) == sel)?;
    let mut gas = READ_COST_FLAT + READ_COST_PER_BYTE * input.len() as u64;
    let ty: DynSolType = args.parse().ok()?;
    let DynSolValue::Tuple(values) = ty.abi_decode_params(&input[4..]).ok()? else {
        return None;
    };
    // The decoder copies `string` arguments (decode_cost.go); `bytes` are resliced.
    for v in &values {
        if let DynSolValue::String(s) = v {
            gas += READ_COST_PER_BYTE * s.len() as u64;
        }
    }
    if gas > call.gas {
        return None;
    }
    let payload = match values.first() {
        Some(DynSolValue::Bytes(b)) => b.as_slice(),
        _ => return None,
    };
    let output = if name == "json" {
        gas += JSON_GAS_PER_BYTE * payload.len() as u64;
        if gas > call.gas || !call.value.is_zero() {
            return None;
        }
        json(sig, payload, values.get(1)?)?
    } else {
        if !call.value.is_zero() || call.delegate {
            return None;
        }
        gas += P256_VERIFY_GAS;
        if gas > call.gas {
            return None;
        }
        p256(payload)?
    };
    Some(PureOutcome {
        success: true,
        output,
        gas_used: gas,
    })
}

/// Packs one `bytes` return value.
fn pack_bytes(b: &[u8]) -> Bytes {
    DynSolValue::Tuple(vec![DynSolValue::Bytes(b.to_vec())])
        .abi_encode_params()
        .into()
}

/// Go's `json.Unmarshal` into `map[string]json.RawMessage` (a JSON `null` is an empty map;
/// a repeated key keeps its last value), then the value under `key`.
fn member<'a>(payload: &'a [u8], key: &str) -> Option<&'a str> {
    let text = std::str::from_utf8(payload).ok()?;
    if text.trim() == "null" {
        return None;
    }
    let map: std::collections::HashMap<String, &'a RawValue> = serde_json::from_str(text).ok()?;
    map.get(key).map(|r| r.get())
}

/// A string value without its quotes (json.go keeps the escapes inside as they are).
fn unquote(raw: &str) -> &str {
    if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
        &raw[1..raw.len() - 1]
    } else {
        raw
    }
}

fn json(sig: &str, payload: &[u8], arg: &DynSolValue) -> Option<Bytes> {
    match (sig, arg) {
        ("extractAsBytes(bytes,string)", DynSolValue::String(key)) => {
            Some(pack_bytes(unquote(member(payload, key)?).as_bytes()))
        }
        ("extractAsBytesList(bytes,string)", DynSolValue::String(key)) => {
            let raw = member(payload, key)?;
            let items: Vec<&RawValue> = if raw == "null" {
                Vec::new()
            } else {
                serde_json::from_str(raw).ok()?
            };
            let list = items
                .iter()
                .map(|r| DynSolValue::Bytes(r.get().as_bytes().to_vec()))
                .collect();
            Some(
                DynSolValue::Tuple(vec![DynSolValue::Array(list)])
                    .abi_encode_params()
                    .into(),
            )
        }
        ("extractAsUint256(bytes,string)", DynSolValue::String(key)) => {
            // strings.Trim(…, "\"") then big.Int SetString base 10 (a sign is accepted and
            // FillBytes writes the absolute value).
            let s = member(payload, key)?.trim_matches('"');
            if s.len() > 100 {
                return None;
            }
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v = U256::from_str_radix(digits, 10).ok()?;
            Some(Bytes::from(v.to_be_bytes::<32>().to_vec()))
        }
        ("extractAsBytesFromArray(bytes,uint16)", DynSolValue::Uint(index, _)) => {
            let text = std::str::from_utf8(payload).ok()?;
            let items: Vec<&RawValue> = if text.trim() == "null" {
                Vec::new()
            } else {
                serde_json::from_str(text).ok()?
            };
            if items.len() > 1 << 16 {
                return None;
            }
            let i: usize = index.to::<u64>().try_into().ok()?;
            Some(pack_bytes(unquote(items.get(i)?.get()).as_bytes()))
        }
        _ => None,
    }
}

/// RIP-7212 verification of `hash ‖ r ‖ s ‖ x ‖ y`: a valid signature returns the packed
/// 32-byte 1, an invalid one returns nothing (and succeeds); a wrong length fails.
fn p256(input: &[u8]) -> Option<Bytes> {
    if input.len() != 160 {
        return None;
    }
    if revm::precompile::secp256r1::verify_impl(input) {
        let mut one = [0u8; 32];
        one[31] = 1;
        Some(pack_bytes(&one))
    } else {
        Some(Bytes::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(gas: u64) -> CallShape {
        CallShape {
            value: U256::ZERO,
            delegate: false,
            gas,
        }
    }

    fn input(sig: &str, args: Vec<DynSolValue>) -> Vec<u8> {
        let mut v = selector(sig).to_vec();
        v.extend(DynSolValue::Tuple(args).abi_encode_params());
        v
    }

    #[test]
    fn json_extracts_a_string_without_quotes_and_prices_scan_key_and_payload() {
        let payload = br#"{"a": "hello", "b": [1, "x"]}"#.to_vec();
        let i = input(
            "extractAsBytes(bytes,string)",
            vec![
                DynSolValue::Bytes(payload.clone()),
                DynSolValue::String("a".into()),
            ],
        );
        let out = run("json", &i, call(1_000_000)).unwrap();
        assert!(out.success);
        assert_eq!(out.output, pack_bytes(b"hello"));
        assert_eq!(
            out.gas_used,
            1000 + 3 * i.len() as u64 + 3 + 100 * payload.len() as u64
        );
        let list = input(
            "extractAsBytesList(bytes,string)",
            vec![DynSolValue::Bytes(payload), DynSolValue::String("b".into())],
        );
        let out = run("json", &list, call(1_000_000)).unwrap();
        let want = DynSolValue::Tuple(vec![DynSolValue::Array(vec![
            DynSolValue::Bytes(b"1".to_vec()),
            DynSolValue::Bytes(b"\"x\"".to_vec()),
        ])])
        .abi_encode_params();
        assert_eq!(out.output.to_vec(), want);
    }

    #[test]
    fn json_uint_missing_keys_and_value_fail_as_the_node_does() {
        let p = br#"{"n": "-12", "big": "1e3"}"#.to_vec();
        let q = |k: &str| {
            input(
                "extractAsUint256(bytes,string)",
                vec![DynSolValue::Bytes(p.clone()), DynSolValue::String(k.into())],
            )
        };
        let out = run("json", &q("n"), call(1_000_000)).unwrap();
        assert_eq!(
            out.output.to_vec(),
            U256::from(12).to_be_bytes::<32>().to_vec()
        );
        assert_eq!(
            run("json", &q("big"), call(50_000)).unwrap(),
            failed(50_000)
        );
        assert_eq!(
            run("json", &q("nope"), call(50_000)).unwrap(),
            failed(50_000)
        );
        let mut paid = call(1_000_000);
        paid.value = U256::from(1);
        assert!(!run("json", &q("n"), paid).unwrap().success);
        assert!(!run("json", &[1, 2], call(9)).unwrap().success);
        let arr = input(
            "extractAsBytesFromArray(bytes,uint16)",
            vec![
                DynSolValue::Bytes(br#"["a", {"k": 1}]"#.to_vec()),
                DynSolValue::Uint(U256::from(1), 16),
            ],
        );
        assert_eq!(
            run("json", &arr, call(1_000_000)).unwrap().output,
            pack_bytes(br#"{"k": 1}"#)
        );
    }

    #[test]
    fn p256_verifies_rip_7212_input_and_refuses_delegatecall() {
        // RIP-7212's first valid vector (also in revm's secp256r1 tests).
        let v = alloy_primitives::hex::decode(
            "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4da73bd4903f0ce3b639bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac36dbcd03009df8c59286b162af3bd7fcc0450c9aa81be5d10d312af6c66b1d604aebd3099c618202fcfe16ae7770b0c49ab5eadf74b754204a3bb6060e44eff37618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e",
        )
        .unwrap();
        let i = input("verify(bytes)", vec![DynSolValue::Bytes(v.clone())]);
        let out = run("p256", &i, call(100_000)).unwrap();
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(out.output, pack_bytes(&one));
        assert_eq!(out.gas_used, 1000 + 3 * i.len() as u64 + 3450);
        let mut bad = v;
        bad[0] ^= 1;
        let out = run(
            "p256",
            &input("verify(bytes)", vec![DynSolValue::Bytes(bad)]),
            call(100_000),
        )
        .unwrap();
        assert!(out.success && out.output.is_empty());
        let mut d = call(100_000);
        d.delegate = true;
        assert_eq!(run("p256", &i, d).unwrap(), failed(100_000));
    }
}
