//! The debugger's panes as text: what each shows at one step ([`StepView`]), with the styles
//! the terminal draws (the current line reversed, the touched memory underlined).

use alloy_primitives::{hex, Address, U256};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use revm::bytecode::opcode::{self, OpCode};

use super::Session;
use crate::names::sources::instructions;
use crate::trace::steps::{StepFrame, StepView};

/// The current line, statement and opcode.
pub fn current() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// The source pane: the title (`file:line:column`) and the lines around the current statement,
/// `height` of them, the statement's line reversed and its span underlined. Without a map, the
/// title says so.
pub fn source(s: &Session, v: &StepView, height: usize) -> (String, Vec<Line<'static>>) {
    let Some(open) = v.open.last() else {
        return ("source".into(), Vec::new());
    };
    let frame = &s.model.log.frames[open.frame as usize];
    let Some(map) = s.model.map(open.frame) else {
        return (
            format!("no source map for {}: opcodes only", frame_name(s, frame)),
            Vec::new(),
        );
    };
    let Some(loc) = map.location_at(&open.steps, None) else {
        return (
            format!("{}: code the compiler generated", map.contract),
            Vec::new(),
        );
    };
    let title = loc.at();
    let Some(text) = map.file(&loc.file).and_then(|f| f.text()) else {
        return (title, vec![Line::from(loc.text.clone())]);
    };
    let lines: Vec<&str> = text.lines().collect();
    let height = height.max(1);
    let first = loc.line.saturating_sub(height / 2).max(1);
    let last = (first + height - 1).min(lines.len());
    let mut out = Vec::with_capacity(height);
    for n in first..=last {
        let body = lines[n - 1].trim_end_matches('\r').replace('\t', "    ");
        let number = format!("{n:>5} │ ");
        if n != loc.line {
            out.push(Line::from(vec![
                Span::styled(number, dim()),
                Span::raw(body),
            ]));
            continue;
        }
        let chars: Vec<char> = body.chars().collect();
        let (from, to) = (loc.span.0.min(chars.len()), loc.span.1.min(chars.len()));
        let part = |a: usize, b: usize| chars[a..b.max(a)].iter().collect::<String>();
        out.push(Line::from(vec![
            Span::styled(number, current()),
            Span::styled(part(0, from), current()),
            Span::styled(
                part(from, to),
                current().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            ),
            Span::styled(part(to, chars.len()), current()),
        ]));
    }
    (title, out)
}

/// The file and line the source pane shows at `v` (the statement placed as `tx` places a
/// failure), if any.
pub fn here(s: &Session, v: &StepView) -> Option<(String, usize)> {
    let open = v.open.last()?;
    let loc = s.model.map(open.frame)?.location_at(&open.steps, None)?;
    Some((loc.file, loc.line))
}

/// An account as the tree shows it: its address shortened (`0x9fE4…a6e0`) and its label.
fn account(s: &Session, a: &Address) -> String {
    let full = a.to_checksum(None);
    let short = format!("{}…{}", &full[..6], &full[full.len() - 4..]);
    s.decoder.with_label(a, short)
}

/// How a frame is named: its contract's label and address, and the call it made.
pub fn frame_name(s: &Session, f: &StepFrame) -> String {
    let who = account(s, &f.address);
    if f.kind.is_create() {
        let what = s
            .decoder
            .describe_creation(&f.input)
            .unwrap_or_else(|| "new contract".into());
        return format!("{} {what} at {who}", f.kind.as_str());
    }
    let call = s
        .decoder
        .describe_call_at(Some(f.code_address), &f.input, Some(f.value));
    format!("{} {who} {call}", f.kind.as_str())
}

/// The call stack: each open frame's Solidity functions (innermost first, with their arguments
/// where `tx` shows them), under the external call that entered the frame.
pub fn call_stack(s: &Session, v: &StepView) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (k, entries) in s.stack(v) {
        let f = &s.model.log.frames[v.open[k].frame as usize];
        for (n, e) in entries.iter().enumerate() {
            let style = if k + 1 == v.open.len() && n == 0 {
                current()
            } else {
                Style::default()
            };
            out.push(Line::styled(format!("at {}", e.text()), style));
        }
        out.push(Line::styled(
            format!("{:>2} {}", f.depth, frame_name(s, f)),
            dim(),
        ));
    }
    out
}

/// The Variables pane ([`super::variables::pane`]): the current function's arguments, and what
/// its frame returned at its last step.
pub fn variables(s: &Session, v: &StepView) -> Vec<Line<'static>> {
    let groups = super::variables::pane(s, v);
    if groups.is_empty() {
        return vec![Line::styled("(no function known at this step)", dim())];
    }
    let mut out = Vec::new();
    for (title, vars) in groups {
        out.push(Line::styled(title, dim()));
        if vars.is_empty() {
            out.push(Line::styled("  (none)", dim()));
        }
        for var in vars {
            out.push(Line::from(format!("  {} = {}", var.name, var.value)));
        }
    }
    out
}

/// A word in hex without leading zeros.
fn word(w: &U256) -> String {
    format!("{w:#x}")
}

/// The EVM stack, top first; the words the step's opcode takes are marked (`◂`) and bold.
pub fn stack(v: &StepView) -> Vec<Line<'static>> {
    let inputs = OpCode::new(v.op).map_or(0, |o| o.inputs() as usize);
    v.stack
        .iter()
        .rev()
        .enumerate()
        .map(|(i, w)| {
            if i < inputs {
                Line::styled(
                    format!("{i:>3}◂ {}", word(w)),
                    Style::default().add_modifier(Modifier::BOLD),
                )
            } else {
                Line::from(format!("{i:>3}  {}", word(w)))
            }
        })
        .collect()
}

/// The memory range the step's opcode reads or writes, from its stack inputs.
pub fn touched(v: &StepView) -> Option<(usize, usize)> {
    let s = &v.stack;
    let arg = |k: usize| -> Option<usize> {
        let w = s.get(s.len().checked_sub(k + 1)?)?;
        usize::try_from(*w).ok()
    };
    let range = |off: usize, len: usize| (len > 0).then(|| (off, off.saturating_add(len)));
    match v.op {
        opcode::MLOAD | opcode::MSTORE => range(arg(0)?, 32),
        opcode::MSTORE8 => range(arg(0)?, 1),
        opcode::KECCAK256 | opcode::RETURN | opcode::REVERT => range(arg(0)?, arg(1)?),
        opcode::LOG0..=opcode::LOG4 => range(arg(0)?, arg(1)?),
        opcode::CALLDATACOPY | opcode::CODECOPY | opcode::RETURNDATACOPY | opcode::MCOPY => {
            range(arg(0)?, arg(2)?)
        }
        opcode::EXTCODECOPY => range(arg(1)?, arg(3)?),
        opcode::CALL | opcode::CALLCODE => range(arg(3)?, arg(4)?),
        opcode::DELEGATECALL | opcode::STATICCALL => range(arg(2)?, arg(3)?),
        opcode::CREATE | opcode::CREATE2 => range(arg(1)?, arg(2)?),
        _ => None,
    }
}

/// Memory as a hex dump, 32 bytes a row, `height` rows: from the row of the touched range (its
/// bytes underlined), else from the start.
pub fn memory(v: &StepView, height: usize) -> Vec<Line<'static>> {
    let rows = v.memory.len().div_ceil(32);
    let touched = touched(v);
    let first_row = touched
        .map_or(0, |(a, _)| a / 32)
        .min(rows.saturating_sub(1));
    let mut out = Vec::new();
    for r in first_row..rows.min(first_row + height.max(1)) {
        let mut spans = vec![Span::styled(format!("{:#06x} ", r * 32), dim())];
        for b in r * 32..((r + 1) * 32).min(v.memory.len()) {
            let text = format!("{:02x}", v.memory[b]);
            let hit = touched.is_some_and(|(a, z)| a <= b && b < z);
            spans.push(if hit {
                Span::styled(
                    text,
                    Style::default()
                        .add_modifier(Modifier::UNDERLINED)
                        .fg(Color::Yellow),
                )
            } else {
                Span::raw(text)
            });
        }
        out.push(Line::from(spans));
    }
    if out.is_empty() {
        out.push(Line::styled("(empty)", dim()));
    }
    out
}

/// The storage read and written so far, by account: the current frame's first, then every
/// other account the transaction touched, each under its name.
pub fn storage(s: &Session, v: &StepView) -> Vec<Line<'static>> {
    let current = v
        .open
        .last()
        .map(|open| s.model.log.frames[open.frame as usize].address);
    let mut accounts: Vec<Address> = current.into_iter().collect();
    for a in v.storage.keys().chain(v.transient.keys()) {
        if !accounts.contains(a) {
            accounts.push(*a);
        }
    }
    let mut out: Vec<Line<'static>> = Vec::new();
    for a in accounts {
        let slots: Vec<Line<'static>> = s
            .storage_rows(v, a)
            .into_iter()
            .map(|(name, value)| Line::from(format!("  {name}: {value}")))
            .collect();
        if slots.is_empty() && Some(a) != current {
            continue;
        }
        let who = account(s, &a);
        let style = if Some(a) == current {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            dim()
        };
        out.push(Line::styled(who, style));
        if slots.is_empty() {
            out.push(Line::styled("  (nothing read or written yet)", dim()));
        }
        out.extend(slots);
    }
    if out.is_empty() {
        out.push(Line::styled("(nothing read or written yet)", dim()));
    }
    out
}

/// The return data of the last call, and what it decodes to.
pub fn return_data(s: &Session, v: &StepView) -> Vec<Line<'static>> {
    if v.return_data.is_empty() {
        return vec![Line::styled("(none)", dim())];
    }
    let mut out = vec![Line::from(format!(
        "{} bytes: 0x{}",
        v.return_data.len(),
        hex::encode(&v.return_data[..v.return_data.len().min(96)])
    ))];
    // Read as revert data only when the call that left it reverted: a successful call's
    // output (a returned 0, say) is no error.
    let frames = &s.model.log.frames;
    let here = v.open.last().map(|o| o.frame);
    let last_call = frames
        .iter()
        .filter(|f| f.parent.is_some() && f.parent == here && f.end_step <= v.step)
        .max_by_key(|f| f.end_step);
    match last_call {
        Some(f) if f.result.is_ok() => out.push(Line::styled(
            "returned by the last call (it succeeded)",
            dim(),
        )),
        _ => {
            if let Some(r) = s.decoder.describe_revert(&v.return_data) {
                out.push(Line::from(format!("as revert data: {r}")));
            }
        }
    }
    out
}

/// The opcodes around the pc, `height` of them, the current one reversed.
pub fn opcodes(s: &Session, v: &StepView, height: usize) -> Vec<Line<'static>> {
    let Some(open) = v.open.last() else {
        return Vec::new();
    };
    let code = &s.model.log.frames[open.frame as usize].code;
    let all: Vec<(usize, u8)> = instructions(code).collect();
    let at = all.partition_point(|&(pc, _)| pc < v.pc as usize);
    let first = at.saturating_sub(height / 3);
    all[first..(first + height.max(1)).min(all.len())]
        .iter()
        .map(|&(pc, op)| {
            let name = OpCode::new(op).map_or_else(
                || format!("INVALID(0x{op:02x})"),
                |o| o.as_str().to_string(),
            );
            let n = push_len(op);
            let data = match n {
                0 => String::new(),
                n => {
                    let end = (pc + 1 + n).min(code.len());
                    format!(
                        " 0x{}",
                        hex::encode(code.get(pc + 1..end).unwrap_or_default())
                    )
                }
            };
            let text = format!("{pc:>6}  {name}{data}");
            if pc == v.pc as usize {
                Line::styled(text, current())
            } else {
                Line::from(text)
            }
        })
        .collect()
}

fn push_len(op: u8) -> usize {
    if (opcode::PUSH1..=opcode::PUSH32).contains(&op) {
        (op - opcode::PUSH1 + 1) as usize
    } else {
        0
    }
}

/// The header: where the step is first (it must fit an 80-column terminal), then how the
/// transaction ended — the failure as `tx` says it —, then the title.
pub fn header(s: &Session, v: &StepView) -> String {
    let name = OpCode::new(v.op).map_or("INVALID", |o| o.as_str());
    let depth = v.open.len().saturating_sub(1);
    let cost = v.cost.map_or_else(|| "-".to_string(), |c| c.to_string());
    let status = match (s.outcome.success, s.failure_text()) {
        (true, _) => "succeeded".to_string(),
        (false, Some(why)) => format!("failed: {why}"),
        (false, None) => "failed".to_string(),
    };
    format!(
        "step {}/{} │ pc {} {name} │ gas {} cost {cost} │ depth {depth} │ {status} │ {}",
        v.step + 1,
        s.model.len(),
        v.pc,
        v.gas,
        s.title,
    )
}
