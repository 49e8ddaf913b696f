//! Functions the optimizer inlined, put back into a frame's stack.
//!
//! Under viaIR (and where the legacy optimizer inlines) a function's code runs inside its
//! caller with no JUMP marked `i`: the internal stack rebuilt from the markers lacks it, down to
//! the external function the frame's selector chose (`Vault.deposit` → `safeTransferFrom` →
//! `_callOptionalReturn` shows only the last). The missing levels are found in the source text:
//! the external function, then a path of internal calls from it to the outermost function the
//! stack knows. A level is added only when that path is the only shortest one — two ways
//! through the text leave the stack as the map gave it rather than pick one.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::U256;

use super::{args, CodeMap, FnSpan, SourceFile};
use crate::render::source::{Arg, Location, StackEntry};

/// The longest chain of inlined calls put back.
const MAX_DEPTH: usize = 6;

type Func<'a> = (&'a Arc<SourceFile>, &'a FnSpan);

impl CodeMap {
    /// `entries` (a frame's stack, innermost first) completed with the functions inlined
    /// between the external function `input`'s selector chose and the outermost entry.
    pub(super) fn with_inlined(
        &self,
        mut entries: Vec<StackEntry>,
        input: &[u8],
    ) -> Vec<StackEntry> {
        let Some(selector) = input.get(..4).and_then(|s| <[u8; 4]>::try_from(s).ok()) else {
            return entries;
        };
        let Some(external) = self.function_by_selector(selector) else {
            return entries;
        };
        let outer = entries
            .last()
            .and_then(|e| self.function_at_location(&e.location));
        if let Some(outer) = outer {
            if same(outer, external) {
                return entries;
            }
        }
        let Some(outer) = outer else {
            return entries;
        };
        let Some(path) = self.only_call_path(external, outer) else {
            return entries;
        };
        // path: external, …, the caller of `outer`; each at its call of the next.
        for (k, &(file, f)) in path.iter().enumerate().rev() {
            let next = if k + 1 < path.len() {
                path[k + 1].1
            } else {
                outer.1
            };
            let calls = self.internal_calls(file, f, next);
            let location = match calls.as_slice() {
                [at] => {
                    // From the start of the call's expression: `asset.safeTransferFrom(…)`.
                    let text = file.text().unwrap_or_default();
                    let start = text[..*at]
                        .rfind(|c: char| !(c.is_alphanumeric() || "_$.".contains(c)))
                        .map_or(0, |i| i + 1);
                    let len = text[start..].find([';', '\n']).unwrap_or(0);
                    file.locate(start, len)
                }
                _ => None,
            }
            .or_else(|| {
                let head = super::ctor::header(file, f)?;
                file.locate(f.start, head.trim_end().len())
            });
            let Some(location) = location else {
                return entries;
            };
            let args = if k == 0 {
                calldata_args(f, input)
            } else {
                names_only(f)
            };
            entries.push(StackEntry {
                contract: self.shown_contract(&f.contract),
                function: self.shown_name(f),
                location,
                reached_by: None,
                args,
                undecided: Vec::new(),
            });
        }
        entries
    }

    /// The function of this map's contract (or its bases) whose selector is `selector`, by
    /// the parameter types the AST gives: one with a body (not an interface's declaration),
    /// this contract's first.
    fn function_by_selector(&self, selector: [u8; 4]) -> Option<Func<'_>> {
        let lineage = self.lineage();
        self.unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| !f.modifier && lineage.contains(&f.contract))
            .filter(|(file, f)| {
                super::ctor::header(file, f).is_some_and(|h| h.len() < f.end - f.start)
            })
            .filter(|(_, f)| f.selector() == Some(selector))
            .min_by_key(|(file, f)| (f.contract != self.contract, file.path.as_str(), f.start))
    }

    /// The function whose text holds `loc`.
    fn function_at_location(&self, loc: &Location) -> Option<Func<'_>> {
        let file = self.unit.files.values().find(|f| f.path == loc.file)?;
        let text = file.text()?;
        let line_start = super::line_offset(text, loc.line)?;
        let col: usize = text[line_start..]
            .char_indices()
            .nth(loc.column.checked_sub(1)?)
            .map(|(i, _)| i)?;
        Some((file, file.function_at(line_start + col)?))
    }

    /// The one shortest chain of internal calls from `from` that reaches `to` (`from` first,
    /// `to`'s caller last), or `None` when there is none within [`MAX_DEPTH`] or several.
    fn only_call_path<'a>(&'a self, from: Func<'a>, to: Func<'a>) -> Option<Vec<Func<'a>>> {
        let all: Vec<Func<'a>> = self
            .unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| !f.modifier)
            .collect();
        let key = |f: Func<'_>| (Arc::as_ptr(f.0) as usize, f.1.start);
        // Breadth first, counting the shortest paths to each function.
        let mut seen: HashMap<(usize, usize), (usize, usize)> = HashMap::new(); // depth, paths
        let mut parent: HashMap<(usize, usize), Func<'a>> = HashMap::new();
        let mut layer = vec![from];
        seen.insert(key(from), (0, 1));
        for depth in 1..=MAX_DEPTH {
            let mut next = Vec::new();
            for &caller in &layer {
                let paths = seen[&key(caller)].1;
                for &callee in &all {
                    if self.internal_calls(caller.0, caller.1, callee.1).is_empty() {
                        continue;
                    }
                    match seen.get_mut(&key(callee)) {
                        Some((d, n)) if *d == depth => *n += paths,
                        Some(_) => {}
                        None => {
                            seen.insert(key(callee), (depth, paths));
                            parent.insert(key(callee), caller);
                            next.push(callee);
                        }
                    }
                }
            }
            if let Some(&(_, n)) = seen.get(&key(to)) {
                if n != 1 {
                    return None;
                }
                let mut path = Vec::new();
                let mut at = to;
                while let Some(&p) = parent.get(&key(at)) {
                    path.push(p);
                    at = p;
                }
                path.reverse();
                return Some(path);
            }
            if next.is_empty() {
                return None;
            }
            layer = next;
        }
        None
    }
}

fn same(a: Func<'_>, b: Func<'_>) -> bool {
    Arc::ptr_eq(a.0, b.0) && a.1.start == b.1.start
}

/// Parameters named, without values.
fn names_only(f: &FnSpan) -> Vec<Arg> {
    f.inputs
        .iter()
        .enumerate()
        .map(|(i, (name, _))| Arg {
            name: arg_name(name, i),
            value: None,
        })
        .collect()
}

/// The external function's parameters with the values of its call data's head words, for
/// value types at a known head position (no static array or struct before them).
fn calldata_args(f: &FnSpan, input: &[u8]) -> Vec<Arg> {
    let mut known = true;
    f.inputs
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| {
            if ty.contains('[') && !ty.contains("[]") || ty.starts_with("struct ") {
                known = false;
            }
            let value = known
                .then(|| input.get(4 + 32 * i..4 + 32 * (i + 1)))
                .flatten()
                .and_then(|w| args::format(ty, U256::from_be_slice(w)));
            Arg {
                name: arg_name(name, i),
                value,
            }
        })
        .collect()
}

fn arg_name(name: &str, i: usize) -> String {
    if name.is_empty() {
        format!("_{i}")
    } else {
        name.to_string()
    }
}
