//! The early returns of a `step` that runs in boa, decided natively.
//!
//! Many tracers look at a few opcodes only, and say so first:
//! `if (log.op.toNumber() !== 0xa3) { return; }`. When the native path cannot run a script
//! whole, the leading statements of its `step` that are inside the subset and *pure* (they
//! read the opcode's getters, constants and their own locals; they write nothing but those
//! locals, read nothing of `this`, call nothing) make a [`Guard`]: evaluated natively for each
//! opcode, it says when `step` would return without having done anything, and boa is not
//! called for that opcode at all. Otherwise boa runs the whole function, guard included, as
//! before. Such statements cannot throw, so skipping the call is unobservable.
//!
//! The guard is first asked before the opcode runs, when its cost and error are not known yet:
//! a condition that needs them is taken as not returning (`if (C) return;` either returns or
//! goes on, so a later early return that does fire still means every path returns). A step
//! decided then needs none of its views kept. What is left undecided is asked again after the
//! opcode, with everything known.
//!
//! When the host calls the hooks by name (see `js/pinned.rs`), the function the guard was
//! compiled from must still be the tracer's `step`: a script may replace it (in `setup`, in
//! another hook). That is checked before the guard is used again after any JavaScript ran, and
//! a replaced `step` turns the guard off for good. When the host calls the function the tracer
//! held before `setup`, as geth does, nothing needs checking.

use std::rc::Rc;

use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::object::JsObject;
use boa_engine::{js_string, Context, JsValue};

use super::eval::{Machine, Names};
use super::heap::Heap;
use super::ir::{Expr, Func, Stmt};
use super::value::{Tables, V};
use crate::js::objects::Shared;

/// The natively decided early returns of one tracer's `step`.
pub struct Guard {
    /// `step`'s leading statements inside the subset; the guard is the first `len` of them.
    code: Rc<Func>,
    len: usize,
    /// For the strings the guard's values refer to (no object is ever read or made).
    heap: Heap,
    locals: Vec<V>,
    names: Names,
    /// The `step` function the guard was compiled from, and the tracer object holding it.
    step: JsObject,
    tracer: JsObject,
    /// Whether `tracer.step` was checked since JavaScript last ran (always, when the host
    /// calls the `step` read before `setup`: [`Guard::pinned`]).
    checked: bool,
    pinned: bool,
    /// `step` was replaced: the guard no longer applies.
    off: bool,
}

/// Whether `e` has no effect and cannot throw: constants, locals, the opcode's getters, and
/// operators over them.
fn pure(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Local(_) => true,
        Expr::Get(_, args) => args.iter().all(pure),
        Expr::Bin(_, a, b) | Expr::Logic(_, a, b) | Expr::Seq(a, b) => pure(a) && pure(b),
        Expr::Un(_, x) => pure(x),
        Expr::Cond(c, a, b) => pure(c) && pure(a) && pure(b),
        _ => false,
    }
}

/// A `return` (of a pure value), alone or in a block.
fn returns(s: &Stmt) -> bool {
    match s {
        Stmt::Return(v) => v.as_ref().is_none_or(pure),
        Stmt::Block(b) => matches!(b.as_slice(), [s] if returns(s)),
        _ => false,
    }
}

/// A statement a guard may hold: a local's initialisation, `if (C) return;`, `return`.
fn guard_stmt(s: &Stmt) -> bool {
    match s {
        Stmt::Empty => true,
        Stmt::Init(_, init) => init.as_ref().is_none_or(pure),
        Stmt::If(c, then, None) => pure(c) && returns(then),
        Stmt::Return(_) => returns(s),
        _ => false,
    }
}

impl Guard {
    /// The guard of `source`'s `step`, if its leading statements hold an early return, and
    /// whether `fault` is inside the native subset (it then reads no views). `tracer` is the
    /// tracer object and `step` its `step` function as the literal made them (before `setup`).
    pub fn build(
        source: &str,
        tracer: &JsObject,
        step: Option<JsObject>,
        ctx: &mut Context,
    ) -> (Option<Guard>, bool) {
        if !super::enabled() {
            return (None, false);
        }
        let Some((code, fault_plain, strings, names)) = super::compile::step_prefix_cached(source)
        else {
            return (None, false);
        };
        let guard = code
            .zip(step)
            .and_then(|(code, step)| Guard::new(code, strings, names, tracer, step, ctx));
        (guard, fault_plain)
    }

    fn new(
        code: Rc<Func>,
        strings: Tables,
        names: Names,
        tracer: &JsObject,
        step: JsObject,
        ctx: &mut Context,
    ) -> Option<Guard> {
        let len = code.body.iter().take_while(|s| guard_stmt(s)).count();
        if !code.body[..len]
            .iter()
            .any(|s| matches!(s, Stmt::If(..) | Stmt::Return(_)))
        {
            return None;
        }
        let heap = Heap::new(strings, ctx).ok()?;
        Some(Guard {
            locals: vec![V::Undef; code.locals as usize],
            code,
            len,
            heap,
            names,
            step,
            tracer: tracer.clone(),
            checked: false,
            pinned: false,
            off: false,
        })
    }

    /// JavaScript ran (a hook, `result`): `step` may have been replaced since.
    pub fn js_ran(&mut self) {
        self.checked = self.pinned;
    }

    /// The host calls the `step` the guard was compiled from whatever the tracer's `step`
    /// property holds later (`pinned`): no check is needed.
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
        self.checked = pinned;
        self
    }

    /// Whether `step` would return at once for the current opcode. `before`: asked before the
    /// opcode ran (its cost and error are unknown).
    /// The tracer's own `step` data property, read without running any JavaScript (an
    /// accessor, or a `step` found on the prototype, is not the function compiled).
    fn own_step(&self, ctx: &mut Context) -> Option<JsObject> {
        let args = [
            JsValue::from(self.tracer.clone()),
            js_string!("step").into(),
        ];
        let desc = OrdinaryObject::get_own_property_descriptor(&JsValue::undefined(), &args, ctx);
        desc.ok()?
            .as_object()?
            .get(js_string!("value"), ctx)
            .ok()?
            .as_object()
    }

    pub fn skips(&mut self, shared: &Shared, before: bool, ctx: &mut Context) -> bool {
        if self.off {
            return false;
        }
        if !self.checked {
            self.checked = true;
            if self.own_step(ctx) != Some(self.step.clone()) {
                self.off = true;
                return false;
            }
        }
        self.heap.begin();
        let mut m = Machine::new(
            &mut self.heap,
            &mut self.locals,
            0,
            shared,
            &self.names,
            &[],
            before,
            None,
        );
        let out = decide(&mut m, &self.code.body[..self.len]);
        // Nothing is stored anywhere: strings made while deciding are dropped.
        self.heap.commit();
        out
    }
}

/// Walks the guard: true when it returns on every path.
fn decide(m: &mut Machine, body: &[Stmt]) -> bool {
    for s in body {
        match s {
            Stmt::Empty => {}
            Stmt::Init(slot, init) => {
                let v = match init {
                    Some(e) => match m.eval(e) {
                        Ok(v) => v,
                        // Unknown yet, or not modelled: boa decides.
                        Err(_) => return false,
                    },
                    None => V::Undef,
                };
                m.locals[*slot as usize] = v;
            }
            Stmt::If(c, _, _) => match m.eval(c) {
                Ok(v) if m.truthy(v) => return true,
                // False, or unknown: this statement returns or goes on, and what follows is
                // decided on the path that goes on.
                _ => {}
            },
            Stmt::Return(_) => return true,
            _ => return false,
        }
    }
    false
}
