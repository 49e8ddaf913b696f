//! `DIR/manifest.json` of `--out`: its entries, the OS lock under which runs (shards, resumes)
//! merge into it, its atomic replacement, and the checksums `--resume` trusts.

use std::fs::{self, File};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::common::CliError;
use chaintrace::render::table::Table;

/// Partition file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Apache Parquet, one file per table of the tracer (snappy-compressed).
    Parquet,
    /// The NDJSON lines of the stream, one file per partition.
    Ndjson,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct FileEntry {
    pub table: Table,
    pub file: String,
    pub rows: u64,
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct PartEntry {
    pub index: u64,
    pub from: u64,
    pub to: u64,
    pub dir: String,
    pub txs: u64,
    pub files: Vec<FileEntry>,
}

/// `DIR/manifest.json`.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub version: u32,
    pub chain: u64,
    pub tracer: String,
    pub format: Format,
    pub partition_size: u64,
    pub partitions: Vec<PartEntry>,
}

pub(super) fn io_err(what: &str, path: &Path, e: std::io::Error) -> CliError {
    CliError::source(format!("cannot {what} {}: {e}", path.display()))
}

/// The lock on `DIR/manifest.json`, held while it is read, merged and replaced: an OS lock
/// (std's `File::lock`: `flock` on Unix, `LockFileEx` on Windows) on `DIR/.manifest.lock`. The
/// OS releases it when the holder closes the file or dies, so a killed run never leaves a
/// stale lock, and no process table is consulted. The lock file itself stays (removing it would
/// let two processes lock two different files).
pub(super) struct ManifestLock(#[allow(dead_code)] File);

impl ManifestLock {
    /// How long a run waits for another one's merge before giving up.
    const PATIENCE: Duration = Duration::from_secs(60);

    pub(super) fn take(dir: &Path) -> Result<Self, CliError> {
        let path = dir.join(".manifest.lock");
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err("create", &path, e))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(ManifestLock(file)),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < Self::PATIENCE => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(CliError::source(format!(
                        "{} has been locked by another process for 60 s: another chaintrace is \
                         writing into {}",
                        path.display(),
                        dir.display()
                    )))
                }
                Err(fs::TryLockError::Error(e)) => return Err(io_err("lock", &path, e)),
            }
        }
    }
}

/// Writes `bytes` to `path` whole or not at all (see [`cache::write_atomic`]).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    chaintrace::source::cache::write_atomic(path, bytes).map_err(|e| io_err("write", path, e))
}

pub(super) fn read_manifest(path: &Path) -> Result<Option<Manifest>, CliError> {
    match fs::read(path) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            CliError::input(format!(
                "{} is not a chaintrace manifest: {e}",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("read", path, e)),
    }
}

pub(super) fn sha256_file(path: &Path) -> Result<(String, u64), CliError> {
    let mut f = File::open(path).map_err(|e| io_err("read", path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).map_err(|e| io_err("read", path, e))?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((format!("{:x}", h.finalize()), n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("chaintrace-lock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// util-linux `flock -n FILE true` in another process: whether it got the lock.
    fn other_process_locks(file: &Path) -> bool {
        let _forks = crate::cli::FORKS.lock().unwrap_or_else(|e| e.into_inner());
        let st = std::process::Command::new("flock")
            .arg("-n")
            .arg(file)
            .arg("true")
            .status()
            .expect("util-linux flock");
        st.success()
    }

    /// The manifest lock excludes another process (util-linux `flock`, an independent
    /// implementation of the same OS lock) while held, and the OS frees it on release.
    #[test]
    fn the_manifest_lock_excludes_another_process() {
        let dir = scratch("manifest");
        let lock = dir.join(".manifest.lock");
        let held = ManifestLock::take(&dir).unwrap();
        assert!(!other_process_locks(&lock), "locked while held");
        drop(held);
        assert!(other_process_locks(&lock), "free once released");
        // Taken again after a holder went away without removing anything.
        drop(ManifestLock::take(&dir).unwrap());
        let _ = fs::remove_dir_all(&dir);
    }
}
