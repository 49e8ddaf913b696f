//! geth's `hexutil` forms where alloy's own serde differs, and the struct logger's byte writers.
//!
//! alloy already writes hashes, byte strings and U256 as geth does (lowercase `0x` hex, compact
//! quantities), and `alloy_serde::quantity` writes u64 as `0x` quantities; only addresses need a
//! serializer here (alloy checksums them, geth prints lowercase). The `push_*` writers append
//! hex straight into the struct logger's output buffer, once per opcode, without a `String`.

use alloy_primitives::{hex, Address, U256};
use serde::Serializer;

pub fn address<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("0x{}", hex::encode(a.as_slice())))
}

pub fn opt_address<S: Serializer>(a: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
    match a {
        Some(a) => address(a, s),
        None => s.serialize_none(),
    }
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
