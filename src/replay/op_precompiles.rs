//! The precompiles of an OP-stack block beyond its Ethereum fork's: from Fjord, RIP-7212's
//! `p256Verify` at `0x100` (3,450 gas; op-geth `core/vm/contracts.go`:
//! `PrecompiledContractsFjord`, op-revm `precompiles.rs`: `fjord`), revm's own implementation
//! (`revm::precompile::secp256r1::P256VERIFY`). From Osaka, Ethereum's own EIP-7951 set (6,900
//! gas) is the fork's, and nothing is added.

use std::sync::OnceLock;

use revm::handler::EthPrecompiles;
use revm::precompile::{secp256r1, PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

use super::EvmEnv;
use crate::chain::op::OpFork;

/// The precompile set of `env`'s block when its OP rules add to its Ethereum fork's.
pub fn set(env: &EvmEnv) -> Option<&'static Precompiles> {
    let fjord = env.op.is_some_and(|r| r.is(OpFork::Fjord));
    if !fjord || env.spec >= SpecId::OSAKA {
        return None;
    }
    static CANCUN: OnceLock<Precompiles> = OnceLock::new();
    static PRAGUE: OnceLock<Precompiles> = OnceLock::new();
    let (cell, spec) = if env.spec >= SpecId::PRAGUE {
        (&PRAGUE, SpecId::PRAGUE)
    } else {
        (&CANCUN, SpecId::CANCUN)
    };
    Some(cell.get_or_init(|| {
        let mut p = Precompiles::new(PrecompileSpecId::from_spec_id(spec)).clone();
        p.extend([secp256r1::P256VERIFY]);
        p
    }))
}

/// The addresses `env`'s OP rules add to its Ethereum fork's precompiles (`0x100` from Fjord
/// before Osaka): what tracers that skip or name precompiles must count too.
pub fn added(env: &EvmEnv) -> Vec<alloy_primitives::Address> {
    if set(env).is_some() {
        vec![*secp256r1::P256VERIFY.address()]
    } else {
        Vec::new()
    }
}

/// Gives an EVM built for `env` the OP precompiles of its block ([`set`]). revm keeps them:
/// the provider's spec is the run's, so `set_spec` changes nothing, and the journal warms the
/// provider's addresses.
pub fn install(precompiles: &mut EthPrecompiles, env: &EvmEnv) {
    if let Some(p) = set(env) {
        precompiles.precompiles = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::op::OpRules;
    use alloy_primitives::{address, hex};

    fn env(spec: SpecId, op: Option<OpFork>) -> EvmEnv {
        let info = crate::source::chain_data::BlockInfo::default();
        let mut env = EvmEnv::new(spec, 10, &info);
        env.op = op.map(OpRules::up_to);
        env
    }

    /// RIP-7212's p256Verify from Fjord, at 3,450 gas; a vector from the daimo-eth
    /// p256-verifier test vectors that revm's own tests use (`secp256r1.rs`, `ok_1`).
    #[test]
    fn fjord_adds_p256_verify_at_0x100() {
        let at = address!("0000000000000000000000000000000000000100");
        assert!(set(&env(SpecId::CANCUN, Some(OpFork::Ecotone))).is_none());
        assert!(set(&env(SpecId::CANCUN, None)).is_none());
        let p = set(&env(SpecId::CANCUN, Some(OpFork::Fjord))).unwrap();
        assert!(p.contains(&at));
        assert!(p.contains(&address!("000000000000000000000000000000000000000a")));
        let prague = set(&env(SpecId::PRAGUE, Some(OpFork::Isthmus))).unwrap();
        assert!(prague.contains(&at));
        assert!(prague.contains(&address!("0000000000000000000000000000000000000011")));
        let input = hex::decode(
            "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4da73bd4903f0ce3b6\
             39bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac36dbcd03009df8c59286b162af3bd7fc\
             c0450c9aa81be5d10d312af6c66b1d604aebd3099c618202fcfe16ae7770b0c49ab5eadf74b75420\
             4a3bb6060e44eff37618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e",
        )
        .unwrap();
        let out = p.get(&at).unwrap().execute(&input, 10_000, 0).unwrap();
        assert_eq!(out.gas_used, 3450);
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(out.bytes.as_ref(), one);
        let mut bad = input.clone();
        bad[0] ^= 0x70;
        let out = p.get(&at).unwrap().execute(&bad, 10_000, 0).unwrap();
        assert!(out.bytes.is_empty(), "an invalid signature returns nothing");
    }

    /// The tracers that skip or name precompiles (4byte, flat/Parity pruning, JavaScript's
    /// `isPrecompiled`) count what OP adds: `0x100` from Fjord, nothing before or off OP.
    #[test]
    fn tracers_count_the_added_precompile() {
        let at = address!("0000000000000000000000000000000000000100");
        assert_eq!(added(&env(SpecId::CANCUN, Some(OpFork::Fjord))), vec![at]);
        assert!(added(&env(SpecId::CANCUN, Some(OpFork::Ecotone))).is_empty());
        assert!(added(&env(SpecId::PRAGUE, None)).is_empty());
        let fjord = env(SpecId::CANCUN, Some(OpFork::Fjord));
        assert!(crate::replay::precompile_test(&fjord)(at));
        assert!(!crate::replay::precompile_test(&env(SpecId::CANCUN, None))(
            at
        ));
    }
}
