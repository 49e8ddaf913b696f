//! The precompiles of an OP-stack block beyond its Ethereum fork's: from Fjord, RIP-7212's
//! `p256Verify` at `0x100` (3,450 gas; op-geth `core/vm/contracts.go`:
//! `PrecompiledContractsFjord`, op-revm `precompiles.rs`: `fjord`), revm's own implementation
//! (`revm::precompile::secp256r1::P256VERIFY`). From Osaka, Ethereum's own EIP-7951 set (6,900
//! gas) is the fork's, and nothing is added.

use std::sync::OnceLock;

use revm::handler::EthPrecompiles;
use revm::precompile::interface::{call_eth_precompile, PrecompileHalt, PrecompileResult};
use revm::precompile::{bn254, secp256r1, Precompile, PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

use super::EvmEnv;
use crate::chain::op::OpFork;

/// The precompile set of `env`'s block when its OP rules add to its Ethereum fork's: from
/// Fjord `p256Verify`; from Granite the bn256 pairing refuses inputs over 112,687 bytes (op-geth
/// `core/vm/contracts.go`: `bn256PairingGranite`, `params.Bn256PairingMaxInputSizeGranite`).
pub fn set(env: &EvmEnv) -> Option<&'static Precompiles> {
    let fjord = env.op.is_some_and(|r| r.is(OpFork::Fjord));
    if !fjord || env.spec >= SpecId::OSAKA {
        return None;
    }
    let granite = env.op.is_some_and(|r| r.is(OpFork::Granite));
    static CANCUN: OnceLock<Precompiles> = OnceLock::new();
    static CANCUN_GRANITE: OnceLock<Precompiles> = OnceLock::new();
    static PRAGUE: OnceLock<Precompiles> = OnceLock::new();
    static PRAGUE_GRANITE: OnceLock<Precompiles> = OnceLock::new();
    let (cell, spec) = match (env.spec >= SpecId::PRAGUE, granite) {
        (true, true) => (&PRAGUE_GRANITE, SpecId::PRAGUE),
        (true, false) => (&PRAGUE, SpecId::PRAGUE),
        (false, true) => (&CANCUN_GRANITE, SpecId::CANCUN),
        (false, false) => (&CANCUN, SpecId::CANCUN),
    };
    Some(cell.get_or_init(|| {
        let mut p = Precompiles::new(PrecompileSpecId::from_spec_id(spec)).clone();
        p.extend([secp256r1::P256VERIFY]);
        if granite {
            p.extend([GRANITE_PAIR]);
        }
        p
    }))
}

/// Granite's largest bn256 pairing input (op-geth `params.Bn256PairingMaxInputSizeGranite`:
/// 112,687 bytes, 427 pairs).
pub const GRANITE_MAX_PAIR_INPUT: usize = 112_687;

/// The bn256 pairing as Granite prices and bounds it: Istanbul's price, inputs over
/// [`GRANITE_MAX_PAIR_INPUT`] refused (the call fails, as op-geth's `errBadPairingInputSize`).
const GRANITE_PAIR: Precompile = Precompile::new(
    revm::precompile::PrecompileId::Bn254Pairing,
    bn254::pair::ADDRESS,
    granite_pair,
);

fn granite_pair(input: &[u8], gas_limit: u64, reservoir: u64) -> PrecompileResult {
    Ok(call_eth_precompile(
        |i, g| {
            if i.len() > GRANITE_MAX_PAIR_INPUT {
                return Err(PrecompileHalt::Bn254PairLength);
            }
            bn254::run_pair(
                i,
                bn254::pair::ISTANBUL_PAIR_PER_POINT,
                bn254::pair::ISTANBUL_PAIR_BASE,
                g,
            )
        },
        input,
        gas_limit,
        reservoir,
    ))
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

    /// Granite bounds the bn256 pairing's input (op-geth `bn256PairingGranite`): 587 pairs
    /// (112,704 bytes, over 112,687) run under Fjord and are refused from Granite; 586 pairs
    /// run under both. Points at infinity (zeros) pair to true.
    #[test]
    fn granite_bounds_the_pairing_input() {
        let pair = bn254::pair::ADDRESS;
        let run = |fork: OpFork, pairs: usize| {
            let p = set(&env(SpecId::CANCUN, Some(fork))).unwrap();
            let input = vec![0u8; 192 * pairs];
            p.get(&pair).unwrap().execute(&input, 30_000_000, 0)
        };
        let fjord = run(OpFork::Fjord, 587).unwrap();
        assert!(!fjord.is_halt(), "{fjord:?}");
        assert_eq!(fjord.gas_used, 45_000 + 34_000 * 587);
        assert!(run(OpFork::Granite, 587).unwrap().is_halt());
        assert!(!run(OpFork::Granite, 586).unwrap().is_halt());
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
