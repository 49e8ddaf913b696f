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
    let mut by_block: std::collections::BTreeMap<u64, Vec<serde_json::Value>> = Default::default();
    for l in String::from_utf8_lossy(&all.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        by_block
            .entry(v["block"].as_u64().unwrap())
            .or_default()
            .push(serde_json::json!({"txHash": v["txHash"], "result": v["result"]}));
    }
    assert!(by_block.len() >= 6, "{by_block:?}");
    for (n, lines) in &by_block {
        let one = run::cmd(&["block", &n.to_string(), "--rpc-url", &s.url, "--json"])
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
