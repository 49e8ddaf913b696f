//! Tracers: revm [`Inspector`]s that build values shaped like geth's tracer results.
//!
//! [`TracerKind`] is the name → constructor registry; [`Tracer`] is the enum the executor runs
//! (enum dispatch, no `dyn` on the hot path). Each tracer decodes its own `tracerConfig`.

pub mod call;
pub mod errors;
pub mod hexser;
pub mod prestate;

use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde_json::Value;

use call::{CallTracer, CallTracerConfig};
use prestate::{PrestateConfig, PrestateTracer};

/// Errors choosing or configuring a tracer.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("unknown tracer {0:?}; known tracers: {known}", known = TracerKind::NAMES.join(", "))]
    UnknownTracer(String),
    #[error("invalid tracerConfig for {tracer}: {msg}")]
    BadConfig { tracer: &'static str, msg: String },
}

/// The tracers chaintrace knows, by geth name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracerKind {
    Call,
    Prestate,
}

impl TracerKind {
    pub const NAMES: &'static [&'static str] = &["callTracer", "prestateTracer"];

    pub fn from_name(name: &str) -> Result<Self, TraceError> {
        match name {
            "callTracer" => Ok(TracerKind::Call),
            "prestateTracer" => Ok(TracerKind::Prestate),
            other => Err(TraceError::UnknownTracer(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TracerKind::Call => "callTracer",
            TracerKind::Prestate => "prestateTracer",
        }
    }
}

/// A tracer chosen by name with its decoded configuration.
#[derive(Clone, Debug)]
pub enum TracerSpec {
    Call(CallTracerConfig),
    Prestate(PrestateConfig),
}

impl TracerSpec {
    /// Decodes `tracerConfig` (absent or `null` means defaults) for the named tracer.
    pub fn new(kind: TracerKind, config: Option<&Value>) -> Result<Self, TraceError> {
        fn decode<T: serde::de::DeserializeOwned + Default>(
            tracer: &'static str,
            v: Option<&Value>,
        ) -> Result<T, TraceError> {
            match v {
                None | Some(Value::Null) => Ok(T::default()),
                Some(v) => serde_json::from_value(v.clone()).map_err(|e| TraceError::BadConfig {
                    tracer,
                    msg: e.to_string(),
                }),
            }
        }
        Ok(match kind {
            TracerKind::Call => TracerSpec::Call(decode(kind.name(), config)?),
            TracerKind::Prestate => {
                let c: PrestateConfig = decode(kind.name(), config)?;
                if c.diff_mode && c.include_empty {
                    return Err(TraceError::BadConfig {
                        tracer: kind.name(),
                        msg: "cannot use diffMode with includeEmpty".into(),
                    });
                }
                TracerSpec::Prestate(c)
            }
        })
    }

    pub fn kind(&self) -> TracerKind {
        match self {
            TracerSpec::Call(_) => TracerKind::Call,
            TracerSpec::Prestate(_) => TracerKind::Prestate,
        }
    }

    /// A fresh tracer for one transaction.
    pub fn build(&self, spec: SpecId, log_index_offset: u64) -> Tracer {
        match self {
            TracerSpec::Call(c) => Tracer::Call(CallTracer::new(c.clone(), log_index_offset)),
            TracerSpec::Prestate(c) => Tracer::Prestate(PrestateTracer::new(c.clone(), spec)),
        }
    }
}

/// The tracer the executor runs for one transaction.
pub enum Tracer {
    Call(CallTracer),
    Prestate(PrestateTracer),
    /// No tracing: replaying the transactions before the target in its block.
    None,
}

type Ctx<DB> = Context<BlockEnv, TxEnv, CfgEnv, DB, Journal<DB>, ()>;

macro_rules! dispatch {
    ($self:ident, $t:ident => $e:expr, $default:expr) => {
        match $self {
            Tracer::Call($t) => $e,
            Tracer::Prestate($t) => $e,
            Tracer::None => $default,
        }
    };
}

impl<DB: Database> Inspector<Ctx<DB>> for Tracer {
    #[inline]
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        dispatch!(self, t => t.step(interp, ctx), ())
    }
    #[inline]
    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        dispatch!(self, t => t.step_end(interp, ctx), ())
    }
    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        dispatch!(self, t => Inspector::<Ctx<DB>>::log(t, ctx, log), ())
    }
    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        dispatch!(self, t => t.log_full(interp, ctx, log), ())
    }
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        dispatch!(self, t => t.call(ctx, inputs), None)
    }
    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        dispatch!(self, t => t.call_end(ctx, inputs, outcome), ())
    }
    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        dispatch!(self, t => t.create(ctx, inputs), None)
    }
    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        dispatch!(self, t => t.create_end(ctx, inputs, outcome), ())
    }
}
