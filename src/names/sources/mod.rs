//! Where in the source: solc source maps of matched artifacts turned into a location per failed
//! frame and the Solidity stack trace of a failed transaction.
//!
//! A source map (`s:l:f:j:m;…`, one entry per instruction, empty fields repeating the previous
//! entry's) is decoded once per code hash, with the code's pc → instruction index (push data
//! skipped). The call tracer records, for failed frames only, the last pc and every JUMP's pc
//! ([`FrameSteps`]); replaying the JUMPs marked `i` (into a function) and `o` (out of one)
//! rebuilds the internal call stack at the failure, and at each external call on the way down.
//! Code the compiler generated (file index -1, or a generated Yul source) is attributed to the
//! nearest call site in a file the user wrote: a checked `a + b` to the expression, an ABI
//! decoding revert to the function's signature. Function names come from the AST when the
//! artifact has one, else from a small scan of the source text.

mod args;
mod ast;
mod at_step;
mod ctor;
mod files;
mod inlined;
mod map;
pub mod rebuild;
mod spans;

pub use ast::{AstDecls, RawAst};
pub(crate) use files::StoredMetadata;
pub use files::{
    disk_candidates, roots_for, unit_from_paths, unit_from_standard_json, ArtifactSources,
    Creation, GivenAst, Metadata, SourceFile, SourceHashes, TextOrigin, Unit,
};
pub(crate) use files::{same_code, starts_with_code};
pub use map::{decode_source_map, instruction_index, instructions, misfit, Misfit, SrcEntry};
pub use spans::{scan_functions, FnSpan};

use std::sync::Arc;

use crate::render::source::{Arg, Location, StackEntry};
use crate::trace::call::{CallFrame, FrameSteps};
use alloy_primitives::U256;
use files::line_offset;
use revm::bytecode::opcode::JUMP;

/// A contract's code with its decoded source map: what a frame's pcs are looked up in.
#[derive(Debug)]
pub struct CodeMap {
    pub contract: String,
    /// Whether an internal function's arguments are read from the stack at the JUMP into it:
    /// only for legacy code generation (the solc metadata says so); viaIR lays them out
    /// otherwise, and without metadata nothing is assumed.
    args_from_stack: bool,
    /// A CREATE's init code: the code before any function is entered is the constructor's.
    creation: bool,
    entries: Vec<SrcEntry>,
    pc_ix: Vec<u32>,
    unit: Arc<Unit>,
    /// [`CodeMap::internal_calls`] by (file, caller's start, callee's start): a gas profile
    /// asks for the same pair at every pc of shared code.
    calls: std::sync::Mutex<std::collections::HashMap<(usize, usize, usize), Vec<usize>>>,
    /// The contracts this code's contract inherits from, by name (from the ASTs; read once).
    bases: std::sync::OnceLock<Vec<String>>,
}

impl CodeMap {
    pub fn new(contract: &str, code: &[u8], map: &str, unit: Arc<Unit>) -> CodeMap {
        CodeMap::from_entries(contract, code, decode_source_map(map), unit)
    }

    /// A map already decoded (a rebuilt one, its file indices those of `unit`).
    pub fn from_entries(
        contract: &str,
        code: &[u8],
        entries: Vec<SrcEntry>,
        unit: Arc<Unit>,
    ) -> CodeMap {
        CodeMap {
            contract: contract.to_string(),
            args_from_stack: false,
            creation: false,
            entries,
            pc_ix: instruction_index(code),
            unit,
            calls: Default::default(),
            bases: Default::default(),
        }
    }

    /// How many members the enum `name` (its canonical name, `C.Kind`) has, where the build's
    /// AST defines it.
    pub fn enum_members(&self, name: &str) -> Option<usize> {
        self.unit
            .files
            .values()
            .flat_map(|f| f.enums().iter())
            .find(|(n, _)| n == name)
            .map(|(_, members)| members.len())
    }

    /// The contract a function declared in `declaring` is shown under in this code's stack:
    /// this code's own contract when `declaring` is one it inherits from (EDR's and Hardhat's
    /// rule, and the name the call tree prints: `Token.transferFrom`, not
    /// `ERC20.transferFrom`), else `declaring` (a library's internal function, inlined).
    pub fn shown_contract(&self, declaring: &str) -> String {
        let bases = self
            .bases
            .get_or_init(|| self.unit.bases_of(&self.contract));
        match bases.iter().any(|b| b == declaring) {
            true => self.contract.clone(),
            false => declaring.to_string(),
        }
    }

    /// For every byte of `code` (the code this map was made for), the jump marker of a JUMP
    /// there (`b'i'`, `b'o'`), 0 elsewhere: what a gas profiler needs to follow functions.
    pub fn jump_marks(&self, code: &[u8]) -> Arc<[u8]> {
        code.iter()
            .enumerate()
            .map(|(pc, &op)| match self.entry(pc as u32) {
                Some(e) if op == JUMP && matches!(e.jump, b'i' | b'o') => e.jump,
                _ => 0,
            })
            .collect()
    }

    /// Reads internal functions' arguments from the stack (legacy code generation known).
    pub fn with_args_from_stack(mut self, yes: bool) -> CodeMap {
        self.args_from_stack = yes;
        self
    }

    /// The map of init code (a CREATE's): its code outside functions is the constructor's.
    pub fn for_creation(mut self, yes: bool) -> CodeMap {
        self.creation = yes;
        self
    }

    /// How this map fails to fit `code` (the code it was made for), if it does (see [`misfit`]).
    pub fn misfit(&self, code: &[u8]) -> Option<Misfit> {
        misfit(code, &self.entries)
    }

    fn entry(&self, pc: u32) -> Option<SrcEntry> {
        let ix = *self.pc_ix.get(pc as usize)?;
        self.entries.get(ix as usize).copied()
    }

    /// The file of a user-written span, if `e` is one.
    fn user_file(&self, e: SrcEntry) -> Option<&Arc<SourceFile>> {
        if e.file < 0 {
            return None;
        }
        self.unit.files.get(&e.file)
    }

    /// The internal call stack at `pc` after the frame made `jumps` (pc, destination): one
    /// level per function still open, outermost first. A level is the destination its JUMP
    /// into the function went to (`None` for the code before any: the dispatcher) and the pc
    /// it is at: the JUMP into the next level, or `pc` for the innermost.
    pub fn levels(&self, jumps: &[(u32, u32)], pc: u32) -> Vec<Level> {
        let mut open: Vec<(usize, u32, u32)> = Vec::new();
        for (k, &(j, dest)) in jumps.iter().enumerate() {
            match self.entry(j).map(|e| e.jump) {
                Some(b'i') => open.push((k, j, dest)),
                Some(b'o') => {
                    open.pop();
                }
                _ => {}
            }
        }
        let mut out = Vec::with_capacity(open.len() + 1);
        let mut entered = None;
        let mut jump = None;
        for (k, site, dest) in open {
            out.push(Level {
                entered,
                pc: site,
                jump,
            });
            entered = Some(dest);
            jump = Some(k);
        }
        out.push(Level { entered, pc, jump });
        out
    }

    /// The user's function a level runs: the one holding the destination of the JUMP into it
    /// (`None` for the dispatcher and for code the compiler generated).
    fn function_of(&self, level: &Level) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        let e = self.entry(level.entered?)?;
        let file = self.user_file(e)?;
        Some((file, file.function_at(e.start as usize)?))
    }

    /// The fallback or receive function of this contract (or its bases) whose code holds
    /// offset `at` of `file`, directly or in a modifier its declaration invokes (the one
    /// function of the contract nearest in the lineage that does; none when two do).
    fn entry_point_at<'a>(
        &'a self,
        file: &'a Arc<SourceFile>,
        at: usize,
    ) -> Option<(&'a Arc<SourceFile>, &'a FnSpan)> {
        let g = file.function_at(at)?;
        let lineage = self.lineage();
        let rank = |f: &FnSpan| lineage.iter().position(|c| *c == f.contract);
        let entry = |f: &FnSpan| !f.modifier && matches!(f.name.as_str(), "fallback" | "receive");
        if !g.modifier {
            return (entry(g) && rank(g).is_some()).then_some((file, g));
        }
        let mut invoking: Vec<(usize, (&Arc<SourceFile>, &FnSpan))> = self
            .unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| entry(f))
            .filter(|(ffile, f)| {
                ctor::header(ffile, f).is_some_and(|h| ctor::invoked_in(h, &g.name).is_some())
            })
            .filter_map(|(ffile, f)| Some((rank(f)?, (ffile, f))))
            .collect();
        invoking.sort_by_key(|(r, _)| *r);
        match invoking[..] {
            [(_, one)] => Some(one),
            [(a, one), (b, _), ..] if a < b => Some(one),
            _ => None,
        }
    }

    /// The file a level ran in, when it was edited since the build.
    fn changed_file_of(&self, level: &Level) -> Option<&Arc<SourceFile>> {
        let by_entry = level
            .entered
            .and_then(|d| self.entry(d))
            .and_then(|e| self.user_file(e));
        let file = by_entry.or_else(|| self.user_span(level.pc).map(|(f, _)| f))?;
        file.changed_since_build().then_some(file)
    }

    /// Where the user-written span at `pc` is, if it is one.
    pub fn location_of(&self, pc: u32) -> Option<Location> {
        let (file, e) = self.user_span(pc)?;
        file.locate(e.start as usize, e.len as usize)
    }

    /// The file and 1-based line of the user-written span at `pc`, if any.
    pub fn user_line(&self, pc: u32) -> Option<(&Arc<SourceFile>, usize)> {
        let (file, e) = self.user_span(pc)?;
        Some((file, file.line_of(e.start as usize)?))
    }

    /// The user's function a JUMP to `dest` enters (`None`: code the compiler generated).
    pub fn entered_function(&self, dest: u32) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        self.function_of(&Level {
            entered: Some(dest),
            pc: dest,
            jump: None,
        })
    }

    /// A function named `name` in this map's compilation, this contract's own first (an
    /// inherited one is declared in a base contract).
    pub fn find_function(&self, name: &str) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        self.unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| !f.modifier && f.name == name)
            .min_by_key(|(file, f)| (f.contract != self.contract, file.path.as_str(), f.start))
    }

    /// The declaration of function `name` of this map's contract (or its bases): the contract
    /// it is declared in and where.
    pub fn function_location(&self, name: &str) -> Option<(String, Location)> {
        self.function_location_for(name, None)
    }

    /// The name of this code's contract's public or external function whose selector is
    /// `selector`, from the AST's parameter types (a library's ABI leaves out the functions it
    /// runs only by DELEGATECALL).
    pub fn function_named_by(&self, selector: [u8; 4]) -> Option<String> {
        self.unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| !f.modifier && f.contract == self.contract)
            .filter(|(_, f)| f.selector() == Some(selector))
            // Only a function a call can reach: `public` or `external` in its declaration.
            .find(|(file, f)| {
                ctor::header(file, f).is_some_and(|h| {
                    h.split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == "public" || w == "external")
                })
            })
            .map(|(_, f)| f.name.clone())
    }

    /// [`Self::function_location`] of the overload whose selector is `selector`, where known.
    pub fn function_location_for(
        &self,
        name: &str,
        selector: Option<[u8; 4]>,
    ) -> Option<(String, Location)> {
        let (file, f) = self.find_function_for(name, selector)?;
        let text = file.text()?;
        // The declaration's first line: up to its body's brace.
        let head = text.get(f.start..f.end)?;
        let len = head.find('{').unwrap_or(head.len());
        Some((
            f.contract.clone(),
            file.locate(f.start, head[..len].trim_end().len())?,
        ))
    }

    /// Function `name` of this map's compilation whose selector is `selector` (an overload
    /// told apart by the types the AST gives its parameters), else [`Self::find_function`]'s.
    pub fn find_function_for(
        &self,
        name: &str,
        selector: Option<[u8; 4]>,
    ) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        let by_selector = selector.and_then(|sel| {
            self.unit
                .files
                .values()
                .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
                .filter(|(_, f)| !f.modifier && f.name == name)
                .find(|(_, f)| f.selector() == Some(sel))
        });
        by_selector.or_else(|| self.find_function(name))
    }

    /// How a function is shown: its name, with its parameter types where its contract declares
    /// another function of the same name (an overload: `mint(address)`, `mint(address,uint256)`).
    pub fn shown_name(&self, f: &FnSpan) -> String {
        let same = self
            .unit
            .files
            .values()
            .flat_map(|file| file.functions())
            .filter(|g| !g.modifier && g.contract == f.contract && g.name == f.name)
            .count();
        match &f.params {
            Some(p) if same > 1 => format!("{}({p})", f.name),
            _ => f.name.clone(),
        }
    }

    /// The user-written span at `pc`, if any.
    fn user_span(&self, pc: u32) -> Option<(&Arc<SourceFile>, SrcEntry)> {
        let e = self.entry(pc)?;
        Some((self.user_file(e)?, e))
    }

    /// Where the innermost level is, when it is in user code: its pc's span, unless that lies
    /// outside the function the level runs (a revert tail the optimizer shares between
    /// functions; a modifier's code counts as inside, it is inlined), or outside every function
    /// (viaIR inlines a function into the dispatcher and gives its revert the contract's span):
    /// then the last pc the frame ran that fits.
    fn innermost(&self, level: &Level, recent: &[u32]) -> Option<(&Arc<SourceFile>, SrcEntry)> {
        let (file, e) = self.user_span(level.pc)?;
        if self.fits(level, file, e) {
            return Some((file, e));
        }
        Some(
            recent
                .iter()
                .filter_map(|&pc| self.user_span(pc))
                .find(|(file, e)| self.fits(level, file, *e))
                .unwrap_or((file, e)),
        )
    }

    /// Whether span `e` of `file` lies in the function `level` runs (a modifier it invokes
    /// counts: its code is inlined), or for the dispatcher in some function.
    fn fits(&self, level: &Level, file: &Arc<SourceFile>, e: SrcEntry) -> bool {
        let at = e.start as usize;
        match (self.function_of(level), file.function_at(at)) {
            // A modifier's code is inlined into the functions whose declarations invoke it; the
            // optimizer may share its revert with any other function.
            (Some((tfile, t)), Some(m)) if m.modifier => {
                ctor::header(tfile, t).is_some_and(|h| ctor::invoked_in(h, &m.name).is_some())
            }
            (None, Some(m)) if m.modifier => true,
            (Some((ffile, f)), _) => Arc::ptr_eq(file, ffile) && f.start <= at && at < f.end,
            (None, found) => found.is_some(),
        }
    }

    /// Whether the user's span at `pc` can have run as part of function `scope` (what a gas
    /// profile's context runs): inside it, in a modifier its declaration invokes, in a
    /// function its body calls by name (the optimizer inlines small ones), or outside every
    /// function (contract-level code). A span inside any other function is code the optimizer
    /// shares and gave that function's location: that line did not run.
    pub fn ran_in(&self, pc: u32, scope: (&Arc<SourceFile>, &FnSpan)) -> bool {
        let Some((file, e)) = self.user_span(pc) else {
            return true;
        };
        let (sfile, f) = scope;
        let at = e.start as usize;
        let Some(g) = file.function_at(at) else {
            return true;
        };
        if Arc::ptr_eq(file, sfile) && f.start <= at && at < f.end {
            return true;
        }
        if sfile.text().is_none() {
            return true;
        }
        let head = ctor::header(sfile, f).unwrap_or_default();
        if g.modifier {
            return ctor::invoked_in(head, &g.name).is_some();
        }
        !self.internal_calls(sfile, f, g).is_empty()
    }

    /// The byte offsets (in `file`) of the internal calls `f`'s body makes to `g`'s name:
    /// `g(…)`, `super.g(…)`, or `x.g(…)` of a library's function (`using … for`) — what the
    /// optimizer may inline; `this.g(…)` and `other.g(…)` are calls out.
    fn internal_calls(&self, file: &SourceFile, f: &FnSpan, g: &FnSpan) -> Vec<usize> {
        let key = (std::ptr::from_ref(file) as usize, f.start, g.start);
        if let Some(hit) = self.calls.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return hit;
        }
        let out = self.find_internal_calls(file, f, g);
        if let Ok(mut c) = self.calls.lock() {
            c.insert(key, out.clone());
        }
        out
    }

    fn find_internal_calls(&self, file: &SourceFile, f: &FnSpan, g: &FnSpan) -> Vec<usize> {
        let mut out = Vec::new();
        let Some(text) = file.text() else {
            return out;
        };
        let head = ctor::header(file, f).unwrap_or_default();
        let body_from = f.start + head.len();
        let body = text.get(body_from..f.end).unwrap_or_default();
        let library = self
            .unit
            .files
            .values()
            .any(|file| ctor::is_library(file, &g.contract));
        let mut from = 0;
        while let Some(i) = body.get(from..).and_then(|b| ctor::invoked_in(b, &g.name)) {
            let at = from + i;
            from = at + g.name.len();
            if !body[from..].trim_start().starts_with('(') {
                continue;
            }
            let before = body[..at].trim_end();
            let internal = match before.strip_suffix('.') {
                None => !before.ends_with("function"),
                Some(object) => {
                    let object = object.trim_end();
                    object.ends_with("super") || (library && !object.ends_with("this"))
                }
            };
            if internal {
                out.push(body_from + at);
            }
        }
        out
    }

    /// The one call in the body of `level`'s function to the function `next` runs, when the
    /// JUMP between them is shared with another function and no JUMP of its own tells: the
    /// source text decides, and only when it names that function once (two calls stay
    /// undecided rather than one picked).
    fn call_in_body(&self, level: &Level, next: &Level) -> Option<(&Arc<SourceFile>, SrcEntry)> {
        let (file, f) = self.function_of(level)?;
        let (_, g) = self.function_of(next)?;
        let [start] = self.internal_calls(file, f, g)[..] else {
            return None;
        };
        let len = file.text()?[start..].find([';', '\n']).unwrap_or(0);
        self.span_in(file, start, len)
    }

    /// Whether span `e` of `file` is the whole of the function `level` runs.
    fn whole_function(&self, level: &Level, file: &Arc<SourceFile>, e: SrcEntry) -> bool {
        self.function_of(level).is_some_and(|(ffile, f)| {
            Arc::ptr_eq(file, ffile)
                && e.start as usize == f.start
                && e.len as usize == f.end - f.start
        })
    }

    /// The declaration of `level`'s function, as a span: where a level is placed when the map
    /// gives a line of another function and the text cannot decide between two calls.
    fn declaration_span(&self, level: &Level) -> Option<(&Arc<SourceFile>, SrcEntry)> {
        let (file, f) = self.function_of(level)?;
        let head = ctor::header(file, f)?;
        self.span_in(file, f.start, head.trim_end().len())
    }

    /// A span of `file` (one of this map's compilation) as a map entry.
    fn span_in<'a>(
        &'a self,
        file: &'a Arc<SourceFile>,
        start: usize,
        len: usize,
    ) -> Option<(&'a Arc<SourceFile>, SrcEntry)> {
        let id = *self
            .unit
            .files
            .iter()
            .find(|(_, v)| Arc::ptr_eq(v, file))?
            .0;
        let entry = SrcEntry {
            start: u32::try_from(start).ok()?,
            len: u32::try_from(len).ok()?,
            file: id,
            jump: b'-',
        };
        Some((file, entry))
    }

    /// The location of the failure: the innermost level in code the user wrote (`recent`: the
    /// frame's last pcs, newest first).
    pub fn location(&self, levels: &[Level], recent: &[u32]) -> Option<Location> {
        let (last, outer) = levels.split_last()?;
        if let Some((file, e)) = self.innermost(last, recent) {
            return file.locate(e.start as usize, e.len as usize);
        }
        outer.iter().rev().find_map(|level| {
            let (file, e) = self.user_span(level.pc)?;
            file.locate(e.start as usize, e.len as usize)
        })
    }

    /// The functions of `levels`, innermost first, each at its point: the failure for the
    /// innermost, the call into the next for the others. Levels of generated code are left
    /// out; the dispatcher's only when nothing else is known (a failure decoding calldata:
    /// the function whose signature it is).
    pub fn functions(
        &self,
        levels: &[Level],
        recent: &[u32],
        steps: &FrameSteps,
    ) -> Vec<StackEntry> {
        let (jumps, open_args) = (&steps.jumps, &steps.args);
        let mut out = Vec::new();
        let n = levels.len();
        // Where a level is: the innermost at the failure; an outer one at its JUMP into the
        // next, unless the optimizer shares that JUMP between functions (SafeERC20's
        // `safeTransfer` and `safeTransferFrom` both reach `_callOptionalReturn` through one):
        // then at the last JUMP the level made before it that lies in its own function.
        let span_of = |k: usize, level: &Level| {
            if k + 1 == n {
                return self.innermost(level, recent);
            }
            let from = level.jump.map_or(0, |j| j + 1);
            let to = levels[k + 1].jump.unwrap_or(0).min(jumps.len());
            let before: Vec<u32> = jumps
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .rev()
                .map(|&(pc, _)| pc)
                .collect();
            let found = self.innermost(level, &before);
            match found {
                // The whole function as the span (viaIR gives a modifier's JUMP into the next
                // function so): the one call its text makes to the next says more.
                Some((file, e)) if self.whole_function(level, file, e) => {
                    self.call_in_body(level, &levels[k + 1]).or(found)
                }
                Some((file, e)) if !self.fits(level, file, e) => {
                    if let Some(one) = self.call_in_body(level, &levels[k + 1]) {
                        return Some(one);
                    }
                    self.declaration_span(level).or(found)
                }
                _ => found,
            }
        };
        // The lines of the calls an outer level's body makes to the next level's function, when
        // its span had to fall back to the declaration: the map cannot tell which ran.
        let undecided = |k: usize, level: &Level| -> Vec<usize> {
            if k + 1 == n {
                return Vec::new();
            }
            let (Some((file, f)), Some((_, g))) =
                (self.function_of(level), self.function_of(&levels[k + 1]))
            else {
                return Vec::new();
            };
            let calls = self.internal_calls(file, f, g);
            let declared = span_of(k, level)
                .is_some_and(|(sf, e)| Arc::ptr_eq(sf, file) && e.start as usize == f.start);
            if calls.len() < 2 || !declared {
                return Vec::new();
            }
            calls.iter().filter_map(|&at| file.line_of(at)).collect()
        };
        for (k, level) in levels.iter().enumerate().rev() {
            if self.creation && level.entered.is_none() {
                out.extend(self.constructor_entries(span_of(k, level)));
                continue;
            }
            // The dispatcher runs a fallback or receive function inline (no JUMP enters it):
            // its level is that function when its point lies there, or in a modifier it invokes.
            let entry_point = || {
                let (sfile, e) = span_of(k, level)?;
                self.entry_point_at(sfile, e.start as usize)
            };
            let found = match level.entered {
                None => entry_point(),
                Some(_) => self.function_of(level),
            };
            let Some((file, f)) = found else {
                // In a file edited since the build the function is not known either: the
                // entry says where, and why nothing more is shown (once for a run of them).
                if let Some(file) = self.changed_file_of(level) {
                    let entry = StackEntry {
                        contract: String::new(),
                        function: String::new(),
                        location: Location::changed(&file.path),
                        reached_by: None,
                        args: Vec::new(),
                        undecided: Vec::new(),
                    };
                    if out.last() != Some(&entry) {
                        out.push(entry);
                    }
                }
                continue;
            };
            let span = span_of(k, level);
            // A modifier's code runs inlined in the function: it is its own line, and the
            // function is at its signature (where the modifier is invoked).
            let modifier = span.and_then(|(mfile, e)| {
                let m = mfile
                    .function_at(e.start as usize)
                    .filter(|m| m.modifier && !(Arc::ptr_eq(mfile, file) && m.start == f.start))?;
                Some((m, mfile.locate(e.start as usize, e.len as usize)?))
            });
            let location = match &modifier {
                Some((m, at)) => {
                    out.push(StackEntry {
                        contract: self.shown_contract(&m.contract),
                        function: m.name.clone(),
                        location: at.clone(),
                        reached_by: None,
                        args: Vec::new(),
                        undecided: Vec::new(),
                    });
                    file.locate(f.start, f.end - f.start)
                }
                None => span.and_then(|(file, e)| file.locate(e.start as usize, e.len as usize)),
            };
            let Some(location) = location.or_else(|| file.locate(f.start, f.end - f.start)) else {
                continue;
            };
            out.push(StackEntry {
                contract: self.shown_contract(&f.contract),
                function: f.name.clone(),
                location,
                reached_by: None,
                args: self.args_of(level, f, open_args),
                undecided: undecided(k, level),
            });
        }
        if out.is_empty() {
            if let Some(location) = self.location(levels, recent) {
                let f = self
                    .unit
                    .files
                    .values()
                    .find(|file| file.path == location.file)
                    .and_then(|file| {
                        let text = file.text()?;
                        let offset = line_offset(text, location.line)?
                            + text
                                .lines()
                                .nth(location.line - 1)?
                                .char_indices()
                                .nth(location.column - 1)
                                .map_or(0, |(i, _)| i);
                        file.function_at(offset).cloned()
                    });
                if let Some(f) = f {
                    out.push(StackEntry {
                        contract: self.shown_contract(&f.contract),
                        function: f.name,
                        location,
                        reached_by: None,
                        args: Vec::new(),
                        undecided: Vec::new(),
                    });
                }
            }
        }
        out
    }
}

impl CodeMap {
    /// The parameters of `f`, the function `level` runs, with the values the JUMP into it left
    /// on the stack (legacy code generation: the return address, then the arguments in order,
    /// the last on top), where each is a value type read from one slot; names alone otherwise.
    fn args_of(&self, level: &Level, f: &FnSpan, open_args: &[(usize, Vec<U256>)]) -> Vec<Arg> {
        let words = level
            .jump
            .filter(|_| self.args_from_stack)
            .and_then(|j| open_args.iter().find(|(k, _)| *k == j))
            .map(|(_, w)| w.as_slice());
        let slots: Option<Vec<usize>> = f.inputs.iter().map(|(_, t)| args::slots(t)).collect();
        let mut values: Vec<Option<String>> = vec![None; f.inputs.len()];
        if let (Some(words), Some(slots)) = (words, slots) {
            let total: usize = slots.iter().sum();
            if total <= words.len() {
                let mut at = words.len() - total;
                for (i, ((_, ty), n)) in f.inputs.iter().zip(&slots).enumerate() {
                    if *n == 1 {
                        values[i] = args::format(ty, words[at]);
                    }
                    at += n;
                }
            }
        }
        f.inputs
            .iter()
            .zip(values)
            .enumerate()
            .map(|(i, ((name, _), value))| Arg {
                name: if name.is_empty() {
                    format!("_{i}")
                } else {
                    name.clone()
                },
                value,
            })
            .collect()
    }
}

/// One level of a frame's internal call stack (see [`CodeMap::levels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Where the JUMP into this level's function went (`None`: no function entered yet).
    pub entered: Option<u32>,
    /// The pc this level is at.
    pub pc: u32,
    /// The index, in the frame's JUMPs, of the one into this level's function.
    pub jump: Option<usize>,
}

/// The internal stack of a frame at its failure (`steps.last_pc`) or, for a frame on the way
/// down to the failure, at the call it made (`at`: the pc of its CALL and its JUMP count then).
pub fn frame_levels(map: &CodeMap, steps: &FrameSteps, at: Option<(u32, usize)>) -> Vec<Level> {
    match at {
        Some((pc, n)) => map.levels(&steps.jumps[..n.min(steps.jumps.len())], pc),
        None => map.levels(&steps.jumps, steps.last_pc),
    }
}

/// The Solidity stack trace along `path` (child indices from `root` to the frame the failure
/// started in): each frame's functions, innermost first, the outermost function of every frame
/// but the top one marked with how it was entered. Frames without a map are left out.
/// Returned by frame: each frame's path (a prefix of `path`) and its entries, the frame the
/// failure started in first.
pub fn stack_by_frame(
    root: &CallFrame,
    path: &[usize],
    map_of: &dyn Fn(&CallFrame) -> Option<Arc<CodeMap>>,
) -> Vec<(Vec<usize>, Vec<StackEntry>)> {
    let mut frames = vec![root];
    for &i in path {
        match frames.last().and_then(|f| f.calls.get(i)) {
            Some(c) => frames.push(c),
            None => return Vec::new(),
        }
    }
    let mut out = Vec::new();
    for (k, f) in frames.iter().enumerate().rev() {
        let (Some(steps), Some(map)) = (f.steps.as_deref(), map_of(f)) else {
            continue;
        };
        // Where this frame was: at its failure (the origin) or at the call into the next frame.
        let at = frames
            .get(k + 1)
            .and_then(|child| child.steps.as_ref())
            .and_then(|s| s.caller);
        let levels = frame_levels(&map, steps, at);

        // The last pcs tell where the failure was; at a call site they only break a tie: when
        // the optimizer shares the CALL between functions (`this.f()` in one, `other.g()` in
        // another), its span may lie in the other function, and the frame's own last pcs (the
        // call's result checked on return) are within this one.
        let recent: Vec<u32> = steps.recent().collect();
        let entries = map.functions(&levels, &recent, steps);
        // Functions inlined between the one the selector chose and the stack's outermost.
        let mut entries = if f.kind.is_create() {
            entries
        } else {
            map.with_inlined(entries, &f.input)
        };
        if k > 0 {
            if let Some(outer) = entries.last_mut() {
                outer.reached_by = Some(f.kind);
            }
        }
        out.push((path[..k].to_vec(), entries));
    }
    out
}

#[cfg(test)]
mod tests;
