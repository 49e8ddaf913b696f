//! A replay's deadline, so that `serve` bounds the work of a request and not only its waiting.
//!
//! A server worker runs its request inside [`within`]; every replay on that thread then checks
//! the deadline — between transactions and passes, and in every pass, traced or not, every
//! [`Stop::EVERY`] steps (as the JavaScript budget does; an untraced pass runs under
//! [`Untraced`] for it) — and, once it has passed, halts each frame at its next step, so that
//! the transaction unwinds at once and the replay ends with
//! [`crate::replay::ReplayError::Cancelled`]. Outside [`within`] (the command line) nothing is
//! checked, and an untraced pass runs with no inspector at all.

use std::cell::Cell;
use std::time::Instant;

use revm::interpreter::{InstructionResult, Interpreter};

use super::ReplayError;

/// Why this thread's replays stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Running,
    Deadline,
    /// What the request's work holds ([`crate::alloc::thread_live`] since [`within`]) passed
    /// its byte budget.
    Budget,
}

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The byte budget: this thread's live bytes when it was set, and the most allowed above.
    static BUDGET: Cell<Option<(i64, i64)>> = const { Cell::new(None) };
    static CANCELLED: Cell<Why> = const { Cell::new(Why::Running) };
}

/// Runs `f` with replays on this thread bounded by `deadline`, and by `budget` bytes of
/// memory: everything the request's work allocates on this thread and still holds — what its
/// tracer records (call inputs and outputs, logs, vmTrace code and memory, prestate, a
/// JavaScript tracer's values), the EVM's memory, the state read — counts as it is allocated;
/// past it the replay stops with [`ReplayError::OverBudget`], long before the machine runs out.
pub fn within<T>(deadline: Instant, budget: Option<usize>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Instant>, Option<(i64, i64)>, Why);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
            BUDGET.with(|b| b.set(self.1));
            CANCELLED.with(|c| c.set(self.2));
        }
    }
    let budget = budget.map(|b| {
        (
            crate::alloc::thread_live(),
            i64::try_from(b).unwrap_or(i64::MAX),
        )
    });
    let _restore = Restore(
        DEADLINE.with(|d| d.replace(Some(deadline))),
        BUDGET.with(|b| b.replace(budget)),
        CANCELLED.with(|c| c.replace(Why::Running)),
    );
    f()
}

/// Runs `f` on another thread under this thread's bounds: the same deadline, and `1/share` of
/// what is left of its byte budget (a request's replays spread over `share` threads). Without
/// bounds here (the command line), `f` runs unbounded.
pub fn inherit(share: usize) -> impl Fn(&mut dyn FnMut()) + Sync {
    let deadline = DEADLINE.with(Cell::get);
    let left = BUDGET.with(Cell::get).map(|(base, max)| {
        let used = crate::alloc::thread_live().saturating_sub(base);
        usize::try_from(max.saturating_sub(used).max(0)).unwrap_or(0) / share.max(1)
    });
    move |f: &mut dyn FnMut()| match deadline {
        Some(d) => within(d, left, f),
        None => f(),
    }
}

/// Whether this thread's replays are past their deadline or their byte budget (and so stop).
pub fn passed() -> bool {
    if CANCELLED.with(Cell::get) != Why::Running {
        return true;
    }
    let why = if DEADLINE
        .with(Cell::get)
        .is_some_and(|d| Instant::now() >= d)
    {
        Why::Deadline
    } else if over_budget() {
        Why::Budget
    } else {
        return false;
    };
    CANCELLED.with(|c| c.set(why));
    true
}

fn over_budget() -> bool {
    BUDGET
        .with(Cell::get)
        .is_some_and(|(base, max)| crate::alloc::thread_live().saturating_sub(base) > max)
}

/// The error a replay stopped by [`passed`] ends with.
pub fn stopped() -> ReplayError {
    match CANCELLED.with(Cell::get) {
        Why::Budget => ReplayError::OverBudget,
        _ => ReplayError::Cancelled,
    }
}

/// Whether this thread's replays have a deadline (a server worker's): an untraced pass then
/// runs under [`Untraced`], so that it stops at the deadline too.
pub fn bounded() -> bool {
    DEADLINE.with(Cell::get).is_some()
}

/// The inspector of an untraced pass with a deadline: it records nothing, so its frames run
/// plain ([`crate::trace::plain`]), the deadline ticked before every opcode by
/// [`crate::replay::splice::Beside`].
pub struct Untraced;

impl<CTX> revm::Inspector<CTX> for Untraced {}

impl crate::trace::plain::Plain for Untraced {
    fn plain(&self) -> bool {
        true
    }
}

/// The per-step check of a pass.
pub struct Stop {
    deadline: Instant,
    countdown: u32,
    stopped: bool,
}

impl Stop {
    /// Steps between two looks at the clock.
    pub const EVERY: u32 = 4096;

    /// A check for this thread's deadline (and byte budget), if it has one.
    pub fn current() -> Option<Stop> {
        DEADLINE.with(Cell::get).map(|deadline| Stop {
            deadline,
            countdown: Self::EVERY,
            stopped: CANCELLED.with(Cell::get) != Why::Running,
        })
    }

    /// Called before each step: `true` when the step was halted because the deadline passed.
    #[inline]
    pub fn tick(&mut self, interp: &mut Interpreter) -> bool {
        if !self.stopped {
            self.countdown -= 1;
            if self.countdown > 0 {
                return false;
            }
            self.countdown = Self::EVERY;
            let why = if Instant::now() >= self.deadline {
                Why::Deadline
            } else if over_budget() {
                Why::Budget
            } else {
                return false;
            };
            self.stopped = true;
            CANCELLED.with(|c| c.set(why));
        }
        // Every frame halts at its next step, so the transaction unwinds now; what it would
        // have done is never reported (the replay ends with an error).
        interp.halt(InstructionResult::OutOfGas);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_deadline_holds_only_within() {
        assert!(!passed());
        assert!(Stop::current().is_none());
        within(Instant::now() - Duration::from_millis(1), None, || {
            assert!(passed());
            assert!(Stop::current().is_some_and(|s| s.stopped));
            assert!(matches!(stopped(), ReplayError::Cancelled));
        });
        assert!(!passed());
        within(Instant::now() + Duration::from_secs(60), None, || {
            assert!(!passed());
        });
    }

    /// Past its byte budget a request's replay stops, with its own error (issue 43).
    #[test]
    fn the_byte_budget_holds_only_within() {
        within(
            Instant::now() + Duration::from_secs(60),
            Some(1 << 20),
            || {
                let small = vec![1u8; 1 << 19];
                assert!(!passed());
                let big = vec![1u8; 1 << 20];
                assert!(passed());
                assert!(matches!(stopped(), ReplayError::OverBudget));
                drop((small, big));
            },
        );
        let big = vec![1u8; 2 << 20];
        assert!(!passed());
        drop(big);
    }
}
