//! [`Splicer`], the inspector run beside the tracer: calls into the chain's precompiles
//! answered with the node's frames (or run locally when pure), the corrections written on
//! return from the first spliced frame, and SSTORE priced with the chain's set cost.

use std::collections::VecDeque;
use std::sync::Arc;

use alloy_primitives::Address;
use revm::bytecode::opcode::{DIFFICULTY, SSTORE};
use revm::context_interface::{ContextTr, JournalTr};
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, Gas, InstructionResult, InterpreterResult,
};
use revm::state::EvmState;
use revm::Inspector;

use crate::chain::pure::{self, CallShape, PureOutcome};
use crate::chain::rules::ChainRules;
use crate::trace::call::CallFrame;
use crate::trace::errors::FrameError;

use super::*;

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
    /// PREVRANDAO is known to whole seconds only ([`crate::replay::EvmEnv::prevrandao_guessed`]).
    prevrandao_guessed: bool,
}

impl Splicer {
    /// The splicer for a transaction run in `env` (its chain's rules, and the node's frames
    /// for it when they were fetched).
    pub fn new(env: &crate::replay::EvmEnv) -> Self {
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
            // Why the node gave no frames stands for every pass run after it said so.
            log: SpliceLog {
                opaque_why: splice.and_then(|s| {
                    s.log
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .opaque_why
                        .clone()
                }),
                ..SpliceLog::default()
            },
            sstore: None,
            prevrandao_guessed: env.prevrandao_guessed,
        }
    }

    /// Whether this replay can meet a chain precompile at all.
    pub fn active(&self) -> bool {
        self.rules.is_some()
    }

    /// Whether running it can matter: the chain has precompiles of its own, or a [`Splice`]
    /// waits for what the pass did. Otherwise it is left out of the replay (see [`Beside`]).
    pub fn needed(&self) -> bool {
        self.rules.is_some() || self.splice.is_some()
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
            DIFFICULTY if self.prevrandao_guessed => self.log.prevrandao_read = true,
            SSTORE => {
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
        let result = match &frame.error {
            None => InstructionResult::Return,
            Some(FrameError::Reverted) => InstructionResult::Revert,
            Some(FrameError::Failed(_)) => {
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

/// An inspector with the [`Splicer`] run before it when the replay needs one
/// ([`Splicer::needed`]); on other chains the splicer is absent and costs one branch per hook,
/// not a call per opcode.
pub struct Beside<I> {
    pub splicer: Option<Splicer>,
    pub inner: I,
    /// The request's deadline, in a server worker ([`crate::replay::cancel`]).
    stop: Option<crate::replay::cancel::Stop>,
    /// Runs the frames of a tracer that needs no per-opcode hook ([`crate::trace::plain`]).
    plain: crate::trace::plain::Runner,
}

impl<I> Beside<I> {
    /// `inner`, with the splicer for `env` when it is needed.
    pub fn new(env: &crate::replay::EvmEnv, inner: I) -> Self {
        let s = Splicer::new(env);
        Beside {
            splicer: s.needed().then_some(s),
            inner,
            stop: crate::replay::cancel::Stop::current(),
            plain: Default::default(),
        }
    }

    /// `inner` beside `splicer` where the chain has precompiles of its own ([`Splicer::active`]),
    /// as an untraced pass runs it (`replay::apply`).
    pub fn untraced(splicer: Splicer, inner: I) -> Self {
        Beside {
            splicer: splicer.active().then_some(splicer),
            inner,
            stop: crate::replay::cancel::Stop::current(),
            plain: Default::default(),
        }
    }

    /// Hands the splicer's record to its [`Splice`] and returns the inner inspector.
    pub fn finish(self) -> I {
        if let Some(s) = self.splicer {
            s.finish();
        }
        self.inner
    }
}

/// Forwards each hook to the splicer (when present) and then to the inner inspector, as revm's
/// pair of inspectors does: a call or create either answers is answered, the splicer's first.
/// Without a splicer, a frame of a tracer that needs no per-opcode hook runs plain
/// ([`crate::trace::plain`]) from its first `step`.
impl<CTX, I> Inspector<CTX> for Beside<I>
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState> + revm::inspector::JournalExt>
        + revm::interpreter::Host,
    I: Inspector<CTX> + crate::trace::plain::Plain,
{
    #[inline]
    fn step(&mut self, interp: &mut revm::interpreter::Interpreter, ctx: &mut CTX) {
        if self.splicer.is_none() && self.inner.plain() {
            // The plain run ticks the deadline before every opcode, this one included.
            let spec = revm::context_interface::Cfg::spec(ctx.cfg()).into();
            let stop = &mut self.stop;
            let tick = |interp: &mut revm::interpreter::Interpreter| {
                stop.as_mut().is_some_and(|s| s.tick(interp))
            };
            self.plain.run(interp, ctx, spec, &mut self.inner, tick);
            return;
        }
        if let Some(stop) = &mut self.stop {
            if stop.tick(interp) {
                return;
            }
        }
        if let Some(s) = &mut self.splicer {
            s.step(interp, ctx);
        }
        self.inner.step(interp, ctx);
    }

    #[inline]
    fn step_end(&mut self, interp: &mut revm::interpreter::Interpreter, ctx: &mut CTX) {
        if let Some(s) = &mut self.splicer {
            s.step_end(interp, ctx);
        }
        self.inner.step_end(interp, ctx);
    }

    fn log(&mut self, ctx: &mut CTX, log: revm::primitives::Log) {
        self.inner.log(ctx, log);
    }

    fn log_full(
        &mut self,
        interp: &mut revm::interpreter::Interpreter,
        ctx: &mut CTX,
        log: revm::primitives::Log,
    ) {
        self.inner.log_full(interp, ctx, log);
    }

    fn call(&mut self, ctx: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let first = match &mut self.splicer {
            Some(s) => s.call(ctx, inputs),
            None => None,
        };
        let second = self.inner.call(ctx, inputs);
        first.or(second)
    }

    fn call_end(&mut self, ctx: &mut CTX, inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.inner.call_end(ctx, inputs, outcome);
    }

    fn create(
        &mut self,
        ctx: &mut CTX,
        inputs: &mut revm::interpreter::CreateInputs,
    ) -> Option<revm::interpreter::CreateOutcome> {
        self.inner.create(ctx, inputs)
    }

    fn create_end(
        &mut self,
        ctx: &mut CTX,
        inputs: &revm::interpreter::CreateInputs,
        outcome: &mut revm::interpreter::CreateOutcome,
    ) {
        self.inner.create_end(ctx, inputs, outcome);
    }

    fn selfdestruct(&mut self, contract: Address, target: Address, value: alloy_primitives::U256) {
        self.inner.selfdestruct(contract, target, value);
    }
}
