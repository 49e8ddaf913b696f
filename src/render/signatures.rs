//! Built-in names for well-known function selectors, custom errors and event topics.
//!
//! Traces of real transactions mostly go through a small set of standard interfaces (ERC-20,
//! ERC-721/1155, WETH, routers, multicalls, proxies, OpenZeppelin errors), so naming these
//! without an ABI file already makes most trees readable.
//!
//! The tables hold Solidity-style declarations with parameter names (and `indexed` markers for
//! events); the canonical signature, and from it the selector or topic, is computed with keccak256
//! on first use. Computing instead of hard-coding hex means a typo in a table can only produce a
//! wrong *name*, never a selector silently attached to the wrong signature.

use std::collections::HashMap;
use std::sync::OnceLock;

use alloy_primitives::{keccak256, B256};

/// A built-in entry: the declaration as written in the table and its canonical signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// Canonical signature, e.g. `transfer(address,uint256)`.
    pub signature: String,
    /// Declaration with parameter names, e.g. `transfer(address to,uint256 amount)`.
    pub declaration: &'static str,
}

impl Known {
    /// The name before the parameter list.
    pub fn name(&self) -> &str {
        self.signature.split('(').next().unwrap_or_default()
    }
}

/// Function declarations. Overloads (e.g. both `safeTransferFrom`s) have distinct selectors.
const FUNCTIONS: &[&str] = &[
    // ERC-20 and EIP-2612
    "transfer(address to,uint256 amount)",
    "transferFrom(address from,address to,uint256 amount)",
    "approve(address spender,uint256 amount)",
    "balanceOf(address account)",
    "allowance(address owner,address spender)",
    "totalSupply()",
    "decimals()",
    "symbol()",
    "name()",
    "increaseAllowance(address spender,uint256 addedValue)",
    "decreaseAllowance(address spender,uint256 subtractedValue)",
    "permit(address owner,address spender,uint256 value,uint256 deadline,uint8 v,bytes32 r,bytes32 s)",
    "nonces(address owner)",
    "DOMAIN_SEPARATOR()",
    "mint(address to,uint256 amount)",
    "burn(uint256 amount)",
    "burnFrom(address account,uint256 amount)",
    // ERC-721 / ERC-1155 / ERC-165
    "ownerOf(uint256 tokenId)",
    "safeTransferFrom(address from,address to,uint256 tokenId)",
    "safeTransferFrom(address from,address to,uint256 tokenId,bytes data)",
    "safeTransferFrom(address from,address to,uint256 id,uint256 value,bytes data)",
    "safeBatchTransferFrom(address from,address to,uint256[] ids,uint256[] values,bytes data)",
    "setApprovalForAll(address operator,bool approved)",
    "isApprovedForAll(address owner,address operator)",
    "getApproved(uint256 tokenId)",
    "tokenURI(uint256 tokenId)",
    "uri(uint256 id)",
    "balanceOf(address account,uint256 id)",
    "balanceOfBatch(address[] accounts,uint256[] ids)",
    "supportsInterface(bytes4 interfaceId)",
    "onERC721Received(address operator,address from,uint256 tokenId,bytes data)",
    "onERC1155Received(address operator,address from,uint256 id,uint256 value,bytes data)",
    "onERC1155BatchReceived(address operator,address from,uint256[] ids,uint256[] values,bytes data)",
    // WETH
    "deposit()",
    "withdraw(uint256 wad)",
    // Multicalls
    "multicall(bytes[] data)",
    "multicall(uint256 deadline,bytes[] data)",
    "aggregate((address target,bytes callData)[] calls)",
    "tryAggregate(bool requireSuccess,(address target,bytes callData)[] calls)",
    "aggregate3((address target,bool allowFailure,bytes callData)[] calls)",
    "aggregate3Value((address target,bool allowFailure,uint256 value,bytes callData)[] calls)",
    // Uniswap V2 router and pair
    "swapExactTokensForTokens(uint256 amountIn,uint256 amountOutMin,address[] path,address to,uint256 deadline)",
    "swapTokensForExactTokens(uint256 amountOut,uint256 amountInMax,address[] path,address to,uint256 deadline)",
    "swapExactETHForTokens(uint256 amountOutMin,address[] path,address to,uint256 deadline)",
    "swapETHForExactTokens(uint256 amountOut,address[] path,address to,uint256 deadline)",
    "swapExactTokensForETH(uint256 amountIn,uint256 amountOutMin,address[] path,address to,uint256 deadline)",
    "swapTokensForExactETH(uint256 amountOut,uint256 amountInMax,address[] path,address to,uint256 deadline)",
    "swapExactTokensForTokensSupportingFeeOnTransferTokens(uint256 amountIn,uint256 amountOutMin,address[] path,address to,uint256 deadline)",
    "addLiquidity(address tokenA,address tokenB,uint256 amountADesired,uint256 amountBDesired,uint256 amountAMin,uint256 amountBMin,address to,uint256 deadline)",
    "addLiquidityETH(address token,uint256 amountTokenDesired,uint256 amountTokenMin,uint256 amountETHMin,address to,uint256 deadline)",
    "removeLiquidity(address tokenA,address tokenB,uint256 liquidity,uint256 amountAMin,uint256 amountBMin,address to,uint256 deadline)",
    "getAmountsOut(uint256 amountIn,address[] path)",
    "getAmountsIn(uint256 amountOut,address[] path)",
    "getReserves()",
    "swap(uint256 amount0Out,uint256 amount1Out,address to,bytes data)",
    "sync()",
    "skim(address to)",
    "token0()",
    "token1()",
    "uniswapV2Call(address sender,uint256 amount0,uint256 amount1,bytes data)",
    // Uniswap V3 SwapRouter (with deadline), SwapRouter02 (without), pool and callback
    "exactInputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 deadline,uint256 amountIn,uint256 amountOutMinimum,uint160 sqrtPriceLimitX96) params)",
    "exactInputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 amountIn,uint256 amountOutMinimum,uint160 sqrtPriceLimitX96) params)",
    "exactInput((bytes path,address recipient,uint256 deadline,uint256 amountIn,uint256 amountOutMinimum) params)",
    "exactInput((bytes path,address recipient,uint256 amountIn,uint256 amountOutMinimum) params)",
    "exactOutputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 deadline,uint256 amountOut,uint256 amountInMaximum,uint160 sqrtPriceLimitX96) params)",
    "exactOutputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 amountOut,uint256 amountInMaximum,uint160 sqrtPriceLimitX96) params)",
    "exactOutput((bytes path,address recipient,uint256 deadline,uint256 amountOut,uint256 amountInMaximum) params)",
    "swap(address recipient,bool zeroForOne,int256 amountSpecified,uint160 sqrtPriceLimitX96,bytes data)",
    "uniswapV3SwapCallback(int256 amount0Delta,int256 amount1Delta,bytes data)",
    "slot0()",
    // Uniswap Universal Router
    "execute(bytes commands,bytes[] inputs,uint256 deadline)",
    "execute(bytes commands,bytes[] inputs)",
    // Safe
    "execTransaction(address to,uint256 value,bytes data,uint8 operation,uint256 safeTxGas,uint256 baseGas,uint256 gasPrice,address gasToken,address refundReceiver,bytes signatures)",
    // Proxies, ownership, roles, pausing
    "upgradeTo(address newImplementation)",
    "upgradeToAndCall(address newImplementation,bytes data)",
    "implementation()",
    "proxiableUUID()",
    "initialize()",
    "owner()",
    "transferOwnership(address newOwner)",
    "renounceOwnership()",
    "acceptOwnership()",
    "pendingOwner()",
    "hasRole(bytes32 role,address account)",
    "grantRole(bytes32 role,address account)",
    "revokeRole(bytes32 role,address account)",
    "pause()",
    "unpause()",
    "paused()",
    // ERC-3156 flash loans, ERC-1271
    "flashLoan(address receiver,address token,uint256 amount,bytes data)",
    "onFlashLoan(address initiator,address token,uint256 amount,uint256 fee,bytes data)",
    "isValidSignature(bytes32 hash,bytes signature)",
];

/// Custom error declarations (OpenZeppelin 5 and a few common ones), plus the two built-in
/// Solidity errors so that every revert selector a user sees can be named.
const ERRORS: &[&str] = &[
    "Error(string message)",
    "Panic(uint256 code)",
    "ERC20InsufficientBalance(address sender,uint256 balance,uint256 needed)",
    "ERC20InvalidSender(address sender)",
    "ERC20InvalidReceiver(address receiver)",
    "ERC20InsufficientAllowance(address spender,uint256 allowance,uint256 needed)",
    "ERC20InvalidApprover(address approver)",
    "ERC20InvalidSpender(address spender)",
    "ERC721InvalidOwner(address owner)",
    "ERC721NonexistentToken(uint256 tokenId)",
    "ERC721IncorrectOwner(address sender,uint256 tokenId,address owner)",
    "ERC721InvalidSender(address sender)",
    "ERC721InvalidReceiver(address receiver)",
    "ERC721InsufficientApproval(address operator,uint256 tokenId)",
    "ERC1155InsufficientBalance(address sender,uint256 balance,uint256 needed,uint256 tokenId)",
    "ERC1155MissingApprovalForAll(address operator,address owner)",
    "ERC2612ExpiredSignature(uint256 deadline)",
    "ERC2612InvalidSigner(address signer,address owner)",
    "OwnableUnauthorizedAccount(address account)",
    "OwnableInvalidOwner(address owner)",
    "AccessControlUnauthorizedAccount(address account,bytes32 neededRole)",
    "ReentrancyGuardReentrantCall()",
    "EnforcedPause()",
    "ExpectedPause()",
    "SafeERC20FailedOperation(address token)",
    "AddressEmptyCode(address target)",
    "FailedInnerCall()",
    "FailedCall()",
    "InsufficientBalance(uint256 balance,uint256 needed)",
    "ERC1967InvalidImplementation(address implementation)",
    "UUPSUnauthorizedCallContext()",
    "InvalidInitialization()",
    "NotInitializing()",
    "ECDSAInvalidSignature()",
    "ECDSAInvalidSignatureLength(uint256 length)",
    "Unauthorized()",
    "TransferFailed()",
    "TransferFromFailed()",
];

/// Event declarations with `indexed` markers, which say which parameters live in topics.
const EVENTS: &[&str] = &[
    // ERC-20's Transfer; ERC-721's has the same topic with `tokenId` indexed too (the decoder
    // falls back to "the first n-1 parameters are indexed" when the topic count disagrees).
    "Transfer(address indexed from,address indexed to,uint256 value)",
    "Approval(address indexed owner,address indexed spender,uint256 value)",
    "ApprovalForAll(address indexed owner,address indexed operator,bool approved)",
    "TransferSingle(address indexed operator,address indexed from,address indexed to,uint256 id,uint256 value)",
    "TransferBatch(address indexed operator,address indexed from,address indexed to,uint256[] ids,uint256[] values)",
    "URI(string value,uint256 indexed id)",
    "Deposit(address indexed dst,uint256 wad)",
    "Withdrawal(address indexed src,uint256 wad)",
    "OwnershipTransferred(address indexed previousOwner,address indexed newOwner)",
    "OwnershipTransferStarted(address indexed previousOwner,address indexed newOwner)",
    "Upgraded(address indexed implementation)",
    "AdminChanged(address previousAdmin,address newAdmin)",
    "BeaconUpgraded(address indexed beacon)",
    "Initialized(uint8 version)",
    "Initialized(uint64 version)",
    "Paused(address account)",
    "Unpaused(address account)",
    "RoleGranted(bytes32 indexed role,address indexed account,address indexed sender)",
    "RoleRevoked(bytes32 indexed role,address indexed account,address indexed sender)",
    "Swap(address indexed sender,uint256 amount0In,uint256 amount1In,uint256 amount0Out,uint256 amount1Out,address indexed to)",
    "Swap(address indexed sender,address indexed recipient,int256 amount0,int256 amount1,uint160 sqrtPriceX96,uint128 liquidity,int24 tick)",
    "Sync(uint112 reserve0,uint112 reserve1)",
    "Mint(address indexed sender,uint256 amount0,uint256 amount1)",
    "Burn(address indexed sender,uint256 amount0,uint256 amount1,address indexed to)",
    "PairCreated(address indexed token0,address indexed token1,address pair,uint256 index)",
    "ExecutionSuccess(bytes32 txHash,uint256 payment)",
    "ExecutionFailure(bytes32 txHash,uint256 payment)",
];

/// Strips parameter names and `indexed` from a declaration, leaving the canonical signature.
///
/// Types never contain whitespace, so whitespace after a type starts a run of words to drop that
/// ends at the next `,` or `)`.
pub fn canonical(declaration: &str) -> String {
    let mut out = String::with_capacity(declaration.len());
    let mut skipping = false;
    for c in declaration.chars() {
        match c {
            ',' | ')' => {
                skipping = false;
                out.push(c);
            }
            c if c.is_whitespace() => {
                if !out.is_empty() && !out.ends_with([',', '(']) {
                    skipping = true;
                }
            }
            _ if skipping => {}
            _ => out.push(c),
        }
    }
    out
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

fn index<K: std::hash::Hash + Eq>(
    table: &'static [&'static str],
    key: fn(&str) -> K,
) -> HashMap<K, Known> {
    let mut map = HashMap::with_capacity(table.len());
    for &declaration in table {
        let signature = canonical(declaration);
        // First entry wins, so table order decides between (unlikely) collisions.
        map.entry(key(&signature)).or_insert(Known {
            signature,
            declaration,
        });
    }
    map
}

fn functions() -> &'static HashMap<[u8; 4], Known> {
    static MAP: OnceLock<HashMap<[u8; 4], Known>> = OnceLock::new();
    MAP.get_or_init(|| index(FUNCTIONS, selector))
}

fn errors() -> &'static HashMap<[u8; 4], Known> {
    static MAP: OnceLock<HashMap<[u8; 4], Known>> = OnceLock::new();
    MAP.get_or_init(|| index(ERRORS, selector))
}

fn events() -> &'static HashMap<B256, Known> {
    static MAP: OnceLock<HashMap<B256, Known>> = OnceLock::new();
    MAP.get_or_init(|| index(EVENTS, event_topic))
}

/// The built-in function with this selector.
pub fn function(selector: [u8; 4]) -> Option<&'static Known> {
    functions().get(&selector)
}

/// The built-in error with this selector (including `Error(string)` and `Panic(uint256)`).
pub fn error(selector: [u8; 4]) -> Option<&'static Known> {
    errors().get(&selector)
}

/// The built-in event with this topic0.
pub fn event(topic: &B256) -> Option<&'static Known> {
    events().get(topic)
}

/// Canonical signature of a built-in function, e.g. `transfer(address,uint256)`.
pub fn function_signature(selector: [u8; 4]) -> Option<&'static str> {
    function(selector).map(|k| k.signature.as_str())
}

/// Canonical signature of a built-in error.
pub fn error_signature(selector: [u8; 4]) -> Option<&'static str> {
    error(selector).map(|k| k.signature.as_str())
}

/// Canonical signature of a built-in event.
pub fn event_signature(topic: &B256) -> Option<&'static str> {
    event(topic).map(|k| k.signature.as_str())
}

/// Every built-in declaration, for checks that the tables parse.
pub fn all_declarations() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.iter().chain(ERRORS).chain(EVENTS).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::revert::{ERROR_SELECTOR, PANIC_SELECTOR};
    use alloy_primitives::{b256, hex};

    #[test]
    fn canonical_strips_names_and_indexed() {
        assert_eq!(
            canonical("transfer(address to,uint256 amount)"),
            "transfer(address,uint256)"
        );
        assert_eq!(
            canonical("aggregate((address target, bytes callData)[] calls)"),
            "aggregate((address,bytes)[])"
        );
        assert_eq!(
            canonical("Transfer(address indexed from, address indexed to, uint256 value)"),
            "Transfer(address,address,uint256)"
        );
        assert_eq!(canonical("totalSupply()"), "totalSupply()");
    }

    #[test]
    fn well_known_selectors() {
        let sel = |s: &str| -> [u8; 4] { hex::decode(s).unwrap().try_into().unwrap() };
        assert_eq!(
            function_signature(sel("a9059cbb")),
            Some("transfer(address,uint256)")
        );
        assert_eq!(
            function_signature(sel("23b872dd")),
            Some("transferFrom(address,address,uint256)")
        );
        assert_eq!(
            function_signature(sel("095ea7b3")),
            Some("approve(address,uint256)")
        );
        assert_eq!(
            function_signature(sel("70a08231")),
            Some("balanceOf(address)")
        );
        assert_eq!(function_signature(sel("d0e30db0")), Some("deposit()"));
        assert_eq!(
            function_signature(sel("ac9650d8")),
            Some("multicall(bytes[])")
        );
        assert_eq!(
            function_signature(sel("252dba42")),
            Some("aggregate((address,bytes)[])")
        );
        assert_eq!(
            function_signature(sel("414bf389")),
            Some("exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))")
        );
        assert_eq!(function_signature(sel("8129fc1c")), Some("initialize()"));
        assert_eq!(error_signature(ERROR_SELECTOR), Some("Error(string)"));
        assert_eq!(error_signature(PANIC_SELECTOR), Some("Panic(uint256)"));
        assert_eq!(
            error_signature(sel("e450d38c")),
            Some("ERC20InsufficientBalance(address,uint256,uint256)")
        );
        assert_eq!(
            error_signature(sel("118cdaa7")),
            Some("OwnableUnauthorizedAccount(address)")
        );
        let transfer = b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
        assert_eq!(
            event_signature(&transfer),
            Some("Transfer(address,address,uint256)")
        );
        assert_eq!(event(&transfer).unwrap().name(), "Transfer");
    }

    #[test]
    fn tables_have_no_duplicate_signatures() {
        for (table, map_len) in [
            (FUNCTIONS, functions().len()),
            (ERRORS, errors().len()),
            (EVENTS, events().len()),
        ] {
            assert_eq!(
                table.len(),
                map_len,
                "duplicate or colliding entry in a table"
            );
        }
        assert!(FUNCTIONS.len() >= 60);
    }
}
