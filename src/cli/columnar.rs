//! `block A..B --out DIR`: the range written as partitions instead of NDJSON on stdout.
//!
//! Blocks are grouped into partitions aligned to multiples of `--partition-size` (partition
//! index = first block / size); each partition is a directory
//! `DIR/chain=<id>/blocks=<AAAAAAAAA>-<BBBBBBBBB>/` (its first and last block of the range, nine
//! digits) holding `part.ndjson` (the NDJSON lines of its blocks, byte for byte those of the
//! stream) or one `part.<table>.parquet` per table of the tracer (`render::columnar`).
//!
//! Every file is written under a hidden temporary name in its own directory
//! (`.part.<...>.tmp.<pid>`), held under an OS lock taken through the handle that created it,
//! and renamed into place when complete (another run removes only temporaries nobody holds);
//! only then is the partition recorded in `DIR/manifest.json` (range, transactions, and per
//! file its rows and sha256), which is itself replaced atomically under an OS lock on
//! `DIR/.manifest.lock` (`cli/manifest.rs`; released by the OS when its holder ends), so shards
//! of one run may share `DIR`.
//! `--resume` skips partitions the manifest lists whose files still have their checksums.
//! `--shard K/N` keeps the partitions whose index mod N is K.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use chaintrace::render::table::Table;
use chaintrace::trace::TracerSpec;
use clap::Args;
use sha2::{Digest, Sha256};

use super::common::CliError;
use super::manifest::{
    io_err, read_manifest, sha256_file, write_atomic, FileEntry, Format, Manifest, ManifestLock,
    PartEntry,
};
use super::range::{Done, Sink};

/// Columnar output of a block range.
#[derive(Args, Debug, Clone)]
pub struct OutArgs {
    /// With a range A..B: write partitions under DIR instead of NDJSON on stdout
    /// (DIR/chain=<id>/blocks=<A>-<B>/part.*, DIR/manifest.json).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Partition file format (with --out).
    #[arg(long, value_enum, default_value = "parquet", requires = "out")]
    pub format: Format,
    /// Blocks per partition; partitions are aligned to multiples of it (with --out).
    #[arg(long, value_name = "BLOCKS", default_value_t = 1000, requires = "out",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub partition_size: u64,
    /// Skip partitions the manifest lists as finished (files present with their checksums).
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Only the partitions whose index (first block / partition size) mod N is K.
    #[arg(long, value_name = "K/N", requires = "out")]
    pub shard: Option<String>,
}

/// Parses `K/N` (0 <= K < N).
pub fn parse_shard(s: &str) -> Result<(u64, u64), CliError> {
    let bad = || {
        CliError::input(format!(
            "malformed --shard {s:?}: expected K/N with 0 <= K < N"
        ))
    };
    let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
    let (k, n) = (
        k.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

/// One partition of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub index: u64,
    pub from: u64,
    pub to: u64,
}

/// The partitions of `from..=to` (aligned to multiples of `size`), keeping those of the shard.
pub fn plan(from: u64, to: u64, size: u64, shard: Option<(u64, u64)>) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut a = from;
    loop {
        let index = a / size;
        let b = index.saturating_mul(size).saturating_add(size - 1).min(to);
        if shard.is_none_or(|(k, n)| index % n == k) {
            parts.push(Part {
                index,
                from: a,
                to: b,
            });
        }
        if b >= to {
            return parts;
        }
        a = b + 1;
    }
}

/// `dir/.name.tmp.<pid>` for `dir/name`.
fn tmp_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{}.tmp.{}",
        name.unwrap_or_default(),
        std::process::id()
    ))
}

/// An open partition file: its writer and where it goes.
enum Writer {
    Ndjson(BufWriter<File>),
    #[cfg(feature = "parquet")]
    Parquet(Box<parquet::arrow::ArrowWriter<File>>),
}

struct OpenFile {
    table: Table,
    tmp: PathBuf,
    path: PathBuf,
    rows: u64,
    writer: Option<Writer>,
    /// The creating handle's clone, holding its OS lock on `tmp` for as long as this run may
    /// still rename it: another run's [`remove_stale_temps`] removes only temporary files
    /// nobody holds ([`create_locked`]).
    _held: File,
}

struct OpenPart {
    part: Part,
    dir: String,
    files: Vec<OpenFile>,
    txs: u64,
}

impl Drop for OpenPart {
    /// A partition not finished (an error, a failing block) leaves no temporary file behind.
    fn drop(&mut self) {
        for f in &mut self.files {
            drop(f.writer.take());
            let _ = fs::remove_file(&f.tmp);
        }
    }
}

/// The `--out` sink: partitions written as the range's blocks arrive in chain order.
pub struct PartitionSink<'a> {
    root: PathBuf,
    chain: u64,
    format: Format,
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    spec: &'a TracerSpec,
    parts: Vec<Part>,
    next: usize,
    open: Option<OpenPart>,
    /// Write the `asset_changes` table too (`--assets`).
    assets: bool,
    /// Write the `storage_changes` table too (`--abi` with storage layouts).
    storage: bool,
    pub written: u64,
    pub rows: u64,
}

/// What identifies a tracer in the manifest (a JavaScript tracer by its source's sha256), with
/// ` assets` when the `asset_changes` table is written too and ` storageChanges` when the
/// `storage_changes` table is.
pub fn tracer_id(
    tracer: &str,
    config: Option<&str>,
    gas_report: bool,
    assets: bool,
    storage: bool,
) -> String {
    let mut id = if gas_report {
        "gasReport".to_string()
    } else if chaintrace::trace::TracerKind::from_name(tracer).is_ok() {
        tracer.to_string()
    } else {
        let text = fs::read(tracer).unwrap_or_else(|_| tracer.as_bytes().to_vec());
        format!("js:{:x}", Sha256::digest(&text))
    };
    if let Some(c) = config {
        id.push_str(" config:");
        id.push_str(c.trim());
    }
    if assets {
        id.push_str(" assets");
    }
    if storage {
        id.push_str(" storageChanges");
    }
    id
}

/// Checks (or creates) the manifest of `root`, and returns the partitions left to write.
pub fn prepare(
    args: &OutArgs,
    root: &Path,
    chain: u64,
    tracer: &str,
    (from, to): (u64, u64),
) -> Result<(Vec<Part>, usize), CliError> {
    #[cfg(not(feature = "parquet"))]
    if args.format == Format::Parquet {
        return Err(CliError::input(
            "this chaintrace was built without the `parquet` feature: use --format ndjson",
        ));
    }
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    fs::create_dir_all(root).map_err(|e| io_err("create", root, e))?;
    let path = root.join("manifest.json");
    let _lock = ManifestLock::take(root)?;
    let manifest = match read_manifest(&path)? {
        Some(m) => {
            if m.chain != chain
                || m.tracer != tracer
                || m.format != args.format
                || m.partition_size != args.partition_size
            {
                return Err(CliError::input(format!(
                    "{} holds another output (chain {}, tracer {}, format {:?}, partition size {}): \
                     use another --out, or the same chain, tracer, --format and --partition-size",
                    root.display(),
                    m.chain,
                    m.tracer,
                    m.format,
                    m.partition_size
                )));
            }
            m
        }
        None => {
            let m = Manifest {
                version: 1,
                chain,
                tracer: tracer.to_string(),
                format: args.format,
                partition_size: args.partition_size,
                partitions: Vec::new(),
            };
            let text =
                serde_json::to_vec_pretty(&m).map_err(|e| CliError::source(e.to_string()))?;
            write_atomic(&path, &text)?;
            m
        }
    };
    let all = plan(from, to, args.partition_size, shard);
    if !args.resume {
        return Ok((all, 0));
    }
    let mut left = Vec::new();
    let mut skipped = 0;
    for p in all {
        let done = manifest.partitions.iter().any(|e| {
            e.from == p.from
                && e.to == p.to
                && e.files
                    .iter()
                    .all(|f| sha256_file(&root.join(&f.file)).is_ok_and(|(h, _)| h == f.sha256))
        });
        if done {
            skipped += 1;
        } else {
            left.push(p);
        }
    }
    Ok((left, skipped))
}

impl<'a> PartitionSink<'a> {
    pub fn new(
        root: &Path,
        chain: u64,
        format: Format,
        spec: &'a TracerSpec,
        parts: Vec<Part>,
        assets: bool,
        storage: bool,
    ) -> Self {
        PartitionSink {
            root: root.to_path_buf(),
            chain,
            format,
            spec,
            parts,
            next: 0,
            open: None,
            assets,
            storage,
            written: 0,
            rows: 0,
        }
    }

    fn tables(&self) -> Vec<Table> {
        match self.format {
            Format::Ndjson => {
                let mut t = vec![Table::Traces];
                if self.assets {
                    t.push(Table::AssetChanges);
                }
                if self.storage {
                    t.push(Table::StorageChanges);
                }
                t
            }
            #[cfg(feature = "parquet")]
            Format::Parquet => Table::of_with(self.spec, self.assets, self.storage),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => Vec::new(),
        }
    }

    fn open(&self, part: Part) -> Result<OpenPart, CliError> {
        let dir = format!(
            "chain={}/blocks={:09}-{:09}",
            self.chain, part.from, part.to
        );
        let abs = self.root.join(&dir);
        fs::create_dir_all(&abs).map_err(|e| io_err("create", &abs, e))?;
        remove_stale_temps(&abs);
        let mut files = Vec::new();
        for table in self.tables() {
            let name = match self.format {
                Format::Ndjson if table == Table::Traces => "part.ndjson".to_string(),
                Format::Ndjson => format!("part.{table}.ndjson"),
                Format::Parquet => format!("part.{table}.parquet"),
            };
            let path = abs.join(&name);
            let tmp = tmp_name(&path);
            let (file, held) = create_locked(&tmp)?;
            let writer = match self.format {
                Format::Ndjson => Writer::Ndjson(BufWriter::new(file)),
                #[cfg(feature = "parquet")]
                Format::Parquet => Writer::Parquet(Box::new(parquet_writer(
                    file,
                    self.spec,
                    table,
                    (self.assets, self.storage),
                )?)),
                #[cfg(not(feature = "parquet"))]
                Format::Parquet => return Err(CliError::input(
                    "this chaintrace was built without the `parquet` feature: use --format ndjson",
                )),
            };
            files.push(OpenFile {
                table,
                tmp,
                path,
                _held: held,
                rows: 0,
                writer: Some(writer),
            });
        }
        Ok(OpenPart {
            part,
            dir,
            files,
            txs: 0,
        })
    }

    /// Closes the open partition's files, renames them into place, records it in the manifest.
    fn close(&mut self) -> Result<(), CliError> {
        let Some(mut open) = self.open.take() else {
            return Ok(());
        };
        let mut entries = Vec::new();
        for f in &mut open.files {
            let file = match f.writer.take() {
                Some(Writer::Ndjson(w)) => w
                    .into_inner()
                    .map_err(|e| io_err("write", &f.tmp, e.into_error()))?,
                #[cfg(feature = "parquet")]
                Some(Writer::Parquet(w)) => w.into_inner().map_err(|e| {
                    CliError::source(format!("cannot write {}: {e}", f.tmp.display()))
                })?,
                None => continue,
            };
            file.sync_all().map_err(|e| io_err("write", &f.tmp, e))?;
            drop(file);
            let (sha256, bytes) = sha256_file(&f.tmp)?;
            fs::rename(&f.tmp, &f.path).map_err(|e| io_err("rename into", &f.path, e))?;
            let name = f.path.file_name().unwrap_or_default().to_string_lossy();
            entries.push(FileEntry {
                table: f.table,
                file: format!("{}/{name}", open.dir),
                rows: f.rows,
                bytes,
                sha256,
            });
            self.rows += f.rows;
        }
        let entry = PartEntry {
            index: open.part.index,
            from: open.part.from,
            to: open.part.to,
            dir: open.dir.clone(),
            txs: open.txs,
            files: entries,
        };
        let path = self.root.join("manifest.json");
        let _lock = ManifestLock::take(&self.root)?;
        let mut m = read_manifest(&path)?.ok_or_else(|| {
            CliError::source(format!("{} disappeared during the run", path.display()))
        })?;
        // One entry per partition index: an older run over another part of the same aligned
        // slot (e.g. 100..150, now 100..199) is replaced, its files removed.
        let (stale, keep): (Vec<_>, Vec<_>) = m
            .partitions
            .drain(..)
            .partition(|e| e.index == entry.index || e.dir == entry.dir);
        m.partitions = keep;
        for old in stale.iter().filter(|e| e.dir != entry.dir) {
            for f in &old.files {
                let _ = fs::remove_file(self.root.join(&f.file));
            }
            let _ = fs::remove_dir(self.root.join(&old.dir));
        }
        m.partitions.push(entry);
        m.partitions.sort_by_key(|e| (e.from, e.to));
        let text = serde_json::to_vec_pretty(&m).map_err(|e| CliError::source(e.to_string()))?;
        write_atomic(&path, &text)?;
        self.written += 1;
        Ok(())
    }
}

/// Creates `tmp` locked through the handle that created it: the lock belongs to that open file,
/// and its clone (kept until the rename) holds it after the writer closes, so no other run's
/// [`remove_stale_temps`] can take the file between its creation and its rename. Should one
/// have removed the name in the instant before the lock, the name no longer leads to this
/// file, and it is made again.
fn create_locked(tmp: &Path) -> Result<(File, File), CliError> {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..3 {
        let file = File::create(tmp).map_err(|e| io_err("create", tmp, e))?;
        file.lock().map_err(|e| io_err("lock", tmp, e))?;
        let held = file.try_clone().map_err(|e| io_err("lock", tmp, e))?;
        let ours = match (held.metadata(), fs::metadata(tmp)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if ours {
            return Ok((file, held));
        }
    }
    Err(CliError::source(format!(
        "cannot keep {}: another run removes it as it is made",
        tmp.display()
    )))
}

/// Removes temporary files of dead writers (a killed run) from a partition directory: those
/// whose OS lock nobody holds (a live writer holds its own until it renames the file).
fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(".part.") || !name.contains(".tmp.") {
            continue;
        }
        let unheld = File::open(e.path()).is_ok_and(|f| f.try_lock().is_ok());
        if unheld {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// One NDJSON line per row of each transaction of `done` (`rows[i]`: transaction `i`'s), its
/// `block`, `tx_index` and `tx_hash` first; the number of lines.
fn keyed_lines<R: serde::Serialize>(
    w: &mut impl Write,
    done: &Done,
    rows: &[Vec<R>],
) -> std::io::Result<u64> {
    let mut n = 0;
    for (i, (t, rows)) in done.traces.iter().zip(rows).enumerate() {
        for r in rows {
            let mut v = serde_json::json!({
                "block": done.number, "tx_index": i, "tx_hash": format!("{:?}", t.hash)});
            if let (Some(o), serde_json::Value::Object(m)) =
                (v.as_object_mut(), serde_json::to_value(r)?)
            {
                o.extend(m);
            }
            serde_json::to_writer(&mut *w, &v)?;
            w.write_all(b"\n")?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(feature = "parquet")]
fn parquet_writer(
    file: File,
    spec: &TracerSpec,
    table: Table,
    (assets, storage): (bool, bool),
) -> Result<parquet::arrow::ArrowWriter<File>, CliError> {
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    // The schema of `table`: that of an empty batch.
    let empty = chaintrace::render::columnar::Tables::new(spec, assets, storage)
        .batches()
        .map_err(|e| CliError::source(e.to_string()))?;
    let schema = empty
        .into_iter()
        .find(|(n, _)| *n == table)
        .map(|(_, b)| b.schema())
        .ok_or_else(|| CliError::source(format!("no table {table} for this tracer")))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        // Bounded memory: a row group is flushed at 128 Ki rows or about 64 MiB.
        .set_max_row_group_row_count(Some(128 * 1024))
        .set_max_row_group_bytes(Some(64 << 20))
        .set_created_by(format!("chaintrace {}", env!("CARGO_PKG_VERSION")))
        .build();
    parquet::arrow::ArrowWriter::try_new(file, schema, Some(props))
        .map_err(|e| CliError::source(format!("cannot start a parquet file: {e}")))
}

impl Sink for PartitionSink<'_> {
    fn block(&mut self, done: &Done) -> Result<(), CliError> {
        if self.open.is_none() {
            let part = self.parts.get(self.next).cloned().ok_or_else(|| {
                CliError::source(format!("block {} is outside every partition", done.number))
            })?;
            self.next += 1;
            self.open = Some(self.open(part)?);
        }
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        open.txs += done.traces.len() as u64;
        let currency = chaintrace::chain::currency(self.chain);
        let asset_rows: Vec<Vec<chaintrace::render::assets::AssetChangeRow>> = done
            .assets
            .iter()
            .map(|a| chaintrace::render::assets::asset_table_rows(a, currency))
            .collect();
        #[cfg(feature = "parquet")]
        let mut batches = if self.format == Format::Parquet {
            let mut tables =
                chaintrace::render::columnar::Tables::new(self.spec, self.assets, self.storage);
            for (i, t) in done.traces.iter().enumerate() {
                tables
                    .push(done.number, i as u32, t)
                    .map_err(|e| CliError::source(e.to_string()))?;
                if let Some(rows) = asset_rows.get(i) {
                    tables.push_assets(done.number, i as u32, &t.hash, rows.clone());
                }
                if let Some(rows) = done.storage.get(i) {
                    tables.push_storage(done.number, i as u32, &t.hash, rows);
                }
            }
            tables
                .batches()
                .map_err(|e| CliError::source(e.to_string()))?
        } else {
            Vec::new()
        };
        for f in &mut open.files {
            match f.writer.as_mut() {
                Some(Writer::Ndjson(w)) if f.table == Table::AssetChanges => {
                    f.rows += keyed_lines(w, done, &asset_rows)
                        .map_err(|e| io_err("write", &f.tmp, e))?;
                }
                Some(Writer::Ndjson(w)) if f.table == Table::StorageChanges => {
                    f.rows += keyed_lines(w, done, &done.storage)
                        .map_err(|e| io_err("write", &f.tmp, e))?;
                }
                Some(Writer::Ndjson(w)) => {
                    w.write_all(&done.lines)
                        .map_err(|e| io_err("write", &f.tmp, e))?;
                    f.rows += done.traces.len() as u64;
                }
                #[cfg(feature = "parquet")]
                Some(Writer::Parquet(w)) => {
                    let Some(at) = batches.iter().position(|(n, _)| *n == f.table) else {
                        continue;
                    };
                    let (_, b) = batches.swap_remove(at);
                    if b.num_rows() > 0 {
                        w.write(&b).map_err(|e| {
                            CliError::source(format!("cannot write {}: {e}", f.tmp.display()))
                        })?;
                        f.rows += b.num_rows() as u64;
                    }
                }
                None => {}
            }
        }
        if done.number >= open.part.to {
            self.close()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), CliError> {
        self.close()
    }
}

#[cfg(test)]
mod tests {
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("chaintrace-lock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// A temporary partition file whose writer holds its lock stays; an unheld one (its writer
    /// was killed) is removed.
    #[test]
    fn only_unheld_temporaries_are_removed() {
        // No process may be forked while `holder` is open (see `FORKS`).
        let _forks = crate::cli::FORKS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("temps");
        let live = dir.join(".part.ndjson.tmp.1");
        let dead = dir.join(".part.ndjson.tmp.2");
        fs::write(&live, "x").unwrap();
        fs::write(&dead, "x").unwrap();
        let holder = File::open(&live).unwrap();
        holder.lock().unwrap();
        remove_stale_temps(&dir);
        assert!(live.exists() && !dead.exists());
        drop(holder);
        remove_stale_temps(&dir);
        assert!(!live.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    /// A temporary is locked from the moment its creating handle exists, and the lock stays
    /// after the writer closes, until the clone is dropped (at the rename): another run's
    /// cleanup never finds it unheld in between.
    #[test]
    fn temporaries_are_locked_through_their_creating_handle() {
        let _forks = crate::cli::FORKS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch("created");
        let tmp = dir.join(".part.ndjson.tmp.3");
        let (writer, held) = create_locked(&tmp).unwrap();
        let other = File::open(&tmp).unwrap();
        assert!(other.try_lock().is_err(), "held by its creating handle");
        drop(writer);
        remove_stale_temps(&dir);
        assert!(
            tmp.exists(),
            "the clone keeps the lock after the writer closed"
        );
        drop(held);
        remove_stale_temps(&dir);
        assert!(!tmp.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    use super::*;

    #[test]
    fn partitions_are_aligned_and_sharded() {
        let p = plan(995, 2003, 1000, None);
        let r: Vec<_> = p.iter().map(|p| (p.index, p.from, p.to)).collect();
        assert_eq!(r, vec![(0, 995, 999), (1, 1000, 1999), (2, 2000, 2003)]);
        let a = plan(0, 9999, 1000, Some((0, 3)));
        let b = plan(0, 9999, 1000, Some((1, 3)));
        let c = plan(0, 9999, 1000, Some((2, 3)));
        let mut all: Vec<_> = a.iter().chain(&b).chain(&c).map(|p| p.index).collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(
            plan(7, 7, 1, None),
            vec![Part {
                index: 7,
                from: 7,
                to: 7
            }]
        );
        assert_eq!(plan(u64::MAX - 1, u64::MAX, 1000, None).len(), 1);
    }

    #[test]
    fn shards_are_checked() {
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("0/0").is_err());
        assert!(parse_shard("x").is_err());
    }
}
