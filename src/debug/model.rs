//! The step model: where each key of the debugger takes it, computed from the [`StepLog`] and
//! the source maps of the code each frame ran, without a terminal.
//!
//! A step's *line* is the user-written line its pc maps to in its frame (`None` for code the
//! compiler generated, and for frames without a map). Moving by line skips steps without one.
//! Internal functions are followed by the source map's jump markers: a JUMP marked `i` enters
//! one, `o` leaves it.

use std::sync::Arc;

use alloy_primitives::Address;
use revm::bytecode::opcode::OpCode;

use crate::names::sources::CodeMap;
use crate::trace::steps::StepLog;

/// Where a breakpoint stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Breakpoint {
    /// A line of a file (the path as the compiler named it, or its end: `Vault.sol`).
    Line { file: String, line: usize },
    /// Entering a function or modifier of this name (`transfer`, or `Token.transfer`).
    Function(String),
}

impl Breakpoint {
    /// `file.sol:12` is a line, anything else a function name.
    pub fn parse(text: &str) -> Result<Breakpoint, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty breakpoint: give FILE:LINE or a function name".into());
        }
        if let Some((file, line)) = text.rsplit_once(':') {
            let line: usize = line
                .parse()
                .map_err(|_| format!("{text}: the line after ':' is not a number"))?;
            return Ok(Breakpoint::Line {
                file: file.to_string(),
                line,
            });
        }
        Ok(Breakpoint::Function(text.to_string()))
    }
}

impl std::fmt::Display for Breakpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Breakpoint::Line { file, line } => write!(f, "{file}:{line}"),
            Breakpoint::Function(name) => write!(f, "{name}()"),
        }
    }
}

/// The source map of a frame's code (its bytes, and whether it is init code).
pub type MapOf<'a> = &'a dyn Fn(&[u8], bool) -> Option<Arc<CodeMap>>;

/// A line a step is at: its frame, the file (by pointer: one map's files are shared) and the
/// 1-based line.
type Line = (u32, usize, usize);

/// The steps of one transaction with the maps of the code its frames ran.
pub struct Model {
    pub log: StepLog,
    /// Per frame of `log`: the source map of its code, if an artifact matched it.
    maps: Vec<Option<Arc<CodeMap>>>,
    /// Per frame: the jump marker of each byte of its code.
    marks: Vec<Option<Arc<[u8]>>>,
    /// The step the failure is at (see [`Model::failure_step`]).
    failure: Option<usize>,
    children: Vec<Vec<u32>>,
    pub breakpoints: Vec<Breakpoint>,
}

impl Model {
    /// `map_of(code, creation)` gives the source map of a frame's code.
    pub fn new(log: StepLog, map_of: MapOf<'_>) -> Model {
        let mut by_code: Vec<(usize, bool, Option<Arc<CodeMap>>)> = Vec::new();
        let mut maps = Vec::with_capacity(log.frames.len());
        let mut marks = Vec::with_capacity(log.frames.len());
        let mut children = vec![Vec::new(); log.frames.len()];
        for (i, f) in log.frames.iter().enumerate() {
            if let Some(p) = f.parent {
                children[p as usize].push(i as u32);
            }
            let creation = f.kind.is_create();
            let key = (f.code.as_ptr() as usize, creation);
            let map = match by_code.iter().find(|(p, c, _)| (*p, *c) == key) {
                Some((_, _, m)) => m.clone(),
                None if f.code.is_empty() => None,
                None => {
                    let m = map_of(&f.code, creation);
                    by_code.push((key.0, key.1, m.clone()));
                    m
                }
            };
            marks.push(map.as_ref().map(|m| m.jump_marks(&f.code)));
            maps.push(map);
        }
        let mut m = Model {
            log,
            maps,
            marks,
            failure: None,
            children,
            breakpoints: Vec::new(),
        };
        m.failure = m.find_failure();
        m
    }

    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    fn last(&self) -> usize {
        self.len().saturating_sub(1)
    }

    /// The source map of frame `f`'s code.
    pub fn map(&self, f: u32) -> Option<&Arc<CodeMap>> {
        self.maps.get(f as usize)?.as_ref()
    }

    fn depth(&self, i: usize) -> u16 {
        self.log.frames[self.log.frame(i) as usize].depth
    }

    /// The line step `i` is at.
    fn line(&self, i: usize) -> Option<Line> {
        let f = self.log.frame(i);
        let (file, line) = self.map(f)?.user_line(self.log.pc(i))?;
        Some((f, Arc::as_ptr(file) as usize, line))
    }

    /// The file path and line step `i` is at.
    pub fn source_line(&self, i: usize) -> Option<(String, usize)> {
        let (file, line) = self.map(self.log.frame(i))?.user_line(self.log.pc(i))?;
        Some((file.path.clone(), line))
    }

    /// The jump marker of step `i` (`b'i'`, `b'o'`, else 0).
    fn mark(&self, i: usize) -> u8 {
        let f = self.log.frame(i) as usize;
        self.marks[f]
            .as_ref()
            .and_then(|m| m.get(self.log.pc(i) as usize).copied())
            .unwrap_or(0)
    }

    /// One opcode forward.
    pub fn next_op(&self, i: usize) -> usize {
        (i + 1).min(self.last())
    }

    /// One opcode back.
    pub fn prev_op(&self, i: usize) -> usize {
        i.saturating_sub(1)
    }

    /// The next step at another line, into calls and internal functions; in a frame without a
    /// map, the next opcode. Entering or leaving a frame without a map stops there. Lines are
    /// placed ([`Placer`]): code the optimizer shares keeps the line before it.
    pub fn next_line(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        if self.map(f0).is_none() {
            return self.next_op(i);
        }
        let mut p = Placer::new(self, i);
        let cur = p.at(i);
        for j in i + 1..self.len() {
            if self.map(self.log.frame(j)).is_none() {
                return j;
            }
            if let Some(l) = p.at(j) {
                if Some(l) != cur {
                    return j;
                }
            }
        }
        self.last()
    }

    /// The first step of the line before the current one (by execution, into calls), or of the
    /// current line when the step is past its first step (after opcode steps, in code the
    /// compiler generated after it, or at the transaction's last step, where
    /// [`next_line`](Self::next_line) ends), so that lines walked back stop where lines walked
    /// forwards did. Lines are placed as `next_line` places
    /// them.
    pub fn prev_line(&self, i: usize) -> usize {
        if self.map(self.log.frame(i)).is_none() {
            return self.prev_op(i);
        }
        self.prev_line_within(i, 4096)
    }

    /// [`prev_line`](Self::prev_line) by passes over a window before `i`, `width` steps first,
    /// widened until the run before the one `i` is in begins inside it (a run cut by the
    /// window's start may have begun earlier).
    pub(super) fn prev_line_within(&self, i: usize, mut width: usize) -> usize {
        loop {
            let from = i.saturating_sub(width);
            let mut p = Placer::new(self, from);
            // The first run seen, the run before the one `i` is in, and that one.
            let mut first = None;
            let (mut before, mut run): (Option<usize>, Option<(Line, usize)>) = (None, None);
            for j in from..=i {
                if let Some(l) = p.at(j) {
                    if run.map(|(r, _)| r) != Some(l) {
                        before = run.map(|(_, start)| start);
                        run = Some((l, j));
                        first.get_or_insert(j);
                    }
                }
            }
            // Past the first step of the last line run (inside it, or in code the compiler
            // generated after it): that step, once the window holds the run whole.
            if let Some((_, start)) = run.filter(|&(_, start)| start < i) {
                if first != Some(start) || from == 0 {
                    return start;
                }
                width = width.saturating_mul(8);
                continue;
            }
            match before {
                Some(b) if first != Some(b) => return b,
                _ if from == 0 => return before.unwrap_or(0),
                _ => width = width.saturating_mul(8),
            }
        }
    }

    /// The next line in this frame and function: calls and internal functions run through.
    /// Without a map, the next opcode of this frame (calls run through).
    pub fn step_over(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        let d0 = self.depth(i);
        let has_map = self.map(f0).is_some();
        let mut p = Placer::new(self, i);
        let cur = p.at(i);
        let mut inner: i64 = 0;
        for j in i + 1..self.len() {
            if self.log.frame(j - 1) == f0 {
                match self.mark(j - 1) {
                    b'i' => inner += 1,
                    b'o' => inner -= 1,
                    _ => {}
                }
            }
            let line = p.at(j);
            let f = self.log.frame(j);
            if self.depth(j) < d0 {
                return j;
            }
            if f != f0 {
                continue;
            }
            if !has_map || inner < 0 {
                return j;
            }
            if inner > 0 {
                continue;
            }
            if let Some(l) = line {
                if Some(l) != cur {
                    return j;
                }
            }
        }
        self.last()
    }

    /// The entered pcs of the internal functions open in frame `f` before step `upto`.
    fn open_functions(&self, f: u32, upto: usize) -> Vec<u32> {
        let start = self.log.frames[f as usize].first_step as usize;
        let mut open = Vec::new();
        for j in start..upto.min(self.len()) {
            if self.log.frame(j) == f {
                self.follow(&mut open, j);
            }
        }
        open
    }

    /// Step `j`'s JUMP applied to `open` (its frame's open functions): one more entered (its
    /// destination, the next step's pc) or one fewer.
    fn follow(&self, open: &mut Vec<u32>, j: usize) {
        match self.mark(j) {
            b'i' => open.push(self.log.pc(j + 1)),
            b'o' => {
                open.pop();
            }
            _ => {}
        }
    }

    /// How many internal functions are open at step `i` in its frame.
    pub fn internal_depth(&self, i: usize) -> usize {
        self.open_functions(self.log.frame(i), i).len()
    }

    /// Out of the internal function running (to the step after its return), else out of the
    /// frame (to the caller's step after the call); at the top frame, to the last step.
    pub fn step_out(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        if self.map(f0).is_some() && self.internal_depth(i) > 0 {
            let mut inner: i64 = 0;
            for j in i..self.len() {
                if self.log.frame(j) != f0 {
                    if self.depth(j) < self.log.frames[f0 as usize].depth {
                        return j;
                    }
                    continue;
                }
                match self.mark(j) {
                    b'i' => inner += 1,
                    b'o' => inner -= 1,
                    _ => {}
                }
                if inner < 0 {
                    return (j + 1).min(self.last());
                }
            }
            return self.last();
        }
        let end = self.log.frames[f0 as usize].end_step as usize;
        end.min(self.last())
    }

    /// The first step of the frame running step `i`.
    pub fn frame_start(&self, i: usize) -> usize {
        let f = &self.log.frames[self.log.frame(i) as usize];
        (f.first_step as usize).min(self.last())
    }

    /// The last step of the frame running step `i`.
    pub fn frame_end(&self, i: usize) -> usize {
        let f = &self.log.frames[self.log.frame(i) as usize];
        (f.end_step as usize).saturating_sub(1).min(self.last())
    }

    /// The step the failure is at: where a failed transaction's failure started (the frame
    /// `tx` names: the last failed subcall followed down while its parent only passed the
    /// failure on), at that frame's last step; in a transaction that succeeded, the first frame
    /// that failed. `None` when nothing failed.
    pub fn failure_step(&self) -> Option<usize> {
        self.failure
    }

    fn find_failure(&self) -> Option<usize> {
        let frames = &self.log.frames;
        let top = frames.first()?;
        let origin = if !top.success() {
            let mut f = 0usize;
            loop {
                let frame = &frames[f];
                let child = self.children[f]
                    .iter()
                    .rev()
                    .find(|&&c| !frames[c as usize].success());
                match child {
                    Some(&c)
                        if frame.reverted()
                            && (frame.output.is_empty()
                                || frame.output == frames[c as usize].output) =>
                    {
                        f = c as usize
                    }
                    _ => break f,
                }
            }
        } else {
            (0..frames.len())
                .filter(|&f| !frames[f].success())
                .min_by_key(|&f| frames[f].end_step)?
        };
        let f = &frames[origin];
        if f.ran() {
            Some((f.end_step as usize).saturating_sub(1).min(self.last()))
        } else {
            f.call_step.map(|s| s as usize)
        }
    }

    /// Whether step `j` stops at a function breakpoint: the JUMP before it goes into a function
    /// (marked `i`), and the function there is the one named. (The map's spans alone would
    /// stop in code the optimizer shares between functions.)
    fn enters_breakpoint_function(&self, j: usize) -> bool {
        let f = self.log.frame(j);
        if j == 0 || self.log.frame(j - 1) != f || self.mark(j - 1) != b'i' {
            return false;
        }
        let Some(map) = self.map(f) else { return false };
        let Some((_, func)) = map.entered_function(self.log.pc(j)) else {
            return false;
        };
        self.breakpoints.iter().any(|b| match b {
            Breakpoint::Function(name) => {
                let (contract, fname) = match name.rsplit_once('.') {
                    Some((c, n)) => (Some(c), n),
                    None => (None, name.as_str()),
                };
                // By the contract that declares it or the one running it (the name `tx`
                // and the tree print: `Token.transferFrom` for ERC20's).
                func.name == fname
                    && contract.is_none_or(|c| {
                        c == func.contract || c == map.shown_contract(&func.contract)
                    })
            }
            Breakpoint::Line { .. } => false,
        })
    }

    /// Whether placed line `l` (at step `j`) is a line breakpoint's.
    fn on_breakpoint_line(&self, j: usize) -> bool {
        let f = self.log.frame(j);
        let Some((file, line)) = self.map(f).and_then(|m| m.user_line(self.log.pc(j))) else {
            return false;
        };
        self.breakpoints.iter().any(|b| {
            matches!(b, Breakpoint::Line { file: bf, line: bl } if *bl == line && path_matches(&file.path, bf))
        })
    }

    /// The steps where a breakpoint stops, in order, by one pass from the start: a line
    /// breakpoint where its (placed) line is entered — the last placed line before it in its
    /// frame was another — and a function breakpoint at the JUMP into the function.
    fn breakpoint_hits(&self, mut visit: impl FnMut(usize) -> bool) {
        if self.breakpoints.is_empty() {
            return;
        }
        let mut p = Placer::new(self, 0);
        let mut last: rustc_hash::FxHashMap<u32, Line> = Default::default();
        for j in 0..self.len() {
            let placed = p.at(j);
            let f = self.log.frame(j);
            let mut hit = self.enters_breakpoint_function(j);
            if let Some(l) = placed {
                if last.insert(f, l) != Some(l) && self.on_breakpoint_line(j) {
                    hit = true;
                }
            }
            if hit && !visit(j) {
                return;
            }
        }
    }

    /// Whether any step of the transaction stops at breakpoint `b` alone.
    pub fn reaches(&mut self, b: &Breakpoint) -> bool {
        let others = std::mem::replace(&mut self.breakpoints, vec![b.clone()]);
        let mut hit = false;
        self.breakpoint_hits(|_| {
            hit = true;
            false
        });
        self.breakpoints = others;
        hit
    }

    /// The next step (after `i`) at a breakpoint, or the previous one.
    pub fn breakpoint(&self, i: usize, forward: bool) -> Option<usize> {
        let mut found = None;
        self.breakpoint_hits(|j| {
            if forward {
                if j > i {
                    found = Some(j);
                    return false;
                }
                true
            } else {
                if j < i {
                    found = Some(j);
                }
                j < i
            }
        });
        found
    }

    /// The next (or previous) step matching `query`: an opcode name (`SSTORE`), or an address
    /// — a frame running on it or its code, at its first step (at the call for a frame that
    /// ran no code).
    pub fn search(&self, i: usize, query: &str, forward: bool) -> Result<Option<usize>, String> {
        let q = query.trim();
        if let Ok(a) = q.parse::<Address>() {
            let mut hits: Vec<usize> = self
                .log
                .frames
                .iter()
                .filter(|f| f.address == a || f.code_address == a)
                .filter_map(|f| {
                    if f.ran() {
                        Some(f.first_step as usize)
                    } else {
                        f.call_step.map(|s| s as usize)
                    }
                })
                .collect();
            hits.sort_unstable();
            return Ok(if forward {
                hits.into_iter().find(|&s| s > i)
            } else {
                hits.into_iter().rev().find(|&s| s < i)
            });
        }
        let name = q.to_ascii_uppercase();
        let op = (0..=u8::MAX)
            .find(|&b| OpCode::new(b).is_some_and(|o| o.as_str() == name))
            .ok_or_else(|| format!("{q:?} is neither an opcode name nor an address"))?;
        Ok(if forward {
            (i + 1..self.len()).find(|&j| self.log.op(j) == op)
        } else {
            (0..i).rev().find(|&j| self.log.op(j) == op)
        })
    }
}

/// Lines as the source pane places them, step by step forward: a step's line counts only where
/// its span can have run as part of the internal function open in its frame
/// ([`CodeMap::ran_in`]): code the optimizer shares between functions (a revert tail) carries
/// the map's entry of another function's statement, and keeps the line before it instead.
struct Placer<'m> {
    m: &'m Model,
    /// Per frame, the entered pcs of its open internal functions (from the frame's start when
    /// the frame is first met).
    open: rustc_hash::FxHashMap<u32, Vec<u32>>,
    next: usize,
}

impl<'m> Placer<'m> {
    /// A placer whose first step will be `from`.
    fn new(m: &'m Model, from: usize) -> Placer<'m> {
        Placer {
            m,
            open: Default::default(),
            next: from,
        }
    }

    /// The placed line of step `j`; steps are given in order, each once, from `from`.
    fn at(&mut self, j: usize) -> Option<Line> {
        debug_assert_eq!(j, self.next);
        self.next = j + 1;
        let m = self.m;
        let f = m.log.frame(j);
        let open = self.open.entry(f).or_insert_with(|| m.open_functions(f, j));
        let line = m.line(j).filter(|_| {
            let (Some(map), Some(&dest)) = (m.map(f), open.last()) else {
                return true;
            };
            map.entered_function(dest)
                .is_none_or(|scope| map.ran_in(m.log.pc(j), scope))
        });
        m.follow(open, j);
        line
    }
}

/// Whether the compiler's `path` is the file a user named: the same, or ending with it at a
/// directory boundary.
fn path_matches(path: &str, given: &str) -> bool {
    path == given
        || path
            .strip_suffix(given)
            .is_some_and(|head| head.ends_with('/'))
}
