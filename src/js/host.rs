//! The boa host of one tracer: a JavaScript context with geth's globals, the tracer object, and
//! the calls into it under the time limit.
//!
//! A context serves one traced transaction (scripts keep state in `this`). Building it also
//! validates the script: a syntax error, a missing `result`/`fault`, or only one of
//! `enter`/`exit` fails here, before any replay, and so does an exception in `setup`.

use std::rc::Rc;
use std::time::{Duration, Instant};

use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsError, JsValue, Script, Source};
use revm::primitives::hardfork::SpecId;

pub use super::objects::TxContext;
use super::objects::{make_db, make_frames, make_log, Shared};
use super::timeout::{over_memory, run_with_deadline, tick, Run, LOOP_ITERATIONS_PER_SECOND};
use serde_json::value::RawValue;

use super::error::{Failure, JsTracerError};
use super::fast::{Fast, Guard, Intact};
pub use super::hook::Hook;
use super::pinned::hidden;
use super::source::direct_safe;
use super::{bigint, buffers, globals};
use crate::geth::json::escape_html;

/// The message of a JavaScript exception, without boa's position text.
fn js_message(e: &JsError, ctx: &mut Context) -> String {
    if let Ok(n) = e.try_native(ctx) {
        // `kind: message` without boa's "(file at line:col)" position text.
        return if n.message().is_empty() {
            n.kind().to_string()
        } else {
            format!("{}: {}", n.kind(), n.message().trim())
        };
    }
    if let Ok(v) = e.clone().into_opaque(ctx) {
        if let Ok(s) = v.to_string(ctx) {
            return s.to_std_string_escaped();
        }
    }
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// One tracer's JavaScript world.
pub struct Host {
    ctx: Context,
    shared: Rc<Shared>,
    step: Wrapper,
    fault: Wrapper,
    enter: Wrapper,
    exit: Wrapper,
    result: Script,
    /// Plain function calls for scripts that can neither loop nor recurse (see
    /// [`direct_safe`]).
    direct: Option<Direct>,
    /// Natively evaluated hooks, while the script stays inside their subset.
    fast: Option<Fast>,
    /// Otherwise, `step`'s early returns decided natively (see [`Guard`]).
    guard: Option<Guard>,
    /// `fault` is inside the native subset (it reads no views and no `db`).
    fault_plain: bool,
    /// Direct or native calls since the clock was last read (see [`Host::late`]).
    since_clock: u32,
    /// Whether the hooks may read `log.stack`, `log.memory` or `log.contract`: not when they
    /// compiled to native code (which cannot), even after a deoptimisation hands the same
    /// functions to boa.
    views: bool,
    deadline: Instant,
    /// What the thread held when the tracer was created (the memory limit's base).
    mem_base: i64,
}

/// The script that calls a hook in boa (`__tracer.step(__log, __db)`), compiled at its first
/// use: a hook that runs natively or directly never needs it.
enum Wrapper {
    /// The script defines no such hook.
    Absent,
    Text(&'static str),
    Compiled(Script),
}

impl Wrapper {
    fn of(present: bool, text: &'static str) -> Self {
        if present {
            Wrapper::Text(text)
        } else {
            Wrapper::Absent
        }
    }

    fn is_some(&self) -> bool {
        !matches!(self, Wrapper::Absent)
    }

    fn script(&mut self, ctx: &mut Context) -> Result<Option<Script>, JsTracerError> {
        match self {
            Wrapper::Absent => Ok(None),
            Wrapper::Compiled(s) => Ok(Some(s.clone())),
            Wrapper::Text(t) => {
                let s = compile(ctx, t)?;
                *self = Wrapper::Compiled(s.clone());
                Ok(Some(s))
            }
        }
    }
}

/// The tracer's functions and their arguments, for direct calls.
struct Direct {
    this: JsValue,
    step: Option<JsObject>,
    fault: JsObject,
    enter: Option<JsObject>,
    exit: Option<JsObject>,
    log_db: [JsValue; 2],
    frame: [JsValue; 1],
    frame_result: [JsValue; 1],
}

/// The built-ins native code stands in for, as they are now.
struct Builtins {
    /// `Array.prototype.push` and `pop`, the globals `toHex` and `slice`.
    push: Option<JsObject>,
    pop: Option<JsObject>,
    to_hex: Option<JsObject>,
    slice: Option<JsObject>,
    /// What a string's `slice` and a `bigInt`'s methods reach: `String.prototype.slice`,
    /// `BigInt.prototype.toString`, the globals `Number`, `BigInt`, `isFinite`, `Math.trunc`.
    string_bigint_builtins: [Option<JsObject>; 6],
    /// The global `toWord` and `db.getState`.
    state_fns: [Option<JsObject>; 2],
}

impl Builtins {
    /// Reads them (not `bigInt`, whose getter would build it).
    fn read(ctx: &mut Context) -> Self {
        let proto = ctx.intrinsics().constructors().array().prototype();
        let string = ctx.intrinsics().constructors().string().prototype();
        let bigint = ctx.intrinsics().constructors().bigint().prototype();
        let global = ctx.global_object();
        let mut get = |o: &JsObject, name: &str| {
            o.get(js_string!(name), ctx)
                .ok()
                .and_then(|v| v.as_object())
        };
        let math = get(&global, "Math");
        Builtins {
            push: get(&proto, "push"),
            pop: get(&proto, "pop"),
            to_hex: get(&global, "toHex"),
            slice: get(&global, "slice"),
            string_bigint_builtins: [
                get(&string, "slice"),
                get(&bigint, "toString"),
                get(&global, "Number"),
                get(&global, "BigInt"),
                get(&global, "isFinite"),
                math.and_then(|m| get(&m, "trunc")),
            ],
            state_fns: [
                get(&global, "toWord"),
                get(&global, "__db").and_then(|db| get(&db, "getState")),
            ],
        }
    }

    /// Which of `before` are still in place now (`self`); `bigint_ran`: `bigInt` was built,
    /// so its methods may have been replaced.
    fn intact(&self, before: &Builtins, bigint_ran: bool) -> Intact {
        let same = |a: &Option<JsObject>, b: &Option<JsObject>| a.is_some() && a == b;
        let all = |a: &[Option<JsObject>], b: &[Option<JsObject>]| {
            a.iter().zip(b).all(|(a, b)| same(a, b))
        };
        Intact {
            push: same(&self.push, &before.push),
            pop: same(&self.pop, &before.pop),
            to_hex: same(&self.to_hex, &before.to_hex),
            slice: same(&self.slice, &before.slice),
            string_bigint_builtins: all(
                &self.string_bigint_builtins,
                &before.string_bigint_builtins,
            ) && !bigint_ran,
            state_fns: all(&self.state_fns, &before.state_fns),
        }
    }
}

fn compile(ctx: &mut Context, code: &str) -> Result<Script, JsTracerError> {
    Script::parse(Source::from_bytes(code), None, ctx)
        .map_err(|e| JsTracerError::Syntax(js_message(&e, ctx)))
}

/// boa refused to build a global or an argument (not expected of a fresh context).
fn engine(e: JsError) -> JsTracerError {
    JsTracerError::Engine(e.to_string())
}

impl Host {
    /// Builds the context, evaluates the tracer object, checks its functions and runs `setup`
    /// with `config` (the tracerConfig JSON text).
    pub fn new(
        source: &str,
        config: &str,
        spec: SpecId,
        timeout: Duration,
        shared: Rc<Shared>,
    ) -> Result<Self, JsTracerError> {
        let limits = (Instant::now() + timeout, crate::alloc::thread_live());
        Self::with_limits(source, config, spec, limits, shared)
    }

    /// [`Host::new`] under a deadline and memory base already set (a native `setup` that gave
    /// up spent part of the time).
    pub fn with_limits(
        source: &str,
        config: &str,
        spec: SpecId,
        limits: (Instant, i64),
        shared: Rc<Shared>,
    ) -> Result<Self, JsTracerError> {
        Self::build(source, config, spec, limits, shared, None)
    }

    /// The boa host of a tracer that ran without boa until now ([`Fast::detached`], which
    /// holds its state): the literal evaluated in boa, the native state bound to it and
    /// still to be written back ([`Host::leave_native`]); the clock and memory base its own.
    pub fn adopt(
        source: &str,
        spec: SpecId,
        limits: (Instant, i64),
        shared: Rc<Shared>,
        fast: Fast,
    ) -> Result<Self, JsTracerError> {
        Self::build(source, "{}", spec, limits, shared, Some(fast))
    }

    fn build(
        source: &str,
        config: &str,
        spec: SpecId,
        (deadline, mem_base): (Instant, i64),
        shared: Rc<Shared>,
        detached: Option<Fast>,
    ) -> Result<Self, JsTracerError> {
        let timeout = deadline.saturating_duration_since(Instant::now());
        let mut ctx = Context::default();
        let limit = (timeout.as_secs_f64() * LOOP_ITERATIONS_PER_SECOND as f64) as u64;
        ctx.runtime_limits_mut()
            .set_loop_iteration_limit(limit.max(1_000_000));

        bigint::register(&mut ctx).map_err(engine)?;
        globals::register(&shared, spec, &mut ctx).map_err(engine)?;
        super::limits::install(&mut ctx)
            .map_err(|e| JsTracerError::Engine(js_message(&e, &mut ctx)))?;
        let log = make_log(&shared, &mut ctx).map_err(engine)?;
        let db = make_db(&shared, &mut ctx).map_err(engine)?;
        let (frame, frame_result) = make_frames(&shared, &mut ctx).map_err(engine)?;
        hidden(&mut ctx, "__log", log.clone())?;
        hidden(&mut ctx, "__db", db.clone())?;
        hidden(&mut ctx, "__frame", frame.clone())?;
        hidden(&mut ctx, "__frameResult", frame_result.clone())?;

        // Before any script runs: the native path's `arr.push(…)`, `arr.pop()` and `toHex(…)`
        // are only used while the built-ins are still in place.
        let originals = Builtins::read(&mut ctx);
        let object = compile(&mut ctx, &format!("(\n{source}\n)"))?;
        let tracer = match run_with_deadline(&object, &mut ctx, deadline, mem_base) {
            Run::TimedOut => return Err(JsTracerError::Evaluating(Failure::Timeout)),
            Run::OutOfMemory => return Err(JsTracerError::Evaluating(Failure::OutOfMemory)),
            Run::Done(Err(e)) => {
                let msg = js_message(&e, &mut ctx);
                return Err(JsTracerError::Evaluating(Failure::Thrown(msg)));
            }
            Run::Done(Ok(v)) => v,
        };
        let Some(obj) = tracer.as_object() else {
            return Err(JsTracerError::NotAnObject);
        };
        // Each function read once, in geth's order (a getter runs once, as there).
        let read = super::pinned::Read::of(&obj, &mut ctx);
        if read.result.is_none() {
            return Err(JsTracerError::Missing("result"));
        }
        let Some(fault) = read.fault.clone() else {
            return Err(JsTracerError::Missing("fault"));
        };
        let (has_enter, has_exit) = (read.enter.is_some(), read.exit.is_some());
        if has_enter != has_exit {
            return Err(JsTracerError::UnpairedEnterExit);
        }
        let (has_step, has_setup) = (read.step.is_some(), read.setup.is_some());
        // Called by name, the hooks after `setup` are those it left: the native code, compiled
        // from the ones read before it, applies only if they are the same.
        let unchanged = |ctx: &mut Context| {
            [
                ("step", &read.step),
                ("fault", &read.fault),
                ("enter", &read.enter),
                ("exit", &read.exit),
            ]
            .map(|(name, before)| {
                // Each one read (a getter runs) before any is compared.
                obj.get(js_string!(name), ctx)
                    .ok()
                    .and_then(|v| v.as_callable())
                    == *before
            })
            .iter()
            .all(|same| *same)
        };
        // Every function the literal made (data properties: no getter runs), for the native
        // path's inlined helpers.
        let mut literal = Vec::new();
        for key in obj.own_property_keys(&mut ctx).map_err(engine)? {
            let boa_engine::property::PropertyKey::String(name) = &key else {
                continue;
            };
            let desc = obj.borrow().properties().get(&key);
            let f = desc.and_then(|d| d.value().and_then(JsValue::as_callable));
            if let (Some(f), Ok(name)) = (f, name.to_std_string()) {
                literal.push((name, f));
            }
        }
        let step_fn = read.step.clone();
        let direct = if direct_safe(source) {
            Some(Direct {
                this: obj.clone().into(),
                step: read.step.clone(),
                fault,
                enter: read.enter.clone(),
                exit: read.exit.clone(),
                log_db: [log.into(), db.into()],
                frame: [frame.into()],
                frame_result: [frame_result.into()],
            })
        } else {
            None
        };
        hidden(&mut ctx, "__tracer", obj.clone())?;
        // What geth calls from now on: the functions the object holds before `setup`.
        let calls = super::pinned::pin(&obj, &read, &mut ctx)?;

        let mut host = Host {
            step: Wrapper::of(has_step, calls.step),
            fault: Wrapper::of(true, calls.fault),
            enter: Wrapper::of(has_enter, calls.enter),
            exit: Wrapper::of(has_exit, calls.exit),
            result: compile(&mut ctx, calls.result)?,
            direct,
            fast: None,
            guard: None,
            fault_plain: false,
            since_clock: 0,
            views: true,
            ctx,
            shared,
            deadline,
            mem_base,
        };
        // A tracer adopted from its native run ran `setup` there.
        if has_setup && detached.is_none() {
            hidden(&mut host.ctx, "__config", js_string!(config))?;
            let setup = compile(&mut host.ctx, calls.setup)?;
            host.run(&setup, Hook::Setup)?;
        }
        // After `setup`: the shadow state starts from what it left.
        let intact = Builtins::read(&mut host.ctx).intact(&originals, bigint::installed(&host.ctx));
        // Native code is compiled from the literal's functions, which are what runs when the
        // hooks are pinned (and by name only while `setup` replaced none).
        if let Some(mut fast) = detached {
            // No `setup`, so the hooks are the literal's.
            fast.bind(&obj, &mut host.ctx)
                .ok_or_else(|| JsTracerError::Engine("the tracer object changed shape".into()))?;
            host.fast = Some(fast);
        } else if calls.pinned || unchanged(&mut host.ctx) {
            host.fast = Fast::new(source, &obj, intact, &literal, &mut host.ctx);
        }
        let fast_views = host.fast.as_ref().map(Fast::keeps_views);
        host.views = fast_views != Some(false);
        if let Some(views) = fast_views {
            host.fault_plain = !views;
            // Native hooks that read the views: the early returns of `step` still spare the
            // views (and the call) for the opcodes they skip.
            if views && step_fn.is_some() {
                host.guard = Guard::build(source, &obj, step_fn, &mut host.ctx)
                    .0
                    .map(|g| g.pinned(calls.pinned));
            }
        } else if step_fn.is_some() {
            let (guard, fault_plain) = Guard::build(source, &obj, step_fn, &mut host.ctx);
            host.guard = guard.map(|g| g.pinned(calls.pinned));
            host.fault_plain = fault_plain;
        }
        // Without `step` there is no guard to build, and parsing the script again only to learn
        // whether `fault` is plain costs more than noting the journal's length per opcode.
        Ok(host)
    }

    /// Precompiles beyond the fork's that `isPrecompiled` counts.
    pub fn add_precompiles(&mut self, addrs: &[alloy_primitives::Address]) {
        globals::add_precompiles(addrs, &mut self.ctx);
    }

    /// Readies a host that validated the script (and ran `setup`) to trace one transaction
    /// under `spec`, as a fresh one would: the clock restarts. False if it cannot (see
    /// [`globals::retarget`]); the caller then builds a fresh one.
    pub fn rearm(&mut self, spec: SpecId, timeout: Duration) -> bool {
        if !globals::retarget(spec, &mut self.ctx) {
            return false;
        }
        self.deadline = Instant::now() + timeout;
        true
    }

    /// What the host objects read; the inspector writes it.
    pub fn shared(&self) -> &Rc<Shared> {
        &self.shared
    }

    pub fn has_step(&self) -> bool {
        self.step.is_some()
    }

    pub fn has_frames(&self) -> bool {
        self.enter.is_some()
    }

    /// Whether `log`'s stack, memory and contract views must be filled before each step.
    pub fn needs_views(&self) -> bool {
        self.views
    }

    /// Whether the hooks run natively and read the views, for which they need the interpreter
    /// (as boa's calls do).
    pub fn fast_needs_interp(&self) -> bool {
        self.fast.as_ref().is_some_and(Fast::uses_views)
    }

    /// Whether `log`'s own fields (pc, op, gas, cost, depth, refund, error) must be kept per
    /// step: not for native hooks that read none of them.
    pub fn needs_step_fields(&self) -> bool {
        self.fast.as_ref().is_none_or(Fast::reads_step)
    }

    /// Whether the hooks currently run natively (see [`Fast`]).
    pub fn fast_active(&self) -> bool {
        self.fast.is_some()
    }

    /// Whether `fault` reads no views and no `db` (it is inside the native subset).
    pub fn fault_plain(&self) -> bool {
        self.fault_plain
    }

    /// Whether `step` would return at once for the current opcode, decided natively; `before`:
    /// asked before the opcode ran (see [`Guard`]).
    #[inline]
    pub fn guard_skips(&mut self, before: bool) -> bool {
        match &mut self.guard {
            Some(g) => g.skips(&self.shared, before, &mut self.ctx),
            None => false,
        }
    }

    /// Runs every hook in boa from now on, early returns included (no [`Guard`]).
    pub fn disable_fast(&mut self) {
        self.leave_fast().ok();
        self.guard = None;
    }

    /// Writes the native state back into boa and turns the native path off.
    fn leave_fast(&mut self) -> Result<(), Failure> {
        match self.fast.take() {
            Some(mut f) => f
                .flush(&mut self.ctx)
                .map_err(|e| Failure::WriteBack(e.to_string())),
            None => Ok(()),
        }
    }

    fn run(&mut self, script: &Script, hook: Hook) -> Result<JsValue, JsTracerError> {
        if let Some(g) = &mut self.guard {
            g.js_ran();
        }
        let out = run_with_deadline(script, &mut self.ctx, self.deadline, self.mem_base);
        self.finish(out, hook)
    }

    fn finish(&mut self, out: Run, hook: Hook) -> Result<JsValue, JsTracerError> {
        let fatal = self.shared.fatal.borrow_mut().take();
        let failure = match (out, fatal) {
            (Run::TimedOut, _) => Failure::Timeout,
            (Run::OutOfMemory, _) => Failure::OutOfMemory,
            (_, Some(fatal)) => Failure::Fatal(fatal),
            (Run::Done(Ok(v)), None) => return Ok(v),
            (Run::Done(Err(e)), None) => {
                let msg = js_message(&e, &mut self.ctx);
                if msg.starts_with("RuntimeLimitError") && msg.contains("loop") {
                    Failure::Timeout
                } else {
                    Failure::Thrown(msg)
                }
            }
        };
        Err(JsTracerError::in_hook(hook, failure))
    }

    /// Counts a call made outside the budgeted evaluation and, every `every` calls, whether
    /// the deadline has passed (geth's deadline covers the whole trace, not one call).
    fn late(&mut self, every: u32) -> bool {
        self.since_clock += 1;
        self.since_clock >= every && {
            self.since_clock = 0;
            Instant::now() >= self.deadline
        }
    }

    /// Runs `hook` natively if the native path is on: `None` when boa must run it (the path
    /// is off, or deoptimised just now — nothing of this call then remains).
    #[inline]
    pub fn try_fast(&mut self, hook: Hook) -> Option<Result<(), JsTracerError>> {
        let f = self.fast.as_mut()?;
        if f.run(hook, &self.shared, (self.deadline, self.mem_base))
            .is_err()
        {
            return self.deoptimised(hook);
        }
        let limits = (self.deadline, self.mem_base);
        Some(tick(&mut self.since_clock, limits).map_err(|f| JsTracerError::in_hook(hook, f)))
    }

    /// The native path gave up on `hook` (or a detached tracer's, adopted just now): boa runs
    /// this call, and all later ones. `None` when boa is to run it.
    #[cold]
    pub fn leave_native(&mut self, hook: Hook) -> Option<Result<(), JsTracerError>> {
        self.deoptimised(hook)
    }

    #[cold]
    fn deoptimised(&mut self, hook: Hook) -> Option<Result<(), JsTracerError>> {
        match self.leave_fast() {
            Ok(()) => None,
            Err(f) => Some(Err(JsTracerError::in_hook(hook, f))),
        }
    }

    /// Calls `step`, `fault`, `enter` or `exit` (whichever the script defines).
    pub fn call(&mut self, hook: Hook) -> Result<(), JsTracerError> {
        if let Some(r) = self.try_fast(hook) {
            return r;
        }
        if let Some(d) = self.direct.as_mut() {
            let (f, args): (Option<&JsObject>, &[JsValue]) = match hook {
                Hook::Step => (d.step.as_ref(), &d.log_db),
                Hook::Fault => (Some(&d.fault), &d.log_db),
                Hook::Enter => (d.enter.as_ref(), &d.frame),
                Hook::Exit => (d.exit.as_ref(), &d.frame_result),
                Hook::Setup | Hook::Result => (None, &[]),
            };
            let Some(f) = f else {
                return Ok(());
            };
            if let Some(g) = &mut self.guard {
                g.js_ran();
            }
            let out = f.call(&d.this, args, &mut self.ctx);
            let out = if over_memory(self.mem_base) {
                Run::OutOfMemory
            } else if self.late(64) {
                Run::TimedOut
            } else {
                Run::Done(out)
            };
            return self.finish(out, hook).map(|_| ());
        }
        let wrapper = match hook {
            Hook::Step => &mut self.step,
            Hook::Fault => &mut self.fault,
            Hook::Enter => &mut self.enter,
            Hook::Exit => &mut self.exit,
            Hook::Setup | Hook::Result => return Ok(()),
        };
        match wrapper.script(&mut self.ctx)? {
            Some(s) => self.run(&s, hook).map(|_| ()),
            None => Ok(()),
        }
    }

    fn ctx_object(&mut self, t: &TxContext) -> Result<JsObject, JsError> {
        let c = &mut self.ctx;
        let from = buffers::to_buf(t.from.as_slice(), c)?;
        let to = buffers::to_buf(t.to.as_slice(), c)?;
        let input = buffers::to_buf(&t.input, c)?;
        let output = buffers::to_buf(&t.output, c)?;
        let coinbase = buffers::to_buf(t.coinbase.as_slice(), c)?;
        let value = bigint::lazy(t.value, c);
        let gas_price = bigint::lazy(t.gas_price, c);
        let tx_hash = t
            .tx_hash
            .map(|h| buffers::to_buf(h.as_slice(), c))
            .transpose()?;
        let block_hash = t
            .block_hash
            .map(|h| buffers::to_buf(h.as_slice(), c))
            .transpose()?;
        let a = Attribute::all();
        let getter = Attribute::ENUMERABLE | Attribute::CONFIGURABLE;
        let mut o = ObjectInitializer::new(c);
        o.property(js_string!("type"), js_string!(t.kind().as_str()), a)
            .property(js_string!("from"), from, a)
            .property(js_string!("to"), to, a)
            .property(js_string!("input"), input, a)
            .property(js_string!("gas"), t.gas as f64, a)
            // Getters (made on first read) for the two bigInts; see `bigint::lazy`.
            .accessor(js_string!("gasPrice"), Some(gas_price), None, getter)
            .accessor(js_string!("value"), Some(value), None, getter)
            .property(js_string!("block"), t.block as f64, a)
            .property(js_string!("coinbase"), coinbase, a)
            .property(js_string!("output"), output, a)
            .property(js_string!("gasUsed"), t.gas_used as f64, a);
        if let Some(e) = &t.error {
            o.property(js_string!("error"), js_string!(e.as_str()), a);
        }
        if let Some(h) = tx_hash {
            o.property(js_string!("txHash"), h, a);
        }
        if let Some(h) = block_hash {
            o.property(js_string!("blockHash"), h, a);
        }
        if let Some(i) = t.tx_index {
            o.property(js_string!("txIndex"), i as f64, a);
        }
        Ok(o.build())
    }

    /// Calls `result(ctx, db)` and returns its value as JSON text (`JSON.stringify`'s rules: a
    /// `Uint8Array` becomes `{"0":…}`, a bigInt its decimal string).
    pub fn result(&mut self, t: &TxContext) -> Result<Box<RawValue>, JsTracerError> {
        self.leave_fast()
            .map_err(|f| JsTracerError::in_hook(Hook::Result, f))?;
        let obj = self.ctx_object(t).map_err(|e| {
            let msg = js_message(&e, &mut self.ctx);
            JsTracerError::in_hook(Hook::Result, Failure::Thrown(msg))
        })?;
        hidden(&mut self.ctx, "__ctx", obj)?;
        let script = self.result.clone();
        let v = self.run(&script, Hook::Result)?;
        // The text itself, not a parsed value, since geth prints JSON.stringify's key order
        // and number forms, with Go's HTML escaping applied when it encodes the response.
        // Plain values are written in Rust; others are checked for depth before
        // `JSON.stringify` recurses into them, then stringified by boa.
        let text = match super::json::stringify_plain(&v, &mut self.ctx) {
            Some(text) => {
                let out = if over_memory(self.mem_base) {
                    Run::OutOfMemory
                } else {
                    Run::Done(Ok(JsValue::undefined()))
                };
                self.finish(out, Hook::Result)?;
                text
            }
            None => {
                let json = super::limits::stringify_result(&v, &mut self.ctx);
                let out = if over_memory(self.mem_base) {
                    Run::OutOfMemory
                } else {
                    Run::Done(json)
                };
                let v = self.finish(out, Hook::Result)?;
                v.as_string().map(|s| s.to_std_string_escaped())
            }
        };
        result_json(text)
    }
}

/// The answer of `result`, from `JSON.stringify`'s text of its value (`None`: `undefined`):
/// `null` for nothing, Go's HTML escaping applied as geth's encoder applies it.
pub fn result_json(text: Option<String>) -> Result<Box<RawValue>, JsTracerError> {
    let text = match text {
        Some(s) => escape_html(&s),
        None => "null".to_string(),
    };
    RawValue::from_string(text).map_err(JsTracerError::NotJson)
}
