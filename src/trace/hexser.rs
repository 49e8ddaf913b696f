//! Serde helpers that print values the way geth's `hexutil` does.
//!
//! Addresses and hashes are lowercase `0x` hex (alloy would checksum addresses), quantities are
//! compact `0x` hex (`0x0`, `0x1a`), byte strings are `0x` followed by their hex (`0x` when empty).

use alloy_primitives::{hex, Address, Bytes, B256, U256};
use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

pub fn address<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("0x{}", hex::encode(a.as_slice())))
}

pub fn opt_address<S: Serializer>(a: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
    match a {
        Some(a) => address(a, s),
        None => s.serialize_none(),
    }
}

pub fn b256<S: Serializer>(h: &B256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("0x{}", hex::encode(h.as_slice())))
}

pub fn b256_vec<S: Serializer>(v: &[B256], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for h in v {
        seq.serialize_element(&format!("0x{}", hex::encode(h.as_slice())))?;
    }
    seq.end()
}

pub fn bytes<S: Serializer>(b: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("0x{}", hex::encode(b)))
}

pub fn opt_bytes<S: Serializer>(b: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
    match b {
        Some(b) => bytes(b, s),
        None => s.serialize_none(),
    }
}

pub fn u64_hex<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{n:#x}"))
}

pub fn u256_hex<S: Serializer>(n: &U256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{n:#x}"))
}

pub fn opt_u256_hex<S: Serializer>(n: &Option<U256>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => u256_hex(n, s),
        None => s.serialize_none(),
    }
}

/// Reads a quantity given as `0x` hex string, decimal string or JSON integer.
pub fn de_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    crate::source::fixture::parse_u64(&v).map_err(D::Error::custom)
}

pub fn de_opt_u256<'de, D: Deserializer<'de>>(d: D) -> Result<Option<U256>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    if v.is_null() {
        return Ok(None);
    }
    crate::source::fixture::parse_u256(&v)
        .map(Some)
        .map_err(D::Error::custom)
}

pub fn de_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
    let s = String::deserialize(d)?;
    crate::source::fixture::parse_hex(&s).map_err(D::Error::custom)
}

pub fn de_opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bytes>, D::Error> {
    let s = Option::<String>::deserialize(d)?;
    s.map(|s| crate::source::fixture::parse_hex(&s).map_err(D::Error::custom))
        .transpose()
}
