//! Token movements read from the logs of a call tree.
//!
//! Only logs the callTracer kept count: geth drops the logs of a failed frame and of everything
//! beneath it, which is exactly what a revert undoes. Recognised, by topic and shape:
//!
//! | event | shape | movement |
//! |---|---|---|
//! | ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)` | 3 topics, 32 bytes of data | `value` from → to |
//! | ERC-721 `Transfer(address indexed from, address indexed to, uint256 indexed tokenId)` | 4 topics, no data | token `tokenId` from → to |
//! | ERC-1155 `TransferSingle(operator, from, to, id, value)` | 4 topics, 64 bytes | `value` of `id` |
//! | ERC-1155 `TransferBatch(operator, from, to, ids[], values[])` | 4 topics, two arrays | each pair |
//! | WETH `Deposit(address indexed dst, uint256 wad)` | 2 topics, 32 bytes | `wad` minted to `dst`, when the frame received `wad` |
//! | WETH `Withdrawal(address indexed src, uint256 wad)` | 2 topics, 32 bytes | `wad` burned from `src`, when the frame sent `src` `wad` |
//!
//! The zero address as sender or recipient is a mint or a burn: it holds nothing and is not
//! listed. `Deposit`/`Withdrawal` are common names (vaults and staking contracts emit them
//! with other meanings), so they count only where the frame moved the native amount the
//! wrapped token stands for, and not twice when the same frame also logged the mint or burn as
//! a `Transfer`.

use std::collections::HashMap;

use alloy_primitives::{b256, Address, B256, U256};

use super::{Flow, TokenChange};
use crate::trace::call::{CallFrame, CallKind, CallLog};

/// `keccak256("Transfer(address,address,uint256)")`, ERC-20's and ERC-721's.
pub const TRANSFER: B256 =
    b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
/// `keccak256("TransferSingle(address,address,address,uint256,uint256)")`.
pub const TRANSFER_SINGLE: B256 =
    b256!("c3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62");
/// `keccak256("TransferBatch(address,address,address,uint256[],uint256[])")`.
pub const TRANSFER_BATCH: B256 =
    b256!("4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb");
/// `keccak256("Deposit(address,uint256)")`, WETH9's.
pub const DEPOSIT: B256 = b256!("e1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c");
/// `keccak256("Withdrawal(address,uint256)")`, WETH9's.
pub const WITHDRAWAL: B256 =
    b256!("7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65");

/// The token standard a movement was recognised by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Standard {
    /// ERC-20 (WETH's `Deposit`/`Withdrawal` included).
    Erc20,
    Erc721,
    Erc1155,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::Erc20 => "ERC-20",
            Standard::Erc721 => "ERC-721",
            Standard::Erc1155 => "ERC-1155",
        }
    }
}

/// One movement of a token: `amount` of `token` (id `id`) from one holder to another; `None`
/// for the zero address (a mint or a burn).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenMove {
    pub token: Address,
    pub standard: Standard,
    pub id: Option<U256>,
    pub from: Option<Address>,
    pub to: Option<Address>,
    pub amount: U256,
}

/// The events, as alloy decodes them: logs are anyone's data, so offsets, lengths and the
/// padding of indexed addresses are checked by alloy's validating decoder, never by hand.
mod events {
    alloy_sol_types::sol! {
        event Transfer(address indexed from, address indexed to, uint256 value);
        event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);
        event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values);
        event Deposit(address indexed dst, uint256 wad);
        event Withdrawal(address indexed src, uint256 wad);
    }
    /// ERC-721's `Transfer`: the same signature, the token id indexed.
    pub mod nft {
        alloy_sol_types::sol! {
            event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
        }
    }
}

/// `log` decoded as event `E`, its topics and data validated (`None` when they do not fit).
fn decode<E: alloy_sol_types::SolEvent>(log: &CallLog) -> Option<E> {
    E::decode_raw_log_validate(log.topics.iter().copied(), &log.data).ok()
}

fn holder(a: Address) -> Option<Address> {
    (!a.is_zero()).then_some(a)
}

/// The address whose storage a frame's logs belong to: the callee, or the caller for
/// DELEGATECALL/CALLCODE.
fn context(f: &CallFrame) -> Option<Address> {
    match f.kind {
        CallKind::Delegatecall | CallKind::Callcode => Some(f.from),
        _ => f.to,
    }
}

/// The movements one log of frame `f` stands for (none for a log of another kind).
pub fn log_moves(f: &CallFrame, log: &CallLog) -> Vec<TokenMove> {
    let t = &log.topics;
    let Some(sig) = t.first() else {
        return Vec::new();
    };
    let token = log.address;
    let mv = |standard, id, from, to, amount| TokenMove {
        token,
        standard,
        id,
        from,
        to,
        amount,
    };
    // The shape (topic count, data length) tells ERC-20's Transfer from ERC-721's and keeps
    // the one-word events to exactly one word, as the table above says.
    match (*sig, t.len(), log.data.len()) {
        (TRANSFER, 3, 32) => decode::<events::Transfer>(log)
            .map(|e| mv(Standard::Erc20, None, holder(e.from), holder(e.to), e.value))
            .into_iter()
            .collect(),
        (TRANSFER, 4, 0) => decode::<events::nft::Transfer>(log)
            .map(|e| {
                mv(
                    Standard::Erc721,
                    Some(e.tokenId),
                    holder(e.from),
                    holder(e.to),
                    U256::from(1),
                )
            })
            .into_iter()
            .collect(),
        (TRANSFER_SINGLE, 4, 64) => decode::<events::TransferSingle>(log)
            .map(|e| {
                mv(
                    Standard::Erc1155,
                    Some(e.id),
                    holder(e.from),
                    holder(e.to),
                    e.value,
                )
            })
            .into_iter()
            .collect(),
        (TRANSFER_BATCH, 4, _) => match decode::<events::TransferBatch>(log) {
            Some(e) if e.ids.len() == e.values.len() => e
                .ids
                .into_iter()
                .zip(e.values)
                .map(|(id, v)| mv(Standard::Erc1155, Some(id), holder(e.from), holder(e.to), v))
                .collect(),
            _ => Vec::new(),
        },
        (DEPOSIT, 2, 32) => match decode::<events::Deposit>(log) {
            Some(e)
                if context(f) == Some(token)
                    && f.value == Some(e.wad)
                    && !logged_transfer(f, token, None, Some(e.dst), e.wad) =>
            {
                vec![mv(Standard::Erc20, None, None, holder(e.dst), e.wad)]
            }
            _ => Vec::new(),
        },
        (WITHDRAWAL, 2, 32) => match decode::<events::Withdrawal>(log) {
            Some(e)
                if context(f) == Some(token)
                    && sent(f, token, e.src, e.wad)
                    && !logged_transfer(f, token, Some(e.src), None, e.wad) =>
            {
                vec![mv(Standard::Erc20, None, holder(e.src), None, e.wad)]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Whether `f` itself called `to` with `value` from `from` (and that call did not fail).
fn sent(f: &CallFrame, from: Address, to: Address, value: U256) -> bool {
    f.calls.iter().any(|c| {
        c.kind == CallKind::Call
            && c.error.is_none()
            && c.from == from
            && c.to == Some(to)
            && c.value == Some(value)
    })
}

/// Whether `f` logged an ERC-20 `Transfer` of `amount` of `token` between `from` and `to`
/// (`None`: the zero address).
fn logged_transfer(
    f: &CallFrame,
    token: Address,
    from: Option<Address>,
    to: Option<Address>,
    amount: U256,
) -> bool {
    f.logs.iter().any(|l| {
        l.address == token
            && l.topics.first() == Some(&TRANSFER)
            && l.topics.len() == 3
            && l.data.len() == 32
            && decode::<events::Transfer>(l)
                .is_some_and(|e| holder(e.from) == from && holder(e.to) == to && e.value == amount)
    })
}

/// Every token movement of the tree, in execution order (a log with `position` p came after
/// the frame's first p subcalls).
pub fn token_moves(root: &CallFrame) -> Vec<TokenMove> {
    fn walk(f: &CallFrame, out: &mut Vec<TokenMove>) {
        let mut logs = f.logs.iter().peekable();
        for (i, c) in f.calls.iter().enumerate() {
            while let Some(l) = logs.next_if(|l| l.position <= i as u64) {
                out.extend(log_moves(f, l));
            }
            walk(c, out);
        }
        for l in logs {
            out.extend(log_moves(f, l));
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// Net change per token, id and holder, in order of first appearance; holders whose change
/// nets to zero are left out.
pub fn token_changes(root: &CallFrame) -> Vec<TokenChange> {
    let mut index: HashMap<(Address, Option<U256>, Address), usize> = HashMap::new();
    let mut out: Vec<TokenChange> = Vec::new();
    let mut add = |m: &TokenMove, holder: Address, f: Flow| {
        let key = (m.token, m.id, holder);
        let i = *index.entry(key).or_insert_with(|| {
            out.push(TokenChange {
                token: m.token,
                standard: m.standard,
                id: m.id,
                holder,
                change: Flow::default(),
            });
            out.len() - 1
        });
        out[i].change.add(f);
    };
    for m in token_moves(root) {
        if let Some(from) = m.from {
            add(&m, from, Flow::debit(m.amount));
        }
        if let Some(to) = m.to {
            add(&m, to, Flow::credit(m.amount));
        }
    }
    // Group by token (first appearance), keeping the holders' order within each.
    let mut tokens: Vec<Address> = Vec::new();
    for c in &out {
        if !tokens.contains(&c.token) {
            tokens.push(c.token);
        }
    }
    let mut grouped = Vec::with_capacity(out.len());
    for t in tokens {
        grouped.extend(
            out.iter()
                .filter(|c| c.token == t && !c.change.is_zero())
                .cloned(),
        );
    }
    grouped
}
