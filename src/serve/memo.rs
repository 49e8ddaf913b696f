//! The server's memory cache: block pre-states kept after a replay (most recently used first,
//! bounded by entries), block trace answers by block hash (bounded by bytes), and per-key locks
//! so concurrent requests for the same block or transaction run one after another — the second
//! finds the state the first fetched, here or in the on-disk cache, instead of fetching it again.
//!
//! A block's trace is a function of the block (its hash), the node's rules (chain id and client)
//! and the trace options: kept once its replay matched every receipt, it is the answer to the
//! same question again, without a replay. It is kept under a digest of those ([`AnswerKey`]:
//! the options normalised to what changes an answer, so a client's unknown option fields are
//! never kept), and its key, text and notes all count in the byte bound; the least recently
//! used answer goes first, in constant time.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use alloy_primitives::{keccak256, B256};
use serde_json::Value;

use crate::source::StateSnapshot;

/// Most state entries (accounts + slots + block hashes) held across all cached blocks.
pub const DEFAULT_MAX_ENTRIES: usize = 2_000_000;

/// Most bytes of block trace answers held.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 << 20;

/// Block references (`0x1f`) asked before, remembered up to this many: a reference seen once is
/// looked up by its hash first the next time.
const MAX_SEEN: usize = 100_000;

/// How long a block's hash, as a walk's preparation read it from the node, stands for the
/// block's number: a request for the number within it is answered from the prepared answer
/// without asking the node for the hash again (one round trip, most of a prepared request's
/// time). A reorg in between is seen by the requests after it, so an answer outlives one by
/// this long at most, as if the node had answered that much earlier: well under a block time
/// of Ethereum (12 s) or the OP stack (2 s).
pub const READ_HASH_FOR: Duration = Duration::from_millis(250);

/// Blocks' hashes as preparations read them, remembered up to this many (those older than
/// [`READ_HASH_FOR`] go first).
const MAX_READ: usize = 4096;

/// A block as a walk's preparation read it from the node: the node's chain and client, the
/// block's hash, and when the node's answer arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadBlock {
    pub chain_id: u64,
    pub client: String,
    pub hash: B256,
    pub at: Instant,
}

/// A block trace as it was answered: the JSON text and the notes its replay gave.
pub struct Answer {
    pub text: String,
    pub notes: Vec<String>,
}

/// Bytes a kept answer holds beyond its text and notes: its key, the cache's links and
/// counts, each note's string header.
const ANSWER_OVERHEAD: usize = 128;

impl Answer {
    /// What keeping it costs, its key included.
    fn bytes(&self) -> usize {
        ANSWER_OVERHEAD
            + self.text.len()
            + self
                .notes
                .iter()
                .map(|n| n.len() + std::mem::size_of::<String>())
                .sum::<usize>()
    }
}

/// The trace config members that change a trace (those `methods::trace_opts` reads but
/// `timeout`, which only bounds the work).
const ANSWER_OPTIONS: &[&str] = &[
    "tracer",
    "tracerConfig",
    "enableMemory",
    "disableStack",
    "disableStorage",
    "enableReturnData",
    "limit",
];

/// The key of a block trace's answer: a digest of the chain id, the node's client, the block's
/// hash and the trace options normalised (only [`ANSWER_OPTIONS`], `null` ones left out, object
/// members in sorted order), so two requests that ask the same are one entry and nothing a
/// client adds is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AnswerKey(B256);

impl AnswerKey {
    pub fn new(chain_id: u64, client: &str, block: B256, options: Option<&Value>) -> AnswerKey {
        let mut text = format!("{chain_id}\n{client}\n{block:?}\n");
        if let Some(Value::Object(o)) = options {
            for name in ANSWER_OPTIONS {
                if let Some(v) = o.get(*name).filter(|v| !v.is_null()) {
                    text.push_str(name);
                    text.push('=');
                    canonical(v, &mut text);
                    text.push('\n');
                }
            }
        }
        AnswerKey(keccak256(text.as_bytes()))
    }
}

/// `v` as JSON text with every object's members in sorted order.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut members: Vec<_> = o.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Kept answers, least recently used first out, bounded by what they hold.
struct Answers {
    lru: lru::LruCache<AnswerKey, Arc<Answer>>,
    bytes: usize,
}

pub struct Memo {
    states: Mutex<VecDeque<(String, StateSnapshot)>>,
    max_entries: usize,
    answers: Mutex<Answers>,
    max_answer_bytes: usize,
    seen: Mutex<HashSet<String>>,
    /// Blocks by number (`0x1f`) as preparations last read them.
    read: Mutex<HashMap<String, ReadBlock>>,
    busy: Mutex<HashSet<String>>,
    freed: Condvar,
}

/// Held while a request works on one key.
pub struct KeyGuard<'a> {
    memo: &'a Memo,
    key: String,
}

impl Drop for KeyGuard<'_> {
    fn drop(&mut self) {
        let mut busy = self.memo.busy.lock().unwrap_or_else(|p| p.into_inner());
        busy.remove(&self.key);
        self.memo.freed.notify_all();
    }
}

impl Memo {
    pub fn new(max_entries: usize) -> Memo {
        Memo {
            states: Mutex::new(VecDeque::new()),
            max_entries,
            answers: Mutex::new(Answers {
                lru: lru::LruCache::unbounded(),
                bytes: 0,
            }),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            seen: Mutex::new(HashSet::new()),
            read: Mutex::new(HashMap::new()),
            busy: Mutex::new(HashSet::new()),
            freed: Condvar::new(),
        }
    }

    /// Waits until no other request holds `key`, then holds it until the guard drops; `None`
    /// when `deadline` comes first (the waiting request gives up, freeing its worker).
    pub fn lock_key(&self, key: &str, deadline: Instant) -> Option<KeyGuard<'_>> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        while busy.contains(key) {
            let left = deadline.checked_duration_since(Instant::now())?;
            busy = self
                .freed
                .wait_timeout(busy, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        busy.insert(key.to_string());
        Some(KeyGuard {
            memo: self,
            key: key.to_string(),
        })
    }

    /// Holds `key` until the guard drops, if no one holds it now.
    pub fn try_lock_key(&self, key: &str) -> Option<KeyGuard<'_>> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        if !busy.insert(key.to_string()) {
            return None;
        }
        Some(KeyGuard {
            memo: self,
            key: key.to_string(),
        })
    }

    /// A copy of the state cached under `key`, moved to the front.
    pub fn get(&self, key: &str) -> Option<StateSnapshot> {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        let i = states.iter().position(|(k, _)| k == key)?;
        let entry = states.remove(i)?;
        let copy = entry.1.fork();
        states.push_front(entry);
        Some(copy)
    }

    /// Keeps `snap` under `key`, evicting the least recently used beyond the bound.
    pub fn put(&self, key: String, snap: StateSnapshot) {
        if snap.entries() > self.max_entries {
            return;
        }
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        states.retain(|(k, _)| *k != key);
        states.push_front((key, snap));
        let mut total = 0;
        let mut keep = 0;
        for (_, s) in states.iter() {
            total += s.entries();
            if total > self.max_entries {
                break;
            }
            keep += 1;
        }
        states.truncate(keep);
    }

    /// The answer kept under `key`, now the most recently used.
    pub fn answer(&self, key: &AnswerKey) -> Option<Arc<Answer>> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.lru.get(key).cloned()
    }

    /// Keeps `answer` under `key`, evicting the least recently used beyond the byte bound (an
    /// answer larger than the bound is not kept).
    pub fn put_answer(&self, key: AnswerKey, answer: Answer) {
        let size = answer.bytes();
        if size > self.max_answer_bytes {
            return;
        }
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = answers.lru.put(key, Arc::new(answer)) {
            answers.bytes -= old.bytes();
        }
        answers.bytes += size;
        while answers.bytes > self.max_answer_bytes {
            match answers.lru.pop_lru() {
                Some((_, a)) => answers.bytes -= a.bytes(),
                None => break,
            }
        }
    }

    /// Bytes the kept answers hold (keys and notes included).
    pub fn answer_bytes(&self) -> usize {
        self.answers.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }

    /// Whether `block_ref` was asked for before; it is remembered from now on.
    pub fn seen(&self, block_ref: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(block_ref) {
            return true;
        }
        if seen.len() >= MAX_SEEN {
            seen.clear();
        }
        seen.insert(block_ref.to_string());
        false
    }

    /// Whether `block_ref` was asked for before (not remembered by asking).
    pub fn was_seen(&self, block_ref: &str) -> bool {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.contains(block_ref)
    }

    /// Block `block_ref` (a number, `0x1f`) as a preparation read it just now.
    pub fn note_read(&self, block_ref: String, block: ReadBlock) {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        if read.len() >= MAX_READ {
            read.retain(|_, b| b.at.elapsed() < READ_HASH_FOR);
            if read.len() >= MAX_READ {
                read.clear();
            }
        }
        read.insert(block_ref, block);
    }

    /// Block `block_ref` as a preparation read it less than [`READ_HASH_FOR`] before `now`.
    pub fn recent_read(&self, block_ref: &str, now: Instant) -> Option<ReadBlock> {
        let read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        read.get(block_ref)
            .filter(|b| now.saturating_duration_since(b.at) < READ_HASH_FOR)
            .cloned()
    }

    /// Blocks cached right now.
    pub fn len(&self) -> usize {
        self.states.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::AccountData;

    fn snap(accounts: usize) -> StateSnapshot {
        let mut s = StateSnapshot::partial();
        for i in 0..accounts {
            s.insert_account(
                alloy_primitives::Address::with_last_byte(i as u8),
                AccountData::default(),
            );
        }
        s
    }

    #[test]
    fn keeps_the_most_recent_within_the_bound() {
        let m = Memo::new(5);
        m.put("a".into(), snap(2));
        m.put("b".into(), snap(2));
        assert!(m.get("a").is_some());
        m.put("c".into(), snap(2));
        // a was used after b: b goes.
        assert!(m.get("b").is_none());
        assert_eq!(m.get("a").map(|s| s.entries()), Some(2));
        m.put("huge".into(), snap(6));
        assert!(m.get("huge").is_none());
    }

    fn key(name: &str) -> AnswerKey {
        AnswerKey::new(
            1,
            "client",
            B256::ZERO,
            Some(&serde_json::json!({"tracer": name})),
        )
    }

    #[test]
    fn answers_are_kept_within_their_byte_bound() {
        let mut m = Memo::new(5);
        let answer = |n: usize| Answer {
            text: "x".repeat(n),
            notes: vec!["note".into()],
        };
        // Room for two answers of 4 bytes with their key, note and links, not three.
        let one = answer(4).bytes();
        assert_eq!(one, ANSWER_OVERHEAD + 4 + 4 + std::mem::size_of::<String>());
        m.max_answer_bytes = 2 * one + one / 2;
        m.put_answer(key("a"), answer(4));
        m.put_answer(key("b"), answer(4));
        assert_eq!(m.answer(&key("a")).map(|a| a.text.len()), Some(4));
        assert_eq!(m.answer_bytes(), 2 * one);
        m.put_answer(key("c"), answer(4));
        // a was used after b: b goes.
        assert!(m.answer(&key("b")).is_none());
        assert_eq!(m.answer(&key("a")).unwrap().notes, vec!["note".to_string()]);
        assert_eq!(m.answer_bytes(), 2 * one);
        // The same key again replaces, and counts once.
        m.put_answer(key("a"), answer(4));
        assert_eq!(m.answer_bytes(), 2 * one);
        // Notes count: an answer of short text but long notes is not kept.
        let noted = Answer {
            text: String::new(),
            notes: vec!["n".repeat(3 * one)],
        };
        m.put_answer(key("noted"), noted);
        assert!(m.answer(&key("noted")).is_none());
        m.put_answer(key("huge"), answer(3 * one));
        assert!(m.answer(&key("huge")).is_none());
        assert!(!m.seen("0x1"));
        assert!(m.seen("0x1"));
    }

    /// The key is a digest of what changes an answer: options in another order, `null`
    /// members, `timeout` and members no trace reads are the same key (issue 43: the client's
    /// raw options were the key, 4 MiB of junk kept per answer).
    #[test]
    fn an_answer_key_is_a_digest_of_the_normalised_options() {
        use serde_json::json;
        let k = |o: Value| AnswerKey::new(1, "anvil", B256::ZERO, Some(&o));
        let base = k(
            json!({"tracer": "callTracer", "tracerConfig": {"onlyTopCall": true, "withLog": false}}),
        );
        assert_eq!(
            base,
            k(
                json!({"junk": "j".repeat(1 << 20), "timeout": "5s", "enableMemory": null,
                "tracerConfig": {"withLog": false, "onlyTopCall": true}, "tracer": "callTracer"})
            )
        );
        assert_ne!(
            base,
            k(json!({"tracer": "callTracer", "tracerConfig": {"onlyTopCall": true}}))
        );
        assert_ne!(
            base,
            AnswerKey::new(
                2,
                "anvil",
                B256::ZERO,
                Some(&json!({"tracer": "callTracer",
            "tracerConfig": {"onlyTopCall": true, "withLog": false}}))
            )
        );
        assert_eq!(k(json!({})), AnswerKey::new(1, "anvil", B256::ZERO, None));
        assert_ne!(k(json!({})), k(json!({"enableMemory": true})));
        assert_eq!(std::mem::size_of::<AnswerKey>(), 32);
    }

    #[test]
    fn a_read_block_stands_for_its_number_for_a_moment() {
        let memo = Memo::new(10);
        let now = Instant::now();
        let read = |at| ReadBlock {
            chain_id: 1,
            client: "anvil/v1.7.1".into(),
            hash: B256::repeat_byte(7),
            at,
        };
        memo.note_read("0x5".into(), read(now));
        assert_eq!(memo.recent_read("0x5", now), Some(read(now)));
        assert_eq!(
            memo.recent_read("0x5", now + READ_HASH_FOR / 2),
            Some(read(now))
        );
        assert_eq!(memo.recent_read("0x5", now + READ_HASH_FOR), None);
        assert_eq!(memo.recent_read("0x6", now), None);
        // Read again later: it stands from then.
        let again = now + READ_HASH_FOR;
        memo.note_read("0x5".into(), read(again));
        assert_eq!(memo.recent_read("0x5", again), Some(read(again)));
    }

    #[test]
    fn read_blocks_are_bounded() {
        let memo = Memo::new(10);
        let now = Instant::now();
        let stale = now.checked_sub(READ_HASH_FOR).unwrap_or(now);
        for n in 0..MAX_READ as u64 {
            let at = if n % 2 == 0 { stale } else { now };
            let block = ReadBlock {
                chain_id: 1,
                client: String::new(),
                hash: B256::ZERO,
                at,
            };
            memo.note_read(format!("{n:#x}"), block);
        }
        let fresh = ReadBlock {
            chain_id: 1,
            client: String::new(),
            hash: B256::ZERO,
            at: now,
        };
        // Full: the stale half goes, the fresh half stays.
        memo.note_read("0xffffff".into(), fresh.clone());
        let held = memo.read.lock().unwrap().len();
        assert_eq!(held, MAX_READ / 2 + 1);
        assert!(memo.recent_read("0x1", now).is_some());
        // Full of fresh ones: all go.
        for n in 0..MAX_READ as u64 {
            memo.note_read(format!("{:#x}", 0x1000000 + n), fresh.clone());
        }
        assert!(memo.read.lock().unwrap().len() <= MAX_READ);
    }

    fn later() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    /// A request waiting for a key another one holds gives up at its deadline (issue 31:
    /// before, it waited with no deadline, holding its worker).
    #[test]
    fn waiting_for_a_key_ends_at_the_deadline() {
        let m = Memo::new(10);
        let _held = m.lock_key("k", later()).unwrap();
        let start = Instant::now();
        let deadline = start + std::time::Duration::from_millis(200);
        assert!(m.lock_key("k", deadline).is_none());
        let waited = start.elapsed();
        assert!(
            waited >= std::time::Duration::from_millis(200)
                && waited < std::time::Duration::from_secs(5),
            "{waited:?}"
        );
        // Another key is free.
        assert!(m.lock_key("other", deadline).is_some() || Instant::now() >= deadline);
    }

    #[test]
    fn one_holder_per_key() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let m = Memo::new(10);
        let inside = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let _g = m.lock_key("k", later()).unwrap();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    inside.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        let _a = m.lock_key("x", later()).unwrap();
        let _b = m.lock_key("y", later()).unwrap();
    }

    #[test]
    fn a_panic_holding_a_key_or_the_cache_fails_no_later_call() {
        let m = Memo::new(10);
        std::thread::scope(|s| {
            let crashed = s.spawn(|| {
                let _key = m.lock_key("k", later()).unwrap();
                let _states = m.states.lock();
                panic!("a call crashed");
            });
            assert!(crashed.join().is_err());
        });
        assert!(m.states.is_poisoned());
        // The key was given back while unwinding; the cache still works.
        let _k = m.lock_key("k", later()).unwrap();
        m.put("a".into(), snap(1));
        assert_eq!(m.get("a").map(|s| s.entries()), Some(1));
        assert_eq!(m.len(), 1);
    }
}
