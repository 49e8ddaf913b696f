//! JavaScript tracers with geth's semantics, hosted in boa.
//!
//! [`JsSpec`] is the script, its `tracerConfig` and its time limit; building it validates the
//! script once so a bad one fails before any replay. [`JsTracer`] is the revm inspector for
//! one transaction. Hook order follows geth's interpreter:
//!
//! - `step(log, db)` for every opcode, delivered in revm's `step_end` because only then is the
//!   opcode's cost known; `log` shows the state *before* the opcode (see `objects.rs`). An
//!   opcode that fails before executing (stack, out of gas) gets `step` with `getError()` set;
//!   one that fails while executing (REVERT, bad jump, invalid opcode, write protection) gets
//!   `step` and then `fault`.
//! - `enter(frame)`/`exit(frameResult)` for every sub-call, precompiles and SELFDESTRUCT
//!   included, not for the top call (that is `ctx`).
//! - `result(ctx, db)` once, after execution, with `db` showing the post-transaction state.
//!
//! The first exception ends all tracer calls and fails the trace; execution is never changed.
//! Without a `step` function the per-opcode work is two stores (for error texts and
//! SELFDESTRUCT frames).

pub mod bigint;
pub mod buffers;
mod fast;
pub mod globals;
pub mod hook;
pub mod host;
pub mod objects;
mod spare;
pub mod timeout;

use crate::trace::Ctx;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::bytecode::opcode::OpCode;
use revm::context::{BlockEnv, TxEnv};
use revm::interpreter::instructions::gas_table_spec;
use revm::interpreter::{
    interpreter_types::{Jumps, LoopControl, MemoryTr},
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, CreateScheme, FrameInput,
    GasTable, InstructionResult, Interpreter, InterpreterAction,
};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;
use revm::{Database, Inspector};
use serde_json::Value;

use super::errors::{
    fails_before_execution, frontier_deposit_oog, geth_error, returned_output, returns_gas,
    LastStep, CODE_STORE_OUT_OF_GAS,
};
use crate::trace::precompile_error::failed_precompile_frame;
use crate::trace::state::{BeforeOpcode, PreOp, StateReader, StateView, Undo};
use host::{Hook, Host, TxContext};
use objects::Shared;

pub use crate::geth::time::parse_go_duration;
pub use timeout::DEFAULT_TIMEOUT;

/// A JavaScript tracer: its source, the `tracerConfig` handed to `setup`, its time limit.
#[derive(Clone, Debug)]
pub struct JsSpec {
    source: Arc<str>,
    config: String,
    timeout: Duration,
    /// Set once any tracer built from this spec timed out, so a re-run of the same replay
    /// (the next prefetch pass) fails at once instead of waiting out the limit again.
    timed_out: Arc<AtomicBool>,
    /// The key of the host that validated the script, kept for the first build (`spare.rs`).
    spare: Arc<spare::Key>,
}

impl JsSpec {
    /// Checks the script (syntax, `result`/`fault`, `enter`/`exit` pairing, `setup`).
    pub fn new(source: &str, config: Option<&Value>, timeout: Duration) -> Result<Self, String> {
        let nesting = host::source_nesting(source);
        if nesting > host::MAX_SOURCE_NESTING {
            return Err(format!(
                "the script nests brackets {nesting} deep; at most {} are accepted",
                host::MAX_SOURCE_NESTING
            ));
        }
        let config = match config {
            None | Some(Value::Null) => "{}".to_string(),
            Some(v) => v.to_string(),
        };
        let host = Host::new(source, &config, SpecId::OSAKA, timeout, Shared::new())?;
        let key = spare::Key::new();
        spare::put(&key, host);
        Ok(JsSpec {
            source: source.into(),
            config,
            timeout,
            timed_out: Arc::new(AtomicBool::new(false)),
            spare: key,
        })
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh tracer for one transaction under fork `spec`: the first one on the thread
    /// that validated the script gets the validating host, later ones build their own.
    pub fn build(&self, spec: SpecId) -> JsTracer {
        let spare =
            spare::take(&self.spare).and_then(|mut h| h.rearm(spec, self.timeout).then_some(h));
        let (host, error) = if self.timed_out.load(Ordering::Relaxed) {
            (None, Some(host::wrap("execution timeout", Hook::Setup)))
        } else if let Some(h) = spare {
            (Some(h), None)
        } else {
            match Host::new(
                &self.source,
                &self.config,
                spec,
                self.timeout,
                Shared::new(),
            ) {
                Ok(h) => (Some(h), None),
                Err(e) => (None, Some(e)),
            }
        };
        let shared = host
            .as_ref()
            .map_or_else(Shared::new, |h| h.shared().clone());
        JsTracer {
            has_step: host.as_ref().is_some_and(Host::has_step),
            has_frames: host.as_ref().is_some_and(Host::has_frames),
            views: host.as_ref().is_none_or(Host::needs_views),
            host,
            shared,
            error,
            frames: Vec::new(),
            frame_id: 0,
            gas_table: gas_table_spec(spec),
            pending_selfdestruct: None,
            journal_at: 0,
            undo: Undo::default(),
            pre: PreOp::default(),
            top: Top::default(),
            timed_out: self.timed_out.clone(),
        }
    }
}

struct Frame {
    last: LastStep,
    create: bool,
    /// What a CREATE frame's RETURN handed back, kept only before Homestead.
    returned: Option<Bytes>,
    /// geth's error where revm's does not say enough (a precompile's own reason).
    error: Option<String>,
    /// Refunds of the enclosing frames, so `getRefund()` is transaction-wide like geth's.
    refund_base: i64,
    last_refund: i64,
    input: Bytes,
}

#[derive(Default)]
struct Top {
    create: bool,
    to: Address,
    output: Bytes,
    error: Option<String>,
}

/// How an opcode ended, as geth's interpreter distinguishes it.
enum OpEnd {
    Ok,
    /// Failed before executing: `step` carries the error, no `fault`.
    Before(String),
    /// Failed while executing: `step`, then `fault`.
    During(String),
}

/// The inspector running one JavaScript tracer over one transaction.
pub struct JsTracer {
    host: Option<Host>,
    shared: Rc<Shared>,
    error: Option<String>,
    has_step: bool,
    has_frames: bool,
    /// Whether `capture` fills the stack, memory and contract views.
    views: bool,
    frames: Vec<Frame>,
    /// Bumped when the current frame changes, so per-frame fields are copied once per frame.
    frame_id: u64,
    gas_table: GasTable,
    pending_selfdestruct: Option<(Address, Address, U256)>,
    /// The journal's length before the current opcode ran.
    journal_at: usize,
    /// The current opcode's changes undone, for `db` in `step` and `fault`.
    undo: Undo,
    /// The current opcode before it ran, to price a failure as geth does.
    pre: PreOp,
    top: Top,
    timed_out: Arc<AtomicBool>,
}

/// The memory range an opcode overwrites, from its (pre-execution) stack.
fn memory_write(op: u8, stack: &[U256]) -> Option<(usize, usize)> {
    let top = |i: usize| stack.len().checked_sub(i + 1).map(|j| stack[j]);
    let as_usize = |v: U256| usize::try_from(v).unwrap_or(usize::MAX);
    let (dest, size) = match op {
        0x52 => (top(0)?, U256::from(32)),               // MSTORE
        0x53 => (top(0)?, U256::from(1)),                // MSTORE8
        0x37 | 0x39 | 0x3e | 0x5e => (top(0)?, top(2)?), // *DATACOPY, CODECOPY, MCOPY
        0x3c => (top(1)?, top(3)?),                      // EXTCODECOPY
        _ => return None,
    };
    Some((as_usize(dest), as_usize(size)))
}

fn classify(interp: &mut Interpreter, op: u8, stack_len: usize) -> OpEnd {
    let Some(InterpreterAction::Return(r)) = interp.bytecode.action() else {
        return OpEnd::Ok;
    };
    use InstructionResult as R;
    let last = LastStep {
        op,
        stack_len,
        returned: false,
    };
    match r.result {
        R::Stop | R::Return | R::SelfDestruct => OpEnd::Ok,
        res if fails_before_execution(res, op) => {
            OpEnd::Before(geth_error(res, last, false).unwrap_or_default())
        }
        res => OpEnd::During(geth_error(res, last, false).unwrap_or_default()),
    }
}

impl JsTracer {
    /// Runs `f` with the host objects pointed at this hook's interpreter and state.
    ///
    /// `step` and `fault` run after the opcode: their `db` undoes what it changed (the journal
    /// entries it pushed since `journal_at`), so they see the state before it, as in geth.
    fn with_host<DB: Database>(
        &mut self,
        interp: Option<&Interpreter>,
        ctx: &mut Ctx<DB>,
        hook: Hook,
    ) {
        let Some(host) = self.host.as_mut() else {
            return;
        };
        // Native hooks read neither the interpreter nor the state.
        if let Some(r) = host.try_fast(hook) {
            if let Err(e) = r {
                self.fail(e);
            }
            return;
        }
        let journal = &ctx.journaled_state.inner.journal;
        let mut view = StateView {
            state: &ctx.journaled_state.inner.state,
            db: &mut ctx.journaled_state.database,
        };
        let opcode_wrote =
            matches!(hook, Hook::Step | Hook::Fault) && journal.len() > self.journal_at;
        let r = if opcode_wrote {
            self.undo.build(&journal[self.journal_at..], &mut view);
            let mut before = BeforeOpcode {
                live: view,
                undo: &self.undo,
            };
            call_with(&self.shared, interp, &mut before, |_| host.call(hook))
        } else {
            call_with(&self.shared, interp, &mut view, |_| host.call(hook))
        };
        if let Err(e) = r {
            self.fail(e);
        }
    }

    fn fail(&mut self, e: String) {
        if e.starts_with("execution timeout") {
            self.timed_out.store(true, Ordering::Relaxed);
        }
        self.error = Some(e);
        self.host = None;
    }

    fn live(&self) -> bool {
        self.error.is_none()
    }

    fn push_frame(&mut self, input: Bytes, create: bool) {
        let refund_base = self
            .frames
            .last()
            .map(|f| f.refund_base + f.last_refund)
            .unwrap_or(0);
        self.frames.push(Frame {
            last: LastStep::default(),
            create,
            returned: None,
            error: None,
            refund_base,
            last_refund: 0,
            input,
        });
        self.frame_id += 1;
    }

    fn enter<DB: Database>(&mut self, ctx: &mut Ctx<DB>, f: objects::FrameData) {
        if self.has_frames && self.live() {
            *self.shared.frame.borrow_mut() = f;
            self.with_host(None, ctx, Hook::Enter);
        }
    }

    fn exit<DB: Database>(&mut self, ctx: &mut Ctx<DB>, r: objects::FrameResultData) {
        if self.has_frames && self.live() {
            *self.shared.frame_result.borrow_mut() = r;
            self.with_host(None, ctx, Hook::Exit);
        }
    }

    /// Closes a frame: an `exit` for a sub-call, the transaction's output and error for the top.
    fn close<DB: Database>(
        &mut self,
        ctx: &mut Ctx<DB>,
        result: InstructionResult,
        output: &Bytes,
        gas_limit: u64,
        gas_remaining: u64,
        is_create: bool,
    ) {
        let Some(f) = self.frames.pop() else {
            return;
        };
        self.frame_id += 1;
        let mut error = match f.error {
            Some(e) if !result.is_ok_or_revert() => Some(e),
            _ => geth_error(result, f.last, is_create),
        };
        // geth's JS tracer keeps the error of a pre-Homestead code deposit out of gas (the
        // frame is not reverted) and the returned code as the output.
        let deposit = frontier_deposit_oog(ctx.cfg.spec, result, output, f.returned.as_ref());
        if deposit.is_some() {
            error = Some(CODE_STORE_OUT_OF_GAS.to_string());
        }
        let output = deposit.as_ref().unwrap_or(output);
        if self.frames.is_empty() {
            self.top.output = output.clone();
            self.top.error = error;
            return;
        }
        let gas_used = if returns_gas(result) {
            gas_limit.saturating_sub(gas_remaining)
        } else {
            gas_limit
        };
        self.exit(
            ctx,
            objects::FrameResultData {
                gas_used,
                output: output.clone(),
                error,
            },
        );
    }

    /// Calls `result(ctx, db)`; `state` is what the transaction wrote, `db` the state beneath.
    #[allow(clippy::too_many_arguments)]
    pub fn into_result<DB: Database>(
        mut self,
        tx: &TxEnv,
        block: &BlockEnv,
        gas_used: u64,
        (tx_hash, block_hash, tx_index): (B256, Option<B256>, Option<u64>),
        state: &EvmState,
        db: &mut DB,
    ) -> Result<Box<serde_json::value::RawValue>, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let Some(mut host) = self.host.take() else {
            return Err("the JavaScript tracer was not initialised".into());
        };
        let base = u128::from(block.basefee);
        let tip = match tx.gas_priority_fee {
            Some(prio) => prio.min(tx.gas_price.saturating_sub(base)),
            None => tx.gas_price.saturating_sub(base),
        };
        let t = TxContext {
            create: self.top.create,
            from: tx.caller,
            to: self.top.to,
            input: tx.data.clone(),
            gas: tx.gas_limit,
            gas_price: U256::from(tip),
            value: tx.value,
            block: block.number.saturating_to(),
            coinbase: block.beneficiary,
            output: self.top.output.clone(),
            error: self.top.error.clone(),
            gas_used,
            tx_hash: (tx_hash != B256::ZERO).then_some(tx_hash),
            // Only a mined transaction has a block hash and an index (not a simulated call).
            block_hash: block_hash.filter(|_| tx_hash != B256::ZERO),
            tx_index: tx_index.filter(|_| tx_hash != B256::ZERO),
        };
        let mut view = StateView { state, db };
        let r = call_with(&self.shared, None, &mut view, |_| host.result(&t));
        if let Err(e) = &r {
            if e.starts_with("execution timeout") {
                self.timed_out.store(true, Ordering::Relaxed);
            }
        }
        r
    }

    /// Fills the pre-opcode view of `log` (everything but cost and error).
    fn capture(&mut self, interp: &Interpreter, op: u8) {
        let depth = self.frames.len() as u64;
        let (base, frame_input) = match self.frames.last() {
            Some(f) => (f.refund_base, &f.input),
            None => (0, &Bytes::new()),
        };
        let mut s = self.shared.step.borrow_mut();
        let stack = interp.stack.data();
        s.pc = interp.bytecode.pc() as u64;
        s.op = op;
        s.gas = interp.gas.remaining();
        s.depth = depth;
        s.refund = (base + interp.gas.refunded()).max(0) as u64;
        s.stack_len = stack.len();
        if !self.views {
            return;
        }
        let k = OpCode::new(op)
            .map(|c| c.inputs() as usize)
            .unwrap_or(0)
            .min(stack.len());
        s.saved.clear();
        s.saved.extend_from_slice(&stack[stack.len() - k..]);
        s.mem_len = interp.memory.size();
        s.overlay.clear();
        if let Some((dest, size)) = memory_write(op, stack) {
            if dest < s.mem_len && size > 0 {
                let end = dest.saturating_add(size).min(s.mem_len);
                s.overlay_at = dest;
                let pre = interp.memory.slice(dest..end);
                s.overlay.extend_from_slice(&pre);
            }
        }
        if s.input.as_ptr() != frame_input.as_ptr() || s.input.len() != frame_input.len() {
            s.input = frame_input.clone();
        }
        s.address = interp.input.target_address;
        s.caller = interp.input.caller_address;
        s.value = interp.input.call_value;
    }
}

/// Points the shared view at `interp` and `reader` for the duration of `f`.
fn call_with<'a, T>(
    shared: &Shared,
    interp: Option<&Interpreter>,
    reader: &mut (dyn StateReader + 'a),
    f: impl FnOnce(&Shared) -> T,
) -> T {
    let ptr: *mut (dyn StateReader + 'a) = reader;
    // SAFETY: the lifetime is erased only to store the pointer in `shared`; it is cleared below
    // before `reader` goes out of scope, and nothing else uses `reader` while `f` runs.
    let ptr: *mut (dyn StateReader + 'static) = unsafe { std::mem::transmute(ptr) };
    shared.reader.set(Some(ptr));
    shared
        .interp
        .set(interp.map_or(std::ptr::null(), |i| i as *const Interpreter));
    let out = f(shared);
    shared.interp.set(std::ptr::null());
    shared.reader.set(None);
    out
}

fn call_kind(scheme: CallScheme) -> &'static str {
    match scheme {
        CallScheme::Call => "CALL",
        CallScheme::CallCode => "CALLCODE",
        CallScheme::DelegateCall => "DELEGATECALL",
        CallScheme::StaticCall => "STATICCALL",
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for JsTracer {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if !self.live() {
            return;
        }
        let op = interp.bytecode.opcode();
        self.journal_at = ctx.journaled_state.inner.journal.len();
        if let Some(f) = self.frames.last_mut() {
            f.last = LastStep {
                op,
                stack_len: interp.stack.len(),
                returned: op == 0xf3,
            };
            f.last_refund = interp.gas.refunded();
        }
        if op == 0xff && self.has_frames {
            let contract = interp.input.target_address;
            if let Some(top) = interp.stack.data().last() {
                let beneficiary = Address::from_word(B256::from(top.to_be_bytes::<32>()));
                let mut view = StateView {
                    state: &ctx.journaled_state.inner.state,
                    db: &mut ctx.journaled_state.database,
                };
                let balance = view.balance(contract);
                self.pending_selfdestruct = Some((contract, beneficiary, balance));
            }
        }
        if self.has_step {
            self.capture(interp, op);
            self.pre.capture(interp, ctx);
        }
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if !self.live() {
            return;
        }
        if !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD) {
            if let (Some(f), Some(out)) = (self.frames.last_mut(), returned_output(interp)) {
                if f.create {
                    f.returned = Some(out.clone());
                }
            }
        }
        let (op, stack_len, gas_before) = if self.has_step {
            let s = self.shared.step.borrow();
            (s.op, s.stack_len, s.gas)
        } else {
            let last = self.frames.last().map(|f| f.last).unwrap_or_default();
            (last.op, last.stack_len, 0)
        };
        let end = classify(interp, op, stack_len);
        if self.has_step {
            // geth's cost and error for a step that failed before executing.
            let failure = match &end {
                OpEnd::Before(_) => {
                    let last = self.frames.last().map(|f| f.last).unwrap_or_default();
                    self.pre.failure(interp, ctx, last)
                }
                _ => None,
            };
            {
                let mut s = self.shared.step.borrow_mut();
                match &end {
                    OpEnd::Before(e) => {
                        let (cost, error) = failure
                            .unwrap_or_else(|| (u64::from(self.gas_table[op as usize]), e.clone()));
                        s.cost = cost;
                        s.error = Some(error);
                    }
                    _ => {
                        let mut cost = gas_before.saturating_sub(interp.gas.remaining());
                        // geth's CREATE cost excludes the gas handed to the new frame.
                        if let Some(InterpreterAction::NewFrame(FrameInput::Create(c))) =
                            interp.bytecode.action()
                        {
                            cost = cost.saturating_sub(c.gas_limit());
                        }
                        s.cost = cost;
                        s.error = None;
                    }
                }
            }
            self.with_host(Some(interp), ctx, Hook::Step);
        }
        if let OpEnd::During(e) = end {
            if !self.has_step {
                self.capture(interp, op);
            }
            self.shared.step.borrow_mut().error = Some(e);
            if self.live() {
                self.with_host(Some(interp), ctx, Hook::Fault);
            }
        }
        if let Some((from, to, value)) = self.pending_selfdestruct.take() {
            let done = matches!(
                interp.bytecode.action(),
                Some(InterpreterAction::Return(r)) if r.result == InstructionResult::SelfDestruct
            );
            if done {
                self.enter(
                    ctx,
                    objects::FrameData {
                        kind: "SELFDESTRUCT",
                        from,
                        to,
                        input: Bytes::new(),
                        gas: 0,
                        value: Some(value),
                    },
                );
                self.exit(ctx, objects::FrameResultData::default());
            }
        }
    }

    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if !self.live() {
            return None;
        }
        let (from, to) = match inputs.scheme {
            CallScheme::Call | CallScheme::StaticCall => (inputs.caller, inputs.target_address),
            CallScheme::CallCode | CallScheme::DelegateCall => {
                (inputs.target_address, inputs.bytecode_address)
            }
        };
        let input = inputs.input.bytes(ctx);
        if self.frames.is_empty() {
            self.top.to = to;
        } else {
            let value = (inputs.scheme != CallScheme::StaticCall).then(|| inputs.value.get());
            self.enter(
                ctx,
                objects::FrameData {
                    kind: call_kind(inputs.scheme),
                    from,
                    to,
                    input: input.clone(),
                    gas: inputs.gas_limit,
                    value,
                },
            );
        }
        self.push_frame(input, false);
        None
    }

    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        if !self.live() {
            return;
        }
        let r = &outcome.result;
        let (result, output, remaining) = (r.result, r.output.clone(), r.gas.remaining());
        if let Some(e) = failed_precompile_frame(ctx, inputs, result) {
            if let Some(f) = self.frames.last_mut() {
                f.error = Some(e);
            }
        }
        self.close(ctx, result, &output, inputs.gas_limit, remaining, false);
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        if !self.live() {
            return None;
        }
        let nonce = ctx
            .journaled_state
            .inner
            .state
            .get(&inputs.caller())
            .map(|a| a.info.nonce)
            .unwrap_or(0);
        let to = inputs.created_address(nonce);
        if self.frames.is_empty() {
            self.top.create = true;
            self.top.to = to;
        } else {
            let kind = match inputs.scheme() {
                CreateScheme::Create2 { .. } => "CREATE2",
                _ => "CREATE",
            };
            self.enter(
                ctx,
                objects::FrameData {
                    kind,
                    from: inputs.caller(),
                    to,
                    input: inputs.init_code().clone(),
                    gas: inputs.gas_limit(),
                    value: Some(inputs.value()),
                },
            );
        }
        self.push_frame(Bytes::new(), true);
        None
    }

    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        if !self.live() {
            return;
        }
        if self.frames.len() == 1 {
            if let Some(a) = outcome.address {
                self.top.to = a;
            }
        }
        let r = &outcome.result;
        let (result, output, remaining) = (r.result, r.output.clone(), r.gas.remaining());
        self.close(ctx, result, &output, inputs.gas_limit(), remaining, true);
    }
}
