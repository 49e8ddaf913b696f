//! chaintrace against reth's own builder, in process: the Parity `trace`, `stateDiff` and
//! `vmTrace` of the same transactions on the same state, ours (the `parity` tracer) beside
//! revm-inspectors' `TracingInspector` configured as reth configures it for
//! `trace_replayTransaction` (`TracingInspectorConfig::from_parity_config`) and its
//! `ParityTraceBuilder::into_trace_results_with_state`. revm-inspectors is reth's tracing
//! library (the builder reth's `trace_*` answers come from), a peer that is right by
//! definition for these shapes. revm-inspectors is a dev-dependency, without its JS tracer.
//!
//! Workloads: every geth callTracer and flatCallTracer fixture (creations, reverts,
//! selfdestructs, precompiles, out-of-gas frames from mainnet), and the benchmarks' loop and
//! calls programs.

#[path = "../../benches/support/workloads.rs"]
#[allow(dead_code)]
mod workloads;

use alloy_primitives::map::HashSet;
use std::path::Path;

use alloy_rpc_types_trace::parity::{TraceResults, TraceType};
use chaintrace::replay::{
    fixture_env, fixture_snapshot, fixture_tx, trace, EvmEnv, ReplayTx, TraceResult,
};
use chaintrace::source::fixture::Fixture;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::TracerSpec;
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::database::CacheDB;
use revm::{InspectEvm, MainBuilder};
use revm_inspectors::tracing::{TracingInspector, TracingInspectorConfig};
use serde_json::Value;

/// The snapshot as a node's database answers it: an empty account does not exist (EIP-161;
/// geth's fixtures list accounts a transaction creates as empty ones, which no chain holds).
#[derive(Clone)]
struct AsNode<'a>(&'a StateSnapshot);

impl revm::DatabaseRef for AsNode<'_> {
    type Error = <StateSnapshot as revm::DatabaseRef>::Error;
    fn basic_ref(
        &self,
        a: alloy_primitives::Address,
    ) -> Result<Option<revm::state::AccountInfo>, Self::Error> {
        Ok(self.0.basic_ref(a)?.filter(|i| !i.is_empty()))
    }
    fn code_by_hash_ref(
        &self,
        h: alloy_primitives::B256,
    ) -> Result<revm::bytecode::Bytecode, Self::Error> {
        self.0.code_by_hash_ref(h)
    }
    fn storage_ref(
        &self,
        a: alloy_primitives::Address,
        k: alloy_primitives::U256,
    ) -> Result<alloy_primitives::U256, Self::Error> {
        self.0.storage_ref(a, k)
    }
    fn block_hash_ref(&self, n: u64) -> Result<alloy_primitives::B256, Self::Error> {
        self.0.block_hash_ref(n)
    }
}

type PeerDb<'a> = CacheDB<AsNode<'a>>;

fn peer(snap: &StateSnapshot, env: &EvmEnv, tx: &ReplayTx) -> TraceResults {
    let types: HashSet<TraceType> = [TraceType::Trace, TraceType::StateDiff, TraceType::VmTrace]
        .into_iter()
        .collect();
    let mut insp = TracingInspector::new(TracingInspectorConfig::from_parity_config(&types));
    type PeerCtx<'a> = Context<BlockEnv, TxEnv, CfgEnv, PeerDb<'a>, Journal<PeerDb<'a>>, ()>;
    let mut evm = PeerCtx::new(CacheDB::new(AsNode(snap)), env.spec)
        .with_block(env.block.clone())
        .with_cfg(env.cfg.clone())
        .build_mainnet_with_inspector(&mut insp);
    let res = evm.inspect_tx(tx.env.clone()).unwrap();
    let db = evm.ctx.journaled_state.database.clone();
    drop(evm);
    insp.into_parity_builder()
        .into_trace_results_with_state(&res, &types, &db)
        .unwrap()
}

fn ours(snap: &StateSnapshot, env: &EvmEnv, tx: &ReplayTx) -> TraceResults {
    let mut db = snap.db();
    let t = trace(
        &mut db,
        env,
        tx,
        &TracerSpec::ParityReplay { vm_trace: true },
        0,
    )
    .unwrap();
    let TraceResult::Parity(p) = t.result else {
        panic!("not a Parity result")
    };
    TraceResults {
        output: t.outcome.output,
        state_diff: p.state_diff,
        trace: p.traces.into_iter().map(|e| e.trace).collect(),
        vm_trace: p.vm_trace,
    }
}

/// The first path where two JSON values differ, with both sides (cut).
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{path}.{k}"),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => {
            let cut = |v: &Value| v.to_string().chars().take(300).collect::<String>();
            Some(format!("{path}: ours {} vs reth {}", cut(a), cut(b)))
        }
    }
}

fn compare(
    name: &str,
    snap: &StateSnapshot,
    env: &EvmEnv,
    tx: &ReplayTx,
    failures: &mut Vec<String>,
) {
    let a = serde_json::to_value(ours(snap, env, tx)).unwrap();
    let b = serde_json::to_value(peer(snap, env, tx)).unwrap();
    if let Some(d) = first_difference(&a, &b, "") {
        failures.push(format!("{name}: {d}"));
    }
}

#[test]
fn trace_state_diff_and_vm_trace_equal_reths_builder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/geth");
    let mut failures = Vec::new();
    let mut n = 0;
    for sub in ["call_tracer", "call_tracer_flat"] {
        let Ok(dir) = std::fs::read_dir(root.join(sub)) else {
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "peers: ../shared/conformance is absent under CI"
            );
            continue;
        };
        let mut files: Vec<_> = dir.map(|e| e.unwrap().path()).collect();
        files.sort();
        for path in files {
            let fx = Fixture::load(path.to_str().unwrap()).unwrap();
            let snap = fixture_snapshot(&fx);
            let env = fixture_env(&fx, None);
            let tx = fixture_tx(&fx).unwrap();
            compare(
                &format!("{sub}/{}", path.file_name().unwrap().to_string_lossy()),
                &snap,
                &env,
                &tx,
                &mut failures,
            );
            n += 1;
        }
    }
    for s in [
        workloads::setup("loop", workloads::LOOP, 40, 0),
        workloads::setup("calls", workloads::CALLER, 0, 20),
    ] {
        compare(s.name, &s.snap, &s.env, &s.tx, &mut failures);
        n += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {n} differ from revm-inspectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("peers: {n} transactions' trace, stateDiff and vmTrace equal to reth's builder");
}
