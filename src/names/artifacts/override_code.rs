//! Runtime code read from an artifact for `--code-override`: exactly as compiled, refusing
//! unlinked libraries; its immutables listed, to be copied from the code on chain.

use std::path::Path;

use alloy_primitives::hex;
use serde_json::Value;

use super::super::NamesError;
use super::immutables::{check_reads, immutables_of, Immutable};
use super::{artifact, Artifact};

/// Runtime code read from an artifact to run in place of a deployed contract's code
/// (`--code-override ADDR=ARTIFACT`), with the artifact (for its ABI and name).
#[derive(Clone, Debug)]
pub struct OverrideCode {
    /// The runtime code exactly as compiled (metadata included).
    pub code: Vec<u8>,
    pub artifact: Artifact,
    /// What the user should know about the code chosen (stderr notes).
    pub notes: Vec<String>,
    /// Its immutables (zeros in `code`): to be copied from the code on chain
    /// ([`super::fill_immutables`]) before it runs.
    pub immutables: Vec<Immutable>,
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
/// address is chosen at deployment). Immutables (Foundry's `immutableReferences`: their values
/// are written by the constructor, which a code override does not run, and the compiled code
/// holds zeros there) are listed for the caller to fill from the code on chain. Hardhat
/// artifacts do not list immutables; that is said in a note.
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
    let listed = immutables_of(immutables);
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
    check_reads(&code, &listed).map_err(|e| {
        bad(format!(
            "its runtime code reads immutables in a way that cannot be filled from the code \
             on chain: {e}"
        ))
    })?;
    let artifact = artifact(&name, &v)?;
    Ok(OverrideCode {
        code,
        artifact,
        notes,
        immutables: listed,
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
