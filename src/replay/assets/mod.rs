//! What a transaction moved: each address's net change of the native currency and of tokens.
//!
//! * **Native currency**, from the callTracer's frames: every value transfer of a frame that did
//!   not fail (and none of whose callers failed) — CALL value, CREATE endowment, SELFDESTRUCT —
//!   in execution order, with the balances of destroyed accounts burned as the fork burns them
//!   (EIP-6780 from Cancun on); then the fees, kept apart: what the sender paid
//!   (`gasUsed × effective gas price` plus blob gas), what the coinbase received (the tip on
//!   Ethereum; chains 1329/1328 credit their fee collector the base fee too, [`crate::chain::rules`])
//!   and what was burned. On an OP-stack chain the sender also pays the L1 data fee and the
//!   operator fee, and nothing is burned: the base fee goes to the BaseFeeVault, the L1 data
//!   fee to the L1FeeVault, the operator fee to the OperatorFeeVault, the tip to the coinbase
//!   ([`super::tx_rules::OpCost`]). A deposit's mint is a native inflow to its `from`.
//! * **Tokens**, from the logs the callTracer kept (geth drops the logs of failed frames):
//!   ERC-20 and ERC-721 `Transfer`, ERC-1155 `TransferSingle`/`TransferBatch`, and WETH's
//!   `Deposit`/`Withdrawal` where the frame moved the native amount they stand for
//!   ([`tokens`]).
//! * **Symbols and decimals**, by `symbol()`/`decimals()` calls run locally on the state after
//!   the transaction ([`metadata`]); what that state lacks is fetched in one batch per pass.
//!
//! Amounts are exact integers in the asset's smallest unit, kept as credits and debits so that
//! no sum overflows a signed type.

pub mod check;
pub mod metadata;
pub mod tokens;

use std::collections::{BTreeMap, HashSet};

use alloy_primitives::{Address, U256};
use revm::context_interface::{Block, Transaction};
use revm::primitives::hardfork::SpecId;
use serde::Serialize;

use super::tx_rules::OpCost;
use super::{EvmEnv, ReplayTx, TxOutcome};
use crate::chain::op::{BASE_FEE_VAULT, L1_FEE_VAULT, OPERATOR_FEE_VAULT};
use crate::trace::call::{CallFrame, CallKind};

pub use tokens::{Standard, TokenMove};

/// A signed amount: what came in and what went out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub credit: U256,
    pub debit: U256,
}

impl Flow {
    fn add(&mut self, other: Flow) {
        self.credit = self.credit.saturating_add(other.credit);
        self.debit = self.debit.saturating_add(other.debit);
    }

    /// `(negative, magnitude)` of `credit − debit`.
    pub fn net(&self) -> (bool, U256) {
        if self.credit >= self.debit {
            (false, self.credit - self.debit)
        } else {
            (true, self.debit - self.credit)
        }
    }

    pub fn is_zero(&self) -> bool {
        self.credit == self.debit
    }

    /// The net as a signed decimal integer (`-5`, `0`, `12`).
    pub fn decimal(&self) -> String {
        match self.net() {
            (true, m) => format!("-{m}"),
            (false, m) => m.to_string(),
        }
    }

    fn credit(v: U256) -> Flow {
        Flow {
            credit: v,
            debit: U256::ZERO,
        }
    }

    fn debit(v: U256) -> Flow {
        Flow {
            credit: U256::ZERO,
            debit: v,
        }
    }
}

/// One address's change of the native currency: value transfers and fees apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeChange {
    pub address: Address,
    /// Transfers (CALL value, CREATE endowment, SELFDESTRUCT) and burned balances.
    pub transfers: Flow,
    /// Fees: paid (the sender) or received (the coinbase / fee collector).
    pub fee: Flow,
}

impl NativeChange {
    /// Transfers and fee together: the change of the address's balance.
    pub fn total(&self) -> Flow {
        let mut t = self.transfers;
        t.add(self.fee);
        t
    }
}

/// Who received the fee.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FeeRecipient {
    /// The block's coinbase (Ethereum: the tip only; the base fee is burned).
    Coinbase,
    /// The chain's fee collector (chains 1329/1328: base fee and tip, nothing burned).
    FeeCollector,
}

/// The fee of the transaction, by the chain's own rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fee {
    pub payer: Address,
    /// `gasUsed × effective gas price` plus the blob fee.
    pub paid: U256,
    pub gas_used: u64,
    pub gas_price: u128,
    pub recipient: Address,
    pub role: FeeRecipient,
    pub received: U256,
    /// `paid − received`: the base fee (Ethereum) and blob fee; nothing on an OP chain.
    pub burned: U256,
    /// On an OP-stack chain: `paid` split into the base fee (to the BaseFeeVault), the tip
    /// (`received`, the coinbase's), the L1 data fee and the operator fee.
    pub op: Option<OpCost>,
}

/// One holder's change of one token (and token id, for ERC-721/1155).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenChange {
    pub token: Address,
    pub standard: Standard,
    pub id: Option<U256>,
    pub holder: Address,
    pub change: Flow,
}

/// A token's symbol and decimals as its own `symbol()`/`decimals()` answered; `None` when the
/// call failed or its answer was not a symbol or a decimals value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenMeta {
    pub symbol: Option<String>,
    pub decimals: Option<u8>,
}

/// Everything a transaction moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssetChanges {
    /// Per address, first the fee payer, then in order of first movement, the fee recipient last
    /// unless it moved value before; only addresses whose transfers or fee are not zero.
    pub native: Vec<NativeChange>,
    pub fee: Option<Fee>,
    pub tokens: Vec<TokenChange>,
    /// Symbols and decimals by token, once read ([`metadata`]).
    pub meta: BTreeMap<Address, TokenMeta>,
    /// Amounts burned by destroyed accounts (balances left when an account self-destructed as
    /// the fork deletes it, or sent to itself).
    pub burned_by_destruct: U256,
    /// An OP-stack deposit's mint: what L1 credited its `from` before it ran.
    pub minted: Option<(Address, U256)>,
}

impl AssetChanges {
    /// Whether the transaction moved value or tokens (fees alone do not count).
    pub fn moved(&self) -> bool {
        self.native.iter().any(|n| !n.transfers.is_zero())
            || self.tokens.iter().any(|t| !t.change.is_zero())
    }

    /// The tokens moved, in order of first appearance.
    pub fn token_addresses(&self) -> Vec<(Address, Standard)> {
        let mut seen = HashSet::new();
        self.tokens
            .iter()
            .filter(|t| seen.insert(t.token))
            .map(|t| (t.token, t.standard))
            .collect()
    }
}

/// What the fee depends on besides the trace.
#[derive(Clone, Debug)]
pub struct FeeInputs {
    pub payer: Address,
    pub gas_used: u64,
    /// What the sender pays per gas.
    pub effective_price: u128,
    /// What the coinbase gets per gas.
    pub coinbase_price: u128,
    pub blob_fee: U256,
    pub recipient: Address,
    pub role: FeeRecipient,
    pub spec: SpecId,
    /// An OP-stack user transaction's payments by where they went (from its replay).
    pub op: Option<OpCost>,
    /// An OP-stack deposit's mint, credited to `payer`.
    pub mint: Option<U256>,
}

impl FeeInputs {
    /// The fee rules of `env` for `tx`, which used `outcome.gas_used`: revm's (the sender pays
    /// the effective gas price; the coinbase gets what exceeds the base fee from London on) and
    /// the chain's (`rules.burn_base_fee` false: the coinbase — the fee collector — is credited
    /// the base fee as well, when the gas price is not zero; see `replay::settle_fees`).
    pub fn new(env: &EvmEnv, tx: &ReplayTx, outcome: &TxOutcome) -> FeeInputs {
        let base = env.block.basefee as u128;
        let effective = tx.env.effective_gas_price(base);
        let london = env.spec.is_enabled_in(SpecId::LONDON);
        let mut coinbase = if london {
            effective.saturating_sub(base)
        } else {
            effective
        };
        let unburned = env.rules.as_ref().is_some_and(|r| !r.burn_base_fee);
        if unburned && tx.env.gas_price != 0 {
            coinbase = coinbase.saturating_add(base);
        }
        let blob_gas = tx.env.total_blob_gas();
        let blob_price = env.block.blob_gasprice().unwrap_or(0);
        let role = if env.rules.as_ref().is_some_and(|r| r.coinbase.is_some()) {
            FeeRecipient::FeeCollector
        } else {
            FeeRecipient::Coinbase
        };
        FeeInputs {
            payer: tx.sender,
            gas_used: outcome.gas_used,
            effective_price: effective,
            coinbase_price: coinbase,
            blob_fee: U256::from(blob_gas) * U256::from(blob_price),
            recipient: env.block.beneficiary,
            role,
            spec: env.spec,
            op: outcome.op_fee.as_ref().map(|f| f.cost),
            mint: tx.deposit.and_then(|d| d.mint).filter(|m| !m.is_zero()),
        }
    }
}

/// Balances kept in order of first appearance.
#[derive(Default)]
struct Ledger {
    order: Vec<Address>,
    transfers: BTreeMap<Address, Flow>,
    fee: BTreeMap<Address, Flow>,
}

impl Ledger {
    fn touch(&mut self, a: Address) {
        if !self.transfers.contains_key(&a) && !self.fee.contains_key(&a) {
            self.order.push(a);
        }
    }
    fn transfer(&mut self, a: Address, f: Flow) {
        self.touch(a);
        self.transfers.entry(a).or_default().add(f);
    }
    fn fee(&mut self, a: Address, f: Flow) {
        self.touch(a);
        self.fee.entry(a).or_default().add(f);
    }
}

/// The accounts a SELFDESTRUCT deletes at the end of the transaction, and what they gained
/// after it (burned with them).
struct Destroyed {
    cancun: bool,
    created: HashSet<Address>,
    /// Deleted accounts, and from which point their credits are burned.
    deleted: HashSet<Address>,
    burned: U256,
}

impl Destroyed {
    /// Whether a SELFDESTRUCT of `a` deletes it: always before Cancun; from Cancun on only when
    /// it was created in the same transaction (EIP-6780).
    fn deletes(&self, a: Address) -> bool {
        !self.cancun || self.created.contains(&a)
    }
}

fn walk(f: &CallFrame, ledger: &mut Ledger, d: &mut Destroyed) {
    if f.error.is_some() {
        // The frame failed: its transfer and everything beneath it were undone.
        return;
    }
    let value = f.value.unwrap_or_default();
    match (f.kind, f.to) {
        (CallKind::Call, Some(to)) | (CallKind::Create | CallKind::Create2, Some(to)) => {
            if f.kind.is_create() {
                d.created.insert(to);
            }
            if !value.is_zero() {
                ledger.transfer(f.from, Flow::debit(value));
                credit(ledger, d, to, value);
            }
        }
        (CallKind::Selfdestruct, Some(to)) => {
            let deletes = d.deletes(f.from);
            if !value.is_zero() {
                ledger.transfer(f.from, Flow::debit(value));
                if to == f.from && !deletes {
                    // EIP-6780: a contract that outlives the transaction keeps what it sends
                    // itself.
                    ledger.transfer(to, Flow::credit(value));
                } else if to == f.from {
                    d.burned = d.burned.saturating_add(value);
                } else {
                    credit(ledger, d, to, value);
                }
            }
            if deletes {
                d.deleted.insert(f.from);
            }
        }
        // DELEGATECALL and STATICCALL move nothing; CALLCODE moves value from the caller to
        // itself.
        _ => {}
    }
    for c in &f.calls {
        walk(c, ledger, d);
    }
}

/// Credits `to`, unless it was deleted earlier in the transaction: then the amount is burned
/// with it at the end.
fn credit(ledger: &mut Ledger, d: &mut Destroyed, to: Address, value: U256) {
    if d.deleted.contains(&to) {
        d.burned = d.burned.saturating_add(value);
        ledger.touch(to);
    } else {
        ledger.transfer(to, Flow::credit(value));
    }
}

/// The asset changes of the traced call tree `root` (recorded with `withLog` for tokens) under
/// `fee` (`None` for no fee: nothing was charged).
pub fn asset_changes(root: &CallFrame, fee: Option<&FeeInputs>) -> AssetChanges {
    let mut ledger = Ledger::default();
    let mut fee_out = None;
    let mut minted = None;
    if let Some(f) = fee {
        let (paid, received) = match &f.op {
            Some(c) => (c.total(), c.priority),
            None => (
                U256::from(f.gas_used) * U256::from(f.effective_price) + f.blob_fee,
                U256::from(f.gas_used) * U256::from(f.coinbase_price),
            ),
        };
        if let Some(m) = f.mint {
            // Minted before the deposit ran, kept whatever followed.
            ledger.transfer(f.payer, Flow::credit(m));
            minted = Some((f.payer, m));
        }
        if !paid.is_zero() {
            ledger.fee(f.payer, Flow::debit(paid));
        }
        fee_out = Some(Fee {
            payer: f.payer,
            paid,
            gas_used: f.gas_used,
            gas_price: f.effective_price,
            recipient: f.recipient,
            role: f.role,
            received,
            // An OP chain burns nothing: every part of `paid` goes to a vault or the coinbase.
            burned: match &f.op {
                Some(_) => U256::ZERO,
                None => paid.saturating_sub(received),
            },
            op: f.op,
        });
    }
    let mut d = Destroyed {
        cancun: fee.is_none_or(|f| f.spec.is_enabled_in(SpecId::CANCUN)),
        created: HashSet::new(),
        deleted: HashSet::new(),
        burned: U256::ZERO,
    };
    walk(root, &mut ledger, &mut d);
    if let Some(f) = &fee_out {
        if !f.received.is_zero() {
            ledger.fee(f.recipient, Flow::credit(f.received));
        }
        if let Some(c) = &f.op {
            for (vault, amount) in [
                (BASE_FEE_VAULT, c.base),
                (L1_FEE_VAULT, c.l1),
                (OPERATOR_FEE_VAULT, c.operator),
            ] {
                if !amount.is_zero() {
                    ledger.fee(vault, Flow::credit(amount));
                }
            }
        }
    }
    let native = ledger
        .order
        .iter()
        .map(|a| NativeChange {
            address: *a,
            transfers: ledger.transfers.get(a).copied().unwrap_or_default(),
            fee: ledger.fee.get(a).copied().unwrap_or_default(),
        })
        .filter(|n| !n.transfers.is_zero() || !n.fee.is_zero())
        .collect();
    AssetChanges {
        native,
        fee: fee_out,
        tokens: tokens::token_changes(root),
        meta: BTreeMap::new(),
        burned_by_destruct: d.burned,
        minted,
    }
}

/// Formats `amount` with `decimals` exactly (`1.5`, `0.000021`, `12`): no digit is rounded
/// away.
pub fn format_units(amount: U256, decimals: u8) -> String {
    let digits = amount.to_string();
    let d = decimals as usize;
    if d == 0 {
        return digits;
    }
    let padded = if digits.len() <= d {
        format!("{}{digits}", "0".repeat(d + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, frac) = padded.split_at(padded.len() - d);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{frac}")
    }
}

#[cfg(test)]
mod tests;
