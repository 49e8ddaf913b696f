//! Checkpoints of a running transaction: a step debugger's view of any step replays from the
//! nearest one before it instead of from the transaction's start (a 30M-gas transaction runs
//! millions of steps; a view must answer within 50 ms).
//!
//! revm cannot stop a frame half-way and go on later, so the recording run is driven here. The
//! exec loop is revm's ([`InspectorHandler::inspect_run_exec_loop`], frame by frame through
//! [`inspect_instructions`]) with one difference: when the [`StepRecorder`] pauses before a step
//! (it returns from the interpreter without running it, [`StepRecorder::pause_before`]), the
//! loop copies the machine — the journal, every open frame with its interpreter, their shared
//! memory copied out of its buffer, the recorder's own state — and runs the same frame on from
//! that step. A view resumes from a copy: the journal and the frames restored into a new EVM on
//! a fresh database with the same pre-state, the same loop run on from the top frame, the
//! recorder capturing its step and halting the rest.
//!
//! The copies are bounded: one every [`Checkpoints::spacing`] steps, and when their bytes pass
//! the budget every other one is dropped and the spacing doubled (a view then replays further,
//! never past the budget). A chain whose precompiles are spliced from the node
//! ([`super::splice`]) keeps its splicer's state outside the machine: it gets no checkpoints, and
//! its views replay from the start.

use std::cell::RefCell;
use std::collections::HashSet;
use std::convert::Infallible;
use std::mem::size_of;
use std::rc::Rc;
use std::sync::Arc;

use alloy_primitives::{Bytes, Log, B256, U256};
use revm::bytecode::Bytecode;
use revm::context::result::{EVMError, ExecResultAndState, HaltReason};
use revm::context::{ContextSetters, FrameStack, JournalInner};
use revm::context_interface::journaled_state::JournalCheckpoint;
use revm::handler::{
    EthFrame, EvmTr, FrameData, FrameResult, Handler, ItemOrResult, MainBuilder, MainnetEvm,
};
use revm::inspector::handler::frame_end;
use revm::inspector::{inspect_instructions, InspectorEvmTr, InspectorHandler};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter::{ExtBytecode, ReturnDataImpl, RuntimeFlags, Stack};
use revm::interpreter::interpreter_action::FrameInit;
use revm::interpreter::interpreter_types::{Jumps, ReturnData};
use revm::interpreter::{FrameInput, Gas, InputsImpl, Interpreter, SharedMemory};
use revm::state::EvmState;
use revm::{ExecuteEvm, JournalEntry};

use super::traced::{Finishes, Run};
use super::{
    op_precompiles, splice, tx_rules, Ended, EvmCtx, EvmEnv, ReplayError, ReplayTx, TxOutcome,
};
use crate::source::ReplayDb;
use crate::trace::steps::{RecorderCheckpoint, StepRecorder, Stepped};
use crate::trace::Alone;

/// Steps between two checkpoints to begin with: a view replays at most this many steps
/// (~10 ms in a release build).
pub const SPACING: u32 = 1 << 17;

/// Bytes the checkpoints of one transaction may hold together.
pub const BUDGET: usize = 24 << 20;

/// The machine before one step.
pub struct Machine {
    step: u32,
    /// The journal without its entries and logs, which are `entries` and `logs`.
    journal: JournalInner<JournalEntry>,
    entries: Chunked<JournalEntry>,
    logs: Chunked<Log>,
    /// The open frames, outermost first, their memory left out.
    frames: Vec<FrameCopy>,
    /// The memory all open frames share, and where each frame's own begins in it.
    memory: Vec<u8>,
    offsets: Vec<usize>,
    recorder: RecorderCheckpoint,
    bytes: usize,
}

impl Machine {
    /// The recorder as it stood there.
    pub fn recorder(&self) -> &RecorderCheckpoint {
        &self.recorder
    }
}

/// Entries kept in chunks shared between checkpoints. A journal's entries and its logs only
/// grow, or shrink back when a frame reverts; the chunks below the lowest length seen since the
/// checkpoint before are that checkpoint's, shared, so the checkpoints of a transaction hold its
/// entries about once, not once each.
struct Chunked<T> {
    chunks: Vec<Arc<[T]>>,
    /// How many of the first chunks are the checkpoint before's.
    shared: usize,
}

impl<T: Clone> Chunked<T> {
    /// `live` in chunks of `chunk` entries, sharing `before`'s full chunks that lie below
    /// `stable` entries (which `live` still holds unchanged).
    fn of(live: &[T], before: Option<&Chunked<T>>, stable: usize, chunk: usize) -> Chunked<T> {
        let stable = stable.min(live.len());
        let mut chunks: Vec<Arc<[T]>> = before
            .into_iter()
            .flat_map(|b| b.chunks.iter())
            .take(stable / chunk)
            .take_while(|c| c.len() == chunk)
            .cloned()
            .collect();
        let shared = chunks.len();
        let mut at = shared * chunk;
        while at < live.len() {
            let end = (at + chunk).min(live.len());
            chunks.push(Arc::from(&live[at..end]));
            at = end;
        }
        Chunked { chunks, shared }
    }

    /// Bytes of the chunks this one does not share with the checkpoint before.
    fn fresh_bytes(&self, each: impl Fn(&T) -> usize) -> usize {
        self.chunks[self.shared..]
            .iter()
            .map(|c| c.iter().map(&each).sum::<usize>())
            .sum()
    }

    fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.chunks.iter().map(|c| c.len()).sum());
        for c in &self.chunks {
            out.extend_from_slice(c);
        }
        out
    }

    /// Bytes of the chunks not already in `seen` (by address), which then holds them.
    fn new_bytes(&self, seen: &mut HashSet<usize>, each: impl Fn(&T) -> usize) -> usize {
        self.chunks
            .iter()
            .filter(|c| seen.insert(c.as_ptr() as usize))
            .map(|c| c.iter().map(&each).sum::<usize>())
            .sum()
    }
}

/// A transaction's checkpoints, in step order (see the module's comment).
pub struct Checkpoints {
    list: Vec<Machine>,
    spacing: u32,
    budget: usize,
    bytes: usize,
    /// Journal entries (and logs) per shared chunk.
    chunk: usize,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints::new(SPACING, BUDGET)
    }
}

impl Checkpoints {
    pub fn new(spacing: u32, budget: usize) -> Checkpoints {
        Checkpoints {
            list: Vec::new(),
            spacing: spacing.max(1),
            budget,
            bytes: 0,
            chunk: 4096,
        }
    }

    /// The same with `n` journal entries (and logs) per shared chunk (tests share tiny ones).
    pub fn with_chunk(mut self, n: usize) -> Checkpoints {
        self.chunk = n.max(1);
        self
    }

    /// Steps between two checkpoints (doubled each time the budget was passed).
    pub fn spacing(&self) -> u32 {
        self.spacing
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Bytes the checkpoints hold, roughly.
    pub fn heap_bytes(&self) -> usize {
        self.bytes
    }

    /// The last checkpoint at or before step `i`.
    pub fn before(&self, i: u32) -> Option<&Machine> {
        let k = self.list.partition_point(|m| m.step <= i);
        k.checked_sub(1).map(|k| &self.list[k])
    }

    /// The step the next checkpoint is taken before, after one at `step`.
    fn next_after(&self, step: u32) -> u32 {
        (step / self.spacing + 1).saturating_mul(self.spacing)
    }

    fn keep(&mut self, m: Machine) {
        // What it shares is the last one's, counted there already.
        self.bytes += m.bytes
            + m.entries.fresh_bytes(|_| size_of::<JournalEntry>())
            + m.logs.fresh_bytes(log_bytes);
        self.list.push(m);
        while self.bytes > self.budget && !self.list.is_empty() {
            // Every other one goes: those off the doubled spacing.
            self.spacing = self.spacing.saturating_mul(2);
            let spacing = self.spacing;
            self.list.retain(|m| m.step % spacing == 0);
            self.bytes = self.count_bytes();
        }
    }

    /// Bytes the checkpoints hold, each shared chunk counted once (again after thinning: a
    /// dropped checkpoint's chunks may live on in the one after it).
    fn count_bytes(&self) -> usize {
        let mut seen = HashSet::new();
        self.list
            .iter()
            .map(|m| {
                m.bytes
                    + m.entries
                        .new_bytes(&mut seen, |_| size_of::<JournalEntry>())
                    + m.logs.new_bytes(&mut seen, log_bytes)
            })
            .sum()
    }
}

fn log_bytes(l: &Log) -> usize {
    size_of::<Log>() + l.data.data.len() + l.topics().len() * 32
}

type StepEvm<'d, 'a> = MainnetEvm<EvmCtx<'d, 'a>, splice::Beside<Alone<StepRecorder>>>;

/// revm's handler with the exec loop below: it copies the machine wherever the recorder pauses.
struct Pausing<'c, 'd, 'a> {
    checkpoints: &'c mut Checkpoints,
    _evm: std::marker::PhantomData<StepEvm<'d, 'a>>,
}

impl<'d, 'a> Handler for Pausing<'_, 'd, 'a> {
    type Evm = StepEvm<'d, 'a>;
    type Error = EVMError<Infallible>;
    type HaltReason = HaltReason;
}

impl<'d, 'a> InspectorHandler for Pausing<'_, 'd, 'a> {
    type IT = EthInterpreter;

    fn inspect_run_exec_loop(
        &mut self,
        evm: &mut StepEvm<'d, 'a>,
        first_frame_input: FrameInit,
    ) -> Result<FrameResult, Self::Error> {
        if let ItemOrResult::Result(r) = evm.inspect_frame_init(first_frame_input)? {
            return Ok(r);
        }
        if evm.inspector.splicer.is_none() {
            evm.inspector.inner.0.pause_before(self.checkpoints.spacing);
        }
        let checkpoints = &mut *self.checkpoints;
        run_frames(evm, |evm| {
            let state = evm.inspector.inner.0.checkpoint();
            let step = state.step;
            let chunk = checkpoints.chunk;
            if let Some(m) = copy(evm, state, checkpoints.list.last(), chunk) {
                checkpoints.keep(m);
            }
            evm.inspector
                .inner
                .0
                .pause_before(checkpoints.next_after(step));
        })
    }
}

/// revm's exec loop from the frames on the stack (`InspectorEvmTr::inspect_frame_run` and
/// `InspectorHandler::inspect_run_exec_loop`), except that a pause of the recorder calls
/// `paused` and runs the same frame on.
fn run_frames(
    evm: &mut StepEvm<'_, '_>,
    mut paused: impl FnMut(&mut StepEvm<'_, '_>),
) -> Result<FrameResult, EVMError<Infallible>> {
    loop {
        let (ctx, inspector, frame, instructions) = evm.ctx_inspector_frame_instructions();
        let action = inspect_instructions(
            ctx,
            &mut frame.interpreter,
            &mut *inspector,
            instructions.instruction_table(),
            instructions.gas_table(),
        );
        if inspector.inner.0.take_paused() {
            drop(action);
            paused(evm);
            continue;
        }
        let mut result = frame.process_next_action::<_, EVMError<Infallible>>(ctx, action);
        if let Ok(ItemOrResult::Result(frame_result)) = &mut result {
            frame_end(ctx, inspector, &frame.input, frame_result);
            frame.set_finished(true);
        }
        let result = match result? {
            ItemOrResult::Item(init) => match evm.inspect_frame_init(init)? {
                ItemOrResult::Item(_) => continue,
                ItemOrResult::Result(r) => r,
            },
            ItemOrResult::Result(r) => r,
        };
        if let Some(r) = evm.frame_return_result(result)? {
            return Ok(r);
        }
    }
}

/// One open frame, its memory apart (revm's frames are not `Clone`: their interpreter's types
/// are not).
struct FrameCopy {
    data: FrameData,
    input: FrameInput,
    depth: usize,
    checkpoint: JournalCheckpoint,
    code: Bytecode,
    code_hash: Option<B256>,
    pc: usize,
    gas: Gas,
    stack: Vec<U256>,
    return_data: Bytes,
    inputs: InputsImpl,
    flags: RuntimeFlags,
}

impl FrameCopy {
    fn of(f: &EthFrame<EthInterpreter>) -> FrameCopy {
        let i = &f.interpreter;
        FrameCopy {
            data: f.data.clone(),
            input: f.input.clone(),
            depth: f.depth,
            checkpoint: f.checkpoint,
            code: Bytecode::clone(&i.bytecode),
            code_hash: i.bytecode.hash(),
            pc: i.bytecode.pc(),
            gas: i.gas,
            stack: i.stack.data().clone(),
            return_data: i.return_data.buffer().clone(),
            inputs: i.input.clone(),
            flags: i.runtime_flag,
        }
    }

    /// The frame again, on `memory`.
    fn frame(&self, memory: SharedMemory) -> EthFrame<EthInterpreter> {
        let mut bytecode = ExtBytecode::new_with_optional_hash(self.code.clone(), self.code_hash);
        bytecode.absolute_jump(self.pc);
        let mut stack = Stack::new();
        for &w in &self.stack {
            // At most the 1,024 words the frame held.
            let pushed = stack.push(w);
            debug_assert!(pushed);
        }
        EthFrame {
            data: self.data.clone(),
            input: self.input.clone(),
            depth: self.depth,
            checkpoint: self.checkpoint,
            interpreter: Interpreter {
                bytecode,
                gas: self.gas,
                stack,
                return_data: ReturnDataImpl(self.return_data.clone()),
                memory,
                input: self.inputs.clone(),
                runtime_flag: self.flags,
                extend: (),
            },
            is_finished: false,
        }
    }

    fn heap_bytes(&self) -> usize {
        512 + self.stack.len() * 32 + self.return_data.len()
    }
}

/// The machine as it stands, paused before the recorder's next step (`None` when its memory is
/// not laid out as revm lays it out, which would be a bug: no checkpoint then).
fn copy(
    evm: &mut StepEvm<'_, '_>,
    recorder: RecorderCheckpoint,
    before: Option<&Machine>,
    chunk: usize,
) -> Option<Machine> {
    let j = &evm.ctx.journaled_state.inner;
    // The lowest lengths since the checkpoint before (its own lengths at most).
    let (low_entries, low_logs) = evm
        .inspector
        .inner
        .0
        .take_journal_lows((j.journal.len(), j.logs.len()));
    let entries = Chunked::of(&j.journal, before.map(|b| &b.entries), low_entries, chunk);
    let logs = Chunked::of(&j.logs, before.map(|b| &b.logs), low_logs, chunk);
    let journal = JournalInner {
        state: j.state.clone(),
        transient_storage: j.transient_storage.clone(),
        logs: Vec::new(),
        depth: j.depth,
        journal: Vec::new(),
        transaction_id: j.transaction_id,
        cfg: j.cfg.clone(),
        warm_addresses: j.warm_addresses.clone(),
        selfdestructed_addresses: j.selfdestructed_addresses.clone(),
    };
    let stack = &mut evm.frame_stack;
    let top = stack.index()?;
    // Each frame read from the top down, then the stack's index put back: every slot below it
    // holds its frame still.
    let mut frames = Vec::with_capacity(top + 1);
    let mut lens = Vec::with_capacity(top + 1);
    let mut memory = Vec::new();
    for k in (0..=top).rev() {
        let f = stack.get();
        frames.push(FrameCopy::of(f));
        lens.push(f.interpreter.memory.len());
        if k == 0 {
            memory = f.interpreter.memory.context_memory().to_vec();
        }
        stack.pop();
    }
    let token = stack.start_init().consume();
    // SAFETY: slot 0 holds the outermost frame (`init` is true), so the token says so.
    unsafe { stack.end_init(token) };
    for _ in 0..top {
        let token = stack.get_next().consume();
        // SAFETY: the slot above the index holds the next open frame, initialized.
        unsafe { stack.push(token) };
    }
    frames.reverse();
    lens.reverse();
    // Every frame's memory is the tail of one buffer from its own start: the outermost's from 0.
    let full = memory.len();
    let offsets: Option<Vec<usize>> = lens.iter().map(|&own| full.checked_sub(own)).collect();
    let offsets = offsets?;
    if offsets.windows(2).any(|w| w[0] > w[1]) || offsets.first() != Some(&0) {
        return None;
    }
    let bytes = journal_bytes(&journal)
        + memory.len()
        + frames.iter().map(FrameCopy::heap_bytes).sum::<usize>()
        + recorder.heap_bytes();
    Some(Machine {
        step: recorder.step,
        journal,
        entries,
        logs,
        frames,
        memory,
        offsets,
        recorder,
        bytes,
    })
}

/// Bytes a journal holds besides its entries and logs, roughly.
fn journal_bytes(j: &JournalInner<JournalEntry>) -> usize {
    let accounts: usize = j.state.values().map(|a| 256 + a.storage.len() * 128).sum();
    accounts + j.transient_storage.len() * 96
}

/// The frames of `m` with their memory restored into `buffer` (the context's own: a CALL's input
/// is read from it by range), each frame a child of the one before from its own offset, as revm
/// made them.
fn restore_frames(
    m: &Machine,
    buffer: Rc<RefCell<Vec<u8>>>,
) -> FrameStack<EthFrame<EthInterpreter>> {
    buffer.borrow_mut().clear();
    let mut memory = SharedMemory::new_with_buffer(buffer.clone());
    let n = m.frames.len();
    let mut frames = Vec::with_capacity(n);
    for (j, f) in m.frames.iter().enumerate() {
        let end = m.offsets.get(j + 1).copied().unwrap_or(m.memory.len());
        let from = buffer.borrow().len();
        buffer.borrow_mut().extend_from_slice(&m.memory[from..end]);
        let own = match j + 1 < n {
            true => {
                let child = memory.new_child_context();
                std::mem::replace(&mut memory, child)
            }
            false => std::mem::replace(&mut memory, SharedMemory::invalid()),
        };
        frames.push(f.frame(own));
    }
    let mut stack = FrameStack::new();
    let mut frames = frames.into_iter();
    if let Some(first) = frames.next() {
        let mut slot = stack.start_init();
        slot.get(|| first);
        let token = slot.consume();
        // SAFETY: the token is the one `start_init` gave for this stack's first slot, now set.
        unsafe { stack.end_init(token) };
        for f in frames {
            let mut slot = stack.get_next();
            slot.get(|| f);
            let token = slot.consume();
            // SAFETY: the token is the one `get_next` gave for the slot above the top, now set.
            unsafe { stack.push(token) };
        }
    }
    stack
}

/// Builds the EVM a step run uses, as [`super::traced`]'s `inspect` builds any tracer's.
fn step_evm<'d, 'a>(
    db: &'d mut ReplayDb<'a>,
    env: &EvmEnv,
    cfg: revm::context::CfgEnv,
    recorder: StepRecorder,
) -> StepEvm<'d, 'a> {
    let mut evm = EvmCtx::new(db, env.spec)
        .with_block(env.block.clone())
        .with_cfg(cfg)
        .build_mainnet_with_inspector(splice::Beside::new(env, Alone(recorder)));
    op_precompiles::install(&mut evm.precompiles, env);
    evm
}

/// A recording run that keeps checkpoints: [`super::traced::run`]'s tracer.
struct Recording {
    pub recorder: StepRecorder,
    pub checkpoints: Checkpoints,
}

impl Finishes for Recording {
    type Out = (Stepped, Checkpoints);

    fn inspect(
        mut self,
        db: &mut ReplayDb<'_>,
        env: &EvmEnv,
        cfg: revm::context::CfgEnv,
        tx: &ReplayTx,
        refused: bool,
    ) -> (Run, Self) {
        let mut evm = step_evm(db, env, cfg, self.recorder);
        let run = (!refused).then(|| {
            evm.set_tx(tx.env.clone());
            let mut handler = Pausing {
                checkpoints: &mut self.checkpoints,
                _evm: std::marker::PhantomData,
            };
            let out = handler.inspect_run(&mut evm);
            let state: EvmState = evm.finalize();
            out.map(|o| ExecResultAndState::new(o, state))
        });
        self.recorder = evm.into_inspector().finish().0;
        (run, self)
    }

    fn vaults(&self) -> tx_rules::Vaults {
        tx_rules::Vaults::InCache
    }

    fn enter_failed_deposit(&mut self) {}

    fn finish(self, _e: &Ended, _db: &mut ReplayDb<'_>) -> Result<Self::Out, ReplayError> {
        Ok((self.recorder.finish(), self.checkpoints))
    }
}

/// Runs `tx` under `recorder` (made by [`StepRecorder::record`]) on `db`, keeping checkpoints
/// spaced and bounded as `checkpoints` says, and commits its state changes.
pub fn record(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    recorder: StepRecorder,
    checkpoints: Checkpoints,
    tx_index: Option<u64>,
) -> Result<(Stepped, Checkpoints, TxOutcome), ReplayError> {
    let recording = Recording {
        recorder,
        checkpoints,
    };
    let ((stepped, checkpoints), outcome) = super::traced::run(db, env, tx, recording, tx_index)?;
    Ok((stepped, checkpoints, outcome))
}

/// Runs the transaction on from checkpoint `m` under `recorder` (made by
/// [`StepRecorder::capture_from`] at `m`), on `db` holding the transaction's pre-state; the
/// transaction's end is not settled (a capture halts the run once it has its step).
pub fn resume(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    tx: &ReplayTx,
    m: &Machine,
    recorder: StepRecorder,
) -> Result<StepRecorder, ReplayError> {
    // The chain's rules change the database before the run (an OP deposit's mint) and give its
    // configuration: the same here, so that what the rest of the run loads is what it loaded.
    let rules = tx_rules::TxRules::before(db, env, tx)?;
    let mut evm = step_evm(db, env, rules.cfg(), recorder);
    evm.set_tx(tx.env.clone());
    let mut journal = m.journal.clone();
    journal.journal = m.entries.to_vec();
    journal.logs = m.logs.to_vec();
    evm.ctx.journaled_state.inner = journal;
    let buffer = evm.ctx.local.shared_memory_buffer.clone();
    evm.frame_stack = restore_frames(m, buffer);
    let out = run_frames(&mut evm, |_| {});
    let recorder = evm.into_inspector().finish().0;
    out.map_err(|e| ReplayError::Tracer(format!("the replay from step {} failed: {e}", m.step)))?;
    Ok(recorder)
}
