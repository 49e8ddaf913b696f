//! Struct logs for people: one line per opcode (depth, pc, opcode, gas, cost, error), with the
//! transaction's summary first. Scripts want `--json`; gas questions want `chaintrace gas`.

use std::io::{self, Write};

use serde::Deserialize;

use crate::trace::opcode::StructLogResult;

#[derive(Deserialize)]
struct Step {
    pc: u64,
    op: String,
    gas: u64,
    #[serde(rename = "gasCost")]
    gas_cost: u64,
    depth: u64,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    stack: Option<Vec<String>>,
}

/// Writes a readable listing of the struct logs.
pub fn render_struct_logs<W: Write>(r: &StructLogResult, out: &mut W) -> io::Result<()> {
    writeln!(
        out,
        "{} steps, gas used {}, {}",
        r.entries,
        r.gas,
        if r.failed { "failed" } else { "succeeded" }
    )?;
    let mut body = Vec::new();
    body.push(b'[');
    r.logs.lock().expect("spool lock").copy_to(&mut body)?;
    body.push(b']');
    let mut de = serde_json::Deserializer::from_slice(&body);
    let steps: Vec<Step> = Vec::deserialize(&mut de).map_err(io::Error::other)?;
    writeln!(
        out,
        "{:>5} {:>6}  {:<16} {:>12} {:>8}  top of stack",
        "depth", "pc", "op", "gas", "cost"
    )?;
    for s in steps {
        let top = s
            .stack
            .as_ref()
            .and_then(|st| st.last())
            .map(String::as_str)
            .unwrap_or("");
        write!(
            out,
            "{:>5} {:>6}  {:<16} {:>12} {:>8}  {}",
            s.depth, s.pc, s.op, s.gas, s.gas_cost, top
        )?;
        if let Some(e) = s.error {
            write!(out, "  error: {e}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
