//! geth's names for opcodes and its error strings for failed frames.
//!
//! revm reports failures as [`InstructionResult`] values; geth prints Go error strings. A trace
//! that says `OutOfGas` where geth says `out of gas` is a trace that differs from geth, so every
//! mapping lives here.

use revm::bytecode::opcode::OpCode;
use revm::interpreter::InstructionResult;

/// The opcode's name as geth prints it (`KECCAK256`, `DIFFICULTY`, `opcode 0xc not defined`).
pub fn op_name(op: u8) -> String {
    match OpCode::new(op) {
        Some(code) => code.as_str().to_string(),
        // Go's %#x: no zero padding.
        None => format!("opcode {op:#x} not defined"),
    }
}

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

/// geth's error text for a frame that ended with `result`, or `None` when it succeeded.
pub fn geth_error(result: InstructionResult, last: LastStep, is_create: bool) -> Option<String> {
    use InstructionResult as R;
    let s = match result {
        R::Stop | R::Return | R::SelfDestruct => return None,
        R::Revert => "execution reverted",
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
pub fn fails_before_execution(result: InstructionResult) -> bool {
    use InstructionResult as R;
    matches!(
        result,
        R::OutOfGas
            | R::MemoryOOG
            | R::MemoryLimitOOG
            | R::InvalidOperandOOG
            | R::ReentrancySentryOOG
            | R::StackUnderflow
            | R::StackOverflow
    )
}

/// Whether geth hands the frame's gas back to the caller for this failure (failures detected
/// before the frame runs: depth, balance, nonce overflow). Any other failure but a revert
/// consumes all the frame's gas.
pub fn returns_gas(result: InstructionResult) -> bool {
    use InstructionResult as R;
    result.is_ok_or_revert() || matches!(result, R::CallTooDeep | R::OutOfFunds | R::NonceOverflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_follow_geth() {
        assert_eq!(op_name(0x20), "KECCAK256");
        assert_eq!(op_name(0x44), "DIFFICULTY");
        assert_eq!(op_name(0xfe), "INVALID");
        assert_eq!(op_name(0x0c), "opcode 0xc not defined");
    }

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
