//! A source map that does not fit its code, rebuilt by the compiler that made the code.
//!
//! solc 0.7 (and 0.6) reports a wrong source map for a contract that another contract of the same
//! build creates with `new`: the creator's compilation optimizes the created contract's assembly
//! a second time, in place, after its bytecode was assembled, and the map is computed from the
//! twice-optimized items. Uniswap v3's pool, built with its factory, is such a contract: its map
//! has 48 entries fewer than its code has instructions, and 237 of its 250 function-jump markers
//! fall on instructions that are not JUMPs, so every line read from it is off (a `require` shown
//! at the next one). Compiled alone, the same contract gets the same bytecode and a map that fits.
//!
//! So a map that does not fit ([`super::map::misfit`]) is rebuilt the way Sourcify re-verifies a
//! contract: a standard-JSON input made from the artifact's own solc metadata (its sources,
//! checked against the metadata's keccak256 by [`super::SourceFile`], and its settings), with
//! only this contract selected, given to a solc of the metadata's exact version. The result is
//! used only when its bytecode is the artifact's and its map fits.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::ast::AstDecls;
use super::files::Unit;

/// How long one compilation may take (solc-js on a large contract takes a few seconds).
const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a map could not be rebuilt, in the user's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRebuilt(pub String);

/// The rebuilt maps of one contract.
#[derive(Debug, Clone)]
pub struct Rebuilt {
    pub runtime_map: Option<String>,
    pub creation_map: Option<String>,
    /// The rebuild's source ids by path: its maps' file indices (not the artifact's, whose
    /// compilation held other files).
    pub source_ids: Vec<(i32, String)>,
    /// The compiler used, for the note.
    pub solc: PathBuf,
    pub took: Duration,
}

/// The parts of solc's metadata a rebuild needs.
struct Metadata<'a> {
    version: &'a str,
    language: &'a str,
    target_file: &'a str,
    target_name: &'a str,
    settings: &'a Map<String, Value>,
    sources: &'a Map<String, Value>,
}

fn metadata(m: &Value) -> Result<Metadata<'_>, NotRebuilt> {
    let missing = |what: &str| NotRebuilt(format!("the artifact's solc metadata has no {what}"));
    let settings = m
        .get("settings")
        .and_then(Value::as_object)
        .ok_or_else(|| missing("settings"))?;
    let (target_file, target_name) = settings
        .get("compilationTarget")
        .and_then(Value::as_object)
        .and_then(|o| o.iter().next())
        .and_then(|(f, n)| Some((f.as_str(), n.as_str()?)))
        .ok_or_else(|| missing("compilationTarget"))?;
    Ok(Metadata {
        version: m
            .pointer("/compiler/version")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("compiler version"))?,
        language: m
            .get("language")
            .and_then(Value::as_str)
            .unwrap_or("Solidity"),
        target_file,
        target_name,
        settings,
        sources: m
            .get("sources")
            .and_then(Value::as_object)
            .ok_or_else(|| missing("sources"))?,
    })
}

/// The standard-JSON input that rebuilds the metadata's contract alone: the metadata's sources
/// (texts from `unit`, or the metadata's literal content) and settings, only that contract
/// selected (`ast` among `outputs` is a file's output: asked of every source).
fn input(m: &Metadata, unit: &Unit, outputs: &[&str]) -> Result<Value, NotRebuilt> {
    let mut sources = Map::new();
    for (path, s) in m.sources {
        let text = s
            .get("content")
            .and_then(Value::as_str)
            .or_else(|| {
                unit.files
                    .values()
                    .find(|f| &f.path == path)
                    .and_then(|f| f.text())
            })
            .ok_or_else(|| {
                NotRebuilt(format!(
                    "{path}, one of its sources, is not at hand with the text it was built from"
                ))
            })?;
        sources.insert(path.clone(), json!({ "content": text }));
    }
    let mut settings = m.settings.clone();
    settings.remove("compilationTarget");
    // The metadata lists libraries as "file:Name": address; the input nests them by file.
    if let Some(Value::Object(libs)) = settings.remove("libraries") {
        let mut nested: Map<String, Value> = Map::new();
        for (key, addr) in libs {
            let (file, name) = key.rsplit_once(':').unwrap_or(("", key.as_str()));
            let per_file = nested
                .entry(file.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(o) = per_file {
                o.insert(name.to_string(), addr);
            }
        }
        if !nested.is_empty() {
            settings.insert("libraries".into(), Value::Object(nested));
        }
    }
    let (per_file, per_contract): (Vec<&str>, Vec<&str>) =
        outputs.iter().partition(|o| **o == "ast");
    let mut selection = json!({ m.target_file: { m.target_name: per_contract } });
    if !per_file.is_empty() {
        selection["*"] = json!({ "": per_file });
    }
    settings.insert("outputSelection".into(), selection);
    Ok(json!({ "language": m.language, "sources": sources, "settings": settings }))
}

/// Where a solc of `version` (`0.7.6+commit.7338295f`) may be: `explicit` (`--solc`), then where
/// Foundry (`~/.svm/0.7.6/solc-0.7.6`) and Hardhat (its compiler cache) keep them, then `solc`
/// on `PATH`. Each candidate is asked its version; the first that reports `version` is taken.
pub fn find_solc(version: &str, explicit: Option<&Path>) -> Result<PathBuf, NotRebuilt> {
    let short = version.split('+').next().unwrap_or(version);
    if let Some(p) = explicit {
        return match solc_version(p) {
            Some(v) if v.starts_with(version) => Ok(p.to_path_buf()),
            Some(v) => Err(NotRebuilt(format!(
                "{} is solc {v}, the build used {version}",
                p.display()
            ))),
            None => Err(NotRebuilt(format!(
                "{} does not answer `--version` as solc does",
                p.display()
            ))),
        };
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cache")));
    let mut candidates = Vec::new();
    if let Some(h) = &home {
        candidates.push(h.join(".svm").join(short).join(format!("solc-{short}")));
    }
    if let Some(c) = &cache {
        candidates.push(
            c.join("hardhat-nodejs/compilers-v2/linux-amd64")
                .join(format!("solc-linux-amd64-v{version}")),
        );
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("solc")));
    }
    candidates
        .into_iter()
        .filter(|p| p.is_file())
        .find(|p| solc_version(p).is_some_and(|v| v.starts_with(version)))
        .ok_or_else(|| {
            NotRebuilt(format!(
                "no solc {short} was found (give --solc PATH, or install it where Foundry or \
                 Hardhat keep compilers)"
            ))
        })
}

/// The version a solc binary reports (`Version: 0.7.6+commit.7338295f.Linux.g++`).
fn solc_version(solc: &Path) -> Option<String> {
    let out = run(solc, &["--version"], None, Duration::from_secs(30)).ok()?;
    let text = String::from_utf8_lossy(&out);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Version: "))
        .map(str::to_string)
}

/// Runs `cmd args` with `stdin` written to it, and returns its stdout; killed at `timeout`.
fn run(
    cmd: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cmd.display()))?;
    let mut child_in = child.stdin.take();
    let input = stdin.map(<[u8]>::to_vec).unwrap_or_default();
    let writer = std::thread::spawn(move || {
        if let Some(w) = child_in.as_mut() {
            let _ = w.write_all(&input);
        }
    });
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(r) = out.as_mut() {
            let _ = r.read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} took longer than {} s",
                    cmd.display(),
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("{}: {e}", cmd.display())),
        }
    };
    let _ = writer.join();
    let buf = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{} exited with {status}", cmd.display()));
    }
    Ok(buf)
}

/// Rebuilds the maps of the contract `metadata` names, with `solc`. `fits` says whether a
/// rebuilt (runtime or creation) object and map are the code in question.
pub fn rebuild(
    metadata_value: &Value,
    unit: &Unit,
    explicit_solc: Option<&Path>,
    fits: &dyn Fn(&str, &str, bool) -> bool,
) -> Result<Rebuilt, NotRebuilt> {
    let m = metadata(metadata_value)?;
    let solc = find_solc(m.version, explicit_solc)?;
    let start = Instant::now();
    let outputs = [
        "evm.bytecode.object",
        "evm.bytecode.sourceMap",
        "evm.deployedBytecode.object",
        "evm.deployedBytecode.sourceMap",
    ];
    let out = compile(&m, unit, &solc, &outputs)?;
    let evm = contract(&out, &m)?
        .get("evm")
        .ok_or_else(|| NotRebuilt("solc's output lacks the contract's code".into()))?;
    let part = |key: &str, creation: bool| -> Option<String> {
        let b = evm.get(key)?;
        let object = b.get("object")?.as_str()?;
        let map = b.get("sourceMap")?.as_str()?;
        fits(object, map, creation).then(|| map.to_string())
    };
    let runtime_map = part("deployedBytecode", false);
    let creation_map = part("bytecode", true);
    if runtime_map.is_none() && creation_map.is_none() {
        return Err(NotRebuilt(format!(
            "solc {} rebuilt other code than the artifact's",
            m.version
        )));
    }
    let source_ids = out
        .get("sources")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(path, s)| Some((s.get("id")?.as_i64()? as i32, path.clone())))
        .collect();
    Ok(Rebuilt {
        runtime_map,
        creation_map,
        source_ids,
        solc,
        took: start.elapsed(),
    })
}

/// The standard-JSON output of compiling the metadata's contract alone for `outputs`; solc's
/// first error refuses it.
fn compile(m: &Metadata, unit: &Unit, solc: &Path, outputs: &[&str]) -> Result<Value, NotRebuilt> {
    let input = input(m, unit, outputs)?;
    let text = serde_json::to_vec(&input).map_err(|e| NotRebuilt(e.to_string()))?;
    let out = run(solc, &["--standard-json"], Some(&text), COMPILE_TIMEOUT).map_err(NotRebuilt)?;
    let out: Value = serde_json::from_slice(&out)
        .map_err(|e| NotRebuilt(format!("{} answered no JSON: {e}", solc.display())))?;
    if let Some(err) = out
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|e| e.get("severity").and_then(Value::as_str) == Some("error"))
    {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("an error");
        return Err(NotRebuilt(format!("solc refused the rebuild: {msg}")));
    }
    Ok(out)
}

/// The metadata's contract in a standard-JSON output.
fn contract<'o>(out: &'o Value, m: &Metadata) -> Result<&'o Value, NotRebuilt> {
    out.pointer(&format!(
        "/contracts/{}/{}",
        m.target_file.replace('~', "~0").replace('/', "~1"),
        m.target_name.replace('~', "~0").replace('/', "~1")
    ))
    .ok_or_else(|| NotRebuilt("solc's output lacks the contract".into()))
}

/// A contract's storage layouts, compiled from its solc metadata.
#[derive(Debug, Clone)]
pub struct RebuiltLayout {
    pub storage: Option<Value>,
    /// solc 0.8.27 and later: its `transient` state variables.
    pub transient: Option<Value>,
    /// Each source's AST declarations, by path.
    pub asts: Vec<(String, AstDecls)>,
    pub solc: PathBuf,
    pub took: Duration,
}

/// Whether a solc version (`0.8.30+commit…`) is at least `min` (major, minor, patch).
fn at_least(version: &str, min: (u32, u32, u32)) -> bool {
    let core = version.split(['+', '-']).next().unwrap_or_default();
    let mut it = core.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let v = (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    );
    v >= min
}

/// The storage layout (and, from solc 0.8.27, the transient storage layout) of the contract
/// `metadata` names, compiled by a solc of its version from its own sources and settings (the
/// same compiler search as a rebuilt map): what a build without `storageLayout` in its output
/// (Foundry's default artifacts) is named by. Only analysis is asked of solc, no code.
pub fn rebuild_layout(
    metadata_value: &Value,
    unit: &Unit,
    explicit_solc: Option<&Path>,
) -> Result<RebuiltLayout, NotRebuilt> {
    let m = metadata(metadata_value)?;
    if !at_least(m.version, (0, 5, 13)) {
        return Err(NotRebuilt(format!(
            "solc {} reports no storageLayout (0.5.13 and later do)",
            m.version
        )));
    }
    let solc = find_solc(m.version, explicit_solc)?;
    let start = Instant::now();
    // Every source's AST too: the ERC-7201 namespaces of the contract's bases are laid out
    // from them (`@custom:storage-location`, which solc's storageLayout leaves out).
    let mut outputs = vec!["storageLayout", "ast"];
    if at_least(m.version, (0, 8, 27)) {
        outputs.push("transientStorageLayout");
    }
    let out = compile(&m, unit, &solc, &outputs)?;
    let c = contract(&out, &m)?;
    let layout = |key: &str| c.get(key).filter(|l| l.is_object()).cloned();
    let storage = layout("storageLayout");
    if storage.is_none() {
        return Err(NotRebuilt(format!(
            "{} gave no storageLayout",
            solc.display()
        )));
    }
    let asts = out
        .get("sources")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(path, s)| Some((path.clone(), AstDecls::from_value(s.get("ast")?)?)))
        .collect();
    Ok(RebuiltLayout {
        storage,
        transient: layout("transientStorageLayout"),
        asts,
        solc,
        took: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_nested_and_only_the_target_is_selected() {
        let meta = json!({
            "compiler": {"version": "0.7.6+commit.7338295f"},
            "language": "Solidity",
            "settings": {
                "compilationTarget": {"src/A.sol": "A"},
                "libraries": {"src/L.sol:L": "0x00000000000000000000000000000000000000aa"},
                "optimizer": {"enabled": true, "runs": 800},
                "evmVersion": "istanbul",
                "metadata": {"bytecodeHash": "none"},
                "remappings": []
            },
            "sources": {"src/A.sol": {"keccak256": "0x00", "content": "contract A {}"}}
        });
        let m = metadata(&meta).unwrap();
        let i = input(&m, &Unit::default(), &["storageLayout"]).unwrap();
        assert_eq!(
            i["settings"]["libraries"],
            json!({"src/L.sol": {"L": "0x00000000000000000000000000000000000000aa"}})
        );
        assert!(i["settings"].get("compilationTarget").is_none());
        assert_eq!(
            i["settings"]["outputSelection"],
            json!({"src/A.sol": {"A": ["storageLayout"]}})
        );
        let i = input(&m, &Unit::default(), &["storageLayout", "ast"]).unwrap();
        assert_eq!(
            i["settings"]["outputSelection"],
            json!({"src/A.sol": {"A": ["storageLayout"]}, "*": {"": ["ast"]}})
        );
        assert_eq!(i["sources"]["src/A.sol"]["content"], "contract A {}");
        assert_eq!(i["settings"]["optimizer"]["runs"], 800);
    }

    #[test]
    fn a_source_not_at_hand_is_named() {
        let meta = json!({
            "compiler": {"version": "0.8.30"},
            "settings": {"compilationTarget": {"src/A.sol": "A"}},
            "sources": {"src/A.sol": {"keccak256": "0x00"}}
        });
        let m = metadata(&meta).unwrap();
        let e = input(&m, &Unit::default(), &[]).unwrap_err();
        assert!(e.0.contains("src/A.sol"), "{e:?}");
    }

    #[test]
    fn layouts_are_asked_of_the_versions_that_report_them() {
        assert!(at_least("0.8.30+commit.73712a01", (0, 8, 27)));
        assert!(!at_least("0.8.26+commit.8a97fa7a", (0, 8, 27)));
        assert!(at_least("0.5.13", (0, 5, 13)));
        assert!(!at_least("0.4.26+commit.4563c3fc", (0, 5, 13)));
        let old = json!({"compiler": {"version": "0.5.12+commit.7709ece9"},
            "settings": {"compilationTarget": {"A.sol": "A"}}, "sources": {}});
        let e = rebuild_layout(&old, &Unit::default(), None).unwrap_err();
        assert!(e.0.contains("reports no storageLayout"), "{e:?}");
    }

    #[test]
    fn a_solc_of_another_version_is_refused_by_name() {
        // `true` answers nothing: not a solc.
        let e = find_solc("0.7.6+commit.7338295f", Some(Path::new("/bin/true"))).unwrap_err();
        assert!(e.0.contains("does not answer"), "{e:?}");
    }
}
