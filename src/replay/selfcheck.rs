//! The self-check: a replayed mined transaction must match its receipt in status, gas used and
//! logs. Any difference means the replay is not what happened on chain, and is reported.

use alloy_primitives::{Address, Bytes, B256};
use serde_json::Value;

use super::TxOutcome;
use crate::source::fixture::{parse_hex, parse_u64};

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

/// Compares a replay with a receipt (JSON-RPC shape). An empty result means they agree.
pub fn compare(outcome: &TxOutcome, receipt: &Value) -> Vec<Divergence> {
    let mut out = Vec::new();
    if let Some(status) = receipt.get("status").and_then(|v| parse_u64(v).ok()) {
        let replay = u64::from(outcome.success);
        if status != replay {
            out.push(Divergence {
                field: "status".into(),
                replay: format!("{replay:#x}"),
                receipt: format!("{status:#x}"),
            });
        }
    }
    if let Some(gas) = receipt.get("gasUsed").and_then(|v| parse_u64(v).ok()) {
        if gas != outcome.gas_used {
            out.push(Divergence {
                field: "gasUsed".into(),
                replay: outcome.gas_used.to_string(),
                receipt: gas.to_string(),
            });
        }
    }
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
        None if receipt.get("logs").is_some() => out.push(Divergence {
            field: "logs".into(),
            replay: format!("{} logs", outcome.logs.len()),
            receipt: "unreadable".into(),
        }),
        None => {}
    }
    out
}
