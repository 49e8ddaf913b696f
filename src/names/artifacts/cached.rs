//! A project's artifacts kept between runs (issue 44): what [`load_tree`](super::load_tree) loaded from a Foundry
//! or Hardhat tree, or [`load_file`](super::load_file) from an `--abi` file, is stored under
//! the cache directory (`names/`) and used again while none of the files it was loaded from
//! changed. Reading a forge project's 42 artifacts (3 MiB of JSON,
//! most of it ASTs) took more CPU than the whole rest of a `tx`.
//!
//! A run reads little of what is kept: an index (each artifact's name, runtime code and masks,
//! creation code, and what its parts hold), and then the parts of the artifacts whose code it
//! met — layouts, source maps, metadata, the compilation's files, an ABI — each read back when
//! first asked for ([`KeptParts`], [`LazyAbi`]). An artifact's layouts are a part of their own,
//! with what naming its storage needs of its compilation worked out ([`Declared`]): a run that
//! names storage and locates no failure reads no source map, metadata or compilation. What a
//! run costs does not grow with the project's size beyond its index.
//!
//! Kept by: this program (its version, size and mtime), the tree's directory, the working
//! directory (relative source paths are also looked for there), every directory walked (an
//! entry added, removed or renamed changes its mtime) and every file the loading reads — the
//! tree's JSON files, Foundry's `out/build-info/` and `cache/solidity-files-cache.json` — by
//! path, length and mtime. Checking these is a `stat` each; the tree is walked again only when
//! something changed. A tree with anything changed in the last two seconds is not stored: a
//! file rewritten within the file system's timestamp granularity, at the same length, would
//! look unchanged. What is read on first need (source texts, parsed metadata, decoded maps) is
//! not stored; it is read as on a first run.
//!
//! The file: a header (format, the key's and the index's lengths, the whole length), the key,
//! the index, then the parts. MessagePack in field order (no field names): every stored type
//! writes all its fields, always ([`crate::render::abi`] keeps its items in a shape of its own
//! for this). Anything unreadable, of another format, of another length than its header says,
//! or from another key is ignored and the tree loaded again; a store that fails is silent (the
//! run's names do not depend on it). A part that does not read back (the file altered in place
//! since) is empty: names go missing, never wrong.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use alloy_primitives::{keccak256, Bytes};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tree::{by_threads, load_files_of, tree_listing};
use super::{build_infos, merged_abi, Artifact, Declared, Flags, Ranges, Rest};
use crate::names::sources::{ArtifactSources, Metadata, StoredMetadata, Unit};
use crate::names::NamesError;
use crate::render::abi::{KeptBytes, LazyAbi};

/// The stored form's version: a change to any stored type changes it.
const FORMAT: u32 = 6;

/// The header: format, the key's length, the index's length (u32 each), the file's (u64).
const HEADER: usize = 20;

/// How long a tree must have been unchanged to be stored.
const SETTLED: Duration = Duration::from_secs(2);

/// A tree or file as loaded: its artifacts, their ABIs merged ([`merged_abi`]), a tree's
/// build infos ([`build_infos`]).
pub struct Tree {
    pub artifacts: Vec<Artifact>,
    pub merged: Option<LazyAbi>,
    pub build_infos: Vec<PathBuf>,
}

/// What a stored tree was loaded from (paths as text: a tree with a path that is not UTF-8
/// is not stored).
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Key<'a> {
    /// This program: version, and its executable's length and mtime (a rebuilt binary of the
    /// same version may read artifacts otherwise).
    #[serde(borrow)]
    program: (&'a str, u64, u128),
    /// The tree's directory, or the file.
    dir: &'a str,
    cwd: Option<&'a str>,
    /// Every directory walked, and `build-info`: path, mtime in nanoseconds.
    #[serde(borrow)]
    dirs: Vec<(&'a str, u128)>,
    /// Every file the loading reads: path, length, mtime in nanoseconds; `(path, 0, 0)` for
    /// one that is absent.
    #[serde(borrow)]
    files: Vec<(&'a str, u64, u128)>,
}

/// A part's place among the stored parts: offset, length.
type Span = (u32, u32);

#[derive(Serialize, Deserialize)]
struct Index {
    artifacts: Vec<IndexArtifact>,
    /// Each compilation's files, and the paths of those whose AST was not solc's.
    units: Vec<(Span, Vec<String>)>,
    merged: Option<Span>,
    build_infos: Vec<String>,
}

/// One artifact in the index: what matching code to artifacts and the questions asked of all
/// of them need.
#[derive(Serialize, Deserialize)]
struct IndexArtifact {
    name: String,
    abi: Span,
    code: Option<Bytes>,
    mask: Option<Ranges>,
    /// Its creation code (a part) and masked ranges, when it has a creation map.
    creation: Option<(Span, Ranges)>,
    flags: Flags,
    /// Its compilation, by index into [`Index::units`].
    unit: Option<u32>,
    /// Its [`Layouts`] (a part).
    layouts: Span,
    /// Its [`StoredSources`] (a part), when it has sources.
    sources: Option<Span>,
}

/// An artifact's layouts as stored, apart from its sources: a run naming storage reads these
/// alone.
#[derive(Serialize, Deserialize, Default, Debug)]
pub(super) struct Layouts {
    pub(super) storage_layout: Option<Value>,
    pub(super) transient_layout: Option<Value>,
    pub(super) declared: Option<Declared>,
}

#[derive(Serialize, Deserialize)]
struct StoredSources {
    runtime_map: Option<String>,
    creation_map: Option<String>,
    metadata: Option<StoredMetadata>,
}

/// A stored tree's parts, shared by its artifacts: each read from the file when first asked
/// for (the file as it was opened: a store written since replaces it by a rename).
#[derive(Debug)]
struct Kept {
    file: std::fs::File,
    /// One seek-and-read at a time, where reads cannot say where.
    #[cfg(not(unix))]
    reading: std::sync::Mutex<()>,
    /// Where the parts start in the file.
    parts_at: u64,
    units: Vec<KeptUnit>,
}

/// A compilation's files as kept: where, the paths whose AST was not solc's, and the files
/// once read.
#[derive(Debug)]
struct KeptUnit {
    at: Span,
    unread: Vec<String>,
    got: OnceLock<Option<Arc<Unit>>>,
}

impl Kept {
    fn part(&self, (at, len): Span) -> Option<Vec<u8>> {
        let mut out = vec![0; len as usize];
        let at = self.parts_at + u64::from(at);
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.read_exact_at(&mut out, at).ok()?;
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = &self.file;
            let _one = self.reading.lock().ok()?;
            file.seek(SeekFrom::Start(at)).ok()?;
            file.read_exact(&mut out).ok()?;
        }
        Some(out)
    }

    fn unit(&self, i: u32) -> Option<Arc<Unit>> {
        let unit = self.units.get(i as usize)?;
        unit.got
            .get_or_init(|| {
                rmp_serde::from_slice(&self.part(unit.at)?)
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }
}

/// A kept ABI: a part of its tree's store.
#[derive(Debug)]
struct KeptAbi {
    kept: Arc<Kept>,
    at: Span,
}

impl KeptBytes for KeptAbi {
    fn bytes(&self) -> Option<Vec<u8>> {
        self.kept.part(self.at)
    }
}

/// A kept artifact's layouts and sources, each read back when first asked for.
#[derive(Clone, Debug)]
pub(super) struct KeptParts {
    kept: Arc<Kept>,
    layouts_at: Span,
    sources_at: Option<Span>,
    unit: Option<u32>,
    /// Its creation code (a part) and masked ranges, when it has a creation map.
    creation: Option<(Span, Ranges)>,
    creation_code: OnceLock<Option<Vec<u8>>>,
    pub(super) flags: Flags,
    layouts: OnceLock<Arc<Layouts>>,
    sources: OnceLock<Option<Arc<ArtifactSources>>>,
}

impl KeptParts {
    pub(super) fn layouts(&self) -> &Layouts {
        self.layouts.get_or_init(|| {
            let read = self.kept.part(self.layouts_at);
            Arc::new(
                read.and_then(|b| rmp_serde::from_slice(&b).ok())
                    .unwrap_or_default(),
            )
        })
    }

    pub(super) fn sources(&self) -> &Option<Arc<ArtifactSources>> {
        self.sources.get_or_init(|| {
            let read = self.kept.part(self.sources_at?);
            let s: StoredSources = rmp_serde::from_slice(&read?).ok()?;
            let creation = match (&self.creation, s.creation_map) {
                (Some((_, mask)), Some(map)) => {
                    Some((self.creation_code()?.to_vec(), mask.clone(), map))
                }
                _ => None,
            };
            Some(Arc::new(ArtifactSources {
                runtime_map: s.runtime_map,
                creation,
                unit: self.kept.unit(self.unit?)?,
                metadata: s.metadata.map(|m| Arc::new(Metadata::from_stored(m))),
            }))
        })
    }

    fn creation_code(&self) -> Option<&[u8]> {
        let (at, _) = self.creation.as_ref()?;
        self.creation_code
            .get_or_init(|| self.kept.part(*at))
            .as_deref()
    }

    /// [`ArtifactSources::creation_matches`] of its creation code, without reading its parts.
    pub(super) fn creation_matches(&self, init: &[u8]) -> bool {
        let Some((_, mask)) = &self.creation else {
            return false;
        };
        self.creation_code()
            .is_some_and(|code| crate::names::sources::starts_with_code(code, mask, init))
    }

    pub(super) fn unread_asts(&self) -> Vec<String> {
        self.unit
            .and_then(|u| self.kept.units.get(u as usize))
            .map(|u| u.unread.clone())
            .unwrap_or_default()
    }
}

/// [`load_tree`](super::load_tree) of `dir`, its ABIs merged and its build infos, from the
/// store in `cache` (a directory) when it holds this tree as it is now; else loaded, and
/// stored there for the next run.
pub fn load_tree_cached(dir: &Path, cache: Option<&Path>) -> Result<Tree, NamesError> {
    load_cached(dir, cache, |dir| {
        let (files, dirs) = tree_listing(dir)?;
        let artifacts = load_files_of(dir, &files)?;
        let tree = Tree {
            merged: merged_abi(&artifacts),
            artifacts,
            build_infos: build_infos(dir),
        };
        Ok((tree, tree_reads(dir, files, dirs)))
    })
}

/// [`load_file`](super::load_file) of `file` (an `--abi` file: a standard-JSON output of a
/// whole compilation may be megabytes) and its ABIs merged, kept between runs as a tree is.
pub fn load_file_cached(file: &Path, cache: Option<&Path>) -> Result<Tree, NamesError> {
    load_cached(file, cache, |file| {
        let artifacts = super::load_file(file)?;
        let tree = Tree {
            merged: merged_abi(&artifacts),
            artifacts,
            build_infos: Vec::new(),
        };
        let reads = Reads {
            dirs: Vec::new(),
            files: vec![file.to_path_buf()],
        };
        Ok((tree, reads))
    })
}

/// What loading a tree or file read: the directories walked (an entry added, removed or
/// renamed changes a directory's mtime) and the files read, or looked for.
struct Reads {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
}

/// What loading the tree `dir` read: its `files` and `dirs`, its `build-info/` and what that
/// holds, and Foundry's cache beside it.
fn tree_reads(dir: &Path, mut files: Vec<PathBuf>, mut dirs: Vec<PathBuf>) -> Reads {
    let info_dir = dir.join("build-info");
    if let Ok(entries) = std::fs::read_dir(&info_dir) {
        let mut infos: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        infos.sort();
        files.extend(infos);
        dirs.push(info_dir);
    }
    files.push(foundry_cache(dir));
    Reads { dirs, files }
}

/// What `load` gives for `at` (a tree or a file), from the store in `cache` when it holds `at`
/// as it is now; else loaded, and stored for the next run.
fn load_cached(
    at: &Path,
    cache: Option<&Path>,
    load: impl FnOnce(&Path) -> Result<(Tree, Reads), NamesError>,
) -> Result<Tree, NamesError> {
    let program = cache.and_then(|_| program());
    let path = cache.zip(program.as_ref()).map(|(c, _)| {
        let cwd = std::env::current_dir().ok();
        let id = keccak256(format!("{}\n{:?}", at.display(), cwd).as_bytes());
        c.join(format!(
            "{}.msgpack",
            alloy_primitives::hex::encode(&id[..16])
        ))
    });
    if let (Some(path), Some(program)) = (&path, &program) {
        if let Some(found) = read(path, at, program) {
            return Ok(found);
        }
    }
    let (tree, reads) = load(at)?;
    if let (Some(path), Some(program)) = (&path, &program) {
        read_asts(&tree);
        if let Some(bytes) = stored(at, program, &reads, &tree) {
            let _ = crate::source::cache::write_atomic(path, &bytes);
        }
    }
    Ok(tree)
}

/// Every AST of the tree's compilations still kept as text read into its declarations (the
/// store keeps those, not the text), by one thread per core ([`by_threads`]): what loading the
/// tree left unread.
fn read_asts(tree: &Tree) {
    let mut files: Vec<&crate::names::sources::SourceFile> = tree
        .artifacts
        .iter()
        .filter_map(Artifact::sources)
        .flat_map(|s| s.unit.files.values().map(|f| &**f))
        .filter(|f| f.ast_still_text())
        .collect();
    files.sort_by_key(|f| *f as *const _ as usize);
    files.dedup_by_key(|f| *f as *const _ as usize);
    by_threads(&files, |f| f.read_ast());
}

/// This program's version, and its executable's length and mtime.
fn program() -> Option<(String, u64, u128)> {
    let exe = std::env::current_exe().ok()?;
    let (len, mtime) = stat(&exe)?;
    Some((env!("CARGO_PKG_VERSION").to_string(), len, mtime))
}

/// A path's length and mtime in nanoseconds, following links.
fn stat(p: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(p).ok()?;
    let mtime = m
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some((m.len(), mtime.as_nanos()))
}

/// Foundry's cache of the project whose `out/` is `dir`.
fn foundry_cache(dir: &Path) -> PathBuf {
    dir.parent()
        .unwrap_or(dir)
        .join("cache/solidity-files-cache.json")
}

/// Whether `key` holds for the tree `dir` as it is now.
fn holds(key: &Key, dir: &Path, program: &(String, u64, u128)) -> bool {
    let cwd = std::env::current_dir().ok();
    key.program == (program.0.as_str(), program.1, program.2)
        && Path::new(key.dir) == dir
        && key.cwd.map(Path::new) == cwd.as_deref()
        && key
            .dirs
            .iter()
            .all(|(d, mtime)| stat(Path::new(d)).is_some_and(|(_, m)| m == *mtime))
        && key
            .files
            .iter()
            .all(|(f, len, mtime)| stat(Path::new(f)).unwrap_or((0, 0)) == (*len, *mtime))
}

/// The stored tree of `dir`, when `path` holds it as it is now: its header, key and index
/// read, the rest left for when asked.
fn read(path: &Path, dir: &Path, program: &(String, u64, u128)) -> Option<Tree> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let word = |at: usize| {
        u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let mut total = [0u8; 8];
    total.copy_from_slice(&header[12..HEADER]);
    let (key_len, index_len) = (word(4) as usize, word(8) as usize);
    let parts_at = (HEADER + key_len).checked_add(index_len)?;
    if word(0) != FORMAT
        || u64::from_le_bytes(total) != file.metadata().ok()?.len()
        || parts_at as u64 > u64::from_le_bytes(total)
    {
        return None;
    }
    let mut head = vec![0; key_len + index_len];
    file.read_exact(&mut head).ok()?;
    let key: Key = rmp_serde::from_slice(&head[..key_len]).ok()?;
    if !holds(&key, dir, program) {
        return None;
    }
    let index: Index = rmp_serde::from_slice(&head[key_len..]).ok()?;
    let kept = Arc::new(Kept {
        file,
        #[cfg(not(unix))]
        reading: std::sync::Mutex::new(()),
        parts_at: parts_at as u64,
        units: index
            .units
            .into_iter()
            .map(|(at, unread)| KeptUnit {
                at,
                unread,
                got: OnceLock::new(),
            })
            .collect(),
    });
    let abi = |at: Span| {
        LazyAbi::kept(Arc::new(KeptAbi {
            kept: kept.clone(),
            at,
        }))
    };
    let artifacts = index
        .artifacts
        .into_iter()
        .map(|a| Artifact {
            name: a.name,
            abi: abi(a.abi),
            code: a.code.map(|c| c.to_vec()),
            mask: a.mask,
            rest: Rest::Kept(KeptParts {
                kept: kept.clone(),
                layouts_at: a.layouts,
                sources_at: a.sources,
                unit: a.unit,
                creation: a.creation,
                creation_code: OnceLock::new(),
                flags: a.flags,
                layouts: OnceLock::new(),
                sources: OnceLock::new(),
            }),
            pending: None,
        })
        .collect();
    Some(Tree {
        artifacts,
        merged: index.merged.map(abi),
        build_infos: index.build_infos.into_iter().map(PathBuf::from).collect(),
    })
}

/// The stored form of `tree`, loaded from `at` having read `reads`; `None` when anything of
/// it changed within [`SETTLED`] or a path is not UTF-8.
fn stored(at: &Path, program: &(String, u64, u128), reads: &Reads, tree: &Tree) -> Option<Vec<u8>> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let settled = |mtime: u128| now.saturating_sub(mtime) >= SETTLED.as_nanos();
    let text = |p: &'_ Path| -> Option<String> { p.to_str().map(str::to_string) };
    let cwd = std::env::current_dir().ok();
    let cwd = match &cwd {
        Some(c) => Some(text(c)?),
        None => None,
    };
    // The key's texts first: the key borrows them.
    let dir_texts: Vec<(String, u128)> = reads
        .dirs
        .iter()
        .map(|d| Some((text(d)?, stat(d)?.1)))
        .collect::<Option<_>>()?;
    let file_texts: Vec<(String, u64, u128)> = reads
        .files
        .iter()
        .map(|f| {
            // Absent is a state too: (path, 0, 0).
            let (len, mtime) = stat(f).unwrap_or((0, 0));
            Some((text(f)?, len, mtime))
        })
        .collect::<Option<_>>()?;
    if !dir_texts.iter().all(|(_, m)| settled(*m))
        || !file_texts.iter().all(|(_, _, m)| settled(*m))
    {
        return None;
    }
    let key = Key {
        program: (program.0.as_str(), program.1, program.2),
        dir: at.to_str()?,
        cwd: cwd.as_deref(),
        dirs: dir_texts.iter().map(|(d, m)| (d.as_str(), *m)).collect(),
        files: file_texts
            .iter()
            .map(|(f, l, m)| (f.as_str(), *l, *m))
            .collect(),
    };

    let mut parts: Vec<u8> = Vec::new();
    let mut put = |bytes: &[u8]| -> Option<Span> {
        let at = u32::try_from(parts.len()).ok()?;
        parts.extend_from_slice(bytes);
        Some((at, u32::try_from(bytes.len()).ok()?))
    };
    let mut units: Vec<Arc<Unit>> = Vec::new();
    let mut unit_spans: Vec<(Span, Vec<String>)> = Vec::new();
    let mut artifacts = Vec::with_capacity(tree.artifacts.len());
    for a in &tree.artifacts {
        if a.pending.is_some() {
            return None;
        }
        // A tree is stored as loaded, its parts all read.
        let Rest::Read(p) = &a.rest else {
            return None;
        };
        let unit = match &p.sources {
            Some(s) => Some(match units.iter().position(|u| Arc::ptr_eq(u, &s.unit)) {
                Some(i) => i,
                None => {
                    let span = put(&rmp_serde::to_vec(&*s.unit).ok()?)?;
                    units.push(s.unit.clone());
                    unit_spans.push((span, a.unread_asts()));
                    units.len() - 1
                }
            }),
            None => None,
        };
        let layouts = Layouts {
            storage_layout: p.storage_layout.clone(),
            transient_layout: p.transient_layout.clone(),
            declared: a.declared().cloned(),
        };
        let layouts = put(&rmp_serde::to_vec(&layouts).ok()?)?;
        let sources = match &p.sources {
            Some(s) => {
                let stored = StoredSources {
                    runtime_map: s.runtime_map.clone(),
                    creation_map: s.creation.as_ref().map(|(_, _, map)| map.clone()),
                    metadata: s.metadata.as_ref().map(|m| m.stored()),
                };
                Some(put(&rmp_serde::to_vec(&stored).ok()?)?)
            }
            None => None,
        };
        let abi = put(&a.abi.stored()?)?;
        let creation = match p.sources.as_ref().and_then(|s| s.creation.as_ref()) {
            Some((code, mask, _)) => Some((put(code)?, mask.clone())),
            None => None,
        };
        artifacts.push(IndexArtifact {
            name: a.name.clone(),
            abi,
            code: a.code.as_deref().map(Bytes::copy_from_slice),
            mask: a.mask.clone(),
            creation,
            flags: a.flags(),
            unit: match unit {
                Some(u) => Some(u32::try_from(u).ok()?),
                None => None,
            },
            layouts,
            sources,
        });
    }
    let merged = match &tree.merged {
        Some(m) => Some(put(&m.stored()?)?),
        None => None,
    };
    let index = Index {
        artifacts,
        units: unit_spans,
        merged,
        build_infos: tree
            .build_infos
            .iter()
            .map(|p| text(p))
            .collect::<Option<_>>()?,
    };
    let key = rmp_serde::to_vec(&key).ok()?;
    let index = rmp_serde::to_vec(&index).ok()?;
    let total = HEADER + key.len() + index.len() + parts.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&u32::try_from(key.len()).ok()?.to_le_bytes());
    out.extend_from_slice(&u32::try_from(index.len()).ok()?.to_le_bytes());
    out.extend_from_slice(&(total as u64).to_le_bytes());
    out.extend_from_slice(&key);
    out.extend_from_slice(&index);
    out.extend_from_slice(&parts);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::load_tree;
    use super::*;

    /// What a run reads of artifacts, in an order that does not depend on hash maps.
    fn fingerprint(found: &[Artifact], merged: Option<&LazyAbi>) -> String {
        let mut out = Vec::new();
        for a in found {
            out.push(format!(
                "{} {:?} {:?} {:?} {:?} {:?}",
                a.name,
                a.code,
                a.mask,
                a.storage_layout(),
                a.transient_layout(),
                a.declared()
            ));
            out.extend(a.abi().item_lines());
            if let Some(s) = a.sources() {
                out.push(format!("{:?} {:?}", s.runtime_map, s.creation));
                out.push(format!(
                    "{:?} {:?}",
                    s.metadata.as_deref().and_then(Metadata::value),
                    s.metadata.as_deref().map(Metadata::digest)
                ));
                let mut files: Vec<_> = s.unit.files.iter().collect();
                files.sort_by_key(|(id, _)| **id);
                for (id, f) in files {
                    out.push(format!(
                        "{id} {} {:?} {:?} {:?} {:?} {}",
                        f.path,
                        f.functions(),
                        f.enums(),
                        f.storage(),
                        f.text().map(str::len),
                        f.ast_unread
                    ));
                }
            }
        }
        if let Some(m) = merged {
            out.extend(m.get().item_lines());
        }
        out.join("\n")
    }

    /// Sets the mtime of `path` (a file or a directory) `secs` back.
    fn age(path: &Path, secs: u64) {
        let f = std::fs::File::open(path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }

    #[test]
    fn a_tree_kept_between_runs_reads_back_as_loaded_until_a_file_changes() {
        let root = std::env::temp_dir().join(format!("chaintrace-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (tree, cache) = (root.join("out"), root.join("cache"));
        std::fs::create_dir_all(&tree).unwrap();
        // A standard-JSON output (ABIs, maps, metadata, ASTs and storage layouts of an
        // OpenZeppelin ERC20), its sources beside it.
        let build = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contracts/oz");
        let file = tree.join("build.json");
        std::fs::copy(build.join("solc-output-state.json"), &file).unwrap();
        let fresh = load_tree(&tree).unwrap();
        let want = fingerprint(&fresh, merged_abi(&fresh).as_ref());
        assert!(fresh
            .iter()
            .any(|a| a.sources().is_some() && a.storage_layout().is_some()));

        // Just written: not kept (a rewrite in the same timestamp tick would look unchanged).
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);
        assert!(!cache.exists() || std::fs::read_dir(&cache).unwrap().next().is_none());

        // Settled: kept by the first run, read back by the next as it was loaded.
        age(&file, 60);
        age(&tree, 60);
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert!(!from_store(&got));
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);
        let kept: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1);
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert!(from_store(&got));
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);

        // A damaged store is not read: the tree is loaded again, and kept again.
        let stored = kept[0].path();
        let bytes = std::fs::read(&stored).unwrap();
        std::fs::write(&stored, &bytes[..bytes.len() / 2]).unwrap();
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);
        assert!(
            read(&stored, &tree, &program().unwrap()).is_some(),
            "stored again, whole"
        );

        // The file changes (another build, older than the store even): loaded anew.
        std::fs::copy(build.join("solc-output-fixed.json"), &file).unwrap();
        age(&file, 120);
        let other = load_tree(&tree).unwrap();
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        let changed = fingerprint(&got.artifacts, got.merged.as_ref());
        assert_eq!(changed, fingerprint(&other, merged_abi(&other).as_ref()));
        assert_ne!(changed, want);
        // A file added to the tree is seen too (its directory's mtime changed; the tree is
        // not walked while nothing did), in a directory of its own or beside others.
        let sub = tree.join("Extra.sol");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("Extra.json"), r#"{"abi": []}"#).unwrap();
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(got.artifacts.len(), other.len() + 1);
        for p in [sub.join("Extra.json"), sub.clone(), tree.clone()] {
            age(&p, 60);
        }
        load_tree_cached(&tree, Some(&cache)).unwrap();
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert!(from_store(&got));
        assert_eq!(got.artifacts.len(), other.len() + 1);
        std::fs::write(sub.join("More.json"), r#"{"abi": []}"#).unwrap();
        let got = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert!(!from_store(&got));
        assert_eq!(got.artifacts.len(), other.len() + 2);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_abi_file_kept_between_runs_reads_back_as_loaded_until_it_changes() {
        let root =
            std::env::temp_dir().join(format!("chaintrace-kept-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let cache = root.join("cache");
        std::fs::create_dir_all(&root).unwrap();
        let build = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contracts/oz");
        let file = root.join("build.json");
        std::fs::copy(build.join("solc-output-state.json"), &file).unwrap();
        age(&file, 60);
        let fresh = super::super::load_file(&file).unwrap();
        let want = fingerprint(&fresh, merged_abi(&fresh).as_ref());
        let got = load_file_cached(&file, Some(&cache)).unwrap();
        assert!(!from_store(&got));
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);
        let got = load_file_cached(&file, Some(&cache)).unwrap();
        assert!(from_store(&got));
        assert_eq!(fingerprint(&got.artifacts, got.merged.as_ref()), want);
        // Another build in its place, aged as the first: read anew.
        std::fs::copy(build.join("solc-output-fixed.json"), &file).unwrap();
        age(&file, 60);
        let other = super::super::load_file(&file).unwrap();
        let got = load_file_cached(&file, Some(&cache)).unwrap();
        assert!(!from_store(&got));
        assert_eq!(
            fingerprint(&got.artifacts, got.merged.as_ref()),
            fingerprint(&other, merged_abi(&other).as_ref())
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Whether `tree` was read from the store.
    fn from_store(tree: &Tree) -> bool {
        !tree.artifacts.is_empty()
            && tree
                .artifacts
                .iter()
                .all(|a| matches!(a.rest, Rest::Kept(_)))
    }
}
