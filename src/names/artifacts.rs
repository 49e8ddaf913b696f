//! Compiler artifacts as name sources: JSON ABI files, Foundry `out/` and Hardhat `artifacts/`
//! trees, solc combined JSON; the project around the working directory found without flags; and
//! deployed code matched to artifacts by bytecode, ignoring the CBOR metadata tail and
//! immutables (and library placeholders).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use alloy_primitives::hex;
use serde_json::Value;

use super::NamesError;
use crate::render::abi::Abi;

/// Byte ranges (start, length) of runtime code to ignore when comparing.
type Ranges = Vec<(usize, usize)>;

/// One compiled contract.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// Contract name (file stem or the combined JSON key).
    pub name: String,
    pub abi: Arc<Abi>,
    /// Runtime code as compiled, metadata stripped, with its masked ranges (immutables, library
    /// addresses) zeroed; `None` when the artifact has no runtime code.
    code: Option<Vec<u8>>,
    /// Byte ranges to ignore when comparing; `None` means "unknown": zero bytes of the compiled
    /// code may differ (Hardhat artifacts do not list immutables).
    mask: Option<Ranges>,
    /// Foundry's `storageLayout`, when the artifact has one.
    pub storage_layout: Option<Value>,
}

impl Artifact {
    /// Whether `deployed` (code read from the chain) is this artifact's runtime code.
    pub fn matches(&self, deployed: &[u8]) -> bool {
        let Some(mine) = &self.code else {
            return false;
        };
        let theirs = strip_metadata(deployed);
        if mine.len() != theirs.len() || mine.is_empty() {
            return false;
        }
        mine.iter().zip(theirs).enumerate().all(|(i, (a, b))| {
            a == b
                || match &self.mask {
                    Some(ranges) => ranges.iter().any(|(s, l)| i >= *s && i < s + l),
                    None => *a == 0,
                }
        })
    }
}

/// The runtime code without solc's CBOR metadata: the last two bytes give its length, and the
/// metadata is a CBOR map (first byte 0xa1..=0xa5).
pub fn strip_metadata(code: &[u8]) -> &[u8] {
    let n = code.len();
    if n < 2 {
        return code;
    }
    let len = usize::from(u16::from_be_bytes([code[n - 2], code[n - 1]]));
    match n.checked_sub(len + 2) {
        Some(start) if (0xa1..=0xa5).contains(&code[start]) => &code[..start],
        _ => code,
    }
}

/// Hex code that may hold `__$…$__` library placeholders: bytes, with those 20-byte ranges
/// zeroed and returned as masked.
fn decode_code(hex_str: &str) -> Option<(Vec<u8>, Ranges)> {
    let s = hex_str.strip_prefix("0x").unwrap_or(hex_str);
    let mut clean = String::with_capacity(s.len());
    let mut masked = Vec::new();
    let mut rest = s;
    while let Some(at) = rest.find("__") {
        clean.push_str(&rest[..at]);
        if rest.len() < at + 40 {
            return None;
        }
        masked.push((clean.len() / 2, 20));
        clean.push_str(&"0".repeat(40));
        rest = &rest[at + 40..];
    }
    clean.push_str(rest);
    hex::decode(&clean).ok().map(|b| (b, masked))
}

/// Runtime code of an artifact object: Foundry `deployedBytecode.object` with
/// `immutableReferences`, Hardhat `deployedBytecode` (a string), solc's `bin-runtime`; a
/// top-level `immutableReferences` beside a string is used too.
fn runtime_code(v: &Value) -> (Option<Vec<u8>>, Option<Ranges>) {
    let (text, immutables) = match v.get("deployedBytecode").or_else(|| v.get("bin-runtime")) {
        // Combined outputs keep the references beside the code.
        Some(Value::String(s)) => (s.as_str(), v.get("immutableReferences")),
        Some(Value::Object(o)) => (
            o.get("object").and_then(Value::as_str).unwrap_or_default(),
            o.get("immutableReferences"),
        ),
        _ => return (None, None),
    };
    let Some((code, mut mask)) = decode_code(text) else {
        return (None, None);
    };
    if code.is_empty() {
        return (None, None);
    }
    let known = immutables.is_some();
    for refs in immutables
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_array)
        .flatten()
    {
        let start = refs.get("start").and_then(Value::as_u64);
        let len = refs.get("length").and_then(Value::as_u64);
        if let (Some(s), Some(l)) = (start, len) {
            mask.push((s as usize, l as usize));
        }
    }
    let stripped = strip_metadata(&code).to_vec();
    let mut code = stripped;
    for (s, l) in &mask {
        if let Some(r) = code.get_mut(*s..s + l) {
            r.fill(0);
        }
    }
    // Without immutable references (Hardhat) any zero byte may be an immutable's placeholder.
    (Some(code), known.then_some(mask))
}

fn artifact(name: &str, v: &Value) -> Result<Artifact, NamesError> {
    let abi = Abi::from_value(v).map_err(|e| NamesError::Abi(name.to_string(), e.to_string()))?;
    let (code, mask) = runtime_code(v);
    Ok(Artifact {
        name: name.to_string(),
        abi: Arc::new(abi),
        code,
        mask,
        storage_layout: v.get("storageLayout").filter(|s| s.is_object()).cloned(),
    })
}

/// The artifacts of one JSON file: a bare ABI, an artifact with `abi`, or a combined JSON
/// (`{"contracts": {name: artifact}}`).
pub fn load_file(path: &Path) -> Result<Vec<Artifact>, NamesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| NamesError::Abi(shown.clone(), format!("invalid JSON: {e}")))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if let Some(contracts) = v.get("contracts").and_then(Value::as_object) {
        if v.get("abi").is_none() {
            return contracts
                .iter()
                .map(|(name, a)| {
                    let short = name.rsplit(':').next().unwrap_or(name);
                    artifact(short, a).map_err(|e| NamesError::Abi(shown.clone(), e.to_string()))
                })
                .collect();
        }
    }
    Ok(vec![artifact(&stem, &v).map_err(|_| {
        let why = Abi::from_value(&v)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        NamesError::Abi(shown, why)
    })?])
}

/// Every artifact under `dir` (Foundry `out/`, Hardhat `artifacts/`): JSON files that hold an
/// ABI; build info, debug files and anything that is not an ABI are skipped.
pub fn load_tree(dir: &Path) -> Result<Vec<Artifact>, NamesError> {
    let mut files = Vec::new();
    walk(dir, &mut files, 0)?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        if let Ok(found) = load_file(&f) {
            out.extend(found);
        }
    }
    Ok(out)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>, depth: usize) -> Result<(), NamesError> {
    if depth > 12 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| NamesError::Read(dir.display().to_string(), e.to_string()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "build-info" | "cache" | "node_modules" | ".git"
            ) {
                walk(&path, files, depth + 1)?;
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

/// Runtime code read from an artifact to run in place of a deployed contract's code
/// (`--code-override ADDR=ARTIFACT`), with the artifact (for its ABI and name).
#[derive(Clone, Debug)]
pub struct OverrideCode {
    /// The runtime code exactly as compiled (metadata included).
    pub code: Vec<u8>,
    pub artifact: Artifact,
    /// What the user should know about the code chosen (stderr notes).
    pub notes: Vec<String>,
}

/// Library names of an artifact's link references (`{"file": {"Lib": [...]}}`).
fn link_names(refs: Option<&Value>) -> Vec<String> {
    let mut names: Vec<String> = refs
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|files| files.values())
        .filter_map(Value::as_object)
        .flat_map(|libs| libs.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The runtime code of the one contract in artifact file `path` (Foundry `out/…/X.json`, Hardhat
/// `artifacts/…/X.json`, or a solc combined JSON holding one contract), as it would run in place
/// of a deployed contract's code.
///
/// Refused, as bad input naming the way out, when the code cannot run as compiled: no runtime
/// code (an interface, a bare ABI); unlinked library placeholders (`__$…$__`: the library's
/// address is chosen at deployment); immutables (Foundry's `immutableReferences`: their values
/// are written by the constructor, which a code override does not run, and the compiled code
/// holds zeros there). Hardhat artifacts do not list immutables; that is said in a note.
pub fn override_code(path: &Path) -> Result<OverrideCode, NamesError> {
    let shown = path.display().to_string();
    let bad = |why: String| NamesError::Abi(shown.clone(), why);
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    let top: Value = serde_json::from_str(&text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let has_code =
        |v: &Value| runtime_text(v).is_some_and(|t| !t.trim_start_matches("0x").is_empty());
    let (name, v) = match top.get("contracts").and_then(Value::as_object) {
        Some(contracts) if top.get("abi").is_none() => {
            let with_code: Vec<(&String, &Value)> =
                contracts.iter().filter(|(_, c)| has_code(c)).collect();
            match with_code.as_slice() {
                [(n, c)] => (n.rsplit(':').next().unwrap_or(n).to_string(), (*c).clone()),
                [] => return Err(bad("no contract in it has runtime code".into())),
                many => {
                    let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
                    return Err(bad(format!(
                        "it holds {} contracts with runtime code ({}); give one contract's \
                         artifact",
                        names.len(),
                        names.join(", ")
                    )));
                }
            }
        }
        _ => (stem, top),
    };
    let hex_text = runtime_text(&v)
        .filter(|t| !t.trim_start_matches("0x").is_empty())
        .ok_or_else(|| {
            bad(
                "it has no runtime code (deployedBytecode): an interface, an abstract \
                 contract or a bare ABI cannot replace a contract's code"
                    .into(),
            )
        })?;
    if hex_text.contains("__") {
        let deployed = v.get("deployedBytecode");
        let mut libs = link_names(deployed.and_then(|d| d.get("linkReferences")));
        libs.extend(link_names(v.get("deployedLinkReferences")));
        libs.sort();
        libs.dedup();
        let which = if libs.is_empty() {
            String::new()
        } else {
            format!(" ({})", libs.join(", "))
        };
        return Err(bad(format!(
            "its runtime code calls libraries{which} whose addresses are placeholders until \
             linked; link them when building (forge build --libraries FILE:LIB:ADDRESS, or \
             Hardhat's `libraries`), or give the linked runtime code as 0xHEX"
        )));
    }
    let immutables = v
        .get("deployedBytecode")
        .and_then(|d| d.get("immutableReferences"))
        .or_else(|| v.get("immutableReferences"));
    let refs: Vec<u64> = immutables
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|r| r.get("start").and_then(Value::as_u64))
        .collect();
    if !refs.is_empty() {
        let n = immutables.and_then(Value::as_object).map_or(0, |o| o.len());
        let mut at = refs.clone();
        at.sort_unstable();
        let at: Vec<String> = at.iter().take(6).map(u64::to_string).collect();
        return Err(bad(format!(
            "its runtime code has {n} immutable variable(s) (read at byte offsets {}{}) whose \
             values its constructor writes; a code override does not run the constructor and \
             the compiled code holds zeros there. Give the runtime code with them filled as \
             0xHEX (e.g. `cast code ADDRESS` of the fixed build deployed on a fork)",
            at.join(", "),
            if refs.len() > 6 { ", …" } else { "" }
        )));
    }
    let code = hex::decode(hex_text.trim_start_matches("0x"))
        .map_err(|e| bad(format!("its runtime code is not hex: {e}")))?;
    let mut notes = Vec::new();
    if immutables.is_none()
        && v.get("_format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("hh-"))
    {
        notes.push(format!(
            "{shown} is a Hardhat artifact, which does not list immutables: if the contract has \
             any, they read as zero in the patched run"
        ));
    }
    let artifact = artifact(&name, &v)?;
    Ok(OverrideCode {
        code,
        artifact,
        notes,
    })
}

/// The hex text of an artifact object's runtime code, as [`runtime_code`] finds it.
fn runtime_text(v: &Value) -> Option<&str> {
    match v.get("deployedBytecode").or_else(|| v.get("bin-runtime")) {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("object").and_then(Value::as_str),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_and_masks() {
        // code, then a 3-byte "CBOR map" and its length.
        let code = [0x60, 0x01, 0xa1, 0x00, 0x01, 0x00, 0x03];
        assert_eq!(strip_metadata(&code), &[0x60, 0x01]);
        assert_eq!(strip_metadata(&[0x60, 0x01]), &[0x60, 0x01]);
        let (bytes, mask) = decode_code(&format!(
            "0x73{}60",
            "__$0123456789abcdef0123456789abcdef01$__"
        ))
        .unwrap();
        assert_eq!(bytes.len(), 22);
        assert_eq!(mask, vec![(1, 20)]);
    }

    #[test]
    fn matches_ignoring_immutables() {
        let v = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x6000600000",
            "immutableReferences": {"7": [{"start": 1, "length": 1}]}}});
        let a = artifact("A", &v).unwrap();
        assert!(a.matches(&[0x60, 0x42, 0x60, 0x00, 0x00]));
        assert!(!a.matches(&[0x60, 0x00, 0x60, 0x01, 0x00]));
        assert!(!a.matches(&[0x60, 0x00, 0x60, 0x00]));
        let hardhat = serde_json::json!({"abi": [], "deployedBytecode": "0x6000600000"});
        let h = artifact("H", &hardhat).unwrap();
        assert!(h.matches(&[0x60, 0x42, 0x60, 0x07, 0x00]));
        assert!(!h.matches(&[0x61, 0x00, 0x60, 0x00, 0x00]));
    }

    fn write(name: &str, v: &Value) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chaintrace-override-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn override_code_runs_only_code_that_needs_nothing_filled() {
        let foundry = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x600160005500",
            "linkReferences": {}, "immutableReferences": {}}});
        let got = override_code(&write("Fixed.json", &foundry)).unwrap();
        assert_eq!(got.code, vec![0x60, 0x01, 0x60, 0x00, 0x55, 0x00]);
        assert_eq!(got.artifact.name, "Fixed");
        assert!(got.notes.is_empty());

        let imm = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x7f".to_string() + &"00".repeat(32),
            "immutableReferences": {"12": [{"start": 1, "length": 32}]}}});
        let e = override_code(&write("Imm.json", &imm))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 immutable variable(s) (read at byte offsets 1)"),
            "{e}"
        );
        assert!(e.contains("0xHEX"), "{e}");

        let linked = serde_json::json!({"abi": [], "deployedBytecode": {"object":
            format!("0x73__$0123456789abcdef0123456789abcdef01$__60"),
            "linkReferences": {"src/L.sol": {"MathLib": [{"start": 1, "length": 20}]}}}});
        let e = override_code(&write("Linked.json", &linked))
            .unwrap_err()
            .to_string();
        assert!(e.contains("libraries (MathLib)"), "{e}");

        let hardhat = serde_json::json!({"_format": "hh-sol-artifact-1", "abi": [],
            "deployedBytecode": "0x6000", "deployedLinkReferences": {}});
        let got = override_code(&write("Hh.json", &hardhat)).unwrap();
        assert!(
            got.notes[0].contains("does not list immutables"),
            "{:?}",
            got.notes
        );

        let none = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x"}});
        let e = override_code(&write("I.json", &none))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no runtime code"), "{e}");
    }
}
