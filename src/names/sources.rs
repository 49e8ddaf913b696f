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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::render::source::{Location, StackEntry};
use crate::trace::call::{CallFrame, FrameSteps};

/// One source-map entry: the span `start..start+len` of file `file` (-1: none), and the jump
/// marker of the instruction (`b'i'`, `b'o'` or `b'-'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrcEntry {
    pub start: u32,
    pub len: u32,
    pub file: i32,
    pub jump: u8,
}

/// Decodes a compressed source map. A malformed field keeps the previous entry's value.
pub fn decode_source_map(map: &str) -> Vec<SrcEntry> {
    let mut out = Vec::with_capacity(map.len() / 4);
    let mut cur = SrcEntry {
        start: 0,
        len: 0,
        file: -1,
        jump: b'-',
    };
    if map.is_empty() {
        return out;
    }
    for item in map.split(';') {
        for (i, field) in item.split(':').enumerate() {
            if field.is_empty() {
                continue;
            }
            match i {
                0 => cur.start = field.parse().unwrap_or(cur.start),
                1 => cur.len = field.parse().unwrap_or(cur.len),
                2 => cur.file = field.parse().unwrap_or(cur.file),
                3 => cur.jump = field.bytes().next().unwrap_or(b'-'),
                _ => {}
            }
        }
        out.push(cur);
    }
    out
}

/// For every byte of `code`, the index of the instruction it belongs to (PUSH data belongs to
/// its PUSH).
pub fn instruction_index(code: &[u8]) -> Vec<u32> {
    let mut out = vec![0u32; code.len()];
    let (mut pc, mut ix) = (0usize, 0u32);
    while pc < code.len() {
        let op = code[pc];
        let width = if (0x60..=0x7f).contains(&op) {
            1 + usize::from(op - 0x5f)
        } else {
            1
        };
        for slot in out.iter_mut().skip(pc).take(width) {
            *slot = ix;
        }
        pc += width;
        ix += 1;
    }
    out
}

/// A function (or modifier) in a source file: its byte span and names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnSpan {
    pub start: usize,
    pub end: usize,
    pub contract: String,
    pub name: String,
    /// A modifier: its code is inlined into the functions it modifies.
    pub modifier: bool,
}

/// Where a source file's text comes from.
#[derive(Clone, Debug)]
pub enum TextOrigin {
    /// Given in the build (standard-JSON input, Hardhat build info).
    Inline(String),
    /// Read from the first of these paths that exists, when first needed.
    Disk(Vec<PathBuf>),
}

/// One source file of a compilation.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as the compiler named it (`src/Leaf.sol`).
    pub path: String,
    origin: TextOrigin,
    text: OnceLock<Option<String>>,
    /// From the AST, when the build had one; else scanned from the text.
    ast_functions: Option<Vec<FnSpan>>,
    functions: OnceLock<Vec<FnSpan>>,
    /// Byte offsets where each line starts, built on first need.
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(path: String, origin: TextOrigin, ast: Option<&Value>) -> SourceFile {
        SourceFile {
            path,
            origin,
            text: OnceLock::new(),
            ast_functions: ast.map(|a| {
                let mut out = Vec::new();
                ast_functions(a, "", &mut out);
                out
            }),
            functions: OnceLock::new(),
            line_starts: OnceLock::new(),
        }
    }

    pub fn text(&self) -> Option<&str> {
        self.text
            .get_or_init(|| match &self.origin {
                TextOrigin::Inline(s) => Some(s.clone()),
                TextOrigin::Disk(paths) => {
                    paths.iter().find_map(|p| std::fs::read_to_string(p).ok())
                }
            })
            .as_deref()
    }

    pub fn functions(&self) -> &[FnSpan] {
        self.functions.get_or_init(|| match &self.ast_functions {
            Some(f) => f.clone(),
            None => self.text().map(scan_functions).unwrap_or_default(),
        })
    }

    /// The 1-based line holding byte `offset`, by a binary search in the line index.
    pub fn line_of(&self, offset: usize) -> Option<usize> {
        let text = self.text()?;
        if offset > text.len() {
            return None;
        }
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        Some(starts.partition_point(|&s| s <= offset))
    }

    /// Line `line` (1-based) without its line break.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let text = self.text()?;
        let start = line_offset(text, line)?;
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        Some(text[start..end].trim_end_matches('\r'))
    }

    /// The innermost function or modifier whose span holds `offset`.
    pub fn function_at(&self, offset: usize) -> Option<&FnSpan> {
        self.functions()
            .iter()
            .filter(|f| f.start <= offset && offset < f.end)
            .min_by_key(|f| f.end - f.start)
    }

    /// The location of `start..start+len`: line, column, the line's text and the span on it.
    pub fn locate(&self, start: usize, len: usize) -> Option<Location> {
        let text = self.text()?;
        if start > text.len() || !text.is_char_boundary(start) {
            return None;
        }
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        let column = text[line_start..start].chars().count();
        let mut end = (start + len).min(line_start + line_text.len()).max(start);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let width = text[start..end].chars().count();
        Some(Location {
            file: self.path.clone(),
            line: text[..line_start].matches('\n').count() + 1,
            column: column + 1,
            text: line_text.to_string(),
            span: (column, column + width),
        })
    }
}

/// One compilation: its source files by the compiler's source id.
#[derive(Debug, Default)]
pub struct Unit {
    pub files: HashMap<i32, Arc<SourceFile>>,
}

/// Creation code (library placeholders zeroed), the byte ranges to ignore when comparing it
/// with init code, and its source map.
pub type Creation = (Vec<u8>, Vec<(usize, usize)>, String);

/// The source side of one artifact: its source maps, creation code and compilation.
#[derive(Debug)]
pub struct ArtifactSources {
    pub runtime_map: Option<String>,
    pub creation: Option<Creation>,
    pub unit: Arc<Unit>,
}

impl ArtifactSources {
    /// Whether `init` (a CREATE frame's input) starts with this creation code: compared up to
    /// the code's length (constructor arguments follow), ignoring library placeholders and the
    /// embedded runtime code's metadata.
    pub fn creation_matches(&self, init: &[u8]) -> bool {
        let Some((code, mask, _)) = &self.creation else {
            return false;
        };
        if code.is_empty() || init.len() < code.len() {
            return false;
        }
        code.iter()
            .zip(init)
            .enumerate()
            .all(|(i, (a, b))| a == b || mask.iter().any(|(s, l)| i >= *s && i < s + l))
    }
}

/// A contract's code with its decoded source map: what a frame's pcs are looked up in.
#[derive(Debug)]
pub struct CodeMap {
    pub contract: String,
    entries: Vec<SrcEntry>,
    pc_ix: Vec<u32>,
    unit: Arc<Unit>,
}

impl CodeMap {
    pub fn new(contract: &str, code: &[u8], map: &str, unit: Arc<Unit>) -> CodeMap {
        CodeMap {
            contract: contract.to_string(),
            entries: decode_source_map(map),
            pc_ix: instruction_index(code),
            unit,
        }
    }

    /// For every byte of `code` (the code this map was made for), the jump marker of a JUMP
    /// there (`b'i'`, `b'o'`), 0 elsewhere: what a gas profiler needs to follow functions.
    pub fn jump_marks(&self, code: &[u8]) -> Arc<[u8]> {
        code.iter()
            .enumerate()
            .map(|(pc, &op)| match self.entry(pc as u32) {
                Some(e) if op == 0x56 && matches!(e.jump, b'i' | b'o') => e.jump,
                _ => 0,
            })
            .collect()
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
        let mut open: Vec<(u32, u32)> = Vec::new();
        for &(j, dest) in jumps {
            match self.entry(j).map(|e| e.jump) {
                Some(b'i') => open.push((j, dest)),
                Some(b'o') => {
                    open.pop();
                }
                _ => {}
            }
        }
        let mut out = Vec::with_capacity(open.len() + 1);
        let mut entered = None;
        for (site, dest) in open {
            out.push(Level { entered, pc: site });
            entered = Some(dest);
        }
        out.push(Level { entered, pc });
        out
    }

    /// The user's function a level runs: the one holding the destination of the JUMP into it
    /// (`None` for the dispatcher and for code the compiler generated).
    fn function_of(&self, level: &Level) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        let e = self.entry(level.entered?)?;
        let file = self.user_file(e)?;
        Some((file, file.function_at(e.start as usize)?))
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
        let target = self.function_of(level);
        let fits = |file: &Arc<SourceFile>, e: SrcEntry| {
            let at = e.start as usize;
            match (target, file.function_at(at)) {
                (_, Some(f)) if f.modifier => true,
                (Some((ffile, f)), _) => Arc::ptr_eq(file, ffile) && f.start <= at && at < f.end,
                (None, found) => found.is_some(),
            }
        };
        if fits(file, e) {
            return Some((file, e));
        }
        Some(
            recent
                .iter()
                .filter_map(|&pc| self.user_span(pc))
                .find(|(file, e)| fits(file, *e))
                .unwrap_or((file, e)),
        )
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
    pub fn functions(&self, levels: &[Level], recent: &[u32]) -> Vec<StackEntry> {
        let mut out = Vec::new();
        let n = levels.len();
        for (k, level) in levels.iter().enumerate().rev() {
            let Some((file, f)) = self.function_of(level) else {
                continue;
            };
            let span = if k + 1 == n {
                self.innermost(level, recent)
            } else {
                self.user_span(level.pc)
            };
            // A modifier's code runs inlined in the function: it is its own line, and the
            // function is at its signature (where the modifier is invoked).
            let modifier = span.and_then(|(mfile, e)| {
                let m = mfile.function_at(e.start as usize).filter(|m| m.modifier)?;
                Some((m, mfile.locate(e.start as usize, e.len as usize)?))
            });
            let location = match &modifier {
                Some((m, at)) => {
                    out.push(StackEntry {
                        contract: m.contract.clone(),
                        function: m.name.clone(),
                        location: at.clone(),
                        reached_by: None,
                    });
                    file.locate(f.start, f.end - f.start)
                }
                None => span.and_then(|(file, e)| file.locate(e.start as usize, e.len as usize)),
            };
            let Some(location) = location.or_else(|| file.locate(f.start, f.end - f.start)) else {
                continue;
            };
            out.push(StackEntry {
                contract: f.contract.clone(),
                function: f.name.clone(),
                location,
                reached_by: None,
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
                        contract: f.contract,
                        function: f.name,
                        location,
                        reached_by: None,
                    });
                }
            }
        }
        out
    }
}

/// Byte offset of the start of 1-based `line`.
fn line_offset(text: &str, line: usize) -> Option<usize> {
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// One level of a frame's internal call stack (see [`CodeMap::levels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Where the JUMP into this level's function went (`None`: no function entered yet).
    pub entered: Option<u32>,
    /// The pc this level is at.
    pub pc: u32,
}

/// Functions and modifiers of an AST (solc's compact JSON), with their contract.
fn ast_functions(node: &Value, contract: &str, out: &mut Vec<FnSpan>) {
    match node {
        Value::Array(items) => {
            for i in items {
                ast_functions(i, contract, out);
            }
        }
        Value::Object(o) => {
            let kind = o
                .get("nodeType")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = o.get("name").and_then(Value::as_str).unwrap_or_default();
            let span = o.get("src").and_then(Value::as_str).and_then(|s| {
                let mut it = s.split(':');
                let start: usize = it.next()?.parse().ok()?;
                let len: usize = it.next()?.parse().ok()?;
                Some((start, start + len))
            });
            let mut inner = contract;
            match (kind, span) {
                ("ContractDefinition", _) => inner = name,
                ("FunctionDefinition" | "ModifierDefinition", Some((start, end))) => {
                    let shown = match o.get("kind").and_then(Value::as_str) {
                        Some(k @ ("constructor" | "fallback" | "receive")) => k,
                        _ => name,
                    };
                    out.push(FnSpan {
                        start,
                        end,
                        contract: contract.to_string(),
                        name: shown.to_string(),
                        modifier: kind == "ModifierDefinition",
                    });
                }
                _ => {}
            }
            // Only nodes are walked (`src` strings and the like are skipped).
            for v in o.values().filter(|v| v.is_object() || v.is_array()) {
                ast_functions(v, inner, out);
            }
        }
        _ => {}
    }
}

/// Functions and modifiers of Solidity source text, when no AST is at hand: declarations
/// (`function f`, `modifier m`, `constructor`, `fallback`, `receive`) and the braces of their
/// bodies, inside `contract`/`library`/`interface` bodies; comments and strings skipped.
pub fn scan_functions(text: &str) -> Vec<FnSpan> {
    #[derive(Clone)]
    enum Open {
        Container(String),
        Function(String, usize, bool),
        Block,
    }
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut pending: Option<Open> = None;
    let mut want_name: Option<(&str, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
            continue;
        }
        if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != c {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            let word = &text[start..i];
            if let Some((kw, at)) = want_name.take() {
                pending = Some(if kw == "function" || kw == "modifier" {
                    Open::Function(word.to_string(), at, kw == "modifier")
                } else {
                    Open::Container(word.to_string())
                });
                continue;
            }
            match word {
                "contract" | "library" | "interface" | "function" | "modifier" => {
                    want_name = Some((word, start))
                }
                "constructor" | "fallback" | "receive" => {
                    pending = Some(Open::Function(word.to_string(), start, false))
                }
                _ => {}
            }
            continue;
        }
        if !c.is_ascii_whitespace() {
            want_name = None;
        }
        match c {
            b'{' => stack.push(pending.take().unwrap_or(Open::Block)),
            b';' => {
                if matches!(pending, Some(Open::Function(..))) {
                    pending = None;
                }
            }
            b'}' => {
                if let Some(Open::Function(name, start, modifier)) = stack.pop() {
                    let contract = stack
                        .iter()
                        .rev()
                        .find_map(|o| match o {
                            Open::Container(n) => Some(n.clone()),
                            _ => None,
                        })
                        .unwrap_or_default();
                    out.push(FnSpan {
                        start,
                        end: i + 1,
                        contract,
                        name,
                        modifier,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Paths a source file named `name` by the compiler may be found at: relative to each of
/// `roots`, or as given.
pub fn disk_candidates(name: &str, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = roots.iter().map(|r| r.join(name)).collect();
    out.push(PathBuf::from(name));
    out
}

/// The compilation unit of a standard-JSON output (`sources: {path: {id, ast}}`), with texts
/// from `input_sources` (`{path: {content}}`) when given, else from disk under `roots`.
pub fn unit_from_standard_json(
    output: &Value,
    input_sources: Option<&Value>,
    roots: &[PathBuf],
) -> Unit {
    let mut unit = Unit::default();
    let Some(sources) = output.get("sources").and_then(Value::as_object) else {
        return unit;
    };
    for (path, s) in sources {
        let Some(id) = s.get("id").and_then(Value::as_i64) else {
            continue;
        };
        let inline = input_sources
            .and_then(|i| i.get(path))
            .and_then(|s| s.get("content"))
            .and_then(Value::as_str);
        let origin = match inline {
            Some(t) => TextOrigin::Inline(t.to_string()),
            None => TextOrigin::Disk(disk_candidates(path, roots)),
        };
        unit.files.insert(
            id as i32,
            Arc::new(SourceFile::new(path.clone(), origin, s.get("ast"))),
        );
    }
    unit
}

/// A compilation unit from an id → path table (Foundry's build info `source_id_to_path`, solc's
/// combined-JSON `sourceList`), texts read from disk under `roots`.
pub fn unit_from_paths(paths: &[(i32, String)], roots: &[PathBuf]) -> Unit {
    let mut unit = Unit::default();
    for (id, path) in paths {
        unit.files.insert(
            *id,
            Arc::new(SourceFile::new(
                path.clone(),
                TextOrigin::Disk(disk_candidates(path, roots)),
                None,
            )),
        );
    }
    unit
}

/// The directories a JSON file's relative source paths are tried under: the file's directory
/// and its ancestors, then the working directory.
pub fn roots_for(file: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = file
        .parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .map(Path::to_path_buf)
        .collect();
    if let Ok(cwd) = std::env::current_dir() {
        out.push(cwd);
    }
    out
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
pub fn stack_trace(
    root: &CallFrame,
    path: &[usize],
    map_of: &dyn Fn(&CallFrame) -> Option<Arc<CodeMap>>,
) -> Vec<StackEntry> {
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
        let mut entries = map.functions(&levels, &recent);
        if k > 0 {
            if let Some(outer) = entries.last_mut() {
                outer.reached_by = Some(f.kind);
            }
        }
        out.extend(entries);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_compressed_maps() {
        let m = decode_source_map("1:2:0:-:0;;3:4;:9:1:i;:::o");
        let e = |start, len, file, jump| SrcEntry {
            start,
            len,
            file,
            jump,
        };
        assert_eq!(
            m,
            vec![
                e(1, 2, 0, b'-'),
                e(1, 2, 0, b'-'),
                e(3, 4, 0, b'-'),
                e(3, 9, 1, b'i'),
                e(3, 9, 1, b'o'),
            ]
        );
        assert!(decode_source_map("").is_empty());
    }

    #[test]
    fn push_data_belongs_to_its_push() {
        // PUSH1 0x80, PUSH2 0x0102, JUMP, PUSH32 …, STOP
        let mut code = vec![0x60, 0x80, 0x61, 0x01, 0x02, 0x56, 0x7f];
        code.extend([0u8; 32]);
        code.push(0x00);
        let ix = instruction_index(&code);
        assert_eq!(&ix[..7], &[0, 0, 1, 1, 1, 2, 3]);
        assert_eq!(ix[38], 3);
        assert_eq!(ix[39], 4);
    }

    const SRC: &str = "// c { }\ncontract A {\n    modifier m() { _; }\n    function f(uint x) external {\n        string memory s = \"}{\";\n        g(x);\n    }\n    function g(uint) internal {}\n    function h() external;\n}\nlibrary L { function k() internal { } }\n";

    #[test]
    fn scans_functions_of_source_text() {
        let f = scan_functions(SRC);
        let names: Vec<(&str, &str)> = f
            .iter()
            .map(|s| (s.contract.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(names, vec![("A", "m"), ("A", "f"), ("A", "g"), ("L", "k")]);
        let fstart = SRC.find("function f").unwrap();
        assert_eq!(f[1].start, fstart);
        assert_eq!(&SRC[f[1].end - 1..f[1].end], "}");
    }

    #[test]
    fn locates_lines_and_columns() {
        let file = SourceFile::new("A.sol".into(), TextOrigin::Inline(SRC.into()), None);
        let at = SRC.find("g(x);").unwrap();
        let l = file.locate(at, 4).unwrap();
        assert_eq!((l.line, l.column), (6, 9));
        assert_eq!(l.text, "        g(x);");
        assert_eq!(l.span, (8, 12));
        assert_eq!(file.function_at(at).unwrap().name, "f");
        // A span running past its line is cut at the line's end.
        let f = SRC.find("function f").unwrap();
        let l = file.locate(f, 60).unwrap();
        assert_eq!(l.span, (4, l.text.len()));
    }

    #[test]
    fn rebuilds_the_internal_stack_from_jump_markers() {
        // pc 0: JUMP (in), 1: JUMP (in), 2: JUMP (out), 3: REVERT
        let code = [0x56, 0x56, 0x56, 0xfd];
        let unit = Arc::new(Unit::default());
        let map = CodeMap::new("A", &code, "0:1:0:i;1:1:0:i;2:1:0:o;3:1:0:-", unit);
        let l = |entered, pc| Level { entered, pc };
        assert_eq!(
            map.levels(&[(0, 10), (1, 20), (2, 1)], 3),
            vec![l(None, 0), l(Some(10), 3)]
        );
        assert_eq!(
            map.levels(&[(0, 10), (1, 20)], 3),
            vec![l(None, 0), l(Some(10), 1), l(Some(20), 3)]
        );
        assert_eq!(map.levels(&[(2, 1)], 3), vec![l(None, 3)]);
    }

    #[test]
    fn reads_function_spans_from_an_ast() {
        let ast = serde_json::json!({"nodeType": "SourceUnit", "src": "0:100:0", "nodes": [
            {"nodeType": "ContractDefinition", "name": "C", "src": "0:100:0", "nodes": [
                {"nodeType": "FunctionDefinition", "name": "", "kind": "constructor", "src": "10:20:0"},
                {"nodeType": "ModifierDefinition", "name": "only", "src": "40:10:0"},
                {"nodeType": "FunctionDefinition", "name": "f", "kind": "function", "src": "60:30:0"}
            ]}
        ]});
        let mut out = Vec::new();
        ast_functions(&ast, "", &mut out);
        let names: Vec<(&str, &str, usize)> = out
            .iter()
            .map(|f| (f.contract.as_str(), f.name.as_str(), f.start))
            .collect();
        assert_eq!(
            names,
            vec![("C", "constructor", 10), ("C", "only", 40), ("C", "f", 60)]
        );
    }
}
