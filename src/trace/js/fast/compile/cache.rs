//! The last script compiled on this thread, kept for the next tracer of the same script.

use std::rc::Rc;

use super::super::ir::Compiled;
use super::super::value::Tables;
use super::compile;

/// A script's source, what it compiled to (`None`: outside the subset) and its strings.
type Remembered = (Box<str>, Option<Rc<Compiled>>, Tables);

thread_local! {
    /// The last script compiled on this thread and what it gave: a block traced with one
    /// script builds a tracer per transaction, and parsing the literal again for each would
    /// cost more than many of their hooks.
    static LAST: std::cell::RefCell<Option<Remembered>> = const { std::cell::RefCell::new(None) };
}

/// [`compile`] of `source` into a fresh string table, remembered for the next tracer of the
/// same script on this thread.
pub fn compile_cached(source: &str) -> Option<(Rc<Compiled>, Tables)> {
    let hit = LAST.with_borrow(|last| match last {
        Some((src, code, strings)) if **src == *source => {
            Some(code.clone().map(|c| (c, strings.clone())))
        }
        _ => None,
    });
    if let Some(found) = hit {
        return found;
    }
    let mut strings = Tables::default();
    let code = compile(source, &mut strings).map(Rc::new);
    LAST.with_borrow_mut(|last| {
        *last = Some((source.into(), code.clone(), strings.clone()));
    });
    code.map(|c| (c, strings))
}
