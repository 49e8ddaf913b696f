//! `chaintrace debug`'s cost to open a transaction, against what `cast run --debug` keeps:
//! revm-inspectors' `TracingInspector` recording every step with its stack and memory
//! (`TracingInspectorConfig::all()`, the configuration Foundry's debugger records with).
//!
//! Each side runs in a child process of its own (this binary again, `--side NAME WORKLOAD`)
//! so that its peak resident memory (VmHWM) is its alone. Workloads (benches/support):
//! - `loop-1m`: the storage loop, 4,000 iterations (~1.0M gas);
//! - `loop-30m`: the storage loop, 119,000 iterations (~29.8M gas, 1.5M steps);
//! - `arith-30m`: a loop of cheap opcodes only (~30M gas, ~8.1M steps: the most steps 30M gas
//!   buys with a 7-opcode loop).
//!
//! chaintrace's side opens the transaction as `chaintrace debug` does — every step recorded
//! (pc and frame) with checkpoints of the machine along the run, then the view at the last
//! step, read by replaying up to it from the checkpoint before it; then it times 19 moves.
//!
//! `cargo bench --bench debug_steps` (release profile).

#[path = "support/workloads.rs"]
#[allow(dead_code)]
mod workloads;

use std::process::Command;
use std::time::Instant;

use alloy_primitives::{hex, U256};
use chaintrace::debug::{Session, Target};
use chaintrace::names::Names;
use chaintrace::source::AccountData;
use revm::context::{BlockEnv, CfgEnv, TxEnv};
use revm::{Context, InspectEvm, Journal, MainBuilder};
use revm_inspectors::tracing::{TracingInspector, TracingInspectorConfig};
use workloads::{setup, Setup, LOOP};

/// `for (i = n; i != 0; i--) {}`: PUSH3 n, then JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 4 JUMPI.
fn arith_runtime(n: u32) -> Vec<u8> {
    let n = n.to_be_bytes();
    let mut code = vec![0x62, n[1], n[2], n[3]];
    code.extend(hex::decode("5b6001900380600457 00".replace(" ", "")).unwrap());
    code
}

fn workload(name: &str) -> Setup {
    let mut s = match name {
        "loop-1m" => setup("loop-1m", LOOP, 4_000, 0),
        "loop-30m" => setup("loop-30m", LOOP, 119_000, 0),
        "arith-30m" => {
            let mut s = setup("arith-30m", LOOP, 1, 0);
            s.snap.insert_account(
                LOOP,
                AccountData {
                    balance: U256::ZERO,
                    nonce: 0,
                    code: arith_runtime(1_150_000).into(),
                },
            );
            s
        }
        other => panic!("unknown workload {other}"),
    };
    s.tx.env.gas_limit = 30_000_000;
    s
}

/// Peak resident memory of this process, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn side(which: &str, name: &str) {
    let w = workload(name);
    let (mut slowest_move, mut moving) = (0f64, 0f64);
    let start = Instant::now();
    let steps = match which {
        "chaintrace" => {
            let names = Names::load(&[], &[], None).unwrap();
            let target = Target {
                snapshot: w.snap,
                pre: Default::default(),
                env: w.env,
                tx: w.tx,
                index: None,
            };
            let decoder = names.decoder();
            let s = Session::open(target, names, decoder, name.into()).unwrap();
            let last = s.model.len() - 1;
            let v = s.view(last).unwrap();
            assert_eq!(v.step as usize, last);
            // One move, as a key or the adapter makes it: the slowest of a step back from the
            // end, a jump to the middle, one to the start, and 16 more spread over the run, each
            // the step just before a multiple of the checkpoints' spacing (the longest replay
            // from the checkpoint before it).
            let spacing = s.checkpoints().spacing() as usize;
            let spread = (1..=16).map(|k| {
                let i = last * k / 17;
                match i / spacing * spacing {
                    0 => i,
                    b => b - 1,
                }
            });
            for i in [last - 1, last / 2, 0].into_iter().chain(spread) {
                let t = Instant::now();
                let v = s.view(i).unwrap();
                assert_eq!(v.step as usize, i);
                let took = t.elapsed().as_secs_f64();
                slowest_move = slowest_move.max(took);
                moving += took;
            }
            s.model.len()
        }
        "peer" => {
            let mut insp = TracingInspector::new(TracingInspectorConfig::all());
            type Ctx<'a> = Context<
                BlockEnv,
                TxEnv,
                CfgEnv,
                chaintrace::source::ReplayDb<'a>,
                Journal<chaintrace::source::ReplayDb<'a>>,
                (),
            >;
            let mut evm = Ctx::new(w.snap.db(), w.env.spec)
                .with_block(w.env.block.clone())
                .with_cfg(w.env.cfg.clone())
                .build_mainnet_with_inspector(&mut insp);
            let r = evm.inspect_tx(w.tx.env.clone()).unwrap();
            assert!(r.result.is_success());
            drop(evm);
            insp.traces()
                .nodes()
                .iter()
                .map(|n| n.trace.steps.len())
                .sum()
        }
        other => panic!("unknown side {other}"),
    };
    // The moves are timed inside the open: the open's own time leaves them out.
    let open = start.elapsed().as_secs_f64() - moving;
    println!(
        "{} {} {} {}",
        steps,
        open.max(0.0),
        peak_kib(),
        slowest_move
    );
}

fn run(which: &str, name: &str) -> (usize, f64, u64, f64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--side", which, name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap();
    let v: Vec<&str> = line.split(' ').collect();
    (
        v[0].parse().unwrap(),
        v[1].parse().unwrap(),
        v[2].parse().unwrap(),
        v[3].parse().unwrap(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--side") {
        side(&args[i + 1], &args[i + 2]);
        return;
    }
    // A baseline: the process with the workload built and nothing run.
    println!("chaintrace debug: opening a transaction (record every step, view the last)");
    println!(
        "peer: revm-inspectors TracingInspector, TracingInspectorConfig::all() (cast run --debug)"
    );
    println!(
        "{:<10} {:>10} {:>14} {:>14} {:>12} {:>12} {:>8} {:>12}",
        "workload",
        "steps",
        "peak ours",
        "peak peer",
        "open ours",
        "run peer",
        "memory",
        "move ours"
    );
    for name in ["loop-1m", "loop-30m", "arith-30m"] {
        let (steps, t_ours, m_ours, move_ours) = run("chaintrace", name);
        let (peer_steps, t_peer, m_peer, _) = run("peer", name);
        assert_eq!(steps, peer_steps, "{name}: both sides count the same steps");
        println!(
            "{:<10} {:>10} {:>10.1} MiB {:>10.1} MiB {:>10.3} s {:>10.3} s {:>7.1}× {:>9.1} ms",
            name,
            steps,
            m_ours as f64 / 1024.0,
            m_peer as f64 / 1024.0,
            t_ours,
            t_peer,
            m_peer as f64 / m_ours.max(1) as f64,
            move_ours * 1000.0,
        );
    }
}
