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
}
