//! Faults: chaintrace against a misbehaving node (the loopback proxy of `examples/rpc_proxy.rs`
//! in front of a live anvil). Each case ends in the right trace or a clear error with its
//! documented exit code, and nothing outlives the timeout budget.

use crate::{anvil, proxy};
use std::time::{Duration, Instant};

use proxy::{chaintrace, Proxy};

fn trace(url: &str, hash: &str, extra: &[&str]) -> proxy::Run {
    let mut a = vec!["tx", hash, "--rpc-url", url, "--json", "--no-cache"];
    if !extra.contains(&"--rpc-timeout") {
        a.extend(["--rpc-timeout", "2"]);
    }
    a.extend_from_slice(extra);
    chaintrace(&a)
}

#[test]
fn faults_end_in_the_right_trace_or_a_clear_error() {
    let s = anvil::scenario();
    let hash = format!("{:?}", s.tx("block: delegatecall #2 (reads #1)").hash);
    let want = trace(&s.url, &hash, &[]);
    assert_eq!(want.code, 0, "{}", want.stderr);

    // Recoverable: the right trace.
    for (fault, extra) in [
        ("429-first", vec![]),
        ("drop20", vec![]),
        ("drop20", vec!["--state-source", "rpc"]),
    ] {
        let p = Proxy::start(&s.url, &["--fault", fault]);
        let run = trace(&p.url, &hash, &extra);
        assert_eq!(run.code, 0, "{fault}: {}", run.stderr);
        assert_eq!(run.stdout, want.stdout, "{fault}");
        assert!(
            run.stderr.contains("self-check: replay matches"),
            "{fault}: {}",
            run.stderr
        );
    }

    // Unrecoverable: exit 2, a message naming the problem, nothing on stdout.
    for (fault, says) in [
        ("truncate", "unusable response"),
        ("wrong-ids", "unusable response"),
        ("rpc-error", "internal error: injected fault"),
        ("hang", "timed out"),
    ] {
        let p = Proxy::start(&s.url, &["--fault", fault]);
        let t = Instant::now();
        let run = trace(&p.url, &hash, &["--rpc-timeout", "1"]);
        let took = t.elapsed();
        assert_eq!(run.code, 2, "{fault}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{fault}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{fault}: {}", run.stdout);
        // One call is bounded by timeout * 4 (retries and backoff included).
        assert!(took < Duration::from_secs(6), "{fault}: took {took:?}");
    }
}

#[test]
fn batch_refusing_node_is_served_with_single_requests() {
    let s = anvil::scenario();
    let hash = format!("{:?}", s.tx("CREATE + CREATE2 (+ failed CREATE)").hash);
    let want = trace(&s.url, &hash, &["--state-source", "rpc"]);
    let p = Proxy::start(&s.url, &["--fault", "no-batch"]);
    let run = trace(&p.url, &hash, &["--state-source", "rpc"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want.stdout);
}

/// A node that answers another transaction or block than the one asked for is not a source:
/// exit 2, naming the field and both values; nothing is traced from its data.
#[test]
fn a_node_answering_another_tx_or_block_is_refused() {
    let s = anvil::scenario();
    let hash = format!("{:?}", s.tx("block: delegatecall #2 (reads #1)").hash);
    let p = Proxy::start(&s.url, &["--fault", "wrong-hash"]);
    for extra in [vec![], vec!["--state-source", "rpc"]] {
        let run = trace(&p.url, &hash, &extra);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("the node returned the wrong transaction: asked for"),
            "{extra:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("its `hash` is"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    let block = chaintrace(&["block", "1", "--rpc-url", &p.url, "--json"]);
    assert_eq!(block.code, 2, "{}", block.stderr);
    assert!(block.stderr.contains("wrong"), "{}", block.stderr);
}
