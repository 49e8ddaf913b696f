//! Strict ABI decoding on `alloy-dyn-abi`, and decoded values as text for people.
//!
//! alloy decodes leniently (it keeps dirty padding, reads `bool` as "non-zero"); a trace renderer
//! is better off printing a bare signature than a confident but wrong decoding of data that merely
//! shares a selector, and "every candidate that decodes" is only useful when decoding can fail.
//! So a decoding counts only when every integer fits its width, every `bytesN` is zero-padded,
//! and re-encoding the values gives back the data (canonical offsets, clean `address`/`bool`
//! words). Trailing bytes after the encoding are allowed, as Solidity allows them.

use std::fmt;

use alloy_dyn_abi::{DynSolType, DynSolValue, Specifier};
use alloy_json_abi::{Event, Param};
use alloy_primitives::{hex, B256, U256};

/// Decodes `data` (no selector) as the tuple of `params`; `None` unless it decodes strictly.
pub fn decode_params(params: &[Param], data: &[u8]) -> Option<Vec<DynSolValue>> {
    let types = params
        .iter()
        .map(|p| p.resolve())
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    decode_types(types, data)
}

/// Decodes `data` as the tuple of `types`, strictly.
pub fn decode_types(types: Vec<DynSolType>, data: &[u8]) -> Option<Vec<DynSolValue>> {
    let value = DynSolType::Tuple(types).abi_decode_sequence(data).ok()?;
    if !in_range(&value) || !data.starts_with(&value.abi_encode_params()) {
        return None;
    }
    match value {
        DynSolValue::Tuple(values) => Some(values),
        _ => None,
    }
}

/// Decodes a log against `event`: indexed parameters from topics 1.. (topic 0 for anonymous
/// events), the rest from data, in declaration order. Indexed dynamic values are only their hash,
/// shown as `bytes32`. `None` when the topic count differs or anything fails to decode.
pub fn decode_log(event: &Event, topics: &[B256], data: &[u8]) -> Option<Vec<DynSolValue>> {
    let skip = usize::from(!event.anonymous);
    if !event.anonymous && topics.first() != Some(&event.selector()) {
        return None;
    }
    let indexed_topics = topics.get(skip..)?;
    if indexed_topics.len() != event.inputs.iter().filter(|p| p.indexed).count() {
        return None;
    }
    let mut body_types = Vec::new();
    for p in event.inputs.iter().filter(|p| !p.indexed) {
        body_types.push(p.resolve().ok()?);
    }
    let mut body = decode_types(body_types, data)?.into_iter();
    let mut topic_iter = indexed_topics.iter();
    let mut out = Vec::with_capacity(event.inputs.len());
    for p in &event.inputs {
        if p.indexed {
            let topic = topic_iter.next()?;
            out.push(decode_topic(&p.resolve().ok()?, topic)?);
        } else {
            out.push(body.next()?);
        }
    }
    Some(out)
}

fn decode_topic(ty: &DynSolType, topic: &B256) -> Option<DynSolValue> {
    match ty {
        DynSolType::Address
        | DynSolType::Bool
        | DynSolType::Int(_)
        | DynSolType::Uint(_)
        | DynSolType::FixedBytes(_)
        | DynSolType::Function => {
            let v = ty.abi_decode(topic.as_slice()).ok()?;
            (in_range(&v) && v.abi_encode() == topic.as_slice()).then_some(v)
        }
        _ => Some(DynSolValue::FixedBytes(*topic, 32)),
    }
}

/// Whether every integer fits its width and every `bytesN` is zero-padded.
fn in_range(v: &DynSolValue) -> bool {
    match v {
        DynSolValue::Uint(u, bits) => *bits >= 256 || (*u >> *bits).is_zero(),
        DynSolValue::Int(i, bits) => {
            *bits >= 256 || {
                let raw = i.into_raw();
                let high = raw >> *bits;
                if raw.bit(bits - 1) {
                    high == U256::MAX >> *bits
                } else {
                    high.is_zero()
                }
            }
        }
        DynSolValue::FixedBytes(w, n) => w.get(*n..).is_some_and(|r| r.iter().all(|b| *b == 0)),
        DynSolValue::Array(vs) | DynSolValue::FixedArray(vs) | DynSolValue::Tuple(vs) => {
            vs.iter().all(in_range)
        }
        _ => true,
    }
}

/// A decoded value for people: checksummed addresses, decimal integers, `0x` bytes, quoted
/// strings (Rust's debug quoting keeps a trace line on one line whatever the string holds),
/// `[…]` arrays and `(…)` tuples.
pub struct Shown<'a>(pub &'a DynSolValue);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(
            f: &mut fmt::Formatter<'_>,
            open: &str,
            items: &[DynSolValue],
            close: &str,
        ) -> fmt::Result {
            f.write_str(open)?;
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", Shown(t))?;
            }
            f.write_str(close)
        }
        match self.0 {
            DynSolValue::Address(a) => f.write_str(&a.to_checksum(None)),
            DynSolValue::Bool(b) => write!(f, "{b}"),
            DynSolValue::Uint(u, _) => write!(f, "{u}"),
            DynSolValue::Int(i, _) => write!(f, "{i}"),
            DynSolValue::FixedBytes(w, n) => write!(f, "0x{}", hex::encode(&w[..(*n).min(32)])),
            DynSolValue::Function(func) => write!(f, "0x{}", hex::encode(func.as_slice())),
            DynSolValue::Bytes(b) => write!(f, "0x{}", hex::encode(b)),
            DynSolValue::String(s) => write!(f, "{s:?}"),
            DynSolValue::Array(vs) | DynSolValue::FixedArray(vs) => list(f, "[", vs, "]"),
            DynSolValue::Tuple(vs) => list(f, "(", vs, ")"),
        }
    }
}

/// `name(a: 1, 2)`: named arguments where the declaration has names.
pub fn format_call<'a>(
    name: &str,
    names: impl IntoIterator<Item = &'a str>,
    values: &[DynSolValue],
) -> String {
    let args: Vec<String> = names
        .into_iter()
        .zip(values)
        .map(|(n, v)| match n {
            "" => Shown(v).to_string(),
            n => format!("{n}: {}", Shown(v)),
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

/// The short form of a large amount, `sign` before it: `1e20`, `9.8e21`, `-1.2345e9` (the
/// first five significant digits), as cast prints them beside the exact value; `None` below a
/// million, where the exact value is short enough.
pub fn short_amount(magnitude: U256, sign: &str) -> Option<String> {
    if magnitude < U256::from(1_000_000u32) {
        return None;
    }
    let digits = magnitude.to_string();
    let exp = digits.len() - 1;
    let mantissa = digits.trim_end_matches('0');
    Some(if mantissa.len() <= 1 {
        format!("{sign}{mantissa}e{exp}")
    } else {
        format!(
            "{sign}{}.{}e{exp}",
            &mantissa[..1],
            &mantissa[1..mantissa.len().min(5)]
        )
    })
}
