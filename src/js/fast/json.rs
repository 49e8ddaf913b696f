//! `JSON.stringify` of a natively evaluated `result`'s value, for what it can write exactly;
//! anything else gives up and boa runs `result` (see [`super::Fast::result`]).
//!
//! Only values no script changed the meaning of are written: the tracer ran no code in boa,
//! so `Object.prototype` and `Array.prototype` are the built-ins (no `toJSON`, no index
//! properties). Written: `null`, booleans, numbers whose text is modelled
//! ([`num_to_string`]: integers; a fraction gives up), strings, plain objects (indices, then
//! names in order; `undefined` and the literal's functions skipped) and arrays (holes,
//! `undefined` and functions as `null`). Gives up on: any other value boa holds, a `toJSON` property, a cycle, more than
//! [`MAX_RESULT_DEPTH`] levels.

use super::heap::Heap;
use super::value::{num_to_string, Held, V};
use crate::geth::json::write_js_string;
use crate::js::limits::MAX_RESULT_DEPTH;

/// The value needs boa.
pub struct GiveUp;

/// The JSON text of `v`, `None` for `undefined` (which `JSON.stringify` gives for nothing).
pub fn stringify(heap: &Heap, v: V) -> Result<Option<String>, GiveUp> {
    let mut w = Writer {
        heap,
        out: String::new(),
        path: Vec::new(),
    };
    Ok(w.value(v)?.then_some(w.out))
}

struct Writer<'a> {
    heap: &'a Heap,
    out: String,
    /// The objects being written, outermost first.
    path: Vec<u64>,
}

impl Writer<'_> {
    /// Writes `v`; false (nothing written) for `undefined`.
    fn value(&mut self, v: V) -> Result<bool, GiveUp> {
        match v {
            V::Undef => return Ok(false),
            V::Null => self.out.push_str("null"),
            V::True => self.out.push_str("true"),
            V::False => self.out.push_str("false"),
            V::Num(n) => {
                let n = f64::from_bits(n);
                if n.is_finite() {
                    self.out.push_str(&num_to_string(n).ok_or(GiveUp)?);
                } else {
                    self.out.push_str("null");
                }
            }
            V::Str(s) => write_js_string(self.heap.t.text(s), &mut self.out),
            V::Obj(id) => self.object(id)?,
            // One of the literal's functions: skipped like `undefined` (`Function.prototype`
            // has no `toJSON`, and nothing ran to add one).
            V::Opaque(i) if matches!(self.heap.t.js(i), Held::Literal(_)) => return Ok(false),
            V::Opaque(_) | V::Big(_) | V::Buf(_) => return Err(GiveUp),
        }
        Ok(true)
    }

    fn object(&mut self, id: u64) -> Result<(), GiveUp> {
        if self.path.len() >= MAX_RESULT_DEPTH || self.path.contains(&id) {
            return Err(GiveUp);
        }
        let o = self.heap.obj(id as u32);
        if o.named.iter().any(|(n, _)| &**n == "toJSON") {
            return Err(GiveUp);
        }
        self.path.push(id);
        if o.array {
            self.out.push('[');
            for (i, e) in o.elems.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                if !self.value(e.unwrap_or(V::Undef))? {
                    self.out.push_str("null");
                }
            }
            self.out.push(']');
        } else {
            self.out.push('{');
            let mut first = true;
            let indexed = o
                .elems
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.map(|e| (i, e)));
            for (i, e) in indexed {
                first = self.member(first, &i.to_string(), e)?;
            }
            for (n, e) in &o.named {
                first = self.member(first, n, *e)?;
            }
            self.out.push('}');
        }
        self.path.pop();
        Ok(())
    }

    /// `"key":value` unless the value writes nothing; whether nothing is written yet.
    fn member(&mut self, first: bool, key: &str, v: V) -> Result<bool, GiveUp> {
        let at = self.out.len();
        if !first {
            self.out.push(',');
        }
        write_js_string(key, &mut self.out);
        self.out.push(':');
        if self.value(v)? {
            Ok(false)
        } else {
            self.out.truncate(at);
            Ok(first)
        }
    }
}
