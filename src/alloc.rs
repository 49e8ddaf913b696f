//! The process's global allocator: the system allocator, counting the bytes each thread has
//! allocated and not yet freed.
//!
//! JavaScript tracers run inside boa, which has no memory limit: a script doubling a string
//! (`s = s + s`) or filling an array asks for gigabytes in a few steps, and a failed allocation
//! aborts the whole process. With this count, the JS host measures what one tracer call
//! allocates while it runs (the VM yields every few microseconds) and ends the trace with an
//! error past a limit, long before the machine runs out (`js/timeout.rs`).
//!
//! The count is a plain thread-local integer (no atomics, no locks), so it costs one add per
//! allocation; memory freed by another thread than the one that allocated it makes the two
//! counts drift, which only ever matters for the difference measured across one call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn add(n: i64) {
    // `try_with`: an allocation during thread teardown must not panic.
    let _ = LIVE.try_with(|c| c.set(c.get().wrapping_add(n)));
}

/// Bytes allocated and not freed by the current thread since it started (may be negative when
/// it frees what other threads allocated).
pub fn thread_live() -> i64 {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// The system allocator with a per-thread count.
pub struct Counting;

// SAFETY: every method forwards to `System` unchanged; the bookkeeping touches only a
// thread-local `Cell<i64>` (const-initialised, no destructor), which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_this_thread_holds() {
        let before = thread_live();
        let v: Vec<u8> = Vec::with_capacity(1 << 20);
        assert!(thread_live() - before >= 1 << 20);
        drop(v);
        assert!(thread_live() - before < 1 << 10);
    }
}
