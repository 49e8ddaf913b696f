//! Names for selectors and topics no local source knows: Sourcify's signature database (the
//! 4byte service, successor of the openchain database `cast` uses), opt-in only.
//!
//! The API (Sourcify `services/4byte`, OpenAPI `src/openapi.yaml`, openchain-compatible):
//! `GET {base}/signature-database/v1/lookup?function=0x…,0x…&event=0x…&filter=true` answers
//! `{"ok": true, "result": {"function": {"0x…": [{"name": "f(uint256)", "filtered": false}] |
//! null}, "event": {"0x…": [...]}}}` — `null` (functions) or `[]` (events) when nothing is
//! known. Custom errors are asked in the `function` namespace (4-byte selectors, as openchain
//! and `cast` do); an `error` map in the answer is read too when a server gives one.
//!
//! A run makes at most one request: the caller collects every unknown selector and topic of
//! what it will print first ([`Wanted`]), then [`SignatureDb::resolve`] answers from memory, the
//! disk cache, and one GET for the rest. Answers are cached per selector under
//! `<cache>/signatures/{function,event}/0x….json`: found names for good (a selector's preimages
//! do not change; new collisions are rare and harmless, every candidate that decodes is shown),
//! "nothing known" for [`NEGATIVE_TTL`] (the database grows). A failed lookup (HTTP error,
//! timeout, an answer that is not the documented shape) is kept in [`SignatureDb::failed`] for
//! a warning on stderr and never fails the trace; nothing is cached from it.
//!
//! Entries are only names: each is parsed as a declaration and indexed by the selector alloy
//! computes from it, so an entry whose hash is not the one asked for can never name it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use alloy_primitives::{hex, B256};
use serde_json::{json, Value};

use super::explorer::LookupError;
use crate::render::abi::Abi;
use crate::render::decoder::Decoder;
use crate::replay::TraceResult;
use crate::trace::call::CallFrame;

/// Sourcify's public signature database.
pub const SIGNATURE_DB_DEFAULT: &str = "https://api.4byte.sourcify.dev";
/// Keys (selectors or topics, up to 66 characters each) asked in one GET: about 2.7 KiB of
/// query, well under the 8 KiB many servers take.
pub const KEYS_PER_REQUEST: usize = 40;

/// How long "the database knows nothing for this hash" is believed.
pub const NEGATIVE_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Selectors and topics to look up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wanted {
    /// 4-byte selectors of calls and custom errors (the `function` namespace).
    pub selectors: BTreeSet<[u8; 4]>,
    /// Event topic0s, with the numbers of topics their logs had (which parameters are indexed
    /// is not in a signature; the first `n - 1` are taken as indexed, Solidity's usual order).
    pub events: BTreeMap<B256, BTreeSet<usize>>,
}

impl Wanted {
    pub fn is_empty(&self) -> bool {
        self.selectors.is_empty() && self.events.is_empty()
    }

    /// Adds what `decoder` cannot name in `result`'s call tree: call selectors, custom errors of
    /// reverted frames, event topics. Other results (struct logs, prestate) name nothing.
    pub fn add_unknown(&mut self, result: &TraceResult, decoder: &Decoder) {
        if let TraceResult::Call(frame) = result {
            self.walk(frame, decoder);
        }
    }

    fn walk(&mut self, f: &CallFrame, d: &Decoder) {
        if !f.kind.is_create() {
            if let Some(sel) = selector(&f.input) {
                if !d.knows_function_at(f.to, sel) {
                    self.selectors.insert(sel);
                }
            }
        }
        if f.error.is_some() {
            if let Some(sel) = f.output.as_ref().and_then(|o| selector(o)) {
                if !d.knows_error_at(f.to, sel) {
                    self.selectors.insert(sel);
                }
            }
        }
        for log in &f.logs {
            if let Some(t0) = log.topics.first() {
                if !d.knows_event_at(Some(log.address), t0) {
                    self.events.entry(*t0).or_default().insert(log.topics.len());
                }
            }
        }
        for c in &f.calls {
            self.walk(c, d);
        }
    }
}

fn selector(data: &[u8]) -> Option<[u8; 4]> {
    data.get(..4)?.try_into().ok()
}

/// The signature database of a run.
pub struct SignatureDb {
    /// Base URL (`https://api.4byte.sourcify.dev`); the lookup path is appended.
    pub base: String,
    /// `<cache>/signatures/…` when the disk cache is on.
    pub cache_dir: Option<PathBuf>,
    pub timeout: Duration,
    /// Answers of this run by lower-case hex key (empty: nothing known).
    known: Mutex<HashMap<String, Vec<String>>>,
    /// Set once the run's lookup was made.
    asked: AtomicBool,
    /// Why lookups failed, for a warning on stderr (drained by whoever prints it).
    pub failed: Mutex<Vec<String>>,
    /// Cache entries that could not be written, with why, for a warning on stderr.
    pub cache_failed: Mutex<Vec<String>>,
    /// HTTP requests made (one per [`KEYS_PER_REQUEST`] keys, in the run's first lookup).
    pub requests: Mutex<usize>,
}

/// The namespace of a key: `function` for 4-byte selectors, `event` for topics.
fn namespace(key: &str) -> &'static str {
    if key.len() == 10 {
        "function"
    } else {
        "event"
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl SignatureDb {
    pub fn new(base: String, cache_dir: Option<PathBuf>, timeout: Duration) -> Self {
        SignatureDb {
            base,
            cache_dir,
            timeout,
            known: Mutex::new(HashMap::new()),
            cache_failed: Mutex::new(Vec::new()),
            asked: AtomicBool::new(false),
            failed: Mutex::new(Vec::new()),
            requests: Mutex::new(0),
        }
    }

    fn cache_path(&self, key: &str) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(
            dir.join("signatures")
                .join(namespace(key))
                .join(format!("{key}.json")),
        )
    }

    /// A cached answer: names found (kept for good), or nothing known (for [`NEGATIVE_TTL`]).
    fn cached(&self, key: &str) -> Option<Vec<String>> {
        let text = std::fs::read_to_string(self.cache_path(key)?).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let names: Vec<String> = v
            .get("names")?
            .as_array()?
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect();
        if names.is_empty() {
            let at = v.get("at").and_then(Value::as_u64)?;
            if now().saturating_sub(at) > NEGATIVE_TTL.as_secs() {
                return None;
            }
        }
        Some(names)
    }

    fn store(&self, key: &str, names: &[String]) {
        let Some(path) = self.cache_path(key) else {
            return;
        };
        // A cache that cannot be written only costs a lookup next time; it is said, not hidden.
        let body = json!({"names": names, "at": now()}).to_string();
        if let Err(e) = crate::source::cache::write_atomic(&path, body.as_bytes()) {
            if let Ok(mut f) = self.cache_failed.lock() {
                f.push(format!("{}: {e}", path.display()));
            }
        }
    }

    /// Names for `wanted` as an ABI to add to the signature tier: from this run's answers, the
    /// disk cache, then GETs for the rest, [`KEYS_PER_REQUEST`] keys each (only the run's first
    /// lookup goes out; a later call leaves what it still misses unnamed).
    pub fn resolve(&self, wanted: &Wanted) -> Abi {
        let keys: Vec<String> = wanted
            .selectors
            .iter()
            .map(|s| format!("0x{}", hex::encode(s)))
            .chain(wanted.events.keys().map(|t| format!("{t:?}")))
            .collect();
        let mut missing = Vec::new();
        {
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            for k in &keys {
                if known.contains_key(k) {
                    continue;
                }
                match self.cached(k) {
                    Some(names) => {
                        known.insert(k.clone(), names);
                    }
                    None => missing.push(k.clone()),
                }
            }
        }
        if !missing.is_empty() && !self.asked.swap(true, Ordering::SeqCst) {
            // In chunks, so that no URL outgrows what servers accept (8 KiB is common: a block
            // with ~120 unknown topics in one URL went past it, and then nothing was named).
            for chunk in missing.chunks(KEYS_PER_REQUEST) {
                match self.ask(chunk) {
                    Ok(answers) => {
                        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
                        for (k, names) in answers {
                            self.store(&k, &names);
                            known.insert(k, names);
                        }
                    }
                    Err(why) => {
                        if let Ok(mut f) = self.failed.lock() {
                            f.push(why.to_string());
                        }
                    }
                }
            }
        }
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = String::new();
        for k in &keys {
            let Some(names) = known.get(k) else { continue };
            for name in names {
                if namespace(k) == "function" {
                    text.push_str(&format!("function {name}\nerror {name}\n"));
                } else {
                    let counts = wanted
                        .events
                        .get(&k.parse::<B256>().unwrap_or_default())
                        .cloned()
                        .unwrap_or_default();
                    for n in counts {
                        if let Some(d) = event_declaration(name, n.saturating_sub(1)) {
                            text.push_str(&d);
                            text.push('\n');
                        }
                    }
                }
            }
        }
        // One line at a time: an entry that does not parse is skipped, not the whole answer.
        let mut abi = Abi::default();
        for line in text.lines() {
            if let Ok(one) = Abi::from_declarations(line) {
                abi.merge(one);
            }
        }
        abi
    }

    /// One GET: answers for `keys` (names, or empty for nothing known). Keys the answer
    /// leaves out are not answered (nor cached).
    fn ask(&self, keys: &[String]) -> Result<Vec<(String, Vec<String>)>, LookupError> {
        if let Ok(mut n) = self.requests.lock() {
            *n += 1;
        }
        let (functions, events): (Vec<&String>, Vec<&String>) =
            keys.iter().partition(|k| namespace(k) == "function");
        let join = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",");
        let mut url = format!(
            "{}/signature-database/v1/lookup?filter=true",
            self.base.trim_end_matches('/')
        );
        if !functions.is_empty() {
            url.push_str(&format!("&function={}", join(&functions)));
        }
        if !events.is_empty() {
            url.push_str(&format!("&event={}", join(&events)));
        }
        let (status, text) = crate::rpc::transport::get(&url, self.timeout, 8 * 1024 * 1024)
            .map_err(LookupError::Transport)?;
        if status != 200 {
            return Err(LookupError::Status(status));
        }
        let v: Value = serde_json::from_str(&text)
            .map_err(|source| LookupError::NotJson { status, source })?;
        if v.get("ok") != Some(&Value::Bool(true)) {
            return Err(LookupError::SaidNo(
                v.get("error")
                    .or_else(|| v.get("message"))
                    .map(Value::to_string)
                    .unwrap_or_else(|| "`ok` is not true".to_string()),
            ));
        }
        let result = v
            .get("result")
            .and_then(Value::as_object)
            .ok_or(LookupError::NoResult)?;
        let mut out = Vec::new();
        for k in keys {
            let mut answered = false;
            let mut names = Vec::new();
            let spaces: &[&'static str] = if namespace(k) == "function" {
                &["function", "error"]
            } else {
                &["event"]
            };
            for &space in spaces {
                let Some(map) = result.get(space).and_then(Value::as_object) else {
                    continue;
                };
                let entry = map
                    .iter()
                    .find(|(h, _)| h.eq_ignore_ascii_case(k))
                    .map(|(_, e)| e);
                match entry {
                    Some(Value::Null) => answered = true,
                    Some(Value::Array(items)) => {
                        answered = true;
                        for item in items {
                            if item.get("filtered").and_then(Value::as_bool) == Some(true) {
                                continue;
                            }
                            if let Some(n) = item.get("name").and_then(Value::as_str) {
                                if plausible(n) && !names.iter().any(|x| x == n) {
                                    names.push(n.to_string());
                                }
                            }
                        }
                    }
                    Some(other) => {
                        return Err(LookupError::NotAList {
                            space,
                            key: k.clone(),
                            got: other.clone(),
                        })
                    }
                    None => {}
                }
            }
            if answered {
                out.push((k.clone(), names));
            }
        }
        Ok(out)
    }
}

/// A signature as the database stores it: `name(types)`, nothing else.
fn plausible(s: &str) -> bool {
    let Some((name, rest)) = s.split_once('(') else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && rest.ends_with(')')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '(' | ')' | ',' | '[' | ']'))
}

/// `event Name(t1 indexed, …, tn)` for signature `Name(t1,…,tn)` with its first `indexed`
/// parameters indexed; `None` when it has fewer parameters than that.
fn event_declaration(signature: &str, indexed: usize) -> Option<String> {
    let (name, rest) = signature.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let mut params = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                params.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.is_empty() {
        params.push(&inner[start..]);
    }
    if indexed > params.len() {
        return None;
    }
    let shown: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if i < indexed {
                format!("{t} indexed")
            } else {
                t.to_string()
            }
        })
        .collect();
    Some(format!("event {name}({})", shown.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_declarations_index_the_first_topics() {
        assert_eq!(
            event_declaration("Transfer(address,address,uint256)", 2).as_deref(),
            Some("event Transfer(address indexed,address indexed,uint256)")
        );
        assert_eq!(
            event_declaration("S((uint256,address),bytes)", 1).as_deref(),
            Some("event S((uint256,address) indexed,bytes)")
        );
        assert_eq!(event_declaration("E()", 0).as_deref(), Some("event E()"));
        assert_eq!(event_declaration("E(uint256)", 2), None);
        assert!(plausible("transfer(address,uint256)"));
        assert!(!plausible("x(uint256); drop"));
        assert!(!plausible("noparens"));
        // Declarations built from database names parse, and index under their own hashes.
        let abi = Abi::from_declarations(
            "event Transfer(address indexed,address indexed,uint256)\nerror Custom(uint256,address,string)",
        )
        .unwrap();
        let topic = crate::render::signatures::event_topic("Transfer(address,address,uint256)");
        assert_eq!(abi.events(&topic).len(), 1);
        let sel = crate::render::signatures::selector("Custom(uint256,address,string)");
        assert_eq!(abi.errors(sel).len(), 1);
    }
}
