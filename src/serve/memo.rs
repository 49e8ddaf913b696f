//! The server's memory cache: block pre-states kept after a replay (most recently used first,
//! bounded by entries), block trace answers by block hash (bounded by bytes), and per-key locks
//! so concurrent requests for the same block or transaction run one after another — the second
//! finds the state the first fetched, here or in the on-disk cache, instead of fetching it again.
//!
//! A block's trace is a function of the block (its hash), the node's rules (chain id and client)
//! and the trace options: kept once its replay matched every receipt, it is the answer to the
//! same question again, without a replay.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::source::StateSnapshot;

/// Most state entries (accounts + slots + block hashes) held across all cached blocks.
pub const DEFAULT_MAX_ENTRIES: usize = 2_000_000;

/// Most bytes of block trace answers held.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 << 20;

/// Block references (`0x1f`) asked before, remembered up to this many: a reference seen once is
/// looked up by its hash first the next time.
const MAX_SEEN: usize = 100_000;

/// A block trace as it was answered: the JSON text and the notes its replay gave.
pub struct Answer {
    pub text: String,
    pub notes: Vec<String>,
}

pub struct Memo {
    states: Mutex<VecDeque<(String, StateSnapshot)>>,
    max_entries: usize,
    answers: Mutex<VecDeque<(String, Arc<Answer>)>>,
    max_answer_bytes: usize,
    seen: Mutex<HashSet<String>>,
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
            answers: Mutex::new(VecDeque::new()),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            seen: Mutex::new(HashSet::new()),
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

    /// The answer kept under `key`, moved to the front.
    pub fn answer(&self, key: &str) -> Option<Arc<Answer>> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let i = answers.iter().position(|(k, _)| k == key)?;
        let entry = answers.remove(i)?;
        let a = entry.1.clone();
        answers.push_front(entry);
        Some(a)
    }

    /// Keeps `answer` under `key`, evicting the least recently used beyond the byte bound.
    pub fn put_answer(&self, key: String, answer: Answer) {
        if answer.text.len() > self.max_answer_bytes {
            return;
        }
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.retain(|(k, _)| *k != key);
        answers.push_front((key, Arc::new(answer)));
        let mut total = 0;
        let keep = answers
            .iter()
            .take_while(|(_, a)| {
                total += a.text.len();
                total <= self.max_answer_bytes
            })
            .count();
        answers.truncate(keep);
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

    #[test]
    fn answers_are_kept_within_their_byte_bound() {
        let mut m = Memo::new(5);
        m.max_answer_bytes = 10;
        let answer = |n: usize| Answer {
            text: "x".repeat(n),
            notes: vec!["note".into()],
        };
        m.put_answer("a".into(), answer(4));
        m.put_answer("b".into(), answer(4));
        assert_eq!(m.answer("a").map(|a| a.text.len()), Some(4));
        m.put_answer("c".into(), answer(4));
        // a was used after b: b goes.
        assert!(m.answer("b").is_none());
        assert_eq!(m.answer("a").unwrap().notes, vec!["note".to_string()]);
        m.put_answer("huge".into(), answer(11));
        assert!(m.answer("huge").is_none());
        assert!(!m.seen("0x1"));
        assert!(m.seen("0x1"));
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
