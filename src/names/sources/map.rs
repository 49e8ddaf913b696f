//! solc source maps: the compressed `s:l:f:j:m;…` form decoded to one entry per instruction,
//! and a code's pc → instruction index (push data belongs to its PUSH).

use revm::bytecode::opcode::{JUMP, PUSH0, PUSH1, PUSH32};

/// One source-map entry: the span `start..start+len` of file `file` (-1: none), and the jump
/// marker of the instruction (`b'i'`, `b'o'` or `b'-'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrcEntry {
    pub start: u32,
    pub len: u32,
    pub file: i32,
    pub jump: u8,
}

/// Decodes a compressed source map. A malformed field keeps the previous entry's value.
pub fn decode_source_map(map: &str) -> Vec<SrcEntry> {
    let mut out = Vec::with_capacity(map.len() / 4);
    let mut cur = SrcEntry {
        start: 0,
        len: 0,
        file: -1,
        jump: b'-',
    };
    if map.is_empty() {
        return out;
    }
    for item in map.split(';') {
        for (i, field) in item.split(':').enumerate() {
            if field.is_empty() {
                continue;
            }
            match i {
                0 => cur.start = field.parse().unwrap_or(cur.start),
                1 => cur.len = field.parse().unwrap_or(cur.len),
                2 => cur.file = field.parse().unwrap_or(cur.file),
                3 => cur.jump = field.bytes().next().unwrap_or(b'-'),
                _ => {}
            }
        }
        out.push(cur);
    }
    out
}

/// The instructions of `code`: each one's pc and opcode, PUSH data skipped.
pub fn instructions(code: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut pc = 0usize;
    std::iter::from_fn(move || {
        let op = *code.get(pc)?;
        let at = pc;
        pc += width(op);
        Some((at, op))
    })
}

/// For every byte of `code`, the index of the instruction it belongs to (PUSH data belongs to
/// its PUSH).
pub fn instruction_index(code: &[u8]) -> Vec<u32> {
    let mut out = vec![0u32; code.len()];
    for (ix, (pc, op)) in instructions(code).enumerate() {
        for slot in out.iter_mut().skip(pc).take(width(op)) {
            *slot = ix as u32;
        }
    }
    out
}

/// Whether a decoded source map fits `code`: every entry marked as a jump into or out of a
/// function sits on a JUMP, and there are no more entries than instructions. A map that does
/// not fit belongs to other code: solc 0.7 reports, for a contract another contract of the same
/// build creates with `new`, the map of its assembly optimized a second time (for the creator),
/// while its bytecode is from the first pass.
pub fn misfit(code: &[u8], entries: &[SrcEntry]) -> Option<Misfit> {
    let ops: Vec<u8> = instructions(code).map(|(_, op)| op).collect();
    let marks = entries.iter().filter(|e| matches!(e.jump, b'i' | b'o'));
    let off = entries
        .iter()
        .zip(ops.iter().map(Some).chain(std::iter::repeat(None)))
        .filter(|(e, _)| matches!(e.jump, b'i' | b'o'))
        .filter(|(_, op)| op != &Some(&JUMP))
        .count();
    (off > 0 || entries.len() > ops.len()).then(|| Misfit {
        marks_off: off,
        marks: marks.count(),
        entries: entries.len(),
        instructions: ops.len(),
    })
}

/// How a source map fails to fit its code (see [`misfit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Misfit {
    /// Entries marked `i`/`o` that are not on a JUMP, of `marks`.
    pub marks_off: usize,
    pub marks: usize,
    pub entries: usize,
    pub instructions: usize,
}

/// Bytes of the instruction starting with `op` (a PUSH with its data).
fn width(op: u8) -> usize {
    if (PUSH1..=PUSH32).contains(&op) {
        1 + usize::from(op - PUSH0)
    } else {
        1
    }
}
