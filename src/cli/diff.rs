//! `chaintrace diff <HASH>`: the local replay's trace against the node's own
//! `debug_traceTransaction` with the same tracer and config, field by field. Exit 0 when they are
//! equal, [`exit::TRACES_DIFFER`](super::common::exit::TRACES_DIFFER) when they are not (each differing field is named on stderr).

use chaintrace::render::json::write_trace;
use chaintrace::replay::mined::Mined;
use clap::Args;
use serde_json::{json, Value};

use super::common::parse_hash;
use super::common::{exit, CliError, RpcArgs, TraceArgs};
use super::state::{node_tracer_options, print_note, report, StateArgs};

/// Compare the local replay's trace with the node's own debug_traceTransaction.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Transaction hash (0x + 64 hex digits).
    pub hash: String,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub state: StateArgs,
}

/// Every place where `a` (local) and `b` (node) differ, as `path: local X, node Y`.
pub fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => json_diff(&p, u, v, out),
                    (Some(u), None) => out.push(format!("{p}: local {u}, node absent")),
                    (None, Some(v)) => out.push(format!("{p}: local absent, node {v}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                json_diff(&format!("{path}[{i}]"), u, v, out);
            }
        }
        _ if a != b => out.push(format!("{path}: local {a}, node {b}")),
        _ => {}
    }
}

impl DiffArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let hash = parse_hash(&self.hash, "transaction hash")?;
        let spec = self.trace.spec(None)?;
        let hardfork = self.trace.hardfork()?;
        let opts = node_tracer_options(&self.trace)?;
        let source = self.rpc.source()?;
        let cache = self.state.cache();
        let mut mined = Mined::load(&source, cache.as_ref(), hash, self.state.mode(), hardfork)?;
        let traced = mined.trace(&source, cache.as_ref(), &spec)?;
        let mut buf = Vec::new();
        write_trace(&mut buf, &traced.result)?;
        let local: Value = serde_json::from_slice(&buf)
            .map_err(|e| CliError::source(format!("cannot read the local trace back: {e}")))?;
        let node = source
            .client
            .call("debug_traceTransaction", json!([hash, opts]))
            .map_err(|e| CliError::source(e.to_string()))?;
        print_note(&mined);
        report(&source, cache.as_ref(), Some(&mined), mined.passes);
        let mut diffs = Vec::new();
        json_diff("$", &local, &node, &mut diffs);
        if diffs.is_empty() {
            note!(
                "diff: the local trace equals the node's ({})",
                self.trace.tracer
            );
            return Ok(exit::OK);
        }
        eprintln!(
            "diff: {} field(s) differ between the local trace and the node's ({}):",
            diffs.len(),
            self.trace.tracer
        );
        for d in &diffs {
            eprintln!("  {d}");
        }
        Ok(exit::TRACES_DIFFER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_diff_names_each_field() {
        let a = json!({"gas": "0x1", "calls": [{"to": "0xa"}], "x": 1});
        let b = json!({"gas": "0x2", "calls": [{"to": "0xa"}], "y": 1});
        let mut d = Vec::new();
        json_diff("$", &a, &b, &mut d);
        assert_eq!(
            d,
            [
                "$.gas: local \"0x1\", node \"0x2\"",
                "$.x: local 1, node absent",
                "$.y: local absent, node 1"
            ]
        );
        let mut none = Vec::new();
        json_diff("$", &a, &a, &mut none);
        assert!(none.is_empty());
    }
}
