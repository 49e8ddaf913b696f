//! Gas by source: a gas report's calling-context profile (`trace::gas_context`) put on the
//! source maps of the contracts that ran — by line and by Solidity function, internal ones
//! included, self and inclusive — and the stacks of the flamegraph by function.
//!
//! Rules, the same as the stack trace's (`sources.rs`):
//! - a pc whose span is in a file the user wrote counts for that span's first line;
//! - code the compiler generated (no file, or a generated Yul source) reached from a user's
//!   statement (checked arithmetic, ABI encoding helpers) counts for that statement's line;
//!   generated code no statement called (the dispatcher) is the contract's
//!   `(compiler-generated)` row;
//! - a function's level is entered and left by the JUMPs the map marks `i`/`o`; generated
//!   helpers are not levels of their own (their gas is their caller's);
//! - the code an external frame runs before entering any function (dispatch, argument
//!   decoding) belongs to the function its selector names, or to `(dispatch)`;
//! - inclusive gas counts each unit once, however often its function or line recurs on the
//!   stack.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use alloy_primitives::Address;
use indexmap::IndexSet;

use super::sources::{CodeMap, FnSpan, SourceFile};
use crate::render::decoder::Decoder;
use crate::render::gas::frame_label;
use crate::render::gas_source::{FunctionGas, LineGas, SourceGas};
use crate::trace::gas::{GasFrame, GasReport, Residual};
use crate::trace::gas_context::{NodeKind, RESIDUAL_PC};

/// Where gas was spent, for the by-line table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Place {
    Line(Arc<str>, usize),
    Generated(String),
    Unmapped(Address),
    Residual(&'static str),
}

/// A function row's identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FnKey {
    /// The deployed contract (its artifact's name) that ran it.
    deployed: String,
    contract: String,
    function: String,
    at: Option<(String, usize)>,
}

/// The number of `k` in `set`, the values numbered in the order first seen.
fn id<K: Hash + Eq>(set: &mut IndexSet<K>, k: K) -> u32 {
    set.insert_full(k).0 as u32
}

/// Self and inclusive gas of one row, and its count (opcodes or calls).
#[derive(Clone, Copy, Default)]
struct Sums {
    count: u64,
    self_gas: u64,
    inclusive: u64,
}

/// The set `parent` plus `item`, sorted.
fn with(parent: &[u32], item: Option<u32>) -> Vec<u32> {
    let mut v = parent.to_vec();
    if let Some(i) = item {
        if let Err(at) = v.binary_search(&i) {
            v.insert(at, i);
        }
    }
    v
}

/// The source map of a code (a CREATE's init code when the flag is set).
pub type MapOf<'a> = &'a dyn Fn(&[u8], bool) -> Option<Arc<CodeMap>>;

/// Gas by line, function and stack for `report`, whose profiler kept calling contexts; `None`
/// when it did not. `map_of` gives the source map of a code (init code when `creation`).
pub fn source_gas(report: &GasReport, map_of: MapOf<'_>, d: &Decoder) -> Option<SourceGas> {
    let ctx = report.context.as_ref()?;
    let maps: Vec<Option<Arc<CodeMap>>> = ctx
        .codes
        .iter()
        .map(|(code, creation)| map_of(code, *creation))
        .collect();
    let n = ctx.nodes.len();
    let mut places: IndexSet<Place> = IndexSet::new();
    let mut fns: IndexSet<FnKey> = IndexSet::new();
    let mut texts: HashMap<u32, String> = HashMap::new();
    let mut frame_of = vec![0usize; n];
    let mut code_of: Vec<Option<u32>> = vec![None; n];
    let mut fn_of = vec![0u32; n];
    // Where generated code in a node is attributed: the user's statement that called it.
    let mut user_site: Vec<Option<u32>> = vec![None; n];
    let mut place_sets: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut fn_sets: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut paths: Vec<String> = Vec::with_capacity(n);
    let mut fn_sums: HashMap<u32, Sums> = HashMap::new();
    // The user's function each node runs (the one entered, or the one a frame's selector
    // names; a generated helper runs its caller's): a line of another function is shared code.
    let mut scope: Vec<Option<Scope>> = vec![None; n];
    let (mut with_code, mut unmapped) = (0, 0);

    let place_of = |node: usize,
                    pc: u32,
                    frame_of: &[usize],
                    code_of: &[Option<u32>],
                    user_site: &[Option<u32>],
                    scope: &[Option<Scope>],
                    places: &mut IndexSet<Place>,
                    texts: &mut HashMap<u32, String>|
     -> u32 {
        let frame = &report.frames[frame_of[node]];
        if pc == RESIDUAL_PC {
            return id(places, Place::Residual(residual_label(frame)));
        }
        let Some(map) = code_of[node].and_then(|c| maps[c as usize].as_ref()) else {
            return id(places, Place::Unmapped(frame.code_address));
        };
        // Code the optimizer shares between functions carries one of their locations: where
        // it is not the running function's, that line did not run. Its gas is the function's
        // own (its declaration line), or the dispatch's before any function was entered.
        if let Some((sfile, f)) = &scope[node] {
            if !map.ran_in(pc, (sfile, f)) {
                return match (ctx.nodes[node].kind, sfile.line_of(f.start)) {
                    (NodeKind::Function { .. }, Some(line)) => {
                        let n = id(places, Place::Line(sfile.path.as_str().into(), line));
                        texts.entry(n).or_insert_with(|| line_text(sfile, line));
                        n
                    }
                    _ => id(places, Place::Generated(map.contract.clone())),
                };
            }
        }
        if let Some((file, line)) = map.user_line(pc) {
            let n = id(places, Place::Line(file.path.as_str().into(), line));
            texts.entry(n).or_insert_with(|| line_text(file, line));
            return n;
        }
        user_site[node].unwrap_or_else(|| id(places, Place::Generated(map.contract.clone())))
    };

    for (i, node) in ctx.nodes.iter().enumerate() {
        let parent = node.parent.map(|p| p as usize);
        let (frame, code) = match node.kind {
            NodeKind::Frame { frame, code, .. } => (frame as usize, code),
            NodeKind::Function { code, .. } => (parent.map_or(0, |p| frame_of[p]), Some(code)),
        };
        frame_of[i] = frame;
        code_of[i] = code;
        let f = &report.frames[frame];
        let map = code.and_then(|c| maps[c as usize].as_ref());
        // The place of the call that entered this node, in its caller's code.
        let site = match (node.kind, parent) {
            (NodeKind::Frame { site: Some(s), .. }, Some(p))
            | (NodeKind::Function { site: s, .. }, Some(p)) => Some(place_of(
                p,
                s,
                &frame_of,
                &code_of,
                &user_site,
                &scope,
                &mut places,
                &mut texts,
            )),
            _ => None,
        };
        let (id, label, generated) = match node.kind {
            NodeKind::Frame { .. } => {
                if code.is_some() {
                    with_code += 1;
                    if map.is_none() {
                        unmapped += 1;
                    }
                }
                let (key, declared) = frame_key(f, map.map(|m| &**m), d);
                scope[i] = declared;
                (id(&mut fns, key), Some(frame_label(f, d)), false)
            }
            NodeKind::Function { entered, .. } => {
                match map.and_then(|m| m.entered_function(entered)) {
                    Some((file, func)) => {
                        scope[i] = Some((file.clone(), func.clone()));
                        let m = map.expect("a function entered is in a map");
                        let key = FnKey {
                            deployed: m.contract.clone(),
                            contract: func.contract.clone(),
                            function: m.shown_name(func),
                            at: file.line_of(func.start).map(|l| (file.path.clone(), l)),
                        };
                        let label = format!("{}.{}", func.contract, key.function);
                        (id(&mut fns, key), Some(label), false)
                    }
                    // A generated helper: its gas is its caller's.
                    None => {
                        scope[i] = parent.and_then(|p| scope[p].clone());
                        (parent.map_or(0, |p| fn_of[p]), None, true)
                    }
                }
            }
        };
        fn_of[i] = id;
        user_site[i] = match node.kind {
            NodeKind::Function { .. } if generated => site
                .filter(|s| matches!(places[*s as usize], Place::Line(..)))
                .or_else(|| parent.and_then(|p| user_site[p])),
            _ => None,
        };
        // Entering the function the frame's selector named, or a generated helper, is not a
        // call of its own.
        let same_as_frame = matches!(node.kind, NodeKind::Function { .. })
            && parent.is_some_and(|p| {
                fn_of[p] == id && matches!(ctx.nodes[p].kind, NodeKind::Frame { .. })
            });
        if !generated && !same_as_frame {
            fn_sums.entry(id).or_default().count += node.entries;
        }
        let (parent_places, parent_fns, parent_path) = match parent {
            Some(p) => (&place_sets[p][..], &fn_sets[p][..], paths[p].as_str()),
            None => (&[][..], &[][..], ""),
        };
        place_sets.push(with(parent_places, site));
        fn_sets.push(with(parent_fns, Some(id)));
        let path = match label {
            Some(l) if parent_path.is_empty() => l.replace(';', ","),
            Some(l) => format!("{parent_path};{}", l.replace(';', ",")),
            None => parent_path.to_string(),
        };
        paths.push(path);
    }

    let mut place_sums: HashMap<u32, Sums> = HashMap::new();
    let mut stacks: Vec<(String, u64)> = Vec::new();
    let mut stack_ix: HashMap<(u32, bool), usize> = HashMap::new();
    for s in &ctx.samples {
        let node = s.node as usize;
        let place = place_of(
            node,
            s.pc,
            &frame_of,
            &code_of,
            &user_site,
            &scope,
            &mut places,
            &mut texts,
        );
        let e = place_sums.entry(place).or_default();
        e.count += s.count;
        e.self_gas += s.gas;
        for p in with(&place_sets[node], Some(place)) {
            place_sums.entry(p).or_default().inclusive += s.gas;
        }
        fn_sums.entry(fn_of[node]).or_default().self_gas += s.gas;
        for f in &fn_sets[node] {
            fn_sums.entry(*f).or_default().inclusive += s.gas;
        }
        let residual = s.pc == RESIDUAL_PC;
        let k = *stack_ix.entry((s.node, residual)).or_insert_with(|| {
            let path = if residual {
                format!(
                    "{};{}",
                    paths[node],
                    residual_label(&report.frames[frame_of[node]])
                )
            } else {
                paths[node].clone()
            };
            stacks.push((path, 0));
            stacks.len() - 1
        });
        stacks[k].1 += s.gas;
    }

    let mut lines: Vec<LineGas> = place_sums
        .iter()
        .filter(|(_, s)| s.self_gas > 0 || s.count > 0 || s.inclusive > 0)
        .map(|(id, s)| {
            let (location, file, line) = match &places[*id as usize] {
                Place::Line(file, line) => (
                    format!("{file}:{line}"),
                    Some(file.to_string()),
                    Some(*line),
                ),
                Place::Generated(c) => (format!("{c} (compiler-generated)"), None, None),
                Place::Unmapped(a) => (
                    format!("{} (no source map)", d.with_label(a, format!("{a:?}"))),
                    None,
                    None,
                ),
                Place::Residual(r) => (r.to_string(), None, None),
            };
            LineGas {
                location,
                file,
                line,
                source: texts.get(id).cloned(),
                count: s.count,
                self_gas: s.self_gas,
                inclusive_gas: s.inclusive,
            }
        })
        .collect();
    lines.sort_by(|a, b| {
        b.self_gas
            .cmp(&a.self_gas)
            .then_with(|| b.inclusive_gas.cmp(&a.inclusive_gas))
            .then_with(|| a.location.cmp(&b.location))
    });
    let mut functions: Vec<FunctionGas> = fn_sums
        .iter()
        .map(|(id, s)| {
            let k = &fns[*id as usize];
            FunctionGas {
                deployed: (k.deployed != k.contract && !k.deployed.is_empty())
                    .then(|| k.deployed.clone()),
                contract: k.contract.clone(),
                function: k.function.clone(),
                file: k.at.as_ref().map(|a| a.0.clone()),
                line: k.at.as_ref().map(|a| a.1),
                calls: s.count,
                self_gas: s.self_gas,
                inclusive_gas: s.inclusive,
            }
        })
        .collect();
    functions.sort_by(|a, b| {
        b.inclusive_gas
            .cmp(&a.inclusive_gas)
            .then_with(|| b.self_gas.cmp(&a.self_gas))
            .then_with(|| a.name().cmp(&b.name()))
    });
    stacks.retain(|(_, g)| *g > 0);
    Some(SourceGas {
        lines,
        functions,
        stacks,
        frames_with_code: with_code,
        frames_unmapped: unmapped,
    })
}

fn line_text(file: &SourceFile, line: usize) -> String {
    file.line_text(line).unwrap_or_default().trim().to_string()
}

fn residual_label(f: &GasFrame) -> &'static str {
    match f.residual {
        Some((Residual::CodeDeposit, _)) => Residual::CodeDeposit.label(),
        _ => Residual::Precompile.label(),
    }
}

/// The user's function a node's code runs, and its file.
type Scope = (Arc<SourceFile>, FnSpan);

/// The function an external frame runs before entering any: the one its selector names (a
/// constructor for CREATE), declared where the map's compilation says; and that declaration,
/// the frame's scope, for a call (a deployment runs its bases' constructors and modifiers too).
fn frame_key(f: &GasFrame, map: Option<&CodeMap>, d: &Decoder) -> (FnKey, Option<Scope>) {
    let name = if f.kind.is_create() {
        Some("constructor".to_string())
    } else if f.input.is_empty() {
        None
    } else {
        d.function_name_at(Some(f.code_address), &f.input)
    };
    let Some(map) = map else {
        let contract = d
            .label(&f.code_address)
            .map_or_else(|| format!("{:?}", f.code_address), str::to_string);
        let function = match (&name, f.input.len()) {
            (Some(n), _) => n.clone(),
            (None, 0) => "()".to_string(),
            (None, _) => format!(
                "0x{}",
                alloy_primitives::hex::encode(&f.input[..f.input.len().min(4)])
            ),
        };
        let key = FnKey {
            deployed: contract.clone(),
            contract,
            function,
            at: None,
        };
        return (key, None);
    };
    let selector = f.input.get(..4).and_then(|s| s.try_into().ok());
    let declared = name
        .as_deref()
        .and_then(|n| map.find_function_for(n, selector.filter(|_| !f.kind.is_create())));
    match declared {
        Some((file, func)) => (
            FnKey {
                deployed: map.contract.clone(),
                contract: func.contract.clone(),
                function: map.shown_name(func),
                at: file.line_of(func.start).map(|l| (file.path.clone(), l)),
            },
            (!f.kind.is_create()).then(|| (file.clone(), func.clone())),
        ),
        None => (
            FnKey {
                deployed: map.contract.clone(),
                contract: map.contract.clone(),
                function: name.unwrap_or_else(|| "(dispatch)".to_string()),
                at: None,
            },
            None,
        ),
    }
}
