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

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::context_interface::journaled_state::account::JournaledAccountTr;
use revm::context_interface::{ContextTr, JournalTr};
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, Gas, InstructionResult, InterpreterResult,
};
use revm::primitives::{Log, LogData};
use revm::state::{Bytecode, EvmState};
use revm::Inspector;
use serde_json::{json, Value};

use crate::chain::pure::{self, CallShape, PureOutcome};
use crate::chain::rules::ChainRules;
use crate::rpc::RpcClient;
use crate::rpc::RpcError;
use crate::trace::call::{CallFrame, CallKind, CallLog};

/// Asks the node, in one round trip, for what splicing needs of `target` through `method`
/// (`debug_traceTransaction` with a transaction hash, `debug_traceBlockByHash` with a block
/// hash): its callTracer result with logs (the logs go into the receipt) and its prestateTracer
/// diff (the state the transaction changed). The trace is the node's answer or why there is
/// none (the node's own error, such as no debug API); the diff is `None` when the node gave
/// none. A request that failed on the way (a timeout, a refused connection) is an error: the
/// frames are then not known, and that is not the node lacking a debug API.
pub fn ask_node(client: &RpcClient, method: &str, target: B256) -> Result<NodeTraces, RpcError> {
    let call = |config: Value| (method.to_string(), json!([target, config]));
    let calls = [
        call(json!({"tracer": "callTracer", "tracerConfig": {"withLog": true}})),
        call(json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}})),
    ];
    let mut r = client.batch(&calls)?;
    if r.len() != 2 {
        return Ok((Err(format!("{} answers to 2 calls", r.len())), None));
    }
    let diff = r.pop().and_then(Result::ok);
    let trace = r
        .pop()
        .expect("two answers")
        .map_err(|e| format!("its {method} answered: {e}"));
    Ok((trace, diff))
}

/// The node's callTracer answer (or why there is none) and its prestate diff.
pub type NodeTraces = (Result<Value, String>, Option<Value>);

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

/// One account as a prestate diff gives it; a field left out is unchanged (in `post`) or zero
/// (in `pre`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffAccount {
    pub balance: Option<U256>,
    pub nonce: Option<u64>,
    pub code: Option<Bytes>,
    pub storage: BTreeMap<B256, B256>,
}

/// The node's `prestateTracer` result in diff mode for the traced transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeDiff {
    pub pre: BTreeMap<Address, DiffAccount>,
    pub post: BTreeMap<Address, DiffAccount>,
}

impl NodeDiff {
    /// Reads geth's diff-mode shape `{pre: {addr: {balance, nonce, code, storage}}, post: …}`;
    /// `None` when the answer is not that shape.
    pub fn from_json(v: &Value) -> Option<NodeDiff> {
        fn side(v: &Value) -> Option<BTreeMap<Address, DiffAccount>> {
            let mut out = BTreeMap::new();
            for (k, a) in v.as_object()? {
                let address: Address = k.parse().ok()?;
                let mut acc = DiffAccount::default();
                if let Some(b) = a.get("balance") {
                    acc.balance = Some(b.as_str()?.parse().ok()?);
                }
                if let Some(n) = a.get("nonce") {
                    acc.nonce = Some(n.as_u64()?);
                }
                if let Some(c) = a.get("code") {
                    acc.code = Some(c.as_str()?.parse().ok()?);
                }
                if let Some(st) = a.get("storage") {
                    for (slot, val) in st.as_object()? {
                        acc.storage
                            .insert(slot.parse().ok()?, val.as_str()?.parse().ok()?);
                    }
                }
                out.insert(address, acc);
            }
            Some(out)
        }
        Some(NodeDiff {
            pre: side(v.get("pre")?)?,
            post: side(v.get("post")?)?,
        })
    }
}

/// A change the node's precompiles made that the local replay cannot make by itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Balance plus `add` minus `sub` (a difference, so EVM transfers after the frame still
    /// apply).
    Balance {
        address: Address,
        add: U256,
        sub: U256,
    },
    Nonce {
        address: Address,
        nonce: u64,
    },
    Code {
        address: Address,
        code: Bytes,
    },
    Storage {
        address: Address,
        slot: B256,
        value: B256,
    },
}

impl Correction {
    pub fn address(&self) -> Address {
        match self {
            Correction::Balance { address, .. }
            | Correction::Nonce { address, .. }
            | Correction::Code { address, .. }
            | Correction::Storage { address, .. } => *address,
        }
    }
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
    pub diff: Option<NodeDiff>,
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
        trace: Result<&Value, &str>,
        diff: Option<&Value>,
        env: &super::EvmEnv,
        last: &Splice,
    ) -> Splice {
        let frames = match (env.rules.as_ref(), trace) {
            (Some(rules), Ok(t)) => {
                frames_from_call_trace(t, rules).ok_or("its callTracer answer is not a call frame")
            }
            (None, _) => Err("no chain rules"),
            (_, Err(why)) => Err(why),
        };
        match frames {
            Ok(frames) => Splice {
                frames: Some(frames),
                diff: diff.and_then(NodeDiff::from_json),
                skip: vec![env.miner, env.block.beneficiary],
                ..Default::default()
            },
            // The pass already run stands; its record of opaque frames is kept, with why.
            Err(why) => {
                let mut log = last.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
                log.opaque_why = Some(why.to_string());
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

/// Every field of `diff.post` that `state` (a pass's final state) ends with a different value,
/// except the accounts in `skip`; each flagged `true` when the pass left the field at the
/// node's pre-state value (a balance, nonce or code) or never touched it (a slot): only the
/// node's precompile changed it, so it can be corrected. A field the replay itself changed is a
/// divergence to report, not to overwrite.
pub fn differences(diff: &NodeDiff, state: &EvmState, skip: &[Address]) -> Vec<(Correction, bool)> {
    let mut out = Vec::new();
    let empty = DiffAccount::default();
    for (&address, want) in &diff.post {
        if skip.contains(&address) {
            continue;
        }
        let pre = diff.pre.get(&address).unwrap_or(&empty);
        let local = state.get(&address);
        if let Some(n) = want.balance {
            let p = pre.balance.unwrap_or_default();
            let l = local.map_or(p, |a| a.info.balance);
            if l != n {
                let c = Correction::Balance {
                    address,
                    add: n.saturating_sub(l),
                    sub: l.saturating_sub(n),
                };
                out.push((c, l == p));
            }
        }
        if let Some(n) = want.nonce {
            let p = pre.nonce.unwrap_or_default();
            let l = local.map_or(p, |a| a.info.nonce);
            if l != n {
                out.push((Correction::Nonce { address, nonce: n }, l == p));
            }
        }
        if let Some(n) = &want.code {
            let p = pre.code.clone().unwrap_or_default();
            let l = local
                .and_then(|a| a.info.code.as_ref())
                .map(|c| c.original_bytes())
                .unwrap_or_else(|| p.clone());
            if &l != n {
                let c = Correction::Code {
                    address,
                    code: n.clone(),
                };
                out.push((c, l == p));
            }
        }
        for (&slot, &n) in &want.storage {
            let p = pre.storage.get(&slot).copied().unwrap_or_default();
            // A slot the replay accessed may have been written with its old value, which the
            // final state cannot tell from a read: only slots it never touched are corrected.
            let touched = local.and_then(|a| a.storage.get(&U256::from_be_bytes(slot.0)));
            let l = touched.map_or(p, |s| B256::from(s.present_value.to_be_bytes()));
            if l != n {
                let c = Correction::Storage {
                    address,
                    slot,
                    value: n,
                };
                out.push((c, touched.is_none()));
            }
        }
    }
    out
}

/// Writes `corrections` into the journal, leaving what was cold cold.
fn correct<CTX>(ctx: &mut CTX, corrections: &[Correction])
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState>>,
{
    let journal = ctx.journal_mut();
    for c in corrections {
        let address = c.address();
        let was_cold = {
            let Ok(load) = journal.load_account_mut(address) else {
                continue;
            };
            let was_cold = load.is_cold;
            let mut account = load.data;
            match c {
                Correction::Balance { add, sub, .. } => {
                    if !add.is_zero() {
                        account.incr_balance(*add);
                    }
                    if !sub.is_zero() {
                        let b = *account.balance();
                        account.set_balance(b.saturating_sub(*sub));
                    }
                }
                Correction::Nonce { nonce, .. } => account.set_nonce(*nonce),
                Correction::Code { code, .. } => {
                    account.set_code_and_hash_slow(Bytecode::new_raw(code.clone()))
                }
                Correction::Storage { .. } => {}
            }
            was_cold
        };
        if let Correction::Storage { slot, value, .. } = c {
            let key = U256::from_be_bytes(slot.0);
            if let Ok(r) = journal.sstore(address, key, U256::from_be_bytes(value.0)) {
                if r.is_cold {
                    if let Some(s) = journal
                        .evm_state_mut()
                        .get_mut(&address)
                        .and_then(|a| a.storage.get_mut(&key))
                    {
                        s.mark_cold();
                    }
                }
            }
        }
        if was_cold {
            if let Some(a) = journal.evm_state_mut().get_mut(&address) {
                a.mark_cold();
            }
        }
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

/// The price difference of the SSTORE about to run when the chain's set cost
/// (`SeiSstoreSetGasEIP2200`) is not Ethereum's 20,000. The fork's `makeGasSStoreFunc`
/// (core/vm/operations_acl.go) charges the set cost for a clean zero slot made non-zero, and
/// refunds `set cost - WARM_STORAGE_READ` for a dirty slot reset to its original zero; revm
/// prices both with 20,000, so the difference is added after the opcode: `(depth, cost,
/// refund)`.
fn sstore_adjustment<CTX>(
    rules: Option<&ChainRules>,
    interp: &revm::interpreter::Interpreter,
    ctx: &mut CTX,
) -> Option<(usize, i64, i64)>
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState>>,
{
    use revm::interpreter::interpreter_types::{InputsTr, RuntimeFlag};
    use revm::Database;
    let rules = rules?;
    let set = rules.sstore_set_gas;
    let standard = crate::chain::rules::DEFAULT_SSTORE_SET_GAS;
    // With the parameter read, only another value needs work; unread, the case is still
    // worked out so that a note can say the default was assumed where it mattered.
    if (set == standard && rules.consensus_read) || interp.runtime_flag.is_static() {
        return None;
    }
    let depth = interp.stack.len();
    let key = interp.stack.peek(0).ok()?;
    let value = interp.stack.peek(1).ok()?;
    let address = interp.input.target_address();
    let journal = ctx.journal_mut();
    let loaded = journal
        .evm_state()
        .get(&address)
        .and_then(|a| a.storage.get(&key))
        .map(|s| (s.original_value(), s.present_value()));
    let (original, current) = match loaded {
        Some(pair) => pair,
        // Not loaded yet in this transaction: both are the stored value (read without warming
        // the slot; the SSTORE itself does that).
        None => {
            let v = journal.db_mut().storage(address, key).ok()?;
            (v, v)
        }
    };
    let delta = set as i64 - standard as i64;
    if current == value {
        None
    } else if original == current && original.is_zero() {
        Some((depth, delta, 0))
    } else if original != current && original == value && original.is_zero() {
        Some((depth, 0, delta))
    } else {
        None
    }
}

/// The inspector that answers calls into stateful chain precompiles; does nothing on chains
/// without them.
#[derive(Default)]
pub struct Splicer {
    rules: Option<ChainRules>,
    frames: VecDeque<(usize, CallFrame)>,
    splice: Option<Arc<Splice>>,
    log: SpliceLog,
    /// Corrections not yet written (they go in at the first spliced frame).
    pending: Vec<Correction>,
    /// An SSTORE about to run whose price differs under the chain's set cost: the stack depth
    /// before it, and the cost and refund to add once it has run.
    sstore: Option<(usize, i64, i64)>,
    /// PREVRANDAO is known to whole seconds only ([`super::EvmEnv::prevrandao_guessed`]).
    prevrandao_guessed: bool,
}

impl Splicer {
    /// The splicer for a transaction run in `env` (its chain's rules, and the node's frames
    /// for it when they were fetched).
    pub fn new(env: &super::EvmEnv) -> Self {
        let rules = env
            .rules
            .as_ref()
            .filter(|r| !r.precompiles.is_empty())
            .cloned();
        let splice = env.splice.as_ref();
        let frames = splice
            .and_then(|s| s.frames.clone())
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .collect();
        Splicer {
            rules,
            frames,
            pending: splice.map(|s| s.corrections.clone()).unwrap_or_default(),
            splice: splice.cloned(),
            log: SpliceLog::default(),
            sstore: None,
            prevrandao_guessed: env.prevrandao_guessed,
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

impl Splicer {
    /// The next node frame, when it is the call into `to` the replay is making.
    fn take_frame(&mut self, to: Address) -> Option<(usize, CallFrame)> {
        match self.frames.front() {
            Some((_, f)) if f.to == Some(to) => self.frames.pop_front(),
            _ => None,
        }
    }

    /// A pure chain precompile (json, p256) runs here; the node's frame for it, when fetched,
    /// supplies the gas (which depends on chain parameters, see [`crate::chain::pure`]) and is
    /// checked against the local output.
    fn run_pure<CTX: ContextTr>(
        &mut self,
        ctx: &mut CTX,
        inputs: &CallInputs,
        name: &str,
    ) -> Option<CallOutcome> {
        let to = inputs.bytecode_address;
        let shape = CallShape {
            value: inputs.value.get(),
            delegate: matches!(
                inputs.scheme,
                CallScheme::DelegateCall | CallScheme::CallCode
            ),
            gas: inputs.gas_limit,
        };
        let mut local = pure::run(name, &inputs.input.bytes(ctx), shape)?;
        match &self.take_frame(to) {
            Some((index, f)) => {
                let output = f.output.clone().unwrap_or_default();
                if output != local.output || f.error.is_some() == local.success {
                    self.log.mismatched.push(to);
                }
                // What the node did stands; the local run only covers its absence.
                local = PureOutcome {
                    success: f.error.is_none(),
                    output,
                    gas_used: f.gas_used,
                };
                self.log.calls.push(Some(*index));
            }
            None => self.log.calls.push(None),
        }
        self.log.local.push(to);
        let mut gas = Gas::new(inputs.gas_limit);
        let _ = gas.record_regular_cost(local.gas_used.min(inputs.gas_limit));
        let result = if local.success {
            InstructionResult::Return
        } else {
            InstructionResult::Revert
        };
        Some(CallOutcome::new(
            InterpreterResult::new(result, local.output, gas),
            inputs.return_memory_offset.clone(),
        ))
    }
}

impl<CTX> Inspector<CTX> for Splicer
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState>>,
{
    fn step(&mut self, interp: &mut revm::interpreter::Interpreter, ctx: &mut CTX) {
        use revm::interpreter::interpreter_types::Jumps;
        match interp.bytecode.opcode() {
            0x44 if self.prevrandao_guessed => self.log.prevrandao_read = true,
            0x55 => {
                self.sstore = sstore_adjustment(self.rules.as_ref(), interp, ctx);
                if self.sstore.is_some() && self.rules.as_ref().is_some_and(|r| !r.consensus_read) {
                    self.log.sstore_set_assumed = true;
                }
            }
            _ => {}
        }
    }

    fn step_end(&mut self, interp: &mut revm::interpreter::Interpreter, _ctx: &mut CTX) {
        let Some((depth, cost, refund)) = self.sstore.take() else {
            return;
        };
        // SSTORE pops two words; a stack still as deep means it failed before storing.
        if interp.stack.len() + 2 != depth {
            return;
        }
        if cost > 0 {
            if !interp.gas.record_regular_cost(cost as u64) {
                interp.halt_oog();
                return;
            }
        } else if cost < 0 {
            interp.gas.erase_cost(cost.unsigned_abs());
        }
        if refund != 0 {
            interp.gas.record_refund(refund);
        }
    }

    fn call(&mut self, ctx: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let rules = self.rules.as_ref()?;
        let to = inputs.bytecode_address;
        let precompile = rules.precompile(to)?;
        if precompile.pure {
            return self.run_pure(ctx, inputs, precompile.name);
        }
        let Some((index, frame)) = self.take_frame(to) else {
            self.log.opaque.push(to);
            self.log.calls.push(None);
            return None;
        };
        self.log.spliced.push(to);
        self.log.calls.push(Some(index));
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
        if result == InstructionResult::Return {
            let journal = ctx.journal_mut();
            for l in frame_logs(&frame) {
                journal.log(l);
            }
            if !self.pending.is_empty() {
                let pending = std::mem::take(&mut self.pending);
                self.log.corrected = pending.len();
                correct(ctx, &pending);
            }
        }
        Some(CallOutcome::new(
            InterpreterResult::new(result, frame.output.unwrap_or_default(), gas),
            inputs.return_memory_offset.clone(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A geth callTracer frame (every field geth always prints).
    fn frame(to: &str, gas_used: &str, extra: Value) -> Value {
        let mut f = json!({"from": "0x00000000000000000000000000000000000000aa", "gas": "0x100000",
            "gasUsed": gas_used, "to": to, "input": "0x", "type": "CALL", "value": "0x0"});
        f.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        f
    }

    #[test]
    fn frames_into_stateful_precompiles_are_taken_in_call_order() {
        let rules = crate::chain::rules::rules_at(1329, 200_000_000).unwrap();
        let inner = frame(
            "0x0000000000000000000000000000000000001005",
            "0x20",
            json!({"error": "execution reverted", "output": "0x"}),
        );
        let trace = frame(
            "0x00000000000000000000000000000000000000aa",
            "0x99",
            json!({"calls": [
                frame("0x0000000000000000000000000000000000001001", "0x10", json!({"output": "0x01"})),
                frame("0x0000000000000000000000000000000000000bbb", "0x50", json!({"calls": [inner]})),
                frame("0x0000000000000000000000000000000000001003", "0x30", json!({}))
            ]}),
        );
        let f = frames_from_call_trace(&trace, &rules).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].gas_used, 0x10);
        assert_eq!(f[0].output, Some(Bytes::from(vec![1u8])));
        assert_eq!(f[1].error.as_deref(), Some("execution reverted"));
    }

    /// A node answer that is not a callTracer frame (here an unreadable gasUsed) gives no
    /// frames at all: nothing is spliced with a guessed gas of 0.
    #[test]
    fn an_unreadable_node_trace_gives_no_frames() {
        let rules = crate::chain::rules::rules_at(1329, 200_000_000).unwrap();
        let bad = frame(
            "0x00000000000000000000000000000000000000aa",
            "0x99",
            json!({"calls": [frame("0x0000000000000000000000000000000000001001", "lots", json!({}))]}),
        );
        assert_eq!(frames_from_call_trace(&bad, &rules), None);
        assert_eq!(frames_from_call_trace(&json!("oops"), &rules), None);
    }

    /// A node diff that is not geth's diff shape is no comparison: the self-check then never
    /// claims the node's post-state agrees.
    #[test]
    fn an_unreadable_node_diff_checks_nothing() {
        let info = crate::source::chain_data::BlockInfo {
            number: 200_000_000,
            ..Default::default()
        };
        let env =
            crate::replay::EvmEnv::new(revm::primitives::hardfork::SpecId::PRAGUE, 1329, &info);
        let trace = frame(
            "0x00000000000000000000000000000000000000aa",
            "0x1",
            json!({}),
        );
        for diff in [
            json!({"pre": {}}),
            json!({"pre": {}, "post": {"0xzz": {}}}),
            json!(7),
        ] {
            let s = Splice::from_node(Ok(&trace), Some(&diff), &env, &Splice::default());
            s.record_post(&EvmState::default());
            assert_eq!(s.state_check(), None, "{diff}");
        }
        let good = json!({"pre": {}, "post": {}});
        let s = Splice::from_node(Ok(&trace), Some(&good), &env, &Splice::default());
        assert_eq!(s.state_check(), Some((0, Vec::new())));
    }
}
