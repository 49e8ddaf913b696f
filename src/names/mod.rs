//! Where names come from: the sources that turn selectors into function, error and event names,
//! loaded once per run and attached to the contracts of one trace.
//!
//! Order (first match wins, see [`Decoder`]): per contract, an artifact whose runtime code matches
//! the contract's code (from `--abi` trees or the Foundry/Hardhat project around the working
//! directory) or a verified ABI from an explorer or Sourcify ([`explorer`]); then every `--abi`
//! and project ABI merged; then the bundled signature table plus `--signatures` files, and, when
//! the user opted in, Sourcify's signature database for what is still unnamed ([`signature_db`]).
//! Proxies are followed: a contract whose EIP-1967 or EIP-1822 implementation slot holds an
//! address (read from the replayed state), or which DELEGATECALLs its own calldata to another
//! contract in the trace, is also named by that implementation's ABI.
//!
//! Uses [`render`](crate::render) (ABIs and the decoder), [`source`](crate::source) (the replayed
//! state) and [`trace`](crate::trace) (which contracts a trace touched).

pub mod artifacts;
pub mod ast_layout;
mod code_maps;
mod compiled_layout;
pub mod explorer;
pub mod gas_source;
mod infer;
pub mod layout;
pub mod namespaces;
mod notes;
pub mod proxy;
pub mod signature_db;
pub mod sources;
pub mod state;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use alloy_primitives::{Address, Bytes, B256};

use crate::render::abi::{Abi, LazyAbi};
use crate::render::decoder::Decoder;
use crate::replay::TraceResult;
use crate::source::StateSnapshot;
use crate::trace::call::CallFrame;
use crate::trace::gas_context::JumpMarks;
use sources::CodeMap;

pub use artifacts::Artifact;
pub use compiled_layout::RebuiltLayout;

/// Decoded source maps by (code hash, creation code?); `None`: no artifact matched.
type MapCache = HashMap<(B256, bool), Option<Arc<CodeMap>>>;

/// Why a name source could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum NamesError {
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    #[error("{0}: {1}")]
    Abi(String, String),
    #[error("explorer: {0}")]
    Explorer(String),
}

/// The name sources of a run.
#[derive(Default)]
pub struct Names {
    /// `--abi` files and trees, project ABIs, merged; plus `--signatures`.
    base: Decoder,
    /// Artifacts with their code and source maps: shared with a gas profiler (jump markers).
    index: Arc<SourceIndex>,
    /// Verified ABIs by address, when an explorer or Sourcify is configured.
    pub explorer: Option<explorer::Explorer>,
    /// Names for selectors and topics nobody verified, when the user opted in.
    pub signature_db: Option<signature_db::SignatureDb>,
}

/// The artifacts of a run, for matching deployed code and finding source maps.
#[derive(Default)]
struct SourceIndex {
    /// Artifacts with runtime code, for matching deployed code.
    artifacts: Vec<Artifact>,
    /// Build infos holding whole compilations (Hardhat's), read on first need.
    build_infos: Vec<PathBuf>,
    from_build_infos: OnceLock<Vec<Artifact>>,
    /// Artifacts found after loading: Sourcify's verified sources, maps and layouts.
    fetched: Mutex<Vec<Arc<Artifact>>>,
    /// Decoded source maps by (code hash, creation code?): each decoded once per run.
    maps: Mutex<MapCache>,
    /// `--solc`: the compiler a map that does not fit its code is rebuilt with (else one is
    /// looked for where Foundry and Hardhat keep them).
    solc: Option<PathBuf>,
    /// What the user should know about the maps (one that did not fit, rebuilt or not).
    notes: Mutex<Vec<String>>,
    /// Storage layouts compiled for artifacts whose build has none, by artifact (its sources'
    /// address): each compiled once per run, its note kept with it.
    layouts: Mutex<HashMap<usize, Arc<RebuiltLayout>>>,
    /// Where compiled layouts are kept between runs, by their metadata's digest.
    layout_cache: Option<PathBuf>,
    /// What names a contract's slots, by (its address, its artifact's address in memory), with
    /// the notes laying it out made: laid out once per run ([`state::Namer`]).
    laid: Mutex<HashMap<(Address, usize), Arc<state::LaidOut>>>,
}

impl Names {
    /// Loads `--abi` paths (files or directories), `--signatures` files, and, when `discover_in`
    /// is given, the artifacts of the Foundry/Hardhat project containing that directory.
    pub fn load(
        abi_paths: &[String],
        signature_paths: &[String],
        discover_in: Option<&Path>,
    ) -> Result<Names, NamesError> {
        Names::load_kept(abi_paths, signature_paths, discover_in, None)
    }

    /// [`Names::load`], the artifact trees (`--abi DIR`, the project's) and `--abi` files kept
    /// between runs in the directory `kept` ([`artifacts::load_tree_cached`],
    /// [`artifacts::load_file_cached`]).
    pub fn load_kept(
        abi_paths: &[String],
        signature_paths: &[String],
        discover_in: Option<&Path>,
        kept: Option<&Path>,
    ) -> Result<Names, NamesError> {
        let mut found: Vec<Artifact> = Vec::new();
        let mut build_infos = Vec::new();
        // Each tree's or file's ABIs merged, then these merged in order: the same items, in the
        // same order, as all the artifacts' merged one by one. One tree's merge is read back
        // only when a lookup gets that far.
        let mut merged: Option<LazyAbi> = None;
        let mut add = |tree: artifacts::Tree| {
            found.extend(tree.artifacts);
            build_infos.extend(tree.build_infos);
            merged = match (merged.take(), tree.merged) {
                (Some(m), Some(abi)) => {
                    let mut m = (**m.get()).clone();
                    m.merge((**abi.get()).clone());
                    Some(LazyAbi::read(m))
                }
                (m, abi) => m.or(abi),
            };
        };
        for p in abi_paths {
            let path = Path::new(p);
            if path.is_dir() {
                add(artifacts::load_tree_cached(path, kept)?);
            } else {
                add(artifacts::load_file_cached(path, kept)?);
            }
        }
        if let Some(dir) = discover_in.and_then(artifacts::find_project) {
            add(artifacts::load_tree_cached(&dir, kept)?);
        }
        let mut base = Decoder::new_lazy(merged);
        for p in signature_paths {
            base.add_signatures(load_signatures(Path::new(p))?);
        }
        let notes = unread_asts(&found);
        Ok(Names {
            base,
            index: Arc::new(SourceIndex {
                artifacts: found,
                build_infos,
                notes: Mutex::new(notes),
                ..SourceIndex::default()
            }),
            ..Names::default()
        })
    }

    /// Whether any source map may be found: a loaded artifact has one, or a build info waits.
    /// Only then does a trace record the pcs that locate failures.
    pub fn has_sources(&self) -> bool {
        self.index.has_sources()
    }

    /// The solc a source map that does not fit its code is rebuilt with (`--solc`); without
    /// it one of the build's version is looked for where Foundry and Hardhat keep compilers.
    pub fn with_solc(mut self, solc: Option<PathBuf>) -> Names {
        if let Some(index) = Arc::get_mut(&mut self.index) {
            index.solc = solc;
        }
        self
    }

    /// Notes about the source maps for stderr (a map that did not fit its code, and whether it
    /// was rebuilt), each once.
    pub fn take_notes(&self) -> Vec<String> {
        self.index
            .notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// The decoded source map of `code` (a CREATE's init code when `creation`), decoded once
    /// per code hash.
    pub fn code_map(&self, code: &[u8], creation: bool) -> Option<Arc<CodeMap>> {
        self.index.code_map(code, creation)
    }

    /// The jump markers of source maps, for a gas profiler that keeps internal functions.
    pub fn jump_marks(&self) -> Arc<dyn JumpMarks> {
        self.index.clone()
    }

    /// The decoder without per-contract ABIs (when no state is at hand).
    pub fn decoder(&self) -> Decoder {
        self.base.clone()
    }

    /// The decoder for one trace: every contract the trace touched gets the ABI of its matching
    /// artifact or verified source, proxies their implementation's too.
    pub fn decoder_for(&self, result: &TraceResult, state: &StateSnapshot) -> Decoder {
        let mut decoder = self.base.clone();
        // Contracts created: named by the artifact whose creation code their init code starts
        // with (the constructor's arguments follow it).
        if let TraceResult::Call(root) = result {
            self.name_creations(root, &mut decoder);
        }
        let touched = proxy::touched(result);
        let pairs = proxy::implementations(&touched, state);
        let code = |addr: &Address| {
            touched
                .contracts
                .get(addr)
                .cloned()
                .flatten()
                .or_else(|| code_of(state, addr))
        };
        let mut wanted: Vec<Address> = touched.contracts.keys().copied().collect();
        wanted.extend(pairs.iter().map(|(_, imp)| *imp));
        wanted.sort();
        wanted.dedup();
        // Only contracts (accounts with code) are looked up; explorer lookups run in parallel.
        let mut own: BTreeMap<Address, Arc<Abi>> = BTreeMap::new();
        let mut ask: Vec<Address> = Vec::new();
        for addr in wanted {
            let Some(c) = code(&addr) else { continue };
            match self.artifact_for_code(&c) {
                Some(a) => {
                    own.insert(addr, a.abi().clone());
                    if !a.name.is_empty() {
                        decoder.add_label(addr, a.name.clone());
                    }
                }
                None => {
                    if let Some((a, differ)) = self.near_artifact(&c) {
                        let note = format!(
                            "{} runs code like the artifact {} but not its code ({differ} of \
                             {} bytes differ past metadata and immutables): rebuilt since it was \
                             deployed? Its names and lines are not shown",
                            addr.to_checksum(None),
                            a.name,
                            artifacts::strip_metadata(&c).len(),
                        );
                        self.index.note(note);
                    }
                    ask.push(addr)
                }
            }
        }
        if let Some(e) = &self.explorer {
            for (addr, abi) in e.abis(&ask) {
                own.insert(addr, abi);
            }
            self.index.add(e.take_artifacts());
        }
        for (proxy, implementation) in pairs {
            if let Some(imp) = own.get(&implementation).cloned() {
                let mut merged = own.get(&proxy).map(|a| (**a).clone()).unwrap_or_default();
                merged.merge((*imp).clone());
                own.insert(proxy, Arc::new(merged));
            }
        }
        for (addr, abi) in own {
            decoder.add_contract(addr, abi);
        }
        let notes = self.source_notes(result, state, &decoder);
        decoder.set_sources(notes);
        decoder
    }

    /// Looks up, by the explorer (Sourcify), the contracts of `result` whose code no local
    /// source map covers; whether any source maps were found. A gas report by line or function
    /// follows internal functions while it runs, so it is run again when this finds maps.
    pub fn prefetch_sources(&self, result: &TraceResult, state: &StateSnapshot) -> bool {
        let Some(e) = &self.explorer else {
            return false;
        };
        let touched = proxy::touched(result);
        let ask: Vec<Address> = touched
            .contracts
            .iter()
            .filter_map(|(addr, code)| {
                let code = code.clone().or_else(|| code_of(state, addr))?;
                self.code_map(&code, false).is_none().then_some(*addr)
            })
            .collect();
        e.abis(&ask);
        let found = e.take_artifacts();
        let any = !found.is_empty();
        self.index.add(found);
        any
    }

    /// Starts reading, on a thread of its own, what naming the contracts of `state` will first
    /// ask of their artifacts — each matched one's ABI (`abis`: calls will be decoded) and
    /// declared layouts (`layouts`: storage will be named; its compilation's ASTs among them)
    /// — while the caller replays the transaction: on a first run in a project these are most
    /// of what naming costs once the artifacts are read (issue 44). Nothing waits for it: what
    /// it has not read when asked is read then, once (each is a `OnceLock`).
    pub fn read_ahead(&self, state: &StateSnapshot, abis: bool, layouts: bool) {
        let codes: Vec<Bytes> = state
            .accounts
            .values()
            .map(|a| a.code.clone())
            .filter(|c| !c.is_empty())
            .collect();
        if codes.is_empty() || self.index.artifacts.is_empty() || !(abis || layouts) {
            return;
        }
        let index = self.index.clone();
        // The main thread's stack: an AST is read as deep as serde_json lets it.
        let _ = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                for code in &codes {
                    if let Some(a) = index.artifact_for_code(code) {
                        if abis {
                            a.abi();
                        }
                        if layouts {
                            a.declared();
                        }
                    }
                }
            });
    }

    /// The artifact whose runtime code is `code` (for storage layouts).
    pub fn artifact_for_code(&self, code: &[u8]) -> Option<&Artifact> {
        self.index.artifact_for_code(code)
    }

    /// The verified artifact (Sourcify's, fetched already) whose runtime code is `code`.
    pub fn fetched_for_code(&self, code: &[u8]) -> Option<Arc<Artifact>> {
        let fetched = self.index.fetched.lock().ok()?;
        fetched.iter().find(|a| a.matches(code)).cloned()
    }

    /// Whether Sourcify is asked for what no loaded artifact names.
    fn asks_sourcify(&self) -> bool {
        self.explorer.as_ref().is_some_and(|e| e.sourcify.is_some())
    }

    /// Asks Sourcify (when configured) for the contracts at `addrs`, and their EIP-1967
    /// implementations, whose code no loaded or fetched artifact matches: their verified
    /// compilations (with solc's `storageLayout`) name their storage. Lookups run in parallel
    /// and are cached on disk as the decoder's are.
    pub fn fetch_verified(&self, state: &StateSnapshot, addrs: &[Address]) {
        let Some(e) = self.explorer.as_ref().filter(|e| e.sourcify.is_some()) else {
            return;
        };
        let mut ask: Vec<Address> = Vec::new();
        for a in addrs {
            let implementation = proxy::eip1967_implementation(state, *a);
            for x in std::iter::once(*a).chain(implementation) {
                let Some(c) = code_of(state, &x) else {
                    continue;
                };
                if self.artifact_for_code(&c).is_none() && self.fetched_for_code(&c).is_none() {
                    ask.push(x);
                }
            }
        }
        ask.sort();
        ask.dedup();
        if ask.is_empty() {
            return;
        }
        e.abis(&ask);
        self.index.add(e.take_artifacts());
    }

    /// The artifact whose creation code `init` begins with, and that code's length (what
    /// follows is the constructor's arguments).
    pub fn artifact_for_creation(&self, init: &[u8]) -> Option<(&Artifact, usize)> {
        self.index.artifacts.iter().find_map(|a| {
            if !a.creation_matches(init) {
                return None;
            }
            let (code, _, _) = a.sources()?.creation.as_ref()?;
            Some((a, code.len()))
        })
    }

    /// Names every CREATE under `f` whose init code an artifact's creation code begins.
    fn name_creations(&self, f: &CallFrame, decoder: &mut Decoder) {
        if f.kind.is_create() {
            let found = self.artifact_for_creation(&f.input);
            if let Some((a, len)) = found.filter(|(a, _)| !a.name.is_empty()) {
                decoder.add_creation(&f.input, a.name.clone(), len, a.abi().clone());
            }
        }
        for c in &f.calls {
            self.name_creations(c, decoder);
        }
    }

    /// The artifact whose code `code` nearly is (a rebuild since the deployment: most bytes
    /// equal, the length within a few percent), with how many bytes differ; for saying why a
    /// contract's names are missing.
    fn near_artifact(&self, code: &[u8]) -> Option<(&Artifact, usize)> {
        self.index
            .artifacts
            .iter()
            .filter_map(|a| Some((a, a.difference(code)?)))
            .min_by_key(|(_, d)| *d)
    }
}

impl SourceIndex {
    /// The artifact whose runtime code is `code`.
    fn artifact_for_code(&self, code: &[u8]) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| a.matches(code))
    }

    /// Whether any source map may be found: a loaded artifact has one, or a build info waits.
    /// Only then does a trace record the pcs that locate failures.
    fn has_sources(&self) -> bool {
        !self.build_infos.is_empty() || self.artifacts.iter().any(Artifact::has_sources)
    }

    /// Adds artifacts found after loading (Sourcify's verified sources); codes no map matched
    /// before are looked up again.
    fn add(&self, found: Vec<Artifact>) {
        if found.is_empty() {
            return;
        }
        if let Ok(mut f) = self.fetched.lock() {
            f.extend(found.into_iter().map(Arc::new));
        }
        if let Ok(mut m) = self.maps.lock() {
            m.retain(|_, hit| hit.is_some());
        }
    }

    /// A note for stderr about the maps, said once per run.
    fn note(&self, note: String) {
        if let Ok(mut n) = self.notes.lock() {
            if !n.contains(&note) {
                n.push(note);
            }
        }
    }
}

/// One note per source file whose AST the build gave in a shape other than solc's compact JSON
/// (its functions are then read from its text, its enums shown by number, its ERC-7201
/// namespaces not named).
fn unread_asts(found: &[Artifact]) -> Vec<String> {
    let mut paths: Vec<String> = found.iter().flat_map(Artifact::unread_asts).collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| {
            format!(
                "the build's AST of {p} is not solc's compact AST: its functions are read from \
                 its text, its enums shown by number, its ERC-7201 namespaces not named"
            )
        })
        .collect()
}

fn code_of(state: &StateSnapshot, addr: &Address) -> Option<Bytes> {
    state
        .accounts
        .get(addr)
        .map(|a| a.code.clone())
        .filter(|c| !c.is_empty())
}

/// A `--signatures` file: human-readable declarations, one per line, or a JSON ABI.
pub fn load_signatures(path: &Path) -> Result<Abi, NamesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    let t = text.trim_start();
    let abi = if t.starts_with('[') || t.starts_with('{') {
        Abi::from_json(&text)
    } else {
        Abi::from_declarations(&text)
    };
    abi.map_err(|e| NamesError::Abi(shown, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A code's source map is decoded once per run: the second lookup is the same map.
    #[test]
    fn a_source_map_is_decoded_once_per_code_hash() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/reverted-nested.build-info.json"
        );
        let names = Names::load(&[path.to_string()], &[], None).unwrap();
        let info: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let hex = info["output"]["contracts"]["Hub.sol"]["Hub"]["evm"]["deployedBytecode"]
            ["object"]
            .as_str()
            .unwrap();
        let code = alloy_primitives::hex::decode(hex).unwrap();
        let first = names.code_map(&code, false).expect("Hub's map");
        let again = names.code_map(&code, false).expect("Hub's map");
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first.contract, "Hub");
        // Jump markers come from the same decoded map.
        let marks = names.jump_marks().marks(&code, false).expect("markers");
        assert_eq!(marks.len(), code.len());
        assert!(marks.contains(&b'i') && marks.contains(&b'o'));
    }

    /// An AST of another shape (here `nodes` a number) loses only what the AST gave, with one
    /// note naming the file; the build's other sources keep theirs.
    #[test]
    fn an_ast_of_another_shape_gives_one_note() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/contracts/oz/solc-output-state.json"
        );
        let mut out: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        out["sources"]["State.sol"]["ast"]["nodes"] = serde_json::json!(7);
        let dir = std::env::temp_dir().join(format!("chaintrace-ast-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("out.json");
        std::fs::write(&bad, out.to_string()).unwrap();
        let names = Names::load(&[bad.display().to_string()], &[], None).unwrap();
        let notes = names.take_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("the build's AST of State.sol is not solc's compact AST"),
            "{notes:?}"
        );
        let token = names
            .index
            .artifacts
            .iter()
            .find(|a| a.name == "Token")
            .unwrap();
        let unit = &token.sources().unwrap().unit;
        let file = |p: &str| unit.files.values().find(|f| f.path == p).unwrap().clone();
        assert!(file("State.sol").storage().contracts.is_empty());
        assert!(!file("@openzeppelin/contracts/token/ERC20/ERC20.sol")
            .storage()
            .contracts
            .is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }
}
