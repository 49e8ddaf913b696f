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
}

impl SelfCheck {
    /// Every field was read and agrees.
    pub fn matches(&self) -> bool {
        self.divergences.is_empty() && self.unchecked.is_empty()
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
    c
}

/// The divergences alone ([`check`] without the unchecked fields).
pub fn compare(outcome: &TxOutcome, receipt: &Value) -> Vec<Divergence> {
    check(outcome, receipt).divergences
}
