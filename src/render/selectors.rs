//! Readable tables for the tracers whose geth results are lists or counts: the 4byteTracer's
//! selectors (with the function each names, where the decoder knows it), the flatCallTracer's
//! entries and the keccak256PreimageTracer's preimages. `--json` prints geth's result instead.

use std::collections::BTreeMap;
use std::io::{self, Write};

use alloy_primitives::{hex, Bytes, B256};

use crate::render::decoder::Decoder;
use crate::render::style::{num, TableStyle};
use crate::trace::flat::FlatCallFrame;

/// The 4byteTracer's counts: selector, argument bytes, calls, and the function's signature.
pub fn render_four_byte<W: Write>(
    counts: &BTreeMap<String, u64>,
    d: &Decoder,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    if counts.is_empty() {
        return writeln!(out, "no calls with a 4-byte selector");
    }
    let mut rows: Vec<(&str, &str, u64)> = counts
        .iter()
        .filter_map(|(k, n)| k.split_once('-').map(|(sel, size)| (sel, size, *n)))
        .collect();
    // Most called first; ties in geth's key order.
    rows.sort_by_key(|r| std::cmp::Reverse(r.2));
    let mut t = style.numeric_table(
        &["selector", "argument bytes", "calls", "function"],
        &["argument bytes", "calls"],
    );
    for (sel, size, n) in rows {
        let bytes = hex::decode(sel).unwrap_or_default();
        let described = d.describe_call(&bytes);
        let name = if described == sel {
            String::new()
        } else {
            described
        };
        t.add_row(vec![
            comfy_table::Cell::new(sel),
            num(size.parse().unwrap_or(0)),
            num(n),
            comfy_table::Cell::new(name),
        ]);
    }
    writeln!(out, "{t}")
}

/// The flatCallTracer's entries: trace address, type, from → to, value, gas used, error.
pub fn render_flat_calls<W: Write>(
    frames: &[FlatCallFrame],
    d: &Decoder,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    let mut t = style.numeric_table(
        &[
            "trace", "type", "from", "to", "call", "value", "gas used", "error",
        ],
        &["gas used"],
    );
    for f in frames {
        let a = &f.action;
        let trace = f
            .trace_address
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(".");
        let kind = a.call_type.or(a.creation_method).unwrap_or(f.kind);
        let from = a.from.or(a.self_destructed);
        let to =
            a.to.or(a.refund_address)
                .or(f.result.as_ref().and_then(|r| r.address));
        let show = |x: Option<alloy_primitives::Address>| {
            x.map(|x| d.with_label(&x, x.to_string()))
                .unwrap_or_default()
        };
        let call = match &a.input {
            Some(input) => d.describe_call_at(a.to, input, None),
            None => String::new(),
        };
        let used = f.result.as_ref().and_then(|r| r.gas_used);
        t.add_row(vec![
            comfy_table::Cell::new(if trace.is_empty() { "-".into() } else { trace }),
            comfy_table::Cell::new(kind),
            comfy_table::Cell::new(show(from)),
            comfy_table::Cell::new(show(to)),
            comfy_table::Cell::new(call),
            comfy_table::Cell::new(
                a.value
                    .or(a.balance)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            ),
            used.map(num).unwrap_or_else(|| comfy_table::Cell::new("")),
            comfy_table::Cell::new(&f.error),
        ]);
    }
    writeln!(out, "{t}")
}

/// The keccak256PreimageTracer's preimages: hash, length, and the preimage in hex (cut after
/// 64 bytes; `--json` has them whole).
pub fn render_preimages<W: Write>(
    hashes: &BTreeMap<B256, Bytes>,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    const SHOWN: usize = 64;
    let mut t = style.numeric_table(&["hash", "bytes", "preimage"], &["bytes"]);
    for (h, p) in hashes {
        let text = hex::encode_prefixed(&p[..p.len().min(SHOWN)]);
        let more = if p.len() > SHOWN { "…" } else { "" };
        t.add_row(vec![
            comfy_table::Cell::new(h.to_string()),
            num(p.len() as u64),
            comfy_table::Cell::new(format!("{text}{more}")),
        ]);
    }
    writeln!(out, "{t}")
}
