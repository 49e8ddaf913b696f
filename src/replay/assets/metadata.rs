//! Token symbols and decimals, read by running `symbol()` and `decimals()` locally on the state
//! after the replayed transaction.
//!
//! The state is layered: what the replay wrote or read (revm's cache of the final pass), then
//! the replay's pre-state snapshot, then an overlay filled from the node. Only the overlay
//! records misses; each pass runs every call, and everything the calls missed is fetched in
//! one batch before the next pass — never one request per token. The overlay is fetched at the
//! block the snapshot was fetched at, so a slot the transaction did not touch reads as it was
//! before it; nothing fetched for it enters the snapshot or the cache.
//!
//! An answer counts only when it is what the standards say: a `string` (or, as early tokens
//! return it, a `bytes32` of text) for the symbol, a value that fits `uint8` for decimals.
//! Anything else — a revert, no code, bytes that are not text — leaves it unknown.

use std::collections::BTreeMap;
use std::convert::Infallible;

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::bytecode::Bytecode;
use revm::context::result::{ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::database::{AccountState, Cache, CacheDB};
use revm::primitives::TxKind;
use revm::state::AccountInfo;
use revm::{DatabaseRef, ExecuteEvm, MainBuilder};

use super::{Standard, TokenMeta};
use crate::replay::EvmEnv;
use crate::source::{Misses, StateSnapshot};

/// `symbol()`.
const SYMBOL: [u8; 4] = [0x95, 0xd8, 0x9b, 0x41];
/// `decimals()`.
const DECIMALS: [u8; 4] = [0x31, 0x3c, 0xe5, 0x67];
/// Gas each call gets: far more than a getter needs, never more than a block holds.
const CALL_GAS: u64 = 1_000_000;
/// Passes before giving up on what is still missing (each costs one round trip).
const MAX_PASSES: usize = 8;
/// Longer answers are not taken for a symbol.
const MAX_SYMBOL_CHARS: usize = 64;

/// The state after the transaction, as the metadata calls see it.
pub struct PostState<'a> {
    /// revm's cache of the replay's final pass (accounts and slots written or read).
    pub cache: &'a Cache,
    /// The replay's pre-state.
    pub pre: &'a StateSnapshot,
}

struct Layered<'a> {
    post: &'a PostState<'a>,
    overlay: &'a StateSnapshot,
}

impl Layered<'_> {
    /// A complete pre-state (a fixture) knows every account: absent is empty.
    fn complete(&self) -> bool {
        self.post.pre.complete
    }
}

impl DatabaseRef for Layered<'_> {
    type Error = Infallible;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Infallible> {
        if let Some(a) = self.post.cache.accounts.get(&address) {
            return Ok(a.info());
        }
        if self.post.pre.accounts.contains_key(&address) || self.complete() {
            return self.post.pre.basic_ref(address);
        }
        self.overlay.basic_ref(address)
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Infallible> {
        if let Some(c) = self.post.cache.contracts.get(&code_hash) {
            return Ok(c.clone());
        }
        let c = self.post.pre.code_by_hash_ref(code_hash)?;
        if !c.is_empty() {
            return Ok(c);
        }
        self.overlay.code_by_hash_ref(code_hash)
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Infallible> {
        if let Some(a) = self.post.cache.accounts.get(&address) {
            if let Some(v) = a.storage.get(&index) {
                return Ok(*v);
            }
            if matches!(
                a.account_state,
                AccountState::StorageCleared | AccountState::NotExisting
            ) {
                return Ok(U256::ZERO);
            }
        }
        if let Some(v) = self.post.pre.storage.get(&(address, index)) {
            return Ok(*v);
        }
        if self.complete() {
            return Ok(U256::ZERO);
        }
        self.overlay.storage_ref(address, index)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Infallible> {
        if let Some(h) = self.post.pre.block_hashes.get(&number) {
            return Ok(*h);
        }
        if self.complete() {
            return Ok(B256::ZERO);
        }
        self.overlay.block_hash_ref(number)
    }
}

type MetaCtx<'d, 'a> = Context<
    BlockEnv,
    TxEnv,
    CfgEnv,
    CacheDB<&'d Layered<'a>>,
    Journal<CacheDB<&'d Layered<'a>>>,
    (),
>;

/// Runs `token.selector()` from the zero address, without fees; the output of a call that
/// succeeded.
fn call(env: &EvmEnv, db: &Layered<'_>, token: Address, selector: [u8; 4]) -> Option<Bytes> {
    let mut cfg = env.cfg.clone();
    cfg.disable_nonce_check = true;
    cfg.disable_base_fee = true;
    cfg.disable_balance_check = true;
    let tx = TxEnv {
        tx_type: 0,
        caller: Address::ZERO,
        gas_limit: CALL_GAS.min(env.block.gas_limit),
        gas_price: 0,
        kind: TxKind::Call(token),
        value: U256::ZERO,
        data: Bytes::copy_from_slice(&selector),
        chain_id: None,
        ..Default::default()
    };
    let mut evm = MetaCtx::new(CacheDB::new(db), env.spec)
        .with_block(env.block.clone())
        .with_cfg(cfg)
        .build_mainnet();
    match evm.transact(tx).ok()?.result {
        ExecutionResult::Success {
            output: Output::Call(b),
            ..
        } => Some(b),
        _ => None,
    }
}

/// A `symbol()` answer: an ABI `string`, or a `bytes32` holding text (zero-padded on the right).
pub fn decode_symbol(out: &[u8]) -> Option<String> {
    let text = |b: &[u8]| -> Option<String> {
        let s = std::str::from_utf8(b).ok()?;
        let ok = !s.is_empty()
            && s.chars().count() <= MAX_SYMBOL_CHARS
            && !s.chars().any(char::is_control);
        ok.then(|| s.to_string())
    };
    if out.len() == 32 {
        let end = out.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
        // A bytes32 is text followed by zeros only.
        if out[..end].contains(&0) {
            return None;
        }
        return text(&out[..end]);
    }
    // An ABI `string`, decoded and validated by alloy (offsets, length, padding); the bytes
    // are taken as they are, so that text that is not UTF-8 is refused rather than mended.
    let bytes =
        <alloy_sol_types::sol_data::Bytes as alloy_sol_types::SolType>::abi_decode_validate(out)
            .ok()?;
    text(&bytes)
}

/// A `decimals()` answer: one word whose value fits `uint8`.
pub fn decode_decimals(out: &[u8]) -> Option<u8> {
    // One `uint8` word, decoded and range-checked by alloy.
    <alloy_sol_types::sol_data::Uint<8> as alloy_sol_types::SolType>::abi_decode_validate(out).ok()
}

/// Reads the symbol (every standard) and decimals (ERC-20) of `tokens` on `post`, fetching what
/// the calls miss with `fetch` (one batch per pass). Returns the answers and the passes that
/// fetched. A fetch that fails ends the reading with its error.
pub fn read_metadata<E>(
    tokens: &[(Address, Standard)],
    env: &EvmEnv,
    post: &PostState<'_>,
    fetch: &mut dyn FnMut(&mut StateSnapshot, &Misses) -> Result<(), E>,
) -> Result<(BTreeMap<Address, TokenMeta>, usize), E> {
    let mut overlay = StateSnapshot::partial();
    let mut passes = 0;
    loop {
        let layered = Layered {
            post,
            overlay: &overlay,
        };
        let mut out = BTreeMap::new();
        for (token, standard) in tokens {
            let symbol = call(env, &layered, *token, SYMBOL).and_then(|b| decode_symbol(&b));
            let decimals = match standard {
                Standard::Erc20 => {
                    call(env, &layered, *token, DECIMALS).and_then(|b| decode_decimals(&b))
                }
                _ => None,
            };
            out.insert(*token, TokenMeta { symbol, decimals });
        }
        let misses = overlay.take_misses();
        if misses.is_empty() || passes >= MAX_PASSES {
            return Ok((out, passes));
        }
        fetch(&mut overlay, &misses)?;
        passes += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abi_string(s: &str) -> Vec<u8> {
        let mut v = U256::from(32).to_be_bytes::<32>().to_vec();
        v.extend(U256::from(s.len()).to_be_bytes::<32>());
        let mut b = s.as_bytes().to_vec();
        b.resize(s.len().div_ceil(32) * 32, 0);
        v.extend(b);
        v
    }

    #[test]
    fn symbols_are_strings_or_bytes32_text() {
        assert_eq!(decode_symbol(&abi_string("WETH")).as_deref(), Some("WETH"));
        let mut mkr = [0u8; 32];
        mkr[..3].copy_from_slice(b"MKR");
        assert_eq!(decode_symbol(&mkr).as_deref(), Some("MKR"));
        // Not text: refused, never guessed.
        assert_eq!(decode_symbol(&[0u8; 32]), None);
        let mut gap = [0u8; 32];
        gap[0] = b'A';
        gap[2] = b'B';
        assert_eq!(decode_symbol(&gap), None);
        assert_eq!(decode_symbol(&abi_string("a\u{7}b")), None);
        assert_eq!(decode_symbol(&[1, 2, 3]), None);
        let mut bad = abi_string("WETH");
        bad[63] = 200; // length past the end
        assert_eq!(decode_symbol(&bad), None);
    }

    #[test]
    fn decimals_fit_a_uint8() {
        assert_eq!(
            decode_decimals(&U256::from(18).to_be_bytes::<32>()),
            Some(18)
        );
        assert_eq!(decode_decimals(&U256::from(256).to_be_bytes::<32>()), None);
        assert_eq!(decode_decimals(&[]), None);
    }
}
