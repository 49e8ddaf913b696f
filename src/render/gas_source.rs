//! Gas by source for people and scripts: `--by-line` and `--by-function` tables, their JSON,
//! and the collapsed stacks of the flamegraph by function. The rows are plain data that
//! `names::gas_source` fills from a gas report's calling-context profile and the source maps;
//! this module only prints them.

use std::io::{self, Write};

use comfy_table::Cell;
use serde::Serialize;
use serde_json::{json, Value};

use super::style::{num, TableStyle};

/// One row of the by-line table: a source line, or a place that is not one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineGas {
    /// `src/Leaf.sol:12`, or what ran where no line of the user's applies:
    /// `Hub (compiler-generated)`, `0x… (no source map)`, `(precompile)`, `(code deposit)`.
    pub location: String,
    pub file: Option<String>,
    pub line: Option<usize>,
    /// The line's text, trimmed.
    pub source: Option<String>,
    /// Opcodes executed there.
    pub count: u64,
    pub self_gas: u64,
    /// Self gas plus everything called from the line (internal functions, external calls),
    /// each unit counted once however deep the recursion.
    pub inclusive_gas: u64,
}

/// One row of the by-function table: a Solidity function (internal ones included), or the
/// code of a contract without a source map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionGas {
    /// The deployed contract whose code ran it, when it is not the declaring one (an inherited
    /// function: `Token` for `Token.ERC20._update`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployed: Option<String>,
    /// The contract (or library) that declares it.
    pub contract: String,
    /// Its name, with its parameter types where the name is overloaded (`mint(address)`).
    pub function: String,
    /// Where the function is declared, when known.
    pub file: Option<String>,
    pub line: Option<usize>,
    /// Times it was entered.
    pub calls: u64,
    pub self_gas: u64,
    /// Self gas plus everything it called, each unit counted once however deep the recursion.
    pub inclusive_gas: u64,
}

impl FunctionGas {
    /// `Hub.failNested`; `Token.ERC20._update` for an inherited function the deployed `Token`
    /// ran (the same function in `Vault` is another row).
    pub fn name(&self) -> String {
        let own = if self.contract.is_empty() {
            self.function.clone()
        } else {
            format!("{}.{}", self.contract, self.function)
        };
        match &self.deployed {
            Some(d) => format!("{d}.{own}"),
            None => own,
        }
    }
}

/// Gas by source of one transaction: every unit of execution gas in exactly one line row and
/// one function row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceGas {
    /// By self gas, largest first.
    pub lines: Vec<LineGas>,
    /// By inclusive gas, largest first.
    pub functions: Vec<FunctionGas>,
    /// Collapsed stacks (`frame;Contract.function;… gas`) of self gas, external frames and
    /// internal functions: the flamegraph by function.
    pub stacks: Vec<(String, u64)>,
    /// Frames that ran code, and how many of them no source map covered.
    pub frames_with_code: usize,
    pub frames_unmapped: usize,
}

impl SourceGas {
    /// The execution gas the rows account for.
    pub fn total(&self) -> u64 {
        self.lines.iter().map(|l| l.self_gas).sum()
    }
}

/// Which source tables to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceTables {
    pub by_line: bool,
    pub by_function: bool,
}

/// The `--by-line` / `--by-function` tables: the top rows and one "others" row (every row with
/// `style.all`), then a total that equals the execution gas of the opcode table.
pub fn render_source_tables<W: Write>(
    g: &SourceGas,
    which: SourceTables,
    style: TableStyle,
    out: &mut W,
) -> io::Result<()> {
    let total = g.total();
    if which.by_function {
        let rows = g
            .functions
            .iter()
            .map(|f| (f.name(), declared(f), f.calls, f.self_gas, f.inclusive_gas));
        let t = table(style, ["function", "declared at", "calls"], rows, total);
        writeln!(out, "\nby function (execution gas)\n{t}")?;
    }
    if which.by_line {
        let rows = g.lines.iter().map(|l| {
            let source = l.source.as_deref().map(clip).unwrap_or_default();
            (
                l.location.clone(),
                source,
                l.count,
                l.self_gas,
                l.inclusive_gas,
            )
        });
        let t = table(style, ["line", "source", "count"], rows, total);
        writeln!(out, "\nby line (execution gas)\n{t}")?;
    }
    if g.frames_unmapped > 0 {
        writeln!(
            out,
            "({} of {} frames ran code no source map covers: their gas is in the \"no source map\" rows)",
            g.frames_unmapped, g.frames_with_code
        )?;
    }
    Ok(())
}

/// A table of (name, text, count, self gas, inclusive gas) rows with `head` over the first
/// three: the top rows, one "others" row with the rest's sums, and the total.
fn table(
    style: TableStyle,
    head: [&str; 3],
    rows: impl ExactSizeIterator<Item = (String, String, u64, u64, u64)>,
    total: u64,
) -> comfy_table::Table {
    let mut t = style.numeric_table(
        &[head[0], head[1], head[2], "self gas", "inclusive gas"],
        &[head[2], "self gas", "inclusive gas"],
    );
    let shown = style.shown(rows.len());
    let (mut rest, mut count, mut self_gas) = (0, 0, 0);
    for (i, (name, text, n, s, incl)) in rows.enumerate() {
        if i < shown {
            t.add_row(vec![
                Cell::new(name),
                Cell::new(text),
                num(n),
                num(s),
                num(incl),
            ]);
        } else {
            rest += 1;
            count += n;
            self_gas += s;
        }
    }
    if rest > 0 {
        t.add_row(vec![
            Cell::new(format!("others ({rest}; --all)")),
            Cell::new(""),
            num(count),
            num(self_gas),
            Cell::new(""),
        ]);
    }
    t.add_row(vec![
        Cell::new("total"),
        Cell::new(""),
        Cell::new(""),
        num(total),
        Cell::new(""),
    ]);
    t
}

fn declared(f: &FunctionGas) -> String {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        _ => String::new(),
    }
}

/// A source line for a table cell: at most 60 characters.
fn clip(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX - 1).collect();
    out.push('…');
    out
}

/// `byLine` / `byFunction` for `gas --json`: every row, with the total.
pub fn source_gas_json(g: &SourceGas, which: SourceTables) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if which.by_function {
        out.push(("byFunction", json!(g.functions)));
    }
    if which.by_line {
        out.push(("byLine", json!(g.lines)));
    }
    out
}
