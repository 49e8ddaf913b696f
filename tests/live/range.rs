//! `block A..B` in parallel: the output of N workers is byte-identical to a sequential run over
//! every block of the anvil scenario, in chain order, and a failing block is reported in place
//! (every block before it written, then the error). Live anvil (a test that cannot start it fails).

use crate::{anvil, run};
struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

fn range(url: &str, range: &str, jobs: &str) -> Out {
    let out = run::cmd(&["block", range, "--rpc-url", url, "--json"])
        .env("CHAINTRACE_JOBS", jobs)
        .output()
        .expect("run chaintrace");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn blocks(stdout: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object per line");
            v["block"].as_u64().expect("block number")
        })
        .collect()
}

/// A range's NDJSON lines grouped by block, each as `block N --json` prints it:
/// `[{"txHash","result"}]`.
fn per_block(stdout: &[u8]) -> std::collections::BTreeMap<u64, Vec<serde_json::Value>> {
    let mut by_block: std::collections::BTreeMap<u64, Vec<serde_json::Value>> = Default::default();
    for l in String::from_utf8_lossy(stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object per line");
        by_block
            .entry(v["block"].as_u64().expect("block number"))
            .or_default()
            .push(serde_json::json!({"txHash": v["txHash"], "result": v["result"]}));
    }
    by_block
}

#[test]
fn parallel_range_is_byte_identical_to_sequential() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    let seq = range(&s.url, &all, "1");
    assert_eq!(seq.code, 0, "{}", seq.stderr);
    let par = range(&s.url, &all, "4");
    assert_eq!(par.code, 0, "{}", par.stderr);
    assert_eq!(
        seq.stdout, par.stdout,
        "parallel output differs from sequential"
    );
    let order = blocks(&par.stdout);
    assert!(
        order.len() >= 6,
        "the range holds the scenario's transactions"
    );
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    assert_eq!(order.last(), Some(&last));
}

#[test]
fn failing_block_is_reported_in_place() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    // Blocks past the head do not exist: the range fails at last+1, after `..=last` is written.
    let r = format!("0..{}", last + 6);
    let seq = range(&s.url, &r, "1");
    let par = range(&s.url, &r, "4");
    assert_ne!(par.code, 0, "{}", par.stderr);
    assert_eq!(par.code, seq.code, "{} / {}", seq.stderr, par.stderr);
    assert_eq!(seq.stdout, par.stdout);
    assert_eq!(blocks(&par.stdout).last(), Some(&last));
    assert!(
        par.stderr.contains(&format!("{:#x}", last + 1))
            || par.stderr.contains(&(last + 1).to_string()),
        "{}",
        par.stderr
    );
}

/// `block A..B` carries each block's post-state to the next: every block's traces must equal
/// the single-block replay of that block (`block N --json`, on the node's state at its parent,
/// nothing carried), for every block of the scenario.
#[test]
fn carried_state_gives_what_each_block_alone_gives() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = range(&s.url, &format!("0..{last}"), "2");
    assert_eq!(all.code, 0, "{}", all.stderr);
    let by_block = per_block(&all.stdout);
    assert!(by_block.len() >= 6, "{by_block:?}");
    each_as_alone(&s.url, &by_block);
}

/// Each block's lines of a range are the block's own traces (`block N --json`, on the node's
/// state at its parent, nothing carried).
fn each_as_alone(url: &str, by_block: &std::collections::BTreeMap<u64, Vec<serde_json::Value>>) {
    for (n, lines) in by_block {
        let one = run::cmd(&["block", &n.to_string(), "--rpc-url", url, "--json"])
            .no_cache()
            .run();
        assert_eq!(one.code, 0, "block {n}: {}", one.stderr);
        let alone: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
        assert_eq!(
            &serde_json::Value::Array(lines.clone()),
            &alone,
            "block {n}: the range's traces differ from the block's own"
        );
    }
}

/// A node that refuses batches, and one without `eth_getBlockReceipts`, give the same output.
#[test]
fn ranges_work_on_nodes_without_batches_or_block_receipts() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let r = format!("0..{last}");
    let direct = range(&s.url, &r, "2");
    assert_eq!(direct.code, 0, "{}", direct.stderr);
    for args in [
        &["--fault", "no-batch"][..],
        &["--deny", "eth_getBlockReceipts"][..],
    ] {
        let p = crate::proxy::Proxy::start(&s.url, args);
        let via = range(&p.url, &r, "2");
        assert_eq!(via.code, 0, "{args:?}: {}", via.stderr);
        assert_eq!(via.stdout, direct.stdout, "{args:?}");
    }
}

/// Accounts touched again blocks later, across empty blocks, within one stretch: the carried
/// state (each account asked once, at the parent of the block that first touches it) gives
/// the prestateTracer output — balances and nonces, with and without diffMode — each block
/// gives alone and anvil's own tracer gives, and asks the node for fewer calls than the blocks
/// alone do.
#[test]
fn carried_state_across_empty_blocks_matches_each_block_alone() {
    let a = anvil::Anvil::start();
    let acc = a.accounts();
    let pay = |from: usize, to: usize, wei: u128| serde_json::json!({"from": acc[from], "to": acc[to], "value": anvil::qty(wei), "gas": "0x5208"});
    let first = a.block_number() + 1;
    a.send_in_one_block(vec![
        pay(1, 2, 10u128.pow(18)),
        pay(2, 3, 5 * 10u128.pow(17)),
    ]);
    a.mine(); // empty
    a.send_in_one_block(vec![
        pay(1, 2, 2 * 10u128.pow(18)),
        pay(3, 1, 10u128.pow(17)),
    ]);
    a.send_in_one_block(vec![pay(2, 1, 3 * 10u128.pow(17))]);
    a.mine(); // empty
    a.mine(); // empty
    a.send_in_one_block(vec![pay(1, 3, 7), pay(2, 3, 11), pay(3, 2, 13)]);
    let last = a.block_number();
    let r = format!("{first}..{last}");
    for config in [r#"{}"#, r#"{"diffMode":true}"#] {
        let p = crate::proxy::Proxy::start(a.url(), &[]);
        let out = run::cmd(&[
            "block",
            &r,
            "--rpc-url",
            &p.url,
            "--json",
            "--tracer",
            "prestateTracer",
            "--tracer-config",
            config,
        ])
        .env("CHAINTRACE_JOBS", "1")
        .no_cache()
        .output()
        .expect("run chaintrace");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let range_calls = p.stats()["calls"].as_u64().unwrap();
        let by_block = per_block(&out.stdout);
        assert_eq!(by_block.len(), 4, "{by_block:?}");
        // The peer: anvil's own prestateTracer for each transaction (its known differences
        // from geth removed, as in live.rs).
        let cfg: serde_json::Value = serde_json::from_str(config).unwrap();
        let mut failures = Vec::new();
        let mut compared = 0;
        for line in by_block.values().flatten() {
            compared += 1;
            let hash: alloy_primitives::B256 = line["txHash"].as_str().unwrap().parse().unwrap();
            let mut ours = line["result"].clone();
            anvil::strip_code_hash(&mut ours, &hash.to_string(), &mut failures);
            let mut theirs = a.trace(
                hash,
                serde_json::json!({"tracer": "prestateTracer", "tracerConfig": cfg}),
            );
            anvil::drop_empty_accounts(&mut theirs);
            if ours != theirs {
                failures.push(format!(
                    "{hash} ({config}):\n  node {theirs}\n  ours {ours}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert_eq!(compared, 8, "the eight transactions of the four blocks");
        let mut alone_calls = 0;
        for (n, lines) in &by_block {
            p.reset();
            let one = run::cmd(&[
                "block",
                &n.to_string(),
                "--rpc-url",
                &p.url,
                "--json",
                "--tracer",
                "prestateTracer",
                "--tracer-config",
                config,
            ])
            .no_cache()
            .run();
            assert_eq!(one.code, 0, "block {n}: {}", one.stderr);
            alone_calls += p.stats()["calls"].as_u64().unwrap();
            let alone: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
            assert_eq!(
                &serde_json::Value::Array(lines.clone()),
                &alone,
                "block {n} ({config}): the range's pre-state differs from the block's own"
            );
        }
        assert!(
            range_calls < alone_calls,
            "the carried range asked {range_calls} calls, the blocks alone {alone_calls}"
        );
    }
}

/// Sets at 0x…c0de a contract that writes 1 to the slot its calldata names, then mines 8
/// blocks, each a call of it with a slot of its own.
fn eight_slot_writes(a: &anvil::Anvil) {
    let c = "0x000000000000000000000000000000000000c0de";
    // SSTORE(CALLDATALOAD(0), 1)
    a.rpc("anvil_setCode", serde_json::json!([c, "0x60016000355500"]));
    for k in 0..8u64 {
        a.send_and_wait(serde_json::json!({
            "to": c,
            "data": format!("0x{:064x}", 0x100 + k * 7),
            "gas": "0x20000",
        }));
    }
}

/// A sequential range of the `blocks` blocks from `first` to the node's head, through a
/// counting proxy: its requests, and its output, checked to be each block's own traces.
fn counted_range(a: &anvil::Anvil, first: u64, blocks: usize) -> (u64, Out) {
    let last = a.block_number();
    let p = crate::proxy::Proxy::start(a.url(), &[]);
    let out = range(&p.url, &format!("{first}..{last}"), "1");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = p.stats()["requests"].as_u64().unwrap();
    let by_block = per_block(&out.stdout);
    assert_eq!(by_block.len(), blocks);
    each_as_alone(a.url(), &by_block);
    (requests, out)
}

/// Slots no look at a transaction shows (here the slot is the calldata's word) are found for
/// the whole stretch before it runs: each block of a sequential range writes a slot of its
/// own, and the range asks the node for them in one batch instead of one round trip per
/// block as it replays. The traces are each block's own, and the requests (through a
/// counting proxy) fewer than the blocks.
#[test]
fn a_stretch_fetches_the_slots_its_calls_compute_in_one_batch() {
    let a = anvil::Anvil::start();
    let first = a.block_number() + 1;
    eight_slot_writes(&a);
    let (requests, out) = counted_range(&a, first, 8);
    eprintln!("8 blocks, each writing a slot of its own: {requests} requests");
    assert!(
        requests <= 4,
        "{requests} requests for 8 blocks\n{}",
        out.stderr
    );
}

/// A range whose first stretch's look finds nothing (plain transfers) stops looking before
/// each stretch; when a block on the carried state then reads something new (the second
/// stretch's calls, each writing a slot of its own), the blocks after it are looked at once,
/// in one batch, instead of one round trip each.
#[test]
fn a_block_that_reads_something_new_has_the_rest_of_its_stretch_looked_at() {
    let a = anvil::Anvil::start();
    let acc = a.accounts();
    let first = a.block_number() + 1;
    for k in 0..8u64 {
        a.send_and_wait(serde_json::json!({
            "from": acc[1], "to": acc[2], "value": anvil::qty(1000 + k as u128), "gas": "0x5208",
        }));
    }
    eight_slot_writes(&a);
    let (requests, out) = counted_range(&a, first, 16);
    eprintln!("16 blocks, the last 8 each writing a slot of its own: {requests} requests");
    assert!(
        requests <= 8,
        "{requests} requests for 16 blocks\n{}",
        out.stderr
    );
}
