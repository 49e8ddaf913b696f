//! Frames run plain: revm's instructions with no per-opcode hook, for a tracer that needs none (a
//! JavaScript tracer without `step`, which geth calls only as frames begin and end).
//!
//! revm's inspecting loop (`revm_inspector::inspect_instructions`) calls `step` and `step_end`
//! around every opcode and looks at the journal's length twice. For such a tracer that is most of a
//! replay's overhead: the hooks note the opcode and return. So the replay's outer inspector
//! (`Beside`, in the replay's `splice` module) asks the tracer ([`Plain::plain`]) and, at the first
//! `step` of a frame, runs the frame itself until an opcode sets an action (the frame ends, fails,
//! or calls or creates another): the loop of revm's `run_plain`, noting only the opcode about to
//! run and the journal's length then. The tracer then hears of that last opcode
//! ([`Plain::ran_plain`]) and gets its `step_end`, as it would have, and revm's loop, seeing the
//! action, stops. A SELFDESTRUCT still gets both hooks (its frame is staged before it runs). A
//! tracer whose `step` reads nothing of the opcode (it counts, say) has its `step_end` called after
//! every opcode too ([`Plain::plain_step_ends`]), and so its `step`, with none of revm's loop
//! around.
//!
//! Nothing else of revm's loop is lost: its log and selfdestruct hooks, which such a tracer does
//! not implement, are the only other calls it makes.

use std::marker::PhantomData;

use revm::bytecode::opcode::SELFDESTRUCT;
use revm::context_interface::ContextTr;
use revm::inspector::JournalExt;
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{Jumps, LoopControl};
use revm::interpreter::{
    instruction_table, instructions::gas_table_spec, GasTable, Host, InstructionTable, Interpreter,
};
use revm::primitives::hardfork::SpecId;
use revm::Inspector;

use super::errors::LastStep;

/// A tracer whose frames may run with no per-opcode hook. Every tracer says whether it is one;
/// most are not.
pub trait Plain {
    /// Whether the frame about to run may run plain: the tracer reads no opcode but a
    /// SELFDESTRUCT and the one that ends a run (or, with [`Plain::plain_step_ends`], needs only
    /// to hear that each ran), and needs no log hook.
    fn plain(&self) -> bool {
        false
    }
    /// Whether a plain run calls `step_end` after every opcode too (a `step` that reads nothing
    /// of the opcode: the tracer's `step_end` calls it).
    fn plain_step_ends(&self) -> bool {
        false
    }
    /// The opcode a plain run ended with, as `step` would have noted it before it ran (the
    /// stack's height, the refund counter and the journal's length then), told before that
    /// opcode's `step_end`.
    fn ran_plain(&mut self, _last: LastStep, _refund: i64, _journal_at: usize) {}
}

/// revm's mainnet instruction table for a host, made once at compile time.
struct Table<H>(PhantomData<H>);

impl<H: Host> Table<H> {
    const INSTRUCTIONS: InstructionTable<EthInterpreter, H> = instruction_table();
}

/// The static gas table of a fork, made at a runner's first plain run.
#[derive(Default)]
pub struct Runner {
    gas: Option<(SpecId, Box<GasTable>)>,
}

impl Runner {
    /// Runs the frame in `interp` plain from its current opcode until an opcode sets an action,
    /// calling `tick` before every opcode (a server's deadline: `true` when it halted the frame),
    /// and gives `inner` the hooks described in the module docs. The instructions and gas table
    /// are revm's mainnet ones for the context's fork, which every replay runs (no replay
    /// changes either).
    #[inline(never)]
    pub fn run<H, I>(
        &mut self,
        interp: &mut Interpreter,
        ctx: &mut H,
        spec: SpecId,
        inner: &mut I,
        mut tick: impl FnMut(&mut Interpreter) -> bool,
    ) where
        H: Host + ContextTr<Journal: JournalExt>,
        I: Inspector<H> + Plain,
    {
        let gas: &GasTable = match &self.gas {
            Some((s, g)) if *s == spec => g,
            _ => &self.gas.insert((spec, Box::new(gas_table_spec(spec)))).1,
        };
        let table = &Table::<H>::INSTRUCTIONS;
        let step_ends = inner.plain_step_ends();
        loop {
            if tick(interp) {
                return;
            }
            let op = interp.bytecode.opcode();
            if op == SELFDESTRUCT {
                inner.step(interp, ctx);
                exec(interp, table, gas, ctx);
                inner.step_end(interp, ctx);
                if interp.bytecode.is_end() {
                    return;
                }
                continue;
            }
            let last = LastStep::before(op, interp.stack.len());
            let refund = interp.gas.refunded();
            let journal_at = ctx.journal_ref().journal().len();
            exec(interp, table, gas, ctx);
            if interp.bytecode.is_end() {
                inner.ran_plain(last, refund, journal_at);
                inner.step_end(interp, ctx);
                return;
            }
            if step_ends {
                inner.step_end(interp, ctx);
                if interp.bytecode.is_end() {
                    return;
                }
            }
        }
    }
}

/// One opcode, as revm's loops run it: a failure without an action halts the frame.
#[inline(always)]
fn exec<H: Host>(
    interp: &mut Interpreter,
    table: &InstructionTable<EthInterpreter, H>,
    gas: &GasTable,
    ctx: &mut H,
) {
    if let Err(e) = interp.step(table, gas, ctx) {
        if interp.bytecode.action().is_none() {
            interp.halt(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use revm::bytecode::Bytecode;
    use revm::database::EmptyDB;
    use revm::interpreter::interpreter::ExtBytecode;
    use revm::interpreter::{InputsImpl, InstructionResult, InterpreterAction, SharedMemory};

    /// What a tracer hears of a plain run.
    #[derive(Default)]
    struct Heard {
        steps: Vec<u8>,
        ends: usize,
        last: Option<(LastStep, i64, usize)>,
    }

    impl Plain for Heard {
        fn plain(&self) -> bool {
            true
        }
        fn ran_plain(&mut self, last: LastStep, refund: i64, journal_at: usize) {
            self.last = Some((last, refund, journal_at));
        }
    }

    impl<CTX> Inspector<CTX> for Heard {
        fn step(&mut self, interp: &mut Interpreter, _: &mut CTX) {
            self.steps.push(interp.bytecode.opcode());
        }
        fn step_end(&mut self, _: &mut Interpreter, _: &mut CTX) {
            self.ends += 1;
        }
    }

    fn interp(code: &str) -> Interpreter {
        let code = Bytecode::new_raw(alloy_primitives::hex::decode(code).unwrap().into());
        Interpreter::new(
            SharedMemory::new(),
            ExtBytecode::new(code),
            InputsImpl::default(),
            false,
            SpecId::CANCUN,
            1_000_000,
        )
    }

    fn result(i: &mut Interpreter) -> InstructionResult {
        match i.take_next_action() {
            InterpreterAction::Return(r) => r.result,
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn a_plain_run_tells_only_its_last_opcode_and_a_selfdestruct() {
        let mut ctx = crate::trace::Ctx::new(EmptyDB::default(), SpecId::CANCUN);
        let mut runner = Runner::default();

        // PUSH1 1, PUSH1 2, ADD, POP, STOP: no hook but the last opcode's.
        let (mut i, mut t) = (interp("60016002015000"), Heard::default());
        runner.run(&mut i, &mut ctx, SpecId::CANCUN, &mut t, |_| false);
        assert!(t.steps.is_empty());
        assert_eq!(t.ends, 1);
        let (last, refund, journal_at) = t.last.unwrap();
        assert_eq!(
            (last.op, last.stack_len, refund, journal_at),
            (0x00, 0, 0, 0)
        );
        assert_eq!(result(&mut i), InstructionResult::Stop);

        // PUSH1 0, SELFDESTRUCT: both hooks for the SELFDESTRUCT, and nothing noted.
        let (mut i, mut t) = (interp("6000ff"), Heard::default());
        runner.run(&mut i, &mut ctx, SpecId::CANCUN, &mut t, |_| false);
        assert_eq!((t.steps, t.ends, t.last.is_none()), (vec![0xff], 1, true));
        assert_eq!(result(&mut i), InstructionResult::SelfDestruct);

        // A failure: PUSH1 7, JUMP (no JUMPDEST there), noted as its step would note it.
        let (mut i, mut t) = (interp("600756"), Heard::default());
        runner.run(&mut i, &mut ctx, SpecId::CANCUN, &mut t, |_| false);
        let (last, ..) = t.last.unwrap();
        assert_eq!((last.op, last.stack_len, t.ends), (0x56, 1, 1));
        assert_eq!(result(&mut i), InstructionResult::InvalidJump);
    }

    #[test]
    fn a_deadline_halts_a_plain_run_between_two_opcodes() {
        // JUMPDEST, PUSH1 0, JUMP: endless but for gas. The tick halts it at its 100th opcode.
        let mut ctx = crate::trace::Ctx::new(EmptyDB::default(), SpecId::CANCUN);
        let (mut i, mut t) = (interp("5b600056"), Heard::default());
        let mut n = 0;
        let tick = |i: &mut Interpreter| {
            n += 1;
            if n == 100 {
                i.halt(InstructionResult::OutOfGas);
            }
            n == 100
        };
        Runner::default().run(&mut i, &mut ctx, SpecId::CANCUN, &mut t, tick);
        assert_eq!(n, 100);
        assert_eq!((t.ends, t.last.is_none()), (0, true));
        assert_eq!(result(&mut i), InstructionResult::OutOfGas);
    }
}
