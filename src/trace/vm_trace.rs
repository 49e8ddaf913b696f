//! Parity's `vmTrace`: every executed operation of every frame, with what it used, pushed,
//! wrote to memory and stored, and each call's own trace nested under it.
//!
//! The reference is reth's builder, revm-inspectors' `ParityTraceBuilder::vm_trace` over its
//! `TracingInspector` configured as `from_parity_config` sets it for `vmTrace`
//! (`tracing/mod.rs` `start_step`, `fill_step_on_step_end`, `finish_call_step`,
//! `memory_write_range`, `storage_write`; `builder/parity.rs` `make_vm_trace`,
//! `make_instruction`, `began_executing`, `entered_frame`); tests/peers runs the two side by side.
//! Its rules, as implemented here:
//! - an operation rejected before it ran (undefined, stack under- or overflow) or the implicit
//!   STOP past the end of the code is not listed;
//! - `cost` is the gas the step took (for a call, with the gas it handed on); `ex` is absent for
//!   a step that halted; `used` is the gas left after the step — after a call, once the caller
//!   resumes;
//! - `push` is what the operation pushed (a call's success flag or a creation's address, read
//!   when the caller resumes);
//! - `mem` is the memory the operation wrote (MLOAD, MSTORE, MSTORE8, the *COPY operations,
//!   MCOPY, and a call's output area, cut to what was returned), read after it;
//!   `store` an SSTORE's key and value;
//! - `sub` is the trace of the frame a call or creation entered (empty code and no operations
//!   for a precompile or an account without code), absent when the call failed its depth,
//!   balance or nonce precheck.

use alloy_primitives::{Bytes, U256};
use alloy_rpc_types_trace::parity::{
    MemoryDelta, StorageDelta, VmExecutedOperation, VmInstruction, VmTrace,
};
use revm::bytecode::opcode::{self, OpCode};
use revm::interpreter::interpreter_types::{
    Jumps, LegacyBytecode, LoopControl, MemoryTr, ReturnData,
};
use revm::interpreter::{
    CallInputs, CallOutcome, CreateInputs, CreateOutcome, InstructionResult, Interpreter,
};
use revm::{Database, Inspector};

use super::state::Ctx;

/// A frame being traced.
#[derive(Default)]
struct Frame {
    code: Option<Bytes>,
    ops: Vec<VmInstruction>,
    /// A call-like operation of this frame waiting for the caller to resume: its index in
    /// `ops` and the memory range its output goes to.
    awaiting: Option<(usize, Option<std::ops::Range<usize>>)>,
}

/// What a step showed before it ran.
struct Open {
    pc: usize,
    op: u8,
    gas: u64,
    write: Option<std::ops::Range<usize>>,
    store: Option<StorageDelta>,
}

/// The vmTrace recorder of one transaction.
#[derive(Default)]
pub struct VmTracer {
    frames: Vec<Frame>,
    open: Option<Open>,
    root: Option<VmTrace>,
}

/// The memory an operation writes, from its inputs (revm-inspectors' `memory_write_range`).
fn write_range(op: u8, stack: &[U256]) -> Option<std::ops::Range<usize>> {
    let back = |i: usize| {
        stack
            .get(stack.len().checked_sub(i + 1)?)
            .and_then(|v| usize::try_from(*v).ok())
    };
    let (offset, size) = match op {
        opcode::MLOAD | opcode::MSTORE => (back(0)?, 32),
        opcode::MSTORE8 => (back(0)?, 1),
        opcode::CALLDATACOPY | opcode::CODECOPY | opcode::RETURNDATACOPY | opcode::MCOPY => {
            (back(0)?, back(2)?)
        }
        opcode::EXTCODECOPY => (back(1)?, back(3)?),
        opcode::CALL | opcode::CALLCODE => (back(5)?, back(6)?),
        opcode::DELEGATECALL | opcode::STATICCALL => (back(4)?, back(5)?),
        _ => return None,
    };
    (size != 0).then_some(offset..offset.checked_add(size)?)
}

fn call_like(op: u8) -> bool {
    matches!(
        op,
        opcode::CALL
            | opcode::CALLCODE
            | opcode::DELEGATECALL
            | opcode::STATICCALL
            | opcode::CREATE
            | opcode::CREATE2
    )
}

fn memory_delta(memory: &[u8], range: Option<std::ops::Range<usize>>) -> Option<MemoryDelta> {
    let range = range.filter(|r| !r.is_empty())?;
    let data = memory.get(range.clone())?;
    Some(MemoryDelta {
        off: range.start,
        data: Bytes::copy_from_slice(data),
    })
}

impl VmTracer {
    /// The transaction's vmTrace (the top frame's), once it has ended.
    pub fn into_result(self) -> VmTrace {
        self.root.unwrap_or_default()
    }

    fn enter(&mut self) {
        self.frames.push(Frame::default());
    }

    fn exit(&mut self, result: InstructionResult) {
        let Some(f) = self.frames.pop() else { return };
        let trace = VmTrace {
            code: f.code.unwrap_or_default(),
            ops: f.ops,
        };
        // A call or creation that failed its depth, balance or nonce precheck entered no
        // frame (`entered_frame`).
        let entered = !matches!(
            result,
            InstructionResult::CallTooDeep
                | InstructionResult::OutOfFunds
                | InstructionResult::OverflowPayment
                | InstructionResult::NonceOverflow
        );
        match self.frames.last_mut() {
            Some(parent) => {
                if let Some((i, _)) = parent.awaiting {
                    parent.ops[i].sub = entered.then_some(trace);
                }
            }
            None => self.root = Some(trace),
        }
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for VmTracer {
    fn step(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if frame.code.is_none() {
            frame.code = Some(Bytes::copy_from_slice(interp.bytecode.bytecode_slice()));
        }
        // The caller resumed after its call: the call's gas, push and memory are known now.
        if let Some((i, range)) = frame.awaiting.take() {
            let returned = interp.return_data.buffer().len();
            let range = range.map(|r| r.start..r.start + r.len().min(returned));
            let size = interp.memory.size();
            let memory = interp.memory.slice(0..size);
            if let Some(ex) = frame.ops[i].ex.as_mut() {
                ex.used = interp.gas.remaining();
                ex.push = interp.stack.data().last().copied().into_iter().collect();
                ex.mem = memory_delta(&memory, range);
            }
        }
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        self.open = Some(Open {
            pc: interp.bytecode.pc(),
            op,
            gas: interp.gas.remaining(),
            write: write_range(op, stack),
            store: match (op, stack.as_slice()) {
                (opcode::SSTORE, [.., val, key]) => Some(StorageDelta {
                    key: *key,
                    val: *val,
                }),
                _ => None,
            },
        });
    }

    fn step_end(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        let (Some(o), Some(frame)) = (self.open.take(), self.frames.last_mut()) else {
            return;
        };
        let status = interp
            .bytecode
            .action()
            .as_ref()
            .and_then(|a| a.instruction_result());
        let rejected = matches!(
            status,
            Some(
                InstructionResult::OpcodeNotFound
                    | InstructionResult::InvalidFEOpcode
                    | InstructionResult::NotActivated
                    | InstructionResult::InvalidImmediateEncoding
                    | InstructionResult::StackUnderflow
                    | InstructionResult::StackOverflow
            )
        );
        let code_len = frame.code.as_ref().map_or(0, |c| c.len());
        if rejected || o.pc >= code_len {
            return;
        }
        let after = interp.gas.remaining();
        let halted = status.is_some_and(|s| s.is_halt());
        let code = OpCode::new(o.op);
        let ex = (!halted).then(|| {
            let outputs = code.map_or(0, |c| c.outputs() as usize);
            let stack = interp.stack.data();
            let size = interp.memory.size();
            let memory = interp.memory.slice(0..size);
            VmExecutedOperation {
                used: after,
                push: stack[stack.len().saturating_sub(outputs)..].to_vec(),
                mem: if call_like(o.op) {
                    None
                } else {
                    memory_delta(&memory, o.write.clone())
                },
                store: o.store,
            }
        });
        frame.ops.push(VmInstruction {
            cost: o.gas.saturating_sub(after),
            ex,
            pc: o.pc,
            sub: None,
            op: Some(OpCode::new_or_unknown(o.op).to_string()),
            idx: None,
        });
        if call_like(o.op) && !halted {
            frame.awaiting = Some((frame.ops.len() - 1, o.write));
        }
    }

    fn call(&mut self, _ctx: &mut Ctx<DB>, _inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.enter();
        None
    }

    fn call_end(&mut self, _ctx: &mut Ctx<DB>, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.exit(outcome.result.result);
    }

    fn create(&mut self, _ctx: &mut Ctx<DB>, _inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.enter();
        None
    }

    fn create_end(
        &mut self,
        _ctx: &mut Ctx<DB>,
        _inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        self.exit(outcome.result.result);
    }
}
