//! Revert data decoding: `Error(string)`, `Panic(uint256)` and custom errors.
//!
//! [`decode_revert_reason`] is geth's `abi.UnpackRevert` (what the callTracer's `revertReason`
//! holds); [`describe_revert`] is the richer text for people, which also names custom errors.

use alloy_primitives::U256;

/// Selector of `Error(string)`.
pub const ERROR_SELECTOR: [u8; 4] = [0x08, 0xc3, 0x79, 0xa0];
/// Selector of `Panic(uint256)`.
pub const PANIC_SELECTOR: [u8; 4] = [0x4e, 0x48, 0x7b, 0x71];

/// geth's texts for Solidity panic codes.
pub fn panic_reason(code: U256) -> String {
    let known = u64::try_from(code).ok().and_then(|c| {
        Some(match c {
            0x00 => "generic panic",
            0x01 => "assert(false)",
            0x11 => "arithmetic underflow or overflow",
            0x12 => "division or modulo by zero",
            0x21 => "enum overflow",
            0x22 => "invalid encoded storage byte array accessed",
            0x31 => "out-of-bounds array access; popping on an empty array",
            0x32 => "out-of-bounds access of an array or bytesN",
            0x41 => "out of memory",
            0x51 => "uninitialized function",
            _ => return None,
        })
    });
    match known {
        Some(s) => s.to_string(),
        None => format!("unknown panic code: {code:#x}"),
    }
}

fn word(data: &[u8], at: usize) -> Option<U256> {
    data.get(at..at.checked_add(32)?).map(U256::from_be_slice)
}

/// Decodes one ABI `string` argument from `args` (the data after the selector).
pub fn abi_string(args: &[u8]) -> Option<String> {
    let offset = usize::try_from(word(args, 0)?).ok()?;
    let len = usize::try_from(word(args, offset)?).ok()?;
    let start = offset.checked_add(32)?;
    let bytes = args.get(start..start.checked_add(len)?)?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// geth's `abi.UnpackRevert`: the reason of an `Error(string)` or `Panic(uint256)` revert.
pub fn decode_revert_reason(data: &[u8]) -> Option<String> {
    if data.len() < 4 {
        return None;
    }
    let (sel, args) = data.split_at(4);
    if sel == ERROR_SELECTOR {
        abi_string(args)
    } else if sel == PANIC_SELECTOR {
        word(args, 0).map(panic_reason)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::hex;

    #[test]
    fn error_string_is_decoded() {
        let data = hex::decode("08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000000548656c6c6f000000000000000000000000000000000000000000000000000000").unwrap();
        assert_eq!(decode_revert_reason(&data).as_deref(), Some("Hello"));
    }

    #[test]
    fn panic_codes_use_geth_texts() {
        let mut data = PANIC_SELECTOR.to_vec();
        data.extend_from_slice(&U256::from(0x12).to_be_bytes::<32>());
        assert_eq!(
            decode_revert_reason(&data).as_deref(),
            Some("division or modulo by zero")
        );
        let mut data = PANIC_SELECTOR.to_vec();
        data.extend_from_slice(&U256::from(0x99).to_be_bytes::<32>());
        assert_eq!(
            decode_revert_reason(&data).as_deref(),
            Some("unknown panic code: 0x99")
        );
    }
}
