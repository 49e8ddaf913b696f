//! JavaScript tracer speed against its peers, measured side by side in one run.
//!
//! Workloads:
//! - `loop`: a storage/arithmetic loop contract (12,000 iterations: ~156k opcodes, ~2.9M gas);
//!   every opcode is a step, few are calls.
//! - `calls`: a loop making 2,000 calls into a token-like contract, each emitting an ERC-20
//!   `Transfer` (LOG3) with a 4-byte selector in its call data (~86k opcodes, 2,000 frames,
//!   ~6.5M gas); what the frame and log tracers act on.
//!
//! Scripts: a step counter and every library tracer in `tracers/`, each on both workloads.
//!
//! 1. In process, same replay: chaintrace's host vs revm-inspectors' `JsInspector` (the boa host
//!    anvil and reth use), each given a fresh tracer and a fresh state cache per run, runs
//!    interleaved so that load from other processes hits both sides alike.
//! 2. End to end on a local anvil 1.7.1 (the `loop` workload): `chaintrace tx HASH --tracer FILE
//!    --json` (a separate process that fetches the state over RPC and replays) vs anvil's own
//!    `debug_traceTransaction` with the same script.
//!
//! Run: `cargo bench --bench js_tracers --features bench-peers` (or scripts/bench-js.sh).
//! Prints medians and ratios; it asserts nothing about time.
//!
//! Environment: `JS_BENCH_ONLY=NAME[,NAME]` keeps the scripts whose name contains one of the
//! words; `JS_BENCH_E2E=0` skips the end-to-end part; `JS_BENCH_PROFILE=SCRIPT/WORKLOAD[/peer]`
//! (e.g. `step counter/loop`) runs only that side of one pair 20 times (`JS_BENCH_PROFILE_RUNS`),
//! with the tracer timeout `JS_BENCH_TIMEOUT_S` (default 60), for a profiler
//! (`valgrind --tool=callgrind`, whose instruction counts repeat from run to run).

#[path = "../tests/support/anvil.rs"]
mod anvil;
#[path = "support/workloads.rs"]
mod workloads;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use workloads::{loop_runtime, median, setup, time, Setup, CALLER, LOOP};

use alloy_primitives::hex;
use chaintrace::replay::{trace, TraceResult};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::TracerSpec;
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::database::CacheDB;
use revm::{InspectEvm, MainBuilder};
use revm_inspectors::tracing::js::JsInspector;
use serde_json::{json, Value};

const ITERATIONS: u32 = 12_000;
const CALLS: u32 = 2_000;
/// In-process runs per side.
const RUNS: usize = 9;
const STEP_COUNTER: &str = "{count: 0, step: function(log) { this.count++; }, fault: function() {}, result: function() { return this.count; }}";

/// The tracer timeout: 60 s, more under a profiler (`JS_BENCH_TIMEOUT_S`), which runs the same
/// work tens of times slower.
fn timeout() -> Duration {
    let secs = std::env::var("JS_BENCH_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

fn ours(s: &Setup, script: &str) -> (Value, u64) {
    let spec = TracerSpec::js(script, None, timeout()).unwrap();
    let mut db = s.snap.db();
    let t = trace(&mut db, &s.env, &s.tx, &spec, 0).unwrap();
    match t.result {
        TraceResult::Js(v) => (serde_json::from_str(v.get()).unwrap(), t.outcome.gas_used),
        _ => unreachable!(),
    }
}

type PeerDb<'a> = CacheDB<&'a StateSnapshot>;

fn peer(s: &Setup, script: &str) -> Value {
    // `setup` gets the tracerConfig as JSON text, as geth and chaintrace hand it ("{}" when none
    // is given); JsInspector passes its config value as is, so the text goes in as a string.
    let mut insp = JsInspector::new(script.to_string(), json!("{}")).unwrap();
    let db = CacheDB::new(&s.snap);
    type PeerCtx<'a> = Context<BlockEnv, TxEnv, CfgEnv, PeerDb<'a>, Journal<PeerDb<'a>>, ()>;
    let mut evm = PeerCtx::new(db, s.env.spec)
        .with_block(s.env.block.clone())
        .with_cfg(s.env.cfg.clone())
        .build_mainnet_with_inspector(&mut insp);
    let res = evm.inspect_tx(s.tx.env.clone()).unwrap();
    let db = evm.ctx.journaled_state.database.clone();
    drop(evm);
    insp.json_result(res, &s.tx.env, &s.env.block, &db).unwrap()
}

/// Where the two results differ: the first differing path, with both values.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{path}.{k}")),
                (p, q) => Some(format!("{path}.{k}: {p:?} vs {q:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => {
            let cut = |v: &Value| v.to_string().chars().take(120).collect::<String>();
            Some(format!("{path}: {} vs {}", cut(a), cut(b)))
        }
    }
}

fn in_process(scripts: &[(String, String)], workloads: &[Setup]) {
    println!("== in process, same replay, median of {RUNS} ==");
    for s in workloads {
        let (replay, _) = time(RUNS, || {
            let mut db = s.snap.db();
            chaintrace::replay::apply(&mut db, &s.env, &s.tx).unwrap()
        });
        println!(
            "(workload {}: the replay alone, without a tracer: {:.1} ms)",
            s.name,
            replay.as_secs_f64() * 1e3
        );
    }
    println!(
        "{:<22} {:<6} {:>9} {:>12} {:>13} {:>8}",
        "script", "work", "gasUsed", "chaintrace", "JsInspector", "ratio"
    );
    for (name, script) in scripts {
        for s in workloads {
            // Interleaved, so that load from other processes hits both sides alike.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (mut v_ours, mut gas, mut v_peer) = (Value::Null, 0, Value::Null);
            for _ in 0..RUNS {
                let t = Instant::now();
                (v_ours, gas) = ours(s, script);
                a.push(t.elapsed());
                let t = Instant::now();
                v_peer = peer(s, script);
                b.push(t.elapsed());
            }
            let (t_ours, t_peer) = (median(a), median(b));
            let same = match first_difference(&v_ours, &v_peer, "") {
                None => "same result".to_string(),
                Some(d) => format!("results differ: {d}"),
            };
            println!(
                "{name:<22} {:<6} {gas:>9} {:>9.1} ms {:>10.1} ms {:>7.2}x  ({same})",
                s.name,
                t_ours.as_secs_f64() * 1e3,
                t_peer.as_secs_f64() * 1e3,
                t_peer.as_secs_f64() / t_ours.as_secs_f64()
            );
        }
    }
}

/// The top-level keys whose values differ, with both values (ours, then the peer's).
fn differences(ours: &Value, peer: &Value) -> String {
    let (Some(a), Some(b)) = (ours.as_object(), peer.as_object()) else {
        return format!("{ours} vs {peer}");
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.iter()
        .filter(|k| a.get(**k) != b.get(**k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or("-".to_string(), Value::to_string);
            format!("{k} {} vs {}", show(a.get(*k)), show(b.get(*k)))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn end_to_end(scripts: &[(String, String)]) {
    let node = anvil::Anvil::start();
    let mut init = hex::decode("6016 80 600b 6000 39 6000 f3".replace(' ', "")).unwrap();
    init.extend(loop_runtime(ITERATIONS));
    let contract = node.deploy(&hex::encode(&init));
    let (hash, receipt) = node.send_and_wait(json!({"to": contract, "gas": "0x4c4b40"}));
    let gas_used = anvil::parse_u64(&receipt["gasUsed"]);
    println!("== end to end vs anvil 1.7.1 debug_traceTransaction, loop tx gasUsed {gas_used}, median of 3 ==");
    let bin = env!("CARGO_BIN_EXE_chaintrace");
    let dir = std::env::temp_dir().join(format!("chaintrace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, script) in scripts {
        let file = dir.join(format!("{}.js", name.replace([' ', '.'], "_")));
        std::fs::write(&file, script).unwrap();
        // geth hands `setup` the tracerConfig as JSON text; anvil passes the value as is, so it
        // gets the text "{}" (what chaintrace passes when no config is given).
        let cfg = json!({"tracer": script, "timeout": "60s", "tracerConfig": "{}"});
        let anvil = node.try_rpc("debug_traceTransaction", json!([hash, cfg]));
        let Ok(Ok(v_anvil)) = anvil else {
            println!("{name:<22} anvil failed: {anvil:?}");
            continue;
        };
        let (t_anvil, _) = time(3, || node.trace(hash, cfg.clone()));
        let (t_ours, out) = time(3, || {
            Command::new(bin)
                .args([
                    "tx",
                    &format!("{hash}"),
                    "--rpc-url",
                    node.url(),
                    "--json",
                    "--timeout",
                    "60s",
                ])
                .arg("--tracer")
                .arg(&file)
                .output()
                .unwrap()
        });
        assert!(
            out.status.success(),
            "chaintrace failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v_ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let same = if v_ours == v_anvil {
            "same result".to_string()
        } else {
            format!("results differ: {}", differences(&v_ours, &v_anvil))
        };
        println!(
            "{name:<22} chaintrace {:>8.1} ms  anvil {:>8.1} ms  ratio {:.2}x  ({same})",
            t_ours.as_secs_f64() * 1e3,
            t_anvil.as_secs_f64() * 1e3,
            t_anvil.as_secs_f64() / t_ours.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The step counter, then every library tracer by file name.
fn scripts() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracers");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    files.sort();
    let mut out = vec![("step counter".to_string(), STEP_COUNTER.to_string())];
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, std::fs::read_to_string(&f).unwrap()));
    }
    if let Ok(only) = std::env::var("JS_BENCH_ONLY") {
        let words: Vec<&str> = only.split(',').map(str::trim).collect();
        out.retain(|(n, _)| words.iter().any(|w| n.contains(w)));
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scripts = scripts();
    let workloads = [
        setup("loop", LOOP, ITERATIONS, CALLS),
        setup("calls", CALLER, ITERATIONS, CALLS),
    ];
    // For a profiler: one side of one pair, 20 times.
    if let Ok(p) = std::env::var("JS_BENCH_PROFILE") {
        let mut parts = p.split('/');
        let (script, work, side) = (parts.next(), parts.next(), parts.next());
        let script = scripts
            .iter()
            .find(|(n, _)| Some(n.as_str()) == script)
            .unwrap_or_else(|| panic!("JS_BENCH_PROFILE: no script {script:?}"));
        let s = workloads
            .iter()
            .find(|s| Some(s.name) == work)
            .unwrap_or_else(|| panic!("JS_BENCH_PROFILE: no workload {work:?}"));
        let runs = std::env::var("JS_BENCH_PROFILE_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20);
        for _ in 0..runs {
            if side == Some("peer") {
                peer(s, &script.1);
            } else {
                ours(s, &script.1);
            }
        }
        return;
    }
    in_process(&scripts, &workloads);
    if std::env::var("JS_BENCH_E2E").as_deref() != Ok("0") {
        end_to_end(&scripts);
    }
}
