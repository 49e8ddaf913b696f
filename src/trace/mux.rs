//! geth's `muxTracer` (eth/tracers/native/mux.go): several tracers in one replay.
//!
//! Its `tracerConfig` maps tracer names to their own configs; every hook goes to each child in
//! turn, and the result is an object of the children's results by name (a Go map, so the keys
//! come out sorted). A child is any name geth's directory resolves: a native tracer, muxTracer
//! itself, a named JavaScript tracer, or JavaScript source. geth's struct logger is not in that
//! directory, so it cannot be a child.

use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::Log;
use revm::{Database, Inspector};

use super::{Ctx, Tracer};

/// The children of a running mux, by name.
pub struct MuxTracer {
    pub children: Vec<(String, Tracer)>,
}

impl<DB: Database> Inspector<Ctx<DB>> for MuxTracer {
    #[inline]
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        for (_, t) in &mut self.children {
            t.step(interp, ctx);
        }
    }
    #[inline]
    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        for (_, t) in &mut self.children {
            t.step_end(interp, ctx);
        }
    }
    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        for (_, t) in &mut self.children {
            Inspector::<Ctx<DB>>::log(t, ctx, log.clone());
        }
    }
    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        for (_, t) in &mut self.children {
            t.log_full(interp, ctx, log.clone());
        }
    }
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        // No tracer answers a call itself; each sees it.
        let mut answer = None;
        for (_, t) in &mut self.children {
            answer = answer.or(t.call(ctx, inputs));
        }
        answer
    }
    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        for (_, t) in &mut self.children {
            t.call_end(ctx, inputs, outcome);
        }
    }
    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        let mut answer = None;
        for (_, t) in &mut self.children {
            answer = answer.or(t.create(ctx, inputs));
        }
        answer
    }
    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        for (_, t) in &mut self.children {
            t.create_end(ctx, inputs, outcome);
        }
    }
}
