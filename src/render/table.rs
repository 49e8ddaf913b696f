//! The tables of columnar output (`block A..B --out DIR`) by name: which ones a tracer's
//! results flatten into, and how files and the manifest name them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::trace::TracerSpec;

/// One table of a `--out` partition, named in the manifest and in its file's name
/// (`part.<table>.parquet`; the NDJSON stream is `part.ndjson`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    /// The NDJSON stream itself: one trace per line, as `block A..B` prints it.
    Traces,
    /// callTracer: one row per frame.
    Calls,
    /// callTracer: one row per log (with `withLog`).
    Logs,
    /// prestateTracer: one row per account and per storage slot, `side` pre/post.
    State,
    /// structLogger: per transaction and opcode; `--gas-report`: self gas by opcode.
    Ops,
    /// `--gas-report`: per code address.
    Contracts,
    /// A JavaScript tracer: one row per transaction, the result as JSON text.
    Results,
    /// `--assets`: one row per address and asset.
    AssetChanges,
    /// `--abi` with storage layouts: one row per variable (or raw slot) a transaction changed.
    StorageChanges,
}

impl Table {
    /// The name in file names and in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Table::Traces => "traces",
            Table::Calls => "calls",
            Table::Logs => "logs",
            Table::State => "state",
            Table::Ops => "ops",
            Table::Contracts => "contracts",
            Table::Results => "results",
            Table::AssetChanges => "asset_changes",
            Table::StorageChanges => "storage_changes",
        }
    }

    /// The tables a tracer's results flatten into, in file order.
    pub fn of(spec: &TracerSpec) -> &'static [Table] {
        match spec {
            TracerSpec::Call(_) => &[Table::Calls, Table::Logs],
            // cryo's `traces` dataset: one row per flat trace entry.
            TracerSpec::FlatCall(_) => &[Table::Traces],
            TracerSpec::Parity | TracerSpec::ParityReplay { .. } => &[Table::Results],
            TracerSpec::FourByte
            | TracerSpec::Mux(_)
            | TracerSpec::Keccak256Preimage
            | TracerSpec::Noop => &[Table::Results],
            TracerSpec::Prestate(_) => &[Table::State],
            TracerSpec::StructLog(_) => &[Table::Ops],
            TracerSpec::Gas(_) => &[Table::Ops, Table::Contracts],
            TracerSpec::Erc7562(_) => &[Table::Results],
            #[cfg(feature = "js")]
            TracerSpec::Js(_) => &[Table::Results],
        }
    }

    /// [`Table::of`], then [`Table::AssetChanges`] when asset changes are written and
    /// [`Table::StorageChanges`] when storage changes are.
    pub fn of_with(spec: &TracerSpec, assets: bool, storage: bool) -> Vec<Table> {
        let mut tables = Table::of(spec).to_vec();
        if assets {
            tables.push(Table::AssetChanges);
        }
        if storage {
            tables.push(Table::StorageChanges);
        }
        tables
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest spells each table as its file name does.
    #[test]
    fn serde_names_are_file_names() {
        for t in [
            Table::Traces,
            Table::Calls,
            Table::Logs,
            Table::State,
            Table::Ops,
            Table::Contracts,
            Table::Results,
            Table::AssetChanges,
            Table::StorageChanges,
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
    }
}
