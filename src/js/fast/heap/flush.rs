//! Writing the shadow heap back into boa's objects.

use boa_engine::object::builtins::JsArray;
use boa_engine::object::JsObject;
use boa_engine::{js_string, Context, JsResult, JsString, JsValue};

use super::super::value::{Held, V};
use super::Heap;

impl Heap {
    /// Writes every changed shadow object back into boa, creating boa objects for new ones.
    pub fn flush(&mut self, ctx: &mut Context) -> JsResult<()> {
        let mut pending: Vec<u32> = (0..self.objs.len() as u32)
            .filter(|&i| self.objs[i as usize].dirty && self.objs[i as usize].origin.is_some())
            .collect();
        while let Some(id) = pending.pop() {
            let o = &mut self.objs[id as usize];
            if !o.dirty {
                continue;
            }
            o.dirty = false;
            let target = o.origin.clone().expect("flushed objects have a boa object");
            let elems: Vec<(u32, V)> = o
                .elems
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i as u32, v)))
                .collect();
            let named = o.named.clone();
            let len = o.array.then_some(o.elems.len());
            for (i, v) in elems {
                let jv = self.export(&v, &mut pending, ctx)?;
                target.set(i, jv, true, ctx)?;
            }
            // A `pop` shortened it (otherwise its length is what its elements just set).
            if let Some(len) = len {
                let now = target.get(js_string!("length"), ctx)?.to_length(ctx)?;
                if (len as u64) < now {
                    target.set(js_string!("length"), len, true, ctx)?;
                }
            }
            for (n, v) in named {
                let jv = self.export(&v, &mut pending, ctx)?;
                target.set(JsString::from(&*n), jv, true, ctx)?;
            }
        }
        Ok(())
    }

    fn export(&mut self, v: &V, pending: &mut Vec<u32>, ctx: &mut Context) -> JsResult<JsValue> {
        Ok(match v {
            V::Undef => JsValue::undefined(),
            V::Null => JsValue::null(),
            V::True => JsValue::from(true),
            V::False => JsValue::from(false),
            V::Num(n) => JsValue::from(f64::from_bits(*n)),
            V::Str(s) => JsValue::from(JsString::from(&**self.t.text(*s))),
            V::Opaque(o) => match self.t.js(*o) {
                Held::Js(v) => v.clone(),
                // Bound before any flush (`Tables::bind_literals`).
                Held::Literal(_) => {
                    return Err(boa_engine::JsNativeError::typ()
                        .with_message("a literal function was not bound")
                        .into())
                }
            },
            // Never stored (`write` and `create` refuse them).
            V::Big(_) | V::Buf(_) => JsValue::undefined(),
            V::Obj(id) => {
                let id = *id as u32;
                let o = &mut self.objs[id as usize];
                if let Some(js) = &o.origin {
                    return Ok(js.clone().into());
                }
                let js: JsObject = if o.array {
                    JsArray::new(ctx)?.into()
                } else {
                    JsObject::with_object_proto(ctx.intrinsics())
                };
                o.origin = Some(js.clone());
                o.dirty = true;
                if o.array {
                    // Trailing holes count in an array's length.
                    js.set(js_string!("length"), o.elems.len(), true, ctx)?;
                }
                self.ids.insert(js.clone(), id);
                pending.push(id);
                js.into()
            }
        })
    }
}
