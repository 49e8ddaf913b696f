//! How tables are drawn for people, shared by every table renderer (gas, gas by source,
//! selectors, assets): `TableStyle` and the thousands-separated number cell.

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

/// How tables are drawn for people: condensed (no rule between rows), in UTF-8 box drawing on
/// a terminal and ASCII when piped or under `NO_COLOR`; the top rows by gas with one "others"
/// row unless `all`; fitted to the terminal's width (comfy-table reads it when stdout is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableStyle {
    pub utf8: bool,
    /// Every row, not the top [`TableStyle::TOP`].
    pub all: bool,
}

impl TableStyle {
    /// Rows shown by gas before the "others" row.
    pub const TOP: usize = 10;

    /// A comfy-table table with this style and `header`; the columns whose header is in
    /// `numeric` are right-aligned, header included.
    pub fn numeric_table(&self, header: &[&str], numeric: &[&str]) -> Table {
        let mut t = self.table(header);
        for (i, h) in header.iter().enumerate() {
            if numeric.contains(h) {
                if let Some(c) = t.column_mut(i) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        t
    }

    /// A comfy-table table with this style and `header`.
    pub fn table(&self, header: &[&str]) -> Table {
        let mut t = Table::new();
        if self.utf8 {
            t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        } else {
            t.load_style(comfy_table::presets::ASCII_FULL_CONDENSED);
        }
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(header.to_vec());
        // A terminal that reports no useful width (a pty nobody sized) gets the natural width
        // rather than one character per column.
        if t.width().is_some_and(|w| w < 40) {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
        t
    }

    /// How many of `len` rows to show before folding the rest into one "others" row.
    pub(crate) fn shown(&self, len: usize) -> usize {
        if self.all || len <= Self::TOP + 1 {
            len
        } else {
            Self::TOP
        }
    }
}

pub(crate) fn num(n: u64) -> Cell {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    Cell::new(out).set_alignment(CellAlignment::Right)
}
