//! Compiler artifacts as name sources: JSON ABI files, Foundry `out/` and Hardhat `artifacts/`
//! trees, solc combined JSON and standard-JSON output; the project around the working directory
//! found without flags; and deployed code matched to artifacts by bytecode, ignoring the CBOR
//! metadata tail and immutables (and library placeholders).
//!
//! Source maps come along where the artifacts have them ([`super::sources`]): Foundry artifacts
//! with the ids of `out/build-info/` (the build chosen by `cache/solidity-files-cache.json`),
//! standard-JSON output (`sources` ids and ASTs) and Hardhat's `artifacts/build-info/` (input
//! and output together, read only when a failure is to be located).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use alloy_primitives::hex;
use revm::bytecode::opcode::{ADDRESS, EQ, PUSH20};
use serde_json::Value;

use super::sources::{self, ArtifactSources, Unit};
use super::NamesError;
use crate::render::abi::{Abi, LazyAbi};

mod build_json;
mod builds;
mod cached;
mod declared;
mod immutables;
mod override_code;
mod tree;

use builds::resolve_foundry_units;
pub use builds::{build_infos, from_sourcify, load_build_info};
pub use cached::{load_file_cached, load_tree_cached, Tree};
pub use declared::Declared;
pub use immutables::{fill_immutables, immutables_of, Immutable, ImmutableError};
pub use override_code::{override_code, OverrideCode};
pub use tree::{find_project, load_tree};

/// The ABIs of `found` merged, in their order (one artifact's: that ABI, its entry points and
/// constructor kept).
pub fn merged_abi(found: &[Artifact]) -> Option<Abi> {
    let mut merged: Option<Abi> = None;
    for a in found {
        match &mut merged {
            Some(m) => m.merge((**a.abi()).clone()),
            None => merged = Some((**a.abi()).clone()),
        }
    }
    merged
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
            metadata: p.sources.as_ref().is_some_and(|s| s.metadata.is_some()),
            vars: p.sources.as_ref().is_some_and(|s| {
                s.unit
                    .files
                    .values()
                    .any(|f| f.storage().contracts.iter().any(|c| !c.vars.is_empty()))
            }),
        }
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
        let f = self.flags();
        f.metadata || f.vars
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
    // Standard-JSON output keeps the code under `evm`.
    let v = v.get("evm").unwrap_or(v);
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
    // A library's call protection, `PUSH20 <its own address> ADDRESS EQ`: zeros when compiled,
    // the address once deployed.
    if code.len() > 23
        && code[0] == PUSH20
        && code[1..21].iter().all(|b| *b == 0)
        && code[21..23] == [ADDRESS, EQ]
    {
        mask.push((1, 20));
    }
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

/// The source maps of an artifact object (Foundry's and standard JSON's `bytecode.sourceMap` /
/// `deployedBytecode.sourceMap`, combined JSON's `srcmap` / `srcmap-runtime`) and its creation
/// code.
fn pending_sources(v: &Value, metadata: Option<Arc<sources::Metadata>>) -> Pending {
    let outer = v;
    let v = v.get("evm").unwrap_or(v);
    let map = |key: &str, flat: &str| {
        v.get(key)
            .and_then(|b| b.get("sourceMap"))
            .or_else(|| v.get(flat))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
    };
    let creation_text = match v.get("bytecode").or_else(|| v.get("bin")) {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("object").and_then(Value::as_str),
        _ => None,
    };
    let creation = creation_text
        .and_then(decode_code)
        .filter(|(c, _)| !c.is_empty())
        .map(|(code, mut mask)| {
            // The runtime code inside ends the creation code: its metadata may differ from a
            // rebuild's.
            let meta = code.len() - strip_metadata(&code).len();
            if meta > 0 {
                mask.push((code.len() - meta, meta));
            }
            (code, mask)
        });
    Pending {
        runtime_map: map("deployedBytecode", "srcmap-runtime"),
        creation,
        creation_map: map("bytecode", "srcmap"),
        source_id: outer.get("id").and_then(Value::as_i64),
        source_path: outer
            .pointer("/metadata/settings/compilationTarget")
            .and_then(Value::as_object)
            .and_then(|o| o.keys().next().cloned())
            .or_else(|| metadata.as_deref()?.target().map(str::to_string))
            .or_else(|| {
                outer
                    .pointer("/ast/absolutePath")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
        source_hashes: metadata
            .as_deref()
            .map(|m| m.source_hashes().clone())
            .unwrap_or_default(),
        metadata,
        ast: None,
    }
}

/// solc's metadata of an artifact object (a JSON string in solc's outputs, an object in
/// Foundry's), read once.
fn parse_metadata(v: &Value) -> Option<Arc<sources::Metadata>> {
    // Foundry's `rawMetadata` is the text solc wrote: read lazily, hashed as written.
    v.get("rawMetadata")
        .filter(|m| m.is_string())
        .or_else(|| v.get("metadata"))
        .and_then(sources::Metadata::of)
        .map(Arc::new)
}

fn artifact(name: &str, v: &Value) -> Result<Artifact, NamesError> {
    artifact_with_metadata(name, v, parse_metadata(v))
}

/// [`artifact`] with its metadata read already ([`parse_metadata`]).
fn artifact_with_metadata(
    name: &str,
    v: &Value,
    metadata: Option<Arc<sources::Metadata>>,
) -> Result<Artifact, NamesError> {
    let abi = Abi::from_value(v).map_err(|e| NamesError::Abi(name.to_string(), e.to_string()))?;
    let (code, mask) = runtime_code(v);
    let pending = pending_sources(v, metadata);
    Ok(Artifact {
        name: name.to_string(),
        abi: LazyAbi::read(abi),
        code,
        mask,
        rest: Rest::Read(Parts {
            storage_layout: v.get("storageLayout").filter(|s| s.is_object()).cloned(),
            transient_layout: v
                .get("transientStorageLayout")
                .filter(|s| s.is_object())
                .cloned(),
            sources: None,
            declared: Default::default(),
        }),
        // Kept without maps too when the artifact carries its file's AST (an abstract contract,
        // an interface, a library's file): the tree gives it to the file's compilation.
        pending: (pending.has_maps() || v.get("ast").is_some()).then_some(pending),
    })
}

/// The artifacts of a standard-JSON output (`contracts: {file: {name: {abi, evm}}}`), their
/// source maps pointing into the output's `sources`; texts from `input_sources` when given (a
/// build info), else from disk around `file` — or, for a remote answer (`file` `None`), only
/// from `input_sources`.
fn standard_json(
    file: Option<&Path>,
    output: &Value,
    input_sources: Option<&Value>,
    asts: Option<&mut build_json::Asts>,
) -> Result<Vec<Artifact>, NamesError> {
    let shown = file.map_or_else(
        || "a remote answer".to_string(),
        |f| f.display().to_string(),
    );
    let roots = file.map(sources::roots_for);
    let mut hashes = sources::SourceHashes::default();
    // Each contract's metadata, read once: for the hashes here and its artifact below.
    let mut metadata = std::collections::HashMap::new();
    for per_file in output
        .get("contracts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for c in per_file.1.as_object().into_iter().flatten() {
            let parsed = parse_metadata(c.1);
            if let Some(m) = parsed.as_deref() {
                hashes.extend(m.source_hashes().iter().map(|(k, v)| (k.clone(), *v)));
            }
            metadata.insert((per_file.0.as_str(), c.0.as_str()), parsed);
        }
    }
    let unit = Arc::new(sources::unit_from_standard_json(
        output,
        input_sources,
        roots.as_deref(),
        &hashes,
        asts,
    ));
    let mut out = Vec::new();
    let contracts = output.get("contracts").and_then(Value::as_object);
    for (file, per_file) in contracts.into_iter().flatten() {
        for (name, c) in per_file.as_object().into_iter().flatten() {
            if c.get("abi").is_none() {
                continue;
            }
            let parsed = metadata.remove(&(file.as_str(), name.as_str())).flatten();
            let mut a = artifact_with_metadata(name, c, parsed)
                .map_err(|e| NamesError::Abi(shown.clone(), e.to_string()))?;
            if let Some(p) = a.pending.take() {
                a.set_sources(p.into_sources(unit.clone()));
            }
            out.push(a);
        }
    }
    Ok(out)
}

/// Whether `contracts` is standard-JSON output's (file → name → contract) rather than combined
/// JSON's (`file:name` → contract).
fn is_standard_json(contracts: &serde_json::Map<String, Value>) -> bool {
    contracts.values().any(|per_file| {
        per_file.as_object().is_some_and(|o| {
            o.values()
                .any(|c| c.get("abi").is_some() || c.get("evm").is_some())
        })
    })
}

fn read_json(path: &Path) -> Result<Value, NamesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| NamesError::Abi(shown, format!("invalid JSON: {e}")))
}

/// A build's JSON with the ASTs under its `sources` read apart ([`build_json`]); and a Foundry
/// artifact's own AST, where it is the last member but `id` as forge writes it, kept as text
/// ([`split_own_ast`]): the AST's text, `[start, end)` of the file's.
fn read_build(
    path: &Path,
) -> Result<(Value, build_json::Asts, Option<sources::RawAst>), NamesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    if let Some((v, asts, start, end)) = split_own_ast(&text) {
        let raw = sources::RawAst::new(Arc::new(text), start, end);
        return Ok((v, asts, raw));
    }
    let (v, asts) = build_json::parse(&text)
        .map_err(|e| NamesError::Abi(shown, format!("invalid JSON: {e}")))?;
    Ok((v, asts, None))
}

/// A Foundry artifact (`{"abi": …, …, "ast": {"absolutePath": …}, "id": N}`, compact: forge
/// writes its artifact struct's fields in declaration order, `ast` and `id` the last two —
/// foundry-compilers' `ConfigurableContractArtifact`) read without its AST, which is most of its bytes and is kept as text until its
/// declarations are needed ([`sources::RawAst`]): everything before `,"ast":{"absolutePath":"`
/// is read as the document (it must be a whole object there, so that member is the top
/// level's), the `id` from the end. `None` where the text is not laid out so: it is then read
/// whole. The AST itself is checked only when read; one that is not solc's compact JSON then
/// counts as none, as it does when read with the artifact.
fn split_own_ast(text: &str) -> Option<(Value, build_json::Asts, usize, usize)> {
    const AST: &str = ",\"ast\":{\"absolutePath\":";
    let at = text.find(AST)?;
    // The end: `,"id":N}` and nothing but white space after it.
    let body = text.trim_end();
    let inner = body.strip_suffix('}')?;
    let digits = inner.len() - inner.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let before_id = inner[..inner.len() - digits].strip_suffix(",\"id\":")?;
    let id: i64 = inner[inner.len() - digits..].parse().ok()?;
    let (ast_start, ast_end) = (at + AST.len() - "{\"absolutePath\":".len(), before_id.len());
    // The AST, an object, ends right before `,"id"`.
    if digits == 0 || ast_end <= ast_start || !before_id.ends_with('}') {
        return None;
    }
    let path: String = {
        let from = at + AST.len();
        let mut de = serde_json::Deserializer::from_str(&text[from..ast_end]);
        serde::Deserialize::deserialize(&mut de).ok()?
    };
    let mut head = String::with_capacity(at + 1);
    head.push_str(&text[..at]);
    head.push('}');
    let (mut v, asts) = build_json::parse(&head).ok()?;
    let obj = v.as_object_mut()?;
    if obj.contains_key("ast") || obj.contains_key("id") {
        return None;
    }
    obj.insert("ast".into(), serde_json::json!({ "absolutePath": path }));
    obj.insert("id".into(), Value::from(id));
    Some((v, asts, ast_start, ast_end))
}

/// The artifacts of one JSON file: a bare ABI, an artifact with `abi`, or a combined JSON
/// (`{"contracts": {name: artifact}}`).
pub fn load_file(path: &Path) -> Result<Vec<Artifact>, NamesError> {
    let shown = path.display().to_string();
    let (v, mut asts, own_ast) = read_build(path)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if let (Some(output), None) = (v.get("output"), v.get("abi")) {
        // A build info: the compiler's input and output together.
        if output.get("contracts").is_some() {
            let input = v.pointer("/input/sources");
            return standard_json(Some(path), output, input, Some(&mut asts));
        }
    }
    if let Some(contracts) = v.get("contracts").and_then(Value::as_object) {
        if v.get("abi").is_none() && is_standard_json(contracts) {
            return standard_json(Some(path), &v, None, Some(&mut asts));
        }
        if v.get("abi").is_none() {
            // solc --combined-json: `sourceList` gives the source ids, in order.
            let list: Vec<(i32, String)> = v
                .get("sourceList")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, p)| Some((i as i32, p.as_str()?.to_string())))
                .collect();
            let unit = Arc::new(sources::unit_from_paths(
                &list,
                &sources::roots_for(path),
                &sources::SourceHashes::default(),
                HashMap::new(),
            ));
            return contracts
                .iter()
                .map(|(name, a)| {
                    let short = name.rsplit(':').next().unwrap_or(name);
                    let mut art = artifact(short, a)
                        .map_err(|e| NamesError::Abi(shown.clone(), e.to_string()))?;
                    if let Some(p) = art.pending.take().filter(|_| !list.is_empty()) {
                        art.set_sources(p.into_sources(unit.clone()));
                    }
                    Ok(art)
                })
                .collect();
        }
    }
    let mut art = artifact(&stem, &v).map_err(|_| {
        let why = Abi::from_value(&v)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        NamesError::Abi(shown, why)
    })?;
    if let (Some(p), Some(path)) = (
        art.pending.as_mut(),
        v.pointer("/ast/absolutePath").and_then(Value::as_str),
    ) {
        p.ast = match own_ast {
            Some(raw) => Some(sources::GivenAst::Text(raw)),
            None => asts.remove(path).flatten().map(sources::GivenAst::Read),
        };
    }
    Ok(vec![art])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foundry_artifacts_own_ast_is_kept_as_text_and_reads_as_when_read_with_it() {
        let ast = r#"{"absolutePath":"src/V.sol","id":9,"nodeType":"SourceUnit","nodes":[{"id":8,"nodeType":"ContractDefinition","name":"V","linearizedBaseContracts":[8],"nodes":[{"id":3,"nodeType":"EnumDefinition","name":"Kind","canonicalName":"V.Kind","members":[{"id":1,"name":"A","nodeType":"EnumValue"},{"id":2,"name":"B","nodeType":"EnumValue"}],"src":"20:16:0"}],"src":"0:60:0"}],"src":"0:60:0"}"#;
        let text = format!(
            r#"{{"abi":[],"rawMetadata":"{{\"x\":1}}","storageLayout":{{"storage":[],"types":{{}}}},"ast":{ast},"id":4}}"#
        );
        let (v, asts, start, end) = split_own_ast(&text).unwrap();
        let (whole, mut eager) = build_json::parse(&text).unwrap();
        assert_eq!(v, whole);
        assert!(asts.is_empty());
        assert_eq!(&text[start..end], ast);
        let raw = sources::RawAst::new(Arc::new(text.clone()), start, end).unwrap();
        let read = eager.remove("src/V.sol").flatten().unwrap();
        assert_eq!(format!("{:?}", raw.decls().unwrap()), format!("{read:?}"));
        assert!(raw.contains("\"canonicalName\":\"V.Kind\"") && !raw.contains("erc7201"));
        // Laid out otherwise: read whole.
        for other in [
            format!(r#"{{"abi":[],"ast":{ast},"id":4,"x":1}}"#),
            format!(r#"{{"abi":[],"ast":{ast},"x":1,"id":4}}"#),
            format!(r#"{{"abi":[],"x":{{"ast":{ast},"id":4}}}}"#),
            format!(r#"{{"abi": [], "ast": {ast}, "id": 4}}"#),
        ] {
            assert!(split_own_ast(&other).is_none(), "{other}");
        }
    }

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
    fn library_call_protection_is_the_deployed_address() {
        let compiled = format!("0x73{}30146080", "00".repeat(20));
        let v = serde_json::json!({"abi": [], "deployedBytecode": {"object": compiled,
            "immutableReferences": {}}});
        let a = artifact("L", &v).unwrap();
        let mut deployed = vec![0x73];
        deployed.extend([0xab; 20]);
        deployed.extend([0x30, 0x14, 0x60, 0x80]);
        assert!(a.matches(&deployed));
        deployed[22] = 0x15;
        assert!(!a.matches(&deployed));
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
