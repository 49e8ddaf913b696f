//! The precompiles of an OP-stack block where they differ from its Ethereum fork's:
//!
//! * from Fjord, RIP-7212's `p256Verify` at `0x100` (3,450 gas; op-geth `core/vm/contracts.go`
//!   `PrecompiledContractsFjord`, op-revm `precompiles.rs` `fjord`), revm's own implementation —
//!   until Karst, whose Osaka set has EIP-7951's own (6,900 gas);
//! * input bounds on the variable-input precompiles, a longer input failing the call as op-geth
//!   fails it (all its gas used; op-geth `params/protocol_params.go` and `core/vm/contracts.go`,
//!   op-revm 20 `precompiles.rs`):
//!
//!   | from | bn256 pairing | BLS12-381 G1 MSM | G2 MSM | pairing |
//!   |---|---|---|---|---|
//!   | Granite | 112,687 | | | |
//!   | Isthmus | 112,687 | 513,760 | 488,448 | 235,008 |
//!   | Jovian | 81,984 | 288,960 | 278,784 | 156,672 |
//!   | Karst | 57,600 (300 pairs: specs.optimism.io `protocol/karst/exec-engine`) | as Jovian | | |
//!
//! The errors are op-geth's (`errBadPairingInputSize`, and the BLS12-381 precompiles'
//! `input size exceeds maximum`), given as the halt's text so that the tracers' rerun of a
//! failed call ([`crate::trace::precompile_error`]) prints them.

use std::sync::OnceLock;

use revm::handler::EthPrecompiles;
use revm::precompile::bls12_381::{g1_msm, g2_msm, pairing};
use revm::precompile::bls12_381_const::{G1_MSM_ADDRESS, G2_MSM_ADDRESS, PAIRING_ADDRESS};
use revm::precompile::interface::{
    call_eth_precompile, EthPrecompileResult, PrecompileFn, PrecompileHalt, PrecompileResult,
};
use revm::precompile::{bn254, secp256r1, Precompile, PrecompileId, PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

use super::EvmEnv;
use crate::chain::op::OpFork;

/// Granite's largest bn256 pairing input (op-geth `params.Bn256PairingMaxInputSizeGranite`:
/// 112,687 bytes, 586 pairs).
pub const GRANITE_MAX_PAIR_INPUT: usize = 112_687;

/// The input bounds of one fork: the bn256 pairing's, and whether the BLS12-381 MSMs and
/// pairing are bounded (from Isthmus; Jovian's bounds from Jovian, see [`bls_bounded`]).
#[derive(Clone, Copy)]
struct Bounds {
    bn_pair: usize,
    bls: bool,
}

/// The latest fork whose bounds apply, and its bounds.
fn bounds(env: &EvmEnv) -> Option<(usize, Bounds)> {
    let r = env.op?;
    let (level, bn_pair, bls) = if r.is(OpFork::Karst) {
        (4, 57_600, true)
    } else if r.is(OpFork::Jovian) {
        (3, 81_984, true)
    } else if r.is(OpFork::Isthmus) {
        (2, GRANITE_MAX_PAIR_INPUT, true)
    } else if r.is(OpFork::Granite) {
        (1, GRANITE_MAX_PAIR_INPUT, false)
    } else {
        return None;
    };
    let b = Bounds { bn_pair, bls };
    Some((level, b))
}

/// The precompile set of `env`'s block when its OP rules change its Ethereum fork's (see the
/// module's comment); `None` when they change nothing.
pub fn set(env: &EvmEnv) -> Option<&'static Precompiles> {
    let fjord = env.op.is_some_and(|r| r.is(OpFork::Fjord));
    if !fjord {
        return None;
    }
    let base = if env.spec >= SpecId::OSAKA {
        SpecId::OSAKA
    } else if env.spec >= SpecId::PRAGUE {
        SpecId::PRAGUE
    } else {
        SpecId::CANCUN
    };
    let bounded = bounds(env);
    // One set per (Ethereum fork, latest bounding fork).
    static SETS: [[OnceLock<Precompiles>; 5]; 3] = [const { [const { OnceLock::new() }; 5] }; 3];
    let row = match base {
        SpecId::OSAKA => 2,
        SpecId::PRAGUE => 1,
        _ => 0,
    };
    let level = bounded.map_or(0, |(l, _)| l);
    Some(SETS[row][level].get_or_init(|| {
        let mut p = Precompiles::new(PrecompileSpecId::from_spec_id(base)).clone();
        if base < SpecId::OSAKA {
            p.extend([secp256r1::P256VERIFY]);
        }
        if let Some((_, b)) = bounded {
            p.extend([bn_pair(b.bn_pair)]);
            if b.bls && base >= SpecId::PRAGUE {
                p.extend(bls_bounded(level >= 3));
            }
        }
        p
    }))
}

/// op-geth's error for a bn256 pairing input over the fork's bound (`errBadPairingInputSize`).
pub const PAIR_INPUT_TOO_LONG: &str = "bad elliptic curve pairing input size";

/// The bn256 pairing as Istanbul prices it.
fn istanbul_pair(input: &[u8], gas_limit: u64) -> EthPrecompileResult {
    bn254::run_pair(
        input,
        bn254::pair::ISTANBUL_PAIR_PER_POINT,
        bn254::pair::ISTANBUL_PAIR_BASE,
        gas_limit,
    )
}

/// A precompile function `$name` running `$run` on inputs of at most `$max` bytes, longer ones
/// failing with `$text` (op-geth's error).
macro_rules! bounded {
    ($name:ident, $max:expr, $text:expr, $run:path) => {
        fn $name(input: &[u8], gas_limit: u64, reservoir: u64) -> PrecompileResult {
            fn inner(i: &[u8], g: u64) -> EthPrecompileResult {
                if i.len() > $max {
                    return Err(PrecompileHalt::Other($text.into()));
                }
                $run(i, g)
            }
            Ok(call_eth_precompile(inner, input, gas_limit, reservoir))
        }
    };
}

bounded!(
    pair_granite,
    GRANITE_MAX_PAIR_INPUT,
    PAIR_INPUT_TOO_LONG,
    istanbul_pair
);
bounded!(pair_jovian, 81_984, PAIR_INPUT_TOO_LONG, istanbul_pair);
bounded!(pair_karst, 57_600, PAIR_INPUT_TOO_LONG, istanbul_pair);
bounded!(
    g1_isthmus,
    513_760,
    "g1 msm input size exceeds maximum",
    g1_msm::g1_msm
);
bounded!(
    g1_jovian,
    288_960,
    "g1 msm input size exceeds maximum",
    g1_msm::g1_msm
);
bounded!(
    g2_isthmus,
    488_448,
    "g2 msm input size exceeds maximum",
    g2_msm::g2_msm
);
bounded!(
    g2_jovian,
    278_784,
    "g2 msm input size exceeds maximum",
    g2_msm::g2_msm
);
bounded!(
    bls_pair_isthmus,
    235_008,
    "pairing input size exceeds maximum",
    pairing::pairing
);
bounded!(
    bls_pair_jovian,
    156_672,
    "pairing input size exceeds maximum",
    pairing::pairing
);

/// The bn256 pairing bounded to `max` bytes (a bound of the module's table).
fn bn_pair(max: usize) -> Precompile {
    let f = match max {
        GRANITE_MAX_PAIR_INPUT => pair_granite,
        81_984 => pair_jovian,
        _ => pair_karst,
    };
    Precompile::new(PrecompileId::Bn254Pairing, bn254::pair::ADDRESS, f)
}

/// The BLS12-381 MSMs and pairing bounded as Isthmus (`jovian` false) or Jovian bounds them.
fn bls_bounded(jovian: bool) -> [Precompile; 3] {
    let (g1, g2, pair): (PrecompileFn, PrecompileFn, PrecompileFn) = if jovian {
        (g1_jovian, g2_jovian, bls_pair_jovian)
    } else {
        (g1_isthmus, g2_isthmus, bls_pair_isthmus)
    };
    [
        Precompile::new(PrecompileId::Bls12G1Msm, G1_MSM_ADDRESS, g1),
        Precompile::new(PrecompileId::Bls12G2Msm, G2_MSM_ADDRESS, g2),
        Precompile::new(PrecompileId::Bls12Pairing, PAIRING_ADDRESS, pair),
    ]
}

/// The addresses `env`'s OP rules add to its Ethereum fork's precompiles (`0x100` from Fjord
/// before Osaka, whose own set has it): what tracers that skip or name precompiles must count
/// too.
pub fn added(env: &EvmEnv) -> Vec<alloy_primitives::Address> {
    if set(env).is_some() && env.spec < SpecId::OSAKA {
        vec![*secp256r1::P256VERIFY.address()]
    } else {
        Vec::new()
    }
}

/// The precompiles `env`'s block runs with before any override: its OP set, else its fork's.
pub fn active(env: &EvmEnv) -> &'static Precompiles {
    set(env).unwrap_or_else(|| Precompiles::new(PrecompileSpecId::from_spec_id(env.spec)))
}

/// Gives an EVM built for `env` the OP precompiles of its block ([`set`]). revm keeps them:
/// the provider's spec is the run's, so `set_spec` changes nothing, and the journal warms the
/// provider's addresses. The tracers on this thread rerun a failed precompile call in the same
/// set.
pub fn install(precompiles: &mut EthPrecompiles, env: &EvmEnv) {
    if let Some(m) = env.precompiles {
        m.install_slots();
        crate::trace::precompile_error::use_set(Some(&m.set));
        precompiles.precompiles = &m.set;
        return;
    }
    let set = set(env);
    crate::trace::precompile_error::use_set(set);
    if let Some(p) = set {
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

    /// The bounds of each later fork (module table): the longest input runs, one more
    /// element fails with op-geth's error, which the tracers' rerun of a failed call prints.
    #[test]
    fn later_forks_bound_their_inputs_with_op_geths_errors() {
        use revm::precompile::bls12_381_const::{G1_MSM_ADDRESS, PAIRING_ADDRESS};
        let exec = |spec: SpecId, fork: OpFork, to: alloy_primitives::Address, len: usize| {
            let p = set(&env(spec, Some(fork))).unwrap();
            let out = p
                .get(&to)
                .unwrap()
                .execute(&vec![0u8; len], u64::MAX / 2, 0)
                .unwrap();
            out.halt_reason().map(|h| h.to_string())
        };
        let pair = bn254::pair::ADDRESS;
        let too_long = Some(PAIR_INPUT_TOO_LONG.to_string());
        // bn256 pairing: 586 pairs to Isthmus, 427 from Jovian, 300 from Karst.
        assert_eq!(exec(SpecId::PRAGUE, OpFork::Isthmus, pair, 586 * 192), None);
        assert_eq!(exec(SpecId::PRAGUE, OpFork::Jovian, pair, 427 * 192), None);
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Jovian, pair, 428 * 192),
            too_long
        );
        assert_eq!(exec(SpecId::OSAKA, OpFork::Karst, pair, 300 * 192), None);
        assert_eq!(
            exec(SpecId::OSAKA, OpFork::Karst, pair, 301 * 192),
            too_long
        );
        // BLS12-381 G1 MSM (160 bytes a pair): 3,211 pairs at Isthmus, 1,806 from Jovian.
        let g1_over = Some("g1 msm input size exceeds maximum".to_string());
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Isthmus, G1_MSM_ADDRESS, 3_212 * 160),
            g1_over
        );
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Jovian, G1_MSM_ADDRESS, 1_807 * 160),
            g1_over
        );
        assert_eq!(
            exec(SpecId::OSAKA, OpFork::Karst, G1_MSM_ADDRESS, 1_807 * 160),
            g1_over
        );
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Jovian, G1_MSM_ADDRESS, 160),
            None
        );
        // BLS12-381 pairing (384 bytes a pair): 612 at Isthmus, 408 from Jovian.
        let pair_over = Some("pairing input size exceeds maximum".to_string());
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Isthmus, PAIRING_ADDRESS, 613 * 384),
            pair_over
        );
        assert_eq!(
            exec(SpecId::PRAGUE, OpFork::Jovian, PAIRING_ADDRESS, 409 * 384),
            pair_over
        );
        // The tracers' text for the failed call: the chain's bound first.
        let jovian = env(SpecId::PRAGUE, Some(OpFork::Jovian));
        crate::trace::precompile_error::use_set(set(&jovian));
        let text = crate::trace::precompile_error::precompile_error(
            SpecId::PRAGUE,
            pair,
            &vec![0u8; 428 * 192],
            30_000_000,
        );
        crate::trace::precompile_error::use_set(None);
        assert_eq!(text.as_deref(), Some(PAIR_INPUT_TOO_LONG));
    }

    /// Karst runs Osaka's set: EIP-7951's p256Verify at `0x100` (6,900 gas), nothing added.
    #[test]
    fn karst_has_osakas_p256_verify() {
        let at = address!("0000000000000000000000000000000000000100");
        let karst = env(SpecId::OSAKA, Some(OpFork::Karst));
        let p = set(&karst).unwrap();
        let input = hex::decode(
            "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4da73bd4903f0ce3b6\
             39bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac36dbcd03009df8c59286b162af3bd7fc\
             c0450c9aa81be5d10d312af6c66b1d604aebd3099c618202fcfe16ae7770b0c49ab5eadf74b75420\
             4a3bb6060e44eff37618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e",
        )
        .unwrap();
        let out = p.get(&at).unwrap().execute(&input, 10_000, 0).unwrap();
        assert_eq!(out.gas_used, 6900);
        assert!(added(&karst).is_empty());
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
