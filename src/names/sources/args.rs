//! An internal function's arguments as the stack holds them (legacy code generation): how many
//! slots each parameter takes, and a value type's word as Solidity reads it.

use alloy_dyn_abi::{DynSolType, DynSolValue};
use alloy_primitives::{Address, B256, I256, U256};

use super::spans::abi_type;
use crate::render::values::{short_amount, Shown};

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
/// bits of a short integer, the high bytes of a `bytesN`), shown as decoded values are
/// ([`Shown`]); `None` for a type whose slot holds a reference (memory, calldata, storage) or
/// no value.
pub fn format(ty: &str, word: U256) -> Option<String> {
    let value = match DynSolType::parse(&abi_type(ty)).ok()? {
        DynSolType::Bool => DynSolValue::Bool(!word.is_zero()),
        DynSolType::Address => {
            DynSolValue::Address(Address::from_word(B256::from(word.to_be_bytes::<32>())))
        }
        DynSolType::Uint(bits) => DynSolValue::Uint(low(word, bits), bits),
        DynSolType::Int(bits) => {
            // Sign-extended from the type's bits.
            let v = low(word, bits);
            let raw = if v.bit(bits - 1) {
                v | !low(U256::MAX, bits)
            } else {
                v
            };
            DynSolValue::Int(I256::from_raw(raw), bits)
        }
        DynSolType::FixedBytes(n) => {
            DynSolValue::FixedBytes(B256::from(word.to_be_bytes::<32>()), n)
        }
        _ => return None,
    };
    let shown = Shown(&value).to_string();
    Some(match &value {
        DynSolValue::Uint(v, _) => with_short(shown, *v, ""),
        DynSolValue::Int(i, _) => with_short(
            shown,
            i.unsigned_abs(),
            if i.is_negative() { "-" } else { "" },
        ),
        _ => shown,
    })
}

fn low(word: U256, bits: usize) -> U256 {
    if bits >= 256 {
        word
    } else {
        word & ((U256::from(1u8) << bits) - U256::from(1u8))
    }
}

/// `100000000000000000000 [1e20]`: a large amount with its short form beside it (its `sign`
/// before), as cast prints them.
fn with_short(text: String, magnitude: U256, sign: &str) -> String {
    match short_amount(magnitude, sign) {
        Some(short) => format!("{text} [{short}]"),
        None => text,
    }
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
