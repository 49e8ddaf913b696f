//! geth's struct logger (`opcodeTracer`, also `structLogger`): one entry per executed opcode.
//!
//! Entries are written as JSON into a [`Spool`] as execution proceeds (memory while small, a
//! temporary file beyond), so a 30M-gas transaction never holds its struct logs in memory. When
//! geth's head keys are known before the run (a run of the same transaction that wrote nothing
//! gave them, [`StructLogger::dry`]), the entries go straight to the output instead ([`StructLogger::streaming`]).
//! `step` writes the parts that are known before the opcode runs (stack, return data, memory
//! before expansion, storage, refund) into a reused buffer; `step_end` knows the gas cost and
//! any pre-execution error, and writes the whole entry. No allocation happens per opcode.

use super::state::Ctx;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Arc, Mutex};

use alloy_primitives::{Address, Bytes, U256};
use revm::bytecode::opcode::{OpCode, SLOAD, SSTORE};
use revm::interpreter::interpreter_types::{Jumps, LoopControl, MemoryTr, ReturnData};
use revm::interpreter::{
    CallInputs, CallOutcome, CreateInputs, CreateOutcome, FrameInput, InstructionResult,
    Interpreter, InterpreterAction,
};
use revm::{Database, Inspector};
use serde::Deserialize;

use super::errors::{frontier_deposit_oog, returned_output, LastStep};
use super::hexser::{push_hex, push_quantity, push_u64, push_word};
use super::spool::Spool;
use super::state::PreOp;
use revm::primitives::hardfork::SpecId;

/// `tracerConfig` of the struct logger.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StructLoggerConfig {
    pub enable_memory: bool,
    pub disable_stack: bool,
    pub disable_storage: bool,
    pub enable_return_data: bool,
    /// Maximum bytes of struct-log output (geth v1.15+); 0 means unlimited.
    pub limit: u64,
    /// Bytes the struct log may take while it is made (0: unbounded); not a geth option. A
    /// server sets what its response limit leaves: past it nothing more is recorded and the
    /// result is refused ([`StructLogError::TooLarge`]), instead of a log that is only found
    /// too large once it has been written whole.
    #[serde(skip)]
    pub max_bytes: u64,
}

/// The struct logger's result: `{gas, failed, returnValue, structLogs}`. The struct logs stay in
/// their spool and are copied straight to the output when printed, unless they went there as
/// they were made (`streamed`).
#[derive(Clone, Debug)]
pub struct StructLogResult {
    pub gas: u64,
    pub failed: bool,
    pub return_value: Bytes,
    /// The entries, comma-separated, without the enclosing brackets (empty when streamed).
    pub logs: Arc<Mutex<Spool>>,
    pub entries: u64,
    /// The whole result was already written to its output while the transaction ran.
    pub streamed: bool,
}

/// geth's keys before the struct logs: `gas` (the receipt's gas used), `failed` and
/// `returnValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLogHead {
    pub gas: u64,
    pub failed: bool,
    pub return_value: Bytes,
}

impl StructLogHead {
    /// `{"gas":…,"failed":…,"returnValue":"…","structLogs":[`, as geth prints it.
    pub fn open(&self) -> Vec<u8> {
        let mut head = Vec::with_capacity(96 + 2 * self.return_value.len());
        head.extend_from_slice(b"{\"gas\":");
        push_u64(&mut head, self.gas);
        head.extend_from_slice(if self.failed {
            b",\"failed\":true"
        } else {
            b",\"failed\":false"
        });
        head.extend_from_slice(b",\"returnValue\":\"");
        push_hex(&mut head, &self.return_value);
        head.extend_from_slice(b"\",\"structLogs\":[");
        head
    }
}

/// Why a struct log could not be finished.
#[derive(Debug, thiserror::Error)]
pub enum StructLogError {
    /// A write failed (a full disk, `ulimit -f`, a closed pipe): the log is never shortened
    /// silently.
    #[error("the struct log could not be written to {to}: {source}")]
    Write {
        to: String,
        #[source]
        source: std::io::Error,
    },
    /// The log passed [`StructLoggerConfig::max_bytes`] while it was made.
    #[error("the struct log passed {max} bytes, the most this answer may take")]
    TooLarge { max: u64 },
    /// Streamed: the head written first, from a run that wrote nothing, is not what this run
    /// ended with.
    #[error(
        "the traced run ended otherwise than the run whose head keys were written first \
         (gas {}, failed {}, returnValue 0x{} there; gas {}, failed {}, returnValue 0x{} here); \
         the struct log written to {to} is unfinished and must not be used",
        .written.gas, .written.failed, alloy_primitives::hex::encode(&.written.return_value),
        .ran.gas, .ran.failed, alloy_primitives::hex::encode(&.ran.return_value)
    )]
    Diverged {
        to: String,
        written: StructLogHead,
        ran: StructLogHead,
    },
}

impl StructLogResult {
    fn head(&self) -> StructLogHead {
        StructLogHead {
            gas: self.gas,
            failed: self.failed,
            return_value: self.return_value.clone(),
        }
    }

    /// Writes the result as geth prints it, streaming the struct logs from the spool. A
    /// streamed result was written already: asking again is an error.
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        if self.streamed {
            return Err(std::io::Error::other(
                "the struct logs were written to their output as the transaction ran",
            ));
        }
        out.write_all(&self.head().open())?;
        self.logs.lock().expect("spool lock").copy_to(out)?;
        out.write_all(b"]}")
    }
}

impl serde::Serialize for StructLogResult {
    /// For callers that need one JSON value (the result is read into memory).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = Vec::new();
        self.write_to(&mut buf).map_err(serde::ser::Error::custom)?;
        let raw: Box<serde_json::value::RawValue> =
            serde_json::from_slice(&buf).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// The struct logger's state during one transaction.
pub struct StructLogger {
    cfg: StructLoggerConfig,
    out: Spool,
    entries: u64,
    /// Set in `step`, consumed in `step_end`.
    pending: Option<Pending>,
    /// The parts of the pending entry after `depth` (stack, memory, …), reused across steps.
    tail: Vec<u8>,
    line: Vec<u8>,
    /// Refund counters of the frames below the current one, as they stood when each called down.
    /// geth's refund counter is transaction-wide; revm keeps one per frame.
    refund_below: Vec<i64>,
    refund_sum_below: i64,
    /// The current frame's own refund counter at its latest step.
    frame_refund: i64,
    /// Per contract, every slot seen so far (geth prints the cumulative map on SLOAD/SSTORE).
    storage: HashMap<Address, BTreeMap<U256, U256>>,
    top_output: Bytes,
    top_result: Option<InstructionResult>,
    /// What a failure found in `step_end` needs to be priced as geth prices it.
    pre: PreOp,
    /// What the top frame's RETURN handed back, kept only before Homestead.
    top_returned: Option<Bytes>,
    /// The transaction is a pre-Homestead CREATE whose code deposit ran out of gas.
    top_deposit_oog: bool,
    /// The first write to the spool that failed (a full disk, `ulimit -f`): the result is then
    /// an error, never a silently shortened log.
    write_error: Option<std::io::Error>,
    /// Where the entries go: "its temporary file" (spooled), or the output they are written
    /// through to.
    to: String,
    /// Written through: the head already written, which the run must end with.
    head: Option<StructLogHead>,
    /// Nothing is written: the run only reads what a written one reads (see
    /// [`dry`](Self::dry)).
    dry: bool,
}

#[derive(Clone, Copy)]
struct Pending {
    pc: usize,
    op: u8,
    gas: u64,
    depth: usize,
    stack_len: usize,
}

fn current_slot<DB: Database>(ctx: &mut Ctx<DB>, addr: Address, slot: U256) -> U256 {
    if let Some(v) = ctx
        .journaled_state
        .state
        .get(&addr)
        .and_then(|a| a.storage.get(&slot))
    {
        return v.present_value;
    }
    ctx.journaled_state
        .database
        .storage(addr, slot)
        .unwrap_or_default()
}

impl StructLogger {
    pub fn new(cfg: StructLoggerConfig) -> Self {
        StructLogger {
            cfg,
            out: Spool::default(),
            entries: 0,
            pending: None,
            tail: Vec::with_capacity(4096),
            line: Vec::with_capacity(4096),
            refund_below: Vec::new(),
            refund_sum_below: 0,
            frame_refund: 0,
            storage: HashMap::new(),
            top_output: Bytes::new(),
            top_result: None,
            pre: PreOp::default(),
            top_returned: None,
            top_deposit_oog: false,
            write_error: None,
            to: "its temporary file".into(),
            head: None,
            dry: false,
        }
    }

    /// A struct logger that writes nothing but reads the state a writing one reads (a slot
    /// before its SLOAD runs, what pricing a failed step needs) and ends with the same head
    /// keys: the pass that learns them and every state item the written run will ask for, so
    /// that a run written straight to its output cannot miss one.
    pub fn dry(cfg: StructLoggerConfig) -> Self {
        let mut s = Self::new(cfg);
        s.dry = true;
        s
    }

    /// A struct logger that writes its result to `out` as the transaction runs, `head` first:
    /// geth's head keys as a dry run of the same transaction ended (`to` names `out` in
    /// errors). [`into_result`](Self::into_result) closes the document only if this run ends
    /// the same way.
    pub fn streaming(
        cfg: StructLoggerConfig,
        head: StructLogHead,
        out: Box<dyn Write + Send>,
        to: &str,
    ) -> Self {
        let mut s = Self::new(cfg);
        s.out = Spool::direct(out, &head.open());
        s.head = Some(head);
        s.to = to.to_string();
        s
    }

    /// Whether the result is written through to its output (see [`streaming`](Self::streaming)).
    pub fn streaming_to(&self) -> Option<&str> {
        self.head.as_ref().map(|_| self.to.as_str())
    }

    fn limit_reached(&self) -> bool {
        self.cfg.limit != 0 && self.out.len() > self.cfg.limit
    }

    fn over_budget(&self) -> bool {
        self.cfg.max_bytes != 0 && self.out.len() > self.cfg.max_bytes
    }

    fn enter(&mut self, parent_refund: i64) {
        self.refund_below.push(parent_refund);
        self.refund_sum_below += parent_refund;
    }

    fn exit(&mut self, result: InstructionResult, output: &Bytes) {
        if let Some(r) = self.refund_below.pop() {
            self.refund_sum_below -= r;
        }
        if self.refund_below.is_empty() {
            self.top_result = Some(result);
            self.top_output = output.clone();
        }
    }

    /// Finishes the result; `gas_used` is the receipt's. A write that failed is the error.
    /// Written through, the document is closed only when this run ended as its head says;
    /// otherwise it is left unfinished (no closing bracket) and the divergence is the error.
    pub fn into_result(mut self, gas_used: u64) -> Result<StructLogResult, StructLogError> {
        let to = std::mem::take(&mut self.to);
        let write = |source| StructLogError::Write {
            to: to.clone(),
            source,
        };
        if let Some(e) = self.write_error.take() {
            return Err(write(e));
        }
        if self.over_budget() {
            return Err(StructLogError::TooLarge {
                max: self.cfg.max_bytes,
            });
        }
        self.out.flush().map_err(write)?;
        let failed = self.top_deposit_oog || self.top_result.is_some_and(|r| !r.is_ok());
        let return_value = match self.top_result {
            _ if self.top_deposit_oog => Bytes::new(),
            Some(r) if r.is_ok() || r.is_revert() => self.top_output.clone(),
            _ => Bytes::new(),
        };
        let ran = StructLogHead {
            gas: gas_used,
            failed,
            return_value,
        };
        let streamed = match self.head.take() {
            Some(written) if written != ran => {
                return Err(StructLogError::Diverged { to, written, ran });
            }
            Some(_) => {
                self.out.write_all(b"]}").map_err(write)?;
                self.out.flush().map_err(write)?;
                true
            }
            None => false,
        };
        Ok(StructLogResult {
            gas: ran.gas,
            failed: ran.failed,
            return_value: ran.return_value,
            logs: Arc::new(Mutex::new(if streamed {
                Spool::default()
            } else {
                self.out
            })),
            entries: self.entries,
            streamed,
        })
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for StructLogger {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if self.limit_reached() || self.over_budget() {
            return;
        }
        let op = interp.bytecode.opcode();
        if self.dry {
            self.dry_step(interp, ctx, op);
            return;
        }
        let stack = interp.stack.data();
        let tail = &mut self.tail;
        tail.clear();
        if !self.cfg.disable_stack {
            tail.extend_from_slice(b",\"stack\":[");
            for (i, v) in stack.iter().enumerate() {
                if i > 0 {
                    tail.push(b',');
                }
                tail.push(b'"');
                push_quantity(tail, v);
                tail.push(b'"');
            }
            tail.push(b']');
        }
        if self.cfg.enable_return_data {
            let rd = interp.return_data.buffer();
            if !rd.is_empty() {
                tail.extend_from_slice(b",\"returnData\":\"");
                push_hex(tail, rd);
                tail.push(b'"');
            }
        }
        if self.cfg.enable_memory {
            let size = interp.memory.size();
            if size > 0 {
                tail.extend_from_slice(b",\"memory\":[");
                let mem = interp.memory.slice(0..size);
                for (i, word) in mem.chunks(32).enumerate() {
                    if i > 0 {
                        tail.push(b',');
                    }
                    tail.push(b'"');
                    push_hex(tail, word);
                    tail.push(b'"');
                }
                tail.push(b']');
            }
        }
        let len = stack.len();
        if !self.cfg.disable_storage && ((op == SLOAD && len >= 1) || (op == SSTORE && len >= 2)) {
            let contract = interp.input.target_address;
            let slot = stack[len - 1];
            let value = if op == SLOAD {
                current_slot(ctx, contract, slot)
            } else {
                stack[len - 2]
            };
            let map = self.storage.entry(contract).or_default();
            map.insert(slot, value);
            tail.extend_from_slice(b",\"storage\":{");
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    tail.push(b',');
                }
                tail.push(b'"');
                push_word(tail, k);
                tail.extend_from_slice(b"\":\"");
                push_word(tail, v);
                tail.push(b'"');
            }
            tail.push(b'}');
        }
        self.frame_refund = interp.gas.refunded();
        let refund = self.refund_sum_below + self.frame_refund;
        if refund > 0 {
            tail.extend_from_slice(b",\"refund\":");
            push_u64(tail, refund as u64);
        }
        self.pre.capture(interp, ctx);
        self.pending = Some(Pending {
            pc: interp.bytecode.pc(),
            op,
            gas: interp.gas.remaining(),
            depth: interp.input.depth + 1,
            stack_len: len,
        });
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        // The head's keys do not depend on how much of the log was kept (`limit`).
        if interp.input.depth == 0 && !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD) {
            if let Some(out) = returned_output(interp) {
                self.top_returned = Some(out.clone());
            }
        }
        let Some(p) = self.pending.take() else { return };
        let after = interp.gas.remaining();
        let mut cost = p.gas.wrapping_sub(after);
        let mut error = None;
        let failed = match interp.bytecode.action() {
            // CREATE's forwarded gas is charged inside the opcode in geth, not in its cost.
            Some(InterpreterAction::NewFrame(FrameInput::Create(inputs))) => {
                cost = cost.saturating_sub(inputs.gas_limit());
                false
            }
            Some(InterpreterAction::Return(_)) => true,
            _ => false,
        };
        if failed {
            let last = LastStep {
                op: p.op,
                stack_len: p.stack_len,
                returned: false,
            };
            if let Some((c, e)) = self.pre.failure(interp, ctx, last) {
                cost = c;
                error = Some(e);
            }
        }
        if self.dry {
            return;
        }
        let line = &mut self.line;
        line.clear();
        if self.entries > 0 {
            line.push(b',');
        }
        line.extend_from_slice(b"{\"pc\":");
        push_u64(line, p.pc as u64);
        line.extend_from_slice(b",\"op\":\"");
        match OpCode::new(p.op) {
            Some(code) => line.extend_from_slice(code.as_str().as_bytes()),
            None => {
                let _ = write!(line, "opcode {:#x} not defined", p.op);
            }
        }
        line.extend_from_slice(b"\",\"gas\":");
        push_u64(line, p.gas);
        line.extend_from_slice(b",\"gasCost\":");
        push_u64(line, cost);
        line.extend_from_slice(b",\"depth\":");
        push_u64(line, p.depth as u64);
        if let Some(e) = error {
            line.extend_from_slice(b",\"error\":");
            line.extend_from_slice(crate::geth::json::to_json_string(&e).as_bytes());
        }
        line.extend_from_slice(&self.tail);
        line.push(b'}');
        if self.write_error.is_some() {
            return;
        }
        match self.out.write_all(line) {
            Ok(()) => self.entries += 1,
            Err(e) => self.write_error = Some(e),
        }
    }

    fn call(&mut self, _ctx: &mut Ctx<DB>, _inputs: &mut CallInputs) -> Option<CallOutcome> {
        let parent = self.pending_parent_refund();
        self.enter(parent);
        None
    }

    fn call_end(&mut self, _ctx: &mut Ctx<DB>, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.exit(outcome.result.result, &outcome.result.output);
    }

    fn create(&mut self, _ctx: &mut Ctx<DB>, _inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        let parent = self.pending_parent_refund();
        self.enter(parent);
        None
    }

    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        let r = &outcome.result;
        if self.refund_below.len() == 1 {
            // geth's struct logger keeps the top frame's error: a pre-Homestead code deposit
            // that ran out of gas makes the transaction `failed`, with no return value.
            let returned = self.top_returned.take();
            self.top_deposit_oog =
                frontier_deposit_oog(ctx.cfg.spec, r.result, &r.output, returned.as_ref())
                    .is_some();
        }
        self.exit(r.result, &r.output);
    }
}

impl StructLogger {
    /// `step` of a [`dry`](Self::dry) logger: the reads and what `step_end` needs.
    fn dry_step<DB: Database>(&mut self, interp: &Interpreter, ctx: &mut Ctx<DB>, op: u8) {
        let len = interp.stack.len();
        if !self.cfg.disable_storage && op == 0x54 && len >= 1 {
            let slot = interp.stack.data()[len - 1];
            current_slot(ctx, interp.input.target_address, slot);
        }
        self.pre.capture(interp, ctx);
        self.pending = Some(Pending {
            pc: interp.bytecode.pc(),
            op,
            gas: interp.gas.remaining(),
            depth: interp.input.depth + 1,
            stack_len: len,
        });
    }

    /// The calling frame's own refund counter when it calls down, as its CALL/CREATE step saw
    /// it (nothing changes it between that step and the child's creation); 0 for the top frame.
    fn pending_parent_refund(&mut self) -> i64 {
        if self.refund_below.is_empty() {
            0
        } else {
            self.frame_refund
        }
    }
}
