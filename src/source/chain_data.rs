//! Blocks and transactions as chain data gives them (a node, a fixture, a bundle): the header
//! fields a replay needs and signed transactions decoded, with their sender recovered and
//! revm's `TxEnv` filled. `replay` runs them; `source` produces them.

use alloy_consensus::transaction::SignerRecoverable;
use alloy_consensus::{Transaction, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Typed2718};
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use revm::context::TxEnv;
use revm::context_interface::either::Either;

use super::error::TxError;
use crate::chain::op::RollupCostData;

/// The block a transaction runs in, as chain data gives it.
#[derive(Clone, Debug, Default)]
pub struct BlockInfo {
    pub number: u64,
    pub timestamp: u64,
    pub coinbase: Address,
    pub gas_limit: u64,
    pub base_fee: Option<u64>,
    pub difficulty: U256,
    /// `mixHash` of the header: PREVRANDAO after the merge.
    pub mix_hash: B256,
    pub excess_blob_gas: Option<u64>,
    pub hash: Option<B256>,
    /// `parentHash` of the header: the block whose state a replay of this one starts from,
    /// named by hash (EIP-1898) so that a reorg cannot swap it for another.
    pub parent_hash: Option<B256>,
    /// What the consensus layer says of the block (chains 1329/1328, `--consensus-rpc`).
    pub consensus: Option<ConsensusFacts>,
    /// Whether the chain's own rules apply (chains 1329/1328 served by the chain's node) or
    /// Ethereum's (the same chain id on a dev node).
    pub ruleset: crate::chain::rules::Ruleset,
    /// What the header's own fields say of its fork, when it was read from a node.
    pub header_fork: Option<crate::chain::HeaderFork>,
    /// What the chain data itself shows of the OP stack, if anything (a deposit transaction,
    /// a receipt's deposit or L1-fee fields): a node on a chain id chaintrace has no preset
    /// for runs the OP stack's rules when it serves these.
    pub op_evidence: Option<&'static str>,
    /// The last OP fork whose rules the node runs, where that is not the chain's schedule: a
    /// dev node's OP mode (anvil 1.7.1 names its fork Jovian but charges Isthmus's operator
    /// fee).
    pub op_dev_fork: Option<crate::chain::op::OpFork>,
    /// A custom OP chain's fork schedule (`--chain-config`), set by `prepare_block` when the
    /// config is this chain's.
    pub op_schedule: Option<crate::chain::op::OpSchedule>,
}

/// Facts of a block of chains 1329/1328 that only their consensus layer has
/// ([`crate::source::consensus`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsensusFacts {
    /// The nanoseconds of the header time (PREVRANDAO hashes them).
    pub time_nanos: u32,
    /// `SeiSstoreSetGasEIP2200` in force.
    pub sstore_set_gas: u64,
}

impl BlockInfo {
    /// The OP-stack forks in force for this block of chain `chain_id` under its ruleset: a dev
    /// node's one fork (`op_dev_fork`) at every block, whatever a preset's schedule says of
    /// its small block numbers and times, else [`crate::chain::op::op_rules`]' schedule.
    pub fn op_rules(&self, chain_id: u64) -> Option<crate::chain::op::OpRules> {
        use crate::chain::rules::Ruleset;
        match self.op_dev_fork {
            Some(f) if self.ruleset != Ruleset::Ethereum && self.op_schedule.is_none() => {
                Some(crate::chain::op::OpRules::up_to(f))
            }
            _ => crate::chain::op::op_rules(
                chain_id,
                self.ruleset,
                self.op_schedule.as_ref(),
                self.number,
                self.timestamp,
            ),
        }
    }
}

/// A signed transaction ready to replay.
#[derive(Clone, Debug)]
pub struct ReplayTx {
    pub hash: B256,
    pub sender: Address,
    pub env: TxEnv,
    /// Recoverable EIP-7702 authorities, in list order (the prestate tracer looks them up).
    pub authorities: Vec<Address>,
    /// The raw EIP-2718 encoding, kept for replay bundles.
    pub raw: Bytes,
    /// An OP-stack deposit (type `0x7e`): no signature, no fee, `mint` credited first; `env`
    /// holds it as revm runs it (a zero-price legacy message, nonce not checked).
    pub deposit: Option<super::deposit::Deposit>,
    /// What its OP-stack L1 data fee is priced by, worked out once ([`RollupCache`]).
    pub rollup: RollupCache,
}

/// What an OP-stack user transaction's L1 data fee is priced by (its encoding's zero and
/// non-zero bytes and FastLZ size), worked out once for every clone a replay's passes run, as
/// op-geth caches it on the transaction (`Transaction.rollupCostData`, core/types/transaction.go):
/// the FastLZ walk is most of what the OP rules add to a replay. Tied to the encoding it was
/// worked from: another `raw` in its place is worked out anew.
#[derive(Clone, Debug, Default)]
pub struct RollupCache(std::sync::Arc<std::sync::OnceLock<(usize, usize, RollupCostData)>>);

impl RollupCache {
    /// The cost data of `raw` (`RollupCostData::of_tx`).
    pub fn of(&self, raw: &Bytes) -> RollupCostData {
        let key = (raw.as_ptr() as usize, raw.len());
        let (at, len, data) = *self
            .0
            .get_or_init(|| (key.0, key.1, RollupCostData::of_tx(raw)));
        if (at, len) == key {
            data
        } else {
            RollupCostData::of_tx(raw)
        }
    }
}

impl ReplayTx {
    /// Decodes a raw signed transaction (legacy RLP or typed envelope) and recovers its sender.
    /// Like geth, bytes after the transaction's encoding are refused.
    pub fn decode(raw: &[u8]) -> Result<Self, TxError> {
        if raw.first() == Some(&super::deposit::DEPOSIT_TX_TYPE) {
            return Ok(Self::from_deposit(super::deposit::DepositTx::decode(raw)?));
        }
        let mut rest = raw;
        let envelope = TxEnvelope::decode_2718(&mut rest)
            .map_err(|e| TxError(format!("cannot decode transaction: {e}")))?;
        if !rest.is_empty() {
            return Err(TxError(format!(
                "cannot decode transaction: {} bytes follow its {}-byte encoding",
                rest.len(),
                raw.len() - rest.len()
            )));
        }
        Self::from_envelope(envelope)
    }

    pub fn from_envelope(envelope: TxEnvelope) -> Result<Self, TxError> {
        let sender = envelope
            .recover_signer()
            .map_err(|e| TxError(format!("cannot recover sender: {e}")))?;
        Self::from_envelope_with_sender(envelope, sender)
    }

    pub fn from_envelope_with_sender(
        envelope: TxEnvelope,
        sender: Address,
    ) -> Result<Self, TxError> {
        let hash = *envelope.tx_hash();
        let mut raw = Vec::new();
        alloy_eips::eip2718::Encodable2718::encode_2718(&envelope, &mut raw);
        let authorities = envelope
            .authorization_list()
            .map(|l| {
                l.iter()
                    .filter_map(|a| a.recover_authority().ok())
                    .collect()
            })
            .unwrap_or_default();
        let legacy = envelope.is_legacy() || matches!(envelope, TxEnvelope::Eip2930(_));
        let env = TxEnv {
            tx_type: envelope.ty(),
            caller: sender,
            gas_limit: envelope.gas_limit(),
            gas_price: if legacy {
                envelope.gas_price().unwrap_or(0)
            } else {
                envelope.max_fee_per_gas()
            },
            kind: envelope.kind(),
            value: envelope.value(),
            data: envelope.input().clone(),
            nonce: envelope.nonce(),
            chain_id: envelope.chain_id(),
            access_list: envelope.access_list().cloned().unwrap_or_default(),
            gas_priority_fee: if legacy {
                None
            } else {
                envelope.max_priority_fee_per_gas()
            },
            blob_hashes: envelope
                .blob_versioned_hashes()
                .map(|h| h.to_vec())
                .unwrap_or_default(),
            max_fee_per_blob_gas: envelope.max_fee_per_blob_gas().unwrap_or(0),
            authorization_list: envelope
                .authorization_list()
                .map(|l| l.iter().cloned().map(Either::Left).collect())
                .unwrap_or_default(),
        };
        Ok(ReplayTx {
            hash,
            sender,
            env,
            authorities,
            raw: raw.into(),
            deposit: None,
            rollup: RollupCache::default(),
        })
    }

    /// A deposit as revm runs it: a legacy-typed message at gas price 0 (no fee bought, none
    /// paid, nothing to the coinbase) from `from`; the replay adds the rest (mint, nonce, gas
    /// used: `replay/tx_rules.rs`).
    pub fn from_deposit(d: super::deposit::DepositTx) -> Self {
        let raw = d.encode();
        ReplayTx {
            hash: d.hash,
            sender: d.from,
            env: TxEnv {
                tx_type: 0,
                caller: d.from,
                gas_limit: d.gas_limit,
                gas_price: 0,
                kind: d.kind,
                value: d.value,
                data: d.data,
                nonce: 0,
                chain_id: None,
                ..Default::default()
            },
            authorities: Vec::new(),
            raw,
            deposit: Some(d.deposit),
            rollup: RollupCache::default(),
        }
    }

    /// An unsigned call to simulate (debug_traceCall): no hash, no signature.
    pub fn simulated(
        from: Address,
        to: Option<Address>,
        data: Bytes,
        value: U256,
        gas_limit: u64,
        gas_price: u128,
    ) -> Self {
        ReplayTx {
            hash: B256::ZERO,
            sender: from,
            env: TxEnv {
                tx_type: 0,
                caller: from,
                gas_limit,
                gas_price,
                kind: to.map(TxKind::Call).unwrap_or(TxKind::Create),
                value,
                data,
                ..Default::default()
            },
            authorities: Vec::new(),
            raw: Bytes::new(),
            deposit: None,
            rollup: RollupCache::default(),
        }
    }

    /// The transaction's recipient, or `None` for a contract creation.
    pub fn to(&self) -> Option<Address> {
        match self.env.kind {
            TxKind::Call(a) => Some(a),
            TxKind::Create => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache answers what `RollupCostData::of_tx` does, for every clone, and works out
    /// anew for another encoding put in `raw`'s place (a deposit's: none).
    #[test]
    fn rollup_cost_data_is_worked_out_once_per_encoding() {
        let raw =
            Bytes::from([vec![2u8], vec![0; 40], (1..=200).map(|i| i as u8).collect()].concat());
        let cache = RollupCache::default();
        let want = RollupCostData::of_tx(&raw);
        assert_eq!(want.zeroes, 40);
        assert_eq!(cache.of(&raw), want);
        let clone = cache.clone();
        assert_eq!(clone.of(&raw.clone()), want);
        assert!(clone.0.get().is_some() && std::sync::Arc::ptr_eq(&clone.0, &cache.0));
        let other = Bytes::from(vec![0x7e, 1, 2, 3]);
        assert_eq!(clone.of(&other), RollupCostData::default());
        let shorter = raw.slice(..100);
        assert_eq!(cache.of(&shorter), RollupCostData::of_tx(&shorter));
        assert_ne!(cache.of(&shorter), want);
    }
}
