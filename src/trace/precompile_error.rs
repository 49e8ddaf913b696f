//! geth's error text for a failed precompile call.
//!
//! revm ends a failed precompile frame with `PrecompileError` and keeps the reason only for a
//! top-level call; geth's tracers print each precompile's own error (`invalid input length`,
//! `bad elliptic curve pairing size`, …). Precompiles are pure functions of their input, so the
//! reason is found again by running the precompile once more on the same input — only for
//! frames that failed — and turned into geth's words. For alt_bn128 the text depends on which
//! check of geth's point decoder fails first, so it is derived from the input in geth's order.

use alloy_primitives::{address, Address, U256};
use ark_bn254::{Fq, Fq2, G1Affine, G2Affine};
use ark_ff::PrimeField;
use revm::precompile::{PrecompileHalt, PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

/// geth's error for a finished call frame that revm ended with `PrecompileError` (from a
/// tracer's `call_end`); `None` for any other frame.
pub fn failed_precompile_frame<DB: revm::Database>(
    ctx: &mut super::state::Ctx<DB>,
    inputs: &revm::interpreter::CallInputs,
    result: revm::interpreter::InstructionResult,
) -> Option<String> {
    if result != revm::interpreter::InstructionResult::PrecompileError {
        return None;
    }
    let input = inputs.input.bytes(ctx);
    precompile_error(
        ctx.cfg.spec,
        inputs.bytecode_address,
        &input,
        inputs.gas_limit,
    )
}

thread_local! {
    /// The precompile set this thread's EVM runs when a chain's rules change its fork's (an OP
    /// block's input bounds), set by the replay for every EVM it builds.
    static CHAIN_SET: std::cell::Cell<Option<&'static Precompiles>> =
        const { std::cell::Cell::new(None) };
}

/// Says which precompile set the EVM about to run on this thread uses (`None`: its fork's).
pub fn use_set(set: Option<&'static Precompiles>) {
    CHAIN_SET.with(|c| c.set(set));
}

/// geth's error for a call to precompile `to` with `input` that revm failed with
/// `PrecompileError`; `None` when `to` is not a precompile or the rerun does not fail. A
/// chain's own bound (an OP fork's longest input) is checked first, as its node checks it
/// before decoding anything.
pub fn precompile_error(spec: SpecId, to: Address, input: &[u8], gas_limit: u64) -> Option<String> {
    if let Some(p) = CHAIN_SET.with(|c| c.get()).and_then(|set| set.get(&to)) {
        if let Ok(out) = p.execute(input, gas_limit, 0) {
            if let Some(PrecompileHalt::Other(text)) = out.halt_reason() {
                return Some(text.to_string());
            }
        }
    }
    if let Some(text) = bn254_error(to, input) {
        return Some(text);
    }
    let p = Precompiles::new(PrecompileSpecId::from_spec_id(spec)).get(&to)?;
    let out = match p.execute(input, gas_limit, 0) {
        Ok(out) => out,
        Err(e) => return Some(e.to_string()),
    };
    out.halt_reason().map(geth_text)
}

fn geth_text(h: &PrecompileHalt) -> String {
    use PrecompileHalt as H;
    match h {
        H::OutOfGas => "out of gas",
        H::Blake2WrongLength => "invalid input length",
        H::Blake2WrongFinalIndicatorFlag => "invalid final flag",
        // Lengths that do not fit a machine word: geth prices them out of reach.
        H::ModexpExpOverflow | H::ModexpBaseOverflow | H::ModexpModOverflow => "out of gas",
        H::ModexpEip7823LimitSize => {
            "one or more of base/exponent/modulus length exceeded 1024 bytes"
        }
        H::Bn254PairLength => "bad elliptic curve pairing size",
        H::Bn254FieldPointNotAMember => FP_ENCODING,
        H::Bn254AffineGFailedToCreate => "point is not on curve",
        H::BlobInvalidInputLength => "invalid input length",
        H::BlobMismatchedVersion => "mismatched versioned hash",
        H::BlobVerifyKzgProofFailed => "error verifying kzg proof: can't verify opening proof",
        H::KzgInvalidG1Point
        | H::KzgG1PointNotOnCurve
        | H::KzgG1PointNotInSubgroup
        | H::KzgInvalidInputLength => "error verifying kzg proof",
        H::NonCanonicalFp => FP_ENCODING,
        H::Bls12381FpPaddingInvalid => "invalid field element top bytes",
        H::Bls12381G1NotOnCurve | H::Bls12381G2NotOnCurve => "invalid point: not on curve",
        H::Bls12381G1NotInSubgroup => "g1 point is not on correct subgroup",
        H::Bls12381G2NotInSubgroup => "g2 point is not on correct subgroup",
        H::Bls12381ScalarInputLength
        | H::Bls12381G1AddInputLength
        | H::Bls12381G1MsmInputLength
        | H::Bls12381G2AddInputLength
        | H::Bls12381G2MsmInputLength
        | H::Bls12381PairingInputLength
        | H::Bls12381MapFpToG1InputLength
        | H::Bls12381MapFp2ToG2InputLength
        | H::Bls12381FpPaddingLength
        | H::Bls12381G1PaddingLength
        | H::Bls12381G2PaddingLength => "invalid input length",
        H::Secp256k1RecoverFailed => "invalid signature",
        H::Other(s) => return s.to_string(),
    }
    .to_string()
}

/// gnark-crypto's error for a field element that is not below the modulus.
const FP_ENCODING: &str = "invalid fp.Element encoding";

const BN_ADD: Address = address!("0000000000000000000000000000000000000006");
const BN_MUL: Address = address!("0000000000000000000000000000000000000007");
const BN_PAIRING: Address = address!("0000000000000000000000000000000000000008");

/// The alt_bn128 base field modulus.
const P: U256 = U256::from_limbs([
    0x3c208c16d87cfd47,
    0x97816a916871ca8d,
    0xb85045b68181585d,
    0x30644e72e131a029,
]);

/// geth's `getData`: `len` bytes at `start`, zero-padded.
fn data(input: &[u8], start: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    if start < input.len() {
        let n = (input.len() - start).min(len);
        out[..n].copy_from_slice(&input[start..start + n]);
    }
    out
}

/// geth's error for an alt_bn128 call, checking points in the order its decoder does.
fn bn254_error(to: Address, input: &[u8]) -> Option<String> {
    let e = if to == BN_ADD {
        g1_error(&data(input, 0, 64)).or_else(|| g1_error(&data(input, 64, 64)))
    } else if to == BN_MUL {
        g1_error(&data(input, 0, 64))
    } else if to == BN_PAIRING {
        if !input.len().is_multiple_of(192) {
            return Some("bad elliptic curve pairing size".into());
        }
        input
            .chunks(192)
            .find_map(|pair| g1_error(&pair[..64]).or_else(|| g2_error(&pair[64..])))
    } else {
        return None;
    };
    e.map(str::to_string)
}

fn element(b: &[u8]) -> Result<U256, &'static str> {
    let v = U256::from_be_slice(b);
    if v >= P {
        Err(FP_ENCODING)
    } else {
        Ok(v)
    }
}

fn fq(v: U256) -> Fq {
    Fq::from_be_bytes_mod_order(&v.to_be_bytes::<32>())
}

/// G1 (cofactor 1: on the curve means in the group).
fn g1_error(b: &[u8]) -> Option<&'static str> {
    if b.iter().all(|x| *x == 0) {
        return None;
    }
    let x = match element(&b[..32]) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    let y = match element(&b[32..64]) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    let p = G1Affine::new_unchecked(fq(x), fq(y));
    (!p.is_on_curve()).then_some("point is not on curve")
}

/// G2: 128 bytes `x.1, x.0, y.1, y.0`; on the twist, then in the r-torsion subgroup.
fn g2_error(b: &[u8]) -> Option<&'static str> {
    if b.iter().all(|x| *x == 0) {
        return None;
    }
    let mut c = [U256::ZERO; 4];
    for (i, v) in c.iter_mut().enumerate() {
        match element(&b[i * 32..(i + 1) * 32]) {
            Ok(e) => *v = e,
            Err(e) => return Some(e),
        }
    }
    let x = Fq2::new(fq(c[1]), fq(c[0]));
    let y = Fq2::new(fq(c[3]), fq(c[2]));
    let p = G2Affine::new_unchecked(x, y);
    if !p.is_on_curve() {
        return Some("point is not on curve");
    }
    (!p.is_in_correct_subgroup_assuming_on_curve()).then_some("point is not in correct subgroup")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(v: U256) -> [u8; 32] {
        v.to_be_bytes()
    }

    #[test]
    fn bn254_generator_is_accepted_and_a_bad_point_named() {
        let mut g = [0u8; 64];
        g[31] = 1;
        g[63] = 2;
        assert_eq!(g1_error(&g), None);
        g[63] = 3;
        assert_eq!(g1_error(&g), Some("point is not on curve"));
        let mut big = [0u8; 64];
        big[..32].copy_from_slice(&word(P));
        assert_eq!(g1_error(&big), Some(FP_ENCODING));
    }

    #[test]
    fn bn254_g2_generator_is_on_the_twist() {
        // The G2 generator of EIP-197, in geth's byte order.
        let hex = "198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2\
                   1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed\
                   090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b\
                   12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa";
        let b = alloy_primitives::hex::decode(hex).unwrap();
        assert_eq!(g2_error(&b), None);
        let mut bad = b.clone();
        bad[127] ^= 1;
        assert_eq!(g2_error(&bad), Some("point is not on curve"));
    }

    #[test]
    fn pairing_input_must_be_whole_pairs() {
        assert_eq!(
            bn254_error(BN_PAIRING, &[0u8; 100]).as_deref(),
            Some("bad elliptic curve pairing size")
        );
    }

    #[test]
    fn blake2f_reasons_are_gethes() {
        let e = precompile_error(
            SpecId::CANCUN,
            address!("0000000000000000000000000000000000000009"),
            &[0u8; 10],
            100_000,
        );
        assert_eq!(e.as_deref(), Some("invalid input length"));
        let mut input = vec![0u8; 213];
        input[212] = 2;
        let e = precompile_error(
            SpecId::CANCUN,
            address!("0000000000000000000000000000000000000009"),
            &input,
            100_000,
        );
        assert_eq!(e.as_deref(), Some("invalid final flag"));
    }
}
