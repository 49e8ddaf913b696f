//! A durable on-disk cache of immutable chain data: transactions with their receipts, block
//! headers and blocks, a transaction's pre-state from the node, and state read at a block.
//!
//! Why it looks the way it does:
//!
//! * **Per chain, per genesis.** Entries live under `<root>/<chain id>/<genesis hash>/`. The
//!   chain id alone is not enough: a restarted devnet (anvil, hardhat) reuses chain id 31337 and,
//!   with deterministic dev keys, even transaction hashes, while its genesis hash changes with
//!   the start time. Keying by both keeps a new devnet from reading an old one's state.
//! * **Immutable data only.** Keys are content addresses (tx hash, block hash, parent block hash
//!   for state), so an entry never needs invalidation.
//! * **Atomic writes.** An entry is written to a unique temporary file in the same directory and
//!   renamed into place; a process killed mid-write leaves at worst a stray `*.tmp` file, which
//!   readers never look at. It is not synced to the disk first: the checksum below already
//!   catches an entry a machine crash left empty or torn, and the sync cost the request that
//!   fetched the data more than the fetch.
//! * **Checksummed.** Each file is `keccak256(body)` in hex, a newline, then the JSON body. A
//!   truncated or corrupt entry fails the check, is deleted, reported as a warning and treated as
//!   a miss, so the data is fetched again.
//! * **Counted per caller.** Hits and warnings are counted for the process ([`Cache::hits`],
//!   [`Cache::take_warnings`]) or, inside [`Cache::tally`], for that thread's work alone: a
//!   `serve` request reports its own, never a concurrent one's.

use std::cell::RefCell;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use alloy_primitives::{hex, keccak256, B256};
use serde_json::Value;

/// Kinds of entries, each in its own directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{"tx": .., "receipt": ..}` of a mined transaction, by tx hash.
    Tx,
    /// A block header (no transactions), by block hash.
    Header,
    /// A block with full transactions, by block hash.
    Block,
    /// The node's `prestateTracer` result for a transaction, by tx hash.
    Prestate,
    /// State read at a block (accounts, slots, block hashes), by that block's hash.
    State,
    /// A node URL's chain identity (`{"chainId", "genesis"}`), by hash of the URL.
    Endpoint,
}

impl Kind {
    fn dir(self) -> &'static str {
        match self {
            Kind::Tx => "tx",
            Kind::Header => "header",
            Kind::Block => "block",
            Kind::Prestate => "prestate",
            Kind::State => "state",
            Kind::Endpoint => "endpoint",
        }
    }
}

/// The default cache root: `$XDG_CACHE_HOME/chaintrace`, else `~/.cache/chaintrace`.
pub fn default_root(xdg_cache_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    match xdg_cache_home.filter(|s| !s.is_empty()) {
        Some(x) => Some(Path::new(x).join("chaintrace")),
        None => home
            .filter(|s| !s.is_empty())
            .map(|h| Path::new(h).join(".cache").join("chaintrace")),
    }
}

/// An on-disk cache rooted at one directory. Failures to write are never fatal: the cache is an
/// optimisation, so a read-only or full disk degrades to fetching.
#[derive(Debug)]
pub struct Cache {
    root: PathBuf,
    /// `<root>/<chain>/<genesis>`, set once the node's identity is known.
    chain_dir: Mutex<Option<PathBuf>>,
    warnings: Mutex<Vec<String>>,
    /// Warnings not kept because [`MAX_WARNINGS`] were already waiting.
    dropped_warnings: AtomicU64,
    hits: AtomicU64,
}

/// Warnings kept between two [`Cache::take_warnings`]; further ones are only counted (a
/// long-running `serve` whose disk is full must not grow a list without bound).
pub const MAX_WARNINGS: usize = 32;

/// What one piece of work did with a cache ([`Cache::tally`]): entries read, and its warnings.
#[derive(Debug, Default)]
pub struct Tally {
    pub hits: u64,
    warnings: Vec<String>,
    dropped: u64,
}

impl Tally {
    /// Its warnings: at most [`MAX_WARNINGS`], then one line counting those not kept.
    pub fn warnings(mut self) -> Vec<String> {
        if self.dropped > 0 {
            self.warnings
                .push(format!("{} more cache warnings not kept", self.dropped));
        }
        self.warnings
    }
}

thread_local! {
    /// The tally this thread counts into, and the cache it is of (by address).
    static TALLY: RefCell<Option<(usize, Tally)>> = const { RefCell::new(None) };
}

/// The mutex's value even if a thread panicked while holding it: every value kept here is
/// whole between two statements, so one panicking call does not fail every later one.
fn hold<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Cache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Cache {
            root: root.into(),
            chain_dir: Mutex::new(None),
            warnings: Mutex::new(Vec::new()),
            dropped_warnings: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Selects the chain whose entries `get`/`put` use from now on.
    pub fn select_chain(&self, chain_id: u64, genesis: B256) {
        let dir = self
            .root
            .join(chain_id.to_string())
            .join(hex::encode(&genesis[..8]));
        *hold(&self.chain_dir) = Some(dir);
    }

    /// Runs `f` with what it makes this cache do on this thread counted apart, in the returned
    /// [`Tally`]: its hits (still added to [`Cache::hits`] too) and its warnings (only there,
    /// never in [`Cache::take_warnings`]'s list).
    pub fn tally<T>(&self, f: impl FnOnce() -> T) -> (T, Tally) {
        struct Restore(Option<Option<(usize, Tally)>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                if let Some(prev) = self.0.take() {
                    TALLY.with(|t| t.replace(prev));
                }
            }
        }
        let me = self as *const Cache as usize;
        let mut restore = Restore(Some(
            TALLY.with(|t| t.replace(Some((me, Tally::default())))),
        ));
        let out = f();
        let prev = restore.0.take().unwrap_or_default();
        let tally = TALLY.with(|t| t.replace(prev));
        (out, tally.map(|(_, t)| t).unwrap_or_default())
    }

    /// Runs `g` on this thread's tally of this cache, if one is open.
    fn in_tally(&self, g: impl FnOnce(&mut Tally)) -> bool {
        let me = self as *const Cache as usize;
        TALLY.with(|t| match &mut *t.borrow_mut() {
            Some((of, tally)) if *of == me => {
                g(tally);
                true
            }
            _ => false,
        })
    }

    /// Entries read successfully so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Takes the warnings (dropped corrupt entries, failed writes) recorded since the last
    /// call: at most [`MAX_WARNINGS`], then one line counting those not kept.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut out = std::mem::take(&mut *hold(&self.warnings));
        let dropped = self.dropped_warnings.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            out.push(format!("{dropped} more cache warnings not kept"));
        }
        out
    }

    fn warn(&self, text: String) {
        let mut text = Some(text);
        let tallied = self.in_tally(|t| {
            if t.warnings.len() < MAX_WARNINGS {
                t.warnings.extend(text.take());
            } else {
                t.dropped += 1;
            }
        });
        let Some(text) = text.filter(|_| !tallied) else {
            return;
        };
        let mut warnings = hold(&self.warnings);
        if warnings.len() < MAX_WARNINGS {
            warnings.push(text);
        } else {
            self.dropped_warnings.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn path(&self, kind: Kind, key: &str) -> Option<PathBuf> {
        let base = if kind == Kind::Endpoint {
            self.root.clone()
        } else {
            hold(&self.chain_dir).clone()?
        };
        Some(base.join(kind.dir()).join(format!("{key}.json")))
    }

    /// The entry `kind/key`, if present and intact. A damaged entry is deleted and reported.
    pub fn get(&self, kind: Kind, key: &str) -> Option<Value> {
        let path = self.path(kind, key)?;
        let bytes = fs::read(&path).ok()?;
        match decode(&bytes) {
            Ok(v) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.in_tally(|t| t.hits += 1);
                Some(v)
            }
            Err(why) => {
                let _ = fs::remove_file(&path);
                self.warn(format!(
                    "cache entry {} is {why}; dropped it and fetching again",
                    path.display()
                ));
                None
            }
        }
    }

    /// Stores `value` as `kind/key` atomically (write a temporary file, then rename).
    pub fn put(&self, kind: Kind, key: &str, value: &Value) {
        let Some(path) = self.path(kind, key) else {
            return;
        };
        if let Err(e) = write_unsynced(&path, &encode(value)) {
            self.warn(format!("cannot write cache entry {}: {e}", path.display()));
        }
    }
}

/// `hex(keccak256(body)) \n body`.
pub fn encode(value: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut out = hex::encode(keccak256(&body)).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(&body);
    out
}

/// What is wrong with a damaged cache entry ("cache entry … is <this>").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadEntry {
    #[error("truncated (no checksum line)")]
    NoChecksum,
    #[error("corrupt or truncated (checksum mismatch)")]
    ChecksumMismatch,
    #[error("unreadable (not JSON)")]
    NotJson,
}

/// Checks and parses an entry; the error says what is wrong with it.
pub fn decode(bytes: &[u8]) -> Result<Value, BadEntry> {
    let nl = bytes
        .iter()
        .position(|b| *b == b'\n')
        .ok_or(BadEntry::NoChecksum)?;
    let (sum, body) = (&bytes[..nl], &bytes[nl + 1..]);
    if sum != hex::encode(keccak256(body)).as_bytes() {
        return Err(BadEntry::ChecksumMismatch);
    }
    serde_json::from_slice(body).map_err(|_| BadEntry::NotJson)
}

/// Writes `bytes` to a unique temporary file next to `path` (tempfile's `.<name>.XXXXXX.tmp`),
/// syncs it, and renames it over `path` (`persist`); readers see the old file, no file, or the
/// whole new one, and a failed write removes its temporary file. The one way the project
/// writes a file whole or not at all (verified ABIs, signatures, bundles, the `--out`
/// manifest; cache entries the same way without the sync, `write_unsynced`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_whole(path, bytes, true)
}

/// [`write_atomic`] without syncing the file first: a cache entry carries its own checksum, so
/// one that a crash of the machine left empty or torn (renamed before its data reached the
/// disk) fails the check when read, is dropped and fetched again. The sync cost 3-10 ms an
/// entry on this machine's disk, paid by the request that fetched the data.
fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_whole(path, bytes, false)
}

fn write_whole(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("entry");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "chaintrace-cache-unit-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn roundtrip_and_corruption_is_dropped_with_a_warning() {
        let dir = tmpdir("rt");
        let c = Cache::new(&dir);
        assert_eq!(c.get(Kind::Tx, "a"), None, "no chain selected yet");
        c.select_chain(31337, B256::repeat_byte(7));
        let v = json!({"tx": {"hash": "0x01"}, "receipt": null});
        c.put(Kind::Tx, "a", &v);
        assert_eq!(c.get(Kind::Tx, "a"), Some(v.clone()));
        assert_eq!(c.hits(), 1);
        let path = c.path(Kind::Tx, "a").unwrap();
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(c.get(Kind::Tx, "a"), None);
        assert!(!path.exists(), "a corrupt entry is deleted");
        let w = c.take_warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("checksum mismatch"), "{w:?}");
        // Another chain (a restarted devnet) does not see the entry.
        c.put(Kind::Tx, "a", &v);
        c.select_chain(31337, B256::repeat_byte(8));
        assert_eq!(c.get(Kind::Tx, "a"), None);
        let _ = fs::remove_dir_all(&dir);
    }

    /// Inside a tally, a thread's hits and warnings are its own: another thread's, at the same
    /// time, are neither in it nor taken by it.
    #[test]
    fn a_tally_counts_one_threads_work() {
        let dir = tmpdir("tally");
        let c = Cache::new(&dir);
        c.select_chain(1, B256::repeat_byte(1));
        c.put(Kind::Tx, "good", &json!(1));
        c.put(Kind::Tx, "bad", &json!(2));
        let bad = c.path(Kind::Tx, "bad").unwrap();
        fs::write(&bad, b"0000\n2").unwrap();
        let hit = std::sync::Barrier::new(2);
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| {
                c.tally(|| {
                    assert_eq!(c.get(Kind::Tx, "good"), Some(json!(1)));
                    assert_eq!(c.get(Kind::Tx, "bad"), None);
                    hit.wait();
                })
                .1
            });
            let b = s.spawn(|| c.tally(|| hit.wait()).1);
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!((a.hits, b.hits), (1, 0));
        let w = a.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("checksum mismatch"), "{w:?}");
        assert!(b.warnings().is_empty());
        assert!(c.take_warnings().is_empty(), "nothing left for the process");
        assert_eq!(c.hits(), 1);
        // Outside a tally, the process's list as before; a tally does not leak out of a panic.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            c.tally(|| panic!("a call crashed"))
        }));
        assert!(caught.is_err());
        c.warn("after".into());
        assert_eq!(c.take_warnings(), vec!["after".to_string()]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn warnings_are_bounded_and_a_panic_poisons_nothing() {
        let dir = tmpdir("warn");
        let c = Cache::new(&dir);
        for i in 0..MAX_WARNINGS + 5 {
            c.warn(format!("w{i}"));
        }
        let w = c.take_warnings();
        assert_eq!(w.len(), MAX_WARNINGS + 1);
        assert_eq!(w[0], "w0");
        assert_eq!(w[MAX_WARNINGS], "5 more cache warnings not kept");
        assert!(c.take_warnings().is_empty(), "drained");
        // A thread that panics holding the locks does not fail the calls after it.
        std::thread::scope(|s| {
            let r = s.spawn(|| {
                let _dir = c.chain_dir.lock();
                let _w = c.warnings.lock();
                panic!("a call crashed");
            });
            assert!(r.join().is_err());
        });
        assert!(c.chain_dir.is_poisoned() && c.warnings.is_poisoned());
        c.select_chain(1, B256::repeat_byte(1));
        let v = json!([1]);
        c.put(Kind::Tx, "b", &v);
        assert_eq!(c.get(Kind::Tx, "b"), Some(v));
        c.warn("after".into());
        assert_eq!(c.take_warnings(), vec!["after".to_string()]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn decode_rejects_damage() {
        let good = encode(&json!([1, 2, 3]));
        assert_eq!(decode(&good), Ok(json!([1, 2, 3])));
        assert!(decode(b"").is_err());
        assert!(decode(&good[..10]).is_err());
        let mut flipped = good.clone();
        let n = flipped.len();
        flipped[n - 2] = b'9';
        assert!(decode(&flipped).is_err());
    }

    #[test]
    fn default_root_prefers_xdg() {
        assert_eq!(
            default_root(Some("/x"), Some("/h")),
            Some(PathBuf::from("/x/chaintrace"))
        );
        assert_eq!(
            default_root(Some(""), Some("/h")),
            Some(PathBuf::from("/h/.cache/chaintrace"))
        );
        assert_eq!(default_root(None, None), None);
    }
}
