//! A tracer's host, built lazily: a tracer wholly inside the native subset (its literal,
//! hooks and `result`; see [`Fast::detached`]) runs without boa, and boa is built only when
//! something leaves the subset — then exactly as a deoptimisation does: the literal evaluated
//! in boa, the native state written into it, and boa running that hook and every later one.
//!
//! A boa context and the parse of the script cost about 0.5 ms per transaction, more than a
//! frame tracer's hooks cost on most transactions; geth gives each transaction a fresh
//! runtime, and so does this (nothing is shared between transactions).

use std::rc::Rc;
use std::time::{Duration, Instant};

use alloy_primitives::Address;
use revm::primitives::hardfork::SpecId;
use serde_json::value::RawValue;

use super::error::{Failure, JsTracerError};
use super::fast::Fast;
use super::host::{result_json, Hook, Host as Boa, TxContext};
use super::objects::Shared;
use super::timeout::{over_memory, tick};

/// One tracer's host: native until boa is needed.
pub enum Host {
    Native(Box<Native>),
    Boa(Box<Boa>),
}

pub struct Native {
    /// Taken when boa adopts it.
    fast: Option<Fast>,
    source: Rc<str>,
    spec: SpecId,
    deadline: Instant,
    mem_base: i64,
    shared: Rc<Shared>,
    precompiles: Vec<Address>,
    since_clock: u32,
}

impl Native {
    /// `f` of the native tracer (false once boa has taken it, which only a failed adoption
    /// leaves behind). The flags below are what boa's host derives from its native hooks
    /// (see [`Boa::needs_views`] and [`Boa::fast_needs_interp`]), the same here: boa runs
    /// the same functions after a deoptimisation.
    fn fast_is(&self, f: impl FnOnce(&Fast) -> bool) -> bool {
        self.fast.as_ref().is_some_and(f)
    }
}

impl Host {
    /// The host of `source` (see [`Boa::new`]), native when the script allows.
    pub fn new(
        source: &str,
        config: &str,
        spec: SpecId,
        timeout: Duration,
        shared: Rc<Shared>,
    ) -> Result<Self, JsTracerError> {
        let (deadline, mem_base) = (Instant::now() + timeout, crate::alloc::thread_live());
        if let Some(fast) = Fast::detached(source, config, &shared, (deadline, mem_base)) {
            return Ok(Host::Native(Box::new(Native {
                fast: Some(fast),
                source: source.into(),
                spec,
                deadline,
                mem_base,
                shared,
                precompiles: Vec::new(),
                since_clock: 0,
            })));
        }
        Boa::with_limits(source, config, spec, (deadline, mem_base), shared)
            .map(|b| Host::Boa(Box::new(b)))
    }

    /// Boa's host, built now if it was not (see [`Boa::adopt`]); its native state still to be
    /// written back ([`Boa::leave_native`]).
    #[cold]
    fn boa(&mut self) -> Result<&mut Boa, JsTracerError> {
        if let Host::Native(n) = self {
            let fast = n.fast.take().ok_or(JsTracerError::NotInitialised)?;
            let limits = (n.deadline, n.mem_base);
            let mut b = Boa::adopt(&n.source, n.spec, limits, n.shared.clone(), fast)?;
            b.add_precompiles(&n.precompiles);
            *self = Host::Boa(Box::new(b));
        }
        match self {
            Host::Boa(b) => Ok(b),
            Host::Native(_) => Err(JsTracerError::NotInitialised),
        }
    }

    /// Precompiles beyond the fork's that `isPrecompiled` counts.
    pub fn add_precompiles(&mut self, addrs: &[Address]) {
        match self {
            Host::Native(n) => n.precompiles.extend_from_slice(addrs),
            Host::Boa(b) => b.add_precompiles(addrs),
        }
    }

    /// See [`Boa::rearm`]; a native host only takes the fork and restarts its clock.
    pub fn rearm(&mut self, spec: SpecId, timeout: Duration) -> bool {
        match self {
            Host::Native(n) => {
                n.spec = spec;
                n.deadline = Instant::now() + timeout;
                true
            }
            Host::Boa(b) => b.rearm(spec, timeout),
        }
    }

    pub fn shared(&self) -> &Rc<Shared> {
        match self {
            Host::Native(n) => &n.shared,
            Host::Boa(b) => b.shared(),
        }
    }

    pub fn has_step(&self) -> bool {
        match self {
            Host::Native(n) => n.fast_is(|f| f.has(Hook::Step)),
            Host::Boa(b) => b.has_step(),
        }
    }

    pub fn has_frames(&self) -> bool {
        match self {
            Host::Native(n) => n.fast_is(|f| f.has(Hook::Enter)),
            Host::Boa(b) => b.has_frames(),
        }
    }

    /// See [`Boa::needs_views`].
    pub fn needs_views(&self) -> bool {
        match self {
            Host::Native(n) => n.fast_is(Fast::keeps_views),
            Host::Boa(b) => b.needs_views(),
        }
    }

    pub fn fast_needs_interp(&self) -> bool {
        match self {
            Host::Native(n) => n.fast_is(Fast::uses_views),
            Host::Boa(b) => b.fast_needs_interp(),
        }
    }

    pub fn needs_step_fields(&self) -> bool {
        match self {
            Host::Native(n) => n.fast_is(Fast::reads_step),
            Host::Boa(b) => b.needs_step_fields(),
        }
    }

    /// Whether the hooks currently run natively.
    #[cfg(test)]
    pub fn fast_active(&self) -> bool {
        match self {
            Host::Native(_) => true,
            Host::Boa(b) => b.fast_active(),
        }
    }

    /// Runs every hook in boa from now on.
    #[cfg(test)]
    pub fn disable_fast(&mut self) {
        if let Ok(b) = self.boa() {
            b.disable_fast();
        }
    }

    pub fn fault_plain(&self) -> bool {
        match self {
            Host::Native(n) => !n.fast_is(Fast::keeps_views),
            Host::Boa(b) => b.fault_plain(),
        }
    }

    #[inline]
    pub fn guard_skips(&mut self, before: bool) -> bool {
        match self {
            Host::Native(_) => false,
            Host::Boa(b) => b.guard_skips(before),
        }
    }

    /// See [`Boa::try_fast`]; a native host that gives up on `hook` builds boa's, which then
    /// runs it (`None`).
    #[inline]
    pub fn try_fast(&mut self, hook: Hook) -> Option<Result<(), JsTracerError>> {
        let n = match self {
            Host::Boa(b) => return b.try_fast(hook),
            Host::Native(n) => n,
        };
        let fast = n.fast.as_mut()?;
        if fast.run(hook, &n.shared, (n.deadline, n.mem_base)).is_err() {
            return match self.boa() {
                Ok(b) => b.leave_native(hook),
                Err(e) => Some(Err(e)),
            };
        }
        let limits = (n.deadline, n.mem_base);
        Some(tick(&mut n.since_clock, limits).map_err(|f| JsTracerError::in_hook(hook, f)))
    }

    /// Calls `step`, `fault`, `enter` or `exit`.
    pub fn call(&mut self, hook: Hook) -> Result<(), JsTracerError> {
        if let Host::Native(_) = self {
            if let Some(r) = self.try_fast(hook) {
                return r;
            }
        }
        self.boa()?.call(hook)
    }

    /// Calls `result(ctx, db)` and returns its value as JSON text (see [`Boa::result`]).
    pub fn result(&mut self, t: &TxContext) -> Result<Box<RawValue>, JsTracerError> {
        if let Host::Native(n) = self {
            if let Some(fast) = n.fast.as_mut() {
                *n.shared.tx.borrow_mut() = Some(t.clone());
                let out = fast.result(&n.shared, (n.deadline, n.mem_base));
                *n.shared.tx.borrow_mut() = None;
                if let Ok(text) = out {
                    if over_memory(n.mem_base) {
                        return Err(JsTracerError::in_hook(Hook::Result, Failure::OutOfMemory));
                    }
                    return result_json(text);
                }
            }
        }
        self.boa()?.result(t)
    }
}
