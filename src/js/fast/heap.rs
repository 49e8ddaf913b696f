//! The shadow heap: native copies of the tracer object and the plain objects and arrays
//! reachable from it, which compiled hooks read and write instead of boa's objects.
//!
//! Imported once after `setup` (or, for a tracer evaluated natively from its literal, made
//! without boa: [`Heap::detached`]); written back into the same boa objects (so other
//! references to them see the result) before boa runs any tracer code again: at `result`, or
//! when a hook deoptimises ([`Heap::flush`]). Property order is JavaScript's: indices
//! ascending, then names in insertion order; names of objects boa made are only ever added or
//! replaced, never deleted (a `delete` is modelled only on objects a hook made, which are
//! written back whole), so writing back in shadow order reproduces boa's order. Every write in
//! a hook is logged, so a hook that deoptimises halfway is undone and boa runs it from the
//! start.
//!
//! Strings are numbered in [`Tables`] and a hook's new ones are dropped at its end when it
//! stored none of them. A hook that stores one keeps them all, intermediate ones included:
//! `while (h.length < 64) { h = "0" + h; }` leaves some sixty strings behind for the one it
//! stores, per step. So past [`MIN_STRINGS`] the strings a hook built are kept only where
//! something refers to them: an object the hook made, or a property or element it wrote in an
//! older object (its undo log says which). They are renumbered in order and the references
//! rewritten ([`Heap::compact_strings`]).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::JsObject;
use boa_engine::property::PropertyKey;
use boa_engine::{js_string, Context, JsResult, JsString, JsValue};

use super::value::{Deopt, Held, Key, Tables, Text, R, V};

/// Indices above this are left to boa (a sparse write would allocate the gap).
const DENSE_MAX: usize = 1 << 16;
/// Objects above this are left to boa, whose collector can free them.
const HEAP_MAX: usize = 1 << 20;
/// Objects with more names than this get a hash index.
const LINEAR_MAX: usize = 16;
/// Below this many new strings a hook's are kept as they are.
const MIN_STRINGS: usize = 32;

#[derive(Debug)]
pub struct Obj {
    pub array: bool,
    /// The boa object this shadows; `None` for an object a hook created.
    pub origin: Option<JsObject>,
    /// Names are never deleted natively (`origin` is set, or will be: the tracer object of a
    /// tracer evaluated without boa, [`Heap::bind_root`]).
    pub boa_made: bool,
    pub dirty: bool,
    /// Index-keyed properties (array elements); `None` is a hole.
    pub elems: Vec<Option<V>>,
    pub named: Vec<(Text, V)>,
    index: rustc_hash::FxHashMap<Text, usize>,
}

impl Obj {
    fn new(array: bool, origin: Option<JsObject>) -> Self {
        Obj {
            array,
            boa_made: origin.is_some(),
            origin,
            dirty: false,
            elems: Vec::new(),
            named: Vec::new(),
            index: rustc_hash::FxHashMap::default(),
        }
    }

    #[inline(always)]
    fn find(&self, name: &Text) -> Option<usize> {
        if self.named.len() <= LINEAR_MAX {
            // Names are interned (see [`Names`]): pointer equality is the common hit.
            for (i, (n, _)) in self.named.iter().enumerate() {
                if Text::ptr_eq(n, name) {
                    return Some(i);
                }
            }
            self.find_by_text(name)
        } else {
            self.index.get(&**name).copied()
        }
    }

    #[cold]
    fn find_by_text(&self, name: &Text) -> Option<usize> {
        self.named.iter().position(|(n, _)| **n == **name)
    }

    fn find_str(&self, name: &str) -> Option<usize> {
        self.named.iter().position(|(n, _)| &**n == name)
    }

    fn append(&mut self, name: Text, v: V) {
        self.named.push((name, v));
        if self.named.len() > LINEAR_MAX {
            if self.index.is_empty() {
                for (i, (n, _)) in self.named.iter().enumerate() {
                    self.index.insert(n.clone(), i);
                }
            } else {
                let i = self.named.len() - 1;
                self.index.insert(self.named[i].0.clone(), i);
            }
        }
    }

    /// Rebuilds the name index after a name was removed or put back in the middle.
    fn reindex(&mut self) {
        self.index.clear();
        if self.named.len() > LINEAR_MAX {
            for (i, (n, _)) in self.named.iter().enumerate() {
                self.index.insert(n.clone(), i);
            }
        }
    }

    fn pop(&mut self) {
        if let Some((n, _)) = self.named.pop() {
            self.index.remove(&n);
            if self.named.len() <= LINEAR_MAX {
                self.index.clear();
            }
        }
    }
}

#[inline]
fn num_undo(id: u32, pos: Pos, old: f64) -> Undo {
    // Positions are below DENSE_MAX or the name count, both far below 2^32.
    match pos {
        Pos::Elem(i) => Undo::NumElem(id, i as u32, old),
        Pos::Named(i) => Undo::NumNamed(id, i as u32, old),
    }
}

/// Logs `u` unless the store is a hook's last ([`Heap::unlogged`]).
#[inline(always)]
fn log(undo: &mut Vec<Undo>, unlogged: bool, u: Undo) {
    if !unlogged {
        undo.push(u);
    }
}

/// Where an own property lives in a shadow object.
#[derive(Clone, Copy, Debug)]
pub enum Pos {
    Elem(usize),
    Named(usize),
}

#[derive(Debug)]
enum Undo {
    /// An element or name was replaced.
    Elem(u32, usize, Option<V>),
    Named(u32, usize, V),
    /// A name was appended.
    Appended(u32),
    /// The element vector had this length.
    Len(u32, usize),
    /// The last element was popped.
    Popped(u32, V),
    /// A number was replaced by a number.
    NumElem(u32, u32, f64),
    NumNamed(u32, u32, f64),
    /// A name was deleted from this position.
    Deleted(u32, usize, Text, V),
}

#[derive(Debug)]
pub struct Heap {
    objs: Vec<Obj>,
    ids: HashMap<JsObject, u32>,
    /// Keys found on `Object.prototype` / `Array.prototype` (a read of a missing key there
    /// reaches the prototype; a write may hit a setter).
    object_proto: Rc<HashSet<Key>>,
    array_proto: Rc<HashSet<Key>>,
    /// The two prototypes (`None` for a heap made without boa, which imports nothing).
    object_proto_obj: Option<JsObject>,
    array_proto_obj: Option<JsObject>,
    undo: Vec<Undo>,
    /// Objects at the start of the running hook; those above were created by it.
    mark: usize,
    /// Whether an object or string created by the running hook was stored into an object.
    escaped: bool,
    /// Strings at the start of the running hook.
    str_mark: usize,
    /// Set around a hook's last store ([`super::ir::Stmt::Final`]): it is not logged.
    pub unlogged: bool,
    /// Deletes so far (see [`Heap::moved`]), and at the start of the running hook.
    moved: u64,
    moved_at_begin: u64,
    /// The strings and boa values that values refer to.
    pub t: Tables,
}

/// The keys of `Object.prototype` and of `Array.prototype` (with its chain).
type ProtoKeys = (Rc<HashSet<Key>>, Rc<HashSet<Key>>);

fn proto_keys(proto: &JsObject, ctx: &mut Context) -> JsResult<HashSet<Key>> {
    let mut out = HashSet::new();
    let mut cur = Some(proto.clone());
    while let Some(o) = cur {
        for k in o.own_property_keys(ctx)? {
            match k {
                PropertyKey::Index(i) => {
                    out.insert(Key::Idx(i.get()));
                }
                PropertyKey::String(s) => {
                    out.insert(Key::from_name(Text::from(s.to_std_string_escaped())));
                }
                PropertyKey::Symbol(_) => {}
            }
        }
        cur = o.prototype();
    }
    Ok(out)
}

impl Heap {
    pub fn new(t: Tables, ctx: &mut Context) -> JsResult<Self> {
        let object_proto_obj = ctx.intrinsics().constructors().object().prototype();
        let array_proto_obj = ctx.intrinsics().constructors().array().prototype();
        let keys = (
            Rc::new(proto_keys(&object_proto_obj, ctx)?),
            Rc::new(proto_keys(&array_proto_obj, ctx)?),
        );
        Ok(Heap::empty(
            t,
            keys,
            (Some(object_proto_obj), Some(array_proto_obj)),
        ))
    }

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

    /// A heap holding no object yet.
    fn empty(
        t: Tables,
        (object_proto, array_proto): (Rc<HashSet<Key>>, Rc<HashSet<Key>>),
        (object_proto_obj, array_proto_obj): (Option<JsObject>, Option<JsObject>),
    ) -> Self {
        Heap {
            objs: Vec::new(),
            ids: HashMap::new(),
            object_proto,
            array_proto,
            object_proto_obj,
            array_proto_obj,
            undo: Vec::new(),
            mark: 0,
            escaped: false,
            str_mark: 0,
            unlogged: false,
            moved: 0,
            moved_at_begin: 0,
            t,
        }
    }

    #[inline]
    fn proto_has(&self, array: bool, key: &Key) -> bool {
        if array {
            self.array_proto.contains(key)
        } else {
            self.object_proto.contains(key)
        }
    }

    /// Where `key` lives in object `id`, if it is an own property.
    #[inline(always)]
    pub fn locate(&self, id: u32, key: &Key) -> Option<Pos> {
        let o = &self.objs[id as usize];
        match key {
            Key::Idx(i) => {
                let i = *i as usize;
                o.elems
                    .get(i)
                    .is_some_and(Option::is_some)
                    .then_some(Pos::Elem(i))
            }
            Key::Name(n) => o.find(n).map(Pos::Named),
        }
    }

    /// The value of `key` when it is not an own property (`pos` is `None`): undefined, unless
    /// the prototype may have it.
    #[inline]
    pub fn read(&self, id: u32, key: &Key, pos: Option<Pos>) -> R<V> {
        let o = &self.objs[id as usize];
        match pos {
            Some(Pos::Elem(i)) => Ok(o.elems[i].unwrap_or(V::Undef)),
            Some(Pos::Named(i)) => Ok(o.named[i].1),
            None => {
                if o.array && key.name() == Some("length") {
                    return Ok(V::num(o.elems.len() as f64));
                }
                if self.proto_has(o.array, key) {
                    return Err(Deopt);
                }
                Ok(V::Undef)
            }
        }
    }

    #[inline]
    pub fn get(&self, id: u32, key: &Key) -> R<V> {
        self.read(id, key, self.locate(id, key))
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

    /// Assigns `key` of object `id`; `pos` is what [`Heap::locate`] said for it.
    #[inline]
    pub fn write(&mut self, id: u32, key: &Key, pos: Option<Pos>, v: V) -> R<()> {
        if let V::Big(_) | V::Buf(_) = v {
            return Err(Deopt);
        }
        self.note_store(id, v);
        match pos {
            Some(Pos::Elem(i)) => {
                let o = &mut self.objs[id as usize];
                let old = o.elems[i].replace(v);
                log(&mut self.undo, self.unlogged, Undo::Elem(id, i, old));
                o.dirty = true;
                return Ok(());
            }
            Some(Pos::Named(p)) => {
                let o = &mut self.objs[id as usize];
                let old = std::mem::replace(&mut o.named[p].1, v);
                log(&mut self.undo, self.unlogged, Undo::Named(id, p, old));
                o.dirty = true;
                return Ok(());
            }
            None => {}
        }
        let array = self.objs[id as usize].array;
        // A new property: the prototype may have a setter for it, `__proto__` is one, and an
        // array's `length` truncates.
        if self.proto_has(array, key) || (array && key.name() == Some("length")) {
            return Err(Deopt);
        }
        let o = &mut self.objs[id as usize];
        match key {
            Key::Idx(i) => {
                let i = *i as usize;
                if i >= DENSE_MAX {
                    return Err(Deopt);
                }
                if i >= o.elems.len() {
                    log(&mut self.undo, self.unlogged, Undo::Len(id, o.elems.len()));
                    o.elems.resize(i + 1, None);
                }
                let old = o.elems[i].replace(v);
                log(&mut self.undo, self.unlogged, Undo::Elem(id, i, old));
            }
            Key::Name(n) => {
                o.append(n.clone(), v);
                log(&mut self.undo, self.unlogged, Undo::Appended(id));
            }
        }
        o.dirty = true;
        Ok(())
    }

    /// `arr.push(…vals)` with the built-in `push`: the new length. Left to boa unless `id` is
    /// an array without an own `push`.
    pub fn push(&mut self, id: u32, vals: &[V]) -> R<V> {
        let o = &self.objs[id as usize];
        if !o.array || o.find_str("push").is_some() {
            return Err(Deopt);
        }
        for &v in vals {
            let len = self.objs[id as usize].elems.len();
            if len >= DENSE_MAX {
                return Err(Deopt);
            }
            self.write(id, &Key::Idx(len as u32), None, v)?;
        }
        Ok(V::num(self.objs[id as usize].elems.len() as f64))
    }

    /// `arr.pop()` with the built-in `pop`: the last element, removed. Left to boa unless `id`
    /// is an array without an own `pop` whose last element is not a hole (the prototype's would
    /// be read).
    pub fn pop(&mut self, id: u32) -> R<V> {
        let o = &mut self.objs[id as usize];
        if !o.array || o.find_str("pop").is_some() {
            return Err(Deopt);
        }
        let Some(last) = o.elems.last() else {
            return Ok(V::Undef);
        };
        let v = last.ok_or(Deopt)?;
        o.elems.pop();
        o.dirty = true;
        self.undo.push(Undo::Popped(id, v));
        Ok(v)
    }

    /// `delete o.name` on a plain object a hook created (its boa object, made when the state
    /// is written back, gets the names left in their order); anything else is left to boa.
    pub fn delete(&mut self, id: u32, key: &Key) -> R<V> {
        let o = &mut self.objs[id as usize];
        let Key::Name(name) = key else {
            return Err(Deopt);
        };
        if o.array || o.boa_made {
            return Err(Deopt);
        }
        if let Some(p) = o.find(name) {
            let (n, v) = o.named.remove(p);
            o.reindex();
            o.dirty = true;
            self.undo.push(Undo::Deleted(id, p, n, v));
            self.moved += 1;
        }
        Ok(V::True)
    }

    /// Bumped by every `delete`: positions found before one may have moved.
    #[inline]
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// Stores the number `new` at an own property, whatever it held.
    #[inline(always)]
    pub fn set_num_any(&mut self, id: u32, pos: Pos, new: f64) {
        let o = &mut self.objs[id as usize];
        let slot = match pos {
            Pos::Elem(i) => o.elems[i].get_or_insert(V::Undef),
            Pos::Named(i) => &mut o.named[i].1,
        };
        o.dirty = true;
        if let V::Num(x) = slot {
            let old = f64::from_bits(*x);
            *x = new.to_bits();
            log(&mut self.undo, self.unlogged, num_undo(id, pos, old));
            return;
        }
        let old = std::mem::replace(slot, V::num(new));
        log(
            &mut self.undo,
            self.unlogged,
            match pos {
                Pos::Elem(i) => Undo::Elem(id, i, Some(old)),
                Pos::Named(i) => Undo::Named(id, i, old),
            },
        );
    }

    /// The number at an own property, if it holds one.
    #[inline(always)]
    pub fn num_at(&self, id: u32, pos: Pos) -> Option<f64> {
        let o = &self.objs[id as usize];
        let v = match pos {
            Pos::Elem(i) => o.elems[i].as_ref()?,
            Pos::Named(i) => &o.named[i].1,
        };
        match v {
            V::Num(n) => Some(f64::from_bits(*n)),
            _ => None,
        }
    }

    /// Replaces the number `old` at an own property with `new`.
    #[inline(always)]
    pub fn set_num(&mut self, id: u32, pos: Pos, old: f64, new: f64) {
        let o = &mut self.objs[id as usize];
        let slot = match pos {
            Pos::Elem(i) => o.elems[i].get_or_insert(V::Undef),
            Pos::Named(i) => &mut o.named[i].1,
        };
        // The payload alone: rebuilding the whole value costs a store-forwarding stall.
        match slot {
            V::Num(x) => *x = new.to_bits(),
            other => *other = V::num(new),
        }
        o.dirty = true;
        log(&mut self.undo, self.unlogged, num_undo(id, pos, old));
    }

    /// Marks objects and strings made by this hook as kept when they are stored.
    #[inline]
    fn note_store(&mut self, id: u32, v: V) {
        match v {
            V::Obj(child) if child as usize >= self.mark && (id as usize) < self.mark => {
                self.escaped = true
            }
            V::Str(s) if s as usize >= self.str_mark => self.escaped = true,
            _ => {}
        }
    }

    /// A new object or array (a literal); its properties are defined, not assigned.
    pub fn create(&mut self, array: bool, props: Vec<(Key, V)>) -> R<u32> {
        if self.objs.len() >= HEAP_MAX {
            return Err(Deopt);
        }
        let mut o = Obj::new(array, None);
        for (k, v) in props {
            if let V::Big(_) | V::Buf(_) = v {
                return Err(Deopt);
            }
            match k {
                Key::Idx(i) if (i as usize) < DENSE_MAX => {
                    let i = i as usize;
                    if i >= o.elems.len() {
                        o.elems.resize(i + 1, None);
                    }
                    o.elems[i] = Some(v);
                }
                Key::Idx(_) => return Err(Deopt),
                Key::Name(n) => match o.find(&n) {
                    Some(p) => o.named[p].1 = v,
                    None => o.append(n, v),
                },
            }
        }
        self.objs.push(o);
        Ok((self.objs.len() - 1) as u32)
    }

    /// Starts a hook.
    #[inline]
    pub fn begin(&mut self) {
        self.undo.clear();
        self.mark = self.objs.len();
        self.str_mark = self.t.strs_len();
        self.moved_at_begin = self.moved;
        self.escaped = false;
        self.t.clear_hook_values();
    }

    /// Ends a hook that completed; objects it created that nothing older refers to are freed,
    /// and so are the strings it built that nothing refers to (see [`Heap::compact_strings`]).
    #[inline]
    pub fn commit(&mut self) {
        if !self.escaped {
            self.objs.truncate(self.mark);
            if self.t.strs_len() > self.str_mark {
                self.t.truncate(self.str_mark);
            }
        } else if self.t.strs_len() - self.str_mark > MIN_STRINGS
            && self.moved == self.moved_at_begin
        {
            self.compact_strings();
        }
        self.undo.clear();
    }

    /// Calls `f` on every value the running hook may have stored that can refer to a string it
    /// built: the values of the objects it made, and what it wrote into older ones.
    fn hook_values(&mut self, mut f: impl FnMut(&mut V)) {
        let mark = self.mark;
        for o in &mut self.objs[mark..] {
            for v in o.elems.iter_mut().flatten() {
                f(v);
            }
            for (_, v) in &mut o.named {
                f(v);
            }
        }
        let mut appended: HashMap<u32, usize> = HashMap::new();
        for u in &self.undo {
            match *u {
                Undo::Elem(id, i, _) if (id as usize) < mark => {
                    if let Some(Some(v)) = self.objs[id as usize].elems.get_mut(i) {
                        f(v);
                    }
                }
                Undo::Named(id, p, _) if (id as usize) < mark => {
                    if let Some((_, v)) = self.objs[id as usize].named.get_mut(p) {
                        f(v);
                    }
                }
                Undo::Appended(id) if (id as usize) < mark => {
                    *appended.entry(id).or_default() += 1;
                }
                _ => {}
            }
        }
        // Names are only appended while no `delete` runs (the caller checks): a hook's
        // appends to an object are its last names.
        for (id, k) in appended {
            let named = &mut self.objs[id as usize].named;
            let from = named.len().saturating_sub(k);
            for (_, v) in &mut named[from..] {
                f(v);
            }
        }
    }

    /// Drops the strings the running hook built that nothing refers to.
    fn compact_strings(&mut self) {
        let base = self.str_mark;
        let n = self.t.strs_len() - base;
        let mut live = vec![false; n];
        self.hook_values(|v| {
            if let V::Str(s) = *v {
                if let Some(k) = (s as usize).checked_sub(base) {
                    live[k] = true;
                }
            }
        });
        let mut map = vec![0u64; n];
        let mut next = base as u64;
        for (k, l) in live.iter().enumerate() {
            if *l {
                map[k] = next;
                next += 1;
            }
        }
        if next as usize == base + n {
            return;
        }
        self.hook_values(|v| {
            if let V::Str(s) = v {
                if let Some(k) = (*s as usize).checked_sub(base) {
                    *s = map[k];
                }
            }
        });
        self.t.keep(base, &live);
    }

    /// Undoes the writes of a hook that deoptimised.
    pub fn rollback(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Elem(id, i, old) => self.objs[id as usize].elems[i] = old,
                Undo::Named(id, p, old) => self.objs[id as usize].named[p].1 = old,
                Undo::Appended(id) => self.objs[id as usize].pop(),
                Undo::Len(id, len) => self.objs[id as usize].elems.truncate(len),
                Undo::Popped(id, v) => self.objs[id as usize].elems.push(Some(v)),
                Undo::NumElem(id, i, n) => {
                    self.objs[id as usize].elems[i as usize] = Some(V::num(n))
                }
                Undo::NumNamed(id, i, n) => self.objs[id as usize].named[i as usize].1 = V::num(n),
                Undo::Deleted(id, p, n, v) => {
                    let o = &mut self.objs[id as usize];
                    o.named.insert(p, (n, v));
                    o.reindex();
                }
            }
        }
        self.objs.truncate(self.mark);
        self.t.truncate(self.str_mark);
    }

    /// Imports a boa value; plain objects and arrays become shadow objects (with everything
    /// reachable from them), anything else is held opaque.
    pub fn import(&mut self, v: &JsValue, ctx: &mut Context) -> JsResult<V> {
        let mut pending = Vec::new();
        let out = self.import_one(v, &mut pending, ctx)?;
        while let Some((id, props)) = pending.pop() {
            for (k, jv) in props {
                let v = self.import_one(&jv, &mut pending, ctx)?;
                let o = &mut self.objs[id as usize];
                match k {
                    Key::Idx(i) => o.elems[i as usize] = Some(v),
                    Key::Name(n) => o.append(n, v),
                }
            }
        }
        Ok(out)
    }

    fn import_one(
        &mut self,
        v: &JsValue,
        pending: &mut Vec<(u32, Vec<(Key, JsValue)>)>,
        ctx: &mut Context,
    ) -> JsResult<V> {
        if v.is_undefined() {
            return Ok(V::Undef);
        }
        if v.is_null() {
            return Ok(V::Null);
        }
        if let Some(b) = v.as_boolean() {
            return Ok(V::bool(b));
        }
        if let Some(n) = v.as_number() {
            return Ok(V::num(n));
        }
        if let Some(s) = v.as_string() {
            return Ok(match s.to_std_string() {
                Ok(s) => V::Str(self.t.intern_id(&s)),
                Err(_) => self.t.opaque(v.clone()),
            });
        }
        let Some(obj) = v.as_object() else {
            return Ok(self.t.opaque(v.clone()));
        };
        if let Some(id) = self.ids.get(&obj) {
            return Ok(V::Obj(u64::from(*id)));
        }
        let Some((array, len, props)) = self.plain(&obj, ctx)? else {
            return Ok(self.t.opaque(v.clone()));
        };
        if self.objs.len() >= HEAP_MAX {
            return Ok(self.t.opaque(v.clone()));
        }
        let mut o = Obj::new(array, Some(obj.clone()));
        o.elems.resize(len, None);
        self.objs.push(o);
        let id = (self.objs.len() - 1) as u32;
        self.ids.insert(obj, id);
        pending.push((id, props));
        Ok(V::Obj(u64::from(id)))
    }

    /// The own properties of a plain object or array, if it is one: the standard prototype,
    /// extensible, only string keys, only ordinary data properties, indices below the limit.
    #[allow(clippy::type_complexity)]
    fn plain(
        &mut self,
        obj: &JsObject,
        ctx: &mut Context,
    ) -> JsResult<Option<(bool, usize, Vec<(Key, JsValue)>)>> {
        let proto = obj.prototype();
        let array = if obj.is_array() {
            if proto.is_none() || proto != self.array_proto_obj {
                return Ok(None);
            }
            true
        } else if obj.is_ordinary() && proto.is_some() && proto == self.object_proto_obj {
            false
        } else {
            return Ok(None);
        };
        if !obj.is_extensible(ctx)? {
            return Ok(None);
        }
        let mut len = 0usize;
        if array {
            let n = JsArray::from_object(obj.clone())?.length(ctx)? as usize;
            if n > DENSE_MAX {
                return Ok(None);
            }
            len = n;
        }
        let mut props = Vec::new();
        for key in obj.own_property_keys(ctx)? {
            let k = match &key {
                PropertyKey::Index(i) if (i.get() as usize) < DENSE_MAX => Key::Idx(i.get()),
                PropertyKey::String(s) => {
                    let Ok(s) = s.to_std_string() else {
                        return Ok(None);
                    };
                    if array && s == "length" {
                        continue;
                    }
                    Key::from_name(self.t.intern(&s))
                }
                _ => return Ok(None),
            };
            let Some(d) = obj.borrow().properties().get(&key) else {
                return Ok(None);
            };
            if d.is_accessor_descriptor()
                || d.writable() != Some(true)
                || d.enumerable() != Some(true)
                || d.configurable() != Some(true)
            {
                return Ok(None);
            }
            if let Key::Idx(i) = k {
                len = len.max(i as usize + 1);
            }
            props.push((k, d.expect_value().clone()));
        }
        Ok(Some((array, len, props)))
    }

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
