//! Verified ABIs by address: an Etherscan-compatible explorer API (`module=contract&action=getabi`,
//! Etherscan's v2 multichain API and Blockscout answer it) and Sourcify's v2 lookup
//! (`/v2/contract/{chainId}/{address}`: the ABI, and the verified sources with the code's source
//! maps, for locating failures), used only when configured, cached on disk per chain and address.
//!
//! Nothing here runs without an explicit opt-in (`--explorer-api URL`, `ETHERSCAN_API_KEY` on a
//! chain whose preset carries an explorer API, or `--sourcify`/`--sourcify-url`), so traces stay offline by
//! default. A failed or unverified lookup is remembered for the run and never fails the trace:
//! names are a convenience, the trace is the product. A lookup that failed (an HTTP error, a
//! timeout, an answer that is not JSON) is not "unverified": it is kept in [`Explorer::failed`]
//! and named on stderr, so missing names are never passed off as the contract having none.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy_primitives::Address;
use serde_json::Value;

use super::artifacts::Artifact;
use crate::render::abi::Abi;

/// Why a lookup of names over HTTP (an explorer, Sourcify, the signature database) failed, as
/// stderr names it after the source. No message holds the URL: it may carry an API key.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// No HTTP answer (a timeout, a refused connection, an answer too large).
    #[error("{}", .0.reason())]
    Transport(crate::rpc::transport::Failure),
    /// An HTTP status other than the ones the API documents for an answer.
    #[error("HTTP {0}")]
    Status(u16),
    /// A body that is not JSON.
    #[error("HTTP {status}, answer is not JSON ({source})")]
    NotJson {
        status: u16,
        source: serde_json::Error,
    },
    /// The service answered, refusing (a bad key, a rate limit): its own words.
    #[error("{}", format!("refused: {message} {result}").trim_end())]
    Refused { message: String, result: String },
    /// The signature database answered that it cannot: its `error` (or `message`).
    #[error("the database said no: {0}")]
    SaidNo(String),
    /// The explorer's `result` is not a string (of JSON).
    #[error("its `result` is not a string")]
    ResultNotText,
    /// The explorer's `result` string is not a JSON ABI (an array).
    #[error("its `result` is not a JSON ABI")]
    ResultNotAbi,
    /// Sourcify's answer has no `abi` array.
    #[error("its answer has no `abi` array")]
    NoAbi,
    /// The signature database's answer has no `result` object.
    #[error("the answer has no `result` object")]
    NoResult,
    /// An entry of the signature database's `result` that is not a list of names.
    #[error("`result.{space}[{key}]` is {got}, not a list")]
    NotAList {
        space: &'static str,
        key: String,
        got: Value,
    },
}

/// Sourcify's public server.
pub const SOURCIFY_DEFAULT: &str = "https://sourcify.dev/server";
/// The explorer API a chain preset carries (Etherscan's v2 API for Ethereum mainnet; chains
/// 1329/1328 carry none).
pub fn preset_api(chain_id: u64) -> Option<&'static str> {
    crate::chain::preset(chain_id).and_then(|p| p.explorer_api)
}

/// Where verified ABIs come from, and where they are cached.
pub struct Explorer {
    pub chain_id: u64,
    /// Etherscan-compatible API base URL and key.
    pub api: Option<(String, Option<String>)>,
    /// Sourcify server base URL.
    pub sourcify: Option<String>,
    /// `<cache>/abi/<chain id>/<address>.json` holds each verified ABI found.
    pub cache_dir: Option<PathBuf>,
    pub timeout: Duration,
    seen: Mutex<HashMap<Address, Option<Arc<Abi>>>>,
    /// Lookups that went to the network, for the `names:` line on stderr.
    pub fetched: Mutex<Vec<String>>,
    /// Lookups that failed, with why (no URL, no key), for stderr.
    pub failed: Mutex<Vec<String>>,
    /// Cache entries that could not be written, with why, for stderr.
    pub cache_failed: Mutex<Vec<String>>,
    /// Contracts Sourcify verified with their sources and source maps, not yet handed to the
    /// run's source index ([`Explorer::take_artifacts`]).
    artifacts: Mutex<Vec<Artifact>>,
}

impl Explorer {
    pub fn new(
        chain_id: u64,
        api: Option<(String, Option<String>)>,
        sourcify: Option<String>,
        cache_dir: Option<PathBuf>,
        timeout: Duration,
    ) -> Self {
        Explorer {
            chain_id,
            api,
            sourcify,
            cache_dir,
            timeout,
            seen: Mutex::new(HashMap::new()),
            fetched: Mutex::new(Vec::new()),
            failed: Mutex::new(Vec::new()),
            cache_failed: Mutex::new(Vec::new()),
            artifacts: Mutex::new(Vec::new()),
        }
    }

    /// The artifacts with source maps that Sourcify's answers carried since the last call.
    pub fn take_artifacts(&self) -> Vec<Artifact> {
        self.artifacts
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default()
    }

    /// `<cache>/sourcify/<chain id>/<address>.json`: Sourcify's whole answer (sources, maps).
    fn sourcify_cache_path(&self, addr: Address) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(
            dir.join("sourcify")
                .join(self.chain_id.to_string())
                .join(format!("{addr:#x}.json")),
        )
    }

    /// Keeps the source side of a Sourcify answer, when it has one.
    fn keep_sources(&self, answer: &Value) {
        if let Some(a) = super::artifacts::from_sourcify(answer) {
            if let Ok(mut kept) = self.artifacts.lock() {
                kept.push(a);
            }
        }
    }

    fn cache_path(&self, addr: Address) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(
            dir.join("abi")
                .join(self.chain_id.to_string())
                .join(format!("{addr:#x}.json")),
        )
    }

    /// The verified ABI of `addr`: from memory, the disk cache, the explorer API, then Sourcify.
    pub fn abi(&self, addr: Address) -> Option<Arc<Abi>> {
        if let Some(known) = self.seen.lock().ok()?.get(&addr) {
            return known.clone();
        }
        let found = self.lookup(addr).map(Arc::new);
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(addr, found.clone());
        }
        found
    }

    /// [`abi`](Self::abi) for many addresses, up to 8 lookups at a time.
    pub fn abis(&self, addrs: &[Address]) -> Vec<(Address, Arc<Abi>)> {
        if addrs.is_empty() {
            return Vec::new();
        }
        let per = addrs.len().div_ceil(8);
        std::thread::scope(|s| {
            let handles: Vec<_> = addrs
                .chunks(per)
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .filter_map(|a| self.abi(*a).map(|abi| (*a, abi)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    }

    fn lookup(&self, addr: Address) -> Option<Abi> {
        if self.sourcify.is_some() {
            let answer = self
                .sourcify_cache_path(addr)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if let Some(answer) = answer {
                if let Some(abi) = answer.get("abi").and_then(|a| Abi::from_value(a).ok()) {
                    self.keep_sources(&answer);
                    return Some(abi);
                }
            }
        }
        let path = self.cache_path(addr);
        if let Some(p) = &path {
            if let Ok(text) = std::fs::read_to_string(p) {
                if let Ok(abi) = Abi::from_json(&text) {
                    return Some(abi);
                }
            }
        }
        let note = |from: &str, why: String| {
            if let Ok(mut f) = self.failed.lock() {
                f.push(format!("{addr:#x} ({from}: {why})"));
            }
        };
        let asked = |from: &'static str, r: Result<Option<Value>, LookupError>| match r {
            Ok(found) => found.map(|a| (a, from)),
            Err(why) => {
                note(from, why.to_string());
                None
            }
        };
        // Sourcify first when asked for: its answer carries the sources and source maps too.
        let (answer, from) = asked("sourcify", self.ask_sourcify(addr))
            .or_else(|| asked("explorer", self.ask_api(addr)))?;
        let abi_json = match from {
            "sourcify" => answer.get("abi").cloned().unwrap_or_default(),
            _ => answer.clone(),
        };
        let abi = match Abi::from_value(&abi_json) {
            Ok(a) => a,
            Err(e) => {
                note(from, format!("its ABI cannot be read: {e}"));
                return None;
            }
        };
        if let Ok(mut f) = self.fetched.lock() {
            f.push(format!("{addr:#x} ({from})"));
        }
        if from == "sourcify" {
            self.keep_sources(&answer);
            if let Some(p) = self.sourcify_cache_path(addr) {
                self.store(&p, &answer);
            }
        }
        if let Some(p) = path {
            self.store(&p, &abi_json);
        }
        Some(abi)
    }

    /// The explorer's verified ABI of `addr`: `Ok(None)` when not configured or not verified
    /// (`status` "0"), `Err` when the lookup failed.
    fn ask_api(&self, addr: Address) -> Result<Option<Value>, LookupError> {
        let Some((base, key)) = self.api.as_ref() else {
            return Ok(None);
        };
        let mut url = format!(
            "{base}{}chainid={}&module=contract&action=getabi&address={addr:#x}",
            if base.contains('?') { "&" } else { "?" },
            self.chain_id
        );
        if let Some(k) = key {
            url.push_str("&apikey=");
            url.push_str(k);
        }
        let (status, body) = http_get_json(&url, self.timeout)?;
        if status != 200 {
            return Err(LookupError::Status(status));
        }
        if body.get("status").and_then(Value::as_str) != Some("1") {
            // Etherscan answers status "0" for an unverified contract, and also for a bad key
            // or a rate limit: only the first is "no ABI".
            let said = body.get("result").and_then(Value::as_str).unwrap_or("");
            return if said.to_ascii_lowercase().contains("not verified") {
                Ok(None)
            } else {
                let message = body.get("message").and_then(Value::as_str).unwrap_or("");
                Err(LookupError::Refused {
                    message: message.to_string(),
                    result: said.to_string(),
                })
            };
        }
        let text = body
            .get("result")
            .and_then(Value::as_str)
            .ok_or(LookupError::ResultNotText)?;
        serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_array)
            .map(Some)
            .ok_or(LookupError::ResultNotAbi)
    }

    /// Sourcify's answer for `addr` (its ABI, and the sources and source maps of the verified
    /// compilation): `Ok(None)` when not configured or not verified (404), `Err` when the
    /// lookup failed.
    fn ask_sourcify(&self, addr: Address) -> Result<Option<Value>, LookupError> {
        let Some(base) = self.sourcify.as_ref() else {
            return Ok(None);
        };
        let base = base.trim_end_matches('/');
        let url = format!(
            "{base}/v2/contract/{}/{addr:#x}?fields={SOURCIFY_FIELDS}",
            self.chain_id
        );
        let (status, body) = http_get_json(&url, self.timeout)?;
        match status {
            200 if body.get("abi").is_some_and(Value::is_array) => Ok(Some(body)),
            200 => Err(LookupError::NoAbi),
            404 => Ok(None),
            s => Err(LookupError::Status(s)),
        }
    }
}

/// What chaintrace asks Sourcify for: the ABI, and what locating failures needs — the verified
/// sources, their compiler ids, the contract's name, and both codes with their source maps.
pub const SOURCIFY_FIELDS: &str =
    "abi,sources,sourceIds,compilation,runtimeBytecode,creationBytecode,storageLayout";

impl Explorer {
    /// Writes a cache entry whole or not at all; a cache that cannot be written only costs a
    /// lookup next time, and is said ([`Explorer::cache_failed`]), not hidden.
    fn store(&self, path: &std::path::Path, abi: &Value) {
        if let Err(e) = crate::source::cache::write_atomic(path, abi.to_string().as_bytes()) {
            if let Ok(mut f) = self.cache_failed.lock() {
                f.push(format!("{}: {e}", path.display()));
            }
        }
    }
}

/// The one HTTP call of name lookups: GET `url`, status and JSON body; a transport failure or
/// a body that is not JSON is the reason (no URL: it may carry an API key). Uses the project's
/// HTTP stack (`rpc::transport`).
fn http_get_json(url: &str, timeout: Duration) -> Result<(u16, Value), LookupError> {
    let (status, text) = crate::rpc::transport::get(url, timeout, 32 * 1024 * 1024)
        .map_err(LookupError::Transport)?;
    match serde_json::from_str(&text) {
        Ok(v) => Ok((status, v)),
        Err(_) if status != 200 && status != 404 => Ok((status, Value::Null)),
        Err(source) => Err(LookupError::NotJson { status, source }),
    }
}
