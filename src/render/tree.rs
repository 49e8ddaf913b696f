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
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            color: false,
            show_logs: true,
            currency: "ETH".to_string(),
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
    if root.error.is_some() {
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
                format!(
                    "new contract ({} bytes of init code)",
                    group(&f.input.len().to_string())
                )
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
mod tests {
    use super::*;
    use crate::render::abi::Abi;
    use crate::render::revert::ERROR_SELECTOR;
    use crate::render::signatures;
    use alloy_primitives::{Bytes, B256};

    fn a(b: u8) -> Address {
        Address::repeat_byte(b)
    }

    fn w(v: u64) -> [u8; 32] {
        U256::from(v).to_be_bytes()
    }

    fn calldata(sig: &str, words: &[[u8; 32]]) -> Bytes {
        let mut v = signatures::selector(sig).to_vec();
        for x in words {
            v.extend_from_slice(x);
        }
        v.into()
    }

    fn error_string(s: &str) -> Bytes {
        let mut v = ERROR_SELECTOR.to_vec();
        v.extend(w(32));
        v.extend(w(s.len() as u64));
        let mut padded = s.as_bytes().to_vec();
        padded.resize(s.len().div_ceil(32) * 32, 0);
        v.extend(padded);
        v.into()
    }

    fn frame(kind: CallKind, from: Address, to: Address, input: Bytes, gas_used: u64) -> CallFrame {
        CallFrame {
            from,
            gas: 100_000,
            gas_used,
            to: Some(to),
            input,
            output: None,
            error: None,
            revert_reason: None,
            calls: Vec::new(),
            logs: Vec::new(),
            value: (kind != CallKind::Staticcall).then_some(U256::ZERO),
            kind,
            from_node: false,
            steps: None,
        }
    }

    fn log(address: Address, topics: Vec<B256>, data: &[u8], position: u64) -> CallLog {
        CallLog {
            address,
            topics,
            data: Bytes::copy_from_slice(data),
            index: 0,
            position,
        }
    }

    /// A → B transfer(…) with 1.5 ETH, reverting with the reason of its last subcall:
    ///   B → C balanceOf (static), B → D unknown selector with a log before and after a
    ///   delegatecall, B → C transfer reverting with Error("nope").
    fn sample() -> CallFrame {
        let transfer_topic = signatures::event_topic("Transfer(address,address,uint256)");
        let mut root = frame(
            CallKind::Call,
            a(0xaa),
            a(0xbb),
            calldata(
                "transfer(address,uint256)",
                &[a(0xcc).into_word().0, w(1000)],
            ),
            50_000,
        );
        root.value = Some(U256::from(1_500_000_000_000_000_000u128));
        root.error = Some(FrameError::Reverted);
        root.output = Some(error_string("nope"));

        let balance = frame(
            CallKind::Staticcall,
            a(0xbb),
            a(0xcc),
            calldata("balanceOf(address)", &[a(0xaa).into_word().0]),
            2_600,
        );

        let mut other = frame(
            CallKind::Call,
            a(0xbb),
            a(0xdd),
            Bytes::from_static(&[0x12, 0x34, 0x56, 0x78]),
            1_234_567,
        );
        other.value = Some(U256::from(1_000_000_000_000u64));
        other.logs.push(log(
            a(0xdd),
            vec![transfer_topic, a(0xbb).into_word(), a(0xdd).into_word()],
            &w(5),
            0,
        ));
        other
            .logs
            .push(log(a(0xdd), vec![B256::repeat_byte(0x01)], &[0xff], 1));
        other.calls.push(frame(
            CallKind::Delegatecall,
            a(0xdd),
            a(0xee),
            Bytes::new(),
            100,
        ));

        let mut failing = frame(
            CallKind::Call,
            a(0xbb),
            a(0xcc),
            calldata("transfer(address,uint256)", &[a(0xdd).into_word().0, w(5)]),
            5_000,
        );
        failing.error = Some(FrameError::Reverted);
        failing.output = Some(error_string("nope"));
        failing.revert_reason = Some("nope".into());

        root.calls = vec![balance, other, failing];
        root
    }

    fn render(root: &CallFrame, opts: &TreeOptions) -> String {
        let mut out = Vec::new();
        render_call_tree(root, &Decoder::default(), opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn renders_plain_tree_with_logs_and_revert_summary() {
        let text = render(&sample(), &TreeOptions::default());
        let expected = "\
CALL 0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa → 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB transfer(to: 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC, amount: 1000) value 1.5 ETH gas 50,000 ✗ execution reverted: Error(\"nope\")
├─ STATICCALL 0xbBbB…BBbB → 0xCcCC…cccC balanceOf(account: 0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa) gas 2,600 ✓
├─ CALL 0xbBbB…BBbB → 0xDDdD…DDDd 0x12345678 value 0.000001 ETH gas 1,234,567 ✓
│  ├─ emit Transfer(from: 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB, to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, value: 5)
│  ├─ DELEGATECALL 0xDDdD…DDDd → 0xEeee…EEeE () gas 100 ✓
│  └─ emit log topics=[0x0101010101010101010101010101010101010101010101010101010101010101] data=0xff
└─ CALL 0xbBbB…BBbB → 0xCcCC…cccC transfer(to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, amount: 5) gas 5,000 ✗ execution reverted: Error(\"nope\")
reverted: Error(\"nope\") at 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC transfer(to: 0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd, amount: 5) (gas 5,000)
";
        assert_eq!(text, expected);
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn hides_logs_when_asked_and_skips_summary_on_success() {
        let mut root = sample();
        root.error = None;
        root.output = None;
        root.calls.pop();
        let opts = TreeOptions {
            show_logs: false,
            ..TreeOptions::default()
        };
        let text = render(&root, &opts);
        assert!(!text.contains("emit"));
        assert!(!text.contains("reverted:"));
        assert_eq!(text.lines().count(), 4);
        assert!(text
            .lines()
            .nth(3)
            .unwrap()
            .starts_with("   └─ DELEGATECALL"));
    }

    #[test]
    fn color_marks_failures_and_dims_addresses() {
        let opts = TreeOptions {
            color: true,
            ..TreeOptions::default()
        };
        let text = render(&sample(), &opts);
        assert!(text.starts_with("\x1b[1;31mCALL\x1b[0m \x1b[2m0xaAaA"));
        assert!(text.contains("\x1b[1;31m✗ execution reverted: Error(\"nope\")\x1b[0m"));
        assert!(text.contains("\x1b[32m✓\x1b[0m"));
        assert!(text.contains("\x1b[1;31mreverted: Error(\"nope\")\x1b[0m at \x1b[2m0xCcCC"));
    }

    #[test]
    fn origin_stops_at_a_frame_with_its_own_reason() {
        let mut root = sample();
        root.output = Some(error_string("outer"));
        let abi = Abi::default();
        let mut out = Vec::new();
        render_call_tree(
            &root,
            &Decoder::new(Some(abi)),
            &TreeOptions::default(),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("reverted: Error(\"outer\") at 0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB transfer(to: 0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC, amount: 1000) (gas 50,000)\n"));
        // Out of gas with no data: the error itself is the reason.
        let mut oog = frame(CallKind::Call, a(1), a(2), Bytes::new(), 100_000);
        oog.error = Some("out of gas".into());
        assert!(render(&oog, &TreeOptions::default()).ends_with(
            "reverted: out of gas at 0x0202020202020202020202020202020202020202 () (gas 100,000)\n"
        ));
    }

    #[test]
    fn failed_frames_show_their_source_and_the_stack_follows() {
        use crate::render::source::{Location, SourceNotes, StackEntry};
        let loc = |line: usize, text: &str, span: (usize, usize)| Location {
            file: "src/C.sol".into(),
            line,
            column: span.0 + 1,
            text: text.into(),
            span,
            changed: false,
        };
        let mut notes = SourceNotes::default();
        notes
            .frames
            .insert(vec![], loc(7, "    c.transfer(d, 5);", (4, 20)));
        notes
            .frames
            .insert(vec![2], loc(12, "        require(ok, \"nope\");", (8, 30)));
        notes.stack = vec![
            StackEntry {
                contract: "C".into(),
                function: "transfer".into(),
                location: loc(12, "", (8, 30)),
                reached_by: Some(CallKind::Call),
                args: Vec::new(),
            },
            StackEntry {
                contract: "B".into(),
                function: "transfer".into(),
                location: loc(7, "", (4, 20)),
                reached_by: None,
                args: Vec::new(),
            },
        ];
        let mut d = Decoder::default();
        d.set_sources(notes);
        let mut out = Vec::new();
        render_call_tree(&sample(), &d, &TreeOptions::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("✗ execution reverted: Error(\"nope\") at src/C.sol:7:5"));
        assert_eq!(lines[1], "│    7 | c.transfer(d, 5);");
        assert_eq!(lines[2], "│      | ^^^^^^^^^^^^^^^^");
        assert!(lines[8].ends_with("at src/C.sol:12:9"), "{text}");
        assert_eq!(lines[9], "        12 | require(ok, \"nope\");");
        assert_eq!(lines[10], "           | ^^^^^^^^^^^^^^^^^^^^");
        assert!(text.ends_with(
            "Solidity stack trace:\n  at C.transfer (src/C.sol:12:9), reached by CALL\n  at B.transfer (src/C.sol:7:5)\n"
        ));
        // On a terminal the span itself is marked too.
        let mut out = Vec::new();
        let color = TreeOptions {
            color: true,
            ..TreeOptions::default()
        };
        render_call_tree(&sample(), &d, &color, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("| \x1b[4;31mc.transfer(d, 5)\x1b[0m"),
            "{text}"
        );
        // No notes, no change.
        assert_eq!(render(&sample(), &TreeOptions::default()), {
            let mut out = Vec::new();
            let mut d = Decoder::default();
            d.set_sources(SourceNotes::default());
            render_call_tree(&sample(), &d, &TreeOptions::default(), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        });
    }

    #[test]
    fn formats_values_and_gas() {
        assert_eq!(group("0"), "0");
        assert_eq!(group("999"), "999");
        assert_eq!(group("1000"), "1,000");
        assert_eq!(group("1234567"), "1,234,567");
        let eth = |wei: u128| format_value(U256::from(wei), "ETH");
        assert_eq!(eth(1_500_000_000_000_000_000), "1.5 ETH");
        assert_eq!(eth(1_000_000_000_000), "0.000001 ETH");
        assert_eq!(eth(1_000_000_000_000_000_000_000), "1,000 ETH");
        assert_eq!(eth(1_234_567_890_000_000_000), "1.234567 ETH");
        assert_eq!(eth(1_000), "1,000 wei");
        assert_eq!(
            format_value(U256::from(2_000_000_000_000_000_000u128), "xDAI"),
            "2 xDAI"
        );
    }

    #[test]
    fn creates_and_selfdestructs() {
        let mut root = frame(
            CallKind::Create,
            a(1),
            a(2),
            Bytes::from(vec![0u8; 1500]),
            60_000,
        );
        let mut sd = frame(CallKind::Selfdestruct, a(2), a(3), Bytes::new(), 0);
        sd.value = Some(U256::from(2_000_000_000_000_000_000u128));
        root.calls.push(sd);
        let text = render(&root, &TreeOptions::default());
        assert_eq!(
            text,
            "CREATE 0x0101010101010101010101010101010101010101 → 0x0202020202020202020202020202020202020202 new contract (1,500 bytes of init code) gas 60,000 ✓\n\
             └─ SELFDESTRUCT 0x0202…0202 → 0x0303…0303 value 2 ETH ✓\n"
        );
    }
}
