//! The host that validated a script, kept for the first transaction traced with it.
//!
//! [`JsSpec::new`](super::JsSpec::new) builds a whole host to check the script, and that host,
//! `setup` included, is what a fresh build for the first transaction would be; only the fork
//! and the clock differ, and [`Host::rearm`] sets those. A boa context cannot leave its thread,
//! so the spare waits in a thread-local slot, one per thread, under its spec's key; it is taken
//! at most once (scripts keep state in `this`). Another spec's spare replaces it, and dropping
//! the last clone of the spec frees it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::lazy::Host;

/// Identifies one spec and its clones. Dropping the last clone drops its spare, if this
/// thread holds it.
#[derive(Debug)]
pub struct Key(u64);

impl Key {
    pub fn new() -> Arc<Key> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Arc::new(Key(NEXT.fetch_add(1, Ordering::Relaxed)))
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        drop(take(self));
    }
}

struct Slot {
    key: u64,
    host: Option<Host>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Only at thread exit, when boa's thread-local heap may already be gone: dropping the
        // context would then touch freed memory. The process or thread is ending anyway.
        std::mem::forget(self.host.take());
    }
}

thread_local! {
    static SLOT: RefCell<Slot> = const { RefCell::new(Slot { key: 0, host: None }) };
}

/// Keeps `host` for the first [`take`] under `key` on this thread.
pub fn put(key: &Key, host: Host) {
    let mut host = Some(host);
    let old = SLOT.try_with(|s| {
        let mut s = s.borrow_mut();
        s.key = key.0;
        std::mem::replace(&mut s.host, host.take())
    });
    // Dropped outside the borrow.
    drop(old);
    // The slot is gone only while the thread exits (see `Slot`'s drop).
    std::mem::forget(host);
}

/// The spare host of `key`, if this thread holds it.
pub fn take(key: &Key) -> Option<Host> {
    SLOT.try_with(|s| {
        let mut s = s.try_borrow_mut().ok()?;
        if s.key != key.0 {
            return None;
        }
        s.host.take()
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use revm::primitives::hardfork::SpecId;

    use super::*;
    use crate::js::{JsSpec, TxContext};

    fn spec(source: &str, timeout: Duration) -> JsSpec {
        JsSpec::new(source, None, timeout).unwrap()
    }

    fn held() -> bool {
        SLOT.with(|s| s.borrow().host.is_some())
    }

    const PLAIN: &str = "{fault: function() {}, result: function() { return 1 }}";

    #[test]
    fn the_validating_host_serves_one_build() {
        let s = spec(PLAIN, Duration::from_secs(5));
        let c = s.clone();
        assert!(take(&c.spare).is_some(), "a clone shares the key");
        assert!(take(&s.spare).is_none(), "taken at most once");

        let s = spec(PLAIN, Duration::from_secs(5));
        let other = spec(PLAIN, Duration::from_secs(5));
        assert!(take(&s.spare).is_none(), "another spec's spare replaced it");
        drop(other);
        assert!(!held(), "dropping the spec frees its spare");
    }

    #[test]
    fn a_fork_asked_in_setup_keeps_the_spare_to_that_fork() {
        let asks = "{setup: function() { this.p = isPrecompiled('0x0000000000000000000000000000000000000100') }, \
                    fault: function() {}, result: function() { return this.p }}";
        let mut host = take(&spec(asks, Duration::from_secs(5)).spare).unwrap();
        assert!(
            !host.rearm(SpecId::CANCUN, Duration::from_secs(5)),
            "setup's answer was Osaka's"
        );
        assert!(host.rearm(SpecId::OSAKA, Duration::from_secs(5)));
        let mut host = take(&spec(PLAIN, Duration::from_secs(5)).spare).unwrap();
        assert!(host.rearm(SpecId::CANCUN, Duration::from_secs(5)));
    }

    #[test]
    fn the_clock_restarts_at_build() {
        let busy = "{fault: function() {}, \
                    result: function() { var s = 0; for (var i = 0; i < 20000; i++) { s += i; } return s }}";
        let s = spec(busy, Duration::from_millis(300));
        std::thread::sleep(Duration::from_millis(400));
        let mut host = s.host(SpecId::OSAKA).unwrap();
        assert!(!held());
        let r = host.result(&TxContext::default());
        let text = r.map(|v| v.get().to_string()).map_err(|e| e.to_string());
        assert_eq!(text, Ok("199990000".to_string()));
    }
}
