//! A project's artifact tree (Foundry `out/`, Hardhat `artifacts/`): the project around a
//! directory found, its JSON files walked and read — each by [`load_file`](super::load_file) (its ABI read when first used), by one thread per
//! core — and Foundry's given their compilations ([`resolve_foundry_units`]).

use std::path::{Path, PathBuf};

use super::read::load_file_lazily;
use super::{resolve_foundry_units, Artifact};
use crate::names::NamesError;

/// Every artifact under `dir` (Foundry `out/`, Hardhat `artifacts/`): JSON files that hold an
/// ABI; build info, debug files and anything that is not an ABI are skipped.
pub fn load_tree(dir: &Path) -> Result<Vec<Artifact>, NamesError> {
    load_files_of(dir, &tree_files(dir)?)
}

/// The JSON files of the tree `dir`, in order: what [`load_tree`] reads.
pub(super) fn tree_files(dir: &Path) -> Result<Vec<PathBuf>, NamesError> {
    Ok(tree_listing(dir)?.0)
}

/// [`tree_files`], and the directories walked to find them (`dir` first).
pub(super) fn tree_listing(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), NamesError> {
    let (mut files, mut dirs) = (Vec::new(), vec![dir.to_path_buf()]);
    walk(dir, &mut files, &mut dirs, 0)?;
    files.sort();
    Ok((files, dirs))
}

/// The artifacts of `files` (the tree `dir`'s [`tree_files`]).
pub(super) fn load_files_of(dir: &Path, files: &[PathBuf]) -> Result<Vec<Artifact>, NamesError> {
    let mut out = Vec::new();
    let mut rel_paths = Vec::new();
    for (f, found) in files.iter().zip(load_files(files)) {
        if let Ok(found) = found {
            let rel = f
                .strip_prefix(dir)
                .unwrap_or(f)
                .to_string_lossy()
                .into_owned();
            rel_paths.extend(std::iter::repeat_n(rel, found.len()));
            out.extend(found);
        }
    }
    if out.iter().any(|a| a.pending.is_some()) {
        resolve_foundry_units(dir, &mut out, &rel_paths);
    }
    Ok(out)
}

/// [`load_file_lazily`] of each of `files`, in their order, read by [`by_threads`]: a project's
/// artifacts are many independent JSON files, most of their bytes ASTs, and reading them is
/// most of what naming costs a run (issue 44).
fn load_files(files: &[PathBuf]) -> Vec<Result<Vec<Artifact>, NamesError>> {
    by_threads(files, |f| load_file_lazily(f))
}

/// `work` of each of `items`, in their order, by as many threads as there are cores (at most
/// 8), each with the main thread's stack (a document is read as deep as serde_json lets it);
/// on this thread alone where there is one item, one core, or no thread to be had.
pub(super) fn by_threads<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(&work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut got: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(8 << 20)
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(item) = items.get(i) else { break mine };
                            mine.push((i, work(item)));
                        }
                    })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w {
                Ok(w) => w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                Err(_) => Vec::new(),
            })
            .collect()
    });
    // No thread to be had at all: the items none took are worked here.
    let taken = next.into_inner().min(items.len());
    for (i, item) in items.iter().enumerate().skip(taken) {
        got.push((i, work(item)));
    }
    got.sort_by_key(|(i, _)| *i);
    got.into_iter().map(|(_, r)| r).collect()
}

fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    dirs: &mut Vec<PathBuf>,
    depth: usize,
) -> Result<(), NamesError> {
    if depth > 12 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| NamesError::Read(dir.display().to_string(), e.to_string()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // The entry's type as the directory lists it (no stat), a link's by following it.
        let is_dir = match entry.file_type() {
            Ok(t) if !t.is_symlink() => t.is_dir(),
            _ => path.is_dir(),
        };
        if is_dir {
            if !matches!(
                name.as_str(),
                "build-info" | "cache" | "node_modules" | ".git"
            ) {
                walk(&path, files, dirs, depth + 1)?;
                dirs.push(path);
            }
        } else if name.ends_with(".json") && !name.ends_with(".dbg.json") {
            files.push(path);
        }
    }
    Ok(())
}

/// The artifact directory of the Foundry or Hardhat project containing `start`: `out/` next to
/// a `foundry.toml`, `artifacts/` next to a `hardhat.config.{js,ts,cjs,mjs}`, searching upwards.
pub fn find_project(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        if dir.join("foundry.toml").is_file() && dir.join("out").is_dir() {
            return Some(dir.join("out"));
        }
        let hardhat = ["js", "ts", "cjs", "mjs"]
            .iter()
            .any(|e| dir.join(format!("hardhat.config.{e}")).is_file());
        if hardhat && dir.join("artifacts").is_dir() {
            return Some(dir.join("artifacts"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_of_artifacts_nested_as_deep_as_json_allows_is_read_by_its_threads() {
        let dir = std::env::temp_dir().join(format!("chaintrace-deep-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("A.sol")).unwrap();
        // Each level of AST nodes is two of serde_json's 128 (an object, its `nodes` array).
        let nested = |levels: usize| {
            let mut ast = serde_json::json!({"nodeType": "ContractDefinition", "nodes": []});
            let mut deep = serde_json::json!(1);
            for _ in 0..levels {
                ast = serde_json::json!({"nodeType": "ContractDefinition", "nodes": [ast]});
                deep = serde_json::json!([deep]);
            }
            let ast = serde_json::json!({"nodeType": "SourceUnit", "absolutePath": "A.sol",
                "nodes": [ast]});
            serde_json::json!({"abi": [], "deep": deep, "ast": ast,
                "deployedBytecode": {"object": "0x6000", "sourceMap": "0:1:0"}})
        };
        for n in 0..4 {
            std::fs::write(dir.join(format!("A.sol/A{n}.json")), nested(60).to_string()).unwrap();
        }
        // Past the limit: that file is not an artifact, and nothing else is lost.
        std::fs::write(dir.join("A.sol/Deeper.json"), nested(70).to_string()).unwrap();
        let got = load_tree(&dir).unwrap();
        assert_eq!(got.len(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
