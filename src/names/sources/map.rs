//! solc source maps: the compressed `s:l:f:j:m;…` form decoded to one entry per instruction,
//! and a code's pc → instruction index (push data belongs to its PUSH).

use revm::bytecode::opcode::{PUSH0, PUSH1, PUSH32};

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

/// For every byte of `code`, the index of the instruction it belongs to (PUSH data belongs to
/// its PUSH).
pub fn instruction_index(code: &[u8]) -> Vec<u32> {
    let mut out = vec![0u32; code.len()];
    let (mut pc, mut ix) = (0usize, 0u32);
    while pc < code.len() {
        let op = code[pc];
        let width = if (PUSH1..=PUSH32).contains(&op) {
            1 + usize::from(op - PUSH0)
        } else {
            1
        };
        for slot in out.iter_mut().skip(pc).take(width) {
            *slot = ix;
        }
        pc += width;
        ix += 1;
    }
    out
}
