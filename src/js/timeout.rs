//! The tracer's time limit: the budgeted evaluation that enforces it.
//!
//! boa 0.22 has no way to interrupt a running script from another thread. What it has is
//! `Script::evaluate_async_with_budget`: the VM yields to its executor every `budget` "clock
//! cycles" (instruction costs). We drive that future ourselves with a no-op waker, look at the
//! tracer's memory each time it yields (see [`MEMORY_LIMIT`]) and at the clock every few yields; past the deadline we drop the future, which abandons the
//! script mid-loop. So every tracer function is invoked through a tiny pre-compiled script
//! (`__tracer.step(__log, __db)`), never through a plain `JsObject::call`.
//!
//! Built-ins that call back into JavaScript (`Array.prototype.forEach` …) run their callbacks
//! without budget; for a `while(1)` inside such a callback the VM's loop-iteration limit is the
//! backstop, sized so that hitting it means the script was looping for about the timeout anyway.

use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Instant;

use boa_engine::{Context, JsResult, JsValue, Script};

use super::error::Failure;

/// VM "clock cycles" between two yields: a few instructions, so a loop that doubles a string
/// every iteration is seen before it asks for more than twice the memory limit (yielding is
/// cheap next to the instructions themselves; measured: no difference on a 3M-iteration loop).
const BUDGET: u32 = 4;
/// Yields between two looks at the clock.
const CLOCK_EVERY: u32 = 64;

/// Loop iterations allowed per function invocation and per second of timeout (the backstop for
/// loops the budget cannot see). boa runs a few tens of millions of simple iterations a second.
pub const LOOP_ITERATIONS_PER_SECOND: u64 = 20_000_000;

/// Most memory a tracer may hold beyond what its thread held when the tracer was created: far
/// above what any tracer needs, far below what would exhaust the machine. Checked at every
/// yield of the VM and when each call returns, so one call can overshoot it by what a single
/// operation allocates (a doubled string) before the trace ends.
pub const MEMORY_LIMIT: i64 = 1 << 30;

/// The outcome of one budgeted evaluation.
pub enum Run {
    Done(JsResult<JsValue>),
    TimedOut,
    OutOfMemory,
}

/// Counts a hook run natively; every 1,024 the deadline (geth's covers the whole trace) and
/// the memory limit are looked at — the native path grows arrays and strings too, and 1,024
/// calls are well before a push per opcode could matter.
#[inline]
pub fn tick(since_clock: &mut u32, (deadline, base): (Instant, i64)) -> Result<(), Failure> {
    *since_clock += 1;
    if *since_clock < 1024 {
        return Ok(());
    }
    *since_clock = 0;
    if Instant::now() >= deadline {
        return Err(Failure::Timeout);
    }
    if over_memory(base) {
        return Err(Failure::OutOfMemory);
    }
    Ok(())
}

/// True when the current thread holds more than [`MEMORY_LIMIT`] beyond `base` (a
/// [`crate::alloc::thread_live`] reading taken when the tracer was created).
pub fn over_memory(base: i64) -> bool {
    crate::alloc::thread_live().saturating_sub(base) > MEMORY_LIMIT
}

/// Evaluates `script` until it finishes, `deadline` passes or the thread holds more than
/// [`MEMORY_LIMIT`] beyond `base`.
pub fn run_with_deadline(script: &Script, ctx: &mut Context, deadline: Instant, base: i64) -> Run {
    let mut fut = pin!(script.evaluate_async_with_budget(ctx, BUDGET));
    let mut cx = TaskContext::from_waker(Waker::noop());
    let mut yields = 0u32;
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(_) if over_memory(base) => return Run::OutOfMemory,
            Poll::Ready(r) => return Run::Done(r),
            Poll::Pending => {
                if over_memory(base) {
                    return Run::OutOfMemory;
                }
                yields += 1;
                if yields.is_multiple_of(CLOCK_EVERY) && Instant::now() >= deadline {
                    return Run::TimedOut;
                }
            }
        }
    }
}
