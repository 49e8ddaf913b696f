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

use super::state::Ctx;

/// The children of a running mux, by name (any inspector: `trace::Tracer` in the replay).
pub struct MuxTracer<T> {
    pub children: Vec<(String, T)>,
}

impl<DB: Database, T: Inspector<Ctx<DB>>> Inspector<Ctx<DB>> for MuxTracer<T> {
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

#[cfg(test)]
mod tests {
    use crate::trace::{TracerSpec, MAX_MUX_CHILDREN};
    use serde_json::{json, Map, Value};

    fn named(config: &Value) -> Result<TracerSpec, String> {
        TracerSpec::named("muxTracer", Some(config), std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())
    }

    /// `n` distinct JavaScript children (each its own source text).
    #[cfg(feature = "js")]
    fn scripts(n: usize) -> Map<String, Value> {
        (0..n)
            .map(|i| {
                let source =
                    format!("{{result: function() {{ return {i}; }}, fault: function() {{}}}}");
                (source, json!({}))
            })
            .collect()
    }

    /// At most 64 tracers under one muxTracer, nested ones counted (issue 43: 2,000 JavaScript
    /// children cost 2.5 s and 265 MB on one call); the error names the limit.
    #[cfg(feature = "js")]
    #[test]
    fn a_mux_runs_at_most_64_tracers() {
        assert_eq!(MAX_MUX_CHILDREN, 64);
        let ok = named(&Value::Object(scripts(64))).unwrap();
        assert_eq!(ok.tracers(), 64);
        let refused = named(&Value::Object(scripts(2000))).unwrap_err();
        assert_eq!(
            refused,
            "invalid tracerConfig for muxTracer: at most 64 tracers may run under muxTracer \
             (nested ones included), got 2000"
        );
        // Nested: 40 inside, 30 beside them.
        let mut outer = scripts(30);
        outer.insert("muxTracer".into(), Value::Object(scripts(40)));
        let refused = named(&Value::Object(outer)).unwrap_err();
        // Counted as made: 65 once the nested 40 came first, 70 once they came last.
        let at = |n: usize| {
            format!(
                "invalid tracerConfig for muxTracer: at most 64 tracers may run under muxTracer \
                 (nested ones included), got {n}"
            )
        };
        assert!(refused == at(65) || refused == at(70), "{refused}");
        let mut fits = scripts(20);
        fits.insert(
            "muxTracer".into(),
            json!({"callTracer": {}, "4byteTracer": {}}),
        );
        assert_eq!(named(&Value::Object(fits)).unwrap().tracers(), 22);
    }
}
