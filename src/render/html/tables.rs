//! The report's tables: asset changes, state changes by variable, state diff, gas; and the
//! flamegraph frame.

use std::collections::BTreeSet;
use std::io::{self, Write};

use alloy_primitives::{Address, B256, U256};

use super::esc;
use crate::render::assets::{asset_rows, fee_line, role_note, NATIVE_DECIMALS};
use crate::render::decoder::Decoder;
use crate::render::gas::{contract_rows, function, opcode_rows};
use crate::render::state_changes::StateChanges;
use crate::replay::assets::{format_units, AssetChanges};
use crate::trace::gas::GasReport;
use crate::trace::prestate::{AccountState, PrestateResult};

/// Frames listed in the gas table by frame; the call tree has them all.
const MAX_FRAME_ROWS: usize = 200;

fn addr(a: &Address, d: &Decoder) -> String {
    esc(&d.with_label(a, a.to_checksum(None)))
}

/// The asset changes: the table and the fee sentence.
pub fn assets_section<W: Write>(
    c: &AssetChanges,
    d: &Decoder,
    currency: &str,
    out: &mut W,
) -> io::Result<()> {
    writeln!(out, "<h2 id=\"ct-assets\">Asset changes</h2>")?;
    let rows = asset_rows(c, currency);
    if rows.is_empty() {
        writeln!(out, "<p class=\"dim\">Nothing moved.</p>")?;
    } else {
        writeln!(
            out,
            "<table id=\"ct-asset-table\"><tr><th>address</th><th>asset</th><th class=\"n\">change</th><th class=\"n\">fee</th></tr>"
        )?;
        for r in &rows {
            let note = role_note(c, r);
            let sender = if note.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"dim\">{}</span>", esc(note.trim()))
            };
            let title = r
                .token
                .map(|t| format!(" title=\"{}\"", t.to_checksum(None)))
                .unwrap_or_default();
            writeln!(
                out,
                "<tr><td class=\"a\">{}{sender}</td><td{title}>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                addr(&r.address, d),
                esc(&r.asset),
                esc(&r.change),
                esc(&r.fee)
            )?;
        }
        writeln!(out, "</table>")?;
    }
    if let Some((to, mint)) = c.minted {
        writeln!(
            out,
            "<p>minted from L1 (deposit): {} {} to {}</p>",
            format_units(mint, NATIVE_DECIMALS),
            esc(currency),
            addr(&to, d)
        )?;
    }
    if let Some(f) = c.fee.as_ref().filter(|f| !f.paid.is_zero()) {
        writeln!(out, "<p>{}</p>", esc(&fee_line(f, currency, d)))?;
    }
    if !c.burned_by_destruct.is_zero() {
        writeln!(
            out,
            "<p>burned by self-destructed accounts: {} {}</p>",
            format_units(c.burned_by_destruct, NATIVE_DECIMALS),
            esc(currency)
        )?;
    }
    Ok(())
}

/// The state changes by variable, as the text view's "state changes" section lists them: per
/// change its contract, its variable with the key path (a raw slot by its number, marked raw
/// with why), and its value before and after (a transient variable's: zero, then each value
/// written that stood).
pub fn state_section<W: Write>(c: &StateChanges, d: &Decoder, out: &mut W) -> io::Result<()> {
    writeln!(
        out,
        "<h2 id=\"ct-state\">State changes</h2><p class=\"dim\">Storage this transaction \
         changed, by variable (the contracts' storage layouts), decoded by type; a slot no layout \
         names is raw.</p>"
    )?;
    if c.changes.is_empty() {
        return writeln!(out, "<p class=\"dim\">No storage changed.</p>");
    }
    writeln!(
        out,
        "<table id=\"ct-state-table\"><tr><th>contract</th><th>variable</th><th>before</th>\
         <th>after</th></tr>"
    )?;
    for ch in &c.changes {
        // As the text view: the address and the artifact's contract name, else any label.
        let contract = match &ch.contract {
            Some(n) => format!(
                "{} <span class=\"dim\">({})</span>",
                ch.address.to_checksum(None),
                esc(n)
            ),
            None => addr(&ch.address, d),
        };
        let transient = if ch.transient {
            " <span class=\"dim\">(transient)</span>"
        } else {
            ""
        };
        let (class, variable) = match &ch.var {
            Some(v) => ("", format!("{}{transient}", esc(&v.name))),
            None => (
                " class=\"raw\"",
                format!(
                    "slot {:#066x}{transient} <span class=\"nc\">raw</span> <span class=\"dim\">({})</span>",
                    ch.slot,
                    esc(ch.raw.as_deref().unwrap_or("not named"))
                ),
            ),
        };
        let values = crate::render::state_changes::values(ch);
        let before = values.first().map_or("", String::as_str);
        let after = values.get(1..).unwrap_or_default();
        writeln!(
            out,
            "<tr{class}><td class=\"a\">{contract}</td><td class=\"a\">{variable}</td>\
             <td class=\"a\">{}</td><td class=\"a\">{}</td></tr>",
            esc(before),
            esc(&after.join(" → "))
        )?;
    }
    writeln!(out, "</table>")
}

fn word(w: &B256) -> String {
    format!("{w:#x}")
}

/// The state diff: per changed account, balance, nonce, code and storage before and after.
pub fn diff_section<W: Write>(
    r: &PrestateResult,
    d: &Decoder,
    currency: &str,
    out: &mut W,
) -> io::Result<()> {
    let PrestateResult::Diff { pre, post } = r else {
        return Ok(());
    };
    writeln!(
        out,
        "<h2 id=\"ct-diff\">State diff</h2><p class=\"dim\">The prestateTracer's diffMode of \
         this replay: what changed, before and after.</p>"
    )?;
    let accounts: BTreeSet<&Address> = pre.keys().chain(post.keys()).collect();
    if accounts.is_empty() {
        return writeln!(out, "<p class=\"dim\">No state changed.</p>");
    }
    writeln!(
        out,
        "<table id=\"ct-diff-table\"><tr><th>account</th><th>field</th><th>before</th><th>after</th></tr>"
    )?;
    let empty = AccountState::default();
    let money = |v: U256| format!("{} {}", format_units(v, NATIVE_DECIMALS), esc(currency));
    for a in accounts {
        let before = pre.get(a).unwrap_or(&empty);
        let after = post.get(a);
        let who = addr(a, d);
        let row = |field: &str, b: String, x: String| {
            format!(
                "<tr><td class=\"a\">{who}</td><td>{field}</td><td class=\"a\">{b}</td><td class=\"a\">{x}</td></tr>"
            )
        };
        let Some(after) = after else {
            writeln!(
                out,
                "{}",
                row(
                    "account",
                    before.balance.map(money).unwrap_or_default(),
                    "deleted".into()
                )
            )?;
            continue;
        };
        if let Some(b) = after.balance {
            writeln!(
                out,
                "{}",
                row(
                    "balance",
                    money(before.balance.unwrap_or_default()),
                    money(b)
                )
            )?;
        }
        if after.nonce != 0 && after.nonce != before.nonce {
            writeln!(
                out,
                "{}",
                row("nonce", before.nonce.to_string(), after.nonce.to_string())
            )?;
        }
        if let Some(c) = &after.code {
            let len = |c: Option<usize>| c.map_or("none".to_string(), |n| format!("{n} bytes"));
            writeln!(
                out,
                "{}",
                row(
                    "code",
                    len(before.code.as_ref().map(|c| c.len())),
                    len(Some(c.len()))
                )
            )?;
        }
        let slots: BTreeSet<&B256> = before
            .storage
            .iter()
            .flatten()
            .chain(after.storage.iter().flatten())
            .map(|(k, _)| k)
            .collect();
        for k in slots {
            let b = before.storage.as_ref().and_then(|s| s.get(k));
            let x = after.storage.as_ref().and_then(|s| s.get(k));
            writeln!(
                out,
                "{}",
                row(
                    &format!("slot {}", word(k)),
                    word(b.unwrap_or(&B256::ZERO)),
                    word(x.unwrap_or(&B256::ZERO))
                )
            )?;
        }
    }
    writeln!(out, "</table>")
}

/// The gas tables: the transaction line, by opcode, by contract, by frame.
pub fn gas_tables<W: Write>(r: &GasReport, d: &Decoder, out: &mut W) -> io::Result<()> {
    writeln!(
        out,
        "<table id=\"ct-gas-tx\"><tr><th class=\"n\">intrinsic</th><th class=\"n\">execution</th>\
         <th class=\"n\">refund</th><th class=\"n\">gas used</th></tr><tr><td class=\"n\">{}</td>\
         <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr></table>",
        r.intrinsic, r.execution, r.refund, r.gas_used
    )?;
    if r.floor > 0 && r.floor == r.gas_used {
        writeln!(out, "<p>(gas used is the EIP-7623 calldata floor)</p>")?;
    }
    let share = |g: u64| {
        if r.execution == 0 {
            0.0
        } else {
            g as f64 * 100.0 / r.execution as f64
        }
    };
    writeln!(
        out,
        "<h3>By opcode (execution gas)</h3><table id=\"ct-gas-ops\"><tr><th>opcode</th>\
         <th class=\"n\">count</th><th class=\"n\">gas</th><th class=\"n\">share</th></tr>"
    )?;
    for (op, count, gas) in opcode_rows(r) {
        writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{gas}</td><td class=\"n\">{:.2}%</td></tr>",
            esc(&op),
            count.map(|c| c.to_string()).unwrap_or_default(),
            share(gas)
        )?;
    }
    writeln!(
        out,
        "</table><h3>By contract</h3><table id=\"ct-gas-contracts\"><tr><th>contract</th>\
         <th class=\"n\">frames</th><th class=\"n\">self gas</th><th class=\"n\">inclusive gas</th></tr>"
    )?;
    for (a, frames, s, i) in contract_rows(r) {
        writeln!(
            out,
            "<tr><td class=\"a\">{}</td><td class=\"n\">{frames}</td><td class=\"n\">{s}</td><td class=\"n\">{i}</td></tr>",
            addr(&a, d)
        )?;
    }
    writeln!(
        out,
        "</table><h3>By frame</h3><table id=\"ct-gas-frames\"><tr><th>frame</th><th>function</th>\
         <th class=\"n\">self gas</th><th class=\"n\">inclusive gas</th></tr>"
    )?;
    for f in r.frames.iter().take(MAX_FRAME_ROWS) {
        writeln!(
            out,
            "<tr><td class=\"a\">{}{} {}{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            "&nbsp;&nbsp;".repeat(f.depth),
            f.kind.as_str(),
            addr(&f.code_address, d),
            if f.failed { " <span class=\"bad\">✗</span>" } else { "" },
            esc(&function(f, d)),
            f.self_gas,
            f.inclusive
        )?;
    }
    if r.frames.len() > MAX_FRAME_ROWS {
        writeln!(
            out,
            "<tr><td colspan=\"4\" class=\"dim\">… {} more frames (every frame is in the call tree)</td></tr>",
            r.frames.len() - MAX_FRAME_ROWS
        )?;
    }
    writeln!(out, "</table>")
}

/// Runs in the flamegraph's frame before inferno's script: its URL bookkeeping
/// (`history.replaceState`, refused for a `srcdoc` document) does nothing, and its resize
/// handler skips the moments the frame is laid out without a width (printing), when it would
/// compute negative and infinite sizes.
const GUARD: &str =
    "history.replaceState=function(){};(function(){var add=window.addEventListener;\
window.addEventListener=function(t,f,o){if(t==='resize'){var g=f;f=function(e){\
if(document.documentElement.clientWidth>40){g(e);}};}return add.call(window,t,f,o);};})();";

/// The SVG's `height` attribute, in pixels.
fn svg_height(svg: &str) -> Option<u32> {
    let tag = &svg[svg.find("<svg")?..];
    let tag = &tag[..tag.find('>')?];
    let at = tag.find(" height=\"")? + " height=\"".len();
    tag[at..].split('"').next()?.parse().ok()
}

/// inferno's flamegraph inside a `srcdoc` frame of its own: its script (click to zoom, search)
/// runs there as in the SVG file, its ids and globals apart from the report's. The XML prolog is
/// dropped (the frame's document is HTML), `init` runs once the SVG is parsed and the frame has
/// a width, and [`GUARD`] keeps the script's URL bookkeeping and degenerate resizes harmless.
pub fn flamegraph<W: Write>(svg: &str, out: &mut W) -> io::Result<()> {
    let start = svg.find("<svg").unwrap_or(0);
    let body = svg[start..].replacen(" onload=\"init(evt)\"", "", 1);
    let height = svg_height(&body).unwrap_or(400) + 8;
    let inits = body.contains("function init(");
    let doc = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{{margin:0}}svg{{display:block;width:100%}}</style></head><body>\
         <script>{GUARD}</script>{body}{}</body></html>",
        // init sizes the drawing from the frame's width: wait until the frame has one.
        if inits {
            "<script>(function go(){if(document.documentElement.clientWidth>40){init();}else{setTimeout(go,30);}})();</script>"
        } else {
            ""
        }
    );
    writeln!(
        out,
        "<h3>Flamegraph</h3><p class=\"dim\">Gas by call stack; click a frame to zoom in, \
         \"Reset Zoom\" to go back.</p><iframe id=\"ct-flame\" class=\"flame\" title=\"flamegraph\" \
         style=\"height:{height}px\" srcdoc=\"{}\"></iframe>",
        esc(&doc)
    )
}
