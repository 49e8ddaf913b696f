//! Not op-geth's vectors: the rules of `l1_fee.rs` checked from other sides (split from
//! `tests.rs`, whose helpers they use).

use super::receipt_tests::ISTHMUS_PAYLOAD;
use super::tests::*;

// Not op-geth's vectors: the rules above checked from other sides.

/// The slots read are those op-geth reads for the fork, and only those.
#[test]
fn storage_reads_follow_op_geth() {
    use std::cell::RefCell;
    let reads_for = |rules: OpRules, state: &TestState| {
        let seen = RefCell::new(Vec::new());
        L1BlockInfo::from_storage(rules, |s| {
            seen.borrow_mut().push(s.to::<u64>());
            state.get(s)
        });
        let mut v = seen.into_inner();
        v.sort();
        v
    };
    let state = TestState::new();
    assert_eq!(reads_for(OpFork::Regolith.into(), &state), [1, 5, 6]);
    assert_eq!(reads_for(OpFork::Fjord.into(), &state), [1, 3, 7]);
    assert_eq!(reads_for(OpFork::Jovian.into(), &state), [1, 3, 7, 8]);
    let first_ecotone = TestState {
        base_fee_scalar: 0,
        blob_base_fee_scalar: 0,
        blob_base_fee: 0,
        ..TestState::new()
    };
    assert_eq!(
        reads_for(OpFork::Ecotone.into(), &first_ecotone),
        [1, 3, 5, 6, 7]
    );
}

/// Jovian's DA footprint gas scalar sits at bytes [18, 20) of slot 8, beside the operator fee
/// parameters (op-revm `try_fetch_jovian`).
#[test]
fn jovian_storage_reads_the_da_footprint_scalar() {
    let mut slot8 = [0u8; 32];
    slot8[18..20].copy_from_slice(&400u16.to_be_bytes());
    slot8[20..24].copy_from_slice(&7u32.to_be_bytes());
    slot8[24..32].copy_from_slice(&9u64.to_be_bytes());
    let read = |s: U256| {
        if s == OPERATOR_FEE_PARAMS_SLOT {
            U256::from_be_bytes(slot8)
        } else {
            TestState::new().get(s)
        }
    };
    let jovian = L1BlockInfo::from_storage(OpFork::Jovian, read);
    assert_eq!(
        (
            jovian.da_footprint_gas_scalar,
            jovian.operator_fee_scalar,
            jovian.operator_fee_constant
        ),
        (400, 7, 9)
    );
    let isthmus = L1BlockInfo::from_storage(OpFork::Isthmus, read);
    assert_eq!(isthmus.da_footprint_gas_scalar, 0);
}

/// The calldata fixes the cost function by its selector: Ecotone's calldata with zero scalars
/// is priced by Ecotone's function (the storage path would take it for the first Ecotone block).
#[test]
fn calldata_selector_fixes_the_cost_function() {
    let data = packed_l1_attributes(ECOTONE_L1_ATTRIBUTES_SELECTOR, BASE_FEE, 0, 0, 0, None);
    let info = L1BlockInfo::from_calldata(OpFork::Ecotone, &data).unwrap();
    assert_eq!(
        info.cost_function_for(OpFork::Ecotone),
        L1CostFunction::Ecotone
    );
    let (fee, gas) = cost(&info, OpFork::Ecotone, &empty_tx_cost_data());
    assert_eq!((fee, gas), (U256::ZERO, u(ECOTONE_GAS)));
    let from_storage = L1BlockInfo {
        cost_function: None,
        ..info
    };
    assert_eq!(
        from_storage.cost_function_for(OpFork::Ecotone),
        L1CostFunction::Bedrock
    );
}

/// Jovian: the activation block's 176-byte Isthmus calldata has no DA scalar; anything else
/// must carry Jovian's selector and 178 bytes (`CalcDAFootprint`, `ExtractDAFootprintGasScalar`).
#[test]
fn jovian_calldata_shapes() {
    let isthmus = hex::decode(ISTHMUS_PAYLOAD).unwrap();
    let info = L1BlockInfo::from_calldata(OpFork::Jovian, &isthmus).unwrap();
    assert_eq!(info.da_footprint_gas_scalar, 0);
    let mut wrong_selector = isthmus.clone();
    wrong_selector.extend_from_slice(&[0x01, 0x90]);
    assert_eq!(
        L1BlockInfo::from_calldata(OpFork::Jovian, &wrong_selector),
        Err(L1InfoError::NotJovian)
    );
    // Before Jovian the extra bytes are ignored.
    let info = L1BlockInfo::from_calldata(OpFork::Isthmus, &wrong_selector).unwrap();
    assert_eq!(info.operator_fee_scalar, OPERATOR_FEE_SCALAR);
}

/// Deposits pay neither fee; the operator fee of unused gas comes back from Isthmus.
#[test]
fn deposits_are_free_and_unused_operator_fee_is_refunded() {
    let info = L1BlockInfo {
        operator_fee_scalar: OPERATOR_FEE_SCALAR,
        operator_fee_constant: OPERATOR_FEE_CONSTANT,
        ..params(L1CostFunction::Fjord)
    };
    let deposit = [0x7e, 0xf8, 0x00];
    assert_eq!(l1_data_fee(&info, OpFork::Jovian, &deposit), U256::ZERO);
    assert_eq!(l1_gas_used(&info, OpFork::Jovian, &deposit), U256::ZERO);
    assert_eq!(
        total_rollup_cost(&info, OpFork::Jovian, &deposit, 100_000),
        U256::ZERO
    );
    assert_eq!(l1_data_fee(&info, OpFork::Fjord, &empty_tx()), u(FJORD_FEE));
    assert_eq!(
        operator_fee_refund(&info, OpFork::Holocene, 100_000, 1618),
        U256::ZERO
    );
    // Isthmus: (100000 - 1618) × 1439103868 / 1e6, each side rounded down on its own.
    let isthmus = operator_fee_refund(&info, OpFork::Isthmus, 100_000, 1618);
    assert_eq!(
        isthmus,
        u(100_000 * 1_439_103_868 / 1_000_000 - 1618 * 1_439_103_868 / 1_000_000)
    );
    let jovian = operator_fee_refund(&info, OpFork::Jovian, 100_000, 1618);
    assert_eq!(jovian, u((100_000 - 1618) * 1_439_103_868 * 100));
}

/// Parameters whose products pass 256 bits saturate instead of wrapping.
#[test]
fn overflowing_fees_saturate() {
    let info = L1BlockInfo {
        l1_base_fee: U256::MAX,
        l1_fee_scalar: U256::MAX,
        cost_function: Some(L1CostFunction::Bedrock),
        ..L1BlockInfo::default()
    };
    assert_eq!(l1_data_fee(&info, OpFork::Regolith, &empty_tx()), U256::MAX);
    assert_eq!(l1_gas_used(&info, OpFork::Regolith, &empty_tx()), u(480));
}

/// `l1_cost` computes in 256 bits where every step fits and in 1024 bits otherwise: wherever
/// the narrow arithmetic answers, it answers what the wide one does, for every cost function,
/// with and without Regolith, on parameters from 0 to 256 bits wide.
#[test]
fn narrow_l1_cost_is_the_wide_one() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    // A value of `bits` random bits (0: zero).
    let value = || {
        (0usize..=256, any::<[u64; 4]>()).prop_map(|(bits, limbs)| {
            let v = U256::from_limbs(limbs);
            if bits == 0 {
                U256::ZERO
            } else {
                v >> (256 - bits)
            }
        })
    };
    let info = (
        (value(), value(), value(), value()),
        (any::<u32>(), any::<u32>()),
    )
        .prop_map(|((base, overhead, scalar, blob), (s1, s2))| L1BlockInfo {
            l1_base_fee: base,
            l1_fee_overhead: overhead,
            l1_fee_scalar: scalar,
            l1_blob_base_fee: blob,
            base_fee_scalar: s1,
            blob_base_fee_scalar: s2,
            ..L1BlockInfo::default()
        });
    let data = (0u64..1 << 20, 0u64..1 << 20, any::<u64>()).prop_map(|(z, o, f)| RollupCostData {
        zeroes: z,
        ones: o,
        fastlz_size: f >> (f % 64),
    });
    let functions = [
        L1CostFunction::Bedrock,
        L1CostFunction::Ecotone,
        L1CostFunction::Fjord,
    ];
    let narrow_answered = std::cell::Cell::new(0);
    TestRunner::new(Config::with_cases(2_000))
        .run(&(info, data, any::<bool>()), |(info, data, regolith)| {
            let rules = if regolith {
                OpRules::from(OpFork::Fjord)
            } else {
                OpRules::from(OpFork::Bedrock)
            };
            for f in functions {
                let wide = l1_cost_wide(&info, rules, f, &data);
                if let Some(narrow) = l1_cost_narrow(&info, rules, f, &data) {
                    narrow_answered.set(narrow_answered.get() + 1);
                    prop_assert_eq!(narrow, wide, "{:?}", f);
                }
            }
            Ok(())
        })
        .unwrap();
    assert!(narrow_answered.get() > 1_000, "{}", narrow_answered.get());
}

/// The cost data counts every zero byte, inputs longer than a count's 255-byte chunk too.
#[test]
fn cost_data_counts_the_zero_bytes() {
    for len in [0usize, 1, 254, 255, 256, 511, 1_000, 70_000] {
        let data: Vec<u8> = (0..len)
            .map(|i| if i % 3 == 0 { 0 } else { i as u8 | 1 })
            .collect();
        let d = RollupCostData::new(&data);
        let zeroes = data.iter().filter(|b| **b == 0).count() as u64;
        assert_eq!((d.zeroes, d.ones), (zeroes, len as u64 - zeroes), "{len}");
    }
    let zeros = RollupCostData::new(&[0; 600]);
    assert_eq!((zeros.zeroes, zeros.ones), (600, 0));
}

/// The operator fee in 128 bits is the 256-bit formula's, up to the largest gas and scalar.
#[test]
fn operator_fee_of_extreme_values() {
    for (gas, scalar, constant) in [
        (u64::MAX, u32::MAX, u64::MAX),
        (u64::MAX, 1, 0),
        (1 << 40, 1_439_103_868, 7),
        (100_000, 1_439_103_868, 0),
        (0, u32::MAX, 3),
    ] {
        let info = L1BlockInfo {
            operator_fee_scalar: scalar,
            operator_fee_constant: constant,
            ..L1BlockInfo::default()
        };
        let product = U256::from(gas) * U256::from(scalar);
        let isthmus = product / U256::from(1_000_000u64) + U256::from(constant);
        let jovian = product * U256::from(100u64) + U256::from(constant);
        assert_eq!(operator_fee(&info, OpFork::Isthmus, gas), isthmus, "{gas}");
        assert_eq!(operator_fee(&info, OpFork::Jovian, gas), jovian, "{gas}");
    }
}
