//! An internal function's arguments as the stack holds them (legacy code generation): how many
//! slots each parameter takes, and a value type's word as Solidity reads it.

use alloy_primitives::{Address, U256};

/// Stack slots a parameter of solc type `ty` takes: one; `None` where the layout is not known
/// for certain — a dynamic calldata value (offset and length: solc 0.7's dispatcher leaves
/// another word above such arguments, seen on Uniswap v3's pool) or an external function —
/// and then no value of the function is read.
pub fn slots(ty: &str) -> Option<usize> {
    if ty.starts_with("function ") {
        return (!ty.contains(" external")).then_some(1);
    }
    match ty.strip_suffix(" calldata") {
        Some(t) if t == "bytes" || t == "string" || t.ends_with("[]") => None,
        _ => Some(1),
    }
}

/// The value of a parameter of solc type `ty` held in `word`, as Solidity reads it (the low
/// bits of a short integer, the high bytes of a `bytesN`); `None` for a type whose slot holds a
/// reference (memory, calldata, storage) or no value.
pub fn format(ty: &str, word: U256) -> Option<String> {
    if ty == "bool" {
        return Some((!word.is_zero()).to_string());
    }
    if ty == "address" || ty == "address payable" || ty.starts_with("contract ") {
        let bytes = word.to_be_bytes::<32>();
        return Some(Address::from_slice(&bytes[12..]).to_checksum(None));
    }
    if let Some(bits) = ty.strip_prefix("uint").and_then(bits_of) {
        return Some(with_short(low(word, bits).to_string(), low(word, bits)));
    }
    if let Some(bits) = ty.strip_prefix("int").and_then(bits_of) {
        let v = low(word, bits);
        let negative = v.bit(bits - 1);
        return Some(if negative {
            // Two's complement negation within the type's bits.
            let magnitude = low(U256::ZERO.wrapping_sub(v), bits);
            with_short(format!("-{magnitude}"), magnitude).replace(" [", " [-")
        } else {
            with_short(v.to_string(), v)
        });
    }
    if let Some(n) = ty
        .strip_prefix("bytes")
        .and_then(|n| n.parse::<usize>().ok())
    {
        if (1..=32).contains(&n) {
            let bytes = word.to_be_bytes::<32>();
            return Some(format!("0x{}", alloy_primitives::hex::encode(&bytes[..n])));
        }
    }
    if ty.starts_with("enum ") {
        return Some(low(word, 8).to_string());
    }
    None
}

fn bits_of(b: &str) -> Option<usize> {
    if b.is_empty() {
        return Some(256);
    }
    b.parse::<usize>()
        .ok()
        .filter(|n| *n > 0 && *n <= 256 && n % 8 == 0)
}

fn low(word: U256, bits: usize) -> U256 {
    if bits >= 256 {
        word
    } else {
        word & ((U256::from(1u8) << bits) - U256::from(1u8))
    }
}

/// `100000000000000000000 [1e20]`: a large amount with its short form beside it, as cast
/// prints them.
fn with_short(text: String, magnitude: U256) -> String {
    if magnitude < U256::from(1_000_000u32) {
        return text;
    }
    let digits = magnitude.to_string();
    let exp = digits.len() - 1;
    let mantissa = digits.trim_end_matches('0');
    let short = if mantissa.len() <= 1 {
        format!("{mantissa}e{exp}")
    } else {
        format!(
            "{}.{}e{exp}",
            &mantissa[..1],
            &mantissa[1..mantissa.len().min(5)]
        )
    };
    format!("{text} [{short}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_of_calldata_and_memory() {
        assert_eq!(slots("bytes calldata"), None);
        assert_eq!(slots("uint256[] calldata"), None);
        assert_eq!(slots("uint256[2] calldata"), Some(1));
        assert_eq!(slots("bytes memory"), Some(1));
        assert_eq!(slots("bytes32"), Some(1));
        assert_eq!(slots("function (uint256) external"), None);
    }

    #[test]
    fn values_as_solidity_reads_them() {
        let neg60 = U256::ZERO.wrapping_sub(U256::from(60u8));
        assert_eq!(format("int24", neg60).as_deref(), Some("-60"));
        // Dirty high bits of a short type are not part of its value.
        assert_eq!(format("uint8", U256::from(0x1_05u32)).as_deref(), Some("5"));
        assert_eq!(
            format("uint256", U256::from(10u8).pow(U256::from(20u8))).as_deref(),
            Some("100000000000000000000 [1e20]")
        );
        assert_eq!(
            format("uint256", U256::from(123_450_000u64)).as_deref(),
            Some("123450000 [1.2345e8]")
        );
        assert_eq!(format("int8", U256::from(0x80u8)).as_deref(), Some("-128"));
        let tick = U256::ZERO.wrapping_sub(U256::from(887_340u32));
        assert_eq!(format("int24", tick).as_deref(), Some("-887340"));
        let far = U256::ZERO.wrapping_sub(U256::from(8_873_400u32));
        assert_eq!(
            format("int32", far).as_deref(),
            Some("-8873400 [-8.8734e6]")
        );
        assert_eq!(format("bool", U256::from(1u8)).as_deref(), Some("true"));
        assert_eq!(format("struct P memory", U256::from(0x80u8)), None);
        assert_eq!(format("string calldata", U256::from(4u8)), None);
        let mut b = [0u8; 32];
        b[0] = 0xab;
        b[1] = 0xcd;
        assert_eq!(
            format("bytes2", U256::from_be_bytes(b)).as_deref(),
            Some("0xabcd")
        );
    }
}
