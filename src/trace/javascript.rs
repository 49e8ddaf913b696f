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

mod inspect;

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::context::{BlockEnv, TxEnv};
use revm::interpreter::instructions::gas_table_spec;
use revm::interpreter::{GasTable, InstructionResult, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;
use revm::Database;

use super::errors::{
    frontier_deposit_oog, geth_error, returns_gas, LastStep, CODE_STORE_OUT_OF_GAS,
};
use super::state::{BeforeOpcode, PreOp, StateReader, StateView, Undo};
use super::Ctx;
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
