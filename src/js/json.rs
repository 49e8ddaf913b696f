//! `JSON.stringify` of a tracer's `result` written in Rust, for the values it can write without
//! running any JavaScript; anything else is left to boa's `JSON.stringify`
//! ([`super::limits::stringify_result`]).
//!
//! boa's `JSON.stringify` spends most of a large result's time in its generic machinery
//! (descriptors, key lists, one `char` at a time): a call tree of 2,000 frames took a quarter
//! of the whole trace. The walk here writes exactly what `JSON.stringify` writes for:
//! `null`, booleans, numbers (boa's own `Number` to string), strings of valid UTF-16, plain
//! objects (prototype `Object.prototype`, data properties only, no own `toJSON`) and arrays
//! (prototype `Array.prototype`, no holes, data elements), with `undefined` and symbols
//! skipped in objects and written `null` in arrays — provided `Object.prototype` and
//! `Array.prototype` have no `toJSON` of their own and the latter inherits from the former.
//! Any other value (a `bigInt`, a `Uint8Array`, a function, a getter, a cycle, more than
//! [`MAX_RESULT_DEPTH`] levels, a lone surrogate) makes it give up, and the whole value goes to
//! `JSON.stringify`, which also produces its errors.

use std::fmt::Write;

use boa_engine::object::JsObject;
use boa_engine::property::PropertyKey;
use boa_engine::value::JsVariant;
use boa_engine::{js_string, Context, JsValue};

use super::limits::MAX_RESULT_DEPTH;
use crate::geth::json::write_js_string;

/// The walk gave up: the value needs `JSON.stringify`.
struct GiveUp;

struct Writer<'a> {
    object: JsObject,
    array: JsObject,
    out: String,
    /// The objects being written, outermost first (a cycle gives up).
    path: Vec<JsObject>,
    ctx: &'a mut Context,
}

/// `JSON.stringify(v)` when the walk can write it: `Some(None)` for `undefined` (nothing
/// serialisable), `Some(Some(text))` for a JSON text, `None` when boa must do it.
pub fn stringify_plain(v: &JsValue, ctx: &mut Context) -> Option<Option<String>> {
    let object = ctx.intrinsics().constructors().object().prototype();
    let array = ctx.intrinsics().constructors().array().prototype();
    let to_json = PropertyKey::from(js_string!("toJSON"));
    if array.prototype().as_ref() != Some(&object)
        || object.borrow().properties().get(&to_json).is_some()
        || array.borrow().properties().get(&to_json).is_some()
    {
        return None;
    }
    let mut w = Writer {
        object,
        array,
        out: String::new(),
        path: Vec::new(),
        ctx,
    };
    match w.value(v) {
        Ok(true) => Some(Some(w.out)),
        Ok(false) => Some(None),
        Err(GiveUp) => None,
    }
}

impl Writer<'_> {
    /// Writes `v`; false (nothing written) where `JSON.stringify` skips the value.
    fn value(&mut self, v: &JsValue) -> Result<bool, GiveUp> {
        match v.variant() {
            JsVariant::Null => self.out.push_str("null"),
            JsVariant::Undefined | JsVariant::Symbol(_) => return Ok(false),
            JsVariant::Boolean(b) => self.out.push_str(if b { "true" } else { "false" }),
            JsVariant::Integer32(i) => {
                let _ = write!(self.out, "{i}");
            }
            JsVariant::Float64(f) if f.is_finite() => {
                let s = v.to_string(self.ctx).map_err(|_| GiveUp)?;
                self.out.push_str(&s.to_std_string().map_err(|_| GiveUp)?);
            }
            JsVariant::Float64(_) => self.out.push_str("null"),
            JsVariant::String(s) => {
                write_js_string(&s.to_std_string().map_err(|_| GiveUp)?, &mut self.out)
            }
            JsVariant::BigInt(_) => return Err(GiveUp),
            JsVariant::Object(o) => self.object(&o)?,
        }
        Ok(true)
    }

    fn object(&mut self, o: &JsObject) -> Result<(), GiveUp> {
        if self.path.len() >= MAX_RESULT_DEPTH || self.path.contains(o) {
            return Err(GiveUp);
        }
        let proto = o.prototype();
        let array = o.is_array();
        let plain = if array {
            proto.as_ref() == Some(&self.array)
        } else {
            o.is_ordinary() && proto.as_ref() == Some(&self.object)
        };
        if !plain
            || o.borrow()
                .properties()
                .get(&js_string!("toJSON").into())
                .is_some()
        {
            return Err(GiveUp);
        }
        self.path.push(o.clone());
        if array {
            self.array_items(o)?;
        } else {
            self.object_members(o)?;
        }
        self.path.pop();
        Ok(())
    }

    fn array_items(&mut self, o: &JsObject) -> Result<(), GiveUp> {
        let len = o
            .borrow()
            .properties()
            .get(&js_string!("length").into())
            .and_then(|d| d.value().and_then(JsValue::as_number))
            .ok_or(GiveUp)?;
        self.out.push('[');
        for i in 0..len as u32 {
            if i > 0 {
                self.out.push(',');
            }
            let item = data(o, &PropertyKey::from(i))?.ok_or(GiveUp)?;
            if !self.value(&item)? {
                self.out.push_str("null");
            }
        }
        self.out.push(']');
        Ok(())
    }

    fn object_members(&mut self, o: &JsObject) -> Result<(), GiveUp> {
        let keys = o.own_property_keys(self.ctx).map_err(|_| GiveUp)?;
        self.out.push('{');
        let mut first = true;
        for key in keys {
            let name = match &key {
                PropertyKey::String(s) => s.to_std_string().map_err(|_| GiveUp)?,
                PropertyKey::Index(i) => i.get().to_string(),
                PropertyKey::Symbol(_) => continue,
            };
            let Some(v) = data(o, &key)? else {
                continue;
            };
            let mark = self.out.len();
            if !first {
                self.out.push(',');
            }
            write_js_string(&name, &mut self.out);
            self.out.push(':');
            if self.value(&v)? {
                first = false;
            } else {
                self.out.truncate(mark);
            }
        }
        self.out.push('}');
        Ok(())
    }
}

/// An own enumerable data property's value; `None` when it is absent or not enumerable, a
/// give-up for an accessor (its getter would run JavaScript).
fn data(o: &JsObject, key: &PropertyKey) -> Result<Option<JsValue>, GiveUp> {
    let Some(d) = o.borrow().properties().get(key) else {
        return Ok(None);
    };
    if d.is_accessor_descriptor() {
        return Err(GiveUp);
    }
    if d.enumerable() != Some(true) {
        return Ok(None);
    }
    Ok(Some(d.value().cloned().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use boa_engine::{js_string, Context, JsValue, Source};

    use super::stringify_plain;

    /// Both ways, for a value made by `code`.
    fn both(code: &str) -> (Option<Option<String>>, Option<String>) {
        let mut ctx = Context::default();
        let v = ctx.eval(Source::from_bytes(code)).unwrap();
        let plain = stringify_plain(&v, &mut ctx);
        let json = ctx
            .global_object()
            .get(js_string!("JSON"), &mut ctx)
            .unwrap();
        let f = json
            .as_object()
            .unwrap()
            .get(js_string!("stringify"), &mut ctx)
            .unwrap();
        let s = f
            .as_callable()
            .unwrap()
            .call(&json, &[v], &mut ctx)
            .unwrap();
        let boa = s.as_string().map(|s| s.to_std_string_escaped());
        (plain, boa)
    }

    #[test]
    fn plain_values_are_written_as_json_stringify_writes_them() {
        for code in [
            "null",
            "undefined",
            "true",
            "-0",
            "1.5e300",
            "0.1 + 0.2",
            "NaN",
            "-Infinity",
            "2 ** 31",
            "'a\"b\\\\c\\n\\u0001\\u001f\\t\\b\\f\\r é 😀 </script>'",
            "({b: 1, a: [1, undefined, null, Symbol('s')], 10: 'x', 2: 'y', u: undefined, s: Symbol('t')})",
            "({x: {y: {z: []}}, e: {}, n: -5})",
            "(function () { var o = {a: 1, b: 2}; delete o.a; o.c = 3; return o; })()",
            "(function () { var o = {}; Object.defineProperty(o, 'h', {value: 1, enumerable: false}); o.v = 2; return o; })()",
            "[{type: 'CALL', calls: [{gas: '0x1'}]}]",
        ] {
            let (plain, boa) = both(code);
            assert_eq!(plain, Some(boa), "{code}");
        }
    }

    #[test]
    fn anything_else_is_left_to_json_stringify() {
        for code in [
            "[1, , 3]",
            "({toJSON: function () { return 1; }})",
            "({get g() { return 1; }})",
            "new Uint8Array([1, 2])",
            "Object.create(null)",
            "(function () { var o = {}; o.self = o; return o; })()",
            "'\\ud800'",
            "10n",
            "(function () { Object.prototype.toJSON = function () { return 1; }; return {}; })()",
            "(function () { Array.prototype.toJSON = function () { return 1; }; return []; })()",
            "(function () { var a = []; for (var i = 0; i < 600; i++) { a = [a]; } return a; })()",
        ] {
            let mut ctx = Context::default();
            let v: JsValue = ctx.eval(Source::from_bytes(code)).unwrap();
            assert_eq!(stringify_plain(&v, &mut ctx), None, "{code}");
        }
    }
}
