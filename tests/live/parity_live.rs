//! Parity's `trace_*` entries on the live anvil scenario: chaintrace's own (`tx --tracer
//! parity`, and `serve`'s `trace_*` methods through `cast rpc`) against anvil 1.7.1's
//! `trace_transaction` and `trace_block`, which anvil builds with revm-inspectors'
//! ParityTraceBuilder, reth's builder. The reference is reth's current builder
//! (revm-inspectors 0.44.3); where anvil 1.7.1's older one differs, the difference is named
//! below with the line of 0.44.3 that decides it, and anvil's side is mapped to it.

use serde_json::{json, Value};

use crate::serve_support::Serve;
use crate::{anvil, run};

fn ours(url: &str, hash: &str) -> Value {
    let r = run::cmd(&["tx", hash, "--rpc-url", url, "--json", "--tracer", "parity"])
        .no_cache()
        .run();
    assert!(r.code == 0 || r.code == 3, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn is_precompile(to: &str) -> bool {
    to.len() == 42
        && to[2..38].chars().all(|c| c == '0')
        && to != "0x0000000000000000000000000000000000000000"
}

/// anvil 1.7.1's entries as revm-inspectors 0.44.3 builds them:
/// 1. calls to precompiles are left out (`TracingInspectorConfig::default_parity`:
///    `exclude_precompile_calls: true`, and `is_precompile_call`: not the root, no value);
///    anvil keeps them, so they are removed and the trace addresses renumbered;
/// 2. a static-call write is `Mutable Call In Static Context` (tracing/utils.rs
///    `fmt_error_msg`: `StateChangeDuringStaticCall`), where anvil prints revm's variant name;
/// 3. a reverted creation's result is a call's, `{gasUsed, output}` (tracing/types.rs
///    `parity_trace_output`: "A reverted creation reports its gas and revert data like a
///    call"), where anvil gives `{address, code, gasUsed}`.
pub(crate) fn as_reth(anvil: &Value) -> Value {
    // Trace addresses are per transaction: each transaction's entries apart.
    let mut out: Vec<Value> = Vec::new();
    let mut group: Vec<Value> = Vec::new();
    for e in anvil.as_array().unwrap() {
        if group
            .last()
            .is_some_and(|g| g["transactionHash"] != e["transactionHash"])
        {
            out.extend(as_reth_tx(&std::mem::take(&mut group)));
        }
        group.push(e.clone());
    }
    out.extend(as_reth_tx(&group));
    Value::Array(out)
}

fn as_reth_tx(entries: &[Value]) -> Vec<Value> {
    // Keep an entry unless it or an ancestor is a dropped precompile call.
    let dropped: Vec<Vec<u64>> = entries
        .iter()
        .filter(|e| {
            let a = &e["action"];
            e["type"] == "call"
                && !e["traceAddress"].as_array().unwrap().is_empty()
                && is_precompile(a["to"].as_str().unwrap_or(""))
                && a["value"] == "0x0"
        })
        .map(address)
        .collect();
    let kept: Vec<Value> = entries
        .iter()
        .filter(|e| !dropped.iter().any(|d| address(e).starts_with(d)))
        .cloned()
        .collect();
    // Renumber: each index counts only the kept siblings before it.
    let mut out = Vec::new();
    for e in &kept {
        let old = address(e);
        let mut new = Vec::new();
        for depth in 0..old.len() {
            let parent = &old[..depth];
            let before = dropped
                .iter()
                .filter(|d| d.len() == depth + 1 && d[..depth] == *parent && d[depth] < old[depth])
                .count() as u64;
            new.push(old[depth] - before);
        }
        let mut e = e.clone();
        let gone = dropped
            .iter()
            .filter(|d| d.len() == old.len() + 1 && d[..old.len()] == old[..])
            .count() as u64;
        e["subtraces"] = json!(e["subtraces"].as_u64().unwrap() - gone);
        e["traceAddress"] = json!(new);
        if e["error"] == "StateChangeDuringStaticCall" {
            e["error"] = json!("Mutable Call In Static Context");
        }
        if e["type"] == "create" && e["error"] == "Reverted" && e["result"]["code"].is_string() {
            let r = &e["result"];
            e["result"] = json!({"gasUsed": r["gasUsed"], "output": r["code"]});
        }
        out.push(e);
    }
    out
}

/// A geth prestate diff (`{pre, post}`) as Parity's `stateDiff`, by OpenEthereum's rules:
/// an account absent before is `+` with its values after; present before and absent after
/// (destroyed) `-` with its values before (an empty account counts as absent: EIP-161);
/// otherwise each of balance, nonce and code `*`
/// `{from, to}` when the diff's post has it, else `=`, and every slot that changed `*`
/// (a slot the diff's post omits went to zero).
fn parity_diff(d: &Value) -> Value {
    let empty = json!({});
    let (pre, post) = (&d["pre"], &d["post"]);
    let word0 = format!("0x{}", "0".repeat(64));
    let q = |v: &Value| -> String {
        match v {
            Value::Number(n) => format!("{:#x}", n.as_u64().unwrap()),
            Value::String(s) => s.clone(),
            _ => "0x0".into(),
        }
    };
    let mut out = serde_json::Map::new();
    let mut addrs: Vec<&String> = pre.as_object().unwrap().keys().collect();
    addrs.extend(post.as_object().unwrap().keys());
    addrs.sort();
    addrs.dedup();
    for a in addrs {
        // An empty account before (no balance, nonce or code) did not exist (EIP-161).
        let is_empty = |x: &Value| {
            ["balance", "nonce", "code"]
                .iter()
                .all(|k| x.get(*k).is_none_or(|v| v == "0x0" || v == 0 || v == "0x"))
        };
        let b = pre.get(a.as_str()).filter(|x| !is_empty(x));
        let p = post.get(a.as_str());
        if b.is_none() && p.is_none() {
            continue;
        }
        let field = |acc: Option<&Value>, k: &str, zero: &str| -> String {
            acc.and_then(|x| x.get(k))
                .map(&q)
                .unwrap_or_else(|| zero.to_string())
        };
        let entry = match (b, p) {
            (None, Some(p)) => {
                let storage: serde_json::Map<String, Value> = p
                    .get("storage")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), json!({"+": v})))
                    .collect();
                json!({"balance": {"+": field(Some(p), "balance", "0x0")},
                    "code": {"+": field(Some(p), "code", "0x")},
                    "nonce": {"+": field(Some(p), "nonce", "0x0")}, "storage": storage})
            }
            (Some(b), None) => json!({"balance": {"-": field(Some(b), "balance", "0x0")},
                "code": {"-": field(Some(b), "code", "0x")},
                "nonce": {"-": field(Some(b), "nonce", "0x0")}, "storage": {}}),
            (Some(b), Some(p)) => {
                let delta = |k: &str, zero: &str| match p.get(k) {
                    Some(_) => {
                        json!({"*": {"from": field(Some(b), k, zero), "to": field(Some(p), k, zero)}})
                    }
                    None => json!("="),
                };
                let mut storage = serde_json::Map::new();
                let (bs, ps) = (
                    b.get("storage").unwrap_or(&empty),
                    p.get("storage").unwrap_or(&empty),
                );
                for (k, v) in ps.as_object().unwrap() {
                    let from = bs.get(k).cloned().unwrap_or(json!(word0));
                    storage.insert(k.clone(), json!({"*": {"from": from, "to": v}}));
                }
                for (k, v) in bs.as_object().unwrap() {
                    if ps.get(k).is_none() {
                        storage.insert(k.clone(), json!({"*": {"from": v, "to": word0}}));
                    }
                }
                json!({"balance": delta("balance", "0x0"), "code": delta("code", "0x"),
                    "nonce": delta("nonce", "0x0"), "storage": storage})
            }
            (None, None) => unreachable!(),
        };
        out.insert(a.clone(), entry);
    }
    Value::Object(out)
}

fn address(e: &Value) -> Vec<u64> {
    e["traceAddress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap())
        .collect()
}

#[test]
fn trace_transaction_equals_anvils_as_reth_builds_it() {
    let s = anvil::scenario();
    let mut failures = Vec::new();
    let mut named = 0;
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let mine = ours(&s.url, &hash);
        let raw = s.anvil.rpc("trace_transaction", json!([hash]));
        let theirs = as_reth(&raw);
        named += (raw != theirs) as usize;
        if mine != theirs {
            failures.push(format!("{}:\n  anvil {theirs}\n  ours  {mine}", t.label));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        s.txs.len(),
        failures.join("\n")
    );
    eprintln!(
        "parity: {} transactions equal to anvil's trace_transaction ({named} after a named difference)",
        s.txs.len()
    );
}

/// `serve` answers every `trace_*` method through `cast rpc`: `trace_transaction` and
/// `trace_block` equal to the same entries as `tx --tracer parity` (and so to anvil's, above),
/// `trace_get` the last of them by its index in the list, `trace_replayTransaction`'s `trace` the same entries without their
/// block and transaction, and `trace_call` of the same call as the transaction made.
#[test]
fn serve_answers_the_trace_methods() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let cast = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/cast");
    let rpc = |method: &str, params: &[String]| -> Value {
        let out = std::process::Command::new(&cast)
            .args(["rpc", "--rpc-url", &serve.url, method])
            .args(params)
            .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "1")
            .output()
            .expect("run cast");
        assert!(
            out.status.success(),
            "cast rpc {method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let mut blocks = std::collections::BTreeMap::<String, Vec<Value>>::new();
    let mut diffs = Vec::new();
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let want = ours(&s.url, &hash);
        assert_eq!(
            rpc("trace_transaction", std::slice::from_ref(&hash)),
            want,
            "{}",
            t.label
        );
        let entries = want.as_array().unwrap();
        let last = entries.last().unwrap();
        // reth's trace_get: the list's entry at a single index (not a traceAddress).
        let index = vec![format!("{:#x}", entries.len() - 1)];
        let got = rpc("trace_get", &[hash.clone(), json!(index).to_string()]);
        assert_eq!(&got, last, "trace_get {}", t.label);
        let replay = rpc(
            "trace_replayTransaction",
            &[hash.clone(), json!(["trace"]).to_string()],
        );
        let bare: Vec<Value> = entries
            .iter()
            .map(|e| {
                let mut e = e.clone();
                for k in [
                    "blockHash",
                    "blockNumber",
                    "transactionHash",
                    "transactionPosition",
                ] {
                    e.as_object_mut().unwrap().remove(k);
                }
                e
            })
            .collect();
        assert_eq!(
            replay["trace"],
            json!(bare),
            "trace_replayTransaction {}",
            t.label
        );
        assert_eq!(replay["stateDiff"], Value::Null);
        assert_eq!(replay["vmTrace"], Value::Null);
        // stateDiff (anvil serves no trace_replay*): anvil's own prestateTracer diff, read
        // as Parity's deltas.
        let diff = rpc(
            "trace_replayTransaction",
            &[hash.clone(), json!(["stateDiff"]).to_string()],
        );
        let node_diff = s.anvil.trace(
            t.hash,
            json!({"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}),
        );
        let theirs = parity_diff(&node_diff);
        if diff["stateDiff"] != theirs {
            diffs.push(format!(
                "{}:\n  anvil {}\n  ours  {}",
                t.label, theirs, diff["stateDiff"]
            ));
        }
        assert_eq!(diff["output"], replay["output"], "output {}", t.label);
        let block = entries[0]["blockNumber"].as_u64().unwrap();
        blocks
            .entry(format!("{block:#x}"))
            .or_default()
            .extend(entries.iter().cloned());
    }
    assert!(
        diffs.is_empty(),
        "{} of {} stateDiffs differ from anvil's:\n{}",
        diffs.len(),
        s.txs.len(),
        diffs.join("\n")
    );
    // trace_call of a transaction's own call on its parent block's state (it was its block's
    // first) is its trace; trace_callMany runs two such calls one after the other.
    let t = s
        .txs
        .iter()
        .find(|t| {
            let r = s.anvil.receipt(t.hash);
            let parent = format!("{:#x}", anvil::parse_u64(&r["blockNumber"]) - 1);
            r["transactionIndex"] == "0x0"
                && r["to"].is_string()
                && s.anvil.rpc("eth_getCode", json!([r["to"], parent])) != "0x"
        })
        .expect("a call to a contract, first in its block");
    let hash = format!("{:?}", t.hash);
    let tx = s.anvil.rpc("eth_getTransactionByHash", json!([hash]));
    let parent = format!("{:#x}", anvil::parse_u64(&tx["blockNumber"]) - 1);
    let call = json!({"from": tx["from"], "to": tx["to"], "data": tx["input"],
        "value": tx["value"], "gas": tx["gas"], "gasPrice": tx["gasPrice"]});
    let one = rpc(
        "trace_call",
        &[
            call.to_string(),
            json!(["trace"]).to_string(),
            parent.clone(),
        ],
    );
    let replay = rpc(
        "trace_replayTransaction",
        &[hash, json!(["trace"]).to_string()],
    );
    assert_eq!(one["trace"], replay["trace"], "trace_call {}", t.label);
    assert_eq!(
        one["output"], replay["output"],
        "trace_call output {}",
        t.label
    );
    let many = rpc(
        "trace_callMany",
        &[
            json!([[call, ["trace"]], [call, ["trace"]]]).to_string(),
            parent.clone(),
        ],
    );
    assert_eq!(many.as_array().map(Vec::len), Some(2), "{many}");
    assert_eq!(many[0], one);
    // vmTrace (its values are held to reth's builder in tests/peers): the call's code and
    // every operation it ran, the trace-only answer having none.
    let vm = rpc(
        "trace_replayTransaction",
        &[format!("{:?}", t.hash), json!(["vmTrace"]).to_string()],
    );
    let code = s.anvil.rpc("eth_getCode", json!([tx["to"], parent]));
    assert_eq!(vm["vmTrace"]["code"], code, "{}", t.label);
    assert!(
        !vm["vmTrace"]["ops"].as_array().unwrap().is_empty(),
        "{}",
        vm["vmTrace"]
    );
    assert_eq!(vm["trace"], json!([]));
    for (block, want) in &blocks {
        assert_eq!(
            rpc("trace_block", std::slice::from_ref(block)),
            json!(want),
            "trace_block {block}"
        );
        let theirs = as_reth(&s.anvil.rpc("trace_block", json!([block])));
        assert_eq!(theirs, json!(want), "anvil's trace_block {block}");
    }
}
