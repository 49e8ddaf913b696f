//! The call tree for people: one line per frame, logs in place, failures standing out, and a
//! closing line saying where and why the transaction reverted.
//!
//! ```text
//! CALL 0x… → 0x… transfer(to: 0x…, amount: 5) value 1.5 ETH gas 50,000 ✗ execution reverted: Error("nope")
//! ├─ STATICCALL 0x1111…1111 → 0x2222…2222 balanceOf(account: 0x…) gas 2,600 ✓
//! ├─ emit Transfer(from: 0x…, to: 0x…, value: 5)
//! └─ CALL 0x1111…1111 → 0x2222…2222 transfer(to: 0x…, amount: 5) gas 5,000 ✗ execution reverted: Error("nope")
//! reverted: Error("nope") at 0x… transfer(to: 0x…, amount: 5) (gas 5,000)
//! ```
//!
//! With color off the output is plain text with no escape sequences, so it can be piped,
//! diffed and asserted on.

use std::io::{self, Write};

use alloy_primitives::{Address, U256};

use super::decoder::Decoder;
use super::source::carets;
use crate::source::deposit::Deposit;
use crate::trace::call::{CallFrame, CallKind, CallLog};
use crate::trace::errors::FrameError;

/// How the tree is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeOptions {
    /// ANSI colors: failures red and bold, addresses dim.
    pub color: bool,
    /// Print each frame's logs among its subcalls.
    pub show_logs: bool,
    /// Name of the native currency, e.g. `ETH`.
    pub currency: String,
    /// The transaction is an OP-stack deposit (its `from` and what it carried): the top line
    /// says `deposit from L1` with its mint, and the line under it its source hash.
    pub deposit: Option<(Address, Deposit)>,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            color: false,
            show_logs: true,
            currency: "ETH".to_string(),
            deposit: None,
        }
    }
}

const RED_BOLD: &str = "1;31";
const DIM: &str = "2";
const GREEN: &str = "32";
const RED_UNDERLINE: &str = "4;31";

/// Writes the call tree of `root`, then, if the top frame failed, a `reverted:` line naming the
/// frame the failure started in.
pub fn render_call_tree(
    root: &CallFrame,
    decoder: &Decoder,
    opts: &TreeOptions,
    out: &mut impl Write,
) -> io::Result<()> {
    let r = Renderer { decoder, opts };
    r.frame(out, root, "", "", true, &mut Vec::new())?;
    // A failed deposit ran nothing: its top line says all there is.
    let failed_deposit = opts.deposit.is_some() && root.kind == CallKind::Stop;
    if root.error.is_some() && !failed_deposit {
        let origin = failure_origin(root);
        let to = origin
            .to
            .map_or_else(|| "(no address)".to_string(), |a| r.addr(a, true));
        let text = format!(
            "reverted: {} at {to} {} (gas {})",
            r.summary_reason(origin, r.inferred(&failure_path(root))),
            r.call_text(origin),
            group(&origin.gas_used.to_string()),
        );
        // Paint the words, not the address inside, so the address keeps its own style.
        let (head, tail) = text.split_at(text.find(" at ").unwrap_or(text.len()));
        writeln!(out, "{}{}", r.paint(head, RED_BOLD), tail)?;
        if let Some(notes) = decoder.sources().filter(|n| !n.stack.is_empty()) {
            writeln!(out, "Solidity stack trace:")?;
            for entry in &notes.stack {
                writeln!(out, "  at {}", entry.text())?;
            }
        }
    }
    Ok(())
}

/// The path (child indices from the root) of the frame a failure started in: see
/// [`failure_origin`].
pub fn failure_path(root: &CallFrame) -> Vec<usize> {
    let mut path = Vec::new();
    let mut frame = root;
    loop {
        let passed_on = frame.error.as_ref().is_some_and(FrameError::is_revert);
        match frame
            .calls
            .iter()
            .enumerate()
            .rev()
            .find(|(_, c)| c.error.is_some())
        {
            Some((i, child))
                if passed_on && (frame.output.is_none() || frame.output == child.output) =>
            {
                path.push(i);
                frame = child;
            }
            _ => return path,
        }
    }
}

/// The frame a failure started in: follow the last failed subcall down as long as the parent
/// only passed its failure on — it reverted with the same data, or with none (a bare
/// `require(ok)`). A parent that reverted with its own reason, or failed some other way (out of
/// gas, invalid opcode), is itself the origin.
fn failure_origin(frame: &CallFrame) -> &CallFrame {
    failure_path(frame)
        .into_iter()
        .fold(frame, |f, i| &f.calls[i])
}

enum Child<'a> {
    Call(usize, &'a CallFrame),
    Log(&'a CallLog),
}

/// A frame's subcalls and logs in execution order: a log with `position` p was emitted after
/// p subcalls had been made, so it goes right before subcall p.
fn children(f: &CallFrame, show_logs: bool) -> Vec<Child<'_>> {
    let logs: &[CallLog] = if show_logs { &f.logs } else { &[] };
    let mut logs = logs.iter().peekable();
    let mut out = Vec::with_capacity(f.calls.len() + logs.len());
    for (i, call) in f.calls.iter().enumerate() {
        while let Some(log) = logs.next_if(|l| l.position <= i as u64) {
            out.push(Child::Log(log));
        }
        out.push(Child::Call(i, call));
    }
    out.extend(logs.map(Child::Log));
    out
}

struct Renderer<'a> {
    decoder: &'a Decoder,
    opts: &'a TreeOptions,
}

impl Renderer<'_> {
    fn paint(&self, s: &str, style: &str) -> String {
        if self.opts.color {
            format!("\x1b[{style}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Full checksummed address, or `0xAbCd…1234` below the top frame to keep lines short.
    fn addr(&self, a: Address, full: bool) -> String {
        let s = a.to_checksum(None);
        let s = if full {
            s
        } else {
            format!("{}…{}", &s[..6], &s[s.len() - 4..])
        };
        self.decoder.with_label(&a, self.paint(&s, DIM))
    }

    fn call_text(&self, f: &CallFrame) -> String {
        match f.kind {
            CallKind::Create | CallKind::Create2 => {
                self.decoder.describe_creation(&f.input).unwrap_or_else(|| {
                    format!(
                        "new contract ({} bytes of init code)",
                        group(&f.input.len().to_string())
                    )
                })
            }
            CallKind::Selfdestruct => String::new(),
            _ => self.decoder.describe_call_at(f.to, &f.input, f.value),
        }
    }

    fn revert_text(&self, f: &CallFrame) -> Option<String> {
        f.output
            .as_deref()
            .and_then(|o| self.decoder.describe_revert_at(f.to, o))
            .or_else(|| f.revert_reason.clone())
    }

    /// Why the frame at `path` reverted without a reason, when the sources tell.
    fn inferred(&self, path: &[usize]) -> Option<&str> {
        self.decoder
            .sources()
            .and_then(|n| n.inferred.get(path))
            .map(String::as_str)
    }

    /// `execution reverted: Error("nope")`, the bare error when there is nothing to decode, or
    /// the error and why (`execution reverted (no function matches …)`) where it is inferred.
    fn failure_text(&self, f: &CallFrame, why: Option<&str>) -> String {
        let error = f.error.as_ref().map_or("", FrameError::as_str);
        match (self.revert_text(f), why) {
            (Some(reason), _) => format!("{error}: {reason}"),
            (None, Some(why)) => format!("{error} ({why})"),
            (None, None) => error.to_string(),
        }
    }

    fn summary_reason(&self, f: &CallFrame, why: Option<&str>) -> String {
        match (self.revert_text(f), &f.error, why) {
            (Some(reason), _, _) => reason,
            (None, Some(FrameError::Reverted) | None, Some(why)) => {
                format!("no revert data: {why}")
            }
            (None, Some(FrameError::Reverted) | None, None) => "no revert data".to_string(),
            (None, Some(error), _) => error.to_string(),
        }
    }

    fn frame_line(&self, f: &CallFrame, top: bool, why: Option<&str>) -> String {
        match self.opts.deposit.filter(|_| top) {
            Some((from, d)) => self.deposit_line(f, from, d, why),
            None => self.call_line(f, top, why),
        }
    }

    /// `deposit from L1: CALL 0x… → 0x… … mint 1 ETH gas 21,000 ✓`; a failed deposit, whose
    /// only frame is op-geth's STOP from the zero address, as its sender and what it kept.
    fn deposit_line(&self, f: &CallFrame, from: Address, d: Deposit, why: Option<&str>) -> String {
        let head = if d.is_system_tx {
            "deposit from L1 (system transaction): "
        } else {
            "deposit from L1: "
        };
        let mint = d
            .mint
            .filter(|m| !m.is_zero())
            .map(|m| format!(" mint {}", format_value(m, &self.opts.currency)))
            .unwrap_or_default();
        if f.kind != CallKind::Stop {
            let line = self.call_line(f, true, why);
            // The mint goes before the gas, after the call and its value.
            let at = line.rfind(" gas ").unwrap_or(line.len());
            return format!("{head}{}{mint}{}", &line[..at], &line[at..]);
        }
        let error = f.error.as_ref().map_or("", FrameError::as_str);
        format!(
            "{head}{}{mint} gas {} {}",
            self.addr(from, true),
            group(&f.gas_used.to_string()),
            self.paint(
                &format!("✗ {error} (nothing ran: the mint is kept, the nonce bumped)"),
                RED_BOLD
            )
        )
    }

    fn call_line(&self, f: &CallFrame, top: bool, why: Option<&str>) -> String {
        let failed = f.error.is_some();
        let kind = if failed {
            self.paint(f.kind.as_str(), RED_BOLD)
        } else {
            f.kind.as_str().to_string()
        };
        let to =
            f.to.map_or_else(|| "(no address)".to_string(), |a| self.addr(a, top));
        let mut line = format!("{kind} {} → {to}", self.addr(f.from, top));
        let call = self.call_text(f);
        if !call.is_empty() {
            line.push(' ');
            line.push_str(&call);
        }
        if let Some(v) = f.value.filter(|v| !v.is_zero()) {
            line.push_str(" value ");
            line.push_str(&format_value(v, &self.opts.currency));
        }
        // geth reports no gas for SELFDESTRUCT pseudo-frames; "gas 0" would only be noise.
        if f.kind != CallKind::Selfdestruct {
            line.push_str(" gas ");
            line.push_str(&group(&f.gas_used.to_string()));
        }
        line.push(' ');
        if failed {
            line.push_str(&self.paint(&format!("✗ {}", self.failure_text(f, why)), RED_BOLD));
        } else {
            line.push_str(&self.paint("✓", GREEN));
        }
        if f.from_node {
            line.push_str(&self.paint(" (from node)", DIM));
        }
        line
    }

    fn log_line(&self, f: &CallFrame, log: &CallLog) -> String {
        let mut line = format!(
            "emit {}",
            self.decoder
                .describe_log_at(Some(log.address), &log.topics, &log.data)
        );
        // Logs belong to the storage context, which for DELEGATECALL/CALLCODE is `from`; say so
        // only when the emitter is not the obvious one.
        let context = match f.kind {
            CallKind::Delegatecall | CallKind::Callcode => Some(f.from),
            _ => f.to,
        };
        if context != Some(log.address) {
            line.push_str(" from ");
            line.push_str(&self.addr(log.address, false));
        }
        line
    }

    fn frame<W: Write + ?Sized>(
        &self,
        out: &mut W,
        f: &CallFrame,
        lead: &str,
        cont: &str,
        top: bool,
        path: &mut Vec<usize>,
    ) -> io::Result<()> {
        let kids = children(f, self.opts.show_logs);
        let located = f
            .error
            .as_ref()
            .and_then(|_| self.decoder.sources())
            .and_then(|n| n.frames.get(path.as_slice()));
        let why = f.error.as_ref().and_then(|_| self.inferred(path));
        match located {
            Some(loc) if loc.changed => {
                writeln!(
                    out,
                    "{lead}{} at {}",
                    self.frame_line(f, top, why),
                    loc.at()
                )?;
            }
            Some(loc) => {
                writeln!(
                    out,
                    "{lead}{} at {}",
                    self.frame_line(f, top, why),
                    loc.at()
                )?;
                let bar = if kids.is_empty() { "   " } else { "│  " };
                let (text, span) = loc.excerpt();
                let number = loc.line.to_string();
                let shown = if self.opts.color {
                    let chars: Vec<char> = text.chars().collect();
                    let part = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
                    format!(
                        "{}{}{}",
                        part(0, span.0),
                        self.paint(&part(span.0, span.1), RED_UNDERLINE),
                        part(span.1, chars.len())
                    )
                } else {
                    text
                };
                writeln!(out, "{cont}{bar}  {number} | {shown}")?;
                let pad = " ".repeat(number.len());
                writeln!(
                    out,
                    "{cont}{bar}  {pad} | {}",
                    self.paint(&carets(span), RED_BOLD)
                )?;
            }
            None => writeln!(out, "{lead}{}", self.frame_line(f, top, why))?,
        }
        if let Some((_, d)) = self.opts.deposit.filter(|_| top) {
            let bar = if kids.is_empty() { "   " } else { "│  " };
            let hash = self.paint(&d.source_hash.to_string(), DIM);
            writeln!(out, "{cont}{bar}source hash {hash}")?;
        }
        let n = kids.len();
        for (i, child) in kids.into_iter().enumerate() {
            let (branch, next) = if i + 1 == n {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            match child {
                Child::Call(index, c) => {
                    path.push(index);
                    self.frame(
                        out,
                        c,
                        &format!("{cont}{branch}"),
                        &format!("{cont}{next}"),
                        false,
                        path,
                    )?;
                    path.pop();
                }
                Child::Log(l) => writeln!(out, "{cont}{branch}{}", self.log_line(f, l))?,
            }
        }
        Ok(())
    }
}

/// `1,234,567`: decimal digits grouped by thousands.
fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Wei in ether units with up to 6 decimals (`1.5 ETH`, `0.000001 ETH`); amounts below
/// 0.000001 are given in wei so that a non-zero value never prints as zero.
fn format_value(wei: U256, currency: &str) -> String {
    let ether = U256::from(10u64).pow(U256::from(18));
    let micro = U256::from(10u64).pow(U256::from(12));
    let whole = wei / ether;
    let frac = (wei % ether) / micro;
    if whole.is_zero() && frac.is_zero() {
        return format!("{} wei", group(&wei.to_string()));
    }
    let mut s = group(&whole.to_string());
    if !frac.is_zero() {
        let f = format!("{:06}", frac.to::<u64>());
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    format!("{s} {currency}")
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
