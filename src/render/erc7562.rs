//! An erc7562Tracer result for people: per frame, what the ERC-4337 validation rules look at —
//! the opcodes it used, the storage and transient slots it read and wrote, the addresses whose
//! code it inspected and their code sizes — indented like the call tree. `--json` prints geth's
//! JSON instead.

use std::io::{self, Write};

use alloy_primitives::hex;

use crate::geth::opcode::op_name;
use crate::trace::erc7562::Erc7562Frame;

/// Writes the summary of `frame` and its sub-calls.
pub fn render_erc7562<W: Write>(frame: &Erc7562Frame, out: &mut W) -> io::Result<()> {
    write_frame(frame, 0, out)?;
    if !frame.keccak.is_empty() {
        writeln!(out, "keccak preimages: {}", frame.keccak.len())?;
        for k in &frame.keccak {
            writeln!(out, "  0x{}", hex::encode(k))?;
        }
    }
    Ok(())
}

fn write_frame<W: Write>(f: &Erc7562Frame, depth: usize, out: &mut W) -> io::Result<()> {
    let pad = "  ".repeat(depth);
    let to =
        f.to.map(|a| format!("0x{}", hex::encode(a)))
            .unwrap_or_else(|| "(no address)".into());
    write!(
        out,
        "{pad}{} 0x{} -> {to}  gas {}/{}",
        f.kind.as_str(),
        hex::encode(f.from),
        f.gas_used,
        f.gas
    )?;
    if let Some(e) = &f.error {
        write!(out, "  error: {e}")?;
    }
    if let Some(r) = &f.revert_reason {
        write!(out, " ({r})")?;
    }
    if f.out_of_gas {
        write!(out, "  [out of gas]")?;
    }
    writeln!(out)?;
    let pad = format!("{pad}  ");
    if !f.used_opcodes.0.is_empty() {
        let ops: Vec<String> = f
            .used_opcodes
            .0
            .iter()
            .map(|(op, n)| format!("{}×{n}", op_name(*op)))
            .collect();
        writeln!(out, "{pad}opcodes: {}", ops.join(" "))?;
    }
    let s = &f.accessed_slots;
    for (slot, values) in &s.reads {
        let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        writeln!(out, "{pad}sload  {slot} = {}", v.join(", "))?;
    }
    for (name, m) in [
        ("sstore", &s.writes),
        ("tload ", &s.transient_reads),
        ("tstore", &s.transient_writes),
    ] {
        for (slot, n) in m {
            writeln!(out, "{pad}{name} {slot} ×{n}")?;
        }
    }
    if !f.ext_code_access_info.is_empty() {
        let a: Vec<String> = f
            .ext_code_access_info
            .iter()
            .map(|a| format!("0x{}", hex::encode(a)))
            .collect();
        writeln!(out, "{pad}extcode read: {}", a.join(" "))?;
    }
    for (a, c) in &f.contract_size {
        writeln!(
            out,
            "{pad}code size 0x{} = {} bytes (first seen by {})",
            hex::encode(a),
            c.contract_size,
            op_name(c.opcode)
        )?;
    }
    for c in &f.calls {
        write_frame(c, depth + 1, out)?;
    }
    Ok(())
}
