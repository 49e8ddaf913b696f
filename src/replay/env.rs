//! Turning chain data into revm inputs: block env, cfg env and tx env for every tx type.

use alloy_primitives::{B256, U256};
use revm::context::{BlockEnv, CfgEnv};
use revm::context_interface::block::BlobExcessGasAndPrice;
use revm::primitives::eip4844::{
    BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN, BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
};
use revm::primitives::hardfork::SpecId;

pub use crate::source::chain_data::{BlockInfo, ReplayTx};

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
    /// The header's miner (COINBASE may be the chain's fee collector instead).
    pub miner: alloy_primitives::Address,
    /// PREVRANDAO was derived from the block time's whole seconds, its nanoseconds unknown
    /// (chains 1329/1328 without `--consensus-rpc`); a transaction that reads it is noted.
    pub prevrandao_guessed: bool,
    /// The OP-stack forks in force when the chain is an OP stack (deposits' gas rules, the L1
    /// data fee); `None` elsewhere.
    pub op: Option<crate::chain::op::OpRules>,
    /// The OP fee vaults' balances are known to no one in this replay and nothing reads them
    /// after it: a vault the pre-state lacks is not credited (`tx_rules::settle`). Set by the
    /// fast path for a later transaction of its block (`replay/mined.rs`), whose node prestate
    /// leaves the vaults out, when the tracer shows no account the transaction did not look
    /// up ([`crate::trace::TracerSpec::shows_unlooked_balances`]).
    pub skip_unknown_vaults: bool,
    /// The block's precompiles as an `eth_simulateV1` state override left them (taken away or
    /// moved: `replay/precompile_moves.rs`); `None`: the fork's.
    pub precompiles: Option<&'static super::precompile_moves::Modified>,
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
            let excess = info.excess_blob_gas.unwrap_or(0);
            block.blob_excess_gas_and_price = Some(BlobExcessGasAndPrice {
                excess_blob_gas: excess,
                blob_gasprice: blob_gas_price(excess, fraction),
            });
        }
        let mut rules = match info.ruleset {
            crate::chain::rules::Ruleset::Chain => {
                crate::chain::rules::rules_at(chain_id, info.number)
            }
            crate::chain::rules::Ruleset::Ethereum | crate::chain::rules::Ruleset::Optimism => None,
        };
        if let (Some(r), Some(c)) = (rules.as_mut(), info.consensus) {
            r.sstore_set_gas = c.sstore_set_gas;
            r.consensus_read = true;
        }
        if let Some(coinbase) = rules.as_ref().and_then(|r| r.coinbase) {
            block.beneficiary = coinbase;
        }
        let derive_prevrandao = rules.as_ref().is_some_and(|r| r.prevrandao_from_time)
            && info.mix_hash.is_zero()
            && spec >= SpecId::MERGE;
        if derive_prevrandao {
            // Without the consensus time, whole seconds (see `prevrandao_from_time`).
            let nanos = info.consensus.map_or(0, |c| c.time_nanos);
            block.prevrandao = Some(crate::chain::rules::prevrandao_from_time(
                info.timestamp,
                nanos,
            ));
        }
        EvmEnv {
            spec,
            cfg,
            block,
            block_hash: info.hash,
            rules,
            splice: None,
            miner: info.coinbase,
            prevrandao_guessed: derive_prevrandao && info.consensus.is_none(),
            op: info.op_rules(chain_id),
            skip_unknown_vaults: false,
            precompiles: None,
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
        // geth runs a call in a gas pool of its own (`core.GasPool` of MaxUint64 in `doCall`):
        // a gas above the block's limit is no error there (the RPC gas cap bounds it instead).
        self.cfg.disable_block_gas_limit = true;
        if gas_price == 0 {
            self.cfg.disable_base_fee = true;
        }
        self
    }
}

/// EIP-4844's blob base fee, `fake_exponential(MIN_BASE_FEE_PER_BLOB_GAS, excess, fraction)`,
/// as revm's `calc_blob_gasprice` and geth's `CalcBlobFee` compute it, with 256-bit
/// intermediates: revm's 128-bit ones overflow on an excess of a few hundred million (a mutated
/// bundle's, a hostile header's: a panic in a debug build, a wrong fee in a release one), where
/// geth's big integers do not. A fee past 128 bits, which no blob transaction can pay, is
/// `u128::MAX`.
pub fn blob_gas_price(excess: u64, fraction: u64) -> u128 {
    let numerator = U256::from(excess);
    let denominator = U256::from(fraction.max(1));
    let limit = U256::from(u128::MAX).saturating_mul(denominator);
    let (mut i, mut output) = (1u64, U256::ZERO);
    let mut accum = denominator; // factor 1 × denominator
    while !accum.is_zero() {
        output += accum;
        if output > limit {
            return u128::MAX;
        }
        accum = accum * numerator / (denominator * U256::from(i));
        i += 1;
    }
    u128::try_from(output / denominator).unwrap_or(u128::MAX)
}

#[cfg(test)]
mod tests {
    use super::blob_gas_price;
    use revm::context_interface::block::calc_blob_gasprice;
    use revm::primitives::eip4844::{
        BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN, BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
    };

    /// revm's fee wherever revm's arithmetic holds; past it (the excess a property test's
    /// mutated bundle gave: 284,284,039) the exact fee while it fits 128 bits, then the largest.
    #[test]
    fn the_blob_fee_is_revms_and_saturates_past_128_bits() {
        for fraction in [
            BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN,
            BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
        ] {
            for excess in (0..100_000_000u64)
                .step_by(999_983)
                .chain([0, 1, 131_072, 393_216])
            {
                assert_eq!(
                    blob_gas_price(excess, fraction),
                    calc_blob_gasprice(excess, fraction),
                    "excess {excess}, fraction {fraction}"
                );
            }
            assert_eq!(blob_gas_price(u64::MAX, fraction), u128::MAX);
        }
        // e^(284,284,039 / 5,007,716) = e^56.77 ≈ 4.5e24 (Prague); e^85.15 ≈ 9.6e36 (Cancun).
        let prague = blob_gas_price(284_284_039, BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE);
        assert!((4.0e24..5.0e24).contains(&(prague as f64)), "{prague}");
        let cancun = blob_gas_price(284_284_039, BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN);
        assert!((9.0e36..1.0e37).contains(&(cancun as f64)), "{cancun}");
        for fraction in [
            BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN,
            BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
        ] {
            assert_eq!(blob_gas_price(1_000_000_000, fraction), u128::MAX);
        }
    }
}
