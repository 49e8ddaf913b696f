//! geth's error strings for failed frames.
//!
//! revm reports failures as [`InstructionResult`] values; geth prints Go error strings. A trace
//! that says `OutOfGas` where geth says `out of gas` is a trace that differs from geth, so every
//! mapping lives here.

use alloy_primitives::Bytes;
use revm::bytecode::opcode::OpCode;
use revm::interpreter::interpreter_types::LoopControl;
use revm::interpreter::{InstructionResult, Interpreter, InterpreterAction};
use revm::primitives::hardfork::SpecId;

use crate::geth::opcode::op_name;

/// Number of stack items an opcode needs (geth's `minStack`), for underflow messages.
pub fn stack_inputs(op: u8) -> usize {
    OpCode::new(op).map(|c| c.inputs() as usize).unwrap_or(0)
}

/// What the failing frame was doing when it failed: the last opcode it began and the stack height
/// then. Needed for geth's texts that name the opcode or the stack.
#[derive(Clone, Copy, Debug, Default)]
pub struct LastStep {
    pub op: u8,
    pub stack_len: usize,
    /// True when the op was RETURN in a CREATE frame (a following out-of-gas is the code deposit).
    pub returned: bool,
}

impl LastStep {
    /// The opcode `op` about to run on a stack of `stack_len` items, as a tracer's `step` notes it.
    #[inline(always)]
    pub fn before(op: u8, stack_len: usize) -> Self {
        LastStep {
            op,
            stack_len,
            returned: op == revm::bytecode::opcode::RETURN,
        }
    }
}

/// A failed frame's `error` in a callTracer result: a revert, or another failure in geth's
/// words. geth's JSON carries it as text, which is read here and nowhere else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// REVERT: the frame's output is its revert data (geth: `execution reverted`).
    Reverted,
    /// Any other failure (`out of gas`, `invalid opcode: INVALID`, …).
    Failed(String),
}

impl FrameError {
    /// geth's text for a revert (`vm.ErrExecutionReverted`).
    pub const REVERTED: &'static str = "execution reverted";

    /// The error of a frame that ended with `result` (see [`geth_error`]), `None` when it
    /// succeeded.
    pub fn of(result: InstructionResult, last: LastStep, is_create: bool) -> Option<FrameError> {
        match result {
            InstructionResult::Revert => Some(FrameError::Reverted),
            _ => geth_error(result, last, is_create).map(FrameError::Failed),
        }
    }

    /// geth's text.
    pub fn as_str(&self) -> &str {
        match self {
            FrameError::Reverted => Self::REVERTED,
            FrameError::Failed(s) => s,
        }
    }

    pub fn is_revert(&self) -> bool {
        matches!(self, FrameError::Reverted)
    }
}

/// geth's text, as a node's trace gives it.
impl From<String> for FrameError {
    fn from(text: String) -> Self {
        if text == Self::REVERTED {
            FrameError::Reverted
        } else {
            FrameError::Failed(text)
        }
    }
}

impl From<&str> for FrameError {
    fn from(text: &str) -> Self {
        text.to_string().into()
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for FrameError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for FrameError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(FrameError::from)
    }
}

/// geth's error text for a frame that ended with `result`, or `None` when it succeeded.
pub fn geth_error(result: InstructionResult, last: LastStep, is_create: bool) -> Option<String> {
    use InstructionResult as R;
    let s = match result {
        R::Stop | R::Return | R::SelfDestruct => return None,
        R::Revert => FrameError::REVERTED,
        // geth wraps errors of dynamic gas functions: `fmt.Errorf("%w: %v", ErrOutOfGas, err)`.
        R::ReentrancySentryOOG => "out of gas: not enough gas for reentrancy sentry",
        R::OutOfGas
        | R::MemoryOOG
        | R::MemoryLimitOOG
        | R::PrecompileOOG
        | R::InvalidOperandOOG => {
            if is_create && last.returned {
                "contract creation code storage out of gas"
            } else {
                "out of gas"
            }
        }
        R::CallTooDeep => "max call depth exceeded",
        R::OutOfFunds => "insufficient balance for transfer",
        // Since v1.17 the gas functions of these refuse a static context, wrapped as gas errors.
        R::CallNotAllowedInsideStatic | R::StateChangeDuringStaticCall
            if crate::trace::failed_step::static_refused_by_gas(last.op) =>
        {
            "out of gas: write protection"
        }
        R::CallNotAllowedInsideStatic | R::StateChangeDuringStaticCall => "write protection",
        R::InvalidJump => "invalid jump destination",
        R::OutOfOffset => "return data out of bounds",
        R::CreateCollision => "contract address collision",
        R::OverflowPayment => "gas uint64 overflow",
        R::NonceOverflow => "nonce uint64 overflow",
        R::CreateContractSizeLimit => "max code size exceeded",
        R::CreateContractStartingWithEF => "invalid code: must not begin with 0xef",
        R::CreateInitCodeSizeLimit => "max initcode size exceeded",
        R::InvalidFEOpcode | R::OpcodeNotFound | R::NotActivated => {
            return Some(format!("invalid opcode: {}", op_name(last.op)))
        }
        R::StackUnderflow => {
            return Some(format!(
                "stack underflow ({} <=> {})",
                last.stack_len,
                stack_inputs(last.op)
            ))
        }
        R::StackOverflow => {
            return Some(format!("stack limit reached {} ({})", last.stack_len, 1023))
        }
        R::PrecompileError => "precompile error",
        other => return Some(format!("{other:?}")),
    };
    Some(s.to_string())
}

/// Whether an opcode ended with a failure geth detects before the opcode executes (stack and gas
/// checks, including dynamic gas): geth then reports the error on the opcode's own step and
/// tracers' `OnOpcode` sees it, while failures during execution (REVERT, INVALID, bad jump,
/// write protection) leave the step clean.
///
/// Since v1.17 geth's gas functions of SSTORE, SELFDESTRUCT, CREATE, CREATE2 and a CALL with
/// value refuse a static context, so for those `op`s write protection is such a failure too
/// (`out of gas: write protection`).
pub fn fails_before_execution(result: InstructionResult, op: u8) -> bool {
    use InstructionResult as R;
    match result {
        R::OutOfGas
        | R::MemoryOOG
        | R::MemoryLimitOOG
        | R::InvalidOperandOOG
        | R::ReentrancySentryOOG
        | R::StackUnderflow
        | R::StackOverflow => true,
        R::CallNotAllowedInsideStatic | R::StateChangeDuringStaticCall => {
            crate::trace::failed_step::static_refused_by_gas(op)
        }
        _ => false,
    }
}

/// Whether geth hands the frame's gas back to the caller for this failure (failures detected
/// before the frame runs: depth, balance, nonce overflow). Any other failure but a revert
/// consumes all the frame's gas.
pub fn returns_gas(result: InstructionResult) -> bool {
    use InstructionResult as R;
    result.is_ok_or_revert() || matches!(result, R::CallTooDeep | R::OutOfFunds | R::NonceOverflow)
}

/// geth's error for a pre-Homestead CREATE whose code deposit ran out of gas.
pub const CODE_STORE_OUT_OF_GAS: &str = "contract creation code storage out of gas";

/// What the opcode just run handed back when it ended its frame with RETURN.
pub fn returned_output(interp: &mut Interpreter) -> Option<&Bytes> {
    match interp.bytecode.action() {
        Some(InterpreterAction::Return(r)) if r.result == InstructionResult::Return => {
            Some(&r.output)
        }
        _ => None,
    }
}

/// Before Homestead a CREATE whose code deposit runs out of gas is not undone. revm ends the
/// frame as a success with empty code and an empty output; geth (`evm.create`) ends it with
/// `ErrCodeStoreOutOfGas`, not reverted, and keeps the code the init code returned as its
/// output. Given how revm ended a CREATE frame and what its RETURN handed back (`returned`),
/// this is that code when the frame is such a create, so tracers can report it as geth does.
pub fn frontier_deposit_oog(
    spec: SpecId,
    result: InstructionResult,
    output: &Bytes,
    returned: Option<&Bytes>,
) -> Option<Bytes> {
    if spec.is_enabled_in(SpecId::HOMESTEAD) || !result.is_ok() || !output.is_empty() {
        return None;
    }
    returned.filter(|r| !r.is_empty()).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_underflow_text_names_height_and_need() {
        let last = LastStep {
            op: 0xf1,
            stack_len: 0,
            returned: false,
        };
        assert_eq!(
            geth_error(InstructionResult::StackUnderflow, last, false).unwrap(),
            "stack underflow (0 <=> 7)"
        );
    }
}
