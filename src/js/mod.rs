//! The JavaScript host: geth's JavaScript tracer API hosted in boa, with a native evaluator for
//! the hooks it can run without boa.
//!
//! [`JsSpec`] is the script, its `tracerConfig` and its time limit; building it validates the
//! script once so a bad one fails before any replay, and [`JsSpec::host`] gives the [`Host`]
//! one transaction's tracer calls. The tracer (`trace/javascript.rs`) owns the run: before each
//! call it writes what the hook may read into [`Shared`] (the step, the frame, the frame's
//! result, the transaction's [`TxContext`]) and points `log` and `db` at the interpreter and at
//! a [`Db`] for its duration ([`call_with`]); a failing hook gives a [`JsTracerError`] with
//! geth's text. Nothing here knows revm's inspector hooks or the tracers around it.

pub mod bigint;
pub mod buffers;
mod error;
mod fast;
pub mod globals;
mod hook;
pub mod host;
mod json;
mod lazy;
pub mod limits;
pub mod named;
pub mod objects;
mod pinned;
pub mod source;
mod spare;
pub mod timeout;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use revm::interpreter::Interpreter;
use revm::primitives::hardfork::SpecId;
use serde_json::Value;

pub use error::{Failure, JsTracerError};
pub use hook::Hook;
pub use lazy::Host;
pub use objects::{Db, FrameData, FrameResultData, Shared, StepData, TxContext};

/// A JavaScript tracer: its source, the `tracerConfig` handed to `setup`, its time limit.
#[derive(Clone, Debug)]
pub struct JsSpec {
    source: Arc<str>,
    config: String,
    timeout: Duration,
    /// Set once any tracer built from this spec timed out, so a re-run of the same replay
    /// (the next prefetch pass) fails at once instead of waiting out the limit again.
    timed_out: Arc<AtomicBool>,
    /// The key of the host that validated the script, kept for the first build (`spare.rs`).
    spare: Arc<spare::Key>,
}

impl JsSpec {
    /// Checks the script (syntax, `result`/`fault`, `enter`/`exit` pairing, `setup`).
    pub fn new(
        source: &str,
        config: Option<&Value>,
        timeout: Duration,
    ) -> Result<Self, JsTracerError> {
        let depth = source::source_nesting(source);
        if depth > source::MAX_SOURCE_NESTING {
            return Err(JsTracerError::TooDeep {
                depth,
                max: source::MAX_SOURCE_NESTING,
            });
        }
        let config = match config {
            None | Some(Value::Null) => "{}".to_string(),
            Some(v) => v.to_string(),
        };
        let host = Host::new(source, &config, SpecId::OSAKA, timeout, Shared::new())?;
        let key = spare::Key::new();
        spare::put(&key, host);
        Ok(JsSpec {
            source: source.into(),
            config,
            timeout,
            timed_out: Arc::new(AtomicBool::new(false)),
            spare: key,
        })
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The host for one transaction's tracer under fork `spec`: the first one on the thread
    /// that validated the script gets the validating host, later ones build their own. Once a
    /// tracer built from this spec timed out ([`timeout_flag`](Self::timeout_flag)), every
    /// later one fails at once.
    pub fn host(&self, spec: SpecId) -> Result<Host, JsTracerError> {
        let spare =
            spare::take(&self.spare).and_then(|mut h| h.rearm(spec, self.timeout).then_some(h));
        if self.timed_out.load(Ordering::Relaxed) {
            return Err(JsTracerError::in_hook(Hook::Setup, Failure::Timeout));
        }
        match spare {
            Some(h) => Ok(h),
            None => Host::new(
                &self.source,
                &self.config,
                spec,
                self.timeout,
                Shared::new(),
            ),
        }
    }

    /// The flag a tracer built from this spec sets when it times out.
    pub fn timeout_flag(&self) -> Arc<AtomicBool> {
        self.timed_out.clone()
    }
}

/// Points the shared view at `interp` and `reader` for the duration of `f`.
pub fn call_with<'a, T>(
    shared: &Shared,
    interp: Option<&Interpreter>,
    reader: &mut (dyn Db + 'a),
    f: impl FnOnce(&Shared) -> T,
) -> T {
    let ptr: *mut (dyn Db + 'a) = reader;
    // SAFETY: the lifetime is erased only to store the pointer in `shared`; it is cleared below
    // before `reader` goes out of scope, and nothing else uses `reader` while `f` runs.
    let ptr: *mut (dyn Db + 'static) = unsafe { std::mem::transmute(ptr) };
    shared.reader.set(Some(ptr));
    shared
        .interp
        .set(interp.map_or(std::ptr::null(), |i| i as *const Interpreter));
    let out = f(shared);
    shared.interp.set(std::ptr::null());
    shared.reader.set(None);
    out
}
