//! `chaintrace debug`: a step debugger over the same replay and source maps as `tx`.
//!
//! Opening a transaction runs it once under [`StepRecorder::record`] (every step's pc and
//! frame, two bytes a step: see [`crate::trace::steps`]); [`model::Model`] moves through those
//! steps by opcode, line, call, internal function, breakpoint and search. What a step shows —
//! stack, memory, storage, return data, the Solidity stack with its arguments — is read by
//! running the transaction again on the same pre-state up to that step
//! ([`Session::view`]); nothing per step is kept beyond the pc.

pub mod model;
pub mod panes;
pub mod ui;

use std::sync::Arc;

use crate::names::Names;
use crate::render::decoder::Decoder;
use crate::replay::{EvmEnv, ReplayError, ReplayTx, TraceResult, TxOutcome};
use crate::source::StateSnapshot;
use crate::trace::gas_context::JumpMarks;
use crate::trace::steps::{StepRecorder, StepView, Stepped};

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
    /// Runs the transaction under `recorder`.
    pub fn run(&self, recorder: StepRecorder) -> Result<(Stepped, TxOutcome), ReplayError> {
        let mut db = self.snapshot.db();
        db.cache = self.pre.clone();
        let t = crate::replay::trace_steps(&mut db, &self.env, &self.tx, recorder, self.index)?;
        match t.result {
            TraceResult::Steps(s) => Ok((*s, t.outcome)),
            _ => Err(ReplayError::Tracer(
                "the step recorder gave no steps".to_string(),
            )),
        }
    }
}

/// An open debugging session: the target, its steps and names.
pub struct Session {
    pub target: Target,
    pub model: model::Model,
    pub decoder: Decoder,
    marks: Arc<dyn JumpMarks>,
    pub outcome: TxOutcome,
    /// `Transaction 0x…` or the fixture's name.
    pub title: String,
}

impl Session {
    /// Records every step of `target` and loads the maps of the code its frames ran.
    pub fn open(
        target: Target,
        names: &Names,
        decoder: Decoder,
        title: String,
    ) -> Result<Session, ReplayError> {
        let (stepped, outcome) = target.run(StepRecorder::record())?;
        let model = model::Model::new(stepped.log, &|code, creation| {
            names.code_map(code, creation)
        });
        Ok(Session {
            target,
            model,
            decoder,
            marks: names.jump_marks(),
            outcome,
            title,
        })
    }

    /// The machine at step `i`, read by running the transaction again up to it.
    pub fn view(&self, i: usize) -> Result<StepView, ReplayError> {
        let (stepped, _) = self
            .target
            .run(StepRecorder::capture(i as u32, Some(self.marks.clone())))?;
        stepped.view.ok_or_else(|| {
            ReplayError::Tracer(format!(
                "the replay did not reach step {i} again: it is not deterministic"
            ))
        })
    }
}

#[cfg(test)]
mod tests;
