//! geth's `callTracer`: a tree of call frames with gas, input, output, errors and (with
//! `withLog`) the logs each frame emitted.
//!
//! Frames are opened in revm's `call`/`create` hooks and closed in `call_end`/`create_end`.
//! SELFDESTRUCT frames are detected per opcode (geth emits one whenever the opcode runs, whatever
//! its effect under EIP-6780), so `step` looks at one byte and returns unless that byte is 0xff.

use super::state::Ctx;
use alloy_primitives::{Address, Bytes, B256, U256};
use revm::bytecode::opcode::{OpCode, JUMP, SELFDESTRUCT};
use revm::interpreter::{
    interpreter_types::{Jumps, LoopControl},
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, CreateScheme,
    InstructionResult, Interpreter, InterpreterAction,
};
use revm::primitives::hardfork::SpecId;
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde::{Deserialize, Serialize};

use super::errors::{frontier_deposit_oog, returned_output, returns_gas, FrameError, LastStep};
use super::failed_step::has_dynamic_gas;
use super::hexser;
use super::precompile_error::failed_precompile_frame;
use super::state::PreOp;
use crate::geth::revert::decode_revert_reason;

/// op-geth's error of a deposit that failed before it ran.
pub const FAILED_DEPOSIT: &str = "failed deposit transaction";

/// `tracerConfig` of the call tracer.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CallTracerConfig {
    pub only_top_call: bool,
    pub with_log: bool,
    /// Record where each frame was in its code ([`FrameSteps`]) for source locations; not a
    /// geth option (never read from `tracerConfig`) and never part of the JSON.
    #[serde(skip)]
    pub source_steps: bool,
    /// With `source_steps`: the source maps' jump markers, so that each JUMP into an internal
    /// function keeps the stack words its arguments are in while the function is open
    /// ([`FrameSteps::args`]).
    #[serde(skip)]
    pub marks: Option<super::gas_context::MarkSource>,
}

/// The kind of a frame, printed as geth's opcode name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CallKind {
    Call,
    Callcode,
    Delegatecall,
    Staticcall,
    Create,
    Create2,
    Selfdestruct,
    /// op-geth's frame for a deposit that failed before it ran (`core/state_transition.go`:
    /// `OnEnter(0, STOP, …)`; its tracers print it with `failed deposit transaction`).
    Stop,
}

impl CallKind {
    pub fn of_call(scheme: CallScheme) -> Self {
        match scheme {
            CallScheme::Call => CallKind::Call,
            CallScheme::StaticCall => CallKind::Staticcall,
            CallScheme::CallCode => CallKind::Callcode,
            CallScheme::DelegateCall => CallKind::Delegatecall,
        }
    }

    pub fn of_create(scheme: CreateScheme) -> Self {
        match scheme {
            CreateScheme::Create2 { .. } => CallKind::Create2,
            _ => CallKind::Create,
        }
    }

    pub fn is_create(self) -> bool {
        matches!(self, CallKind::Create | CallKind::Create2)
    }
    /// The opcode that makes such a frame.
    pub fn opcode(self) -> OpCode {
        match self {
            CallKind::Call => OpCode::CALL,
            CallKind::Callcode => OpCode::CALLCODE,
            CallKind::Delegatecall => OpCode::DELEGATECALL,
            CallKind::Staticcall => OpCode::STATICCALL,
            CallKind::Create => OpCode::CREATE,
            CallKind::Create2 => OpCode::CREATE2,
            CallKind::Selfdestruct => OpCode::SELFDESTRUCT,
            CallKind::Stop => OpCode::STOP,
        }
    }

    /// geth's name for the frame: its opcode's.
    pub fn as_str(self) -> &'static str {
        self.opcode().as_str()
    }
}

/// A log as the call tracer prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallLog {
    #[serde(serialize_with = "hexser::address")]
    pub address: Address,
    pub topics: Vec<B256>,
    pub data: Bytes,
    /// Block-wide log index.
    #[serde(with = "alloy_serde::quantity", default)]
    pub index: u64,
    /// Number of sub-calls the frame had made when the log was emitted.
    #[serde(with = "alloy_serde::quantity", default)]
    pub position: u64,
}

/// One call frame, fields in geth's order with geth's omission rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFrame {
    #[serde(serialize_with = "hexser::address")]
    pub from: Address,
    #[serde(with = "alloy_serde::quantity")]
    pub gas: u64,
    #[serde(rename = "gasUsed", with = "alloy_serde::quantity")]
    pub gas_used: u64,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address",
        default
    )]
    pub to: Option<Address>,
    pub input: Bytes,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<FrameError>,
    #[serde(
        rename = "revertReason",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub revert_reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub calls: Vec<CallFrame>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub logs: Vec<CallLog>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<U256>,
    #[serde(rename = "type")]
    pub kind: CallKind,
    /// Taken from the node's own trace (a chain precompile's frame spliced into the replay);
    /// not part of geth's JSON.
    #[serde(skip)]
    pub from_node: bool,
    /// Where a failed frame was in its code, when [`CallTracerConfig::source_steps`] asked for
    /// it; not part of geth's JSON.
    #[serde(skip)]
    pub steps: Option<Box<FrameSteps>>,
    /// A CREATE or CREATE2 frame's address, made or attempted: geth's JSON drops `to` of a
    /// failed creation, Otterscan's answers name it (`serve`'s `ots_*`); not part of geth's
    /// JSON.
    #[serde(skip)]
    pub create_address: Option<Address>,
}

/// The program counters a frame's source location is rebuilt from: the last opcode it ran (the
/// one that failed) and the few before it, every JUMP it made with its destination (the source
/// map tells which entered or left an internal function), and where its caller was when it was
/// called. Kept only for failed frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameSteps {
    /// pc of the last opcode the frame ran.
    pub last_pc: u32,
    /// (pc, destination) of every JUMP, in order.
    pub jumps: Vec<(u32, u32)>,
    /// pc of the caller's CALL/CREATE opcode and how many JUMPs the caller had made by then
    /// (`None` for the top frame).
    pub caller: Option<(u32, usize)>,
    /// For each internal function still open (JUMPs marked `i`, popped by those marked `o`): the
    /// index of its JUMP in `jumps` and the stack words under the destination (its arguments
    /// on top), at most [`FrameSteps::ARG_WORDS`], bottom first.
    pub args: Vec<(usize, Vec<U256>)>,
    /// The last [`FrameSteps::RECENT`] pcs, a ring written at `seen % RECENT`.
    recent: Vec<u32>,
    seen: usize,
}

impl FrameSteps {
    /// How many of the last pcs are kept: enough to see past a revert tail the optimizer
    /// shares between functions, to the statement that jumped into it.
    pub const RECENT: usize = 64;

    /// Stack words kept per open internal function: its arguments' slots.
    pub const ARG_WORDS: usize = 16;

    #[inline]
    pub(crate) fn record(&mut self, pc: u32) {
        self.last_pc = pc;
        if self.recent.len() < Self::RECENT {
            self.recent.push(pc);
        } else {
            self.recent[self.seen % Self::RECENT] = pc;
        }
        self.seen += 1;
    }

    /// A frame's steps from its start, called from `caller` (see [`FrameSteps::caller`]).
    pub fn called_from(caller: Option<(u32, usize)>) -> FrameSteps {
        FrameSteps {
            caller,
            ..FrameSteps::default()
        }
    }

    /// A JUMP at `pc` to `dest` with the stack `data` (the destination on top), marked `mark`
    /// (`b'i'` into a function: the words under the destination kept as its arguments; `b'o'`
    /// out of one; 0 otherwise).
    #[inline]
    pub(crate) fn jump(&mut self, pc: u32, dest: u32, data: &[U256], mark: u8) {
        match mark {
            b'i' => {
                let below = &data[..data.len().saturating_sub(1)];
                let from = below.len().saturating_sub(Self::ARG_WORDS);
                self.args.push((self.jumps.len(), below[from..].to_vec()));
            }
            b'o' => {
                self.args.pop();
            }
            _ => {}
        }
        self.jumps.push((pc, dest));
    }

    /// A copy without the JUMPs (a checkpoint keeps their count; [`FrameSteps::jumps`] is
    /// rebuilt from the step log when the run resumes), and their count.
    pub(crate) fn without_jumps(&self) -> (FrameSteps, usize) {
        let copy = FrameSteps {
            last_pc: self.last_pc,
            jumps: Vec::new(),
            caller: self.caller,
            args: self.args.clone(),
            recent: self.recent.clone(),
            seen: self.seen,
        };
        (copy, self.jumps.len())
    }

    /// The last pcs the frame ran, newest first.
    pub fn recent(&self) -> impl Iterator<Item = u32> + '_ {
        let n = self.recent.len();
        (0..n).map(move |k| self.recent[(self.seen - 1 - k) % n])
    }
}

impl CallFrame {
    fn new(
        kind: CallKind,
        from: Address,
        to: Option<Address>,
        input: Bytes,
        gas: u64,
        value: Option<U256>,
    ) -> Self {
        CallFrame {
            from,
            gas,
            gas_used: 0,
            to,
            input,
            output: None,
            error: None,
            revert_reason: None,
            calls: Vec::new(),
            logs: Vec::new(),
            value,
            kind,
            from_node: false,
            steps: None,
            create_address: None,
        }
    }

    /// geth's `processOutput`: on success keep the output; on failure keep the error, drop `to`
    /// of a failed CREATE, and keep the output (and its decoded reason) only for a revert.
    fn set_result(&mut self, output: &Bytes, error: Option<FrameError>) {
        let Some(error) = error else {
            self.output = (!output.is_empty()).then(|| output.clone());
            return;
        };
        let reverted = error.is_revert();
        self.error = Some(error);
        if self.kind.is_create() {
            self.to = None;
        }
        if !reverted || output.is_empty() {
            return;
        }
        self.output = Some(output.clone());
        if output.len() >= 4 {
            self.revert_reason = decode_revert_reason(output);
        }
    }

    /// Drops logs of failed frames and of everything beneath them (geth's `clearFailedLogs`).
    fn clear_failed_logs(&mut self, parent_failed: bool) {
        let failed = parent_failed || self.error.is_some();
        if failed {
            self.logs.clear();
        }
        for c in &mut self.calls {
            c.clear_failed_logs(failed);
        }
    }
}

struct OpenFrame {
    frame: CallFrame,
    last: LastStep,
    /// What a CREATE frame's RETURN handed back, kept only before Homestead
    /// ([`frontier_deposit_oog`]).
    returned: Option<Bytes>,
    /// geth's error when revm's does not say enough: the step that failed before executing
    /// and ended the frame, or a precompile's own reason.
    step_error: Option<String>,
    /// The jump markers of the frame's code, looked up at its first step (`None`: not yet).
    marks: Option<Option<std::sync::Arc<[u8]>>>,
}

/// The address a CREATE will create, from the creator's nonce in the journal (the nonce is bumped
/// after the `create` hook).
pub fn create_target<DB: Database>(ctx: &Ctx<DB>, inputs: &CreateInputs) -> Address {
    let nonce = ctx
        .journaled_state
        .state
        .get(&inputs.caller())
        .map(|a| a.info.nonce)
        .unwrap_or(0);
    inputs.created_address(nonce)
}

/// The call tracer's state during one transaction.
pub struct CallTracer {
    config: CallTracerConfig,
    stack: Vec<OpenFrame>,
    root: Option<Box<CallFrame>>,
    log_index_offset: u64,
    /// SELFDESTRUCT seen in `step`, emitted in `step_end` if the opcode succeeded.
    pending_selfdestruct: Option<(Address, Address, U256)>,
    /// A dynamic-gas opcode's inputs, so that a failure before it executes gets geth's error.
    pre: PreOp,
    /// Jump markers by (code hash, creation?), looked up once per code.
    mark_cache: std::collections::HashMap<(B256, bool), Option<std::sync::Arc<[u8]>>>,
}

impl CallTracer {
    /// The `tracerConfig` it was built with.
    pub fn config(&self) -> &CallTracerConfig {
        &self.config
    }

    pub fn new(config: CallTracerConfig, log_index_offset: u64) -> Self {
        CallTracer {
            config,
            stack: Vec::new(),
            root: None,
            log_index_offset,
            pending_selfdestruct: None,
            pre: PreOp::default(),
            mark_cache: Default::default(),
        }
    }

    fn open(&mut self, mut frame: CallFrame) {
        if self.config.source_steps {
            let caller = self
                .stack
                .last()
                .and_then(|p| p.frame.steps.as_ref())
                .map(|s| (s.last_pc, s.jumps.len()));
            frame.steps = Some(Box::new(FrameSteps {
                caller,
                ..FrameSteps::default()
            }));
        }
        self.stack.push(OpenFrame {
            frame,
            last: LastStep::default(),
            returned: None,
            step_error: None,
            marks: None,
        });
    }

    fn close(
        &mut self,
        spec: SpecId,
        result: InstructionResult,
        output: &Bytes,
        gas_limit: u64,
        gas_remaining: u64,
        created: Option<Address>,
    ) {
        let Some(mut open) = self.stack.pop() else {
            return;
        };
        // geth's processOutput clears the error of a frame that was not reverted: the create
        // succeeds with the returned code as its output.
        let deposit = frontier_deposit_oog(spec, result, output, open.returned.as_ref());
        let output = deposit.as_ref().unwrap_or(output);
        let f = &mut open.frame;
        f.gas_used = if returns_gas(result) {
            gas_limit.saturating_sub(gas_remaining)
        } else {
            gas_limit
        };
        if let (Some(addr), true) = (created, f.kind.is_create()) {
            f.to = Some(addr);
        }
        if f.kind.is_create() {
            f.create_address = f.to;
        }
        let error = match open.step_error.take() {
            Some(e) if !result.is_ok_or_revert() => Some(FrameError::Failed(e)),
            _ => FrameError::of(result, open.last, f.kind.is_create()),
        };
        f.set_result(output, error);
        if f.error.is_none() {
            // Only failed frames are located: a frame that succeeded gives its pcs back.
            f.steps = None;
        }
        match self.stack.last_mut() {
            Some(parent) => {
                if !self.config.only_top_call {
                    parent.frame.calls.push(open.frame);
                }
            }
            None => self.root = Some(Box::new(open.frame)),
        }
    }

    /// Finishes the trace: the top frame's `gas` is the tx gas limit and its `gasUsed` the gas
    /// the receipt reports (after refunds), as geth's `OnTxEnd` sets them.
    pub fn into_result(self, tx_gas_limit: u64, receipt_gas_used: u64) -> Option<CallFrame> {
        let mut root = self.into_frames()?;
        // op-geth's GetResult gives a failed deposit's STOP frame no gas (`Gas = 0`).
        if root.kind != CallKind::Stop {
            root.gas = tx_gas_limit;
        }
        root.gas_used = receipt_gas_used;
        Some(root)
    }

    /// A deposit that failed before it ran: op-geth opens one STOP frame from the zero address
    /// with no input, gas or value, and never closes it; its `GetResult` then names the failure
    /// and drops `to` (eth/tracers/native/call.go).
    pub fn enter_failed_deposit(&mut self) {
        if self.root.is_some() || !self.stack.is_empty() {
            return;
        }
        self.root = Some(Box::new(CallFrame {
            from: Address::ZERO,
            gas: 0,
            gas_used: 0,
            to: None,
            input: Bytes::new(),
            output: None,
            error: Some(FrameError::Failed(FAILED_DEPOSIT.to_string())),
            revert_reason: None,
            calls: Vec::new(),
            logs: Vec::new(),
            value: None,
            kind: CallKind::Stop,
            from_node: false,
            steps: None,
            create_address: None,
        }));
    }

    /// Finishes the trace with the top frame as the EVM ran it: `gas` what it was given (the
    /// gas limit less the intrinsic gas) and `gasUsed` what it spent, before refunds — the
    /// top frame of a Parity trace.
    pub fn into_frames(self) -> Option<CallFrame> {
        let mut root = *self.root?;
        if self.config.with_log {
            root.clear_failed_logs(false);
        }
        Some(root)
    }
}

impl super::plain::Plain for CallTracer {}

impl<DB: Database> Inspector<Ctx<DB>> for CallTracer {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        let op = interp.bytecode.opcode();
        if let Some(top) = self.stack.last_mut() {
            top.last = LastStep::before(op, interp.stack.len());
            if let Some(steps) = top.frame.steps.as_deref_mut() {
                let pc = interp.bytecode.pc() as u32;
                steps.record(pc);
                if op == JUMP {
                    let data = interp.stack.data();
                    let dest = data
                        .last()
                        .map_or(u32::MAX, |d| u32::try_from(*d).unwrap_or(u32::MAX));
                    if let Some(source) = &self.config.marks {
                        let marks = top.marks.get_or_insert_with(|| {
                            let creation = top.frame.kind.is_create();
                            let hash = interp.bytecode.get_or_calculate_hash();
                            self.mark_cache
                                .entry((hash, creation))
                                .or_insert_with(|| {
                                    source.0.marks(&interp.bytecode.original_bytes(), creation)
                                })
                                .clone()
                        });
                        let mark = marks.as_ref().and_then(|m| m.get(pc as usize)).copied();
                        steps.jump(pc, dest, data, mark.unwrap_or(0));
                    } else {
                        steps.jump(pc, dest, data, 0);
                    }
                }
            }
        }
        if has_dynamic_gas(op) {
            self.pre.capture(interp, ctx);
        } else {
            self.pre.disarm();
        }
        if op == SELFDESTRUCT && self.config.only_top_call {
            return;
        }
        if op == SELFDESTRUCT {
            let contract = interp.input.target_address;
            let Some(top) = interp.stack.data().last() else {
                return;
            };
            let beneficiary = Address::from_word(B256::from(top.to_be_bytes::<32>()));
            let balance = ctx
                .journaled_state
                .state
                .get(&contract)
                .map(|a| a.info.balance)
                .unwrap_or_default();
            self.pending_selfdestruct = Some((contract, beneficiary, balance));
        }
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if let Some(top) = self.stack.last_mut() {
            if let Some((_, e)) = self.pre.failure(interp, ctx, top.last) {
                top.step_error = Some(e);
            }
        }
        if !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD) {
            if let (Some(top), Some(out)) = (self.stack.last_mut(), returned_output(interp)) {
                if top.frame.kind.is_create() {
                    top.returned = Some(out.clone());
                }
            }
        }
        let Some((contract, beneficiary, balance)) = self.pending_selfdestruct.take() else {
            return;
        };
        let ok = matches!(
            interp.bytecode.action(),
            Some(InterpreterAction::Return(r)) if r.result == InstructionResult::SelfDestruct
        );
        if !ok {
            return;
        }
        if let Some(parent) = self.stack.last_mut() {
            let mut f = CallFrame::new(
                CallKind::Selfdestruct,
                contract,
                Some(beneficiary),
                Bytes::new(),
                0,
                Some(balance),
            );
            f.gas_used = 0;
            parent.frame.calls.push(f);
        }
    }

    fn log_full(&mut self, _interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        self.log(ctx, log)
    }

    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        if !self.config.with_log || (self.config.only_top_call && self.stack.len() > 1) {
            return;
        }
        let index = self.log_index_offset + ctx.journaled_state.logs.len().saturating_sub(1) as u64;
        if let Some(top) = self.stack.last_mut() {
            let position = top.frame.calls.len() as u64;
            top.frame.logs.push(CallLog {
                address: log.address,
                topics: log.data.topics().to_vec(),
                data: log.data.data.clone(),
                index,
                position,
            });
        }
    }

    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let (kind, from, to) = match inputs.scheme {
            CallScheme::Call => (CallKind::Call, inputs.caller, inputs.target_address),
            CallScheme::StaticCall => (CallKind::Staticcall, inputs.caller, inputs.target_address),
            CallScheme::CallCode => (
                CallKind::Callcode,
                inputs.target_address,
                inputs.bytecode_address,
            ),
            CallScheme::DelegateCall => (
                CallKind::Delegatecall,
                inputs.target_address,
                inputs.bytecode_address,
            ),
        };
        let value = (kind != CallKind::Staticcall).then(|| inputs.value.get());
        let input = inputs.input.bytes(ctx);
        self.open(CallFrame::new(
            kind,
            from,
            Some(to),
            input,
            inputs.gas_limit,
            value,
        ));
        None
    }

    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        let r = &outcome.result;
        if let Some(e) = failed_precompile_frame(ctx, inputs, r.result) {
            if let Some(top) = self.stack.last_mut() {
                top.step_error = Some(e);
            }
        }
        self.close(
            ctx.cfg.spec,
            r.result,
            &r.output,
            inputs.gas_limit,
            r.gas.remaining(),
            None,
        );
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        let kind = CallKind::of_create(inputs.scheme());
        let to = create_target(ctx, inputs);
        self.open(CallFrame::new(
            kind,
            inputs.caller(),
            Some(to),
            inputs.init_code().clone(),
            inputs.gas_limit(),
            Some(inputs.value()),
        ));
        None
    }

    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        let r = &outcome.result;
        self.close(
            ctx.cfg.spec,
            r.result,
            &r.output,
            inputs.gas_limit(),
            r.gas.remaining(),
            outcome.address,
        );
    }
}
