//! The self-check: a replayed mined transaction must match its receipt in status, gas used and
//! logs. Any difference means the replay is not what happened on chain, and is reported.

use alloy_primitives::{Address, Bytes, B256};
use serde_json::Value;

use super::TxOutcome;
use crate::geth::hex::{parse_hex, parse_u64};

/// One field where the replay and the receipt disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub field: String,
    pub replay: String,
    pub receipt: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: replay {} but receipt {}",
            self.field, self.replay, self.receipt
        )
    }
}

fn receipt_logs(receipt: &Value) -> Option<Vec<(Address, Vec<B256>, Bytes)>> {
    receipt
        .get("logs")?
        .as_array()?
        .iter()
        .map(|l| {
            let address = l.get("address")?.as_str()?.parse().ok()?;
            let topics = l
                .get("topics")?
                .as_array()?
                .iter()
                .map(|t| t.as_str()?.parse().ok())
                .collect::<Option<Vec<B256>>>()?;
            let data = parse_hex(l.get("data")?.as_str()?).ok()?;
            Some((address, topics, data))
        })
        .collect()
}

/// What the self-check found: where the replay and the receipt disagree, and which of the
/// receipt's fields could not be read (so they were not checked).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelfCheck {
    pub divergences: Vec<Divergence>,
    pub unchecked: Vec<String>,
    /// On the OP stack, the receipt's L1-fee fields that were compared (`None` elsewhere): the
    /// self-check line names them, or says the receipt had none.
    pub op_fields: Option<Vec<&'static str>>,
}

impl SelfCheck {
    /// Every field was read and agrees.
    pub fn matches(&self) -> bool {
        self.divergences.is_empty() && self.unchecked.is_empty()
    }

    /// The divergences in one line (`a; b`), if there are any.
    pub fn divergence_text(&self) -> Option<String> {
        if self.divergences.is_empty() {
            return None;
        }
        let list: Vec<String> = self.divergences.iter().map(|d| d.to_string()).collect();
        Some(list.join("; "))
    }
}

/// A receipt value quoted in a message: at most 80 characters.
fn quote(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
        None => s,
    }
}

/// Compares a replay with a receipt (JSON-RPC shape): status, gas used and logs. A field the
/// receipt lacks or that cannot be read is listed as unchecked, never taken as agreeing.
/// Receipts from before Byzantium carry `root` instead of `status`; that is not a lack.
pub fn check(outcome: &TxOutcome, receipt: &Value) -> SelfCheck {
    let mut c = SelfCheck::default();
    if !receipt.is_object() {
        c.unchecked.push(format!(
            "the receipt is not a JSON object: {}",
            quote(receipt)
        ));
        return c;
    }
    match receipt.get("status") {
        Some(v) => match parse_u64(v) {
            Ok(status) => {
                let replay = u64::from(outcome.success);
                if status != replay {
                    c.divergences.push(Divergence {
                        field: "status".into(),
                        replay: format!("{replay:#x}"),
                        receipt: format!("{status:#x}"),
                    });
                }
            }
            Err(_) => c.unchecked.push(format!("status unreadable: {}", quote(v))),
        },
        None if receipt.get("root").is_some() => {}
        None => c.unchecked.push("status missing".into()),
    }
    match receipt.get("gasUsed") {
        Some(v) => match parse_u64(v) {
            Ok(gas) if gas != outcome.gas_used => c.divergences.push(Divergence {
                field: "gasUsed".into(),
                replay: outcome.gas_used.to_string(),
                receipt: gas.to_string(),
            }),
            Ok(_) => {}
            Err(_) => c
                .unchecked
                .push(format!("gasUsed unreadable: {}", quote(v))),
        },
        None => c.unchecked.push("gasUsed missing".into()),
    }
    let out = &mut c.divergences;
    match receipt_logs(receipt) {
        Some(logs) => {
            if logs.len() != outcome.logs.len() {
                out.push(Divergence {
                    field: "logs".into(),
                    replay: format!("{} logs", outcome.logs.len()),
                    receipt: format!("{} logs", logs.len()),
                });
            } else {
                for (i, ((addr, topics, data), mine)) in logs.iter().zip(&outcome.logs).enumerate()
                {
                    if *addr != mine.address {
                        out.push(Divergence {
                            field: format!("logs[{i}].address"),
                            replay: format!("{:?}", mine.address),
                            receipt: format!("{addr:?}"),
                        });
                    }
                    if topics.as_slice() != mine.data.topics() {
                        out.push(Divergence {
                            field: format!("logs[{i}].topics"),
                            replay: format!("{:?}", mine.data.topics()),
                            receipt: format!("{topics:?}"),
                        });
                    }
                    if *data != mine.data.data {
                        out.push(Divergence {
                            field: format!("logs[{i}].data"),
                            replay: mine.data.data.to_string(),
                            receipt: data.to_string(),
                        });
                    }
                }
            }
        }
        None => match receipt.get("logs") {
            Some(v) => c.unchecked.push(format!("logs unreadable: {}", quote(v))),
            None => c.unchecked.push("logs missing".into()),
        },
    }
    if let Some(fee) = &outcome.op_fee {
        check_op_fields(fee, receipt, &mut c);
    }
    c
}

/// An OP-stack receipt's fee fields (op-geth's `receipt.go` / `deriveOPStackFields`), each
/// compared with what the replay charged and read from the L1Block predeploy, where the
/// receipt has it: a node that predates a field does not print it.
fn check_op_fields(fee: &crate::replay::tx_rules::OpFee, receipt: &Value, c: &mut SelfCheck) {
    use alloy_primitives::U256;
    let l1 = fee.l1.unwrap_or(crate::chain::op::L1Cost {
        fee: U256::ZERO,
        gas_used: U256::ZERO,
    });
    let i = &fee.info;
    let fields: [(&'static str, U256); 8] = [
        ("l1Fee", l1.fee),
        ("l1GasUsed", l1.gas_used),
        ("l1GasPrice", i.l1_base_fee),
        ("l1BaseFeeScalar", U256::from(i.base_fee_scalar)),
        ("l1BlobBaseFee", i.l1_blob_base_fee),
        ("l1BlobBaseFeeScalar", U256::from(i.blob_base_fee_scalar)),
        ("operatorFeeScalar", U256::from(i.operator_fee_scalar)),
        ("operatorFeeConstant", U256::from(i.operator_fee_constant)),
    ];
    let compared = c.op_fields.insert(Vec::new());
    for (field, replay) in fields {
        let Some(v) = receipt.get(field).filter(|v| !v.is_null()) else {
            continue;
        };
        match crate::geth::hex::parse_u256(v) {
            Ok(got) if got != replay => c.divergences.push(Divergence {
                field: field.into(),
                replay: replay.to_string(),
                receipt: got.to_string(),
            }),
            Ok(_) => compared.push(field),
            Err(_) => c
                .unchecked
                .push(format!("{field} unreadable: {}", quote(v))),
        }
    }
}

/// The divergences alone ([`check`] without the unchecked fields).
pub fn compare(outcome: &TxOutcome, receipt: &Value) -> Vec<Divergence> {
    check(outcome, receipt).divergences
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::op::{l1_cost, L1BlockInfo, OpFork, OpRules, RollupCostData};
    use alloy_primitives::{hex, U256};

    /// op-geth's `TestDeriveOptimismEcotoneTxReceipts` (core/types/receipt_opstack_test.go):
    /// `emptyTx` under L1 base fee 1000 gwei, blob base fee 0.01 gwei, scalars 2 and 3 gets
    /// l1GasUsed 480 and l1Fee 960,900.
    fn ecotone_outcome() -> TxOutcome {
        let rules = OpRules::up_to(OpFork::Ecotone);
        let info = L1BlockInfo {
            l1_base_fee: U256::from(1_000_000_000u64),
            l1_blob_base_fee: U256::from(10_000_000u64),
            base_fee_scalar: 2,
            blob_base_fee_scalar: 3,
            ..Default::default()
        };
        let empty_tx = hex::decode("dd80808094095e7baea6a6c7c4c2dfeb977efac326af552d878080808080");
        let l1 = l1_cost(&info, rules, &RollupCostData::of_tx(&empty_tx.unwrap()));
        TxOutcome {
            success: true,
            gas_used: 21_000,
            logs: Vec::new(),
            output: Bytes::new(),
            halt: None,
            op_fee: Some(crate::replay::tx_rules::OpFee {
                rules,
                info,
                l1,
                operator_upfront: U256::ZERO,
                cost: Default::default(),
            }),
            deposit: None,
        }
    }

    fn receipt(l1_fee: &str) -> Value {
        serde_json::json!({
            "status": "0x1", "gasUsed": "0x5208", "logs": [],
            "l1GasPrice": "0x3b9aca00", "l1BlobBaseFee": "0x989680", "l1GasUsed": "0x1e0",
            "l1Fee": l1_fee, "l1BaseFeeScalar": "0x2", "l1BlobBaseFeeScalar": "0x3"
        })
    }

    #[test]
    fn op_receipt_fields_are_checked() {
        let outcome = ecotone_outcome();
        // 960,900 = 0xea984
        let c = check(&outcome, &receipt("0xea984"));
        assert!(c.matches());
        // What the self-check line names: the fields the receipt had, in op-geth's order.
        assert_eq!(
            c.op_fields,
            Some(vec![
                "l1Fee",
                "l1GasUsed",
                "l1GasPrice",
                "l1BaseFeeScalar",
                "l1BlobBaseFee",
                "l1BlobBaseFeeScalar"
            ])
        );
        let plain = serde_json::json!({"status": "0x1", "gasUsed": "0x5208", "logs": []});
        assert_eq!(check(&outcome, &plain).op_fields, Some(vec![]));
        let c = check(&outcome, &receipt("0xea985"));
        assert_eq!(
            c.divergences,
            vec![Divergence {
                field: "l1Fee".into(),
                replay: "960900".into(),
                receipt: "960901".into(),
            }]
        );
    }
}
