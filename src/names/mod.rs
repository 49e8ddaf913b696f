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
pub mod explorer;
pub mod layout;
pub mod proxy;
pub mod signature_db;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use alloy_primitives::{Address, Bytes};

use crate::render::abi::Abi;
use crate::render::decoder::Decoder;
use crate::replay::TraceResult;
use crate::source::StateSnapshot;

pub use artifacts::Artifact;

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
    /// Artifacts with runtime code, for matching deployed code.
    artifacts: Vec<Artifact>,
    /// Verified ABIs by address, when an explorer or Sourcify is configured.
    pub explorer: Option<explorer::Explorer>,
    /// Names for selectors and topics nobody verified, when the user opted in.
    pub signature_db: Option<signature_db::SignatureDb>,
}

impl Names {
    /// Loads `--abi` paths (files or directories), `--signatures` files, and, when `discover_in`
    /// is given, the artifacts of the Foundry/Hardhat project containing that directory.
    pub fn load(
        abi_paths: &[String],
        signature_paths: &[String],
        discover_in: Option<&Path>,
    ) -> Result<Names, NamesError> {
        let mut found: Vec<Artifact> = Vec::new();
        for p in abi_paths {
            let path = Path::new(p);
            if path.is_dir() {
                found.extend(artifacts::load_tree(path)?);
            } else {
                found.extend(artifacts::load_file(path)?);
            }
        }
        if let Some(dir) = discover_in.and_then(artifacts::find_project) {
            found.extend(artifacts::load_tree(&dir)?);
        }
        let mut merged: Option<Abi> = None;
        for a in &found {
            match &mut merged {
                Some(m) => m.merge((*a.abi).clone()),
                None => merged = Some((*a.abi).clone()),
            }
        }
        let mut base = Decoder::new(merged);
        for p in signature_paths {
            base.add_signatures(load_signatures(Path::new(p))?);
        }
        Ok(Names {
            base,
            artifacts: found,
            explorer: None,
            signature_db: None,
        })
    }

    /// The decoder without per-contract ABIs (when no state is at hand).
    pub fn decoder(&self) -> Decoder {
        self.base.clone()
    }

    /// The decoder for one trace: every contract the trace touched gets the ABI of its matching
    /// artifact or verified source, proxies their implementation's too.
    pub fn decoder_for(&self, result: &TraceResult, state: &StateSnapshot) -> Decoder {
        let mut decoder = self.base.clone();
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
                    own.insert(addr, a.abi.clone());
                    if !a.name.is_empty() {
                        decoder.add_label(addr, a.name.clone());
                    }
                }
                None => ask.push(addr),
            }
        }
        if let Some(e) = &self.explorer {
            for (addr, abi) in e.abis(&ask) {
                own.insert(addr, abi);
            }
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
        decoder
    }

    /// The artifact whose runtime code is `code` (for storage layouts).
    pub fn artifact_for_code(&self, code: &[u8]) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| a.matches(code))
    }

    /// Names of storage slots for the access table: for each contract whose code matches an
    /// artifact with a `storageLayout`, the named slots among `slots`, mapping keys guessed from
    /// `keys` (see [`layout`]).
    pub fn slot_names(
        &self,
        state: &StateSnapshot,
        slots: &[(Address, alloy_primitives::U256)],
        keys: &[alloy_primitives::B256],
    ) -> std::collections::HashMap<(Address, alloy_primitives::U256), String> {
        let mut out = std::collections::HashMap::new();
        let mut per_contract: BTreeMap<Address, std::collections::HashMap<_, _>> = BTreeMap::new();
        for (addr, slot) in slots {
            let names = per_contract.entry(*addr).or_insert_with(|| {
                code_of(state, addr)
                    .and_then(|c| self.artifact_for_code(&c))
                    .and_then(|a| a.storage_layout.as_ref())
                    .map(|l| layout::slot_names(l, keys))
                    .unwrap_or_default()
            });
            let name = names
                .get(slot)
                .cloned()
                .or_else(|| layout::array_element(names, *slot));
            if let Some(n) = name {
                out.insert((*addr, *slot), n);
            }
        }
        out
    }
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
