//! A tracer evaluated without boa: the object literal made natively, its hooks and `result`
//! run natively, and boa built only when something leaves the subset (then the literal is
//! evaluated in boa and the native state written into it, as after a deoptimisation).

use boa_engine::object::JsObject;
use boa_engine::{Context, JsString};

use super::eval::Machine;
use super::heap::Heap;
use super::ir::Func;
use super::json::stringify;
use super::value::{Deopt, Held, Key, V};
use super::{compile, enabled, Fast, Shared};

/// Levels of the configuration built natively (deeper ones are left to boa).
const CONFIG_DEPTH: usize = 64;

/// `JSON.parse` of a configuration the host wrote from a parsed JSON value (so keys are unique
/// and in the order the text has): objects, arrays, strings, booleans, null, and numbers that
/// are exact as `f64`; `None` (boa parses it) for a `__proto__` key or what is deeper than
/// [`CONFIG_DEPTH`].
fn json_value(heap: &mut Heap, v: &serde_json::Value, depth: usize) -> Option<V> {
    use serde_json::Value as J;
    if depth > CONFIG_DEPTH {
        return None;
    }
    Some(match v {
        J::Null => V::Null,
        J::Bool(b) => V::bool(*b),
        J::Number(n) => V::num(n.as_f64()?),
        J::String(s) => V::Str(heap.t.intern_id(s)),
        J::Array(items) => {
            let mut props = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                props.push((
                    Key::Idx(u32::try_from(i).ok()?),
                    json_value(heap, x, depth + 1)?,
                ));
            }
            V::Obj(u64::from(heap.create(true, props).ok()?))
        }
        J::Object(map) => {
            let mut props = Vec::with_capacity(map.len());
            for (k, x) in map {
                if k == "__proto__" {
                    return None;
                }
                let key = Key::from_name(heap.t.intern(k));
                props.push((key, json_value(heap, x, depth + 1)?));
            }
            V::Obj(u64::from(heap.create(false, props).ok()?))
        }
    })
}

impl Fast {
    /// The tracer of `source` made without boa, `setup` run with `config` (the configuration's
    /// JSON text), when the whole script is inside the subset (see [`super::ir::Detached`]).
    /// `limits`: the tracer's deadline and memory base, which a looping `setup` is held to
    /// (past them boa runs it, under the same deadline, and reports what it reports).
    pub fn detached(
        source: &str,
        config: &str,
        shared: &Shared,
        limits: (std::time::Instant, i64),
    ) -> Option<Fast> {
        if !enabled() {
            return None;
        }
        let (code, strings, names) = compile::compile_cached(source)?;
        let d = code.detached.as_ref()?;
        // A `step` that reads the views (or may hand over to boa, which reads them) runs best
        // with boa's `Guard` sparing the views for the opcodes it returns early on; that
        // needs boa's `step` function, so such a script is built in boa from the start.
        if code.step.is_some() && (code.uses.views || code.uses.may_deopt) {
            return None;
        }
        let mut fast = Fast {
            locals: vec![V::Undef; code.locals()],
            code: code.clone(),
            heap: Heap::detached(strings)?,
            this: 0,
            names,
            helpers: Vec::new(),
        };
        let V::Obj(this) = fast.eval(&d.literal, shared, None, None).ok()? else {
            return None;
        };
        fast.this = this as u32;
        fast.heap.pin(fast.this);
        fast.helpers = super::helpers(
            &code,
            &mut fast.heap,
            fast.this,
            |name, held| matches!(held, Held::Literal(n) if d.functions.get(usize::from(*n)).is_some_and(|f| f == name)),
        )?;
        if let Some((setup, slot)) = &d.setup {
            let parsed = match slot {
                Some(slot) => Some((*slot, serde_json::from_str(config).ok()?)),
                None => None,
            };
            fast.eval(
                &setup.body,
                shared,
                Some(limits),
                parsed.as_ref().map(|(s, v)| (*s, v)),
            )
            .ok()?;
            fast.heap.commit();
        }
        Some(fast)
    }

    /// Runs `body` and returns what it returned; on [`Deopt`] nothing it did remains.
    fn eval(
        &mut self,
        body: &[super::ir::Stmt],
        shared: &Shared,
        limits: Option<(std::time::Instant, i64)>,
        preset: Option<(u16, &serde_json::Value)>,
    ) -> Result<V, Deopt> {
        self.heap.begin();
        let mut m = Machine::new(
            &mut self.heap,
            &mut self.locals,
            self.this,
            shared,
            &self.names,
            &self.helpers,
            false,
            limits,
        );
        if let Some((slot, v)) = preset {
            let Some(v) = json_value(m.heap, v, 0) else {
                m.heap.rollback();
                return Err(Deopt);
            };
            *m.locals.get_mut(usize::from(slot)).ok_or(Deopt)? = v;
        }
        let out = m.run(body).map(|()| m.ret);
        match out {
            Ok(v) => Ok(v),
            Err(d) => {
                self.heap.rollback();
                Err(d)
            }
        }
    }

    /// Runs `result` natively (`shared.tx` holds its `ctx`) and writes its value as
    /// `JSON.stringify` does: `Ok(None)` for `undefined`. On [`Deopt`] nothing it did remains,
    /// and boa runs it.
    pub fn result(
        &mut self,
        shared: &Shared,
        limits: (std::time::Instant, i64),
    ) -> Result<Option<String>, Deopt> {
        let code = self.code.clone();
        let f: &Func = &code.detached.as_ref().ok_or(Deopt)?.result;
        let v = self.eval(&f.body, shared, Some(limits), None)?;
        match stringify(&self.heap, v) {
            Ok(text) => {
                self.heap.commit();
                Ok(text)
            }
            Err(_) => {
                self.heap.rollback();
                Err(Deopt)
            }
        }
    }

    /// Makes `tracer`, boa's evaluation of the same literal, the object the native state is
    /// written into (at [`Fast::flush`]); its functions stand for the literal's.
    pub fn bind(&mut self, tracer: &JsObject, ctx: &mut Context) -> Option<()> {
        let d = self.code.detached.as_ref()?;
        let mut fns = Vec::with_capacity(d.functions.len());
        for name in &d.functions {
            let f = tracer.get(JsString::from(name.as_str()), ctx).ok()?;
            f.as_callable()?;
            fns.push(f);
        }
        self.heap
            .t
            .bind_literals(|n| fns.get(usize::from(n)).cloned())?;
        self.heap.bind_root(self.this, tracer.clone());
        Some(())
    }

    /// Whether the script defines `hook` (of those that run natively).
    pub fn has(&self, hook: super::Hook) -> bool {
        self.code.hook(hook).is_some()
    }
}
