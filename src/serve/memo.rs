//! The server's memory cache: block pre-states kept after a replay (most recently used first,
//! bounded by entries), and per-key locks so concurrent requests for the same block or
//! transaction run one after another — the second finds the state the first fetched, here or
//! in the on-disk cache, instead of fetching it again.

use std::collections::{HashSet, VecDeque};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use crate::source::StateSnapshot;

/// Most state entries (accounts + slots + block hashes) held across all cached blocks.
pub const DEFAULT_MAX_ENTRIES: usize = 2_000_000;

pub struct Memo {
    states: Mutex<VecDeque<(String, StateSnapshot)>>,
    max_entries: usize,
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
