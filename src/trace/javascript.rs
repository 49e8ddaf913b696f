//! A JavaScript tracer (geth's JS tracer API) as a revm inspector: what it records of the run
//! and when it hands the JavaScript host (`crate::js`) a hook to call. Hook order follows
//! geth's interpreter:
//!
//! - `step(log, db)` for every opcode, delivered in revm's `step_end` because only then is the
//!   opcode's cost known; `log` shows the state *before* the opcode (see `js/objects.rs`). An
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

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::bytecode::opcode::{
    OpCode, CALLDATACOPY, CODECOPY, EXTCODECOPY, MCOPY, MSTORE, MSTORE8, RETURNDATACOPY,
    SELFDESTRUCT,
};
use revm::context::{BlockEnv, TxEnv};
use revm::interpreter::instructions::gas_table_spec;
use revm::interpreter::{
    interpreter_types::{Jumps, LoopControl, MemoryTr},
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, FrameInput, GasTable,
    InstructionResult, Interpreter, InterpreterAction,
};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;
use revm::{Database, Inspector};

use super::call::CallKind;
use super::errors::{
    fails_before_execution, frontier_deposit_oog, geth_error, returned_output, returns_gas,
    LastStep, CODE_STORE_OUT_OF_GAS,
};
use super::precompile_error::failed_precompile_frame;
use super::state::{BeforeOpcode, Ctx, PreOp, StateReader, StateView, Undo};
use crate::js::{
    call_with, FrameData, FrameResultData, Hook, Host, JsSpec, JsTracerError, Shared, TxContext,
};

/// `db` reads the state the tracer points it at: the journal's accounts over the database, with
/// the current opcode's changes undone in `step` and `fault`.
impl<R: StateReader + ?Sized> crate::js::Db for R {
    fn balance(&mut self, a: Address) -> U256 {
        StateReader::balance(self, a)
    }
    fn nonce(&mut self, a: Address) -> u64 {
        StateReader::nonce(self, a)
    }
    fn code(&mut self, a: Address) -> Bytes {
        StateReader::code(self, a)
    }
    fn storage(&mut self, a: Address, slot: U256) -> U256 {
        StateReader::storage(self, a, slot)
    }
    fn exists(&mut self, a: Address) -> bool {
        StateReader::exists(self, a)
    }
}

struct Frame {
    /// The enclosing frame's last step and refund while this one runs (the tracer's own are
    /// this frame's), given back when it closes.
    parent_last: LastStep,
    parent_refund: i64,
    create: bool,
    /// What a CREATE frame's RETURN handed back, kept only before Homestead.
    returned: Option<Bytes>,
    /// geth's error where revm's does not say enough (a precompile's own reason).
    error: Option<String>,
    /// Refunds of the enclosing frames, so `getRefund()` is transaction-wide like geth's.
    refund_base: i64,
    input: Bytes,
}

#[derive(Default)]
struct Top {
    create: bool,
    to: Address,
    output: Bytes,
    error: Option<String>,
}

/// The inspector running one JavaScript tracer over one transaction.
pub struct JsTracer {
    host: Option<Host>,
    shared: Rc<Shared>,
    error: Option<JsTracerError>,
    has_step: bool,
    /// Whether each step's pc, op, gas, cost, depth, refund and error are kept for `log`
    /// (not for native hooks that read none of them).
    step_fields: bool,
    has_frames: bool,
    /// Whether `capture` fills the stack, memory and contract views (and `db` may be read in
    /// `step`/`fault`): false when the hooks were compiled to native code, which can read
    /// none of them, even after a deoptimisation hands the same functions to boa.
    views: bool,
    /// `step`'s leading statements returned for the current opcode before it ran (decided from
    /// what is known then: see `js/fast/guard.rs`), so neither its views nor its call are needed.
    skip: bool,
    /// `fault` reads none of the views (it compiled to native code), so a skipped step needs
    /// none even when the opcode faults.
    fault_plain: bool,
    /// `step` or `fault` may read `db`, which then needs the journal's length before each
    /// opcode (`journal_at`).
    db_in_hooks: bool,
    frames: Vec<Frame>,
    /// The current frame's last opcode before it ran, and its refund counter then: kept here,
    /// not in the frame, as the one per-opcode write a script without `step` costs.
    last: LastStep,
    last_refund: i64,
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

impl JsTracer {
    /// A fresh tracer for one transaction under fork `spec`, on the host [`JsSpec::host`]
    /// gives (or, when it gives none, the error every hook then ends with).
    pub fn new(js: &JsSpec, spec: SpecId) -> Self {
        let (host, error) = match js.host(spec) {
            Ok(h) => (Some(h), None),
            Err(e) => (None, Some(e)),
        };
        let shared = host
            .as_ref()
            .map_or_else(Shared::new, |h| h.shared().clone());
        let has_step = host.as_ref().is_some_and(Host::has_step);
        let views = host.as_ref().is_none_or(Host::needs_views);
        let step_fields = host.as_ref().is_none_or(Host::needs_step_fields);
        let fault_plain = host.as_ref().is_some_and(Host::fault_plain);
        JsTracer {
            has_step,
            step_fields,
            has_frames: host.as_ref().is_some_and(Host::has_frames),
            views,
            skip: false,
            fault_plain,
            db_in_hooks: views && (has_step || !fault_plain),
            host,
            shared,
            error,
            frames: Vec::new(),
            last: LastStep::default(),
            last_refund: 0,
            frame_id: 0,
            gas_table: gas_table_spec(spec),
            pending_selfdestruct: None,
            journal_at: 0,
            undo: Undo::default(),
            pre: PreOp::default(),
            top: Top::default(),
            timed_out: js.timeout_flag(),
        }
    }

    /// Precompiles the chain adds to the fork's (an OP block's `p256Verify`): `isPrecompiled`
    /// counts them too.
    pub fn with_precompiles(&mut self, addrs: &[alloy_primitives::Address]) {
        if let (Some(h), false) = (self.host.as_mut(), addrs.is_empty()) {
            h.add_precompiles(addrs);
        }
    }

    /// Runs `f` with the host objects pointed at this hook's interpreter and state.
    ///
    /// `step` and `fault` run after the opcode: their `db` undoes what it changed (the journal
    /// entries it pushed since `journal_at`), so they see the state before it, as in geth.
    #[inline]
    fn with_host<DB: Database>(
        &mut self,
        interp: Option<&Interpreter>,
        ctx: &mut Ctx<DB>,
        hook: Hook,
    ) {
        let Some(host) = self.host.as_mut() else {
            return;
        };
        // Native hooks read neither the interpreter nor the state, unless they read the views
        // (then they run as boa's calls do, with the interpreter at hand).
        if host.fast_needs_interp() {
            return self.with_boa(interp, ctx, hook);
        }
        if let Some(r) = host.try_fast(hook) {
            if let Err(e) = r {
                self.fail(e);
            }
            return;
        }
        self.with_boa(interp, ctx, hook);
    }

    /// [`with_host`](Self::with_host) for a hook boa runs.
    #[inline(never)]
    fn with_boa<DB: Database>(
        &mut self,
        interp: Option<&Interpreter>,
        ctx: &mut Ctx<DB>,
        hook: Hook,
    ) {
        let Some(host) = self.host.as_mut() else {
            return;
        };
        // A `step` whose leading statements return, now that cost and error are known.
        if hook == Hook::Step && host.guard_skips(false) {
            return;
        }
        let journal = &ctx.journaled_state.inner.journal;
        let mut view = StateView {
            state: &ctx.journaled_state.inner.state,
            db: &mut ctx.journaled_state.database,
        };
        let opcode_wrote = self.views
            && matches!(hook, Hook::Step | Hook::Fault)
            && journal.len() > self.journal_at;
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

    fn fail(&mut self, e: JsTracerError) {
        if e.timed_out() {
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
            .map(|f| f.refund_base + self.last_refund)
            .unwrap_or(0);
        self.frames.push(Frame {
            parent_last: std::mem::take(&mut self.last),
            parent_refund: std::mem::take(&mut self.last_refund),
            create,
            returned: None,
            error: None,
            refund_base,
            input,
        });
        self.frame_id += 1;
    }

    fn enter<DB: Database>(&mut self, ctx: &mut Ctx<DB>, f: FrameData) {
        if self.has_frames && self.live() {
            *self.shared.frame.borrow_mut() = f;
            self.with_host(None, ctx, Hook::Enter);
        }
    }

    fn exit<DB: Database>(&mut self, ctx: &mut Ctx<DB>, r: FrameResultData) {
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
        let last = std::mem::replace(&mut self.last, f.parent_last);
        self.last_refund = f.parent_refund;
        let mut error = match f.error {
            Some(e) if !result.is_ok_or_revert() => Some(e),
            _ => geth_error(result, last, is_create),
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
            FrameResultData {
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
    ) -> Result<Box<serde_json::value::RawValue>, JsTracerError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let Some(mut host) = self.host.take() else {
            return Err(JsTracerError::NotInitialised);
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
        if r.as_ref().is_err_and(JsTracerError::timed_out) {
            self.timed_out.store(true, Ordering::Relaxed);
        }
        r
    }
}

// ---- The inspector: what each hook records and when the tracer's functions are called.
//
// The per-opcode path is kept to what the script needs. Every `step` notes the opcode, its
// pc, gas, depth and refund. The views (`log.stack`, `log.memory`, `log.contract`: the stack
// items and memory bytes the opcode will consume or overwrite), the journal's length (for a
// `db` read in `step` or `fault`) and the inputs for pricing a failed step are kept only when
// the script can read them: not when its hooks run natively, and not for an opcode whose
// `step` is known to return at once (`js/fast/guard.rs`). In `step_end` an opcode that ran
// normally costs a subtraction and the hook; halts, returns and new frames take the long
// way.

/// How an opcode ended, as geth's interpreter distinguishes it.
enum OpEnd {
    Ok,
    /// Failed before executing: `step` carries the error, no `fault`.
    Before(String),
    /// Failed while executing: `step`, then `fault`.
    During(String),
}

/// The memory range an opcode overwrites, from its (pre-execution) stack.
fn memory_write(op: u8, stack: &[U256]) -> Option<(usize, usize)> {
    let top = |i: usize| stack.len().checked_sub(i + 1).map(|j| stack[j]);
    let as_usize = |v: U256| usize::try_from(v).unwrap_or(usize::MAX);
    let (dest, size) = match op {
        MSTORE => (top(0)?, U256::from(32)),
        MSTORE8 => (top(0)?, U256::from(1)),
        CALLDATACOPY | CODECOPY | RETURNDATACOPY | MCOPY => (top(0)?, top(2)?),
        EXTCODECOPY => (top(1)?, top(3)?),
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
    /// Notes the opcode about to run: pc, op, gas, depth, refund and stack height.
    #[inline]
    fn capture(&mut self, interp: &Interpreter, op: u8, stack_len: usize) {
        let depth = self.frames.len() as u64;
        let base = self.frames.last().map_or(0, |f| f.refund_base);
        let mut s = self.shared.step.borrow_mut();
        s.pc = interp.bytecode.pc() as u64;
        s.op = op;
        s.gas = interp.gas.remaining();
        s.depth = depth;
        s.refund = (base + interp.gas.refunded()).max(0) as u64;
        s.stack_len = stack_len;
    }

    /// Keeps what `log.stack`, `log.memory` and `log.contract` show of the state before the
    /// opcode: the stack items it consumes, the memory bytes it overwrites, the frame.
    #[inline(never)]
    fn capture_views(&mut self, interp: &Interpreter, op: u8) {
        let frame_input = match self.frames.last() {
            Some(f) => &f.input,
            None => &Bytes::new(),
        };
        let mut s = self.shared.step.borrow_mut();
        let stack = interp.stack.data();
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

    /// `step` of a script with a `step` function: what its call in `step_end` needs.
    #[inline]
    fn before_step<DB: Database>(
        &mut self,
        interp: &Interpreter,
        ctx: &Ctx<DB>,
        op: u8,
        stack_len: usize,
    ) {
        if !self.step_fields {
            return;
        }
        self.capture(interp, op, stack_len);
        if !self.views {
            // Native hooks: no views, no `db`; only a failure's price may be asked for.
            self.pre.capture(interp, ctx);
            return;
        }
        self.skip = self.host.as_mut().is_some_and(|h| h.guard_skips(true));
        if !self.skip || !self.fault_plain {
            self.capture_views(interp, op);
        }
        if !self.skip {
            self.pre.capture(interp, ctx);
        }
    }

    /// A SELFDESTRUCT about to run: its frame (contract, beneficiary, balance) is reported
    /// after it ran, if it did.
    #[cold]
    fn stage_selfdestruct<DB: Database>(&mut self, interp: &Interpreter, ctx: &mut Ctx<DB>) {
        let contract = interp.input.target_address;
        if let Some(top) = interp.stack.data().last() {
            let beneficiary = Address::from_word(B256::from(top.to_be_bytes::<32>()));
            let mut view = StateView {
                state: &ctx.journaled_state.inner.state,
                db: &mut ctx.journaled_state.database,
            };
            let balance = crate::trace::state::StateReader::balance(&mut view, contract);
            self.pending_selfdestruct = Some((contract, beneficiary, balance));
        }
    }

    /// `step_end` of an opcode that ended, failed, or started a frame (revm set an action).
    #[inline(never)]
    fn step_end_action<DB: Database>(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        let (op, stack_len, gas_before) = if self.has_step && self.step_fields {
            let s = self.shared.step.borrow();
            (s.op, s.stack_len, s.gas)
        } else {
            (self.last.op, self.last.stack_len, 0)
        };
        let end = classify(interp, op, stack_len);
        if self.has_step && !self.skip {
            // geth's cost and error for a step that failed before executing.
            let failure = match &end {
                OpEnd::Before(_) => self.pre.failure(interp, ctx, self.last),
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
                let stack_len = interp.stack.len();
                self.capture(interp, op, stack_len);
                if self.views {
                    self.capture_views(interp, op);
                }
            }
            {
                let mut s = self.shared.step.borrow_mut();
                if self.has_step && self.skip {
                    // The step's own call was skipped: its cost was never set.
                    s.cost = gas_before.saturating_sub(interp.gas.remaining());
                }
                s.error = Some(e);
            }
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
                    FrameData {
                        kind: OpCode::SELFDESTRUCT,
                        from,
                        to,
                        input: Bytes::new(),
                        gas: 0,
                        value: Some(value),
                    },
                );
                self.exit(ctx, FrameResultData::default());
            }
        }
    }
}

impl JsTracer {
    /// `step`'s rarer work: a SELFDESTRUCT's frame staged, the journal's length for `db`.
    #[inline(never)]
    fn step_more<DB: Database>(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, op: u8) {
        if op == SELFDESTRUCT && self.has_frames {
            self.stage_selfdestruct(interp, ctx);
        }
        if self.db_in_hooks {
            self.journal_at = ctx.journaled_state.inner.journal.len();
        }
    }

    /// `step_end` of an opcode with more to do than the script's `step`: a pre-Homestead
    /// CREATE's returned code kept, a halt, return or new frame, a staged SELFDESTRUCT.
    #[inline(never)]
    fn step_end_more<DB: Database>(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD) {
            if let (Some(f), Some(out)) = (self.frames.last_mut(), returned_output(interp)) {
                if f.create {
                    f.returned = Some(out.clone());
                }
            }
        }
        if interp.bytecode.action().is_some() || self.pending_selfdestruct.is_some() {
            self.step_end_action(interp, ctx);
            return;
        }
        self.step_end_step(interp, ctx);
    }

    /// The opcode ran and the frame goes on: its cost, then `step`.
    #[inline(always)]
    fn step_end_step<DB: Database>(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if self.has_step && !self.skip {
            if self.step_fields {
                let mut s = self.shared.step.borrow_mut();
                s.cost = s.gas.saturating_sub(interp.gas.remaining());
                if s.error.is_some() {
                    s.error = None;
                }
            }
            self.with_host(Some(interp), ctx, Hook::Step);
        }
    }
}

/// A script without `step` needs no per-opcode hook: its frames run plain, and only the opcode
/// that ends a run is noted (with the journal's length, for a `db` read in `fault`), and a
/// SELFDESTRUCT staged. So does a `step` run natively that reads nothing of the opcode and no
/// view (nor can fall back to boa, which might): `step_end` calls it after each opcode, the
/// last one's error and cost known as usual.
impl crate::trace::plain::Plain for JsTracer {
    #[inline]
    fn plain(&self) -> bool {
        self.live() && (!self.has_step || !(self.step_fields || self.views || self.db_in_hooks))
    }
    #[inline]
    fn plain_step_ends(&self) -> bool {
        self.has_step
    }
    fn ran_plain(&mut self, last: LastStep, refund: i64, journal_at: usize) {
        self.last = last;
        self.last_refund = refund;
        if self.db_in_hooks {
            self.journal_at = journal_at;
        }
    }
}

/// The per-opcode hooks are split so that what every opcode costs (noting it; in `step_end`
/// a few flags) inlines into revm's loop, and the rest is called only when there is more to do:
/// a script without `step` costs a handful of instructions an opcode.
impl<DB: Database> Inspector<Ctx<DB>> for JsTracer {
    #[inline(always)]
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if !self.live() {
            return;
        }
        let op = interp.bytecode.opcode();
        let stack_len = interp.stack.len();
        self.last = LastStep::before(op, stack_len);
        self.last_refund = interp.gas.refunded();
        if op == SELFDESTRUCT || self.db_in_hooks {
            self.step_more(interp, ctx, op);
        }
        if self.has_step {
            self.before_step(interp, ctx, op, stack_len);
        }
    }

    #[inline(always)]
    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        if !self.live() {
            return;
        }
        if interp.bytecode.action().is_some()
            || self.pending_selfdestruct.is_some()
            || !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD)
        {
            self.step_end_more(interp, ctx);
        } else {
            self.step_end_step(interp, ctx);
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
        // The call data is read by `enter` (`frame.getInput()`) and `log.contract.getInput()`.
        let input = if self.has_frames || self.views {
            inputs.input.bytes(ctx)
        } else {
            Bytes::new()
        };
        if self.frames.is_empty() {
            self.top.to = to;
        } else {
            let value = (inputs.scheme != CallScheme::StaticCall).then(|| inputs.value.get());
            self.enter(
                ctx,
                FrameData {
                    kind: CallKind::of_call(inputs.scheme).opcode(),
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
            self.enter(
                ctx,
                FrameData {
                    kind: CallKind::of_create(inputs.scheme()).opcode(),
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
