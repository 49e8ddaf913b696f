//! Tracers: revm [`Inspector`]s that build values shaped like geth's tracer results.
//!
//! [`TracerKind`] is the name → constructor registry; [`Tracer`] is the enum the executor runs
//! (enum dispatch, no `dyn` on the hot path). Each tracer decodes its own `tracerConfig`.

pub mod call;
pub mod erc7562;
pub mod errors;
pub mod failed_step;
pub mod gas;
pub mod gas_context;
pub mod hexser;
#[cfg(feature = "js")]
pub mod js;
pub mod opcode;
pub mod precompile_error;
pub mod prestate;
pub mod spool;
pub mod state;

use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde_json::Value;

use call::{CallTracer, CallTracerConfig};
use erc7562::{Erc7562Config, Erc7562Tracer};
use opcode::{StructLogger, StructLoggerConfig};
use prestate::{PrestateConfig, PrestateTracer};

/// Errors choosing or configuring a tracer.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(
        "unknown tracer {0:?}; known tracers: {known}, or a JavaScript tracer (a .js file, or inline source starting with '{{')",
        known = TracerKind::NAMES.join(", ")
    )]
    UnknownTracer(String),
    #[error("invalid tracerConfig for {tracer}: {msg}")]
    BadConfig { tracer: &'static str, msg: String },
    /// A JavaScript tracer that cannot run (syntax error, missing function, setup failed).
    #[cfg(feature = "js")]
    #[error("invalid JavaScript tracer: {0}")]
    Js(js::JsTracerError),
}

/// The tracers chaintrace knows, by geth name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracerKind {
    Call,
    Prestate,
    /// geth's struct logger (the default tracer of debug_traceTransaction).
    StructLog,
    /// geth's `erc7562Tracer` (ERC-4337 validation rules per frame).
    Erc7562,
    /// A JavaScript tracer (geth's JS tracer API), built with [`TracerSpec::js`].
    #[cfg(feature = "js")]
    Js,
}

impl TracerKind {
    pub const NAMES: &'static [&'static str] = &[
        "callTracer",
        "prestateTracer",
        "opcodeTracer",
        "structLogger",
        "erc7562Tracer",
    ];

    pub fn from_name(name: &str) -> Result<Self, TraceError> {
        match name {
            "callTracer" => Ok(TracerKind::Call),
            "prestateTracer" => Ok(TracerKind::Prestate),
            "opcodeTracer" | "structLogger" => Ok(TracerKind::StructLog),
            "erc7562Tracer" => Ok(TracerKind::Erc7562),
            other => Err(TraceError::UnknownTracer(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TracerKind::Call => "callTracer",
            TracerKind::Prestate => "prestateTracer",
            TracerKind::StructLog => "opcodeTracer",
            TracerKind::Erc7562 => "erc7562Tracer",
            #[cfg(feature = "js")]
            TracerKind::Js => "javascript",
        }
    }
}

/// A tracer chosen by name with its decoded configuration.
#[derive(Clone, Debug)]
pub enum TracerSpec {
    Call(CallTracerConfig),
    Prestate(PrestateConfig),
    StructLog(StructLoggerConfig),
    Erc7562(Erc7562Config),
    /// Gas accounting for `chaintrace gas` (not a geth tracer; not selectable by name).
    Gas(gas::GasConfig),
    #[cfg(feature = "js")]
    Js(js::JsSpec),
}

impl TracerSpec {
    /// A JavaScript tracer from its source; the script is checked now, before any replay.
    #[cfg(feature = "js")]
    pub fn js(
        source: &str,
        config: Option<&Value>,
        timeout: std::time::Duration,
    ) -> Result<Self, TraceError> {
        js::JsSpec::new(source, config, timeout)
            .map(TracerSpec::Js)
            .map_err(TraceError::Js)
    }

    /// Decodes `tracerConfig` (absent or `null` means defaults) for the named tracer.
    pub fn new(kind: TracerKind, config: Option<&Value>) -> Result<Self, TraceError> {
        fn decode<T: serde::de::DeserializeOwned + Default>(
            tracer: &'static str,
            v: Option<&Value>,
        ) -> Result<T, TraceError> {
            match v {
                None | Some(Value::Null) => Ok(T::default()),
                Some(v) if !v.is_object() => Err(TraceError::BadConfig {
                    tracer,
                    msg: format!("expected a JSON object, got {v}"),
                }),
                Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                    // Name the field, as geth's error does: the first member that alone fails.
                    let field = v.as_object().and_then(|m| {
                        m.iter().find_map(|(k, x)| {
                            let one = Value::Object([(k.clone(), x.clone())].into_iter().collect());
                            serde_json::from_value::<T>(one)
                                .is_err()
                                .then_some(k.clone())
                        })
                    });
                    TraceError::BadConfig {
                        tracer,
                        msg: match field {
                            Some(k) => format!("{k}: {e}"),
                            None => e.to_string(),
                        },
                    }
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
            TracerKind::StructLog => TracerSpec::StructLog(decode(kind.name(), config)?),
            TracerKind::Erc7562 => {
                let c: Erc7562Config = decode(kind.name(), config)?;
                c.check().map_err(|msg| TraceError::BadConfig {
                    tracer: kind.name(),
                    msg,
                })?;
                TracerSpec::Erc7562(c)
            }
            #[cfg(feature = "js")]
            TracerKind::Js => {
                return Err(TraceError::BadConfig {
                    tracer: kind.name(),
                    msg: "a JavaScript tracer needs its source (TracerSpec::js)".into(),
                })
            }
        })
    }

    pub fn kind(&self) -> TracerKind {
        match self {
            TracerSpec::Call(_) => TracerKind::Call,
            TracerSpec::Prestate(_) => TracerKind::Prestate,
            TracerSpec::StructLog(_) | TracerSpec::Gas(_) => TracerKind::StructLog,
            TracerSpec::Erc7562(_) => TracerKind::Erc7562,
            #[cfg(feature = "js")]
            TracerSpec::Js(_) => TracerKind::Js,
        }
    }

    /// A fresh tracer for one transaction.
    pub fn build(&self, spec: SpecId, log_index_offset: u64) -> Tracer {
        match self {
            TracerSpec::Call(c) => Tracer::Call(CallTracer::new(c.clone(), log_index_offset)),
            TracerSpec::Prestate(c) => Tracer::Prestate(PrestateTracer::new(c.clone(), spec)),
            TracerSpec::StructLog(c) => Tracer::StructLog(Box::new(StructLogger::new(c.clone()))),
            TracerSpec::Gas(c) => Tracer::Gas(Box::new(gas::GasProfiler::with_config(c))),
            TracerSpec::Erc7562(c) => {
                Tracer::Erc7562(Box::new(Erc7562Tracer::new(c, log_index_offset)))
            }
            #[cfg(feature = "js")]
            TracerSpec::Js(j) => Tracer::Js(Box::new(j.build(spec))),
        }
    }
}

/// The tracer the executor runs for one transaction.
pub enum Tracer {
    Call(CallTracer),
    Prestate(PrestateTracer),
    StructLog(Box<StructLogger>),
    Gas(Box<gas::GasProfiler>),
    Erc7562(Box<Erc7562Tracer>),
    #[cfg(feature = "js")]
    Js(Box<js::JsTracer>),
    /// No tracing: replaying the transactions before the target in its block.
    None,
}

/// The revm context every tracer inspects: mainnet environment over a database `DB`.
pub type Ctx<DB> = Context<BlockEnv, TxEnv, CfgEnv, DB, Journal<DB>, ()>;

macro_rules! dispatch {
    ($self:ident, $t:ident => $e:expr, $default:expr) => {
        match $self {
            Tracer::Call($t) => $e,
            Tracer::Prestate($t) => $e,
            Tracer::StructLog($t) => $e,
            Tracer::Gas($t) => $e,
            Tracer::Erc7562($t) => $e,
            #[cfg(feature = "js")]
            Tracer::Js($t) => $e,
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
