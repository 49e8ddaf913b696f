//! Compiler artifacts as name sources: JSON ABI files, Foundry `out/` and Hardhat `artifacts/`
//! trees, solc combined JSON and standard-JSON output; the project around the working directory
//! found without flags; and deployed code matched to artifacts by bytecode, ignoring the CBOR
//! metadata tail and immutables (and library placeholders).
//!
//! Source maps come along where the artifacts have them ([`super::sources`]): Foundry artifacts
//! with the ids of `out/build-info/` (the build chosen by `cache/solidity-files-cache.json`),
//! standard-JSON output (`sources` ids and ASTs) and Hardhat's `artifacts/build-info/` (input
//! and output together, read only when a failure is to be located).

use std::sync::Arc;

use alloy_primitives::hex;
use serde_json::Value;

use super::sources::{self, ArtifactSources, Unit};
use crate::render::abi::{Abi, LazyAbi};

mod build_json;
mod builds;
mod cached;
mod declared;
mod immutables;
mod override_code;
mod read;
mod tree;

use builds::resolve_foundry_units;
pub use builds::{build_infos, from_sourcify, load_build_info};
pub use cached::{load_file_cached, load_tree_cached, Tree};
pub use declared::Declared;
pub use immutables::{fill_immutables, immutables_of, Immutable, ImmutableError};
pub use override_code::{override_code, OverrideCode};
pub use read::load_file;
use read::{artifact, read_build, read_json, standard_json};
pub use tree::{find_project, load_tree};

/// The ABIs of `found` merged, in their order (one artifact's: that ABI, its entry points and
/// constructor kept), when first used: each artifact's is read then, once for both.
pub fn merged_abi(found: &[Artifact]) -> Option<LazyAbi> {
    LazyAbi::merged(found.iter().map(|a| a.abi.clone()).collect())
}

/// Byte ranges (start, length) of runtime code to ignore when comparing.
type Ranges = Vec<(usize, usize)>;

/// One compiled contract.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// Contract name (file stem or the combined JSON key).
    pub name: String,
    abi: LazyAbi,
    /// Runtime code as compiled, metadata stripped, with its masked ranges (immutables, library
    /// addresses) zeroed; `None` when the artifact has no runtime code.
    code: Option<Vec<u8>>,
    /// Byte ranges to ignore when comparing; `None` means "unknown": zero bytes of the compiled
    /// code may differ (Hardhat artifacts do not list immutables).
    mask: Option<Ranges>,
    /// Its layouts and sources: read with it, or kept between runs.
    rest: Rest,
    /// Source maps read, their compilation not yet known (Foundry: resolved by the tree).
    pending: Option<Pending>,
}

/// What an artifact says besides its ABI and code.
#[derive(Clone, Debug, Default)]
pub struct Parts {
    /// Foundry's `storageLayout`, when the artifact has one.
    pub storage_layout: Option<Value>,
    /// solc's `transientStorageLayout` (solc 0.8.27 and later, its `transient` state
    /// variables), when the artifact has one.
    pub transient_layout: Option<Value>,
    /// Source maps and the compilation they point into, when known.
    pub sources: Option<Arc<ArtifactSources>>,
    /// Its declared layouts made ready to name storage with, once asked for.
    declared: std::sync::OnceLock<Option<Declared>>,
}

impl Parts {
    fn declared(&self, name: &str) -> Option<&Declared> {
        self.declared
            .get_or_init(|| {
                let (storage, transient) =
                    (self.storage_layout.as_ref(), self.transient_layout.as_ref());
                (storage.is_some() || transient.is_some())
                    .then(|| Declared::of(name, storage, transient, self.sources.as_deref()))
            })
            .as_ref()
    }
}

/// An artifact's [`Parts`]: read with it, or kept between runs ([`load_tree_cached`]) and read
/// back when first asked for — a run reads those of the few contracts it touched, while what
/// every artifact's would answer (has it a layout, sources, does a CREATE's code start with
/// its creation code) is kept beside them.
#[derive(Clone, Debug)]
enum Rest {
    Read(Parts),
    Kept(cached::KeptParts),
}

/// What is known of an artifact's [`Parts`] without reading them.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Flags {
    storage_layout: bool,
    transient_layout: bool,
    sources: bool,
    /// Its sources carry solc metadata (a layout may be compiled from it).
    metadata: bool,
    /// Its compilation's ASTs declare state variables (a layout may be computed from them).
    vars: bool,
}

impl Flags {
    fn of(p: &Parts) -> Flags {
        Flags {
            storage_layout: p.storage_layout.is_some(),
            transient_layout: p.transient_layout.is_some(),
            sources: p.sources.is_some(),
            metadata: Flags::metadata(p),
            vars: Flags::vars(p),
        }
    }

    fn metadata(p: &Parts) -> bool {
        p.sources.as_ref().is_some_and(|s| s.metadata.is_some())
    }

    /// Reads every AST of the compilation that is still text.
    fn vars(p: &Parts) -> bool {
        p.sources.as_ref().is_some_and(|s| {
            s.unit
                .files
                .values()
                .any(|f| f.storage().contracts.iter().any(|c| !c.vars.is_empty()))
        })
    }
}

/// What an artifact says about its sources before its compilation unit is known.
#[derive(Clone, Debug, Default)]
struct Pending {
    runtime_map: Option<String>,
    creation: Option<(Vec<u8>, Ranges)>,
    creation_map: Option<String>,
    /// Foundry's `id`: the compiler's id of the artifact's own source file.
    source_id: Option<i64>,
    /// The artifact's own source path (Foundry's `metadata.settings.compilationTarget`).
    source_path: Option<String>,
    /// solc's metadata `sources[*].keccak256`: each source's hash at build time.
    source_hashes: sources::SourceHashes,
    /// solc's metadata: what a map that does not fit its code is rebuilt from.
    metadata: Option<Arc<sources::Metadata>>,
    /// The AST of its own source file, when the artifact carries one (Foundry's `ast = true`):
    /// the tree gives each file of the compilation the AST some artifact of it carries.
    ast: Option<sources::GivenAst>,
}

impl Pending {
    fn has_maps(&self) -> bool {
        self.runtime_map.is_some() || self.creation_map.is_some()
    }

    fn into_sources(self, unit: Arc<Unit>) -> Option<Arc<ArtifactSources>> {
        if !self.has_maps() {
            return None;
        }
        let creation = match (self.creation, self.creation_map) {
            (Some((code, mask)), Some(map)) => Some((code, mask, map)),
            _ => None,
        };
        Some(Arc::new(ArtifactSources {
            runtime_map: self.runtime_map,
            creation,
            unit,
            metadata: self.metadata,
        }))
    }
}

impl Artifact {
    /// Its ABI.
    pub fn abi(&self) -> &Arc<Abi> {
        self.abi.get()
    }

    /// Foundry's `storageLayout`, when the artifact has one.
    pub fn storage_layout(&self) -> Option<&Value> {
        match &self.rest {
            Rest::Read(p) => p.storage_layout.as_ref(),
            Rest::Kept(k) => k.layouts().storage_layout.as_ref(),
        }
    }

    /// solc's `transientStorageLayout`, when the artifact has one.
    pub fn transient_layout(&self) -> Option<&Value> {
        match &self.rest {
            Rest::Read(p) => p.transient_layout.as_ref(),
            Rest::Kept(k) => k.layouts().transient_layout.as_ref(),
        }
    }

    /// Its declared layouts made ready to name storage with ([`Declared`]); `None` where it
    /// declares none.
    pub fn declared(&self) -> Option<&Declared> {
        match &self.rest {
            Rest::Read(p) => p.declared(&self.name),
            Rest::Kept(k) => k.layouts().declared.as_ref(),
        }
    }

    /// Its source maps and the compilation they point into, when known.
    pub fn sources(&self) -> Option<&Arc<ArtifactSources>> {
        match &self.rest {
            Rest::Read(p) => p.sources.as_ref(),
            Rest::Kept(k) => k.sources().as_ref(),
        }
    }

    /// What is known of its parts, without reading them.
    fn flags(&self) -> Flags {
        match &self.rest {
            Rest::Read(p) => Flags::of(p),
            Rest::Kept(k) => k.flags,
        }
    }

    /// Whether it declares a storage or transient layout itself.
    pub fn declares_layout(&self) -> bool {
        match &self.rest {
            Rest::Read(p) => p.storage_layout.is_some() || p.transient_layout.is_some(),
            Rest::Kept(k) => k.flags.storage_layout || k.flags.transient_layout,
        }
    }

    /// Whether it has source maps.
    pub fn has_sources(&self) -> bool {
        match &self.rest {
            Rest::Read(p) => p.sources.is_some(),
            Rest::Kept(k) => k.flags.sources,
        }
    }

    /// Whether a layout may be compiled (its solc metadata) or computed (state variables in its
    /// compilation's ASTs) for it.
    pub fn may_lay_out(&self) -> bool {
        match &self.rest {
            // The metadata first: the ASTs are read only where there is none.
            Rest::Read(p) => Flags::metadata(p) || Flags::vars(p),
            Rest::Kept(k) => k.flags.metadata || k.flags.vars,
        }
    }

    /// Whether `init` (a CREATE frame's input) starts with its creation code
    /// ([`ArtifactSources::creation_matches`]).
    pub fn creation_matches(&self, init: &[u8]) -> bool {
        match &self.rest {
            Rest::Read(p) => p.sources.as_ref().is_some_and(|s| s.creation_matches(init)),
            Rest::Kept(k) => k.creation_matches(init),
        }
    }

    /// The source files of its compilation whose AST the build gave in a shape other than
    /// solc's compact JSON.
    pub fn unread_asts(&self) -> Vec<String> {
        match &self.rest {
            Rest::Read(p) => p
                .sources
                .iter()
                .flat_map(|s| s.unit.files.values())
                .filter(|f| f.ast_unread)
                .map(|f| f.path.clone())
                .collect(),
            Rest::Kept(k) => k.unread_asts(),
        }
    }

    /// Gives it its source maps and compilation.
    fn set_sources(&mut self, sources: Option<Arc<ArtifactSources>>) {
        match &mut self.rest {
            Rest::Read(p) => {
                p.sources = sources;
                p.declared = Default::default();
            }
            Rest::Kept(k) => {
                let layouts = k.layouts();
                self.rest = Rest::Read(Parts {
                    storage_layout: layouts.storage_layout.clone(),
                    transient_layout: layouts.transient_layout.clone(),
                    sources,
                    declared: Default::default(),
                });
            }
        }
    }

    /// How many bytes `deployed` differs from this artifact's runtime code in, when it is
    /// nearly it (lengths within 5%, at least 90% of the bytes equal, position by position):
    /// the same contract rebuilt. `None` when it is not near, or is exactly it.
    pub fn difference(&self, deployed: &[u8]) -> Option<usize> {
        let mine = self.code.as_ref().filter(|c| c.len() >= 64)?;
        let theirs = strip_metadata(deployed);
        let (short, long) = if mine.len() < theirs.len() {
            (mine.len(), theirs.len())
        } else {
            (theirs.len(), mine.len())
        };
        if long - short > long / 20 {
            return None;
        }
        if self.matches(deployed) {
            return None;
        }
        let same = mine
            .iter()
            .zip(theirs)
            .filter(|(a, b)| a == b || **a == 0)
            .count();
        let differ = long - same;
        if differ <= long / 10 {
            return Some(differ);
        }
        // Code inserted or removed shifts what follows: compare what instructions there are
        // (opcode counts, push data skipped) instead.
        let (a, b) = (opcode_counts(mine), opcode_counts(theirs));
        let apart: usize = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).sum();
        let total: usize = a.iter().sum::<usize>().max(b.iter().sum());
        (apart <= total / 10).then_some(differ)
    }

    /// Whether `deployed` (code read from the chain) is this artifact's runtime code.
    pub fn matches(&self, deployed: &[u8]) -> bool {
        let Some(mine) = &self.code else {
            return false;
        };
        sources::same_code(mine, self.mask.as_deref(), strip_metadata(deployed))
    }
}

/// Whether solc's `object` (hex; immutables as zeros, library placeholders) is `code`: the
/// runtime code, or the start of a CREATE's init code; solc's metadata at the end ignored.
/// A zero byte of the object may be anything (it lists no immutables here).
pub fn object_is(object: &str, code: &[u8], creation: bool) -> bool {
    let Some((mine, _)) = decode_code(object) else {
        return false;
    };
    let mine = strip_metadata(&mine);
    let theirs = if creation {
        code.get(..mine.len())
    } else {
        Some(strip_metadata(code))
    };
    theirs.is_some_and(|theirs| sources::same_code(mine, None, theirs))
}

/// How many times each opcode occurs in `code` (PUSH data skipped).
fn opcode_counts(code: &[u8]) -> [usize; 256] {
    let mut counts = [0usize; 256];
    for (_, op) in sources::instructions(code) {
        counts[op as usize] += 1;
    }
    counts
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
pub(super) fn decode_code(hex_str: &str) -> Option<(Vec<u8>, Ranges)> {
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

    fn write(name: &str, v: &Value) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chaintrace-override-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn override_code_runs_code_as_compiled_and_lists_its_immutables() {
        let foundry = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x600160005500",
            "linkReferences": {}, "immutableReferences": {}}});
        let got = override_code(&write("Fixed.json", &foundry)).unwrap();
        assert_eq!(got.code, vec![0x60, 0x01, 0x60, 0x00, 0x55, 0x00]);
        assert_eq!(got.artifact.name, "Fixed");
        assert!(got.notes.is_empty());

        let imm = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x7f".to_string() + &"00".repeat(32),
            "immutableReferences": {"12": [{"start": 1, "length": 32}]}}});
        let got = override_code(&write("Imm.json", &imm)).unwrap();
        assert_eq!(
            got.immutables,
            vec![Immutable {
                id: "12".into(),
                refs: vec![(1, 32)]
            }]
        );

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
