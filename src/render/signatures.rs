//! The bundled signature table: names for well-known function selectors, custom errors and
//! event topics.
//!
//! Traces of real transactions mostly go through a small set of standard interfaces (ERC-20,
//! ERC-721/1155/4626, ERC-6093 and OpenZeppelin errors, WETH, Permit2, Uniswap v2/v3, Safe,
//! multicalls, proxies), so naming these without an ABI file already makes most trees readable.
//!
//! The table is `signatures.txt`, human-readable declarations with parameter names (and `indexed`
//! markers for events), in the same format as `--signatures FILE`. alloy parses it and computes
//! every selector and topic with keccak256 on first use: a typo in the table can only produce a
//! wrong *name*, never a selector silently attached to the wrong signature.

use std::sync::OnceLock;

use alloy_primitives::{keccak256, B256};

use super::abi::Abi;

/// The table's text.
pub const TABLE: &str = include_str!("signatures.txt");

/// The bundled table, parsed once.
pub fn bundled() -> &'static Abi {
    static TABLE_ABI: OnceLock<Abi> = OnceLock::new();
    TABLE_ABI.get_or_init(|| {
        // A line that does not parse is a bug in the table, caught by the tests below; at run
        // time it is skipped rather than aborting a trace.
        Abi::from_declarations(TABLE).unwrap_or_else(|_| {
            let mut abi = Abi::default();
            for line in TABLE.lines() {
                if let Ok(one) = Abi::from_declarations(line) {
                    abi.merge(one);
                }
            }
            abi
        })
    })
}

/// The 4-byte selector of a canonical function or error signature.
pub fn selector(signature: &str) -> [u8; 4] {
    let h = keccak256(signature.as_bytes());
    [h[0], h[1], h[2], h[3]]
}

/// The topic0 of a canonical event signature.
pub fn event_topic(signature: &str) -> B256 {
    keccak256(signature.as_bytes())
}

/// Canonical signature of a bundled function, e.g. `transfer(address,uint256)`.
pub fn function_signature(selector: [u8; 4]) -> Option<String> {
    bundled().function(selector).map(|f| f.signature())
}

/// Canonical signature of a bundled error.
pub fn error_signature(selector: [u8; 4]) -> Option<String> {
    bundled().error(selector).map(|e| e.signature())
}

/// Canonical signature of a bundled event.
pub fn event_signature(topic: &B256) -> Option<String> {
    bundled().event(topic).map(|e| e.signature())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::revert::{ERROR_SELECTOR, PANIC_SELECTOR};
    use alloy_primitives::{b256, hex};

    #[test]
    fn every_line_parses() {
        let abi = Abi::from_declarations(TABLE).unwrap();
        assert!(abi.len() >= 250, "{}", abi.len());
        // No line is lost to de-duplication: the table has no repeated shapes.
        let declared = TABLE
            .lines()
            .filter(|l| {
                ["function ", "error ", "event "]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .count();
        assert_eq!(abi.len(), declared);
    }

    #[test]
    fn well_known_selectors() {
        let sel = |s: &str| -> [u8; 4] { hex::decode(s).unwrap().try_into().unwrap() };
        let f = |s: &str| function_signature(sel(s));
        assert_eq!(f("a9059cbb").as_deref(), Some("transfer(address,uint256)"));
        assert_eq!(
            f("23b872dd").as_deref(),
            Some("transferFrom(address,address,uint256)")
        );
        assert_eq!(f("095ea7b3").as_deref(), Some("approve(address,uint256)"));
        assert_eq!(f("70a08231").as_deref(), Some("balanceOf(address)"));
        assert_eq!(f("d0e30db0").as_deref(), Some("deposit()"));
        assert_eq!(f("ac9650d8").as_deref(), Some("multicall(bytes[])"));
        assert_eq!(
            f("252dba42").as_deref(),
            Some("aggregate((address,bytes)[])")
        );
        assert_eq!(
            f("82ad56cb").as_deref(),
            Some("aggregate3((address,bool,bytes)[])")
        );
        assert_eq!(
            f("414bf389").as_deref(),
            Some("exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))")
        );
        assert_eq!(f("8129fc1c").as_deref(), Some("initialize()"));
        assert_eq!(f("6e553f65").as_deref(), Some("deposit(uint256,address)"));
        assert_eq!(
            f("ba087652").as_deref(),
            Some("redeem(uint256,address,address)")
        );
        assert_eq!(
            f("36c78516").as_deref(),
            Some("transferFrom(address,address,uint160,address)")
        );
        assert_eq!(
            f("6a761202").as_deref(),
            Some("execTransaction(address,uint256,bytes,uint8,uint256,uint256,uint256,address,address,bytes)")
        );
        assert_eq!(
            error_signature(ERROR_SELECTOR).as_deref(),
            Some("Error(string)")
        );
        assert_eq!(
            error_signature(PANIC_SELECTOR).as_deref(),
            Some("Panic(uint256)")
        );
        assert_eq!(
            error_signature(sel("e450d38c")).as_deref(),
            Some("ERC20InsufficientBalance(address,uint256,uint256)")
        );
        assert_eq!(
            error_signature(sel("118cdaa7")).as_deref(),
            Some("OwnableUnauthorizedAccount(address)")
        );
        assert_eq!(
            error_signature(sel("e2517d3f")).as_deref(),
            Some("AccessControlUnauthorizedAccount(address,bytes32)")
        );
        assert_eq!(
            error_signature(sel("d93c0665")).as_deref(),
            Some("EnforcedPause()")
        );
        let transfer = b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
        assert_eq!(
            event_signature(&transfer).as_deref(),
            Some("Transfer(address,address,uint256)")
        );
        // ERC-20's and ERC-721's Transfer share the topic: both are candidates.
        assert_eq!(bundled().events(&transfer).len(), 2);
    }
}
