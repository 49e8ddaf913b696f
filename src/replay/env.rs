//! Turning chain data into revm inputs: block env, cfg env and tx env for every tx type.

use alloy_consensus::transaction::SignerRecoverable;
use alloy_consensus::{Transaction, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Typed2718};
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use revm::context::{BlockEnv, CfgEnv, TxEnv};
use revm::context_interface::block::BlobExcessGasAndPrice;
use revm::context_interface::either::Either;
use revm::primitives::eip4844::{
    BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN, BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
};
use revm::primitives::hardfork::SpecId;

use super::ReplayError;

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
}

/// Everything revm needs besides the transaction and the state.
#[derive(Clone, Debug)]
pub struct EvmEnv {
    pub spec: SpecId,
    pub cfg: CfgEnv,
    pub block: BlockEnv,
    /// The block's hash, when known (mined blocks; JS tracers' `ctx.blockHash`).
    pub block_hash: Option<B256>,
    /// Where the chain departs from Ethereum at this height (chains 1329/1328).
    pub rules: Option<crate::chain::rules::ChainRules>,
    /// The node's frames for the chain's precompiles, for the traced transaction.
    pub splice: Option<std::sync::Arc<super::splice::Splice>>,
}

impl EvmEnv {
    pub fn new(spec: SpecId, chain_id: u64, info: &BlockInfo) -> Self {
        let mut cfg = CfgEnv::new_with_spec(spec).with_chain_id(chain_id);
        cfg.tx_chain_id_check = false;
        let mut block = BlockEnv {
            number: U256::from(info.number),
            beneficiary: info.coinbase,
            timestamp: U256::from(info.timestamp),
            gas_limit: info.gas_limit,
            basefee: if spec >= SpecId::LONDON {
                info.base_fee.unwrap_or(0)
            } else {
                0
            },
            difficulty: info.difficulty,
            prevrandao: (spec >= SpecId::MERGE).then_some(info.mix_hash),
            blob_excess_gas_and_price: None,
            ..Default::default()
        };
        if spec >= SpecId::CANCUN {
            let fraction = if spec >= SpecId::PRAGUE {
                BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE
            } else {
                BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN
            };
            block.blob_excess_gas_and_price = Some(BlobExcessGasAndPrice::new(
                info.excess_blob_gas.unwrap_or(0),
                fraction,
            ));
        }
        let rules = crate::chain::rules::rules_at(chain_id, info.number);
        if let Some(coinbase) = rules.as_ref().and_then(|r| r.coinbase) {
            block.beneficiary = coinbase;
        }
        EvmEnv {
            spec,
            cfg,
            block,
            block_hash: info.hash,
            rules,
            splice: None,
        }
    }
}

/// EIP-7825 (Osaka): the most gas one transaction may have.
pub const OSAKA_TX_GAS_CAP: u64 = 1 << 24;

/// The gas a simulated call gets when none is given: the block's gas limit, and from Osaka on no
/// more than EIP-7825's per-transaction cap (a node's estimate could not exceed either).
pub fn default_call_gas(spec: SpecId, block_gas_limit: u64) -> u64 {
    if spec >= SpecId::OSAKA {
        block_gas_limit.min(OSAKA_TX_GAS_CAP)
    } else {
        block_gas_limit
    }
}

impl EvmEnv {
    /// eth_call semantics for a simulated call: the sender's nonce is not checked, and a zero
    /// gas price is allowed under any base fee.
    pub fn for_call(mut self, gas_price: u128) -> Self {
        self.cfg.disable_nonce_check = true;
        if gas_price == 0 {
            self.cfg.disable_base_fee = true;
        }
        self
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
}

impl ReplayTx {
    /// Decodes a raw signed transaction (legacy RLP or typed envelope) and recovers its sender.
    /// Like geth, bytes after the transaction's encoding are refused.
    pub fn decode(raw: &[u8]) -> Result<Self, ReplayError> {
        let mut rest = raw;
        let envelope = TxEnvelope::decode_2718(&mut rest)
            .map_err(|e| ReplayError::BadTransaction(format!("cannot decode transaction: {e}")))?;
        if !rest.is_empty() {
            return Err(ReplayError::BadTransaction(format!(
                "cannot decode transaction: {} bytes follow its {}-byte encoding",
                rest.len(),
                raw.len() - rest.len()
            )));
        }
        Self::from_envelope(envelope)
    }

    pub fn from_envelope(envelope: TxEnvelope) -> Result<Self, ReplayError> {
        let sender = envelope
            .recover_signer()
            .map_err(|e| ReplayError::BadTransaction(format!("cannot recover sender: {e}")))?;
        Self::from_envelope_with_sender(envelope, sender)
    }

    pub fn from_envelope_with_sender(
        envelope: TxEnvelope,
        sender: Address,
    ) -> Result<Self, ReplayError> {
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
        })
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
