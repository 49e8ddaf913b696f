//! A project's artifacts kept between runs (issue 44): what [`load_tree`](super::load_tree) loaded from a Foundry
//! or Hardhat tree is stored under the cache directory (`names/`, MessagePack) and used again
//! while none of the files it was loaded from changed. Reading a forge project's 42 artifacts
//! (3 MiB of JSON, most of it ASTs) took more CPU than the whole rest of a `tx`; the stored
//! form is read in a fraction of that.
//!
//! Kept by: this program (its version, size and mtime), the tree's directory, the working
//! directory (relative source paths are also looked for there), and every file the loading
//! reads — the tree's JSON files, Foundry's `out/build-info/` and
//! `cache/solidity-files-cache.json` — by path, length and mtime. A tree that changed in the
//! last two seconds is not stored: a file rewritten within the file system's timestamp
//! granularity, at the same length, would look unchanged. What is read on first need (source
//! texts, parsed metadata, decoded maps) is not stored; it is read as on a first run.
//!
//! Anything unreadable, of another format or from another key is ignored and the tree loaded
//! again; a store that fails is silent (the run's names do not depend on it).
//!
//! The encoding is MessagePack in field order (no field names): every stored type writes all
//! its fields, always ([`crate::render::abi`] keeps its items in a shape of its own for this).
//! With the tree's artifacts goes their ABIs' merge, which costs as much to make again as the
//! artifacts do to read.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use alloy_primitives::{keccak256, Bytes};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tree::{load_files_of, tree_files};
use super::{merged_abi, Artifact, Ranges};
use crate::names::sources::{ArtifactSources, Metadata, StoredMetadata, Unit};
use crate::names::NamesError;
use crate::render::abi::Abi;

/// The stored form's version: a change to any stored type changes it.
const FORMAT: u32 = 3;

/// How long a tree must have been unchanged to be stored.
const SETTLED: Duration = Duration::from_secs(2);

/// What a stored tree was loaded from.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Key {
    format: u32,
    /// This program: version, and its executable's length and mtime (a rebuilt binary of the
    /// same version may read artifacts otherwise).
    program: (String, u64, u128),
    dir: PathBuf,
    cwd: Option<PathBuf>,
    /// Every file the loading reads: path, length, mtime in nanoseconds.
    files: Vec<(PathBuf, u64, u128)>,
}

/// One artifact as stored: its compilation by index into [`Stored::units`].
#[derive(Serialize, Deserialize)]
struct StoredArtifact {
    name: String,
    /// Its ABI's own stored form, read back when first asked for.
    abi: Bytes,
    code: Option<Bytes>,
    mask: Option<Ranges>,
    storage_layout: Option<Value>,
    transient_layout: Option<Value>,
    sources: Option<StoredSources>,
}

#[derive(Serialize, Deserialize)]
struct StoredSources {
    runtime_map: Option<String>,
    creation: Option<(Bytes, Ranges, String)>,
    unit: usize,
    metadata: Option<StoredMetadata>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    units: Vec<Arc<Unit>>,
    artifacts: Vec<StoredArtifact>,
    merged: Option<Abi>,
}

/// [`load_tree`](super::load_tree) of `dir` and its ABIs merged ([`merged_abi`]), from the
/// store in `cache` (a directory) when it holds this tree as it is now; else loaded, and stored
/// there for the next run.
pub fn load_tree_cached(
    dir: &Path,
    cache: Option<&Path>,
) -> Result<(Vec<Artifact>, Option<Abi>), NamesError> {
    let files = tree_files(dir)?;
    let key = cache.and_then(|_| key_of(dir, &files));
    let path = cache.zip(key.as_ref()).map(|(c, k)| {
        let id = keccak256(format!("{}\n{:?}", k.dir.display(), k.cwd).as_bytes());
        c.join(format!(
            "{}.msgpack",
            alloy_primitives::hex::encode(&id[..16])
        ))
    });
    if let (Some(path), Some(key)) = (&path, &key) {
        if let Some(found) = read(path, key) {
            return Ok(found);
        }
    }
    let found = load_files_of(dir, &files)?;
    let merged = merged_abi(&found);
    if let (Some(path), Some(key)) = (&path, &key) {
        if settled(key) {
            store(path, key, &found, merged.as_ref());
        }
    }
    Ok((found, merged))
}

/// The key of `dir` as it is now; `None` when a file cannot be looked at.
fn key_of(dir: &Path, files: &[PathBuf]) -> Option<Key> {
    fn stat(p: &Path) -> Option<(PathBuf, u64, u128)> {
        let m = std::fs::metadata(p).ok()?;
        let mtime = m
            .modified()
            .ok()?
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()?;
        Some((p.to_path_buf(), m.len(), mtime.as_nanos()))
    }
    let exe = std::env::current_exe().ok().and_then(|e| stat(&e))?;
    let mut all: Vec<PathBuf> = files.to_vec();
    if let Ok(entries) = std::fs::read_dir(dir.join("build-info")) {
        let mut infos: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        infos.sort();
        all.extend(infos);
    }
    let foundry_cache = dir
        .parent()
        .unwrap_or(dir)
        .join("cache/solidity-files-cache.json");
    let mut stats: Vec<(PathBuf, u64, u128)> =
        all.iter().map(|f| stat(f)).collect::<Option<_>>()?;
    // Absent is a state too: (path, 0, 0).
    stats.push(stat(&foundry_cache).unwrap_or((foundry_cache, 0, 0)));
    Some(Key {
        format: FORMAT,
        program: (env!("CARGO_PKG_VERSION").to_string(), exe.1, exe.2),
        dir: dir.to_path_buf(),
        cwd: std::env::current_dir().ok(),
        files: stats,
    })
}

/// Whether no file of `key` changed within the last [`SETTLED`].
fn settled(key: &Key) -> bool {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    key.files
        .iter()
        .all(|(_, _, mtime)| now.saturating_sub(*mtime) >= SETTLED.as_nanos())
}

/// The stored artifacts of `key`, when `path` holds them.
fn read(path: &Path, key: &Key) -> Option<(Vec<Artifact>, Option<Abi>)> {
    let bytes = std::fs::read(path).ok()?;
    let mut de = rmp_serde::Deserializer::from_read_ref(&bytes);
    let stored_key = Key::deserialize(&mut de).ok()?;
    if &stored_key != key {
        return None;
    }
    let stored = Stored::deserialize(&mut de).ok()?;
    let artifacts = stored
        .artifacts
        .into_iter()
        .map(|a| {
            let sources = match a.sources {
                Some(s) => Some(Arc::new(ArtifactSources {
                    runtime_map: s.runtime_map,
                    creation: s.creation.map(|(c, m, map)| (c.to_vec(), m, map)),
                    unit: stored.units.get(s.unit)?.clone(),
                    metadata: s.metadata.map(|m| Arc::new(Metadata::from_stored(m))),
                })),
                None => None,
            };
            Some(Artifact {
                name: a.name,
                abi: super::LazyAbi {
                    abi: Default::default(),
                    stored: Some(a.abi),
                },
                code: a.code.map(|c| c.to_vec()),
                mask: a.mask,
                storage_layout: a.storage_layout,
                transient_layout: a.transient_layout,
                sources,
                pending: None,
            })
        })
        .collect::<Option<Vec<Artifact>>>()?;
    Some((artifacts, stored.merged))
}

/// Stores `found` as `key`'s, replacing what `path` held, whole or not at all.
fn store(path: &Path, key: &Key, found: &[Artifact], merged: Option<&Abi>) {
    let mut units: Vec<Arc<Unit>> = Vec::new();
    let mut artifacts = Vec::with_capacity(found.len());
    for a in found {
        if a.pending.is_some() {
            return;
        }
        let sources = a.sources.as_ref().map(|s| {
            let unit = match units.iter().position(|u| Arc::ptr_eq(u, &s.unit)) {
                Some(i) => i,
                None => {
                    units.push(s.unit.clone());
                    units.len() - 1
                }
            };
            StoredSources {
                runtime_map: s.runtime_map.clone(),
                creation: s
                    .creation
                    .as_ref()
                    .map(|(c, m, map)| (Bytes::copy_from_slice(c), m.clone(), map.clone())),
                unit,
                metadata: s.metadata.as_ref().map(|m| m.stored()),
            }
        });
        let Some(abi) = a.abi.stored() else { return };
        artifacts.push(StoredArtifact {
            name: a.name.clone(),
            abi,
            code: a.code.as_deref().map(Bytes::copy_from_slice),
            mask: a.mask.clone(),
            storage_layout: a.storage_layout.clone(),
            transient_layout: a.transient_layout.clone(),
            sources,
        });
    }
    let stored = Stored {
        units,
        artifacts,
        merged: merged.cloned(),
    };
    let mut bytes = Vec::new();
    if rmp_serde::encode::write(&mut bytes, key).is_err()
        || rmp_serde::encode::write(&mut bytes, &stored).is_err()
    {
        return;
    }
    let _ = crate::source::cache::write_atomic(path, &bytes);
}

#[cfg(test)]
mod tests {
    use super::super::load_tree;
    use super::*;

    /// What a run reads of artifacts, in an order that does not depend on hash maps.
    fn fingerprint(found: &[Artifact], merged: Option<&Abi>) -> String {
        let mut out = Vec::new();
        for a in found {
            out.push(format!(
                "{} {:?} {:?} {:?} {:?}",
                a.name, a.code, a.mask, a.storage_layout, a.transient_layout
            ));
            out.extend(a.abi().item_lines());
            if let Some(s) = &a.sources {
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
                        f.enums,
                        f.storage,
                        f.text().map(str::len),
                        f.ast_unread
                    ));
                }
            }
        }
        if let Some(m) = merged {
            out.extend(m.item_lines());
        }
        out.join("\n")
    }

    fn age(path: &Path, secs: u64) {
        let f = std::fs::File::options().write(true).open(path).unwrap();
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
            .any(|a| a.sources.is_some() && a.storage_layout.is_some()));

        // Just written: not kept (a rewrite in the same timestamp tick would look unchanged).
        let (got, merged) = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got, merged.as_ref()), want);
        assert!(!cache.exists() || std::fs::read_dir(&cache).unwrap().next().is_none());

        // Settled: kept by the first run, read back by the next as it was loaded.
        age(&file, 60);
        let (got, merged) = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got, merged.as_ref()), want);
        let kept: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1);
        let (got, merged) = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got, merged.as_ref()), want);

        // A damaged store is not read: the tree is loaded again, and kept again.
        let stored = kept[0].path();
        let bytes = std::fs::read(&stored).unwrap();
        std::fs::write(&stored, &bytes[..bytes.len() / 2]).unwrap();
        let (got, merged) = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(fingerprint(&got, merged.as_ref()), want);
        let key = key_of(&tree, &tree_files(&tree).unwrap()).unwrap();
        assert!(read(&stored, &key).is_some(), "stored again, whole");

        // The file changes (another build, older than the store even): loaded anew.
        std::fs::copy(build.join("solc-output-fixed.json"), &file).unwrap();
        age(&file, 120);
        let other = load_tree(&tree).unwrap();
        let (got, merged) = load_tree_cached(&tree, Some(&cache)).unwrap();
        let changed = fingerprint(&got, merged.as_ref());
        assert_eq!(changed, fingerprint(&other, merged_abi(&other).as_ref()));
        assert_ne!(changed, want);
        // A file added to the tree is seen too.
        std::fs::write(tree.join("Extra.json"), r#"{"abi": []}"#).unwrap();
        let (got, _) = load_tree_cached(&tree, Some(&cache)).unwrap();
        assert_eq!(got.len(), other.len() + 1);
        let _ = std::fs::remove_dir_all(&root);
    }
}
