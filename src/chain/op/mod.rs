//! OP-stack chains: hard forks ([`fork`]) and the fees a transaction pays beyond its gas — the
//! L1 data fee and the operator fee ([`l1_fee`]) — as op-geth computes them, a pure library
//! that reads the L1Block predeploy through a closure and knows nothing of a replay; [`fastlz`]
//! counts the FastLZ size Fjord prices a transaction by.

pub mod chains;
pub mod config;
pub mod fastlz;
pub mod fork;
pub mod l1_fee;
#[cfg(test)]
mod own_tests;
#[cfg(test)]
mod receipt_tests;
#[cfg(test)]
mod tests;

use alloy_primitives::{address, Address};

pub use chains::{known, op_rules, OpChain};
pub use config::{OpChainConfig, OpConfigError};
pub use fork::{OpFork, OpHeaderFork, OpRules, OpSchedule};
pub use l1_fee::{
    da_footprint_gas, flz_compress_len, l1_cost, l1_data_fee, l1_gas_used, operator_fee,
    operator_fee_refund, total_rollup_cost, L1BlockInfo, L1Cost, L1CostFunction, L1InfoError,
    RollupCostData, DEPOSIT_TX_TYPE,
};

/// The L1Block predeploy: the L1 origin's fee parameters, written by each block's L1
/// attributes deposit (op-geth `core/types/rollup_cost.go`: `L1BlockAddr`).
pub const L1_BLOCK: Address = address!("4200000000000000000000000000000000000015");

/// Receives the tip: OP-stack blocks name it as their coinbase (the SequencerFeeVault
/// predeploy); op-geth pays `gasUsed × effectiveTip` to the block's coinbase.
pub const SEQUENCER_FEE_VAULT: Address = address!("4200000000000000000000000000000000000011");

/// Receives `gasUsed × baseFee`, which OP-stack chains do not burn (op-geth
/// `params/protocol_params.go`: `OptimismBaseFeeRecipient`).
pub const BASE_FEE_VAULT: Address = address!("4200000000000000000000000000000000000019");

/// Receives the L1 data fee (`OptimismL1FeeRecipient`).
pub const L1_FEE_VAULT: Address = address!("420000000000000000000000000000000000001a");

/// Receives the operator fee of the gas used, from Isthmus (`OptimismOperatorFeeRecipient`).
pub const OPERATOR_FEE_VAULT: Address = address!("420000000000000000000000000000000000001b");

/// What a user transaction's OP fees read under `rules` (`replay/tx_rules.rs`): the L1Block
/// predeploy (its slots as [`L1BlockInfo::from_storage`] reads them with every value zero: the
/// most it reads) and the vaults it credits. Fetched with what a replay obviously touches.
pub fn fee_reads(rules: OpRules) -> (Vec<Address>, Vec<(Address, alloy_primitives::U256)>) {
    let slots = std::cell::RefCell::new(Vec::new());
    L1BlockInfo::from_storage(rules, |slot| {
        slots.borrow_mut().push((L1_BLOCK, slot));
        alloy_primitives::U256::ZERO
    });
    let mut accounts = vec![L1_BLOCK, BASE_FEE_VAULT, L1_FEE_VAULT];
    if rules.is(OpFork::Isthmus) {
        accounts.push(OPERATOR_FEE_VAULT);
    }
    (accounts, slots.into_inner())
}

/// The union of [`fee_reads`] over every fork: what a user transaction's fees may read before
/// its block's fork is known (the fast path asks for it with the block header, in one round
/// trip; the slots a fork does not read are harmless in the pre-state).
pub fn fee_reads_any() -> (Vec<Address>, Vec<(Address, alloy_primitives::U256)>) {
    let (mut accounts, mut slots) = (Vec::new(), Vec::new());
    for fork in OpFork::ALL {
        let (a, s) = fee_reads(OpSchedule::all_from_genesis(fork).rules_at(0));
        accounts.extend(
            a.into_iter()
                .filter(|x| !accounts.contains(x))
                .collect::<Vec<_>>(),
        );
        slots.extend(
            s.into_iter()
                .filter(|x| !slots.contains(x))
                .collect::<Vec<_>>(),
        );
    }
    (accounts, slots)
}
