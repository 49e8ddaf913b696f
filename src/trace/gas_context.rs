//! Gas by calling context, for `chaintrace gas --by-line` / `--by-function`: where each unit of
//! execution gas went, by the external frame *and* the internal Solidity functions open at the
//! time, down to the pc.
//!
//! The profiler learns which JUMPs enter and leave internal functions from the source map's
//! jump markers (`i`/`o`), handed to it as plain bytes per code by a [`JumpMarks`] (the run's
//! name sources implement it; the tracer itself knows nothing of artifacts). With them it
//! keeps, per frame, the stack of functions entered, and grows a calling-context tree: one
//! node per external frame and one per distinct internal call under it. Self gas is summed at
//! (node, pc), so memory grows with the distinct places code ran, not with the steps.
//! Names, files and lines are put on the tree after the run (`names::gas_source`).

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::{Bytes, B256};
use revm::bytecode::opcode::JUMP;
use rustc_hash::FxHashMap;

/// A frame's residual gas (a precompile's price, a code deposit) is sampled at this pc.
pub const RESIDUAL_PC: u32 = u32::MAX;

/// The jump markers of the code a profiler runs, from its source map.
pub trait JumpMarks: Send + Sync {
    /// For every byte of `code` (a CREATE's init code when `creation`): `b'i'` where a JUMP
    /// enters a function, `b'o'` where one returns from it, 0 elsewhere; `None` when no source
    /// map covers the code.
    fn marks(&self, code: &[u8], creation: bool) -> Option<Arc<[u8]>>;
}

/// What a node of the calling-context tree stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An external frame (index into `GasReport::frames`) running `code` (index into
    /// [`ContextProfile::codes`]; `None` when no code ran: a precompile, an account without
    /// code), entered from its caller's pc `site` (`None` for the transaction's own frame).
    Frame {
        frame: u32,
        code: Option<u32>,
        site: Option<u32>,
    },
    /// An internal function of `code`, entered by the JUMP at pc `site` to pc `entered`.
    Function { code: u32, entered: u32, site: u32 },
}

/// One node of the calling-context tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextNode {
    pub parent: Option<u32>,
    pub kind: NodeKind,
    /// How many times this context was entered.
    pub entries: u64,
}

/// Self gas spent at one pc in one context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub node: u32,
    /// The pc, or [`RESIDUAL_PC`] for the frame's residual (see `GasFrame::residual`).
    pub pc: u32,
    pub count: u64,
    pub gas: u64,
}

/// Gas by calling context: every unit of execution gas in exactly one sample.
#[derive(Clone, Debug, Default)]
pub struct ContextProfile {
    /// The distinct codes that ran, and whether each is a CREATE's init code.
    pub codes: Vec<(Bytes, bool)>,
    pub nodes: Vec<ContextNode>,
    /// In the order each (node, pc) first spent gas.
    pub samples: Vec<Sample>,
}

/// A code seen: its index in [`ContextProfile::codes`] and its markers.
type CodeEntry = (u32, Option<Arc<[u8]>>);

/// One open frame's place in the tree.
struct Open {
    /// The frame's own node.
    frame_node: u32,
    /// The context the frame is in now: its own node or an internal function's.
    node: u32,
    /// The nodes of the functions entered and not yet left, innermost last.
    levels: Vec<u32>,
    code: Option<u32>,
    marks: Option<Arc<[u8]>>,
    /// The pc of the opcode being executed.
    pc: u32,
    /// Whether the frame ran any opcode.
    started: bool,
}

/// The recording side: fed by `GasProfiler`'s hooks.
pub(crate) struct ContextRecorder {
    source: Arc<dyn JumpMarks>,
    profile: ContextProfile,
    codes: HashMap<(B256, bool), CodeEntry>,
    children: HashMap<(u32, u32, u32, u32), u32>,
    samples: FxHashMap<u64, u32>,
    stack: Vec<Open>,
}

impl ContextRecorder {
    pub(crate) fn new(source: Arc<dyn JumpMarks>) -> ContextRecorder {
        ContextRecorder {
            source,
            profile: ContextProfile::default(),
            codes: HashMap::new(),
            children: HashMap::new(),
            samples: FxHashMap::default(),
            stack: Vec::new(),
        }
    }

    fn node(&mut self, parent: Option<u32>, kind: NodeKind) -> u32 {
        let id = self.profile.nodes.len() as u32;
        self.profile.nodes.push(ContextNode {
            parent,
            kind,
            entries: 1,
        });
        id
    }

    /// A frame opens: a node under the caller's current context.
    pub(crate) fn open(&mut self, frame: usize) {
        let (parent, site) = match self.stack.last() {
            Some(o) => (Some(o.node), Some(o.pc)),
            None => (None, None),
        };
        let node = self.node(
            parent,
            NodeKind::Frame {
                frame: frame as u32,
                code: None,
                site,
            },
        );
        self.stack.push(Open {
            frame_node: node,
            node,
            levels: Vec::new(),
            code: None,
            marks: None,
            pc: 0,
            started: false,
        });
    }

    /// The frame's first opcode: which code it runs, and that code's markers.
    pub(crate) fn start(&mut self, hash: B256, code: &Bytes, creation: bool) {
        let (index, marks) = match self.codes.get(&(hash, creation)) {
            Some(hit) => hit.clone(),
            None => {
                let marks = self.source.marks(code, creation);
                let index = self.profile.codes.len() as u32;
                self.profile.codes.push((code.clone(), creation));
                self.codes.insert((hash, creation), (index, marks.clone()));
                (index, marks)
            }
        };
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        top.started = true;
        top.code = Some(index);
        top.marks = marks;
        if let NodeKind::Frame { code, .. } = &mut self.profile.nodes[top.node as usize].kind {
            *code = Some(index);
        }
    }

    /// Whether the innermost frame still needs [`ContextRecorder::start`].
    pub(crate) fn needs_start(&self) -> bool {
        self.stack.last().is_some_and(|o| !o.started)
    }

    pub(crate) fn step(&mut self, pc: u32) {
        if let Some(top) = self.stack.last_mut() {
            top.pc = pc;
        }
    }

    /// The opcode at the frame's pc cost `gas`; `jumped_to` is where a JUMP went.
    pub(crate) fn step_end(&mut self, op: u8, gas: u64, jumped_to: Option<u32>) {
        let Some(top) = self.stack.last() else {
            return;
        };
        let (node, pc) = (top.node, top.pc);
        self.add(node, pc, 1, gas);
        let Some(dest) = jumped_to.filter(|_| op == JUMP) else {
            return;
        };
        let Some(top) = self.stack.last() else {
            return;
        };
        let (Some(marks), Some(code)) = (&top.marks, top.code) else {
            return;
        };
        match marks.get(pc as usize) {
            Some(b'i') => {
                let key = (node, code, dest, pc);
                let child = match self.children.get(&key) {
                    Some(&c) => {
                        self.profile.nodes[c as usize].entries += 1;
                        c
                    }
                    None => {
                        let c = self.node(
                            Some(node),
                            NodeKind::Function {
                                code,
                                entered: dest,
                                site: pc,
                            },
                        );
                        self.children.insert(key, c);
                        c
                    }
                };
                if let Some(top) = self.stack.last_mut() {
                    top.levels.push(child);
                    top.node = child;
                }
            }
            Some(b'o') => {
                if let Some(top) = self.stack.last_mut() {
                    if top.levels.pop().is_some() {
                        top.node = top.levels.last().copied().unwrap_or(top.frame_node);
                    }
                }
            }
            _ => {}
        }
    }

    fn add(&mut self, node: u32, pc: u32, count: u64, gas: u64) {
        let key = (u64::from(node) << 32) | u64::from(pc);
        match self.samples.get(&key) {
            Some(&i) => {
                let s = &mut self.profile.samples[i as usize];
                s.count += count;
                s.gas += gas;
            }
            None => {
                self.samples.insert(key, self.profile.samples.len() as u32);
                self.profile.samples.push(Sample {
                    node,
                    pc,
                    count,
                    gas,
                });
            }
        }
    }

    /// The frame closes. `burned` is gas a failure burned, charged to the failing opcode (the
    /// frame's last pc, in its context then); `residual` a precompile's price or code deposit.
    pub(crate) fn close(&mut self, burned: u64, residual: u64) {
        let Some(top) = self.stack.pop() else {
            return;
        };
        if burned > 0 {
            self.add(top.node, top.pc, 0, burned);
        }
        if residual > 0 {
            self.add(top.frame_node, RESIDUAL_PC, 0, residual);
        }
    }

    pub(crate) fn finish(self) -> ContextProfile {
        self.profile
    }
}

/// The [`JumpMarks`] a gas report is given (`TracerSpec::Gas`): cloned with the spec.
#[derive(Clone)]
pub struct MarkSource(pub Arc<dyn JumpMarks>);

impl std::fmt::Debug for MarkSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MarkSource")
    }
}
