//! Quantities and byte strings as geth's JSON writes them (and as users type them): `0x` hex,
//! decimal strings, bare JSON integers. Shared by fixtures, node answers, chain configs, policy
//! requests and the CLI.

use alloy_primitives::{Bytes, U256};
use serde_json::Value;

/// Why a quantity or a byte string cannot be read; each message quotes what was given.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HexError {
    /// A JSON number that is negative, fractional or beyond 64 bits.
    #[error("number {0} is not a non-negative integer")]
    NotInteger(serde_json::Number),
    /// Neither a number nor a string.
    #[error("expected a number, got {0}")]
    NotNumber(Value),
    /// A string that is neither `0x` hex nor decimal, or beyond 256 bits.
    #[error("{0:?} is not a number")]
    NotQuantity(String),
    /// A quantity that must fit 64 bits and does not.
    #[error("{0} does not fit in 64 bits")]
    TooLarge(U256),
    /// A byte string that is not hex of whole bytes.
    #[error("bad hex ({0})")]
    Bytes(#[from] alloy_primitives::hex::FromHexError),
}

/// Parses a JSON number given as a bare integer, a decimal string or a `0x` hex string.
pub fn parse_u256(v: &Value) -> Result<U256, HexError> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .map(U256::from)
            .ok_or_else(|| HexError::NotInteger(n.clone())),
        Value::String(s) => parse_u256_str(s),
        other => Err(HexError::NotNumber(other.clone())),
    }
}

/// Parses a quantity string: `0x` hex or decimal.
pub fn parse_u256_str(s: &str) -> Result<U256, HexError> {
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
    r.map_err(|_| HexError::NotQuantity(s.to_string()))
}

/// Like [`parse_u256`] for values that must fit 64 bits.
pub fn parse_u64(v: &Value) -> Result<u64, HexError> {
    let n = parse_u256(v)?;
    u64::try_from(n).map_err(|_| HexError::TooLarge(n))
}

/// Decodes hex with or without a `0x` prefix.
pub fn parse_hex(s: &str) -> Result<Bytes, HexError> {
    let t = s.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    Ok(alloy_primitives::hex::decode(t).map(Bytes::from)?)
}
