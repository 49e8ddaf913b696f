//! Making a [`Machine`] for one hook.

use std::time::Instant;

use super::super::heap::Heap;
use super::super::value::V;
use super::{Machine, Names};
use crate::js::objects::Shared;

impl<'a> Machine<'a> {
    /// A machine over `heap` with `locals` (all undefined) for a hook of the tracer object
    /// `this`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn new(
        heap: &'a mut Heap,
        locals: &'a mut [V],
        this: u32,
        shared: &'a Shared,
        names: &'a Names,
        helpers: &'a [V],
        before: bool,
        limits: Option<(Instant, i64)>,
    ) -> Self {
        for l in locals.iter_mut() {
            *l = V::Undef;
        }
        Machine {
            heap,
            locals,
            this,
            shared,
            names,
            before,
            helpers,
            ret: V::Undef,
            iterations: 0,
            limits,
            last: std::ptr::null(),
        }
    }
}
