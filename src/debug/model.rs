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
    /// map, the next opcode. Entering or leaving a frame without a map stops there.
    pub fn next_line(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        if self.map(f0).is_none() {
            return self.next_op(i);
        }
        let cur = self.line(i);
        for j in i + 1..self.len() {
            let f = self.log.frame(j);
            if self.map(f).is_none() {
                return j;
            }
            if let Some(l) = self.line(j) {
                if Some(l) != cur {
                    return j;
                }
            }
        }
        self.last()
    }

    /// The first step of the line before the current one (by execution, into calls).
    pub fn prev_line(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        if self.map(f0).is_none() {
            return self.prev_op(i);
        }
        let cur = self.line(i);
        let mut j = i;
        let found = loop {
            if j == 0 {
                return 0;
            }
            j -= 1;
            if self.map(self.log.frame(j)).is_none() {
                return j;
            }
            match self.line(j) {
                Some(l) if Some(l) != cur => break l,
                _ => {}
            }
        };
        // Back to where that line began (through generated code inside it).
        while j > 0 {
            let p = j - 1;
            if self.log.frame(p) != found.0 {
                break;
            }
            match self.line(p) {
                Some(l) if l == found => j = p,
                None => {
                    let mut k = p;
                    while k > 0 && self.line(k).is_none() && self.log.frame(k) == found.0 {
                        k -= 1;
                    }
                    if self.line(k) == Some(found) {
                        j = k;
                    } else {
                        break;
                    }
                }
                _ => break,
            }
        }
        j
    }

    /// The next line in this frame and function: calls and internal functions run through.
    /// Without a map, the next opcode of this frame (calls run through).
    pub fn step_over(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        let d0 = self.depth(i);
        let has_map = self.map(f0).is_some();
        let cur = self.line(i);
        let mut inner: i64 = 0;
        for j in i + 1..self.len() {
            if self.log.frame(j - 1) == f0 {
                match self.mark(j - 1) {
                    b'i' => inner += 1,
                    b'o' => inner -= 1,
                    _ => {}
                }
            }
            let f = self.log.frame(j);
            if self.depth(j) < d0 {
                return j;
            }
            if f != f0 {
                continue;
            }
            if !has_map {
                return j;
            }
            if inner < 0 {
                return j;
            }
            if inner > 0 {
                continue;
            }
            if let Some(l) = self.line(j) {
                if Some(l) != cur {
                    return j;
                }
            }
        }
        self.last()
    }

    /// How many internal functions are open at step `i` in its frame.
    pub fn internal_depth(&self, i: usize) -> usize {
        let f0 = self.log.frame(i);
        let start = self.log.frames[f0 as usize].first_step as usize;
        let mut d: usize = 0;
        for j in start..i {
            if self.log.frame(j) == f0 {
                match self.mark(j) {
                    b'i' => d += 1,
                    b'o' => d = d.saturating_sub(1),
                    _ => {}
                }
            }
        }
        d
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

    /// Whether step `j` stops at a breakpoint (it enters the line or function).
    pub fn at_breakpoint(&self, j: usize) -> bool {
        if self.breakpoints.is_empty() {
            return false;
        }
        let f = self.log.frame(j);
        let Some(map) = self.map(f) else { return false };
        let pc = self.log.pc(j);
        // Entered: the last step before it in this frame that has a line (generated code
        // between two parts of one statement does not count) was elsewhere.
        let same_as_before = |now: Option<usize>, before: &dyn Fn(usize) -> Option<usize>| {
            if now.is_none() {
                return false;
            }
            let mut k = j;
            while k > 0 && self.log.frame(k - 1) == f {
                k -= 1;
                if let Some(b) = before(k) {
                    return Some(b) == now;
                }
            }
            false
        };
        self.breakpoints.iter().any(|b| match b {
            Breakpoint::Line { file, line } => {
                let Some((sf, l)) = map.user_line(pc) else {
                    return false;
                };
                if l != *line || !path_matches(&sf.path, file) {
                    return false;
                }
                let line_of = |k: usize| self.line(k).map(|(_, p, l)| p ^ l);
                !same_as_before(line_of(j), &line_of)
            }
            Breakpoint::Function(name) => {
                // Entered: the JUMP before it goes into a function (marked `i`), and the
                // function there is the one named. (The map's spans alone would stop in code
                // the optimizer shares between functions.)
                if j == 0 || self.log.frame(j - 1) != f || self.mark(j - 1) != b'i' {
                    return false;
                }
                let Some((_, func)) = map.entered_function(pc) else {
                    return false;
                };
                let (contract, fname) = match name.rsplit_once('.') {
                    Some((c, n)) => (Some(c), n),
                    None => (None, name.as_str()),
                };
                func.name == fname && contract.is_none_or(|c| c == func.contract)
            }
        })
    }

    /// The next step (after `i`) at a breakpoint, or the previous one.
    pub fn breakpoint(&self, i: usize, forward: bool) -> Option<usize> {
        if forward {
            (i + 1..self.len()).find(|&j| self.at_breakpoint(j))
        } else {
            (0..i).rev().find(|&j| self.at_breakpoint(j))
        }
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

/// Whether the compiler's `path` is the file a user named: the same, or ending with it at a
/// directory boundary.
fn path_matches(path: &str, given: &str) -> bool {
    path == given
        || path
            .strip_suffix(given)
            .is_some_and(|head| head.ends_with('/'))
}
