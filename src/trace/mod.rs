//! Tracers: revm [`Inspector`]s that build values shaped like geth's tracer results.
//!
//! [`TracerKind`] is the name → constructor registry; [`Tracer`] is the enum the executor runs
//! (enum dispatch, no `dyn` on the hot path). Each tracer decodes its own `tracerConfig`.

pub mod call;
pub mod erc7562;
pub mod errors;
pub mod failed_step;
pub mod flat;
pub mod gas;
pub mod gas_context;
pub mod hexser;
#[cfg(feature = "js")]
pub mod javascript;
pub mod keccak;
pub mod mux;
pub mod opcode;
pub mod parity;
pub mod plain;
pub mod precompile_error;
pub mod prestate;
pub mod selectors;
pub mod sim_logs;
pub mod spool;
pub mod state;
pub mod steps;
pub mod vm_trace;

use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde_json::Value;

use call::{CallTracer, CallTracerConfig};
use erc7562::{Erc7562Config, Erc7562Tracer};
use flat::{FlatCallConfig, FlatCallTracer};
use keccak::KeccakPreimageTracer;
use mux::MuxTracer;
use opcode::{StructLogger, StructLoggerConfig};
use prestate::{PrestateConfig, PrestateTracer};
use selectors::FourByteTracer;

/// A JavaScript tracer's default time limit (geth's `defaultTraceTimeout`, 5 s).
pub const DEFAULT_JS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Errors choosing or configuring a tracer.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(
        "unknown tracer {0:?}; known tracers: {known}, geth's JavaScript tracers by name (bigramTracer, evmdisTracer, opcountTracer, trigramTracer, unigramTracer, callTracerLegacy, prestateTracerLegacy, 4byteTracerLegacy, noopTracerLegacy), or a JavaScript tracer (a .js file, or inline source starting with '{{')",
        known = TracerKind::NAMES.join(", ")
    )]
    UnknownTracer(String),
    #[error("invalid tracerConfig for {tracer}: {msg}")]
    BadConfig { tracer: &'static str, msg: String },
    /// A JavaScript tracer that cannot run (syntax error, missing function, setup failed).
    #[cfg(feature = "js")]
    #[error("invalid JavaScript tracer: {0}")]
    Js(crate::js::JsTracerError),
}

/// The most tracers one muxTracer runs, nested muxTracers' children included (each child is a
/// tracer built and run at every hook; a JavaScript one is a script engine of its own).
pub const MAX_MUX_CHILDREN: usize = 64;

/// The tracers chaintrace knows, by geth name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracerKind {
    Call,
    /// geth's flatCallTracer: the call frames in Parity's flat shape.
    FlatCall,
    /// geth's 4byteTracer: selectors called, with argument sizes.
    FourByte,
    /// geth's muxTracer: several tracers in one replay.
    Mux,
    /// geth's keccak256PreimageTracer: every KECCAK256 input by its hash.
    Keccak256Preimage,
    /// geth's noopTracer: `{}`.
    Noop,
    /// Parity's `trace` entries, as reth's `trace_transaction` gives them (not a geth tracer).
    Parity,
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
        "flatCallTracer",
        "prestateTracer",
        "4byteTracer",
        "muxTracer",
        "keccak256PreimageTracer",
        "noopTracer",
        "opcodeTracer",
        "structLogger",
        "erc7562Tracer",
        "parity",
    ];

    pub fn from_name(name: &str) -> Result<Self, TraceError> {
        match name {
            "callTracer" => Ok(TracerKind::Call),
            "flatCallTracer" => Ok(TracerKind::FlatCall),
            "4byteTracer" => Ok(TracerKind::FourByte),
            "muxTracer" => Ok(TracerKind::Mux),
            "keccak256PreimageTracer" => Ok(TracerKind::Keccak256Preimage),
            "noopTracer" => Ok(TracerKind::Noop),
            "parity" => Ok(TracerKind::Parity),
            "prestateTracer" => Ok(TracerKind::Prestate),
            "opcodeTracer" | "structLogger" => Ok(TracerKind::StructLog),
            "erc7562Tracer" => Ok(TracerKind::Erc7562),
            other => Err(TraceError::UnknownTracer(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TracerKind::Call => "callTracer",
            TracerKind::FlatCall => "flatCallTracer",
            TracerKind::FourByte => "4byteTracer",
            TracerKind::Mux => "muxTracer",
            TracerKind::Keccak256Preimage => "keccak256PreimageTracer",
            TracerKind::Noop => "noopTracer",
            TracerKind::Parity => "parity",
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
    FlatCall(FlatCallConfig),
    FourByte,
    /// The children by name, sorted as geth prints them.
    Mux(Vec<(String, TracerSpec)>),
    Keccak256Preimage,
    Noop,
    Parity,
    /// [`TracerSpec::Parity`] with the `stateDiff` kept, and the vmTrace recorded when
    /// `vm_trace` (what `trace_replay*` and `trace_call*` were asked for; not selectable by name).
    ParityReplay {
        vm_trace: bool,
    },
    Prestate(PrestateConfig),
    StructLog(StructLoggerConfig),
    Erc7562(Erc7562Config),
    /// Gas accounting for `chaintrace gas` (not a geth tracer; not selectable by name).
    Gas(gas::GasConfig),
    #[cfg(feature = "js")]
    Js(crate::js::JsSpec),
}

impl TracerSpec {
    /// Whether the result can show the balance of an account the transaction did not look up:
    /// Parity's stateDiff (every account the run changed, the OP fee vaults too) and a
    /// JavaScript tracer (`db` reads any account). The prestate tracer lists only what the
    /// transaction looked up, as geth's does.
    pub fn shows_unlooked_balances(&self) -> bool {
        match self {
            TracerSpec::ParityReplay { .. } => true,
            #[cfg(feature = "js")]
            TracerSpec::Js(_) => true,
            TracerSpec::Mux(children) => children.iter().any(|(_, c)| c.shows_unlooked_balances()),
            _ => false,
        }
    }

    /// A JavaScript tracer from its source; the script is checked now, before any replay.
    #[cfg(feature = "js")]
    pub fn js(
        source: &str,
        config: Option<&Value>,
        timeout: std::time::Duration,
    ) -> Result<Self, TraceError> {
        crate::js::JsSpec::new(source, config, timeout)
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
            TracerKind::FlatCall => TracerSpec::FlatCall(decode(kind.name(), config)?),
            // geth's 4byte, keccak256 preimage and noop tracers never read their config.
            TracerKind::FourByte => TracerSpec::FourByte,
            TracerKind::Keccak256Preimage => TracerSpec::Keccak256Preimage,
            TracerKind::Noop => TracerSpec::Noop,
            TracerKind::Parity => TracerSpec::Parity,
            TracerKind::Mux => return Self::mux(config, DEFAULT_JS_TIMEOUT),
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

    /// A tracer by the name geth's directory resolves (eth/tracers/dir.go `New`): a native
    /// tracer, a JavaScript tracer geth ships by name, or else JavaScript source; children of
    /// a muxTracer the same way, with the same JavaScript `timeout`.
    pub fn named(
        name: &str,
        config: Option<&Value>,
        timeout: std::time::Duration,
    ) -> Result<Self, TraceError> {
        match TracerKind::from_name(name) {
            Ok(TracerKind::Mux) => Self::mux(config, timeout),
            Ok(kind) => Self::new(kind, config),
            Err(e) => Self::script(name, config, timeout).ok_or(e)?,
        }
    }

    /// A JavaScript tracer geth ships by name, or JavaScript source; `None` for neither.
    #[cfg(feature = "js")]
    fn script(
        name: &str,
        config: Option<&Value>,
        timeout: std::time::Duration,
    ) -> Option<Result<Self, TraceError>> {
        let source = match crate::js::named::source(name) {
            Some(s) => s,
            None if name.trim_start().starts_with('{') => name,
            None => return None,
        };
        Some(Self::js(source, config, timeout))
    }

    #[cfg(not(feature = "js"))]
    fn script(
        _name: &str,
        _config: Option<&Value>,
        _timeout: std::time::Duration,
    ) -> Option<Result<Self, TraceError>> {
        None
    }

    /// geth's muxTracer from its config: an object of tracer names and their configs.
    fn mux(config: Option<&Value>, timeout: std::time::Duration) -> Result<Self, TraceError> {
        let bad = |msg: String| TraceError::BadConfig {
            tracer: "muxTracer",
            msg,
        };
        let children = match config {
            None | Some(Value::Null) => return Ok(TracerSpec::Mux(Vec::new())),
            Some(Value::Object(m)) => m,
            Some(v) => return Err(bad(format!("expected an object of tracer names, got {v}"))),
        };
        let too_many = |n: usize| {
            bad(format!(
                "at most {MAX_MUX_CHILDREN} tracers may run under muxTracer (nested ones \
                 included), got {n}"
            ))
        };
        if children.len() > MAX_MUX_CHILDREN {
            return Err(too_many(children.len()));
        }
        let mut out = Vec::with_capacity(children.len());
        let mut count = 0;
        for (name, cfg) in children {
            let child = match TracerKind::from_name(name) {
                Ok(TracerKind::StructLog) => {
                    return Err(bad(format!(
                        "{name:?}: geth's struct logger is not a named tracer and cannot run under muxTracer"
                    )))
                }
                _ => Self::named(name, Some(cfg), timeout)?,
            };
            // Counted as they are made: a nested mux's children too, before any more is built.
            count += child.tracers();
            if count > MAX_MUX_CHILDREN {
                return Err(too_many(count));
            }
            out.push((name.clone(), child));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(TracerSpec::Mux(out))
    }

    /// How many tracers this runs: a muxTracer's children (nested ones counted down to their
    /// own), 1 for any other.
    pub fn tracers(&self) -> usize {
        match self {
            TracerSpec::Mux(children) => children.iter().map(|(_, c)| c.tracers()).sum(),
            _ => 1,
        }
    }

    pub fn kind(&self) -> TracerKind {
        match self {
            TracerSpec::Call(_) => TracerKind::Call,
            TracerSpec::FlatCall(_) => TracerKind::FlatCall,
            TracerSpec::FourByte => TracerKind::FourByte,
            TracerSpec::Mux(_) => TracerKind::Mux,
            TracerSpec::Keccak256Preimage => TracerKind::Keccak256Preimage,
            TracerSpec::Noop => TracerKind::Noop,
            TracerSpec::Parity | TracerSpec::ParityReplay { .. } => TracerKind::Parity,
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
            TracerSpec::FlatCall(c) => Tracer::FlatCall(Box::new(FlatCallTracer::new(c.clone()))),
            TracerSpec::FourByte => Tracer::FourByte(FourByteTracer::new(spec)),
            TracerSpec::Mux(children) => Tracer::Mux(Box::new(MuxTracer {
                children: children
                    .iter()
                    .map(|(n, c)| (n.clone(), c.build(spec, log_index_offset)))
                    .collect(),
            })),
            TracerSpec::Keccak256Preimage => Tracer::Keccak256Preimage(Default::default()),
            TracerSpec::Noop => Tracer::Noop,
            TracerSpec::Parity => Tracer::Parity(Box::new(parity::ParityTracer {
                call: CallTracer::new(CallTracerConfig::default(), log_index_offset),
                state_diff: false,
                vm: None,
            })),
            TracerSpec::ParityReplay { vm_trace } => {
                Tracer::Parity(Box::new(parity::ParityTracer {
                    call: CallTracer::new(CallTracerConfig::default(), log_index_offset),
                    state_diff: true,
                    vm: vm_trace.then(Default::default),
                }))
            }
            TracerSpec::Prestate(c) => Tracer::Prestate(PrestateTracer::new(c.clone(), spec)),
            TracerSpec::StructLog(c) => Tracer::StructLog(Box::new(StructLogger::new(c.clone()))),
            TracerSpec::Gas(c) => Tracer::Gas(Box::new(gas::GasProfiler::with_config(c))),
            TracerSpec::Erc7562(c) => {
                Tracer::Erc7562(Box::new(Erc7562Tracer::new(c, log_index_offset)))
            }
            #[cfg(feature = "js")]
            TracerSpec::Js(j) => Tracer::Js(Box::new(javascript::JsTracer::new(j, spec))),
        }
    }
}

/// The tracer the executor runs for one transaction.
pub enum Tracer {
    Call(CallTracer),
    FlatCall(Box<FlatCallTracer>),
    FourByte(FourByteTracer),
    Mux(Box<MuxTracer<Tracer>>),
    Keccak256Preimage(KeccakPreimageTracer),
    /// geth's noopTracer: no hooks.
    Noop,
    /// The callTracer's frames, finished as Parity's `trace` entries (and the vmTrace).
    Parity(Box<parity::ParityTracer>),
    Prestate(PrestateTracer),
    StructLog(Box<StructLogger>),
    Gas(Box<gas::GasProfiler>),
    Erc7562(Box<Erc7562Tracer>),
    #[cfg(feature = "js")]
    Js(Box<javascript::JsTracer>),
    /// Every step's pc and frame, or the machine at one step (`chaintrace debug`).
    Steps(Box<steps::StepRecorder>),
}

impl Tracer {
    /// A deposit failed before it ran: op-geth's one `OnEnter(0, STOP, …)`, to every tracer
    /// that keeps call frames (the others see nothing, as op-geth's hooks give them nothing).
    pub fn enter_failed_deposit(&mut self) {
        match self {
            Tracer::Call(t) => t.enter_failed_deposit(),
            Tracer::FlatCall(t) => t.inner.enter_failed_deposit(),
            Tracer::Parity(t) => t.call.enter_failed_deposit(),
            Tracer::Erc7562(t) => t.enter_failed_deposit(),
            Tracer::Mux(m) => m
                .children
                .iter_mut()
                .for_each(|(_, c)| c.enter_failed_deposit()),
            _ => {}
        }
    }
}

/// A frame with no code: revm runs the STOP it pads empty code with (a CREATE with empty init
/// code), where geth runs nothing (core/vm/interpreter.go `Run`: "Don't bother with the
/// execution if there's no code"), so no tracer sees that step.
#[inline]
fn runs_no_code(interp: &Interpreter) -> bool {
    use revm::interpreter::interpreter_types::LegacyBytecode;
    interp.bytecode.bytecode_slice().is_empty()
}

/// The tracer a replay runs (the [`Tracer`] enum, or one tracer as itself, whose hooks then
/// inline into revm's loop), with the padding STOP of empty code kept from it
/// ([`runs_no_code`]): the opcode is read first, the code's length only for a STOP; in
/// `step_end` only an opcode that set an action can be that STOP. It forwards the hooks the
/// tracers implement.
pub struct Alone<I>(pub I);

/// Forwarded. (A plain run of empty code ends with its padding STOP, noted as `LastStep`'s
/// default, which is what the tracer would hold without it.)
impl<I: plain::Plain> plain::Plain for Alone<I> {
    #[inline]
    fn plain(&self) -> bool {
        self.0.plain()
    }
    #[inline]
    fn plain_step_ends(&self) -> bool {
        self.0.plain_step_ends()
    }
    fn ran_plain(&mut self, last: errors::LastStep, refund: i64, journal_at: usize) {
        self.0.ran_plain(last, refund, journal_at)
    }
}

impl<DB: Database, I: Inspector<Ctx<DB>>> Inspector<Ctx<DB>> for Alone<I> {
    #[inline(always)]
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        use revm::interpreter::interpreter_types::Jumps;
        if interp.bytecode.opcode() == revm::bytecode::opcode::STOP && runs_no_code(interp) {
            return;
        }
        self.0.step(interp, ctx)
    }
    #[inline(always)]
    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        use revm::interpreter::interpreter_types::LoopControl;
        if interp.bytecode.action().is_some() && runs_no_code(interp) {
            return;
        }
        self.0.step_end(interp, ctx)
    }
    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        Inspector::<Ctx<DB>>::log(&mut self.0, ctx, log)
    }
    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        self.0.log_full(interp, ctx, log)
    }
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.0.call(ctx, inputs)
    }
    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.0.call_end(ctx, inputs, outcome)
    }
    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.0.create(ctx, inputs)
    }
    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        self.0.create_end(ctx, inputs, outcome)
    }
    fn selfdestruct(
        &mut self,
        contract: alloy_primitives::Address,
        target: alloy_primitives::Address,
        value: alloy_primitives::U256,
    ) {
        Inspector::<Ctx<DB>>::selfdestruct(&mut self.0, contract, target, value)
    }
}

pub use state::Ctx;

macro_rules! dispatch {
    ($self:ident, $t:ident => $e:expr, $default:expr) => {
        match $self {
            Tracer::Call($t) => $e,
            Tracer::FlatCall($t) => $e,
            Tracer::FourByte($t) => $e,
            Tracer::Mux($t) => $e,
            Tracer::Keccak256Preimage($t) => $e,
            Tracer::Parity($t) => $e,
            Tracer::Prestate($t) => $e,
            Tracer::StructLog($t) => $e,
            Tracer::Gas($t) => $e,
            Tracer::Erc7562($t) => $e,
            Tracer::Steps($t) => $e,
            #[cfg(feature = "js")]
            Tracer::Js($t) => $e,
            Tracer::Noop => $default,
        }
    };
}

/// The enum's tracers all read every opcode (a JavaScript tracer runs as itself).
impl plain::Plain for Tracer {}

impl<DB: Database> Inspector<Ctx<DB>> for Tracer {
    // Empty code's padding STOP never reaches a tracer: every replay runs its tracer inside
    // [`Alone`], which skips it.
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
