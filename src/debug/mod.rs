//! `chaintrace debug`: a step debugger over the same replay and source maps as `tx`.
//!
//! Opening a transaction runs it once under [`StepRecorder::record`] (every step's pc and
//! frame, two bytes a step: see [`crate::trace::steps`]); [`model::Model`] moves through those
//! steps by opcode, line, call, internal function, breakpoint and search. What a step shows —
//! stack, memory, storage, return data, the Solidity stack with its arguments — is read by
//! running the transaction again on the same pre-state up to that step, from the last of the
//! checkpoints the opening run kept ([`crate::replay::checkpoint`], [`Session::view`]); nothing
//! per step is kept beyond the pc.

pub mod dap;
pub mod model;
pub mod panes;
pub mod ui;
pub mod variables;

use std::sync::Arc;

use alloy_primitives::Address;

use crate::names::state::Namer;
use crate::names::Names;
use crate::render::decoder::Decoder;
use crate::replay::access::{trace_access_keyed, Preimages};
use crate::replay::checkpoint::{self, Checkpoints};
use crate::replay::{EvmEnv, ReplayError, ReplayTx, TraceResult, TxOutcome};
use crate::source::StateSnapshot;
use crate::trace::gas_context::JumpMarks;
use crate::trace::steps::{StepLog, StepRecorder, StepView, Stepped};

/// What a debugger replays: the transaction, its environment and its exact pre-state (the
/// snapshot, with the block's earlier transactions applied in `pre`).
pub struct Target {
    pub snapshot: StateSnapshot,
    pub pre: revm::database::Cache,
    pub env: EvmEnv,
    pub tx: ReplayTx,
    /// Its position in its block.
    pub index: Option<u64>,
}

impl Target {
    /// The KECCAK256 preimages that explain the storage slots the transaction touched (one
    /// access run on the same state).
    pub fn preimages(&self) -> Result<Preimages, ReplayError> {
        let mut db = self.snapshot.db();
        db.cache = self.pre.clone();
        let (_, preimages, _) = trace_access_keyed(&mut db, &self.env, &self.tx)?;
        Ok(preimages)
    }

    /// Records every step of the transaction, keeping `checkpoints` of the machine along it.
    pub fn record(
        &self,
        marks: Option<Arc<dyn JumpMarks>>,
        checkpoints: Checkpoints,
    ) -> Result<(Stepped, Checkpoints, TxOutcome), ReplayError> {
        let mut db = self.snapshot.db();
        db.cache = self.pre.clone();
        let recorder = StepRecorder::record(marks);
        checkpoint::record(
            &mut db,
            &self.env,
            &self.tx,
            recorder,
            checkpoints,
            self.index,
        )
    }

    /// The machine at step `i` of the transaction whose steps `log` holds: the transaction run
    /// again from the last of `checkpoints` before it (from its start when there is none).
    pub fn capture(
        &self,
        i: usize,
        marks: Option<Arc<dyn JumpMarks>>,
        log: &StepLog,
        checkpoints: &Checkpoints,
    ) -> Result<StepView, ReplayError> {
        let mut db = self.snapshot.db();
        db.cache = self.pre.clone();
        let at = i as u32;
        let stepped = match checkpoints.before(at) {
            Some(m) => {
                let recorder = StepRecorder::capture_from(m.recorder(), log, at, marks);
                checkpoint::resume(&mut db, &self.env, &self.tx, m, recorder)?.finish()
            }
            None => {
                let recorder = StepRecorder::capture(at, marks);
                let t =
                    crate::replay::trace_steps(&mut db, &self.env, &self.tx, recorder, self.index)?;
                match t.result {
                    TraceResult::Steps(s) => *s,
                    _ => {
                        return Err(ReplayError::Tracer(
                            "the step recorder gave no steps".to_string(),
                        ))
                    }
                }
            }
        };
        stepped.view.ok_or_else(|| {
            ReplayError::Tracer(format!(
                "the replay did not reach step {i} again: it is not deterministic"
            ))
        })
    }
}

/// An open debugging session: the target, its steps and names.
pub struct Session {
    pub target: Target,
    pub model: model::Model,
    pub decoder: Decoder,
    marks: Arc<dyn JumpMarks>,
    /// The machine along the run, so that a view replays from near its step.
    checkpoints: Checkpoints,
    pub outcome: TxOutcome,
    /// `Transaction 0x…` or the fixture's name.
    pub title: String,
    /// What the session replays differently from the chain (a `--code-override`'s replaced
    /// code), said on screen and to the editor.
    pub notes: Vec<String>,
    /// The names (storage layouts among them) and the KECCAK256 preimages of one access run of
    /// the transaction: storage shown by variable, keys exact.
    names: Names,
    preimages: Preimages,
}

impl Session {
    /// Records every step of `target` and loads the maps of the code its frames ran.
    pub fn open(
        target: Target,
        names: Names,
        decoder: Decoder,
        title: String,
    ) -> Result<Session, ReplayError> {
        let marks = names.jump_marks();
        let (stepped, checkpoints, outcome) =
            target.record(Some(marks.clone()), Checkpoints::default())?;
        let model = model::Model::new(stepped.log, &|code, creation| {
            names.code_map(code, creation)
        });
        // Mapping keys and array indices from the hashes the transaction computed: one access
        // run, only when a storage layout can name a slot.
        let preimages = match names.has_layouts() {
            true => target.preimages()?,
            false => Preimages::default(),
        };
        Ok(Session {
            target,
            model,
            decoder,
            marks,
            checkpoints,
            outcome,
            title,
            notes: Vec::new(),
            names,
            preimages,
        })
    }

    /// The storage `address` read and wrote before step `v`, one row per variable where its
    /// contract's layout names the slot (`_balances[0x…]: 1000 → 995`), else per slot
    /// (`0x2: read 0x5 wrote 0x7`); transient slots after, raw. The storage pane and the
    /// adapter's Storage scope.
    pub fn storage_rows(&self, v: &StepView, address: Address) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut namer = self
            .names
            .has_layouts()
            .then(|| Namer::new(&self.names, &self.target.snapshot, &self.preimages));
        for (slot, seen) in v.storage.get(&address).into_iter().flatten() {
            let now = seen.written.or(seen.read).unwrap_or_default();
            let before = seen.read.unwrap_or(now);
            let named: Vec<_> = match namer.as_mut() {
                Some(n) => n
                    .slot(address, *slot, before, now, false)
                    .into_iter()
                    .filter(|c| c.var.is_some())
                    .collect(),
                None => Vec::new(),
            };
            if named.is_empty() {
                out.push((format!("{slot:#x}"), seen.describe()));
                continue;
            }
            for c in named {
                let name = c.var.map(|n| n.name).unwrap_or_default();
                let value = match (seen.read, seen.written) {
                    (Some(_), Some(_)) if c.before != c.after => {
                        format!("{} → {}", c.before, c.after)
                    }
                    (_, Some(_)) => format!("{} (written)", c.after),
                    _ => format!("{} (read)", c.after),
                };
                out.push((name, value));
            }
        }
        for (slot, seen) in v.transient.get(&address).into_iter().flatten() {
            out.push((format!("transient {slot:#x}"), seen.describe()));
        }
        out
    }

    /// What failed, as `tx` says it: the failing frame's decoded revert, or its halt (`out of
    /// gas`); `None` when nothing failed.
    pub fn failure_text(&self) -> Option<String> {
        let f = self.model.failure_step()?;
        let frame = &self.model.log.frames[self.model.log.frame(f) as usize];
        if frame.success() {
            return None;
        }
        if frame.reverted() {
            return Some(
                self.decoder
                    .describe_revert(&frame.output)
                    .map(|r| format!("reverted: {r}"))
                    .unwrap_or_else(|| "reverted without a reason".into()),
            );
        }
        let last = crate::trace::errors::LastStep::default();
        crate::trace::errors::geth_error(frame.result, last, frame.kind.is_create())
            .or_else(|| Some(format!("{:?}", frame.result)))
    }

    /// The Solidity stack at a step, innermost first: for each open frame (innermost first),
    /// its index in [`StepView::open`] and its functions as `tx` prints them (none where no
    /// source map covers its code), the outermost marked with how the frame was entered.
    pub fn stack(&self, v: &StepView) -> Vec<(usize, Vec<crate::render::source::StackEntry>)> {
        let mut out = Vec::new();
        for (k, open) in v.open.iter().enumerate().rev() {
            let f = &self.model.log.frames[open.frame as usize];
            let mut entries = Vec::new();
            if let Some(map) = self.model.map(open.frame) {
                let at = v.open.get(k + 1).and_then(|c| c.steps.caller);
                let input = (!f.kind.is_create()).then_some(&f.input[..]);
                entries = map.stack_at(&open.steps, at, input);
                if k > 0 {
                    if let Some(outer) = entries.last_mut() {
                        outer.reached_by = Some(f.kind);
                    }
                }
            }
            out.push((k, entries));
        }
        out
    }

    /// The machine at step `i`, read by running the transaction again up to it from the last
    /// checkpoint before it.
    pub fn view(&self, i: usize) -> Result<StepView, ReplayError> {
        self.target.capture(
            i,
            Some(self.marks.clone()),
            &self.model.log,
            &self.checkpoints,
        )
    }

    /// The checkpoints the session keeps (for the benches).
    pub fn checkpoints(&self) -> &Checkpoints {
        &self.checkpoints
    }
}

#[cfg(test)]
mod tests;
