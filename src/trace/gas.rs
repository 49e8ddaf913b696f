//! Gas accounting: where a transaction's execution gas went, by opcode, by frame and by
//! contract. Feeds `chaintrace gas` tables and the flamegraph.
//!
//! Every unit of execution gas is attributed exactly once, so the tables reconcile with the
//! receipt: an opcode's *self* cost is its gas change minus the gas it forwarded to a child
//! frame (CALL-family and CREATE) and minus the call stipend it handed over; a child's gas is
//! attributed to the child's own opcodes. What a frame spent beyond its opcodes and children —
//! a precompile's price, a CREATE's code deposit, the gas a failure burns — is a *residual*,
//! shown as its own row (`(precompile)`, `(code deposit)`) or charged to the failing opcode.

use super::state::Ctx;
use alloy_primitives::{Address, Bytes};
use revm::interpreter::interpreter_types::{Jumps, LoopControl};
use revm::interpreter::{
    CallInputs, CallOutcome, CreateInputs, CreateOutcome, FrameInput, InstructionResult,
    Interpreter, InterpreterAction,
};
use revm::{Database, Inspector};

use super::call::{create_target, CallKind};
use super::errors::returns_gas;
use super::gas_context::{ContextProfile, ContextRecorder, MarkSource};

/// A residual row of the opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Residual {
    /// A precompile's price.
    Precompile,
    /// The 200 gas per byte a successful CREATE pays for its code.
    CodeDeposit,
}

impl Residual {
    pub fn label(self) -> &'static str {
        match self {
            Residual::Precompile => "(precompile)",
            Residual::CodeDeposit => "(code deposit)",
        }
    }
}

/// One call frame's gas.
#[derive(Clone, Debug)]
pub struct GasFrame {
    pub kind: CallKind,
    /// The account whose code ran (the callee; for DELEGATECALL/CALLCODE the code's address).
    pub code_address: Address,
    pub input: Bytes,
    pub depth: usize,
    /// Gas the frame spent, children included (`gasUsed` of the callTracer frame).
    pub inclusive: u64,
    /// Gas spent by the frame's own opcodes and residuals.
    pub self_gas: u64,
    pub failed: bool,
    /// Self gas by opcode, for the flamegraph's `--by-op` leaves.
    pub ops: Vec<(u8, u64)>,
    /// Residual gas (precompile price or code deposit) of this frame, with its kind.
    pub residual: Option<(Residual, u64)>,
    /// Index of the parent frame in [`GasReport::frames`].
    pub parent: Option<usize>,
}

/// Everything `chaintrace gas` shows for one transaction.
#[derive(Clone, Debug, Default)]
pub struct GasReport {
    /// Per opcode: (executions, self gas).
    pub ops: Vec<(u64, u64)>,
    pub residuals: Vec<(Residual, u64)>,
    /// Frames in call order (pre-order).
    pub frames: Vec<GasFrame>,
    pub intrinsic: u64,
    pub execution: u64,
    pub refund: u64,
    pub gas_used: u64,
    /// EIP-7623 calldata floor, when it set the gas used.
    pub floor: u64,
    /// Gas by calling context and pc, when the profiler had jump markers
    /// ([`GasConfig::marks`]).
    pub context: Option<ContextProfile>,
}

/// What a gas report records beyond its tables.
#[derive(Clone, Debug, Default)]
pub struct GasConfig {
    /// Jump markers from source maps: with them the report also keeps gas by calling context
    /// (internal functions included) and pc, for `--by-line` and `--by-function`.
    pub marks: Option<MarkSource>,
}

struct Open {
    index: usize,
    limit: u64,
    /// Sum of what the children cost this frame (their inclusive spend).
    children: u64,
    self_ops: u64,
    last_op: Option<u8>,
    steps: u64,
    ops: [u64; 256],
}

/// The gas profiler's state during one transaction.
pub struct GasProfiler {
    report: GasReport,
    stack: Vec<Open>,
    pending_op: Option<(u8, u64)>,
    top_limit: u64,
    context: Option<Box<ContextRecorder>>,
}

impl Default for GasProfiler {
    fn default() -> Self {
        Self::new()
    }
}

impl GasProfiler {
    pub fn new() -> Self {
        GasProfiler {
            report: GasReport {
                ops: vec![(0, 0); 256],
                ..Default::default()
            },
            stack: Vec::new(),
            pending_op: None,
            top_limit: 0,
            context: None,
        }
    }

    /// A profiler for `config`: with jump markers, gas by calling context is kept too.
    pub fn with_config(config: &GasConfig) -> Self {
        let mut p = Self::new();
        p.context = config
            .marks
            .as_ref()
            .map(|m| Box::new(ContextRecorder::new(m.0.clone())));
        p
    }

    fn open(&mut self, kind: CallKind, code_address: Address, input: Bytes, limit: u64) {
        if self.stack.is_empty() {
            self.top_limit = limit;
        }
        let parent = self.stack.last().map(|o| o.index);
        let index = self.report.frames.len();
        if let Some(c) = &mut self.context {
            c.open(index);
        }
        self.report.frames.push(GasFrame {
            kind,
            code_address,
            input,
            depth: self.stack.len(),
            inclusive: 0,
            self_gas: 0,
            failed: false,
            ops: Vec::new(),
            residual: None,
            parent,
        });
        self.stack.push(Open {
            index,
            limit,
            children: 0,
            self_ops: 0,
            last_op: None,
            steps: 0,
            ops: [0; 256],
        });
    }

    fn close(&mut self, result: InstructionResult, remaining: u64, created: bool) {
        let Some(mut open) = self.stack.pop() else {
            return;
        };
        let returned = if returns_gas(result) { remaining } else { 0 };
        let spent = open.limit.saturating_sub(returned);
        let mut residual = spent.saturating_sub(open.self_ops + open.children);
        let mut burned = 0;
        let f = &mut self.report.frames[open.index];
        f.failed = !result.is_ok();
        if residual > 0 {
            let kind = if open.steps == 0 && result.is_ok() {
                Some(Residual::Precompile)
            } else if created && result.is_ok() {
                Some(Residual::CodeDeposit)
            } else {
                None
            };
            match (kind, open.last_op) {
                (Some(k), _) => {
                    f.residual = Some((k, residual));
                    match self.report.residuals.iter_mut().find(|(r, _)| *r == k) {
                        Some(e) => e.1 += residual,
                        None => self.report.residuals.push((k, residual)),
                    }
                }
                // What a failure burns is charged to the opcode that failed.
                (None, Some(op)) => {
                    self.report.ops[op as usize].1 += residual;
                    open.ops[op as usize] += residual;
                    open.self_ops += residual;
                    burned = residual;
                    residual = 0;
                }
                (None, None) => {}
            }
        }
        f.inclusive = spent;
        f.self_gas = open.self_ops + residual;
        if let Some(c) = &mut self.context {
            c.close(burned, residual);
        }
        f.ops = open
            .ops
            .iter()
            .enumerate()
            .filter(|(_, g)| **g > 0)
            .map(|(op, g)| (op as u8, *g))
            .collect();
        match self.stack.last_mut() {
            Some(parent) => parent.children += spent,
            None => self.report.execution = spent,
        }
    }

    /// Finishes the report with the transaction's gas figures from revm's result.
    pub fn into_report(
        mut self,
        gas_limit: u64,
        gas_used: u64,
        refund: u64,
        floor: u64,
    ) -> GasReport {
        self.report.intrinsic = gas_limit.saturating_sub(self.top_limit);
        self.report.refund = refund;
        self.report.gas_used = gas_used;
        self.report.floor = floor;
        self.report.context = self.context.map(|c| c.finish());
        self.report
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for GasProfiler {
    fn step(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        self.pending_op = Some((interp.bytecode.opcode(), interp.gas.remaining()));
        if let Some(c) = &mut self.context {
            if c.needs_start() {
                let creation = self
                    .stack
                    .last()
                    .is_some_and(|o| self.report.frames[o.index].kind.is_create());
                let hash = interp.bytecode.get_or_calculate_hash();
                c.start(hash, &interp.bytecode.original_bytes(), creation);
            }
            c.step(interp.bytecode.pc() as u32);
        }
    }

    fn step_end(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        let Some((op, before)) = self.pending_op.take() else {
            return;
        };
        let mut cost = before.wrapping_sub(interp.gas.remaining());
        match interp.bytecode.action() {
            Some(InterpreterAction::NewFrame(FrameInput::Call(inputs))) => {
                // `cost` includes the forwarded gas; the callee also gets the stipend for
                // free. The callee's own opcodes account for both (its limit), so the CALL's
                // self cost is what remains: `delta - limit` = static + dynamic - stipend.
                cost = cost.saturating_sub(inputs.gas_limit);
            }
            Some(InterpreterAction::NewFrame(FrameInput::Create(inputs))) => {
                cost = cost.saturating_sub(inputs.gas_limit());
            }
            _ => {}
        }
        if cost > u64::MAX / 2 {
            // An out-of-gas opcode leaves revm's counter wrapped; its burn is the frame residual.
            cost = 0;
        }
        if let Some(c) = &mut self.context {
            let jumped_to = interp
                .bytecode
                .action()
                .is_none()
                .then(|| interp.bytecode.pc() as u32);
            c.step_end(op, cost, jumped_to);
        }
        self.report.ops[op as usize].0 += 1;
        self.report.ops[op as usize].1 += cost;
        if let Some(top) = self.stack.last_mut() {
            top.ops[op as usize] += cost;
            top.self_ops += cost;
            top.last_op = Some(op);
            top.steps += 1;
        }
    }

    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let kind = CallKind::of_call(inputs.scheme);
        let input = inputs.input.bytes(ctx);
        self.open(kind, inputs.bytecode_address, input, inputs.gas_limit);
        None
    }

    fn call_end(&mut self, _ctx: &mut Ctx<DB>, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.close(outcome.result.result, outcome.result.gas.remaining(), false);
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        let kind = CallKind::of_create(inputs.scheme());
        let addr = create_target(ctx, inputs);
        self.open(kind, addr, inputs.init_code().clone(), inputs.gas_limit());
        None
    }

    fn create_end(
        &mut self,
        _ctx: &mut Ctx<DB>,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        if let (Some(addr), Some(top)) = (outcome.address, self.stack.last()) {
            self.report.frames[top.index].code_address = addr;
        }
        self.close(outcome.result.result, outcome.result.gas.remaining(), true);
    }
}

impl serde::Serialize for GasReport {
    /// The raw figures; `chaintrace gas --json` renders the richer tables (names, shares).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("intrinsicGas", &self.intrinsic)?;
        m.serialize_entry("executionGas", &self.execution)?;
        m.serialize_entry("refund", &self.refund)?;
        m.serialize_entry("gasUsed", &self.gas_used)?;
        m.end()
    }
}

impl GasReport {
    /// Sum of every opcode's self gas and every residual row: equals the execution gas.
    pub fn attributed(&self) -> u64 {
        self.ops.iter().map(|(_, g)| g).sum::<u64>()
            + self.residuals.iter().map(|(_, g)| g).sum::<u64>()
    }
}
