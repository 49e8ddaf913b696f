//! OP-stack receipt derivations of op-geth's `core/types/receipt_opstack_test.go`: the fee
//! fields of its receipts, from real L1 attributes calldata (split from `tests.rs`).

use super::tests::*;

// receipt_opstack_test.go: its configs copy `AllCliqueProtocolChanges` with Bedrock at block 0
// and never set Regolith (nor Canyon).

fn bedrock_genesis_test_config() -> OpSchedule {
    OpSchedule::default()
}

fn ecotone_test_config() -> OpSchedule {
    OpSchedule {
        ecotone_time: Some(0),
        ..bedrock_genesis_test_config()
    }
}

fn isthmus_test_config() -> OpSchedule {
    OpSchedule {
        fjord_time: Some(0),
        granite_time: Some(0),
        holocene_time: Some(0),
        isthmus_time: Some(0),
        ..ecotone_test_config()
    }
}

fn jovian_test_config() -> OpSchedule {
    OpSchedule {
        jovian_time: Some(0),
        ..isthmus_test_config()
    }
}

/// What `deriveOPStackFields` puts in the receipt of `emptyTx` (the block's second
/// transaction) for an L1 attributes payload: `(l1GasPrice, l1BlobBaseFee, l1GasUsed, l1Fee)`.
fn derive_receipt(
    config: &OpSchedule,
    payload: &[u8],
) -> Result<(L1BlockInfo, L1Cost), L1InfoError> {
    let rules = config.rules_at(0);
    let info = L1BlockInfo::from_calldata(rules, payload)?;
    let cost = l1_cost(&info, rules, &empty_tx_cost_data()).expect("emptyTx is charged");
    Ok((info, cost))
}

/// op-geth TestDeriveOptimismBedrockTxReceipts.
#[test]
fn derive_optimism_bedrock_tx_receipts() {
    // Bedrock style l1 attributes with L1Scalar=7_000_000 (becomes 7 after division),
    // L1Overhead=50, L1BaseFee=1000*1e6
    let payload = hex::decode("015d8eb900000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2000000000000000000000000000000000000000000000000000000003b9aca0000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2000000000000000000000000000000000000000000000000000000000000003200000000000000000000000000000000000000000000000000000000006acfc0015d8eb900000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2000000000000000000000000000000000000000000000000000000003b9aca0000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2000000000000000000000000000000000000000000000000000000000000003200000000000000000000000000000000000000000000000000000000006acfc0").unwrap();
    let (info, cost) = derive_receipt(&bedrock_genesis_test_config(), &payload).unwrap();
    assert_eq!(info.l1_base_fee, u(BASE_FEE)); // l1GasPrice
    assert_eq!(info.l1_fee_scalar, u(SCALAR)); // feeScalar 7, scaled by 1e6
    assert_eq!((cost.gas_used, cost.fee), (u(BEDROCK_GAS), u(BEDROCK_FEE)));

    // "Should get same result with the Ecotone config because it will assume this is "first
    // ecotone block" if it sees the bedrock style L1 attributes."
    let (info, cost) = derive_receipt(&ecotone_test_config(), &payload).unwrap();
    assert_eq!(info.l1_base_fee, u(BASE_FEE));
    assert_eq!((cost.gas_used, cost.fee), (u(BEDROCK_GAS), u(BEDROCK_FEE)));
}

/// op-geth TestDeriveOptimismEcotoneTxReceipts.
#[test]
fn derive_optimism_ecotone_tx_receipts() {
    // Ecotone style l1 attributes with baseFeeScalar=2, blobBaseFeeScalar=3,
    // baseFee=1000*1e6, blobBaseFee=10*1e6
    let payload = hex::decode("440a5e20000000020000000300000000000004d200000000000004d200000000000004d2000000000000000000000000000000000000000000000000000000003b9aca00000000000000000000000000000000000000000000000000000000000098968000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2").unwrap();
    // Should error out if we try to process this with a pre-Ecotone config
    assert!(derive_receipt(&bedrock_genesis_test_config(), &payload).is_err());

    let (info, cost) = derive_receipt(&ecotone_test_config(), &payload).unwrap();
    assert_eq!(info.l1_base_fee, u(BASE_FEE));
    assert_eq!(info.l1_blob_base_fee, u(BLOB_BASE_FEE));
    assert_eq!(info.base_fee_scalar, BASE_FEE_SCALAR);
    assert_eq!(info.blob_base_fee_scalar, BLOB_BASE_FEE_SCALAR);
    assert_eq!((cost.gas_used, cost.fee), (u(ECOTONE_GAS), u(ECOTONE_FEE)));
}

pub(super) const ISTHMUS_PAYLOAD: &str = "098999be000000020000000300000000000004d200000000000004d200000000000004d2000000000000000000000000000000000000000000000000000000003b9aca00000000000000000000000000000000000000000000000000000000000098968000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d255c6fb7c116fb15b44847d04";

/// op-geth TestDeriveOptimismIsthmusTxReceipts.
#[test]
fn derive_optimism_isthmus_tx_receipts() {
    // Isthmus style l1 attributes with baseFeeScalar=2, blobBaseFeeScalar=3, baseFee=1000*1e6,
    // blobBaseFee=10*1e6, operatorFeeScalar=1439103868, operatorFeeConstant=1256417826609331460
    let payload = hex::decode(ISTHMUS_PAYLOAD).unwrap();
    // Should error out if we try to process this with a pre-Isthmus config
    assert!(derive_receipt(&bedrock_genesis_test_config(), &payload).is_err());

    let (info, cost) = derive_receipt(&isthmus_test_config(), &payload).unwrap();
    assert_eq!(info.l1_base_fee, u(BASE_FEE));
    assert_eq!(info.l1_blob_base_fee, u(BLOB_BASE_FEE));
    assert_eq!(info.base_fee_scalar, BASE_FEE_SCALAR);
    assert_eq!(info.blob_base_fee_scalar, BLOB_BASE_FEE_SCALAR);
    assert_eq!(info.operator_fee_scalar, OPERATOR_FEE_SCALAR);
    assert_eq!(info.operator_fee_constant, OPERATOR_FEE_CONSTANT);
    assert_eq!(
        (cost.gas_used, cost.fee),
        (u(MINIMUM_FJORD_GAS), u(FJORD_FEE))
    );
}

/// op-geth TestDeriveOptimismIsthmusTxReceiptsNoOperatorFee.
#[test]
fn derive_optimism_isthmus_tx_receipts_no_operator_fee() {
    // Isthmus style l1 attributes with baseFeeScalar=2, blobBaseFeeScalar=3, baseFee=1000*1e6,
    // blobBaseFee=10*1e6, operatorFeeScalar=0, operatorFeeConstant=0
    let payload = hex::decode("098999be000000020000000300000000000004d200000000000004d200000000000004d2000000000000000000000000000000000000000000000000000000003b9aca00000000000000000000000000000000000000000000000000000000000098968000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d2000000000000000000000000").unwrap();
    // Should error out if we try to process this with a pre-Isthmus config
    assert!(derive_receipt(&bedrock_genesis_test_config(), &payload).is_err());

    let (info, cost) = derive_receipt(&isthmus_test_config(), &payload).unwrap();
    // Both zero: the receipt leaves operatorFeeScalar and operatorFeeConstant out.
    assert_eq!(
        (info.operator_fee_scalar, info.operator_fee_constant),
        (0, 0)
    );
    assert_eq!(
        (cost.gas_used, cost.fee),
        (u(MINIMUM_FJORD_GAS), u(FJORD_FEE))
    );
}

/// op-geth TestDeriveOptimismJovianTxReceipts.
#[test]
fn derive_optimism_jovian_tx_receipts() {
    // Jovian style l1 attributes with baseFeeScalar=2, blobBaseFeeScalar=3, baseFee=1000*1e6,
    // blobBaseFee=10*1e6, operatorFeeScalar=1439103868,
    // operatorFeeConstant=1256417826609331460, daFootprintGasScalar=400
    let payload = hex::decode("3db6be2b000000020000000300000000000004d200000000000004d200000000000004d2000000000000000000000000000000000000000000000000000000003b9aca00000000000000000000000000000000000000000000000000000000000098968000000000000000000000000000000000000000000000000000000000000004d200000000000000000000000000000000000000000000000000000000000004d255c6fb7c116fb15b44847d040190").unwrap();
    // Should error out if we try to process this with a pre-Jovian config
    assert!(derive_receipt(&bedrock_genesis_test_config(), &payload).is_err());

    let (info, cost) = derive_receipt(&jovian_test_config(), &payload).unwrap();
    assert_eq!(info.operator_fee_scalar, OPERATOR_FEE_SCALAR);
    assert_eq!(info.operator_fee_constant, OPERATOR_FEE_CONSTANT);
    assert_eq!(info.da_footprint_gas_scalar, 400);
    assert_eq!(
        (cost.gas_used, cost.fee),
        (u(MINIMUM_FJORD_GAS), u(FJORD_FEE))
    );
    // receipts[1].BlobGasUsed = daFootprintGasScalar * EstimatedDASize: 400 × 100
    assert_eq!(da_footprint_gas(&info, &empty_tx()), 400 * 100);
}
