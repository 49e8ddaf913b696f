//! Quantities and byte strings as geth's JSON writes them (and as users type them): `0x` hex,
//! decimal strings, bare JSON integers. Shared by fixtures, node answers, chain configs, policy
//! requests and the CLI.

use alloy_primitives::{Bytes, U256};
use serde_json::Value;

/// Parses a JSON number given as a bare integer, a decimal string or a `0x` hex string.
pub fn parse_u256(v: &Value) -> Result<U256, String> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .map(U256::from)
            .ok_or_else(|| format!("number {n} is not a non-negative integer")),
        Value::String(s) => parse_u256_str(s),
        other => Err(format!("expected a number, got {other}")),
    }
}

/// Parses a quantity string: `0x` hex or decimal.
pub fn parse_u256_str(s: &str) -> Result<U256, String> {
    let t = s.trim();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() {
            Ok(U256::ZERO)
        } else {
            U256::from_str_radix(h, 16)
        }
    } else {
        U256::from_str_radix(t, 10)
    };
    r.map_err(|_| format!("{s:?} is not a number"))
}

/// Like [`parse_u256`] for values that must fit 64 bits.
pub fn parse_u64(v: &Value) -> Result<u64, String> {
    let n = parse_u256(v)?;
    u64::try_from(n).map_err(|_| format!("{n} does not fit in 64 bits"))
}

/// Decodes hex with or without a `0x` prefix.
pub fn parse_hex(s: &str) -> Result<Bytes, String> {
    let t = s.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    alloy_primitives::hex::decode(t)
        .map(Bytes::from)
        .map_err(|e| format!("bad hex ({e})"))
}
