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
