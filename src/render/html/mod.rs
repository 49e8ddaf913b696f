//! A self-contained HTML report of one traced transaction or call: one file with its styles
//! and scripts inline, which makes no network request when opened (a Content-Security-Policy
//! forbids every fetch), works offline and prints with every frame open.
//!
//! It holds, each only when there is something to show: what was checked and what was not,
//! where and why it reverted (the source location and Solidity stack with source lines), the
//! call tree (`<details>` per frame, collapsed from depth 2 on, with names, values, gas, revert
//! reasons, logs and the failed frames' source lines), the asset changes, the state changes by
//! variable (where a contract's artifact has a storage layout), the state diff
//! (prestateTracer `diffMode`), the gas tables, the flamegraph (inferno's SVG, inline in a
//! sandbox-free `srcdoc` frame, so its own script zooms on click), and the command line that
//! made it. Every text from the chain, from names or from sources is HTML-escaped.

mod tables;
mod tree;

use std::io::{self, Write};

use super::decoder::Decoder;
use crate::render::state_changes::StateChanges;
use crate::replay::assets::AssetChanges;
use crate::trace::call::CallFrame;
use crate::trace::gas::GasReport;
use crate::trace::prestate::PrestateResult;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// The outcome of one check the run made (or could not make).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
    NotChecked,
}

/// One line of the self-check section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub verdict: Verdict,
    /// What was compared with what.
    pub what: String,
    /// The differences (failed) or why it was not checked.
    pub details: Vec<String>,
}

/// Everything the report shows; `None` leaves a section out.
pub struct Report<'a> {
    /// `Transaction 0x…` or `Simulated call`.
    pub title: String,
    /// Label and value pairs of the summary (chain, block, sender, status, gas…).
    pub facts: Vec<(String, String)>,
    /// The command line that made the report (secrets removed by the caller).
    pub command: String,
    pub call: Option<&'a CallFrame>,
    pub decoder: &'a Decoder,
    /// The native currency's name.
    pub currency: &'a str,
    pub assets: Option<&'a AssetChanges>,
    /// The storage changes by variable (`Names::state_changes`), where some artifact has a
    /// storage layout.
    pub state: Option<&'a StateChanges>,
    /// The prestateTracer's `diffMode` result.
    pub diff: Option<&'a PrestateResult>,
    pub gas: Option<&'a GasReport>,
    /// The flamegraph's SVG text.
    pub flamegraph: Option<&'a str>,
    pub checks: Vec<Check>,
    /// `chaintrace 0.1.0`.
    pub generator: String,
}

/// Escapes text for HTML content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes the report as one HTML document.
pub fn write_report<W: Write>(r: &Report<'_>, out: &mut W) -> io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"{}\"><title>{}</title><style>{CSS}</style></head><body>\n",
        esc(&r.generator),
        esc(&r.title)
    )?;
    writeln!(out, "<h1>{}</h1>", esc(&r.title))?;
    nav(r, out)?;
    writeln!(out, "<table class=\"facts\">")?;
    for (k, v) in &r.facts {
        writeln!(
            out,
            "<tr><td>{}</td><td class=\"a\">{}</td></tr>",
            esc(k),
            esc(v)
        )?;
    }
    writeln!(out, "</table>")?;
    checks(r, out)?;
    if let Some(root) = r.call {
        tree::revert_section(root, r.decoder, out)?;
        tree::tree_section(root, r.decoder, r.currency, out)?;
    }
    if let Some(a) = r.assets {
        tables::assets_section(a, r.decoder, r.currency, out)?;
    }
    if let Some(s) = r.state {
        tables::state_section(s, r.decoder, out)?;
    }
    if let Some(d) = r.diff {
        tables::diff_section(d, r.decoder, r.currency, out)?;
    }
    if r.gas.is_some() || r.flamegraph.is_some() {
        writeln!(out, "<h2 id=\"ct-gas\">Gas</h2>")?;
        if let Some(g) = r.gas {
            tables::gas_tables(g, r.decoder, out)?;
        }
        if let Some(svg) = r.flamegraph {
            tables::flamegraph(svg, out)?;
        }
    }
    writeln!(
        out,
        "<h2 id=\"ct-cmd\">Command</h2><pre>{}</pre>",
        esc(&r.command)
    )?;
    writeln!(
        out,
        "<footer>Made by {} from a local replay. This file is self-contained: it loads nothing \
         when opened.</footer>",
        esc(&r.generator)
    )?;
    writeln!(out, "<script>{JS}</script></body></html>")
}

fn nav<W: Write>(r: &Report<'_>, out: &mut W) -> io::Result<()> {
    let mut links = vec![("ct-check", "Self-check")];
    if let Some(root) = r.call {
        if root.error.is_some() {
            links.push(("ct-revert", "Revert"));
        }
        links.push(("ct-calls", "Call tree"));
    }
    if r.assets.is_some() {
        links.push(("ct-assets", "Asset changes"));
    }
    if r.state.is_some() {
        links.push(("ct-state", "State changes"));
    }
    if r.diff.is_some() {
        links.push(("ct-diff", "State diff"));
    }
    if r.gas.is_some() || r.flamegraph.is_some() {
        links.push(("ct-gas", "Gas"));
    }
    links.push(("ct-cmd", "Command"));
    write!(out, "<nav>")?;
    for (id, name) in links {
        write!(out, "<a href=\"#{id}\">{name}</a>")?;
    }
    writeln!(out, "</nav>")
}

fn checks<W: Write>(r: &Report<'_>, out: &mut W) -> io::Result<()> {
    writeln!(
        out,
        "<h2 id=\"ct-check\">Self-check</h2><ul class=\"checks\">"
    )?;
    for c in &r.checks {
        let (class, word) = match c.verdict {
            Verdict::Passed => ("ok", "✓ checked"),
            Verdict::Failed => ("bad", "✗ FAILED"),
            Verdict::NotChecked => ("nc", "not checked"),
        };
        write!(
            out,
            "<li><span class=\"{class}\">{word}</span>: {}",
            esc(&c.what)
        )?;
        if !c.details.is_empty() {
            write!(out, "<ul>")?;
            for d in &c.details {
                write!(out, "<li class=\"m\">{}</li>", esc(d))?;
            }
            write!(out, "</ul>")?;
        }
        writeln!(out, "</li>")?;
    }
    writeln!(out, "</ul>")
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_what_html_gives_meaning() {
        assert_eq!(
            esc(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
    }
}
