//! Splicing the node's own frames into a local replay, for a chain's stateful precompiles.
//!
//! Chains 1329/1328 have precompiles (bank, staking, wasmd, …) that read and write Cosmos state;
//! revm cannot run them (nor, yet, the pure json and p256 ones). When the replay calls one, [`Splicer`] answers the call with the frame
//! the node's `callTracer` recorded for it — output, gas used, error — so the rest of the
//! transaction executes as on the chain, and every tracer sees the frame as usual. Frames are
//! matched in call order. Where the node gave no trace (no debug API), the call is left to revm
//! and listed as opaque; the self-check then says whether the receipt agrees.
//!
//! Not yet done: the state such a frame changed (bank balances, storage written back by CosmWasm)
//! is not injected, so a transaction that reads it after the call can diverge (the self-check
//! reports it).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use alloy_primitives::{Address, Bytes};
use revm::interpreter::{CallInputs, CallOutcome, Gas, InstructionResult, InterpreterResult};
use revm::Inspector;
use serde_json::Value;

use crate::chain::rules::ChainRules;

/// A call into a chain precompile as the node's callTracer recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFrame {
    pub to: Address,
    pub output: Bytes,
    pub gas_used: u64,
    pub error: Option<String>,
}

/// The frames into `rules`' precompiles in a callTracer result, depth first (call order). The
/// pure ones (json, p256) are spliced too until they run locally.
pub fn frames_from_call_trace(trace: &Value, rules: &ChainRules) -> Vec<NodeFrame> {
    fn walk(f: &Value, rules: &ChainRules, out: &mut Vec<NodeFrame>) {
        let to = f
            .get("to")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<Address>().ok());
        if let Some(to) = to.filter(|a| rules.precompile(*a).is_some()) {
            let hex = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("0x");
            out.push(NodeFrame {
                to,
                output: hex("output").parse().unwrap_or_default(),
                gas_used: u64::from_str_radix(hex("gasUsed").trim_start_matches("0x"), 16)
                    .unwrap_or(0),
                error: f.get("error").and_then(Value::as_str).map(str::to_string),
            });
        }
        for c in f
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(c, rules, out);
        }
    }
    let mut out = Vec::new();
    // The top frame is the transaction itself, never a precompile call made by the replay.
    for c in trace
        .get("calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        walk(c, rules, &mut out);
    }
    out
}

/// What the node said about one transaction's precompile frames, and what the replay did.
#[derive(Debug, Default)]
pub struct Splice {
    /// The node's frames, once fetched; `None` before, or when the node could not give them.
    pub frames: Option<Vec<NodeFrame>>,
    /// The node was asked and could not answer (no debug API).
    pub unavailable: bool,
    /// Set by a pass: calls answered from the node, and calls left to revm (opaque).
    pub log: Mutex<SpliceLog>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpliceLog {
    pub spliced: Vec<Address>,
    pub opaque: Vec<Address>,
}

/// The inspector that answers calls into stateful chain precompiles; does nothing on chains
/// without them.
#[derive(Default)]
pub struct Splicer {
    rules: Option<ChainRules>,
    frames: VecDeque<NodeFrame>,
    splice: Option<Arc<Splice>>,
    log: SpliceLog,
}

impl Splicer {
    pub fn new(rules: Option<&ChainRules>, splice: Option<&Arc<Splice>>) -> Self {
        let rules = rules.filter(|r| !r.precompiles.is_empty()).cloned();
        let frames = splice
            .and_then(|s| s.frames.clone())
            .unwrap_or_default()
            .into();
        Splicer {
            rules,
            frames,
            splice: splice.cloned(),
            log: SpliceLog::default(),
        }
    }

    /// Whether this replay can meet a chain precompile at all.
    pub fn active(&self) -> bool {
        self.rules.is_some()
    }

    /// Hands what the pass did to the shared [`Splice`].
    pub fn finish(self) {
        if let Some(s) = &self.splice {
            *s.log.lock().unwrap_or_else(|e| e.into_inner()) = self.log;
        }
    }
}

impl<CTX> Inspector<CTX> for Splicer {
    fn call(&mut self, _ctx: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let rules = self.rules.as_ref()?;
        let to = inputs.bytecode_address;
        rules.precompile(to)?;
        let Some(frame) = self.frames.pop_front().filter(|f| f.to == to) else {
            self.log.opaque.push(to);
            return None;
        };
        self.log.spliced.push(to);
        let mut gas = Gas::new(inputs.gas_limit);
        let _ = gas.record_regular_cost(frame.gas_used.min(inputs.gas_limit));
        let result = match frame.error.as_deref() {
            None => InstructionResult::Return,
            Some("execution reverted") => InstructionResult::Revert,
            Some(_) => {
                gas.spend_all();
                InstructionResult::PrecompileError
            }
        };
        Some(CallOutcome::new(
            InterpreterResult::new(result, frame.output, gas),
            inputs.return_memory_offset.clone(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_into_stateful_precompiles_are_taken_in_call_order() {
        let rules = crate::chain::rules::rules_at(1329, 200_000_000).unwrap();
        let trace = json!({"to": "0x00000000000000000000000000000000000000aa", "calls": [
            {"to": "0x0000000000000000000000000000000000001001", "gasUsed": "0x10", "output": "0x01"},
            {"to": "0x0000000000000000000000000000000000000bbb", "calls": [
                {"to": "0x0000000000000000000000000000000000001005", "gasUsed": "0x20",
                 "error": "execution reverted", "output": "0x"}]},
            {"to": "0x0000000000000000000000000000000000001003", "gasUsed": "0x30"}
        ]});
        let f = frames_from_call_trace(&trace, &rules);
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].gas_used, 0x10);
        assert_eq!(f[0].output, Bytes::from(vec![1u8]));
        assert_eq!(f[1].error.as_deref(), Some("execution reverted"));
    }
}
