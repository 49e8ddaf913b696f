//! JavaScript tracer speed against its peers, measured side by side in one run.
//!
//! Workload: a storage/arithmetic loop contract (12,000 iterations: ~156k opcodes, ~2.9M gas).
//! Scripts: a step counter, tracers/gas_by_opcode.js and tracers/opcode_count.js.
//!
//! 1. In process, same replay: chaintrace's host vs revm-inspectors' `JsInspector` (the boa host
//!    anvil and reth use), each given a fresh tracer and a fresh state cache per run.
//! 2. End to end on a local anvil 1.7.1: `chaintrace tx HASH --tracer FILE --json` (a separate
//!    process that fetches the state over RPC and replays) vs anvil's own
//!    `debug_traceTransaction` with the same script.
//!
//! Run: `cargo bench --bench js_tracers --features bench-peers` (or scripts/bench-js.sh).
//! Prints medians and ratios; it asserts nothing about time.

#[path = "../tests/support/anvil.rs"]
mod anvil;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::replay::{trace, BlockInfo, EvmEnv, ReplayTx, TraceResult};
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::TracerSpec;
use revm::context::{BlockEnv, CfgEnv, Context, Journal, TxEnv};
use revm::database::CacheDB;
use revm::primitives::hardfork::SpecId;
use revm::{InspectEvm, MainBuilder};
use revm_inspectors::tracing::js::JsInspector;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const LOOP: Address = address!("000000000000000000000000000000000000c0de");
const ITERATIONS: u32 = 12_000;
/// In-process runs per side.
const RUNS: usize = 9;
const STEP_COUNTER: &str = "{count: 0, step: function(log) { this.count++; }, fault: function() {}, result: function() { return this.count; }}";

/// `for (i = N; i != 0; i--) slot0 += i;` in 22 bytes.
fn loop_runtime() -> Vec<u8> {
    let n = ITERATIONS.to_be_bytes();
    let mut code = vec![0x62, n[1], n[2], n[3]];
    code.extend(hex::decode("5b60005481016000556001900380600457 00".replace(' ', "")).unwrap());
    code
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        last = Some(out);
    }
    (median(times), last.unwrap())
}

struct Setup {
    snap: StateSnapshot,
    env: EvmEnv,
    tx: ReplayTx,
}

fn setup() -> Setup {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(
        SENDER,
        AccountData {
            balance: U256::from(10u128.pow(20)),
            nonce: 0,
            code: Bytes::new(),
        },
    );
    snap.insert_account(
        LOOP,
        AccountData {
            balance: U256::ZERO,
            nonce: 0,
            code: loop_runtime().into(),
        },
    );
    let info = BlockInfo {
        number: 1,
        timestamp: 1,
        gas_limit: 30_000_000,
        base_fee: Some(0),
        ..Default::default()
    };
    let env = EvmEnv::new(SpecId::PRAGUE, 1, &info);
    let tx = ReplayTx {
        hash: Default::default(),
        sender: SENDER,
        env: TxEnv {
            caller: SENDER,
            gas_limit: 5_000_000,
            gas_price: 1,
            kind: TxKind::Call(LOOP),
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
    };
    Setup { snap, env, tx }
}

fn ours(s: &Setup, script: &str) -> (Value, u64) {
    let spec = TracerSpec::js(script, None, Duration::from_secs(60)).unwrap();
    let mut db = s.snap.db();
    let t = trace(&mut db, &s.env, &s.tx, &spec, 0).unwrap();
    match t.result {
        TraceResult::Js(v) => (serde_json::from_str(v.get()).unwrap(), t.outcome.gas_used),
        _ => unreachable!(),
    }
}

type PeerDb<'a> = CacheDB<&'a StateSnapshot>;

fn peer(s: &Setup, script: &str) -> Value {
    let mut insp = JsInspector::new(script.to_string(), Value::Null).unwrap();
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

fn in_process(scripts: &[(&str, String)]) {
    let s = setup();
    println!("== in process, same replay ({ITERATIONS} loop iterations), median of {RUNS} ==");
    let (replay, _) = time(RUNS, || {
        let mut db = s.snap.db();
        chaintrace::replay::apply(&mut db, &s.env, &s.tx).unwrap()
    });
    println!(
        "(the replay alone, without a tracer: {:.1} ms)",
        replay.as_secs_f64() * 1e3
    );
    for (name, script) in scripts {
        // Interleaved, so that load from other processes hits both sides alike.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut v_ours, mut gas, mut v_peer) = (Value::Null, 0, Value::Null);
        for _ in 0..RUNS {
            let t = Instant::now();
            (v_ours, gas) = ours(&s, script);
            a.push(t.elapsed());
            let t = Instant::now();
            v_peer = peer(&s, script);
            b.push(t.elapsed());
        }
        let (t_ours, t_peer) = (median(a), median(b));
        let same = if v_ours == v_peer {
            "same result"
        } else {
            "results differ"
        };
        println!(
            "{name:<14} gasUsed {gas}  chaintrace {:>8.1} ms  JsInspector {:>8.1} ms  ratio {:.2}x  ({same})",
            t_ours.as_secs_f64() * 1e3,
            t_peer.as_secs_f64() * 1e3,
            t_peer.as_secs_f64() / t_ours.as_secs_f64()
        );
        if *name == "step counter" {
            println!("               steps: {v_ours}");
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

fn end_to_end(scripts: &[(&str, String)]) {
    let node = anvil::Anvil::start();
    let mut init = hex::decode("6016 80 600b 6000 39 6000 f3".replace(' ', "")).unwrap();
    init.extend(loop_runtime());
    let contract = node.deploy(&hex::encode(&init));
    let (hash, receipt) = node.send_and_wait(json!({"to": contract, "gas": "0x4c4b40"}));
    let gas_used = anvil::parse_u64(&receipt["gasUsed"]);
    println!("== end to end vs anvil 1.7.1 debug_traceTransaction, tx gasUsed {gas_used}, median of 3 ==");
    let bin = env!("CARGO_BIN_EXE_chaintrace");
    let dir = std::env::temp_dir().join(format!("chaintrace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, script) in scripts {
        let file = dir.join(format!("{}.js", name.replace(' ', "_")));
        std::fs::write(&file, script).unwrap();
        let (t_anvil, v_anvil) = time(3, || {
            node.trace(hash, json!({"tracer": script, "timeout": "60s"}))
        });
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
            "{name:<14} chaintrace {:>8.1} ms  anvil {:>8.1} ms  ratio {:.2}x  ({same})",
            t_ours.as_secs_f64() * 1e3,
            t_anvil.as_secs_f64() * 1e3,
            t_anvil.as_secs_f64() / t_ours.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let gas_by_op = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tracers/gas_by_opcode.js"),
    )
    .unwrap();
    let opcode_count = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tracers/opcode_count.js"),
    )
    .unwrap();
    let scripts = [
        ("step counter", STEP_COUNTER.to_string()),
        ("gas by opcode", gas_by_op),
        ("opcode count", opcode_count),
    ];
    // For a profiler: `JS_BENCH_PROFILE=N` runs only chaintrace's side of script N, 50 times.
    if let Some(i) = std::env::var("JS_BENCH_PROFILE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let s = setup();
        for _ in 0..50 {
            ours(&s, &scripts[i].1);
        }
        return;
    }
    in_process(&scripts);
    end_to_end(&scripts);
}
