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

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static CANCELLED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with replays on this thread bounded by `deadline`.
pub fn within<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Instant>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
            CANCELLED.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(
        DEADLINE.with(|d| d.replace(Some(deadline))),
        CANCELLED.with(|c| c.replace(false)),
    );
    f()
}

/// Whether this thread's replays are past their deadline (and so stop).
pub fn passed() -> bool {
    if CANCELLED.with(Cell::get) {
        return true;
    }
    let late = DEADLINE
        .with(Cell::get)
        .is_some_and(|d| Instant::now() >= d);
    if late {
        CANCELLED.with(|c| c.set(true));
    }
    late
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

    /// A check for this thread's deadline, if it has one.
    pub fn current() -> Option<Stop> {
        DEADLINE.with(Cell::get).map(|deadline| Stop {
            deadline,
            countdown: Self::EVERY,
            stopped: CANCELLED.with(Cell::get),
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
            if Instant::now() < self.deadline {
                return false;
            }
            self.stopped = true;
            CANCELLED.with(|c| c.set(true));
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
        within(Instant::now() - Duration::from_millis(1), || {
            assert!(passed());
            assert!(Stop::current().is_some_and(|s| s.stopped));
        });
        assert!(!passed());
        within(Instant::now() + Duration::from_secs(60), || {
            assert!(!passed());
        });
    }
}
