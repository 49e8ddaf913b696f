//! The boa host of one tracer: a JavaScript context with geth's globals, the tracer object, and
//! the calls into it under the time limit.
//!
//! A context serves one traced transaction (scripts keep state in `this`). Building it also
//! validates the script: a syntax error, a missing `result`/`fault`, or only one of
//! `enter`/`exit` fails here, before any replay, and so does an exception in `setup`.

use std::rc::Rc;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, Bytes, B256, U256};
use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsError, JsValue, Script, Source};
use revm::primitives::hardfork::SpecId;

use super::objects::{make_db, make_frames, make_log, Shared};
use super::timeout::{
    over_memory, run_with_deadline, Run, LOOP_ITERATIONS_PER_SECOND, OUT_OF_MEMORY,
};
use serde_json::value::RawValue;

use super::fast::Fast;
pub use super::hook::Hook;
use super::{bigint, buffers, globals};
use crate::geth::json::escape_html;

/// What `ctx` holds in `result(ctx, db)`.
#[derive(Clone, Debug, Default)]
pub struct TxContext {
    pub create: bool,
    pub from: Address,
    pub to: Address,
    pub input: Bytes,
    pub gas: u64,
    pub gas_price: U256,
    pub value: U256,
    pub block: u64,
    pub coinbase: Address,
    pub output: Bytes,
    pub error: Option<String>,
    pub gas_used: u64,
    pub tx_hash: Option<B256>,
    pub block_hash: Option<B256>,
    pub tx_index: Option<u64>,
}

/// geth's wording for an exception in a tracer function.
pub fn wrap(msg: &str, hook: Hook) -> String {
    format!("{msg}    in server-side tracer function '{}'", hook.name())
}

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
    step: Option<Script>,
    fault: Script,
    enter: Option<Script>,
    exit: Option<Script>,
    result: Script,
    /// Plain function calls for scripts that can neither loop nor recurse (see
    /// [`direct_safe`]).
    direct: Option<Direct>,
    /// Natively evaluated hooks, while the script stays inside their subset.
    fast: Option<Fast>,
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

/// The source after the comments that precede the object literal (a library file's header).
/// Comments further in are kept: telling them from strings and regex literals needs a lexer.
fn skip_header_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix("//") {
            s = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return s;
        }
    }
}

/// Whether the script has no `for`, `while` or `do` past its header comments (strings and
/// comments included, which only errs towards the budgeted path).
pub fn loop_free(source: &str) -> bool {
    !words(source).any(|w| matches!(w, "for" | "while" | "do"))
}

fn words(source: &str) -> impl Iterator<Item = &str> {
    skip_header_comments(source)
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
}

const HOOKS: [&str; 6] = ["step", "fault", "enter", "exit", "result", "setup"];

/// The deepest bracket nesting a script may have: boa's parser recurses once per level (some
/// 40 KB of stack each in a debug build), so deeper sources are refused before parsing.
pub const MAX_SOURCE_NESTING: usize = 64;

/// The deepest `result` value that is serialised: `JSON.stringify` recurses once per level.
pub const MAX_RESULT_DEPTH: usize = 512;

/// `result`'s value, checked for depth by an iterative walk (an explicit stack, each object
/// once) before `JSON.stringify` recurses into it.
const RESULT_SCRIPT: &str = "(function (r) {\
    var stack = [r], depth = [1], seen = new Set();\
    while (stack.length) {\
        var x = stack.pop(), d = depth.pop();\
        if (x === null || typeof x !== 'object' || seen.has(x)) continue;\
        seen.add(x);\
        if (d > 512) throw new RangeError('tracer result nests more than 512 levels');\
        var ks = Object.keys(x);\
        for (var i = 0; i < ks.length; i++) { stack.push(x[ks[i]]); depth.push(d + 1); }\
    }\
    return JSON.stringify(r);\
})(__tracer.result(__ctx, __db))";

/// The longest string the built-ins that build one from a count may make (64 Mi characters):
/// `'x'.repeat(2**31-1)`, `padStart`/`padEnd` and `join` over a huge array would otherwise
/// allocate gigabytes in one step, which no timeout can interrupt and an allocation failure
/// turns into a process abort.
pub const MAX_BUILT_STRING: usize = 1 << 26;

const STRING_LIMITS: &str = "(function () {\
    var MAX = 67108864;\
    function tooLong() { throw new RangeError('string longer than ' + MAX + ' characters (tracer memory limit)'); }\
    function wrap(o, name, check) {\
        var f = o[name];\
        Object.defineProperty(o, name, { value: { [name]: function () { check.apply(this, arguments); return f.apply(this, arguments); } }[name], writable: true, configurable: true, enumerable: false });\
    }\
    wrap(String.prototype, 'repeat', function (n) { if (String(this).length * Number(n) > MAX) tooLong(); });\
    wrap(String.prototype, 'padStart', function (n) { if (Number(n) > MAX) tooLong(); });\
    wrap(String.prototype, 'padEnd', function (n) { if (Number(n) > MAX) tooLong(); });\
    wrap(Array.prototype, 'join', function (sep) {\
        var n = this.length >>> 0, s = sep === undefined ? 1 : String(sep).length, total = 0;\
        if (n > MAX || n * s > MAX) tooLong();\
        for (var i = 0; i < n; i++) { var e = this[i]; if (typeof e === 'string') { total += e.length + s; if (total > MAX) tooLong(); } }\
    });\
    var RISKY = {};\
    function nested(src) {\
        if (RISKY.hasOwnProperty(src)) return RISKY[src];\
        var stack = [], esc = false, cls = false, risky = false;\
        function rep(j) { var c = src.charAt(j); if (c === '*' || c === '+') return true; if (c !== '{') return false; var k = j + 1, d = false; while (k < src.length && src.charAt(k) >= '0' && src.charAt(k) <= '9') { k++; d = true; } return d && (src.charAt(k) === ',' || src.charAt(k) === '}'); }\
        for (var i = 0; i < src.length && !risky; i++) {\
            var c = src.charAt(i);\
            if (esc) { esc = false; if (rep(i + 1) && stack.length) stack[stack.length - 1] = true; continue; }\
            if (c === '\\\\') { esc = true; continue; }\
            if (cls) { if (c === ']') { cls = false; if (rep(i + 1) && stack.length) stack[stack.length - 1] = true; } continue; }\
            if (c === '[') { cls = true; continue; }\
            if (c === '(') { stack.push(false); continue; }\
            if (c === ')') { var inner = stack.pop(); if (inner && rep(i + 1)) risky = true; else if ((inner || rep(i + 1)) && stack.length) stack[stack.length - 1] = true; continue; }\
            if (rep(i + 1) && c !== '(' && stack.length) stack[stack.length - 1] = true;\
        }\
        RISKY[src] = risky;\
        return risky;\
    }\
    wrap(RegExp.prototype, 'exec', function (s) {\
        if (nested(String(this.source)) && String(s).length > 32) throw new RangeError('regular expression ' + this + ' repeats a group that itself repeats: on a string of ' + String(s).length + ' characters its backtracking could run unbounded, which the tracer timeout cannot interrupt (limit: 32 characters)');\
    });\
})()";

/// How deep the script's brackets (`(`, `[`, `{`) nest, outside strings and comments.
pub fn source_nesting(source: &str) -> usize {
    let b = source.as_bytes();
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// Whether the script can run only its hooks, each once per call: no loops, and no way to
/// recurse — every `function` is a hook's own definition, no hook is reached by another
/// (`.step`, `.fault`, … appear nowhere else, nor calls through computed members), and nothing
/// else runs user code (`=>`, getters and setters, classes, `eval`, `Function`, `arguments`,
/// `Reflect`, `with`). Such a script's functions are
/// called directly, which costs half of a budgeted evaluation, and the deadline is checked
/// between calls; any other script runs under boa's budget, which also bounds deep or
/// exponential recursion by the timeout. Textual, so it only errs towards the budgeted path.
pub fn direct_safe(source: &str) -> bool {
    if !loop_free(source) {
        return false;
    }
    let body = skip_header_comments(source);
    // Arrows, and calls through a computed member (`o[name](…)`, which can name a hook).
    if body.contains("=>") || body.contains("](") {
        return false;
    }
    if words(source).any(|w| {
        matches!(
            w,
            "get"
                | "set"
                | "class"
                | "eval"
                | "Function"
                | "arguments"
                | "constructor"
                | "Reflect"
                | "with"
        )
    }) {
        return false;
    }
    // Each `function` keyword directly follows `<hook>:`.
    let b = body.as_bytes();
    let mut from = 0;
    while let Some(i) = body[from..].find("function") {
        let at = from + i;
        from = at + "function".len();
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let word_end = b
            .get(from)
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        if !(word_start && word_end) {
            continue;
        }
        let before = body[..at].trim_end();
        let Some(before) = before.strip_suffix(':') else {
            return false;
        };
        let name = before
            .trim_end()
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()
            .unwrap_or("");
        if !HOOKS.contains(&name) {
            return false;
        }
    }
    // No hook is referenced as a property (how one hook would call another).
    !HOOKS.iter().any(|h| {
        body.match_indices(h).any(|(i, _)| {
            let prev = body[..i].trim_end();
            prev.ends_with('.') || prev.ends_with('[')
        })
    })
}

/// `Array.prototype.push` as it is now.
fn array_push(ctx: &mut Context) -> Option<JsObject> {
    let proto = ctx.intrinsics().constructors().array().prototype();
    proto.get(js_string!("push"), ctx).ok()?.as_object()
}

fn compile(ctx: &mut Context, code: &str) -> Result<Script, String> {
    Script::parse(Source::from_bytes(code), None, ctx).map_err(|e| js_message(&e, ctx))
}

fn hidden(ctx: &mut Context, name: &str, v: impl Into<JsValue>) -> Result<(), String> {
    ctx.register_global_property(
        js_string!(name),
        v,
        Attribute::WRITABLE | Attribute::NON_ENUMERABLE | Attribute::CONFIGURABLE,
    )
    .map_err(|e| e.to_string())
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
    ) -> Result<Self, String> {
        let deadline = Instant::now() + timeout;
        let mem_base = crate::alloc::thread_live();
        let mut ctx = Context::default();
        let limit = (timeout.as_secs_f64() * LOOP_ITERATIONS_PER_SECOND as f64) as u64;
        ctx.runtime_limits_mut()
            .set_loop_iteration_limit(limit.max(1_000_000));

        bigint::register(&mut ctx).map_err(|e| e.to_string())?;
        globals::register(&shared, spec, &mut ctx).map_err(|e| e.to_string())?;
        ctx.eval(Source::from_bytes(STRING_LIMITS))
            .map_err(|e| js_message(&e, &mut ctx))?;
        let log = make_log(&shared, &mut ctx).map_err(|e| e.to_string())?;
        let db = make_db(&shared, &mut ctx).map_err(|e| e.to_string())?;
        let (frame, frame_result) = make_frames(&shared, &mut ctx).map_err(|e| e.to_string())?;
        hidden(&mut ctx, "__log", log.clone())?;
        hidden(&mut ctx, "__db", db.clone())?;
        hidden(&mut ctx, "__frame", frame.clone())?;
        hidden(&mut ctx, "__frameResult", frame_result.clone())?;

        // Before any script runs: the native path's `arr.push(…)` is only used while the
        // built-in is still in place.
        let builtin_push = array_push(&mut ctx);
        let object = compile(&mut ctx, &format!("(\n{source}\n)"))?;
        let tracer = match run_with_deadline(&object, &mut ctx, deadline, mem_base) {
            Run::TimedOut => return Err("execution timeout".into()),
            Run::OutOfMemory => return Err(OUT_OF_MEMORY.into()),
            Run::Done(Err(e)) => return Err(js_message(&e, &mut ctx)),
            Run::Done(Ok(v)) => v,
        };
        let Some(obj) = tracer.as_object() else {
            return Err(
                "the tracer must be an object literal, e.g. {step: …, fault: …, result: …}".into(),
            );
        };
        let has = |ctx: &mut Context, name: &str| -> bool {
            obj.get(js_string!(name), ctx)
                .ok()
                .is_some_and(|v| v.as_callable().is_some())
        };
        if !has(&mut ctx, "result") {
            return Err("trace object must expose a function result()".into());
        }
        if !has(&mut ctx, "fault") {
            return Err("trace object must expose a function fault()".into());
        }
        let (has_enter, has_exit) = (has(&mut ctx, "enter"), has(&mut ctx, "exit"));
        if has_enter != has_exit {
            return Err(
                "trace object must expose either both or none of enter() and exit()".into(),
            );
        }
        let has_step = has(&mut ctx, "step");
        let has_setup = has(&mut ctx, "setup");
        let direct = if direct_safe(source) {
            let f = |ctx: &mut Context, name: &str| {
                obj.get(js_string!(name), ctx)
                    .ok()
                    .and_then(|v| v.as_callable())
            };
            Some(Direct {
                this: obj.clone().into(),
                step: f(&mut ctx, "step"),
                fault: f(&mut ctx, "fault").ok_or("fault() vanished")?,
                enter: f(&mut ctx, "enter"),
                exit: f(&mut ctx, "exit"),
                log_db: [log.into(), db.into()],
                frame: [frame.into()],
                frame_result: [frame_result.into()],
            })
        } else {
            None
        };
        hidden(&mut ctx, "__tracer", obj.clone())?;

        let mut host = Host {
            step: has_step
                .then(|| compile(&mut ctx, "__tracer.step(__log, __db)"))
                .transpose()?,
            fault: compile(&mut ctx, "__tracer.fault(__log, __db)")?,
            enter: has_enter
                .then(|| compile(&mut ctx, "__tracer.enter(__frame)"))
                .transpose()?,
            exit: has_exit
                .then(|| compile(&mut ctx, "__tracer.exit(__frameResult)"))
                .transpose()?,
            result: compile(&mut ctx, RESULT_SCRIPT)?,
            direct,
            fast: None,
            since_clock: 0,
            views: true,
            ctx,
            shared,
            deadline,
            mem_base,
        };
        if has_setup {
            hidden(&mut host.ctx, "__config", js_string!(config))?;
            let setup = compile(&mut host.ctx, "__tracer.setup(__config)")?;
            host.run(&setup, Hook::Setup)?;
        }
        // After `setup`: the shadow state starts from what it left.
        let push_intact = builtin_push.is_some() && array_push(&mut host.ctx) == builtin_push;
        host.fast = Fast::new(source, &obj, push_intact, &mut host.ctx);
        host.views = host.fast.is_none();
        Ok(host)
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

    /// Whether the hooks currently run natively (see [`Fast`]).
    pub fn fast_active(&self) -> bool {
        self.fast.is_some()
    }

    /// Runs every hook in boa from now on.
    pub fn disable_fast(&mut self) {
        self.leave_fast().ok();
    }

    /// Writes the native state back into boa and turns the native path off.
    fn leave_fast(&mut self) -> Result<(), String> {
        match self.fast.take() {
            Some(mut f) => f
                .flush(&mut self.ctx)
                .map_err(|e| format!("writing tracer state back: {e}")),
            None => Ok(()),
        }
    }

    fn run(&mut self, script: &Script, hook: Hook) -> Result<JsValue, String> {
        let out = run_with_deadline(script, &mut self.ctx, self.deadline, self.mem_base);
        self.finish(out, hook)
    }

    fn finish(&mut self, out: Run, hook: Hook) -> Result<JsValue, String> {
        let fatal = self.shared.fatal.borrow_mut().take();
        match out {
            Run::TimedOut => Err(wrap("execution timeout", hook)),
            Run::OutOfMemory => Err(wrap(OUT_OF_MEMORY, hook)),
            _ if fatal.is_some() => Err(wrap(&fatal.unwrap_or_default(), hook)),
            Run::Done(Ok(v)) => Ok(v),
            Run::Done(Err(e)) => {
                let msg = js_message(&e, &mut self.ctx);
                if msg.starts_with("RuntimeLimitError") && msg.contains("loop") {
                    return Err(wrap("execution timeout", hook));
                }
                Err(wrap(&msg, hook))
            }
        }
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
    pub fn try_fast(&mut self, hook: Hook) -> Option<Result<(), String>> {
        let f = self.fast.as_mut()?;
        if f.run(hook, &self.shared).is_ok() {
            if self.late(1024) {
                return Some(Err(wrap("execution timeout", hook)));
            }
            // The native path grows arrays and strings too; every 1024 calls is well before
            // a push per opcode could matter.
            if self.since_clock == 0 && over_memory(self.mem_base) {
                return Some(Err(wrap(OUT_OF_MEMORY, hook)));
            }
            return Some(Ok(()));
        }
        // Deoptimised: boa runs this call, and all later ones.
        match self.leave_fast() {
            Ok(()) => None,
            Err(e) => Some(Err(wrap(&e, hook))),
        }
    }

    /// Calls `step`, `fault`, `enter` or `exit` (whichever the script defines).
    pub fn call(&mut self, hook: Hook) -> Result<(), String> {
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
        let script = match hook {
            Hook::Step => self.step.clone(),
            Hook::Fault => Some(self.fault.clone()),
            Hook::Enter => self.enter.clone(),
            Hook::Exit => self.exit.clone(),
            Hook::Setup | Hook::Result => None,
        };
        match script {
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
        o.property(
            js_string!("type"),
            js_string!(if t.create { "CREATE" } else { "CALL" }),
            a,
        )
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
    pub fn result(&mut self, t: &TxContext) -> Result<Box<RawValue>, String> {
        self.leave_fast().map_err(|e| wrap(&e, Hook::Result))?;
        let obj = self
            .ctx_object(t)
            .map_err(|e| wrap(&js_message(&e, &mut self.ctx), Hook::Result))?;
        hidden(&mut self.ctx, "__ctx", obj)?;
        let script = self.result.clone();
        let v = self.run(&script, Hook::Result)?;
        // The text itself, not a parsed value: geth prints JSON.stringify's key order and
        // number forms, with Go's HTML escaping applied when it encodes the response.
        let text = match v.as_string() {
            Some(s) => escape_html(&s.to_std_string_escaped()),
            None => "null".to_string(),
        };
        RawValue::from_string(text).map_err(|e| format!("tracer result is not JSON: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::{direct_safe, loop_free};

    #[test]
    fn only_scripts_that_cannot_recurse_are_called_directly() {
        assert!(direct_safe(
            "{n: 0, step: function(log) { this.n++; }, fault: function() {}, result: function() { return this.n; }}"
        ));
        assert!(direct_safe(
            "{c: {}, step: function(log) { var op = log.op.toString(); this.c[op] = (this.c[op] || 0) + log.getCost(); }, fault: function() {}, result: function() { return this.c; }}"
        ));
        // A helper function, arrows, getters, and hooks reaching each other can recurse.
        assert!(!direct_safe(
            "{fib: function(n) { return n < 2 ? n : this.fib(n - 1) + this.fib(n - 2); }, step: function() { this.fib(30); }, fault: function() {}, result: function() { return 1; }}"
        ));
        assert!(!direct_safe(
            "{step: function() { function f(n) { return n ? f(n - 1) : 0; } f(9); }, fault: function() {}, result: function() {}}"
        ));
        assert!(!direct_safe(
            "{step: function() { var f = (n) => n; }, fault: function() {}, result: function() {}}"
        ));
        assert!(!direct_safe("{get x() { return this.x; }, fault: function() {}, result: function() { return this.x; }}"));
        assert!(!direct_safe(
            "{step: function(log) { this.fault(30); }, fault: function(n) { if (n > 0) { this.fault(n - 1); this.fault(n - 1); } }, result: function() {}}"
        ));
        assert!(!direct_safe(
            "{step: function() { var s = this; s['fault'](3); }, fault: function() {}, result: function() {}}"
        ));
    }

    #[test]
    fn loop_keywords_select_the_budgeted_path() {
        assert!(loop_free(
            "{step: function(log) { this.n++; }, done: 1, format: 'x'}"
        ));
        assert!(!loop_free("{step: function() { while(1) {} }}"));
        assert!(!loop_free("{step: function() { for (;;) {} }}"));
        assert!(!loop_free("{step: function() { do {} while (0) }}"));
        assert!(loop_free(
            "// counts, for each opcode\n/* while */ {step: function() {}}"
        ));
        assert!(!loop_free(
            "// header\n{s: '//', step: function() { while(1) {} }}"
        ));
    }
}
