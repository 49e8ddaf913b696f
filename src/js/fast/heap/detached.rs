//! A heap made without boa (for a tracer evaluated natively from its literal), its binding
//! to boa's tracer object once boa is built, and what `concat` and the JSON writer need.

use std::collections::HashSet;
use std::rc::Rc;

use boa_engine::object::JsObject;
use boa_engine::Context;

use super::super::value::{Key, Tables};
use super::{proto_keys, Heap, Obj};

/// The keys of `Object.prototype` and of `Array.prototype` (with its chain).
type ProtoKeys = (Rc<HashSet<Key>>, Rc<HashSet<Key>>);

impl Heap {
    /// A heap for a tracer evaluated without boa: the prototypes' keys are those of a fresh
    /// context's `Object.prototype` and `Array.prototype` (no script ran to change them), read
    /// once per thread.
    pub fn detached(t: Tables) -> Option<Self> {
        thread_local! {
            static KEYS: Option<ProtoKeys> = {
                let mut ctx = Context::default();
                let o = ctx.intrinsics().constructors().object().prototype();
                let a = ctx.intrinsics().constructors().array().prototype();
                match (proto_keys(&o, &mut ctx), proto_keys(&a, &mut ctx)) {
                    (Ok(o), Ok(a)) => Some((Rc::new(o), Rc::new(a))),
                    _ => None,
                }
            };
        }
        let keys = KEYS.with(Clone::clone)?;
        Some(Heap::empty(t, keys, (None, None)))
    }

    /// Makes object `id` (the tracer object of a detached heap) the shadow of `obj`, boa's
    /// evaluation of the same literal: every property is written into it at the next flush.
    pub fn bind_root(&mut self, id: u32, obj: JsObject) {
        let o = &mut self.objs[id as usize];
        o.origin = Some(obj.clone());
        o.dirty = true;
        self.ids.insert(obj, id);
    }

    /// Marks object `id` as one whose names are never deleted natively (see [`Obj::boa_made`]).
    pub fn pin(&mut self, id: u32) {
        self.objs[id as usize].boa_made = true;
    }

    /// Grows array `id`, just created, to `len` elements (trailing holes count in its length).
    pub fn set_len(&mut self, id: u32, len: usize) {
        let o = &mut self.objs[id as usize];
        if o.elems.len() < len {
            o.elems.resize(len, None);
        }
    }

    /// Object `id`, for reading.
    pub fn obj(&self, id: u32) -> &Obj {
        &self.objs[id as usize]
    }
}
