//! `delete` on the shadow heap.

use super::super::value::{Deopt, Key, R, V};
use super::{Heap, Undo};

impl Heap {
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
}
