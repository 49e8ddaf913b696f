//! A trace's source notes: where each failed frame failed, the Solidity stack trace, why a
//! frame reverted without a reason, and gas by source — the source maps of `SourceIndex` put on
//! one trace.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::Bytes;

use super::sources::{self, CodeMap};
use super::{code_of, gas_source, infer, proxy, Names};
use crate::render::decoder::Decoder;
use crate::render::source::{Location, SourceNotes, StackEntry};
use crate::render::tree::failure_path;
use crate::replay::TraceResult;
use crate::source::StateSnapshot;
use crate::trace::call::CallFrame;

impl Names {
    /// Where the trace failed in the source: a location for every failed frame whose code has a
    /// source map, and the Solidity stack trace of the top frame's failure. Empty unless the
    /// trace recorded its pcs ([`crate::trace::call::CallTracerConfig::source_steps`]).
    /// A gas report that kept its calling contexts gets its gas by line and function
    /// ([`gas_source`]), named by `decoder`.
    pub fn source_notes(
        &self,
        result: &TraceResult,
        state: &StateSnapshot,
        decoder: &Decoder,
    ) -> SourceNotes {
        let mut notes = SourceNotes::default();
        if let TraceResult::Gas(report) = result {
            notes.gas = gas_source::source_gas(
                report,
                &|code: &[u8], creation: bool| self.code_map(code, creation),
                decoder,
            );
            return notes;
        }
        let TraceResult::Call(root) = result else {
            return notes;
        };
        if root.steps.is_none() {
            return notes;
        }
        let touched = proxy::touched(result);
        let code_for = |f: &CallFrame| -> Option<Bytes> {
            if f.kind.is_create() {
                return Some(f.input.clone());
            }
            let to = f.to?;
            touched
                .contracts
                .get(&to)
                .cloned()
                .flatten()
                .or_else(|| code_of(state, &to))
        };
        let map_of = |f: &CallFrame| -> Option<Arc<CodeMap>> {
            self.code_map(&code_for(f)?, f.kind.is_create())
        };
        // Why a frame reverted with no reason, where its contract's ABI tells.
        let infer_of = |f: &CallFrame, recent: &[u32], map: Option<&CodeMap>| {
            let code = code_for(f)?;
            if f.kind.is_create() {
                let enum_size = |name: &str| map.and_then(|m| m.enum_members(name));
                let inferred = self.artifact_for_creation(&f.input).and_then(|(a, len)| {
                    infer::constructor(f, a.abi(), f.input.get(len..)?, &enum_size)
                });
                if let Some((why, function)) = inferred {
                    let at = function.and_then(|name| {
                        let (contract, at) = map?.function_location(&name)?;
                        Some((map?.shown_contract(&contract), name, at))
                    });
                    return Some((why, at));
                }
            }
            // A constructor's own calls fail as a function's do (below): by the init code.
            let artifact = match f.kind.is_create() {
                true => None,
                false => self.artifact_for_code(&code),
            };
            let enum_size = |name: &str| map.and_then(|m| m.enum_members(name));
            let inferred = artifact.and_then(|a| {
                let library = infer::library_call(f, &code, a.abi()).map(|(why, function)| {
                    // A library's ABI lists none of the functions it runs by DELEGATECALL only.
                    let selector = f.input.get(..4).and_then(|s| s.try_into().ok());
                    let by_ast = || map?.function_named_by(selector?);
                    (why, function.or_else(by_ast))
                });
                library.or_else(|| infer::infer(f, a.abi(), &enum_size))
            });
            if let Some((why, function)) = inferred {
                // A function's declaration, or a public state variable's: its getter.
                let at = match function {
                    Some(name) => (|| {
                        let map = map?;
                        let selector = f.input.get(..4).and_then(|s| s.try_into().ok());
                        let (contract, at) = map
                            .function_location_for(&name, selector)
                            .or_else(|| map.public_variable_location(&name))?;
                        Some((map.shown_contract(&contract), name, at))
                    })(),
                    // No function takes the call (no match, no fallback or receive function):
                    // the contract's dispatcher failed, where the map places it (the contract's
                    // declaration); the stack shows the contract, no function.
                    None => (|| {
                        let map = map?;
                        let levels = sources::frame_levels(map, f.steps.as_deref()?, None);
                        let at = map.location(&levels, recent)?;
                        Some((map.contract.clone(), String::new(), at))
                    })(),
                };
                return Some((why, at));
            }
            if let (Some(a), Some(m)) = (artifact, map) {
                if let Some((why, getter)) = infer::array_getter(f, a.abi(), &|n| m.public_array(n))
                {
                    // The getter is code the compiler generated: the stack shows it at the
                    // variable's declaration.
                    let at = m
                        .public_variable_location(&getter)
                        .map(|(contract, at)| (m.shown_contract(&contract), getter, at));
                    return Some((why, at));
                }
            }
            if let Some(why) = infer::non_contract_call(f, &code, recent) {
                return Some((why, None));
            }
            // The caller's revert placed at the call's own statement: the decoding of its
            // result, which solc generates there.
            let map = map?;
            let levels = sources::frame_levels(map, f.steps.as_deref()?, None);
            let at = map.location(&levels, recent)?;
            let same = |call: u32| {
                map.location_of(call)
                    .is_some_and(|l| (&l.file, l.line, l.column) == (&at.file, at.line, at.column))
            };
            infer::undecodable_return(f, &code, recent, &same).map(|w| (w, None))
        };
        /// Why a frame reverted, and the function (contract, name) whose declaration it is at.
        type Inferred = Option<(String, Option<(String, String, Location)>)>;
        type InferOf<'a> = dyn Fn(&CallFrame, &[u32], Option<&CodeMap>) -> Inferred + 'a;
        struct Walk<'a> {
            map_of: &'a dyn Fn(&CallFrame) -> Option<Arc<CodeMap>>,
            infer_of: &'a InferOf<'a>,
        }
        /// The functions whose declarations inferred failures are at, by frame path.
        type AtFunction = HashMap<Vec<usize>, (String, String)>;
        fn walk(
            f: &CallFrame,
            path: &mut Vec<usize>,
            w: &Walk,
            notes: &mut SourceNotes,
            at_fn: &mut AtFunction,
        ) {
            if let (Some(_), Some(steps)) = (&f.error, f.steps.as_deref()) {
                let map = (w.map_of)(f);
                let recent: Vec<u32> = steps.recent().collect();
                let inferred = (w.infer_of)(f, &recent, map.as_deref());
                if let Some((why, at)) = inferred {
                    notes.inferred.insert(path.clone(), why);
                    if let Some((contract, function, at)) = at {
                        notes.frames.insert(path.clone(), at);
                        at_fn.insert(path.clone(), (contract, function));
                    }
                }
                if let (Some(map), false) = (&map, notes.frames.contains_key(path.as_slice())) {
                    let levels = sources::frame_levels(map, steps, None);
                    if let Some(at) = map.location(&levels, &recent) {
                        notes.frames.insert(path.clone(), at);
                    }
                }
            }
            for (i, c) in f.calls.iter().enumerate() {
                path.push(i);
                walk(c, path, w, notes, at_fn);
                path.pop();
            }
        }
        let w = Walk {
            map_of: &map_of,
            infer_of: &infer_of,
        };
        let mut at_fn = AtFunction::new();
        walk(root, &mut Vec::new(), &w, &mut notes, &mut at_fn);
        if root.error.is_some() {
            let origin = failure_path(root);
            let by_frame = sources::stack_by_frame(root, &origin, &map_of);
            // One frame, one line: a frame of the stack is placed in the tree where the stack
            // places it — the frame the failure began in at the failure, each frame above it at
            // the call that failed (not where its code passed the revert on: a bubbling
            // `revert(ptr, returndatasize())` in a library's assembly says less than the call).
            for (path, entries) in &by_frame {
                if let Some(first) = entries.first() {
                    if !at_fn.contains_key(path) {
                        notes.frames.insert(path.clone(), first.location.clone());
                    }
                }
            }
            // A failure the dispatcher decided (the function chosen is not payable) is at that
            // function's declaration: the innermost entry of the stack is that function — added
            // when the map gave the frame none (a public variable's getter is code the compiler
            // generated).
            let mut by_frame = by_frame;
            if let (Some((contract, function)), Some(at)) =
                (at_fn.get(&origin), notes.frames.get(&origin))
            {
                if by_frame.first().is_none_or(|(p, _)| *p != origin) {
                    by_frame.insert(0, (origin.clone(), Vec::new()));
                }
                let entries = &mut by_frame[0].1;
                if entries.is_empty() {
                    // The outermost entry of a frame below the top says how it was entered.
                    let reached_by = frame_at(root, &origin)
                        .filter(|_| !origin.is_empty())
                        .map(|f| f.kind);
                    entries.push(StackEntry {
                        contract: String::new(),
                        function: String::new(),
                        location: at.clone(),
                        reached_by,
                        args: Vec::new(),
                        undecided: Vec::new(),
                    });
                }
                let first = &mut entries[0];
                first.contract = contract.clone();
                first.function = function.clone();
                first.location = at.clone();
            }
            notes.stack = by_frame.into_iter().flat_map(|(_, e)| e).collect();
        }
        notes
    }
}

/// The frame at `path` (child indices from `root`).
fn frame_at<'a>(root: &'a CallFrame, path: &[usize]) -> Option<&'a CallFrame> {
    path.iter().try_fold(root, |f, &i| f.calls.get(i))
}
