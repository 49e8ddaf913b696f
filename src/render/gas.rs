//! `chaintrace gas`: where the gas went, as tables (comfy-table), stable JSON, and a flamegraph
//! (inferno) of gas by call stack.

use std::collections::BTreeMap;
use std::io::{self, Write};

use alloy_primitives::Address;
use comfy_table::{Cell, CellAlignment};
use serde_json::{json, Value};

use super::decoder::Decoder;
use super::style::{num, TableStyle};
use crate::geth::opcode::op_name;
use crate::replay::assets::format_units;
use crate::replay::tx_rules::OpCost;
use crate::trace::gas::{GasFrame, GasReport};

/// One row of the opcode table: name, executions (None for residual rows), gas.
pub fn opcode_rows(r: &GasReport) -> Vec<(String, Option<u64>, u64)> {
    let mut rows: Vec<(String, Option<u64>, u64)> = r
        .ops
        .iter()
        .enumerate()
        .filter(|(_, (count, gas))| *count > 0 || *gas > 0)
        .map(|(op, (count, gas))| (op_name(op as u8), Some(*count), *gas))
        .collect();
    rows.extend(
        r.residuals
            .iter()
            .map(|(k, g)| (k.label().to_string(), None, *g)),
    );
    rows.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// Per contract: frames, self gas, inclusive gas (outermost frames only, so recursion is not
/// counted twice).
pub fn contract_rows(r: &GasReport) -> Vec<(Address, u64, u64, u64)> {
    let mut by: BTreeMap<Address, (u64, u64, u64)> = BTreeMap::new();
    for (i, f) in r.frames.iter().enumerate() {
        let e = by.entry(f.code_address).or_default();
        e.0 += 1;
        e.1 += f.self_gas;
        let mut p = r.frames[i].parent;
        let mut nested = false;
        while let Some(pi) = p {
            if r.frames[pi].code_address == f.code_address {
                nested = true;
                break;
            }
            p = r.frames[pi].parent;
        }
        if !nested {
            e.2 += f.inclusive;
        }
    }
    let mut rows: Vec<_> = by.into_iter().map(|(a, (c, s, i))| (a, c, s, i)).collect();
    rows.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// The function a gas frame ran: its name when known, else its selector; `constructor`, `()`.
pub fn function(f: &GasFrame, d: &Decoder) -> String {
    if f.kind.is_create() {
        return "constructor".to_string();
    }
    if f.input.is_empty() {
        return "()".to_string();
    }
    d.function_name_at(Some(f.code_address), &f.input)
        .unwrap_or_else(|| {
            format!(
                "0x{}",
                alloy_primitives::hex::encode(&f.input[..f.input.len().min(4)])
            )
        })
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64) * 100.0 / (whole as f64)
    }
}

/// The tables as one JSON value with stable keys.
pub fn gas_json(r: &GasReport, d: &Decoder) -> Value {
    let opcodes: Vec<Value> = opcode_rows(r)
        .into_iter()
        .map(|(op, count, gas)| {
            json!({"op": op, "count": count, "gas": gas, "share": (share(gas, r.execution) * 100.0).round() / 100.0})
        })
        .collect();
    let contracts: Vec<Value> = contract_rows(r)
        .into_iter()
        .map(|(a, calls, s, i)| json!({"address": format!("{a:?}"), "calls": calls, "selfGas": s, "inclusiveGas": i}))
        .collect();
    let frames: Vec<Value> = r
        .frames
        .iter()
        .map(|f| {
            json!({"depth": f.depth, "type": f.kind.as_str(), "address": format!("{:?}", f.code_address),
                   "function": function(f, d), "selfGas": f.self_gas, "inclusiveGas": f.inclusive, "failed": f.failed})
        })
        .collect();
    json!({
        "transaction": {"intrinsicGas": r.intrinsic, "executionGas": r.execution, "refund": r.refund,
                        "gasUsed": r.gas_used, "floorGas": r.floor},
        "opcodes": opcodes,
        "contracts": contracts,
        "frames": frames,
    })
}

/// An OP-stack transaction's cost by where it went, in wei (`cost` of the gas report's JSON).
pub fn op_cost_json(c: &OpCost) -> Value {
    json!({
        "l2Execution": c.execution().to_string(), "baseFee": c.base.to_string(),
        "priorityFee": c.priority.to_string(), "l1DataFee": c.l1.to_string(),
        "operatorFee": c.operator.to_string(), "total": c.total().to_string(),
    })
}

/// Prints the transaction line, an OP-stack transaction's cost split (`op`: the cost and the
/// currency's name) and the opcode, contract and frame tables: the opcode and contract tables
/// show the top rows by gas and one "others" row (every row with `style.all`), so that their
/// totals still add up; frames keep call order and fold beyond the top frames likewise.
pub fn render_gas_tables<W: Write>(
    r: &GasReport,
    d: &Decoder,
    op: Option<(&OpCost, &str)>,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    const NUMERIC: &[&str] = &[
        "intrinsic",
        "execution",
        "refund",
        "gas used",
        "count",
        "gas",
        "share",
        "frames",
        "self gas",
        "inclusive gas",
    ];
    let table = |h: &[&str]| style.numeric_table(h, NUMERIC);
    let mut t = table(&["intrinsic", "execution", "refund", "gas used"]);
    t.add_row(vec![
        num(r.intrinsic),
        num(r.execution),
        num(r.refund),
        num(r.gas_used),
    ]);
    writeln!(out, "transaction\n{t}")?;
    if r.floor > 0 && r.floor == r.gas_used {
        writeln!(out, "(gas used is the EIP-7623 calldata floor)")?;
    }
    if let Some((c, currency)) = op {
        const COLUMNS: &[&str] = &[
            "L2 execution",
            "base fee",
            "priority fee",
            "L1 data fee",
            "operator fee",
            "total",
        ];
        let mut t = style.numeric_table(COLUMNS, COLUMNS);
        let v = |w: alloy_primitives::U256| {
            Cell::new(format_units(w, 18)).set_alignment(CellAlignment::Right)
        };
        t.add_row(vec![
            v(c.execution()),
            v(c.base),
            v(c.priority),
            v(c.l1),
            v(c.operator),
            v(c.total()),
        ]);
        writeln!(
            out,
            "\ncost ({currency}; L2 execution = base fee + priority fee)\n{t}"
        )?;
    }
    let pct = |gas: u64| {
        Cell::new(format!("{:.2}%", share(gas, r.execution))).set_alignment(CellAlignment::Right)
    };
    let mut t = table(&["opcode", "count", "gas", "share"]);
    let rows = opcode_rows(r);
    let shown = style.shown(rows.len());
    for (op, count, gas) in &rows[..shown] {
        t.add_row(vec![
            Cell::new(op),
            count.map(num).unwrap_or_else(|| Cell::new("")),
            num(*gas),
            pct(*gas),
        ]);
    }
    if shown < rows.len() {
        let rest = &rows[shown..];
        let gas = rest.iter().map(|r| r.2).sum();
        t.add_row(vec![
            Cell::new(format!("others ({}; --all)", rest.len())),
            num(rest.iter().filter_map(|r| r.1).sum()),
            num(gas),
            pct(gas),
        ]);
    }
    writeln!(out, "\nby opcode (execution gas)\n{t}")?;
    let mut t = table(&["contract", "frames", "self gas", "inclusive gas"]);
    let rows = contract_rows(r);
    let shown = style.shown(rows.len());
    for (a, calls, s, i) in &rows[..shown] {
        t.add_row(vec![
            Cell::new(d.with_label(a, format!("{a:?}"))),
            num(*calls),
            num(*s),
            num(*i),
        ]);
    }
    if shown < rows.len() {
        let rest = &rows[shown..];
        t.add_row(vec![
            Cell::new(format!("others ({}; --all)", rest.len())),
            num(rest.iter().map(|r| r.1).sum()),
            num(rest.iter().map(|r| r.2).sum()),
            Cell::new(""),
        ]);
    }
    writeln!(out, "\nby contract\n{t}")?;
    let mut t = table(&["frame", "function", "self gas", "inclusive gas"]);
    // Frames stay in call order: the first ones, then one row for the rest.
    let limit = if style.all {
        r.frames.len()
    } else {
        4 * TableStyle::TOP
    };
    for f in r.frames.iter().take(limit) {
        let status = if f.failed { " ✗" } else { "" };
        t.add_row(vec![
            Cell::new(format!(
                "{}{} {}{status}",
                "  ".repeat(f.depth),
                f.kind.as_str(),
                d.with_label(&f.code_address, format!("{:?}", f.code_address))
            )),
            Cell::new(function(f, d)),
            num(f.self_gas),
            num(f.inclusive),
        ]);
    }
    if r.frames.len() > limit {
        let rest = &r.frames[limit..];
        t.add_row(vec![
            Cell::new(format!("… {} more frames (--all)", rest.len())),
            Cell::new(""),
            num(rest.iter().map(|f| f.self_gas).sum()),
            Cell::new(""),
        ]);
    }
    writeln!(out, "\nby frame\n{t}")
}

/// Collapsed stacks (`a;b;c weight`) of self gas by call stack; with `by_op`, opcode leaves.
pub fn collapsed_stacks(r: &GasReport, d: &Decoder) -> Vec<(String, u64)> {
    collapsed(r, d, false)
}

/// A frame in a flamegraph: `0xa513…C853 Hub failNested`.
pub fn frame_label(f: &GasFrame, d: &Decoder) -> String {
    let a = format!("{:?}", f.code_address);
    // Semicolons separate stack levels in the collapsed format; keep them out of labels.
    let short = d.with_label(
        &f.code_address,
        format!("{}…{}", &a[..6], &a[a.len() - 4..]),
    );
    format!("{short} {}", function(f, d)).replace(';', ",")
}

fn collapsed(r: &GasReport, d: &Decoder, by_op: bool) -> Vec<(String, u64)> {
    let mut paths: Vec<String> = Vec::with_capacity(r.frames.len());
    let mut lines = Vec::new();
    for f in &r.frames {
        let label = frame_label(f, d);
        let path = match f.parent {
            Some(p) => format!("{};{label}", paths[p]),
            None => label,
        };
        if by_op {
            for (op, g) in &f.ops {
                lines.push((format!("{path};{}", op_name(*op)), *g));
            }
            if let Some((k, g)) = f.residual {
                lines.push((format!("{path};{}", k.label()), g));
            }
        } else if f.self_gas > 0 {
            lines.push((path.clone(), f.self_gas));
        }
        paths.push(path);
    }
    lines
}

/// Writes an SVG flamegraph of execution gas by call stack (opcode leaves with `by_op`).
pub fn write_flamegraph<W: Write>(
    r: &GasReport,
    d: &Decoder,
    by_op: bool,
    out: W,
) -> io::Result<()> {
    write_stacks_flamegraph(&collapsed(r, d, by_op), "Gas by call stack", out)
}

/// Writes an SVG flamegraph of collapsed stacks (`a;b;c`, gas).
pub fn write_stacks_flamegraph<W: Write>(
    stacks: &[(String, u64)],
    title: &str,
    out: W,
) -> io::Result<()> {
    let lines: Vec<String> = stacks
        .iter()
        .filter(|(_, g)| *g > 0)
        .map(|(p, g)| format!("{p} {g}"))
        .collect();
    if lines.is_empty() {
        // inferno refuses an empty profile; a transfer to an account without code spends no
        // execution gas, and its flamegraph says so.
        let mut out = out;
        return writeln!(
            out,
            r#"<?xml version="1.0" standalone="no"?><svg version="1.1" width="600" height="60" xmlns="http://www.w3.org/2000/svg"><title>all (0 gas, 100%)</title><text x="10" y="35">no execution gas: nothing ran</text></svg>"#
        );
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "gas".to_string();
    opts.name_type = "Frame:".to_string();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
        .map_err(io::Error::other)
}
