//! `chaintrace block A..B`: trace every transaction of an inclusive block range, streaming one
//! NDJSON line per transaction (`{"block","txHash","result"}`) in chain order.
//!
//! Memory stays bounded: a block's traces are written and dropped before the next block is
//! replayed, and a prefetch thread fetches at most one block ahead (the block with its transactions
//! and their receipts) while this one replays, so both cores work: one waits
//! on the node, the other executes. A progress bar (blocks, txs/s, ETA) goes to stderr only
//! when stderr is a terminal and `--quiet` is not given.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use chaintrace::render::json::write_trace;
use chaintrace::replay::mined::spec_for;
use chaintrace::replay::remote::replay_block;
use chaintrace::replay::EvmEnv;
use chaintrace::source::rpc::{RpcBlock, RpcSource, SourceError};
use chaintrace::trace::TracerSpec;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use super::common::{exit, CliError};
use super::tx::finish;

/// Parses `A..B` (decimal or 0x hex, inclusive). `None` when `s` is not a range.
pub fn parse_range(s: &str) -> Option<Result<(u64, u64), CliError>> {
    let (a, b) = s.trim().split_once("..")?;
    let num = |t: &str| {
        let t = t.trim();
        match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
    };
    Some(match (num(a), num(b)) {
        (Some(a), Some(b)) if a <= b => Ok((a, b)),
        _ => Err(CliError::input(format!(
            "malformed block range {s:?}: expected A..B with numbers A <= B (inclusive)"
        ))),
    })
}

/// A block fetched ahead of its replay.
struct Fetched {
    block: RpcBlock,
    receipts: Vec<Value>,
}

fn fetch(source: &RpcSource, n: u64) -> Result<Fetched, SourceError> {
    let block = source.block(&format!("{n:#x}"))?;
    let hashes: Vec<_> = block.txs.iter().map(|t| t.hash).collect();
    let receipts = source.receipts(&hashes)?;
    Ok(Fetched { block, receipts })
}

fn progress(blocks: u64, quiet: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(blocks),
        if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    pb.set_style(
        ProgressStyle::with_template("{bar:30} block {pos}/{len} {msg} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Streams the traces of blocks `from..=to`; returns the exit code (4 if any tx diverged).
pub fn run(
    source: &RpcSource,
    chain_id: u64,
    (from, to): (u64, u64),
    spec: &TracerSpec,
    hardfork: Option<SpecId>,
    quiet: bool,
) -> Result<(u8, usize), CliError> {
    let pb = progress(to - from + 1, quiet);
    let started = Instant::now();
    let (send, recv) = sync_channel::<Result<Fetched, SourceError>>(1);
    let mut code = exit::OK;
    let mut passes = 0;
    let mut txs = 0u64;
    std::thread::scope(|s| -> Result<(), CliError> {
        s.spawn(move || {
            for n in from..=to {
                let item = fetch(source, n);
                let failed = item.is_err();
                if send.send(item).is_err() || failed {
                    return;
                }
            }
        });
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for item in recv {
            let Fetched { block, receipts } = item?;
            if !block.txs.is_empty() {
                let spec_id = spec_for(chain_id, &block.info, hardfork);
                let env = EvmEnv::new(spec_id, chain_id, &block.info);
                let r = replay_block(source, &block, &env, 0, block.txs.len() - 1, spec)?;
                passes += r.passes;
                for (t, receipt) in r.traces.iter().zip(&receipts) {
                    write!(
                        out,
                        "{{\"block\":{},\"txHash\":\"{:?}\",\"result\":",
                        block.info.number, t.hash
                    )?;
                    write_trace(&mut out, &t.result)?;
                    out.write_all(b"}\n")?;
                    if finish(t, Some(receipt), true) == exit::DIVERGED {
                        code = exit::DIVERGED;
                    }
                }
                out.flush()?;
                txs += r.traces.len() as u64;
            }
            pb.inc(1);
            let rate = txs as f64 / started.elapsed().as_secs_f64().max(1e-3);
            pb.set_message(format!("{txs} txs, {rate:.1} txs/s"));
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    if code == exit::OK && !quiet {
        eprintln!("self-check: {txs} transactions in blocks {from}..{to} match their receipts");
    }
    Ok((code, passes))
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn ranges_are_inclusive_and_checked() {
        assert_eq!(parse_range("3..5").unwrap().unwrap(), (3, 5));
        assert_eq!(parse_range("0x10..0x11").unwrap().unwrap(), (16, 17));
        assert!(parse_range("7").is_none());
        assert!(parse_range("5..3").unwrap().is_err());
        assert!(parse_range("a..3").unwrap().is_err());
    }
}
