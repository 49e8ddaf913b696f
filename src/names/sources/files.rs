//! Compilation units: the source files a source map's file indexes name, their texts (given
//! inline or read from disk when first needed), line index, and function spans; what an
//! artifact's source side holds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Value;

use super::ast::AstDecls;
use super::spans::{scan_functions, FnSpan};
use crate::render::source::Location;

/// Each source's keccak256 at build time, by the path the compiler named it (solc metadata
/// `sources[*].keccak256`).
pub type SourceHashes = HashMap<String, alloy_primitives::B256>;

/// solc's metadata of an artifact: the JSON text solc writes (standard-JSON and combined
/// output) or an object (Foundry's artifacts). Loading reads only its sources' hashes; the whole
/// is parsed on first need (a rebuild, the code generator of a matched contract), since most
/// artifacts of a build never match a contract a trace runs.
#[derive(Debug)]
pub struct Metadata {
    text: Option<String>,
    value: OnceLock<Option<Value>>,
    /// `sources[*].keccak256`, read when the artifact is loaded (every artifact's are needed).
    hashes: SourceHashes,
    /// `settings.compilationTarget`'s file, read with the hashes.
    target: Option<String>,
}

impl Metadata {
    /// An artifact's `metadata` member (or Foundry's `rawMetadata`), when it is text or an
    /// object.
    pub fn of(member: &Value) -> Option<Metadata> {
        let (text, value) = match member {
            Value::String(text) => (Some(text.clone()), OnceLock::new()),
            Value::Object(_) => (None, OnceLock::from(Some(member.clone()))),
            _ => return None,
        };
        let (hashes, target) =
            hashes_and_target(text.as_deref(), value.get().and_then(Option::as_ref));
        Some(Metadata {
            text,
            value,
            hashes,
            target,
        })
    }

    /// What is kept of it between runs: its text (metadata given as an object: as serde_json
    /// writes it, which is what [`Self::digest`] hashes) and its target. Not its sources'
    /// hashes: they are read while a tree is loaded, into its files' [`TextOrigin`]s.
    pub(crate) fn stored(&self) -> StoredMetadata {
        let text = self.text.clone().or_else(|| {
            self.value
                .get()
                .and_then(Option::as_ref)
                .map(Value::to_string)
        });
        StoredMetadata {
            text,
            target: self.target.clone(),
        }
    }

    /// [`Self::stored`] read back: parsed again on first need, as when first loaded.
    pub(crate) fn from_stored(s: StoredMetadata) -> Metadata {
        Metadata {
            text: s.text,
            value: OnceLock::new(),
            hashes: SourceHashes::default(),
            target: s.target,
        }
    }

    /// The file of `settings.compilationTarget`: the artifact's own source.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The metadata parsed; `None` when its text is not a JSON object.
    pub fn value(&self) -> Option<&Value> {
        self.value
            .get_or_init(|| {
                let text = self.text.as_deref()?;
                serde_json::from_str::<Value>(text)
                    .ok()
                    .filter(Value::is_object)
            })
            .as_ref()
    }

    /// keccak256 of the metadata as solc wrote it (an object: as serde_json writes it): what
    /// a layout compiled from it is kept by.
    pub fn digest(&self) -> alloy_primitives::B256 {
        match (&self.text, self.value.get()) {
            (Some(t), _) => alloy_primitives::keccak256(t.as_bytes()),
            (None, Some(Some(v))) => alloy_primitives::keccak256(v.to_string().as_bytes()),
            (None, _) => alloy_primitives::B256::ZERO,
        }
    }

    /// `sources[*].keccak256`: each source's hash at build time, by the path the compiler
    /// named it.
    pub fn source_hashes(&self) -> &SourceHashes {
        &self.hashes
    }
}

/// [`Metadata`] as it is kept between runs.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct StoredMetadata {
    text: Option<String>,
    target: Option<String>,
}

/// `sources[*].keccak256` and `settings.compilationTarget`'s file of metadata given as an
/// object, or as text (only those members built).
fn hashes_and_target(text: Option<&str>, value: Option<&Value>) -> (SourceHashes, Option<String>) {
    #[derive(Deserialize)]
    struct Hashes {
        #[serde(default)]
        sources: HashMap<String, Hash>,
        settings: Option<Settings>,
    }
    #[derive(Deserialize)]
    struct Hash {
        keccak256: Option<Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Settings {
        compilation_target: Option<HashMap<String, Value>>,
    }
    let read = match (text, value) {
        (_, Some(v)) => Hashes::deserialize(v).ok(),
        (Some(text), None) => serde_json::from_str::<Hashes>(text).ok(),
        (None, None) => None,
    };
    let Some(read) = read else {
        return Default::default();
    };
    let target = read
        .settings
        .and_then(|s| s.compilation_target)
        .and_then(|t| t.into_keys().next());
    let hashes = read
        .sources
        .into_iter()
        .filter_map(|(path, s)| Some((path, s.keccak256?.as_str()?.parse().ok()?)))
        .collect();
    (hashes, target)
}

/// Where a source file's text comes from.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum TextOrigin {
    /// Given in the build (standard-JSON input, Hardhat build info).
    Inline(String),
    /// Read from the first of these paths that exists, when first needed; with the hash the
    /// build recorded, a file whose text no longer has it is not used.
    Disk(Vec<PathBuf>, Option<alloy_primitives::B256>),
    /// Named by a remote answer (Sourcify, an explorer) without its text: never looked for on
    /// this machine, since a remote answer must not choose which local file is read.
    Remote,
}

/// Why a source file has no text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    /// Not given, not found.
    Missing,
    /// Found, but not the text the build was made from.
    Changed,
}

/// One source file of a compilation. (Kept between runs with its project's artifacts,
/// [`crate::names::artifacts::load_tree_cached`]: what is read on first need is not.)
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SourceFile {
    /// The path as the compiler named it (`src/Leaf.sol`).
    pub path: String,
    origin: TextOrigin,
    #[serde(skip)]
    text: OnceLock<Result<String, Unread>>,
    /// What its AST declares, read when first needed where the build's AST was kept as text.
    ast: FileAst,
    #[serde(skip)]
    functions: OnceLock<Vec<FnSpan>>,
    /// Byte offsets where each line starts, built on first need.
    #[serde(skip)]
    line_starts: OnceLock<Vec<usize>>,
    /// The build gave an AST that is not solc's compact JSON: read as a file without one.
    pub ast_unread: bool,
}

/// A file's functions from its AST: as read, or kept between runs in their own stored form,
/// read back on first need — a run that locates no failure needs none of them, and they are
/// most of what a compilation's files keep.
#[derive(Debug)]
enum AstFunctions {
    Read(Vec<FnSpan>),
    Kept(alloy_primitives::Bytes),
}

impl AstFunctions {
    fn spans(&self) -> Vec<FnSpan> {
        match self {
            AstFunctions::Read(f) => f.clone(),
            // What this program wrote (a store's length is checked when opened): none only if
            // the file was altered since.
            AstFunctions::Kept(b) => rmp_serde::from_slice(b).unwrap_or_default(),
        }
    }
}

impl serde::Serialize for AstFunctions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AstFunctions::Read(f) => {
                let bytes = rmp_serde::to_vec(f).map_err(serde::ser::Error::custom)?;
                s.serialize_bytes(&bytes)
            }
            AstFunctions::Kept(b) => s.serialize_bytes(b),
        }
    }
}

impl<'de> serde::Deserialize<'de> for AstFunctions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AstFunctions, D::Error> {
        alloy_primitives::Bytes::deserialize(d).map(AstFunctions::Kept)
    }
}

/// A file's AST as a build gave it: read into its declarations, or (a Foundry artifact's own)
/// kept as its text, read when one of its declarations is first needed.
#[derive(Clone, Debug)]
pub enum GivenAst {
    Read(AstDecls),
    Text(super::ast::RawAst),
}

/// What a file's AST declares ([`AstDecls`] but its path), as kept between runs.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct AstParts {
    /// Its functions, when the build had an AST; else scanned from the text.
    functions: Option<AstFunctions>,
    /// The enums the file defines (`canonicalName`, member names in order); empty without an
    /// AST: a stored enum is then shown by its number.
    enums: Vec<(String, Vec<String>)>,
    /// Its structs (ERC-7201 namespaces among them), contracts with their state variables,
    /// enums and value types ([`crate::names::ast_layout`]); empty without an AST.
    storage: crate::names::ast_layout::AstStorage,
}

impl AstParts {
    fn of(a: Option<AstDecls>) -> AstParts {
        match a {
            Some(a) => AstParts {
                functions: Some(AstFunctions::Read(a.functions)),
                enums: a.enums,
                storage: a.storage,
            },
            None => AstParts::default(),
        }
    }
}

/// A file's [`AstParts`]: read with the build, or from its AST's text on first need (an AST
/// that is not solc's compact JSON then gives none, as it would have when read with the build).
#[derive(Debug, Default)]
struct FileAst {
    parts: OnceLock<AstParts>,
    text: Option<super::ast::RawAst>,
}

impl FileAst {
    fn of(ast: Option<GivenAst>) -> FileAst {
        match ast {
            Some(GivenAst::Text(raw)) => FileAst {
                text: Some(raw),
                ..FileAst::default()
            },
            Some(GivenAst::Read(a)) => FileAst {
                parts: OnceLock::from(AstParts::of(Some(a))),
                ..FileAst::default()
            },
            // No AST: its parts, when asked, are none.
            None => FileAst::default(),
        }
    }

    fn get(&self) -> &AstParts {
        self.parts
            .get_or_init(|| AstParts::of(self.text.as_ref().and_then(|t| t.decls())))
    }
}

impl serde::Serialize for FileAst {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for FileAst {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FileAst, D::Error> {
        AstParts::deserialize(d).map(|p| FileAst {
            parts: OnceLock::from(p),
            ..FileAst::default()
        })
    }
}

impl SourceFile {
    pub fn new(path: String, origin: TextOrigin, ast: Option<AstDecls>) -> SourceFile {
        SourceFile::given(path, origin, ast.map(GivenAst::Read))
    }

    /// [`SourceFile::new`] with its AST as the build gave it (read, or kept as text).
    pub fn given(path: String, origin: TextOrigin, ast: Option<GivenAst>) -> SourceFile {
        SourceFile {
            path,
            origin,
            text: OnceLock::new(),
            ast: FileAst::of(ast),
            functions: OnceLock::new(),
            line_starts: OnceLock::new(),
            ast_unread: false,
        }
    }

    /// Whether its AST may hold `needle` (compact JSON, as solc writes it): where the AST is
    /// still text, whether the text has it; else yes. What asks for a declaration among a
    /// compilation's files reads the ASTs of those alone.
    pub fn may_mention(&self, needle: &str) -> bool {
        match (&self.ast.text, self.ast.parts.get()) {
            (Some(raw), None) => raw.contains(needle),
            _ => true,
        }
    }

    /// Whether its AST is still text, not yet read.
    pub fn ast_still_text(&self) -> bool {
        self.ast.text.is_some() && self.ast.parts.get().is_none()
    }

    /// Reads its AST now, where it is still text.
    pub fn read_ast(&self) {
        self.ast.get();
    }

    /// Whether its AST may declare an ERC-7201 namespace: where it was kept as text, whether
    /// the text mentions one's annotation (known since it was read); else yes.
    pub fn may_declare_namespace(&self) -> bool {
        self.ast
            .text
            .as_ref()
            .is_none_or(super::ast::RawAst::mentions_namespace)
    }

    /// The enums the file defines (`canonicalName`, member names in order), from its AST;
    /// empty without one: a stored enum is then shown by its number.
    pub fn enums(&self) -> &[(String, Vec<String>)] {
        &self.ast.get().enums
    }

    /// Its structs (ERC-7201 namespaces among them), contracts with their state variables,
    /// enums and value types, from its AST ([`crate::names::ast_layout`]); empty without one.
    pub fn storage(&self) -> &crate::names::ast_layout::AstStorage {
        &self.ast.get().storage
    }

    pub fn text(&self) -> Option<&str> {
        self.loaded().as_deref().ok()
    }

    /// The file on disk no longer has the text the build recorded: it was edited since, and
    /// no location in it is quoted.
    pub fn changed_since_build(&self) -> bool {
        matches!(self.loaded(), Err(Unread::Changed))
    }

    fn loaded(&self) -> &Result<String, Unread> {
        self.text.get_or_init(|| match &self.origin {
            TextOrigin::Inline(s) => Ok(s.clone()),
            TextOrigin::Disk(paths, hash) => {
                let text = paths
                    .iter()
                    .find_map(|p| std::fs::read_to_string(p).ok())
                    .ok_or(Unread::Missing)?;
                match hash {
                    Some(h) if alloy_primitives::keccak256(text.as_bytes()) != *h => {
                        Err(Unread::Changed)
                    }
                    _ => Ok(text),
                }
            }
            TextOrigin::Remote => Err(Unread::Missing),
        })
    }

    pub fn functions(&self) -> &[FnSpan] {
        self.functions
            .get_or_init(|| match &self.ast.get().functions {
                Some(f) => f.spans(),
                None => self.text().map(scan_functions).unwrap_or_default(),
            })
    }

    /// The 1-based line holding byte `offset`, by a binary search in the line index.
    pub fn line_of(&self, offset: usize) -> Option<usize> {
        let text = self.text()?;
        if offset > text.len() {
            return None;
        }
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        Some(starts.partition_point(|&s| s <= offset))
    }

    /// Line `line` (1-based) without its line break.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let text = self.text()?;
        let start = line_offset(text, line)?;
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        Some(text[start..end].trim_end_matches('\r'))
    }

    /// The innermost function or modifier whose span holds `offset`.
    pub fn function_at(&self, offset: usize) -> Option<&FnSpan> {
        self.functions()
            .iter()
            .filter(|f| f.start <= offset && offset < f.end)
            .min_by_key(|f| f.end - f.start)
    }

    /// The location of `start..start+len`: line, column, the line's text and the span on it;
    /// for a file edited since the build, a location that says so and quotes nothing.
    pub fn locate(&self, start: usize, len: usize) -> Option<Location> {
        if self.changed_since_build() {
            return Some(Location::changed(&self.path));
        }
        let text = self.text()?;
        if start > text.len() || !text.is_char_boundary(start) {
            return None;
        }
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        let column = text[line_start..start].chars().count();
        let mut end = (start + len).min(line_start + line_text.len()).max(start);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let width = text[start..end].chars().count();
        Some(Location {
            file: self.path.clone(),
            line: text[..line_start].matches('\n').count() + 1,
            column: column + 1,
            text: line_text.to_string(),
            span: (column, column + width),
            changed: false,
        })
    }
}

/// One compilation: its source files by the compiler's source id.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Unit {
    pub files: HashMap<i32, Arc<SourceFile>>,
}

impl Unit {
    /// Its files in the compiler's order (by source id): the same on every run, where the map's
    /// order is not.
    pub fn files_in_order(&self) -> Vec<&SourceFile> {
        let mut files: Vec<_> = self.files.iter().collect();
        files.sort_by_key(|(id, _)| **id);
        files.into_iter().map(|(_, f)| &**f).collect()
    }

    /// The AST id of the contract `name` declares, where one contract of the compilation has
    /// that name: ids follow the sources' order and each file's declarations.
    pub fn declaration_id(&self, name: &str) -> Option<i64> {
        let mut named = self
            .files
            .values()
            .flat_map(|f| f.storage().contracts.iter())
            .filter(|d| d.name == name);
        match (named.next(), named.next()) {
            (Some(d), None) => Some(d.id),
            _ => None,
        }
    }

    /// The contracts `name` inherits from (its linearized bases but itself), by name, as the
    /// compilation's ASTs give them; empty where no AST names it, or two contracts of the
    /// compilation have that name (which one runs, the AST does not say).
    pub fn bases_of(&self, name: &str) -> Vec<String> {
        let defs = || {
            self.files
                .values()
                .flat_map(|f| f.storage().contracts.iter())
        };
        let mut named = defs().filter(|d| d.name == name);
        let (Some(def), None) = (named.next(), named.next()) else {
            return Vec::new();
        };
        def.bases
            .iter()
            .filter(|&&id| id != def.id)
            .filter_map(|id| defs().find(|d| d.id == *id).map(|d| d.name.clone()))
            .collect()
    }
}

/// Creation code (library placeholders zeroed), the byte ranges to ignore when comparing it
/// with init code, and its source map.
pub type Creation = (Vec<u8>, Vec<(usize, usize)>, String);

/// The source side of one artifact: its source maps, creation code and compilation.
#[derive(Debug)]
pub struct ArtifactSources {
    pub runtime_map: Option<String>,
    pub creation: Option<Creation>,
    pub unit: Arc<Unit>,
    /// solc's metadata of the contract (settings, sources): a map that does not fit its code is
    /// rebuilt from it ([`super::rebuild`]).
    pub metadata: Option<Arc<Metadata>>,
}

impl ArtifactSources {
    /// Whether `init` (a CREATE frame's input) starts with this creation code: compared up to
    /// the code's length (constructor arguments follow), ignoring library placeholders and the
    /// embedded runtime code's metadata.
    pub fn creation_matches(&self, init: &[u8]) -> bool {
        let Some((code, mask, _)) = &self.creation else {
            return false;
        };
        starts_with_code(code, mask, init)
    }
}

/// Whether compiled code `mine` (metadata stripped) is `theirs`, byte by byte except where
/// `mask` says (immutables, library addresses); without a mask ("unknown"), a zero byte of
/// `mine` may be anything.
pub fn same_code(mine: &[u8], mask: Option<&[(usize, usize)]>, theirs: &[u8]) -> bool {
    // Compared a chunk at a time (a memcmp), bytes looked at one by one only in chunks that
    // differ: a contract's code is matched against a project's artifacts many times a run.
    const CHUNK: usize = 64;
    let allowed = |i: usize, a: u8| match mask {
        Some(ranges) => ranges.iter().any(|(s, l)| i >= *s && i < s + l),
        None => a == 0,
    };
    !mine.is_empty()
        && mine.len() == theirs.len()
        && mine
            .chunks(CHUNK)
            .zip(theirs.chunks(CHUNK))
            .enumerate()
            .all(|(c, (a, b))| {
                a == b
                    || a.iter()
                        .zip(b)
                        .enumerate()
                        .all(|(j, (x, y))| x == y || allowed(c * CHUNK + j, *x))
            })
}

/// Whether `init` (a CREATE's input) starts with the creation code `code`, ignoring its
/// `mask`ed ranges (library placeholders, the embedded runtime code's metadata).
pub fn starts_with_code(code: &[u8], mask: &[(usize, usize)], init: &[u8]) -> bool {
    init.get(..code.len())
        .is_some_and(|start| same_code(code, Some(mask), start))
}

/// Byte offset of the start of 1-based `line`.
pub(super) fn line_offset(text: &str, line: usize) -> Option<usize> {
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// Paths a source file named `name` by the compiler may be found at: relative to each of
/// `roots`, or as given.
pub fn disk_candidates(name: &str, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = roots.iter().map(|r| r.join(name)).collect();
    out.push(PathBuf::from(name));
    out
}

/// The compilation unit of a standard-JSON output (`sources: {path: {id, ast}}`), with texts
/// from `input_sources` (`{path: {content}}`) when given, else from disk under `roots` — or,
/// for a remote answer (`roots` `None`), nowhere.
pub fn unit_from_standard_json(
    output: &Value,
    input_sources: Option<&Value>,
    roots: Option<&[PathBuf]>,
    hashes: &SourceHashes,
    mut asts: Option<&mut HashMap<String, Option<AstDecls>>>,
) -> Unit {
    let mut unit = Unit::default();
    let Some(sources) = output.get("sources").and_then(Value::as_object) else {
        return unit;
    };
    for (path, s) in sources {
        let Some(id) = s.get("id").and_then(Value::as_i64) else {
            continue;
        };
        // Read beside the output ([`crate::names::artifacts`]' build parse), else from it.
        let (ast, given) = match asts.as_deref_mut().and_then(|a| a.remove(path)) {
            Some(decls) => (decls, true),
            None => match s.get("ast") {
                Some(a) => (AstDecls::from_value(a), true),
                None => (None, false),
            },
        };
        let inline = input_sources
            .and_then(|i| i.get(path))
            .and_then(|s| s.get("content"))
            .and_then(Value::as_str);
        let origin = match (inline, roots) {
            (Some(t), _) => TextOrigin::Inline(t.to_string()),
            (None, Some(roots)) => {
                TextOrigin::Disk(disk_candidates(path, roots), hashes.get(path).copied())
            }
            (None, None) => TextOrigin::Remote,
        };
        unit.files.insert(
            id as i32,
            Arc::new(SourceFile {
                ast_unread: given && ast.is_none(),
                ..SourceFile::new(path.clone(), origin, ast)
            }),
        );
    }
    unit
}

/// A compilation unit from an id → path table (Foundry's build info `source_id_to_path`, solc's
/// combined-JSON `sourceList`), texts read from disk under `roots`, each file's AST from `asts`
/// by its path when some artifact carried it.
pub fn unit_from_paths(
    paths: &[(i32, String)],
    roots: &[PathBuf],
    hashes: &SourceHashes,
    mut asts: HashMap<String, GivenAst>,
) -> Unit {
    let mut unit = Unit::default();
    for (id, path) in paths {
        unit.files.insert(
            *id,
            Arc::new(SourceFile::given(
                path.clone(),
                TextOrigin::Disk(disk_candidates(path, roots), hashes.get(path).copied()),
                asts.remove(path),
            )),
        );
    }
    unit
}

/// The directories a JSON file's relative source paths are tried under: the file's directory
/// and its ancestors, then the working directory.
pub fn roots_for(file: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = file
        .parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .map(Path::to_path_buf)
        .collect();
    if let Ok(cwd) = std::env::current_dir() {
        out.push(cwd);
    }
    out
}
