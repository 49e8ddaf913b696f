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
    crate::geth::hex::parse_u64(&v).map_err(D::Error::custom)
}

pub fn de_opt_u256<'de, D: Deserializer<'de>>(d: D) -> Result<Option<U256>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    if v.is_null() {
        return Ok(None);
    }
    crate::geth::hex::parse_u256(&v)
        .map(Some)
        .map_err(D::Error::custom)
}

pub fn de_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
    let s = String::deserialize(d)?;
    crate::geth::hex::parse_hex(&s).map_err(D::Error::custom)
}

pub fn de_opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bytes>, D::Error> {
    let s = Option::<String>::deserialize(d)?;
    s.map(|s| crate::geth::hex::parse_hex(&s).map_err(D::Error::custom))
        .transpose()
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `0x` and the bytes' lowercase hex.
pub fn push_hex(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.reserve(2 + bytes.len() * 2);
    buf.extend_from_slice(b"0x");
    for b in bytes {
        buf.push(HEX[(b >> 4) as usize]);
        buf.push(HEX[(b & 0xf) as usize]);
    }
}

/// Appends a 256-bit word as `0x` + 64 hex digits (geth's `Hash.Hex()`).
pub fn push_word(buf: &mut Vec<u8>, v: &U256) {
    push_hex(buf, &v.to_be_bytes::<32>());
}

/// Appends a quantity in compact hex (`0x0`, `0x1f`), as geth's `uint256.Int.Hex()`.
pub fn push_quantity(buf: &mut Vec<u8>, v: &U256) {
    let bytes = v.to_be_bytes::<32>();
    buf.extend_from_slice(b"0x");
    let mut started = false;
    for b in bytes {
        for nib in [b >> 4, b & 0xf] {
            if nib != 0 || started {
                started = true;
                buf.push(HEX[nib as usize]);
            }
        }
    }
    if !started {
        buf.push(b'0');
    }
}

/// Appends a decimal number.
pub fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_match_geth_hexutil() {
        let mut b = Vec::new();
        push_quantity(&mut b, &U256::ZERO);
        b.push(b' ');
        push_quantity(&mut b, &U256::from(0x1fu64));
        b.push(b' ');
        push_u64(&mut b, 1234567);
        b.push(b' ');
        push_u64(&mut b, 0);
        assert_eq!(String::from_utf8(b).unwrap(), "0x0 0x1f 1234567 0");
        let mut w = Vec::new();
        push_word(&mut w, &U256::from(1u64));
        assert_eq!(
            String::from_utf8(w).unwrap(),
            format!("0x{}1", "0".repeat(63))
        );
    }
}
