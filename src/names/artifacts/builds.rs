//! Builds that carry source maps beyond the artifacts themselves: Foundry's `out/build-info/`
//! (chosen per artifact by `cache/solidity-files-cache.json`), Hardhat's `artifacts/build-info/`
//! (Hardhat 3's split in input and output), and Sourcify's answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::super::sources::{self, Unit};
use super::super::NamesError;
use super::{read_build, read_json, standard_json, Artifact};

/// The artifact of a Sourcify v2 contract answer (`/v2/contract/{chain}/{address}` with the
/// fields `abi`, `sources`, `sourceIds`, `compilation`, `runtimeBytecode`, `creationBytecode`,
/// as argotorg/sourcify's `apiv2.yaml` describes them): its ABI, code, and source maps into the
/// verified sources. `None` when the answer lacks the code or the compilation's name (an
/// answer with only the ABI).
pub fn from_sourcify(answer: &Value) -> Option<Artifact> {
    let name = answer.pointer("/compilation/name")?.as_str()?;
    let file = answer
        .pointer("/compilation/fullyQualifiedName")
        .and_then(Value::as_str)
        .and_then(|q| q.rsplit_once(':'))
        .map_or(name, |(file, _)| file);
    let code = |part: &Value| -> Option<Value> {
        let hex = part
            .get("recompiledBytecode")
            .or_else(|| part.get("onchainBytecode"))?
            .as_str()?;
        let mut out = serde_json::Map::new();
        out.insert("object".into(), hex.trim_start_matches("0x").into());
        for key in ["sourceMap", "linkReferences", "immutableReferences"] {
            if let Some(v) = part.get(key).filter(|v| !v.is_null()) {
                out.insert(key.into(), v.clone());
            }
        }
        Some(Value::Object(out))
    };
    let mut evm = serde_json::Map::new();
    evm.insert(
        "deployedBytecode".into(),
        code(answer.get("runtimeBytecode")?)?,
    );
    if let Some(c) = answer.get("creationBytecode").and_then(code) {
        evm.insert("bytecode".into(), c);
    }
    let mut contract = serde_json::json!({"abi": answer.get("abi")?, "evm": evm});
    // solc's own storageLayout of the verified compilation (null where Sourcify has none).
    if let Some(layout) = answer.get("storageLayout").filter(|l| l.is_object()) {
        contract["storageLayout"] = layout.clone();
    }
    let output = serde_json::json!({
        "sources": answer.get("sourceIds").cloned().unwrap_or_default(),
        "contracts": {file: {name: contract}},
    });
    // Sources only as the answer's own text: a path it names is never read from disk.
    standard_json(None, &output, answer.get("sources"), None)
        .ok()?
        .into_iter()
        .next()
}

/// The artifacts of a build info that holds the compiler's input and output (Hardhat's
/// `artifacts/build-info/*.json`; Hardhat 3's `*.output.json` beside its input file).
pub fn load_build_info(path: &Path) -> Result<Vec<Artifact>, NamesError> {
    let shown = path.display().to_string();
    let super::read::Build {
        value: v, mut asts, ..
    } = read_build(path, false)?;
    let Some(output) = v.get("output") else {
        return Ok(Vec::new());
    };
    let mut input = v.get("input").cloned();
    // Hardhat 3's input file also maps user source names to input source names.
    let mut user_names = None;
    if input.is_none() {
        // Hardhat 3: `<id>.output.json` beside `<id>.json` (the input).
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if let Some(id) = name.strip_suffix(".output.json") {
            if let Ok(file) = read_json(&path.with_file_name(format!("{id}.json"))) {
                input = file.get("input").cloned();
                user_names = file.get("userSourceNameMap").cloned();
            }
        }
    }
    // Hardhat 3 names sources `project/contracts/A.sol` (its input source names) and maps the
    // names users write (`contracts/A.sol`) to them: locations are shown in the users' names.
    let users = user_names
        .as_ref()
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(user, name)| Some((name.as_str()?.to_string(), user.clone())))
                .collect::<HashMap<String, String>>()
        })
        .filter(|m| !m.is_empty());
    let input_sources = input.as_ref().and_then(|i| i.get("sources"));
    match users {
        Some(users) => {
            let rename = |v: Option<&Value>| -> Option<Value> {
                let o = v?.as_object()?;
                Some(Value::Object(
                    o.iter()
                        .map(|(k, v)| (users.get(k).unwrap_or(k).clone(), v.clone()))
                        .collect(),
                ))
            };
            let mut output = output.clone();
            if let Some(renamed) = rename(output.get("sources")) {
                output["sources"] = renamed;
            }
            let mut asts = asts
                .into_iter()
                .map(|(k, a)| (users.get(&k).cloned().unwrap_or(k), a))
                .collect();
            let input = rename(input_sources);
            standard_json(Some(path), &output, input.as_ref(), Some(&mut asts))
        }
        None => standard_json(Some(path), output, input_sources, Some(&mut asts)),
    }
    .map_err(|e| NamesError::Abi(shown, e.to_string()))
}

/// Foundry's build infos under `dir/build-info/` (`{id, source_id_to_path}`) by build id,
/// with the file's modification time; build infos holding the compiler output (Hardhat) are
/// left to [`build_infos`].
fn foundry_builds(dir: &Path) -> HashMap<String, (Vec<(i32, String)>, std::time::SystemTime)> {
    let mut out = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir.join("build-info")) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let meta = e.metadata().ok();
        // Foundry's are small (ids and paths); Hardhat's hold whole compilations.
        if meta.as_ref().is_none_or(|m| m.len() > 4 << 20) {
            continue;
        }
        let Ok(v) = read_json(&path) else { continue };
        let Some(table) = v.get("source_id_to_path").and_then(Value::as_object) else {
            continue;
        };
        let id = v.get("id").and_then(Value::as_str).map_or_else(
            || {
                path.file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            },
            str::to_string,
        );
        let paths = table
            .iter()
            .filter_map(|(k, p)| Some((k.parse().ok()?, p.as_str()?.to_string())))
            .collect();
        let mtime = meta
            .and_then(|m| m.modified().ok())
            .unwrap_or(std::time::UNIX_EPOCH);
        out.insert(id, (paths, mtime));
    }
    out
}

/// Artifact path (relative to `out/`) → build id, from Foundry's
/// `cache/solidity-files-cache.json` (`files.*.artifacts.*.*.*: {path, build_id}`).
fn foundry_cache(project: &Path) -> HashMap<String, String> {
    fn walk_cache(v: &Value, out: &mut HashMap<String, String>) {
        match v {
            Value::Object(o) => {
                if let (Some(p), Some(b)) = (
                    o.get("path").and_then(Value::as_str),
                    o.get("build_id").and_then(Value::as_str),
                ) {
                    out.insert(p.to_string(), b.to_string());
                    return;
                }
                o.values().for_each(|x| walk_cache(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk_cache(x, out)),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    if let Ok(v) = read_json(&project.join("cache").join("solidity-files-cache.json")) {
        if let Some(files) = v.get("files") {
            walk_cache(files, &mut out);
        }
    }
    out
}

/// Gives Foundry artifacts their compilation: the build the cache names for the artifact, else
/// the newest build whose id table puts the artifact's own file at its id, else a table made of
/// the artifacts' own ids and files. Texts are read from the project (`out/`'s parent); each
/// file of a compilation gets the AST an artifact of that compilation carries for it (Foundry
/// writes one per artifact with `ast = true`): ids in one compilation's ASTs refer to each
/// other, so a contract's bases and namespaces are found across its files.
pub(super) fn resolve_foundry_units(dir: &Path, artifacts: &mut [Artifact], rel_paths: &[String]) {
    let project = dir.parent().unwrap_or(dir).to_path_buf();
    let mut roots = vec![project.clone()];
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    let builds = foundry_builds(dir);
    let cache = foundry_cache(&project);
    // Each source's hash at build time, from the artifacts' solc metadata: a file edited since
    // is not quoted.
    let mut hashes = sources::SourceHashes::default();
    for p in artifacts.iter().filter_map(|a| a.pending.as_ref()) {
        hashes.extend(p.source_hashes.iter().map(|(k, v)| (k.clone(), *v)));
    }
    // Each artifact's build (`None`: the fallback table), and the ASTs carried for each build.
    let build_of = |a: &Artifact, rel: &str| -> Option<String> {
        let p = a.pending.as_ref()?;
        if let Some(id) = cache.get(rel).filter(|id| builds.contains_key(*id)) {
            return Some(id.clone());
        }
        let (id, path) = (p.source_id? as i32, p.source_path.as_deref()?);
        builds
            .iter()
            .filter(|(_, (paths, _))| paths.iter().any(|(i, q)| *i == id && q == path))
            .max_by_key(|(_, (_, t))| *t)
            .map(|(k, _)| k.clone())
    };
    let keys: Vec<Option<String>> = artifacts
        .iter()
        .zip(rel_paths)
        .map(|(a, rel)| build_of(a, rel))
        .collect();
    let mut asts: HashMap<Option<String>, HashMap<String, sources::GivenAst>> = HashMap::new();
    for (a, key) in artifacts.iter_mut().zip(&keys) {
        let Some(p) = a.pending.as_mut() else {
            continue;
        };
        if let (Some(ast), Some(path)) = (p.ast.take(), p.source_path.clone()) {
            asts.entry(key.clone()).or_default().insert(path, ast);
        }
    }
    let own_ids: Vec<(i32, String)> = {
        let mut v: Vec<(i32, String)> = artifacts
            .iter()
            .filter_map(|a| a.pending.as_ref())
            .filter_map(|p| Some((p.source_id? as i32, p.source_path.clone()?)))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut units: HashMap<Option<String>, Arc<Unit>> = HashMap::new();
    for (a, key) in artifacts.iter_mut().zip(keys) {
        let Some(p) = a.pending.take() else { continue };
        let unit = units.entry(key).or_insert_with_key(|key| {
            let paths = match key {
                Some(id) => &builds[id].0,
                None => &own_ids,
            };
            let asts = asts.remove(key).unwrap_or_default();
            Arc::new(sources::unit_from_paths(paths, &roots, &hashes, asts))
        });
        a.set_sources(p.into_sources(unit.clone()));
    }
}

/// Build infos holding whole compilations (Hardhat's) under `dir/build-info/`: read only when
/// a failure is to be located ([`load_build_info`]).
pub fn build_infos(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("build-info")) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".json") && !name.ends_with(".dbg.json")
        })
        .filter(|p| {
            // Hardhat 3 splits input and output: the output file is the one to read.
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".output.json")
                || !p
                    .with_file_name(name.replace(".json", ".output.json"))
                    .is_file()
        })
        .collect();
    out.sort();
    out
}
