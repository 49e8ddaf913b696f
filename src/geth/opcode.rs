//! geth's names for opcodes (`OpCode.String()`, core/vm/opcodes.go), from revm's table.

use revm::bytecode::opcode::OpCode;

/// The opcode's name as geth prints it (`KECCAK256`, `DIFFICULTY`, `opcode 0xc not defined`).
pub fn op_name(op: u8) -> String {
    match OpCode::new(op) {
        Some(code) => code.as_str().to_string(),
        // Go's %#x: no zero padding.
        None => format!("opcode {op:#x} not defined"),
    }
}

#[cfg(test)]
mod tests {
    use super::op_name;

    #[test]
    fn op_names_follow_geth() {
        assert_eq!(op_name(0x20), "KECCAK256");
        assert_eq!(op_name(0x44), "DIFFICULTY");
        assert_eq!(op_name(0xfe), "INVALID");
        assert_eq!(op_name(0x0c), "opcode 0xc not defined");
    }
}
