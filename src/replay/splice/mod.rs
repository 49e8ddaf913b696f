//! Splicing the node's own frames into a local replay, for a chain's stateful precompiles.
//!
//! Chains 1329/1328 have precompiles (bank, staking, wasmd, …) that read and write Cosmos state;
//! revm cannot run them (nor, yet, the pure json and p256 ones). When the replay calls one, [`Splicer`] answers the call with the frame
//! the node's `callTracer` recorded for it — output, gas used, error — so the rest of the
//! transaction executes as on the chain, and every tracer sees the frame as usual. Frames are
//! matched in call order. Where the node gave no trace (no debug API), the call is left to revm
//! and listed as opaque; the self-check then says whether the receipt agrees.
//!
//! The state such a frame changed (bank balances, storage written back by CosmWasm) is taken
//! from the node's `prestateTracer` in diff mode, asked in the same round trip as the frames:
//! after a pass, every account field and slot of the node's post-state that the local replay
//! ended with a different value is a [`Correction`], written into the journal when the replay
//! returns from the first spliced frame (balances as the difference, so later EVM transfers
//! still add up), and the transaction is run again. Accounts and slots the correction loads are
//! left cold, as the node's Cosmos-side writes do not touch the EVM access list. One round of
//! corrections is made; whatever still differs is reported (see [`Splice::residue`]).

use std::sync::Mutex;

use alloy_primitives::{Address, B256};
use revm::primitives::{Log, LogData};
use revm::state::EvmState;
use serde_json::{json, Value};

use crate::chain::rules::ChainRules;
use crate::rpc::RpcClient;
use crate::rpc::RpcError;
use crate::trace::call::{CallFrame, CallKind, CallLog};

mod diff;
mod splicer;

use diff::correct;
pub use diff::{differences, read_node_diff, Correction, DiffMode};
pub use splicer::{Beside, Splicer};

/// Asks the node, in one round trip, for what splicing needs of `target` through `method`
/// (`debug_traceTransaction` with a transaction hash, `debug_traceBlockByHash` with a block
/// hash): its callTracer result with logs (the logs go into the receipt) and its prestateTracer
/// diff (the state the transaction changed). The trace is the node's answer or why there is
/// none (the node's own error, such as no debug API); the diff is `None` when the node gave
/// none. A request that failed on the way (a timeout, a refused connection) is an error: the
/// frames are then not known, and that is not the node lacking a debug API.
pub fn ask_node(client: &RpcClient, method: &str, target: B256) -> Result<NodeTraces, RpcError> {
    ask(client, method, &[json!(target)])
}

/// [`ask_node`] for a simulated call: `debug_traceCall` with `params` (`[call, block]`).
pub fn ask_node_call(client: &RpcClient, params: &Value) -> Result<NodeTraces, RpcError> {
    ask(
        client,
        "debug_traceCall",
        params.as_array().map(Vec::as_slice).unwrap_or_default(),
    )
}

/// `method` with `params`, then the trace config: the callTracer with logs and the prestate
/// diff, in one batch.
fn ask(client: &RpcClient, method: &str, params: &[Value]) -> Result<NodeTraces, RpcError> {
    let call = |config: Value| {
        let mut p = params.to_vec();
        p.push(config);
        (method.to_string(), Value::Array(p))
    };
    let calls = [
        call(json!({"tracer": "callTracer", "tracerConfig": {"withLog": true}})),
        call(json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}})),
    ];
    let mut r = client.batch(&calls)?;
    if r.len() != 2 {
        return Ok((Err(NoFrames::AnswerCount(r.len())), None));
    }
    let diff = r.pop().and_then(Result::ok);
    let trace = r
        .pop()
        .expect("two answers")
        .map_err(|source| NoFrames::Node {
            method: method.to_string(),
            source,
        });
    Ok((trace, diff))
}

/// The node's callTracer answer (or why there is none) and its prestate diff.
pub type NodeTraces = (Result<Value, NoFrames>, Option<Value>);

/// Why the node's frames for a transaction are not known, so that its calls into the chain's
/// precompiles stay opaque (said in the note on stderr).
#[derive(Debug, thiserror::Error)]
pub enum NoFrames {
    /// The batch came back with another number of answers.
    #[error("{0} answers to 2 calls")]
    AnswerCount(usize),
    /// The node refused the trace (no debug API, an unknown tracer).
    #[error("its {method} answered: {source}")]
    Node { method: String, source: RpcError },
    /// A block whose hash is not known cannot be traced by hash.
    #[error("the block's hash is not known")]
    NoBlockHash,
    /// The node's block trace lists no result for the transaction.
    #[error("the node's block trace has no entry for it")]
    NoEntry,
    /// The node's answer is not a callTracer frame.
    #[error("its callTracer answer is not a call frame")]
    NotAFrame,
    /// The chain has no rules of its own, so no precompile of its is known.
    #[error("no chain rules")]
    NoRules,
    /// A simulated call with state or block overrides: its frames are not asked of the node.
    #[error("a simulated call with overrides is not asked of the node")]
    Overridden,
    /// Several simulated calls on one state: no node trace is of them all.
    #[error("calls simulated together are not asked of the node")]
    CallMany,
}

/// Whether frame `c` is a call into one of `rules`' precompiles (a SELFDESTRUCT naming one as
/// beneficiary is not a call).
fn calls_chain_precompile(c: &CallFrame, rules: &ChainRules) -> bool {
    c.kind != CallKind::Selfdestruct && c.to.is_some_and(|a| rules.precompile(a).is_some())
}

/// The logs a node frame and its successful sub-calls emitted, in execution order (a log's
/// `position` is the number of sub-calls made before it); these go into the receipt.
pub fn frame_logs(frame: &CallFrame) -> Vec<Log> {
    fn walk(f: &CallFrame, out: &mut Vec<Log>) {
        if f.error.is_some() {
            return;
        }
        let mut own = f.logs.iter().peekable();
        for (i, c) in f.calls.iter().enumerate() {
            while let Some(l) = own.next_if(|l| l.position as usize <= i) {
                out.push(log(l));
            }
            walk(c, out);
        }
        out.extend(own.map(log));
    }
    fn log(l: &CallLog) -> Log {
        Log {
            address: l.address,
            data: LogData::new_unchecked(l.topics.clone(), l.data.clone()),
        }
    }
    let mut out = Vec::new();
    walk(frame, &mut out);
    out
}

/// The frames into `rules`' precompiles in a callTracer result, depth first (call order), as
/// the node printed them (with their sub-calls and, when asked `withLog`, their logs). `None`
/// when the result is not a readable callTracer frame: no frame is then taken from it, rather
/// than one with a made-up gas or output.
pub fn frames_from_call_trace(trace: &Value, rules: &ChainRules) -> Option<Vec<CallFrame>> {
    fn walk(f: &CallFrame, rules: &ChainRules, out: &mut Vec<CallFrame>) {
        for c in &f.calls {
            if calls_chain_precompile(c, rules) {
                // What the precompile called is the node's doing, not the replay's.
                out.push(c.clone());
            } else {
                walk(c, rules, out);
            }
        }
    }
    // The top frame is the transaction itself, never a precompile call made by the replay.
    let top = <CallFrame as serde::Deserialize>::deserialize(trace).ok()?;
    let mut out = Vec::new();
    walk(&top, rules, &mut out);
    Some(out)
}

/// Puts the node's frames into a local callTracer result: the `k`-th call into a chain
/// precompile (depth first) gets what the node recorded beneath it when the replay answered it
/// from node frame `calls[k]`, and is marked [`CallFrame::from_node`].
pub fn graft(
    top: &mut CallFrame,
    rules: &ChainRules,
    log: &SpliceLog,
    frames: &[CallFrame],
    with_log: bool,
) {
    fn walk(
        f: &mut CallFrame,
        rules: &ChainRules,
        answers: &mut std::slice::Iter<'_, Option<usize>>,
        frames: &[CallFrame],
        with_log: bool,
    ) {
        for c in &mut f.calls {
            if calls_chain_precompile(c, rules) {
                let node = answers
                    .next()
                    .copied()
                    .flatten()
                    .and_then(|i| frames.get(i));
                if let Some(n) = node {
                    c.calls = n.calls.clone();
                    if with_log {
                        c.logs = n.logs.clone();
                    } else {
                        strip_logs(&mut c.calls);
                    }
                    c.from_node = true;
                }
                continue;
            }
            walk(c, rules, answers, frames, with_log);
        }
    }
    fn strip_logs(calls: &mut [CallFrame]) {
        for c in calls {
            c.logs.clear();
            strip_logs(&mut c.calls);
        }
    }
    walk(top, rules, &mut log.calls.iter(), frames, with_log);
}

/// What the node said about one transaction's precompile frames, and what the replay did.
#[derive(Debug, Default)]
pub struct Splice {
    /// The node's frames into the chain's precompiles ([`frames_from_call_trace`]), once
    /// fetched; `None` before, or when the node could not give them.
    pub frames: Option<Vec<CallFrame>>,
    /// The node was asked and could not answer (no debug API).
    pub unavailable: bool,
    /// The node's state diff for the transaction, when it gave one.
    pub diff: Option<DiffMode>,
    /// Written into the journal on return from the first spliced frame.
    pub corrections: Vec<Correction>,
    /// Whether `corrections` were computed (one round is made).
    pub corrected: bool,
    /// Set by a pass: calls answered from the node, and calls left to revm (opaque).
    pub log: Mutex<SpliceLog>,
    /// Accounts left out of the comparison: the fee recipients (the header's miner and the
    /// chain's fee collector), whose balances follow the fee rule, checked by gasUsed.
    pub skip: Vec<Address>,
    /// Set by a pass: where its post-state differs from the node's diff (see [`differences`]).
    pub residue: Mutex<Vec<(Correction, bool)>>,
}

impl Splice {
    /// Compares a pass's final state with the node's diff and keeps the differences in
    /// [`Splice::residue`]. Fields the pass never touched count as the node's pre-state value.
    pub fn record_post(&self, state: &EvmState) {
        let Some(diff) = &self.diff else { return };
        *self.residue.lock().unwrap_or_else(|e| e.into_inner()) =
            differences(diff, state, &self.skip);
    }

    /// Where the last pass's final state still differs from the node's diff (`None` when no
    /// diff was compared): accounts compared, and each item as `account field: node value`.
    pub fn state_check(&self) -> Option<(usize, Vec<String>)> {
        let diff = self.diff.as_ref()?;
        let items = self
            .residue()
            .iter()
            .map(|(c, _)| match c {
                Correction::Balance { address, add, sub } => format!(
                    "{address:?} balance: the node's is {} wei {}",
                    if add.is_zero() { sub } else { add },
                    if add.is_zero() { "lower" } else { "higher" }
                ),
                Correction::Nonce { address, nonce } => {
                    format!("{address:?} nonce: node {nonce}")
                }
                Correction::Code { address, code } => {
                    format!("{address:?} code: node {} bytes", code.len())
                }
                Correction::Storage {
                    address,
                    slot,
                    value,
                } => format!("{address:?} storage {slot}: node {value}"),
            })
            .collect();
        Some((diff.post.len(), items))
    }

    /// The next splice when the last pass left differences only the node's precompiles can
    /// explain: the same frames and diff with those written at the first spliced frame. `None`
    /// when there is nothing (more) to correct; one round is made.
    pub fn corrected(&self) -> Option<Splice> {
        let spliced = !self
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spliced
            .is_empty();
        if self.corrected || self.diff.is_none() || !spliced {
            return None;
        }
        let corrections: Vec<Correction> = self
            .residue()
            .into_iter()
            .filter_map(|(c, correctable)| correctable.then_some(c))
            .collect();
        (!corrections.is_empty()).then(|| Splice {
            frames: self.frames.clone(),
            diff: self.diff.clone(),
            skip: self.skip.clone(),
            corrections,
            corrected: true,
            ..Default::default()
        })
    }

    /// The last pass called a stateful chain precompile the node's frames were not asked for.
    pub fn wants_frames(&self) -> bool {
        self.frames.is_none()
            && !self.unavailable
            && !self
                .log
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .opaque
                .is_empty()
    }

    /// What the node answered for this transaction: its callTracer result (`withLog`) and its
    /// prestate diff; a trace that is `None` or unreadable leaves the frames opaque.
    /// The fee recipients (the header's miner and COINBASE) are left out of the state
    /// comparison.
    pub fn from_node(
        trace: Result<&Value, &NoFrames>,
        diff: Option<&Value>,
        env: &super::EvmEnv,
        last: &Splice,
    ) -> Splice {
        let frames = match (env.rules.as_ref(), trace) {
            (Some(rules), Ok(t)) => {
                frames_from_call_trace(t, rules).ok_or_else(|| NoFrames::NotAFrame.to_string())
            }
            (None, _) => Err(NoFrames::NoRules.to_string()),
            (_, Err(why)) => Err(why.to_string()),
        };
        match frames {
            Ok(frames) => Splice {
                frames: Some(frames),
                diff: diff.and_then(read_node_diff),
                skip: vec![env.miner, env.block.beneficiary],
                ..Default::default()
            },
            // The pass already run stands; its record of opaque frames is kept, with why.
            Err(why) => {
                let mut log = last.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
                log.opaque_why = Some(why);
                Splice {
                    unavailable: true,
                    log: Mutex::new(log),
                    ..Default::default()
                }
            }
        }
    }

    /// The differences the last pass left.
    pub fn residue(&self) -> Vec<(Correction, bool)> {
        self.residue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpliceLog {
    pub spliced: Vec<Address>,
    pub opaque: Vec<Address>,
    /// Every call into a chain precompile in call order: the node frame that answered it, or
    /// `None` when revm ran it (opaque) or it ran locally without a node frame.
    pub calls: Vec<Option<usize>>,
    /// State items written from the node's diff.
    pub corrected: usize,
    /// Calls into pure chain precompiles run locally.
    pub local: Vec<Address>,
    /// Of those, the ones whose local output or success differs from the node's frame.
    pub mismatched: Vec<Address>,
    /// The transaction read PREVRANDAO while it was derived from whole seconds of the block
    /// time.
    pub prevrandao_read: bool,
    /// An SSTORE the chain's set cost prices was priced with the parameter's default (it was
    /// not read from the consensus layer).
    pub sstore_set_assumed: bool,
    /// Why the node gave no frames (its own error, or an unreadable answer).
    pub opaque_why: Option<String>,
}

impl SpliceLog {
    /// Adds another transaction's record (a block's summary).
    pub fn merge(&mut self, other: &SpliceLog) {
        self.spliced.extend(&other.spliced);
        self.opaque.extend(&other.opaque);
        self.local.extend(&other.local);
        self.mismatched.extend(&other.mismatched);
        self.corrected += other.corrected;
        self.prevrandao_read |= other.prevrandao_read;
        self.sstore_set_assumed |= other.sstore_set_assumed;
        if self.opaque_why.is_none() {
            self.opaque_why.clone_from(&other.opaque_why);
        }
    }
}

/// What a replay did with the chain's precompiles, for a note on stderr.
pub fn note(log: &SpliceLog, rules: &ChainRules) -> Option<String> {
    let name = |a: &Address| {
        let n = rules.precompile(*a).map_or("?", |p| p.name);
        format!("{a:?} ({n})")
    };
    let list = |v: &[Address]| {
        let mut names: Vec<String> = v.iter().map(name).collect();
        names.dedup();
        names.join(", ")
    };
    let mut parts = Vec::new();
    if !log.spliced.is_empty() {
        parts.push(format!(
            "{} chain precompile frame(s) taken from the node's callTracer: {}",
            log.spliced.len(),
            list(&log.spliced)
        ));
    }
    if !log.local.is_empty() {
        parts.push(format!(
            "{} pure chain precompile call(s) run locally: {}",
            log.local.len(),
            list(&log.local)
        ));
    }
    if !log.mismatched.is_empty() {
        parts.push(format!(
            "WARNING: {} of them returned other than the node's frame (the node's frame was \
             used): {}",
            log.mismatched.len(),
            list(&log.mismatched)
        ));
    }
    if log.prevrandao_read {
        parts.push(
            "the transaction read PREVRANDAO, which this chain derives from the consensus block \
             time with nanoseconds; eth_getBlock gives whole seconds, so the replay used \
             .000000000 (pass --consensus-rpc to read them; the self-check says whether it \
             mattered)"
                .to_string(),
        );
    }
    if log.sstore_set_assumed {
        parts.push(
            "an SSTORE set a zero slot (or reset one to zero), which this chain prices with its \
             SeiSstoreSetGasEIP2200 parameter; it was not read (pass --consensus-rpc), so the \
             default 20,000 was used (the self-check says whether it mattered)"
                .to_string(),
        );
    }
    if log.corrected > 0 {
        parts.push(format!(
            "{} state item(s) the chain precompiles changed written from the node's \
             prestateTracer diff",
            log.corrected
        ));
    }
    if !log.opaque.is_empty() {
        let why = log
            .opaque_why
            .as_deref()
            .map_or(String::new(), |w| format!(": {w}"));
        parts.push(format!(
            "{} chain precompile frame(s) opaque (the node gave no readable trace of them{why}; \
             revm ran them as plain accounts): {}",
            log.opaque.len(),
            list(&log.opaque)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests;
