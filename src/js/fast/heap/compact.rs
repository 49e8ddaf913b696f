//! Freeing the strings a hook built but did not keep.
//!
//! Strings are numbered in [`Tables`](super::super::value::Tables) and a hook's new ones are
//! dropped at its end when it stored none of them. A hook that stores one keeps them all,
//! intermediate ones included: `while (h.length < 64) { h = "0" + h; }` leaves some sixty
//! strings behind for the one it stores, per step. Here the strings a hook built are kept only
//! where something refers to them: an object the hook made, or a property or element it wrote
//! in an older object (its undo log says which). They are renumbered in order and the
//! references rewritten.

use std::collections::HashMap;

use super::super::value::V;
use super::{Heap, Undo};

/// Below this many new strings a hook's are kept as they are.
pub const MIN_STRINGS: usize = 32;

impl Heap {
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
    pub(super) fn compact_strings(&mut self) {
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
}
