//! What naming a contract's storage needs beyond the layouts its artifact declares (solc's
//! `storageLayout` and `transientStorageLayout`): the ERC-7201 namespaces of its bases and the
//! enums its layouts name, both found in its compilation's ASTs. Worked out once from the
//! artifact as read, and kept with it between runs ([`super::cached`]), so that a run naming a
//! contract's slots reads neither its compilation's files nor their ASTs — for a forge
//! project, one compilation of every source, the largest part a run would otherwise read back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::ast_layout::AstStorage;
use crate::names::namespaces::added_namespaces;
use crate::names::sources::{ArtifactSources, SourceFile};

/// An artifact's declared layouts, made ready to name storage with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Declared {
    /// The storage layout with the ERC-7201 namespaces of the contract's linearized bases
    /// added, when there are any (else the declared layout is used as it is).
    pub namespaced: Option<Value>,
    /// Each namespace left out, and why (its slots are shown raw).
    pub left_out: Vec<String>,
    /// The enums the layouts' types name (canonical name, members in order), in the order of
    /// the compilation's files.
    pub enums: Vec<(String, Vec<String>)>,
}

impl Declared {
    /// Of the contract `name`, whose artifact declares `storage` and `transient`, compiled in
    /// the compilation `sources` points into (none: no namespace is found, no enum named).
    pub fn of(
        name: &str,
        storage: Option<&Value>,
        transient: Option<&Value>,
        sources: Option<&ArtifactSources>,
    ) -> Declared {
        let files = compilation(sources);
        fn asts<'a>(files: &[&'a SourceFile]) -> Vec<(&'a str, &'a AstStorage)> {
            files
                .iter()
                .map(|f| (f.path.as_str(), f.storage()))
                .collect()
        }
        // Read first from the contract's own file and the files that may declare a namespace
        // (an AST kept as text is read only where it mentions one,
        // [`SourceFile::may_declare_namespace`]); that is the answer when it laid every
        // namespace out. A namespace whose types another file declares fails there and is
        // worked out again from every file. Without its file's path (no metadata, or a path the
        // compilation does not have), the own file is any that mentions the contract's name.
        let target = sources
            .and_then(|s| s.metadata.as_deref()?.target())
            .filter(|t| files.iter().any(|f| f.path == *t));
        let own = format!("\"name\":\"{name}\"");
        let few: Vec<&SourceFile> = files
            .iter()
            .filter(|f| {
                f.may_declare_namespace()
                    || target.map_or_else(|| f.may_mention(&own), |t| f.path == t)
            })
            .copied()
            .collect();
        let (namespaced, left_out) = match added_namespaces(storage, name, &asts(&few)) {
            (got, why) if why.is_empty() => (got, why),
            _ => added_namespaces(storage, name, &asts(&files)),
        };
        let named = enum_labels([namespaced.as_ref().or(storage), transient]);
        let defined: Vec<String> = named
            .iter()
            .map(|n| format!("\"canonicalName\":\"{n}\""))
            .collect();
        let enums = files
            .iter()
            .filter(|f| defined.iter().any(|d| f.may_mention(d)))
            .flat_map(|f| f.enums().iter())
            .filter(|(canonical, _)| named.contains(&canonical.as_str()))
            .cloned()
            .collect();
        Declared {
            namespaced,
            left_out,
            enums,
        }
    }
}

/// The files of the compilation `sources` points into that the contract's own compilation read:
/// those its metadata lists (its file and every import, closed), where the compilation has them
/// all by the same paths; else all of them. A forge project is one compilation of every source,
/// and a contract's declarations can only come from the files it imports.
fn compilation(sources: Option<&ArtifactSources>) -> Vec<&SourceFile> {
    let Some(s) = sources else {
        return Vec::new();
    };
    let all = s.unit.files_in_order();
    let listed = s.metadata.as_deref().map(|m| m.source_hashes());
    match listed {
        Some(listed) if !listed.is_empty() => {
            let of: Vec<&SourceFile> = all
                .iter()
                .filter(|f| listed.contains_key(&f.path))
                .copied()
                .collect();
            if of.len() == listed.len() {
                of
            } else {
                all
            }
        }
        _ => all,
    }
}

/// The canonical names of the enums whose type `layouts` list (`"label": "enum Vault.Kind"`).
fn enum_labels<const N: usize>(layouts: [Option<&Value>; N]) -> Vec<&str> {
    layouts
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("types")?.as_object())
        .flat_map(|types| types.values())
        .filter_map(|t| t.get("label")?.as_str()?.strip_prefix("enum "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_contract_is_laid_out_from_the_files_its_own_compilation_read() {
        use crate::names::sources::{unit_from_paths, Metadata, SourceHashes};
        use std::sync::Arc;
        let paths: Vec<(i32, String)> = ["src/V.sol", "src/Base.sol", "other/V.sol"]
            .iter()
            .enumerate()
            .map(|(i, p)| (i as i32, p.to_string()))
            .collect();
        let unit = Arc::new(unit_from_paths(
            &paths,
            &[],
            &SourceHashes::default(),
            Default::default(),
        ));
        let hash = format!("0x{}", "11".repeat(32));
        let metadata = |listed: &[&str]| {
            let sources: serde_json::Map<String, Value> = listed
                .iter()
                .map(|p| (p.to_string(), json!({ "keccak256": hash })))
                .collect();
            let text = json!({"sources": sources,
                "settings": {"compilationTarget": {"src/V.sol": "V"}}})
            .to_string();
            Metadata::of(&Value::String(text)).map(Arc::new)
        };
        let sources = |metadata: Option<Arc<Metadata>>| ArtifactSources {
            runtime_map: None,
            creation: None,
            unit: unit.clone(),
            metadata,
        };
        let paths_of = |s: &ArtifactSources| -> Vec<String> {
            compilation(Some(s))
                .iter()
                .map(|f| f.path.clone())
                .collect()
        };
        // Its metadata's sources: the other `V.sol` is not among them.
        let own = sources(metadata(&["src/V.sol", "src/Base.sol"]));
        assert_eq!(paths_of(&own), ["src/V.sol", "src/Base.sol"]);
        // A source the compilation does not have by that path, or no metadata: every file.
        let all = ["src/V.sol", "src/Base.sol", "other/V.sol"];
        assert_eq!(
            paths_of(&sources(metadata(&["src/V.sol", "lib/X.sol"]))),
            all
        );
        assert_eq!(paths_of(&sources(None)), all);
        assert!(compilation(None).is_empty());
    }

    #[test]
    fn enum_labels_are_the_types_enums() {
        let storage = json!({"storage": [], "types": {
            "t_enum(Kind)12": {"label": "enum Vault.Kind", "encoding": "inplace"},
            "t_uint256": {"label": "uint256"},
        }});
        let transient = json!({"storage": [], "types": {
            "t_enum(Lock)3": {"label": "enum Guard.Lock"},
        }});
        assert_eq!(
            enum_labels([Some(&storage), Some(&transient)]),
            vec!["Vault.Kind", "Guard.Lock"]
        );
        assert!(enum_labels([None, Some(&json!({"storage": []}))]).is_empty());
    }
}
