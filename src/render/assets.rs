//! Asset changes for people (a table) and for scripts (`assetChanges` of `--json --decode`).
//!
//! An ERC-20 transfer on the test anvil (docs/assets-and-html.md, "What moved"), piped:
//!
//! ```text
//! asset changes
//! +-------------------------------------------------------+--------+-----------------------+------------------------------+
//! | address                                               | asset  |                change |                          fee |
//! +=======================================================================================================================+
//! | 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (sender)   | native | -0.000096749341824906 | -0.000096749341824906 (paid) |
//! | 0x0000000000000000000000000000000000000000 (coinbase) | native |          +0.000051543 |      +0.000051543 (received) |
//! | 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (sender)   | AST    |                  -1.5 |                              |
//! | 0x70997970C51812dc3A010C7d01b50e0d17dc79C8            | AST    |                  +1.5 |                              |
//! +-------------------------------------------------------+--------+-----------------------+------------------------------+
//! fee: 51,543 gas × 1.877060742 gwei = 0.000096749341824906 native paid by 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266; 0.000051543 native to the coinbase 0x0000000000000000000000000000000000000000; 0.000045206341824906 native burned
//! ```
//!
//! Amounts are exact: in units of the asset's decimals when they are known (18 for the native
//! currency), else in its raw integer units, marked `(raw)`. A token whose `symbol()` could not
//! be read is named by its address; nothing is guessed.

use std::io::{self, Write};

use alloy_primitives::{Address, U256};
use comfy_table::{Cell, CellAlignment};
use serde::Serialize;

use super::decoder::Decoder;
use super::style::TableStyle;
use crate::chain::op::{BASE_FEE_VAULT, L1_FEE_VAULT, OPERATOR_FEE_VAULT};
use crate::replay::assets::{format_units, AssetChanges, Fee, FeeRecipient, Flow, Standard};

/// Decimals of every EVM chain's native currency (balances are in wei).
pub const NATIVE_DECIMALS: u8 = 18;

/// One row of the asset table, as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssetRow {
    pub address: Address,
    /// The asset: the native currency's symbol, a token's symbol or address, `#id` for NFTs.
    pub asset: String,
    /// Signed, in the asset's units (`+1.5`, `-5 (raw)`).
    pub change: String,
    /// The fee part of a native change (`-0.000046 (paid)`), empty otherwise.
    pub fee: String,
    /// The asset's own address (tokens), for links and titles.
    pub token: Option<Address>,
}

fn signed(f: &Flow, decimals: Option<u8>) -> String {
    let (neg, m) = f.net();
    let sign = if neg {
        "-"
    } else if m.is_zero() {
        ""
    } else {
        "+"
    };
    match decimals {
        Some(d) => format!("{sign}{}", format_units(m, d)),
        None => format!("{sign}{m} (raw)"),
    }
}

/// The asset's name: its symbol, else its checksummed address; `#id` for ERC-721/1155.
pub fn token_name(c: &AssetChanges, token: Address, id: Option<U256>) -> String {
    let symbol = c.meta.get(&token).and_then(|m| m.symbol.clone());
    let mut s = symbol.unwrap_or_else(|| token.to_checksum(None));
    if let Some(id) = id {
        s.push_str(&format!(" #{id}"));
    }
    s
}

/// The rows of the table: native changes first (fee payer, movements, fee recipient), then
/// tokens grouped by token.
pub fn asset_rows(c: &AssetChanges, currency: &str) -> Vec<AssetRow> {
    let mut rows = Vec::new();
    for n in &c.native {
        let fee = if n.fee.is_zero() {
            String::new()
        } else {
            let (neg, _) = n.fee.net();
            format!(
                "{} ({})",
                signed(&n.fee, Some(NATIVE_DECIMALS)),
                if neg { "paid" } else { "received" }
            )
        };
        rows.push(AssetRow {
            address: n.address,
            asset: currency.to_string(),
            change: signed(&n.total(), Some(NATIVE_DECIMALS)),
            fee,
            token: None,
        });
    }
    for t in &c.tokens {
        let decimals = match t.standard {
            Standard::Erc20 => c.meta.get(&t.token).and_then(|m| m.decimals),
            // Each ERC-721 token is one; ERC-1155 amounts are whole units.
            Standard::Erc721 | Standard::Erc1155 => Some(0),
        };
        rows.push(AssetRow {
            address: t.holder,
            asset: token_name(c, t.token, t.id),
            change: signed(&t.change, decimals),
            fee: String::new(),
            token: Some(t.token),
        });
    }
    rows
}

/// ` (sender)` on the fee payer's rows, ` (coinbase)` / ` (fee collector)` on the fee
/// recipient's native row, an OP chain's fee vaults by name on theirs; empty otherwise.
pub fn role_note(c: &AssetChanges, r: &AssetRow) -> String {
    let Some(f) = &c.fee else {
        return String::new();
    };
    let vault = [
        (BASE_FEE_VAULT, "BaseFeeVault"),
        (L1_FEE_VAULT, "L1FeeVault"),
        (OPERATOR_FEE_VAULT, "OperatorFeeVault"),
    ]
    .into_iter()
    .find(|(a, _)| *a == r.address)
    .filter(|_| f.op.is_some() && r.token.is_none() && !r.fee.is_empty());
    if let Some((_, name)) = vault {
        format!(" ({name})")
    } else if r.address == f.payer {
        " (sender)".to_string()
    } else if r.address == f.recipient && r.token.is_none() && !r.fee.is_empty() {
        match f.role {
            FeeRecipient::Coinbase => " (coinbase)".to_string(),
            FeeRecipient::FeeCollector => " (fee collector)".to_string(),
        }
    } else {
        String::new()
    }
}

/// Gas price in gwei, exactly (`2.2 gwei`, `0.000000001 gwei`).
fn gwei(price: u128) -> String {
    format!("{} gwei", format_units(U256::from(price), 9))
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The fee in one sentence: who paid, who received, what was burned; on an OP chain the L2
/// execution (base fee and tip), the L1 data fee and the operator fee apart, each where it went.
pub fn fee_line(f: &Fee, currency: &str, d: &Decoder) -> String {
    let amount = |v: U256| format!("{} {currency}", format_units(v, NATIVE_DECIMALS));
    let recipient = d.with_label(&f.recipient, f.recipient.to_checksum(None));
    let role = match f.role {
        FeeRecipient::Coinbase => "the coinbase",
        FeeRecipient::FeeCollector => "the fee collector",
    };
    if let Some(c) = &f.op {
        let mut s = format!(
            "fee: {} paid by {}: L2 execution {} gas × {} = {} (base fee {} to the \
             BaseFeeVault, priority fee {} to {role} {recipient}), L1 data fee {} to the \
             L1FeeVault",
            amount(f.paid),
            f.payer.to_checksum(None),
            group(f.gas_used),
            gwei(f.gas_price),
            amount(c.execution()),
            amount(c.base),
            amount(c.priority),
            amount(c.l1),
        );
        if !c.operator.is_zero() {
            s.push_str(&format!(
                ", operator fee {} to the OperatorFeeVault",
                amount(c.operator)
            ));
        }
        s.push_str("; nothing burned");
        return s;
    }
    let mut s = format!(
        "fee: {} gas × {} = {} paid by {}",
        group(f.gas_used),
        gwei(f.gas_price),
        amount(f.paid),
        f.payer.to_checksum(None)
    );
    s.push_str(&format!("; {} to {role} {recipient}", amount(f.received)));
    if f.burned.is_zero() {
        if f.role == FeeRecipient::FeeCollector {
            s.push_str("; nothing burned (the chain credits the base fee to its fee collector)");
        }
    } else {
        s.push_str(&format!("; {} burned", amount(f.burned)));
    }
    s
}

/// Prints the asset changes: a table of every row, the fee line, what self-destructs burned.
pub fn render_asset_changes<W: Write>(
    c: &AssetChanges,
    d: &Decoder,
    currency: &str,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    let rows = asset_rows(c, currency);
    writeln!(out, "asset changes")?;
    if rows.is_empty() {
        writeln!(out, "(nothing moved)")?;
    } else {
        let mut t = style.numeric_table(&["address", "asset", "change", "fee"], &["change", "fee"]);
        for r in &rows {
            let mut who = d.with_label(&r.address, r.address.to_checksum(None));
            who.push_str(&role_note(c, r));
            t.add_row(vec![
                Cell::new(who),
                Cell::new(&r.asset),
                Cell::new(&r.change).set_alignment(CellAlignment::Right),
                Cell::new(&r.fee).set_alignment(CellAlignment::Right),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    if let Some((to, mint)) = c.minted {
        writeln!(
            out,
            "minted from L1 (deposit): {} {currency} to {}",
            format_units(mint, NATIVE_DECIMALS),
            to.to_checksum(None)
        )?;
    }
    if let Some(f) = c.fee.as_ref().filter(|f| !f.paid.is_zero()) {
        writeln!(out, "{}", fee_line(f, currency, d))?;
    }
    if !c.burned_by_destruct.is_zero() {
        writeln!(
            out,
            "burned by self-destructed accounts: {} {currency}",
            format_units(c.burned_by_destruct, NATIVE_DECIMALS)
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct NativeJson {
    address: String,
    change: String,
    transfers: String,
    fee: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FeeJson {
    payer: String,
    paid: String,
    gas_used: u64,
    gas_price: String,
    recipient: String,
    recipient_role: FeeRecipient,
    received: String,
    burned: String,
    /// An OP chain's split of `paid`.
    #[serde(skip_serializing_if = "Option::is_none")]
    op: Option<OpCostJson>,
}

/// An OP chain's fee by where it went, in wei.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OpCostJson {
    l2_execution: String,
    base_fee: String,
    priority_fee: String,
    l1_data_fee: String,
    operator_fee: String,
}

#[derive(Serialize)]
struct TokenJson {
    token: String,
    standard: &'static str,
    symbol: Option<String>,
    decimals: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    address: String,
    change: String,
}

/// `assetChanges` of `--json --decode`: amounts as signed decimal strings in the asset's
/// smallest unit (wei, token units), keys in a fixed order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssetJson {
    currency: String,
    native: Vec<NativeJson>,
    fee: Option<FeeJson>,
    tokens: Vec<TokenJson>,
    burned_by_destruct: String,
    /// An OP deposit's mint, in wei, credited to its sender.
    #[serde(skip_serializing_if = "Option::is_none")]
    minted: Option<String>,
}

impl AssetJson {
    pub fn new(c: &AssetChanges, currency: &str) -> AssetJson {
        let hex = |a: &Address| a.to_checksum(None);
        AssetJson {
            currency: currency.to_string(),
            native: c
                .native
                .iter()
                .map(|n| NativeJson {
                    address: hex(&n.address),
                    change: n.total().decimal(),
                    transfers: n.transfers.decimal(),
                    fee: n.fee.decimal(),
                })
                .collect(),
            fee: c.fee.as_ref().map(|f| FeeJson {
                payer: hex(&f.payer),
                paid: f.paid.to_string(),
                gas_used: f.gas_used,
                gas_price: f.gas_price.to_string(),
                recipient: hex(&f.recipient),
                recipient_role: f.role,
                received: f.received.to_string(),
                burned: f.burned.to_string(),
                op: f.op.map(|c| OpCostJson {
                    l2_execution: c.execution().to_string(),
                    base_fee: c.base.to_string(),
                    priority_fee: c.priority.to_string(),
                    l1_data_fee: c.l1.to_string(),
                    operator_fee: c.operator.to_string(),
                }),
            }),
            tokens: c
                .tokens
                .iter()
                .map(|t| {
                    let meta = c.meta.get(&t.token);
                    TokenJson {
                        token: hex(&t.token),
                        standard: t.standard.name(),
                        symbol: meta.and_then(|m| m.symbol.clone()),
                        decimals: meta.and_then(|m| m.decimals),
                        id: t.id.map(|i| i.to_string()),
                        address: hex(&t.holder),
                        change: t.change.decimal(),
                    }
                })
                .collect(),
            burned_by_destruct: c.burned_by_destruct.to_string(),
            minted: c.minted.map(|(_, m)| m.to_string()),
        }
    }
}

/// One row of the `asset_changes` table of `block A..B --out DIR --assets` (with its
/// transaction's keys added by the writer): addresses lowercase hex as in the other tables,
/// amounts signed decimal text in the asset's smallest unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AssetChangeRow {
    pub address: String,
    /// `native`, or the token's address.
    pub asset: String,
    /// `native`, `ERC-20`, `ERC-721` or `ERC-1155`.
    pub standard: &'static str,
    pub token_id: Option<String>,
    /// The native currency's name, or the token's symbol when it could be read.
    pub symbol: Option<String>,
    pub decimals: Option<u8>,
    /// The whole change (transfers and fee).
    pub change: String,
    /// The fee part of a native change; `None` for tokens.
    pub fee: Option<String>,
}

/// The table rows of `c`, in [`asset_rows`] order.
pub fn asset_table_rows(c: &AssetChanges, currency: &str) -> Vec<AssetChangeRow> {
    let hex = |a: &Address| format!("{a:#x}");
    let mut rows: Vec<AssetChangeRow> = c
        .native
        .iter()
        .map(|n| AssetChangeRow {
            address: hex(&n.address),
            asset: "native".into(),
            standard: "native",
            token_id: None,
            symbol: Some(currency.to_string()),
            decimals: Some(NATIVE_DECIMALS),
            change: n.total().decimal(),
            fee: Some(n.fee.decimal()),
        })
        .collect();
    rows.extend(c.tokens.iter().map(|t| {
        let meta = c.meta.get(&t.token);
        AssetChangeRow {
            address: hex(&t.holder),
            asset: hex(&t.token),
            standard: t.standard.name(),
            token_id: t.id.map(|i| i.to_string()),
            symbol: meta.and_then(|m| m.symbol.clone()),
            decimals: meta.and_then(|m| m.decimals),
            change: t.change.decimal(),
            fee: None,
        }
    }));
    rows
}
