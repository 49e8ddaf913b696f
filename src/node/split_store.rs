//! What a state-store directory holds, judged from its files without opening the database.
//!
//! A pebble (or rocksdb, or goleveldb) database that has never been written still has its
//! bookkeeping files (`CURRENT`, `MANIFEST-*`, `OPTIONS-*`); data lives in table files (`.sst`,
//! `.ldb`) or, before the first flush, in a non-empty write-ahead log (`.log`).

use std::path::Path;

/// The state of a store directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreState {
    Missing,
    /// The directory exists and has no entries.
    EmptyDir,
    /// It has databases (entries) but none holds data.
    EmptyDatabases,
    HasData,
}

impl StoreState {
    pub fn describe(self) -> &'static str {
        match self {
            StoreState::Missing => "missing",
            StoreState::EmptyDir => "empty",
            StoreState::EmptyDatabases => "holds only empty databases",
            StoreState::HasData => "holds data",
        }
    }
}

fn is_data_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    size > 0 && (name.ends_with(".sst") || name.ends_with(".ldb") || name.ends_with(".log"))
}

fn has_data(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            depth > 0 && has_data(&p, depth - 1)
        } else {
            is_data_file(&p)
        }
    })
}

/// Inspects `dir` (databases may sit up to three levels down).
pub fn store_state(dir: &Path) -> StoreState {
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        return StoreState::Missing;
    };
    if entries.next().is_none() {
        StoreState::EmptyDir
    } else if has_data(dir, 3) {
        StoreState::HasData
    } else {
        StoreState::EmptyDatabases
    }
}
