//! Native evaluation of simple tracer hooks.
//!
//! A call from Rust into boa costs about 0.2 µs however small the function, and `step` runs on
//! every opcode: a 30M-gas transaction makes millions of such calls. Most scripts' `step` is a
//! few lines of counting (`this.counts[log.op.toString()]++`). When every hook a script defines
//! (`step`, `fault`, `enter`, `exit`) stays inside the subset [`compile`] accepts, the hooks are
//! evaluated natively over a shadow copy of the tracer's state ([`heap`]), and boa is entered
//! only for `setup` and `result`.
//!
//! Exactness comes first: anything the evaluator does not model the way JavaScript does (a
//! string used as a number, a fraction printed, a property of `undefined` read, …) is a
//! deoptimisation: the hook's writes are undone, the shadow state is written back into boa's
//! objects, and from that hook on the tracer runs in boa — which then also produces any
//! exception, with boa's message. `CHAINTRACE_JS_FAST=0` turns the fast path off (the tests
//! compare both paths).

mod compile;
mod detached;
#[cfg(test)]
mod detached_tests;
mod eval;
#[cfg(test)]
mod frame_tests;
mod guard;
mod heap;
mod ir;
mod json;
#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod tests;
mod value;

use boa_engine::object::JsObject;
use boa_engine::{Context, JsResult, JsValue};

use super::hook::Hook;
use super::objects::Shared;
use eval::{Machine, Names};
pub use guard::Guard;
use heap::Heap;
use ir::Compiled;
pub use value::Deopt;
use value::V;

/// The natively evaluated hooks of one tracer and its shadow state.
pub struct Fast {
    code: std::rc::Rc<Compiled>,
    heap: Heap,
    this: u32,
    locals: Vec<V>,
    names: Names,
    /// What each inlined helper's property holds (the literal's function).
    helpers: Vec<V>,
}

/// What each helper `code` inlines holds on the tracer object `this` — which must be the
/// literal's function of that name (`literal(name, value)`) — in `code.helpers`' order.
fn helpers(
    code: &Compiled,
    heap: &mut Heap,
    this: u32,
    literal: impl Fn(&str, &value::Held) -> bool,
) -> Option<Vec<V>> {
    let mut out = Vec::with_capacity(code.helpers.len());
    for name in &code.helpers {
        let key = value::Key::from_name(heap.t.intern(name));
        match heap.get(this, &key).ok()? {
            v @ V::Opaque(i) if literal(name, heap.t.js(i)) => out.push(v),
            _ => return None,
        }
    }
    Some(out)
}

/// The built-ins native code stands in for, each still the original after `setup`:
/// `Array.prototype.push` and `pop` (for `arr.push(…)`, `arr.pop()`), the globals `toHex` and
/// `slice`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Intact {
    pub push: bool,
    pub pop: bool,
    pub to_hex: bool,
    pub slice: bool,
    /// What `s.slice(…)`, a `bigInt`'s `toString`/`toJSNumber` and `bigInt(n)` reach:
    /// `String.prototype.slice`, `BigInt.prototype.toString`, the globals `Number`, `BigInt`,
    /// `isFinite` and `Math.trunc` (which the JavaScript prelude `bigInt` once was read; kept
    /// as a condition); and `bigInt` not built yet (so its methods are its own).
    pub string_bigint_builtins: bool,
    /// The global `toWord` and `db.getState`.
    pub state_fns: bool,
}

/// Whether the fast path may be used (`CHAINTRACE_JS_FAST=0` turns it off).
pub fn enabled() -> bool {
    std::env::var("CHAINTRACE_JS_FAST").map_or(true, |v| v != "0")
}

impl Fast {
    /// Compiles the hooks of `source` and imports `tracer` (after `setup` ran); `None` when a
    /// hook is outside the subset or the tracer object is not a plain object.
    /// `intact`: which built-ins the native code may stand in for are still in place;
    /// `literal`: the functions the object literal made, by property name (an inlined helper
    /// must still be one of them after `setup`).
    pub fn new(
        source: &str,
        tracer: &JsObject,
        intact: Intact,
        literal: &[(String, JsObject)],
        ctx: &mut Context,
    ) -> Option<Fast> {
        if !enabled() {
            return None;
        }
        let (code, strings, names) = compile::compile_cached(source)?;
        if (code.uses.push && !intact.push)
            || (code.uses.pop && !intact.pop)
            || (code.uses.to_hex && !intact.to_hex)
            || (code.uses.slice && !intact.slice)
            || (code.uses.string_bigint_builtins && !intact.string_bigint_builtins)
            || (code.uses.state_fns && !intact.state_fns)
        {
            return None;
        }
        let mut heap = Heap::new(strings, ctx).ok()?;
        let tracer = JsValue::from(tracer.clone());
        let V::Obj(this) = heap.import(&tracer, ctx).ok()? else {
            return None;
        };
        let helpers = helpers(&code, &mut heap, this as u32, |name, held| {
            let original = literal.iter().find(|(n, _)| n == name).map(|(_, f)| f);
            matches!(held, value::Held::Js(f) if f.as_object().as_ref() == original && original.is_some())
        })?;
        Some(Fast {
            locals: vec![V::Undef; code.locals()],
            code,
            heap,
            this: this as u32,
            names,
            helpers,
        })
    }

    /// Runs `hook` natively. On [`Deopt`] nothing it did remains; the caller writes the state
    /// back with [`Fast::flush`] and runs the hook in boa.
    #[inline]
    pub fn run(
        &mut self,
        hook: Hook,
        shared: &Shared,
        limits: (std::time::Instant, i64),
    ) -> Result<(), Deopt> {
        let Some(f) = self.code.hook(hook) else {
            return Ok(());
        };
        self.heap.begin();
        let mut m = Machine::new(
            &mut self.heap,
            &mut self.locals[..f.locals as usize],
            self.this,
            shared,
            &self.names,
            &self.helpers,
            false,
            Some(limits),
        );
        match m.run(&f.body) {
            Ok(()) => {
                self.heap.commit();
                Ok(())
            }
            Err(d) => {
                self.heap.rollback();
                Err(d)
            }
        }
    }

    /// Whether the hooks read the stack, memory or contract views (which the inspector must
    /// then keep, and hand over with the interpreter).
    pub fn uses_views(&self) -> bool {
        self.code.uses.views
    }

    /// Whether the hooks may read the step's fields (or boa may run one, reading anything).
    pub fn reads_step(&self) -> bool {
        self.code.uses.reads_step || self.keeps_views()
    }

    /// Whether boa may have to run a hook halfway (see [`ir::Uses::may_deopt`]): the views
    /// are then kept for it.
    pub fn keeps_views(&self) -> bool {
        self.code.uses.views || self.code.uses.may_deopt
    }

    /// Writes the shadow state back into boa's objects.
    pub fn flush(&mut self, ctx: &mut Context) -> JsResult<()> {
        self.heap.flush(ctx)
    }
}
