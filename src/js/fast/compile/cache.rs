//! The last script compiled on this thread, kept for the next tracer of the same script: a
//! block traced with one script builds a tracer per transaction, and parsing the literal again
//! for each would cost more than many of their hooks.

use std::cell::RefCell;
use std::rc::Rc;
use std::thread::LocalKey;

use super::super::eval::Names;
use super::super::ir::{Compiled, Func};
use super::super::value::Tables;
use super::{compile, step_prefix};

/// A script's source and what was made of it.
type Last<T> = RefCell<Option<(Box<str>, T)>>;

/// What `make` gives for `source`, remembered in `slot` until another script comes.
fn remembered<T: Clone>(
    slot: &'static LocalKey<Last<T>>,
    source: &str,
    make: impl FnOnce() -> T,
) -> T {
    let hit = slot.with_borrow(|last| match last {
        Some((src, made)) if **src == *source => Some(made.clone()),
        _ => None,
    });
    hit.unwrap_or_else(|| {
        let made = make();
        slot.with_borrow_mut(|last| *last = Some((source.into(), made.clone())));
        made
    })
}

/// The hooks (`None`: outside the subset) and the strings they refer to, the opcodes' names
/// among them.
type Hooks = (Option<Rc<Compiled>>, Tables, Names);

/// `step`'s leading statements inside the subset and whether `fault` is plain (`None`: the
/// script is not an object literal of hooks), and their strings, the opcodes' names among them.
type Prefix = (Option<(Option<Rc<Func>>, bool)>, Tables, Names);

thread_local! {
    static HOOKS: Last<Hooks> = const { RefCell::new(None) };
    static PREFIX: Last<Prefix> = const { RefCell::new(None) };
}

/// [`compile`] of `source` into a fresh string table.
pub fn compile_cached(source: &str) -> Option<(Rc<Compiled>, Tables, Names)> {
    let (code, strings, names) = remembered(&HOOKS, source, || {
        let mut strings = Tables::default();
        let code = compile(source, &mut strings).map(Rc::new);
        let names = Names::new(&mut strings);
        (code, strings, names)
    });
    code.map(|c| (c, strings, names))
}

/// [`step_prefix`] of `source` into a fresh string table.
pub fn step_prefix_cached(source: &str) -> Option<(Option<Rc<Func>>, bool, Tables, Names)> {
    let (prefix, strings, names) = remembered(&PREFIX, source, || {
        let mut strings = Tables::default();
        let prefix = step_prefix(source, &mut strings).map(|(f, plain)| (f.map(Rc::new), plain));
        let names = Names::new(&mut strings);
        (prefix, strings, names)
    });
    prefix.map(|(f, plain)| (f, plain, strings, names))
}
