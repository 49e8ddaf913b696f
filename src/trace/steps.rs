//! Every step of a transaction, kept small enough for a step debugger (`chaintrace debug`).
//!
//! A [`StepLog`] is what a debugger navigates: the pc of each step (two bytes; a pc past 65,534
//! — init code larger than EIP-3860 allows — goes to a side table), which frame each run of
//! steps belongs to, and the frames themselves (kind, addresses, input, code, result). Nothing
//! else is stored per step: a 30M-gas loop of cheap opcodes (~10M steps) costs ~20 MiB.
//!
//! What a debugger shows at one step — the stack, memory, return data, gas, the storage read
//! and written so far, and the internal call stack of every open frame — is not stored: the
//! transaction is run again on the same pre-state with a [`StepRecorder`] in capture mode,
//! which copies it at that step ([`StepView`]) and then halts every frame, so that the rest of
//! the transaction does not run. The recording run pauses every so many steps so that the
//! machine can be copied there (`replay::checkpoint`); a capture then starts from the
//! copy before its step ([`StepRecorder::capture_from`]) instead of the transaction's start.

use std::collections::BTreeMap;
use std::sync::Arc;

use alloy_primitives::{Address, Bytes, U256};
use revm::bytecode::opcode::{JUMP, SLOAD, SSTORE, TLOAD, TSTORE};
use revm::interpreter::interpreter_types::{Jumps, LoopControl, MemoryTr, ReturnData};
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, InstructionResult,
    Interpreter, InterpreterAction, InterpreterResult,
};
use revm::{Database, Inspector};
use rustc_hash::FxHashMap;

use super::call::{create_target, CallKind, FrameSteps};
use super::gas_context::JumpMarks;
use super::state::Ctx;

/// A pc that does not fit the two-byte column (see [`StepLog::pc`]).
const WIDE: u16 = u16::MAX;

/// One external frame of the transaction (a call or a create), in the order they were entered.
#[derive(Clone, Debug)]
pub struct StepFrame {
    /// The frame that made this one (`None` for the transaction's own).
    pub parent: Option<u32>,
    /// 0 for the transaction's frame.
    pub depth: u16,
    pub kind: CallKind,
    /// The account whose storage and balance the code runs on.
    pub address: Address,
    /// The account whose code runs (differs for DELEGATECALL and CALLCODE).
    pub code_address: Address,
    pub caller: Address,
    pub value: U256,
    /// Call data, or a create's init code.
    pub input: Bytes,
    /// The code that ran (empty when none did: a precompile, an account without code).
    pub code: Bytes,
    /// Index of the frame's first step (`end_step` when it ran none).
    pub first_step: u32,
    /// One past the frame's last step, its subframes' steps included.
    pub end_step: u32,
    /// The parent's step that made the call.
    pub call_step: Option<u32>,
    /// How the frame ended: revm's result.
    pub result: InstructionResult,
    pub output: Bytes,
    pub gas_limit: u64,
    pub gas_used: u64,
}

impl StepFrame {
    pub fn success(&self) -> bool {
        self.result.is_ok()
    }

    pub fn reverted(&self) -> bool {
        self.result.is_revert()
    }

    pub fn ran(&self) -> bool {
        self.first_step < self.end_step
    }
}

/// Every step of one transaction: its pc and frame (see the module's comment).
#[derive(Clone, Debug, Default)]
pub struct StepLog {
    pcs: Vec<u16>,
    wide: FxHashMap<u32, u32>,
    /// (first step, frame): the frame running from that step until the next entry's.
    runs: Vec<(u32, u32)>,
    pub frames: Vec<StepFrame>,
}

impl StepLog {
    /// How many steps the transaction ran.
    pub fn len(&self) -> usize {
        self.pcs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pcs.is_empty()
    }

    /// The pc of step `i`.
    pub fn pc(&self, i: usize) -> u32 {
        match self.pcs.get(i) {
            Some(&WIDE) => self.wide.get(&(i as u32)).copied().unwrap_or(WIDE as u32),
            Some(&pc) => pc as u32,
            None => 0,
        }
    }

    /// The frame step `i` ran in.
    pub fn frame(&self, i: usize) -> u32 {
        let at = self.runs.partition_point(|&(s, _)| s as usize <= i);
        at.checked_sub(1).map_or(0, |k| self.runs[k].1)
    }

    /// The opcode of step `i` (from its frame's code).
    pub fn op(&self, i: usize) -> u8 {
        let f = &self.frames[self.frame(i) as usize];
        f.code.get(self.pc(i) as usize).copied().unwrap_or(0)
    }

    /// The JUMPs frame `id` made before step `upto`, each with its destination (the pc of the
    /// frame's next step), as the recorder keeps them ([`FrameSteps::jumps`]): the first `n`.
    pub fn jumps(&self, id: u32, upto: u32, n: usize) -> Vec<(u32, u32)> {
        let mut out = Vec::with_capacity(n);
        let Some(f) = self.frames.get(id as usize) else {
            return out;
        };
        let from = self.runs.partition_point(|&(s, _)| s < f.first_step);
        for (k, &(start, frame)) in self.runs.iter().enumerate().skip(from) {
            if start >= upto || out.len() >= n {
                break;
            }
            if frame != id {
                continue;
            }
            let end = self
                .runs
                .get(k + 1)
                .map_or(self.pcs.len() as u32, |r| r.0)
                .min(upto);
            for i in start..end {
                let pc = self.pc(i as usize);
                if f.code.get(pc as usize) == Some(&JUMP) {
                    // A JUMP that did not end its frame lands in it at the next step.
                    out.push((pc, self.pc(i as usize + 1)));
                    if out.len() >= n {
                        break;
                    }
                }
            }
        }
        out
    }

    /// Bytes the log holds (for the memory bench).
    pub fn heap_bytes(&self) -> usize {
        self.pcs.capacity() * 2
            + self.wide.capacity() * 8
            + self.runs.capacity() * 8
            + self
                .frames
                .iter()
                .map(|f| std::mem::size_of::<StepFrame>() + f.input.len() + f.output.len())
                .sum::<usize>()
    }
}

/// A storage slot as the transaction had used it before the step a [`StepView`] shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotUse {
    /// The value the first SLOAD read, if one read it before any write.
    pub read: Option<U256>,
    /// The last value written.
    pub written: Option<U256>,
}

impl SlotUse {
    /// What was seen of the slot: `read 0x5 wrote 0x7`.
    pub fn describe(&self) -> String {
        let read = self.read.map(|r| format!("read {r:#x}"));
        let written = self.written.map(|w| format!("wrote {w:#x}"));
        [read, written]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One open frame at the step a [`StepView`] shows: its index in [`StepLog::frames`] and where
/// it has been in its code (JUMPs with their arguments, last pcs; its caller's CALL).
#[derive(Clone, Debug)]
pub struct OpenFrame {
    pub frame: u32,
    pub steps: FrameSteps,
}

/// Everything about the machine at one step, before its opcode runs.
#[derive(Clone, Debug, Default)]
pub struct StepView {
    pub step: u32,
    pub pc: u32,
    pub op: u8,
    /// Gas left before the opcode, and what it cost (`None`: it did not finish in this frame).
    pub gas: u64,
    pub cost: Option<u64>,
    pub refund: i64,
    /// Bottom first.
    pub stack: Vec<U256>,
    pub memory: Vec<u8>,
    pub return_data: Bytes,
    /// The open frames, outermost first; the last is the one running the step.
    pub open: Vec<OpenFrame>,
    /// Storage read and written before the step, by account (`transient` apart).
    pub storage: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
    pub transient: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
}

/// What a [`StepRecorder`] found: the log, and in capture mode the view at its step.
#[derive(Clone, Debug, Default)]
pub struct Stepped {
    pub log: StepLog,
    pub view: Option<StepView>,
}

/// A code's jump markers (`None`: no source map covers it).
type Marks = Option<Arc<[u8]>>;

/// What the recorder keeps of the run so far, in every mode: per open frame its steps (JUMPs
/// with the arguments of the internal functions they enter), and the storage read and written.
/// A capture shows it; a checkpoint copies it.
#[derive(Default)]
struct Track {
    marks: Option<Arc<dyn JumpMarks>>,
    /// Marks by code pointer and creation, asked once per code.
    cache: FxHashMap<(usize, bool), Marks>,
    /// Per open frame: its steps, and its marks once known.
    open: Vec<(FrameSteps, Option<Marks>)>,
    storage: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
    transient: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
    /// An SLOAD/TLOAD waiting for its value: (transient, account, slot).
    load: Option<(bool, Address, U256)>,
}

/// A [`StepRecorder`] as it stood before a step, for a run resumed there
/// (`replay::checkpoint`): its open frames with their steps (their JUMPs counted, not
/// copied) and the storage seen so far.
#[derive(Clone, Debug)]
pub struct RecorderCheckpoint {
    pub step: u32,
    /// Open frames (indices into [`StepLog::frames`]), outermost first.
    stack: Vec<u32>,
    /// How many frames had been entered.
    frames: u32,
    /// Per open frame: its steps without their JUMPs, and how many JUMPs it had made.
    open: Vec<(FrameSteps, usize)>,
    storage: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
    transient: BTreeMap<Address, BTreeMap<U256, SlotUse>>,
}

impl RecorderCheckpoint {
    /// Bytes it holds, roughly (for the checkpoints' budget).
    pub fn heap_bytes(&self) -> usize {
        let slots: usize = self
            .storage
            .values()
            .chain(self.transient.values())
            .map(|m| m.len())
            .sum();
        self.stack.len() * 4
            + slots * 120
            + self
                .open
                .iter()
                .map(|(s, _)| 64 * 4 + s.args.iter().map(|(_, w)| 32 * w.len() + 48).sum::<usize>())
                .sum::<usize>()
    }
}

/// The inspector behind a [`StepLog`] and a [`StepView`].
pub struct StepRecorder {
    /// Keep every step's pc and frame in `log` (else only the frames, which capture needs).
    record: bool,
    log: StepLog,
    /// Open frames: indices into `log.frames`.
    stack: Vec<u32>,
    steps: u32,
    track: Box<Track>,
    /// Copy the machine at this step, then halt.
    at: Option<u32>,
    view: Option<StepView>,
    done: bool,
    /// The step before which the run is to pause next (for a checkpoint), and whether it stands
    /// paused there.
    pause_at: Option<u32>,
    paused: bool,
    /// The lowest lengths of the journal's entries and logs seen since the last checkpoint (a
    /// reverted frame drops both back): what lies below is as that checkpoint copied it.
    journal_lows: (usize, usize),
}

impl StepRecorder {
    fn new(record: bool, at: Option<u32>, marks: Option<Arc<dyn JumpMarks>>) -> StepRecorder {
        StepRecorder {
            record,
            log: StepLog::default(),
            stack: Vec::new(),
            steps: 0,
            track: Box::new(Track {
                marks,
                ..Track::default()
            }),
            at,
            view: None,
            done: false,
            pause_at: None,
            paused: false,
            journal_lows: (usize::MAX, usize::MAX),
        }
    }

    /// Records every step's pc and frame; `marks` tell which JUMPs enter and leave internal
    /// functions (kept for checkpoints, see [`StepRecorder::capture`]).
    pub fn record(marks: Option<Arc<dyn JumpMarks>>) -> StepRecorder {
        StepRecorder::new(true, None, marks)
    }

    /// Copies the machine at step `at`; `marks` tell which JUMPs enter and leave internal
    /// functions, so that each open function's arguments are kept.
    pub fn capture(at: u32, marks: Option<Arc<dyn JumpMarks>>) -> StepRecorder {
        StepRecorder::new(false, Some(at), marks)
    }

    /// [`StepRecorder::capture`] for a run resumed at checkpoint `cp` of the transaction whose
    /// steps `log` holds: the recorder as it stood there, each open frame's JUMPs read back from
    /// the log.
    pub fn capture_from(
        cp: &RecorderCheckpoint,
        log: &StepLog,
        at: u32,
        marks: Option<Arc<dyn JumpMarks>>,
    ) -> StepRecorder {
        let mut r = StepRecorder::capture(at, marks);
        r.steps = cp.step;
        r.stack = cp.stack.clone();
        r.log.frames = log.frames[..(cp.frames as usize).min(log.frames.len())].to_vec();
        r.track.storage = cp.storage.clone();
        r.track.transient = cp.transient.clone();
        r.track.open = cp
            .stack
            .iter()
            .zip(&cp.open)
            .map(|(&id, (steps, jumps))| {
                let mut steps = steps.clone();
                steps.jumps = log.jumps(id, cp.step, *jumps);
                (steps, None)
            })
            .collect();
        r
    }

    /// Pauses the run before step `at` (see [`StepRecorder::take_paused`]).
    pub fn pause_before(&mut self, at: u32) {
        self.pause_at = Some(at);
    }

    /// Whether the run paused (the interpreter returned at a step it did not run, to be run
    /// again), clearing it.
    pub fn take_paused(&mut self) -> bool {
        std::mem::take(&mut self.paused)
    }

    /// The lowest lengths of the journal's entries and logs since the last call (or the start),
    /// the current ones `now` included; the next call counts from `now`.
    pub fn take_journal_lows(&mut self, now: (usize, usize)) -> (usize, usize) {
        let (e, l) = self.journal_lows;
        self.journal_lows = now;
        (e.min(now.0), l.min(now.1))
    }

    /// The recorder as it stands, for a run resumed here.
    pub fn checkpoint(&self) -> RecorderCheckpoint {
        RecorderCheckpoint {
            step: self.steps,
            stack: self.stack.clone(),
            frames: self.log.frames.len() as u32,
            open: self
                .track
                .open
                .iter()
                .map(|(s, _)| s.without_jumps())
                .collect(),
            storage: self.track.storage.clone(),
            transient: self.track.transient.clone(),
        }
    }

    /// The log (when recording) and the view (when capturing and the step was reached).
    pub fn finish(self) -> Stepped {
        Stepped {
            log: self.log,
            view: self.view,
        }
    }

    fn open(&mut self, mut frame: StepFrame) {
        frame.parent = self.stack.last().copied();
        frame.depth = self.stack.len() as u16;
        frame.first_step = self.steps;
        frame.end_step = self.steps;
        frame.call_step = frame.parent.map(|_| self.steps.saturating_sub(1));
        let id = self.log.frames.len() as u32;
        self.log.frames.push(frame);
        let open = &mut self.track.open;
        let caller = open
            .last()
            .map(|(s, _): &(FrameSteps, _)| (s.last_pc, s.jumps.len()));
        open.push((FrameSteps::called_from(caller), None));
        self.stack.push(id);
    }

    fn close(&mut self, result: InstructionResult, output: &Bytes, gas_left: u64) {
        let Some(id) = self.stack.pop() else { return };
        let steps = self.steps;
        let f = &mut self.log.frames[id as usize];
        f.end_step = steps;
        f.result = result;
        f.output = output.clone();
        f.gas_used = f.gas_limit.saturating_sub(gas_left);
        self.track.open.pop();
    }
}

fn frame(kind: CallKind, address: Address, code_address: Address, caller: Address) -> StepFrame {
    StepFrame {
        parent: None,
        depth: 0,
        kind,
        address,
        code_address,
        caller,
        value: U256::ZERO,
        input: Bytes::new(),
        code: Bytes::new(),
        first_step: 0,
        end_step: 0,
        call_step: None,
        result: InstructionResult::Stop,
        output: Bytes::new(),
        gas_limit: 0,
        gas_used: 0,
    }
}

/// Every opcode is read: never plain.
impl crate::trace::plain::Plain for StepRecorder {}

impl<DB: Database> Inspector<Ctx<DB>> for StepRecorder {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        let i = self.steps;
        if self.pause_at.is_some() {
            // A checkpoint shares what lies below these with the one before it.
            let j = &ctx.journaled_state.inner;
            let lows = &mut self.journal_lows;
            *lows = (lows.0.min(j.journal.len()), lows.1.min(j.logs.len()));
        }
        if self.pause_at == Some(i) {
            // Return to the loop that drives the run without running this step (nothing of it
            // is recorded): it copies the machine and runs the interpreter on from here.
            self.pause_at = None;
            self.paused = true;
            let gas = interp.gas;
            interp
                .bytecode
                .set_action(InterpreterAction::Return(InterpreterResult::new(
                    InstructionResult::Stop,
                    Bytes::new(),
                    gas,
                )));
            return;
        }
        let pc = interp.bytecode.pc() as u32;
        let Some(&id) = self.stack.last() else { return };
        if i == self.log.frames[id as usize].first_step {
            self.log.frames[id as usize].code = interp.bytecode.original_bytes();
        }
        if self.done || self.at.is_some_and(|at| i > at) {
            // Seen what was asked: the rest of the transaction does not run.
            self.done = true;
            interp.halt(InstructionResult::Stop);
            return;
        }
        if self.record {
            if self.log.runs.last().is_none_or(|&(_, f)| f != id) {
                self.log.runs.push((i, id));
            }
            if pc < WIDE as u32 {
                self.log.pcs.push(pc as u16);
            } else {
                self.log.pcs.push(WIDE);
                self.log.wide.insert(i, pc);
            }
        }
        let Track {
            marks,
            cache,
            open,
            storage,
            transient,
            load,
        } = &mut *self.track;
        let op = interp.bytecode.opcode();
        let data = interp.stack.data();
        let creation = self.log.frames[id as usize].kind.is_create();
        if let Some((steps, _)) = open.last_mut() {
            steps.record(pc);
        }
        let n = data.len();
        if self.at == Some(i) {
            // Its SLOAD's value is the step's own effect, not shown before it.
            *load = None;
            self.view = Some(StepView {
                step: i,
                pc,
                op,
                gas: interp.gas.remaining(),
                cost: None,
                refund: interp.gas.refunded(),
                stack: data.to_vec(),
                memory: interp.memory.slice(0..interp.memory.size()).to_vec(),
                return_data: interp.return_data.buffer().clone(),
                open: self
                    .stack
                    .iter()
                    .zip(open.iter())
                    .map(|(&frame, (steps, _))| OpenFrame {
                        frame,
                        steps: steps.clone(),
                    })
                    .collect(),
                storage: std::mem::take(storage),
                transient: std::mem::take(transient),
            });
        } else {
            let address = interp.input.target_address;
            match op {
                SLOAD | TLOAD if n >= 1 => *load = Some((op == TLOAD, address, data[n - 1])),
                SSTORE | TSTORE if n >= 2 => {
                    let map = if op == TSTORE { transient } else { storage };
                    map.entry(address)
                        .or_default()
                        .entry(data[n - 1])
                        .or_default()
                        .written = Some(data[n - 2]);
                }
                _ => {}
            }
        }
        if let (JUMP, Some((steps, frame_marks))) = (op, open.last_mut()) {
            let dest = data
                .last()
                .map_or(u32::MAX, |d| u32::try_from(*d).unwrap_or(u32::MAX));
            let m = frame_marks.get_or_insert_with(|| {
                let code = interp.bytecode.original_bytes();
                let key = (code.as_ptr() as usize, creation);
                cache
                    .entry(key)
                    .or_insert_with(|| marks.as_ref().and_then(|s| s.marks(&code, creation)))
                    .clone()
            });
            let mark = m.as_ref().and_then(|m| m.get(pc as usize)).copied();
            steps.jump(pc, dest, data, mark.unwrap_or(0));
        }
        self.steps += 1;
    }

    fn step_end(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        let Track {
            storage,
            transient,
            load,
            ..
        } = &mut *self.track;
        if let Some((t, address, slot)) = load.take() {
            if let Some(v) = interp.stack.data().last() {
                let map = if t { transient } else { storage };
                let seen = map.entry(address).or_default().entry(slot).or_default();
                if seen.read.is_none() && seen.written.is_none() {
                    seen.read = Some(*v);
                }
            }
        }
        if self.at.is_some_and(|at| self.steps == at + 1) {
            if let Some(v) = self.view.as_mut().filter(|v| v.cost.is_none()) {
                if interp.bytecode.action().is_none() {
                    v.cost = Some(v.gas.saturating_sub(interp.gas.remaining()));
                }
            }
        }
    }
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let kind = match inputs.scheme {
            CallScheme::Call => CallKind::Call,
            CallScheme::StaticCall => CallKind::Staticcall,
            CallScheme::CallCode => CallKind::Callcode,
            CallScheme::DelegateCall => CallKind::Delegatecall,
        };
        let mut f = frame(
            kind,
            inputs.target_address,
            inputs.bytecode_address,
            inputs.caller,
        );
        f.value = inputs.value.get();
        f.input = inputs.input.bytes(ctx);
        f.gas_limit = inputs.gas_limit;
        self.open(f);
        None
    }

    fn call_end(&mut self, _ctx: &mut Ctx<DB>, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        let r = &outcome.result;
        self.close(r.result, &r.output, r.gas.remaining());
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        let to = create_target(ctx, inputs);
        let mut f = frame(
            CallKind::of_create(inputs.scheme()),
            to,
            to,
            inputs.caller(),
        );
        f.value = inputs.value();
        f.input = inputs.init_code().clone();
        f.gas_limit = inputs.gas_limit();
        self.open(f);
        None
    }

    fn create_end(
        &mut self,
        _ctx: &mut Ctx<DB>,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        let r = &outcome.result;
        self.close(r.result, &r.output, r.gas.remaining());
    }
}
