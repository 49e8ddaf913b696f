//! The report's revert section and its collapsible call tree.

use std::io::{self, Write};

use alloy_primitives::{hex, Address};

use super::esc;
use crate::render::decoder::Decoder;
use crate::render::source::Location;
use crate::render::tree::failure_path;
use crate::replay::assets::format_units;
use crate::trace::call::{CallFrame, CallKind, CallLog};
use crate::trace::errors::FrameError;

/// Frames at this depth and deeper start collapsed.
const OPEN_DEPTH: usize = 2;
/// Input and output bytes shown per frame; the rest is counted, not shown.
const MAX_BYTES: usize = 2048;

fn addr(a: Address, d: &Decoder) -> String {
    esc(&d.with_label(&a, a.to_checksum(None)))
}

fn revert_text(f: &CallFrame, d: &Decoder) -> Option<String> {
    f.output
        .as_deref()
        .and_then(|o| d.describe_revert_at(f.to, o))
        .or_else(|| f.revert_reason.clone())
}

/// The reason in a few words: the decoded revert data, else the error.
fn reason(f: &CallFrame, d: &Decoder) -> String {
    match (revert_text(f, d), &f.error) {
        (Some(r), _) => r,
        (None, Some(FrameError::Reverted) | None) => "no revert data".to_string(),
        (None, Some(e)) => e.to_string(),
    }
}

fn call_text(f: &CallFrame, d: &Decoder) -> String {
    match f.kind {
        CallKind::Create | CallKind::Create2 => d
            .describe_creation(&f.input)
            .unwrap_or_else(|| format!("new contract ({} bytes of init code)", f.input.len())),
        CallKind::Selfdestruct => String::new(),
        _ => d.describe_call_at(f.to, &f.input, f.value),
    }
}

/// A source line with its failing span marked, and its number.
fn excerpt<W: Write>(loc: &Location, out: &mut W) -> io::Result<()> {
    if loc.changed {
        // Edited since the build: its lines are not the ones that ran.
        return Ok(());
    }
    let (text, (from, to)) = loc.excerpt();
    let chars: Vec<char> = text.chars().collect();
    let part = |a: usize, b: usize| {
        esc(&chars[a.min(chars.len())..b.min(chars.len())]
            .iter()
            .collect::<String>())
    };
    writeln!(
        out,
        "<pre class=\"src\"><span class=\"ln\">{} | </span>{}<mark>{}</mark>{}</pre>",
        loc.line,
        part(0, from),
        part(from, to),
        part(to, chars.len())
    )
}

fn bytes_line<W: Write>(label: &str, b: &[u8], out: &mut W) -> io::Result<()> {
    if b.len() <= MAX_BYTES {
        writeln!(out, "<div class=\"kv\">{label}: 0x{}</div>", hex::encode(b))
    } else {
        writeln!(
            out,
            "<div class=\"kv\">{label}: 0x{}… ({} bytes in all; the first {MAX_BYTES} shown)</div>",
            hex::encode(&b[..MAX_BYTES]),
            b.len()
        )
    }
}

/// The failure: reason, the frame it started in, its source location and the Solidity stack.
pub fn revert_section<W: Write>(root: &CallFrame, d: &Decoder, out: &mut W) -> io::Result<()> {
    if root.error.is_none() {
        return Ok(());
    }
    let path = failure_path(root);
    let origin = path.iter().fold(root, |f, i| &f.calls[*i]);
    writeln!(out, "<h2 id=\"ct-revert\">Revert</h2>")?;
    writeln!(
        out,
        "<p id=\"ct-reason\" class=\"bad\">reverted: {}</p>",
        esc(&reason(origin, d))
    )?;
    let to = origin
        .to
        .map_or_else(|| "(no address)".to_string(), |a| addr(a, d));
    writeln!(
        out,
        "<p>in <span class=\"m\">{to}</span> <span class=\"m\">{}</span> (gas {}), frame {}</p>",
        esc(&call_text(origin, d)),
        origin.gas_used,
        esc(&path_text(&path))
    )?;
    let notes = d.sources();
    if let Some(loc) = notes.and_then(|n| n.frames.get(path.as_slice())) {
        writeln!(
            out,
            "<p id=\"ct-location\">at <code>{}</code></p>",
            esc(&loc.at())
        )?;
        excerpt(loc, out)?;
    } else {
        writeln!(
            out,
            "<p class=\"dim\">No source location: no artifact with a source map matched this \
             contract's code (pass --abi with the build output).</p>"
        )?;
    }
    if let Some(stack) = notes.map(|n| &n.stack).filter(|s| !s.is_empty()) {
        writeln!(
            out,
            "<h3>Solidity stack trace</h3><ol id=\"ct-stack\" class=\"m\">"
        )?;
        for e in stack {
            writeln!(out, "<li>at {}", esc(&e.text()))?;
            excerpt(&e.location, out)?;
            writeln!(out, "</li>")?;
        }
        writeln!(out, "</ol>")?;
    }
    Ok(())
}

/// `root`, or `root.1.0` for the frame at child indices [1, 0].
fn path_text(path: &[usize]) -> String {
    let mut s = "root".to_string();
    for i in path {
        s.push('.');
        s.push_str(&i.to_string());
    }
    s
}

/// The call tree, one `<details>` per frame.
pub fn tree_section<W: Write>(
    root: &CallFrame,
    d: &Decoder,
    currency: &str,
    out: &mut W,
) -> io::Result<()> {
    writeln!(
        out,
        "<h2 id=\"ct-calls\">Call tree</h2><div><button id=\"ct-expand\" type=\"button\">expand \
         all</button><button id=\"ct-collapse\" type=\"button\">collapse all</button></div>\
         <div id=\"ct-tree\">"
    )?;
    frame(root, d, currency, &mut Vec::new(), out)?;
    writeln!(out, "</div>")
}

fn log_line<W: Write>(f: &CallFrame, l: &CallLog, d: &Decoder, out: &mut W) -> io::Result<()> {
    let context = match f.kind {
        CallKind::Delegatecall | CallKind::Callcode => Some(f.from),
        _ => f.to,
    };
    let from = if context == Some(l.address) {
        String::new()
    } else {
        format!(" <span class=\"dim\">from {}</span>", addr(l.address, d))
    };
    writeln!(
        out,
        "<div class=\"log\">emit {}{from}</div>",
        esc(&d.describe_log_at(Some(l.address), &l.topics, &l.data))
    )
}

fn frame<W: Write>(
    f: &CallFrame,
    d: &Decoder,
    currency: &str,
    path: &mut Vec<usize>,
    out: &mut W,
) -> io::Result<()> {
    let failed = f.error.is_some();
    let open = if path.len() < OPEN_DEPTH { " open" } else { "" };
    let class = if failed { "f x" } else { "f" };
    let to =
        f.to.map_or_else(|| "(no address)".to_string(), |a| addr(a, d));
    write!(
        out,
        "<details class=\"{class}\"{open} data-path=\"{}\"><summary><span class=\"k\">{}</span> {} → {to}",
        esc(&path_text(path)),
        f.kind.as_str(),
        addr(f.from, d)
    )?;
    let call = call_text(f, d);
    if !call.is_empty() {
        write!(out, " {}", esc(&call))?;
    }
    if let Some(v) = f.value.filter(|v| !v.is_zero()) {
        write!(out, " value {} {}", format_units(v, 18), esc(currency))?;
    }
    if f.kind != CallKind::Selfdestruct {
        write!(out, " gas {}", f.gas_used)?;
    }
    let located = f
        .error
        .as_ref()
        .and_then(|_| d.sources())
        .and_then(|n| n.frames.get(path.as_slice()));
    if failed {
        let error = f.error.as_ref().map_or("", FrameError::as_str);
        let text = match revert_text(f, d) {
            Some(r) => format!("{error}: {r}"),
            None => error.to_string(),
        };
        write!(out, " <span class=\"bad\">✗ {}</span>", esc(&text))?;
        if let Some(loc) = located {
            write!(out, " at <code>{}</code>", esc(&loc.at()))?;
        }
    } else {
        write!(out, " <span class=\"ok\">✓</span>")?;
    }
    if f.from_node {
        write!(out, " <span class=\"dim\">(from node)</span>")?;
    }
    writeln!(out, "</summary><div class=\"body\">")?;
    if let Some(loc) = located {
        excerpt(loc, out)?;
    }
    if !f.kind.is_create() && f.kind != CallKind::Selfdestruct {
        bytes_line("input", &f.input, out)?;
    }
    if let Some(o) = f.output.as_deref().filter(|o| !o.is_empty()) {
        bytes_line(if failed { "revert data" } else { "output" }, o, out)?;
    }
    let mut logs = f.logs.iter().peekable();
    for (i, c) in f.calls.iter().enumerate() {
        while let Some(l) = logs.next_if(|l| l.position <= i as u64) {
            log_line(f, l, d, out)?;
        }
        path.push(i);
        frame(c, d, currency, path, out)?;
        path.pop();
    }
    for l in logs {
        log_line(f, l, d, out)?;
    }
    writeln!(out, "</div></details>")
}
