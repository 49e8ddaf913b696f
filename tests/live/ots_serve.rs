//! `serve`'s Otterscan methods (`ots_*`, and `erigon_getHeaderByNumber`, which Otterscan probes)
//! against anvil 1.7.1's own answers on the shared scenario: `chaintrace serve` runs behind the
//! loopback proxy refusing both namespaces (checked first), so every answer is computed, never
//! forwarded. Whole JSON equality, after these named mappings of anvil's answers — each a place
//! where anvil departs from Erigon, whose source (the implementation Otterscan's UI is written
//! against) `serve` follows:
//!
//! - `ots_getInternalOperations`: anvil lists the transaction's own frame first when it moved
//!   value or created (Erigon's `OperationsTracer.OnEnterV2` returns at depth 0; Otterscan would
//!   show a plain transfer as an internal one too): that entry is dropped. anvil reads a frame
//!   that self-destructs only as the self-destruct, dropping the value its CALL brought in;
//!   Erigon lists the transfer, then the self-destruct (one transaction added to the scenario
//!   does this): serve's transfers into an address that self-destructs in the same transaction
//!   are dropped for that comparison. serve's whole list is also compared with anvil's
//!   callTracer tree read by Erigon's rules.
//! - `ots_traceTransaction`: anvil builds the list from Parity traces, keeping calls only, each
//!   with a value. Erigon's `TransactionTracer` lists every frame — CREATE, CREATE2 and
//!   SELFDESTRUCT too, which Otterscan's trace view draws — with `value` null for STATICCALL and
//!   DELEGATECALL. Compared twice: serve's calls against anvil's list with those values null, and
//!   serve's whole list against anvil's callTracer tree read as Erigon's tracer reads the EVM
//!   (the address of a failed CREATE, which geth's callTracer drops, from anvil's internal
//!   operations). Erigon leaves precompile calls out ("maybe we shouldn't?"); anvil keeps them,
//!   and so does serve. Erigon puts a SELFDESTRUCT one level below the *last entry* listed; serve
//!   puts it below the frame that ran it (the same wherever that frame made no call before it).
//! - `ots_getBlockTransactions`: anvil pages from the block's first transaction and counts only
//!   the page in `transactionCount`; Erigon pages from the last (page 0 = the last `pageSize`)
//!   and counts the block, which Otterscan's `blockTransactionsFetcher` needs (it reverses each
//!   page and takes `transactionCount` as the total). Expected: anvil's whole block (one page of
//!   all its transactions) sliced as Erigon's page, with the block's count, and the receipts'
//!   `logs` and `logsBloom` null as Erigon (and Otterscan's API) give them — anvil keeps them.
//!   serve passes the node's receipt fields through: anvil's `eth_getBlockReceipts` carries a
//!   non-standard `blockTimestamp` its typed ots receipt drops, so it is dropped from serve's.
//! - `ots_getContractCreator`: anvil finds the creation of a contract that has since destroyed
//!   itself; Erigon answers `null` for an address without code (`IsEmptyCodeHash`), as serve does.
//!
//! Everywhere else anvil's answer is the expected one as is: `ots_getBlockDetails` keeps
//! `logsBloom` (Erigon nulls it; Otterscan does not read it) and zero `issuance`; an unknown
//! transaction gives an empty trace and `0x` as its error but an error for its internal
//! operations; an unknown block an error (Erigon: `null`), with anvil's codes.

use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{Address, B256};
use serde_json::{json, Value};

use crate::anvil::{self, parse_u64, Scenario};
use crate::proxy::Proxy;
use crate::serve_support::Serve;

/// A result, or the error object.
type Answer = Result<Value, Value>;

fn ours(serve: &Serve, method: &str, params: Value) -> Answer {
    let text = serve
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    answer(&text)
}

fn answer(text: &str) -> Answer {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    match v.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(v["result"].clone()),
    }
}

fn anvils(s: &Scenario, method: &str, params: Value) -> Answer {
    s.anvil.try_rpc(method, params).expect("anvil answers")
}

/// The scenario, the proxy refusing the namespaces serve answers, serve behind it.
fn start() -> (Scenario, Proxy, Serve) {
    let s = anvil::scenario();
    let proxy = Proxy::start(&s.url, &["--deny", "ots_", "--deny", "erigon_"]);
    let serve = Serve::start(&proxy.url, &[]);
    (s, proxy, serve)
}

/// The proxy really refuses the methods: an answer equal to anvil's cannot be a forwarded one.
fn check_proxy_denies(proxy: &Proxy, s: &Scenario) {
    for (method, params) in [
        ("ots_getApiLevel", json!([])),
        ("ots_getBlockDetails", json!([1])),
        ("erigon_getHeaderByNumber", json!(["latest"])),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (_, text) = chaintrace::rpc::transport::post_json(
            &proxy.url,
            &[],
            body.to_string(),
            std::time::Duration::from_secs(30),
            1 << 20,
        )
        .unwrap_or_else(|e| panic!("POST {}: {}", proxy.url, e.reason()));
        assert!(
            answer(&text).is_err(),
            "the proxy forwarded {method}: {text}"
        );
        assert!(anvils(s, method, params).is_ok(), "anvil answers {method}");
    }
}

/// What was compared: method → cases. `results`: serve must answer each with a result (an
/// error equal to anvil's error would prove nothing there).
#[derive(Default)]
struct Tally(BTreeMap<&'static str, usize>, bool);

impl Tally {
    fn check(&mut self, method: &'static str, case: &str, got: &Answer, want: &Answer) {
        *self.0.entry(method).or_default() += 1;
        if self.1 {
            assert!(got.is_ok(), "{method} {case}: {got:?}");
        }
        match (got, want) {
            (Ok(g), Ok(w)) => assert_eq!(g, w, "{method} {case}"),
            // Both errors: the same code (the messages name what was missing).
            (Err(g), Err(w)) => assert_eq!(g["code"], w["code"], "{method} {case}: {g} vs {w}"),
            _ => panic!("{method} {case}: serve {got:?}, anvil (mapped) {want:?}"),
        }
    }

    fn total(&self) -> usize {
        self.0.values().sum()
    }
}

/// The upstream requests of each of serve's calls of `method`, from its request log, each
/// checked to have been answered by a worker (`ok`), not forwarded.
fn upstream_requests(serve: &Serve, method: &str) -> Vec<u64> {
    serve
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["method"] == json!(method))
        .map(|l| {
            assert_eq!(l["outcome"], json!("ok"), "{l}");
            l["upstreamRequests"].as_u64().unwrap_or(u64::MAX)
        })
        .collect()
}

fn addr(v: &Value) -> Option<Address> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// anvil's internal operations without the transaction's own frame (see the module docs), and
/// whether there was one.
fn internal_as_erigon(ops: &Value, tx: &Value, receipt: &Value) -> (Value, bool) {
    let mut ops = ops.as_array().cloned().unwrap_or_default();
    let own = ops.first().is_some_and(|op| {
        addr(&op["from"]) == addr(&tx["from"])
            && match op["type"].as_u64() {
                Some(0) => addr(&op["to"]) == addr(&tx["to"]) && op["value"] == tx["value"],
                Some(2) => addr(&op["to"]) == addr(&receipt["contractAddress"]),
                _ => false,
            }
    });
    if own {
        ops.remove(0);
    }
    (Value::Array(ops), own)
}

/// serve's internal operations without the transfers into an address that self-destructs in
/// the same transaction, which anvil does not list (see the module docs); also how many.
fn internal_as_anvil(ops: &Answer) -> (Answer, usize) {
    let Ok(Value::Array(list)) = ops else {
        return (ops.clone(), 0);
    };
    let destroyed: BTreeSet<Option<Address>> = list
        .iter()
        .filter(|op| op["type"] == json!(1))
        .map(|op| addr(&op["from"]))
        .collect();
    let kept: Vec<Value> = list
        .iter()
        .filter(|op| !(op["type"] == json!(0) && destroyed.contains(&addr(&op["to"]))))
        .cloned()
        .collect();
    let dropped = list.len() - kept.len();
    (Ok(Value::Array(kept)), dropped)
}

/// anvil's callTracer tree read as Erigon's `OperationsTracer` reads the EVM: below the
/// transaction's own frame, CALLs with value, CREATE/CREATE2 (a failed one at the address
/// anvil's internal operations give, `creates` in order) and SELFDESTRUCT.
fn internal_from_call_tree(root: &Value, creates: &[Value]) -> Value {
    fn walk(f: &Value, top: bool, creates: &mut std::slice::Iter<Value>, out: &mut Vec<Value>) {
        let kind = f["type"].as_str().unwrap_or_default();
        let value = f.get("value").cloned().unwrap_or(json!("0x0"));
        let mut to = f.get("to").cloned().unwrap_or(Value::Null);
        if matches!(kind, "CREATE" | "CREATE2") {
            let listed = creates.next().cloned().unwrap_or(Value::Null);
            if to.is_null() {
                to = listed;
            }
        }
        let op = match kind {
            "CALL" if value != json!("0x0") => Some(0),
            "SELFDESTRUCT" => Some(1),
            "CREATE" => Some(2),
            "CREATE2" => Some(3),
            _ => None,
        };
        if let (Some(op), false) = (op, top) {
            out.push(json!({"type": op, "from": f["from"], "to": to, "value": value}));
        }
        for c in f
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(c, false, creates, out);
        }
    }
    let mut out = Vec::new();
    walk(root, true, &mut creates.iter(), &mut out);
    Value::Array(out)
}

/// Creation code returning `runtime` (hex).
fn creation(runtime: &str) -> String {
    format!("0x60{:02x}80600b6000396000f3{runtime}", runtime.len() / 2)
}

/// A transaction the scenario lacks: a contract CALLs 1000 wei into a pre-existing contract
/// that self-destructs to bob (raw bytecode; under EIP-6780 only its balance moves).
fn value_into_a_self_destruct(s: &Scenario) -> B256 {
    let hex = |a: Address| alloy_primitives::hex::encode(a);
    let doomed = s
        .anvil
        .deploy(&creation(&format!("73{}ff", hex(s.addr("bob")))));
    // CALL(gas, doomed, callvalue, 0, 0, 0, 0); STOP
    let relay = s.anvil.deploy(&creation(
        &format!("600060006000600034 73{}5af100", hex(doomed)).replace(' ', ""),
    ));
    let (hash, receipt) = s
        .anvil
        .send_and_wait(json!({"to": relay, "value": anvil::qty(1000), "gas": anvil::qty(100_000)}));
    assert_eq!(receipt["status"], json!("0x1"), "{receipt}");
    hash
}

/// anvil's `ots_traceTransaction` entries with Erigon's `value` (null for STATICCALL and
/// DELEGATECALL).
fn trace_values_as_erigon(entries: &Value) -> Value {
    let mut entries = entries.clone();
    for e in entries.as_array_mut().into_iter().flatten() {
        if matches!(e["type"].as_str(), Some("STATICCALL" | "DELEGATECALL")) {
            e["value"] = Value::Null;
        }
    }
    entries
}

/// anvil's callTracer tree read as Erigon's `TransactionTracer` reads the EVM: every frame in
/// the order entered, with its depth; a failed CREATE at the address anvil's internal
/// operations give for it (`creates`: those addresses, in order).
/// Also returns how many failed CREATEs took their address from the operations.
fn trace_from_call_tree(root: &Value, creates: &[Value]) -> (Value, usize) {
    fn walk(
        f: &Value,
        depth: usize,
        creates: &mut std::slice::Iter<Value>,
        out: &mut Vec<Value>,
        filled: &mut usize,
    ) {
        let kind = f["type"].as_str().unwrap_or_default();
        let mut to = f.get("to").cloned().unwrap_or(Value::Null);
        if matches!(kind, "CREATE" | "CREATE2") {
            let listed = creates.next().cloned().unwrap_or(Value::Null);
            if to.is_null() {
                to = listed;
                *filled += 1;
            }
        }
        let value = match kind {
            "STATICCALL" | "DELEGATECALL" => Value::Null,
            _ => f.get("value").cloned().unwrap_or(json!("0x0")),
        };
        out.push(json!({
            "type": kind, "depth": depth, "from": f["from"], "to": to, "value": value,
            "input": f.get("input").cloned().unwrap_or(json!("0x")),
            "output": f.get("output").cloned().unwrap_or(json!("0x")),
        }));
        for c in f
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(c, depth + 1, creates, out, filled);
        }
    }
    let (mut out, mut filled) = (Vec::new(), 0);
    walk(root, 0, &mut creates.iter(), &mut out, &mut filled);
    (Value::Array(out), filled)
}

/// Erigon's page of `count` transactions (see `serve::ots::page_range`), written out again so
/// the test does not take the server's word for it.
fn erigon_page(count: usize, page: usize, size: usize) -> std::ops::Range<usize> {
    let end = count.saturating_sub(page * size);
    end.saturating_sub(size)..end
}

/// anvil's whole block as `ots_getBlockTransactions` (page 0 of all its transactions), made
/// Erigon's page `page` of `size` (see the module docs).
fn block_page_as_erigon(whole: &Value, page: usize, size: usize) -> Value {
    let mut v = whole.clone();
    let count = v["fullblock"]["transactions"].as_array().unwrap().len();
    let range = erigon_page(count, page, size);
    let txs: Vec<Value> =
        v["fullblock"]["transactions"].as_array().unwrap()[range.clone()].to_vec();
    let mut receipts: Vec<Value> = v["receipts"].as_array().unwrap()[range].to_vec();
    for r in &mut receipts {
        r["logs"] = Value::Null;
        r["logsBloom"] = Value::Null;
    }
    v["fullblock"]["transactions"] = Value::Array(txs);
    v["fullblock"]["transactionCount"] = json!(count);
    v["receipts"] = Value::Array(receipts);
    v
}

#[test]
fn ots_methods_equal_anvils_for_every_scenario_case() {
    let (s, proxy, serve) = start();
    check_proxy_denies(&proxy, &s);
    let mut tally = Tally(BTreeMap::new(), true);
    tally.check(
        "ots_getApiLevel",
        "",
        &ours(&serve, "ots_getApiLevel", json!([])),
        &anvils(&s, "ots_getApiLevel", json!([])),
    );

    // Every transaction, and one with value CALLed into a self-destruct.
    let mut txs: Vec<(String, B256)> = s.txs.iter().map(|t| (t.label.clone(), t.hash)).collect();
    txs.push((
        "value into a self-destruct".into(),
        value_into_a_self_destruct(&s),
    ));
    let mut creates_seen: BTreeSet<Address> = BTreeSet::new();
    let (mut own_dropped, mut failed_creates, mut into_destroyed) = (0, 0, 0);
    for (label, hash) in &txs {
        let h = format!("{hash:?}");
        let tx = s.anvil.rpc("eth_getTransactionByHash", json!([h]));
        let receipt = s.anvil.receipt(*hash);
        let label = label.as_str();

        let anvil_ops = anvils(&s, "ots_getInternalOperations", json!([h])).unwrap();
        let (want, own) = internal_as_erigon(&anvil_ops, &tx, &receipt);
        own_dropped += usize::from(own);
        let ops = ours(&serve, "ots_getInternalOperations", json!([h]));
        let (as_anvil, dropped) = internal_as_anvil(&ops);
        into_destroyed += dropped;
        tally.check("ots_getInternalOperations", label, &as_anvil, &Ok(want));

        let creates: Vec<Value> = anvil_ops
            .as_array()
            .unwrap()
            .iter()
            .filter(|op| matches!(op["type"].as_u64(), Some(2 | 3)))
            .map(|op| op["to"].clone())
            .collect();
        creates_seen.extend(creates.iter().filter_map(addr));

        let got = ours(&serve, "ots_traceTransaction", json!([h]));
        let calls_only = got.clone().map(|v| {
            Value::Array(
                v.as_array()
                    .unwrap()
                    .iter()
                    .filter(|e| {
                        matches!(
                            e["type"].as_str(),
                            Some("CALL" | "CALLCODE" | "STATICCALL" | "DELEGATECALL")
                        )
                    })
                    .cloned()
                    .collect(),
            )
        });
        let want =
            anvils(&s, "ots_traceTransaction", json!([h])).map(|v| trace_values_as_erigon(&v));
        tally.check(
            "ots_traceTransaction",
            &format!("{label} (calls)"),
            &calls_only,
            &want,
        );
        let tree = s.anvil.trace(*hash, json!({"tracer": "callTracer"}));
        tally.check(
            "ots_getInternalOperations",
            &format!("{label} (all frames)"),
            &ops,
            &Ok(internal_from_call_tree(&tree, &creates)),
        );
        let (want, filled) = trace_from_call_tree(&tree, &creates);
        failed_creates += filled;
        tally.check(
            "ots_traceTransaction",
            &format!("{label} (all frames)"),
            &got,
            &Ok(want),
        );

        tally.check(
            "ots_getTransactionError",
            label,
            &ours(&serve, "ots_getTransactionError", json!([h])),
            &anvils(&s, "ots_getTransactionError", json!([h])),
        );
    }

    assert!(
        own_dropped > 0 && failed_creates > 0 && into_destroyed == 1,
        "departures exercised: own frame {own_dropped}, failed CREATE {failed_creates}, \
         transfer into a self-destruct {into_destroyed}"
    );

    // Every block, by number (Otterscan sends JSON integers; a quantity too) and by hash.
    let head = s.anvil.block_number();
    for n in 0..=head {
        let case = format!("block {n}");
        let hex = format!("{n:#x}");
        let want = anvils(&s, "ots_getBlockDetails", json!([n]));
        tally.check(
            "ots_getBlockDetails",
            &case,
            &ours(&serve, "ots_getBlockDetails", json!([n])),
            &want,
        );
        tally.check(
            "ots_getBlockDetails",
            &format!("{case} as {hex}"),
            &ours(&serve, "ots_getBlockDetails", json!([hex])),
            &want,
        );
        let hash = want.as_ref().unwrap()["block"]["hash"].clone();
        tally.check(
            "ots_getBlockDetailsByHash",
            &case,
            &ours(&serve, "ots_getBlockDetailsByHash", json!([hash])),
            &anvils(&s, "ots_getBlockDetailsByHash", json!([hash])),
        );
        tally.check(
            "erigon_getHeaderByNumber",
            &case,
            &ours(&serve, "erigon_getHeaderByNumber", json!([n])),
            &anvils(&s, "erigon_getHeaderByNumber", json!([n])),
        );
        let count = want.as_ref().unwrap()["block"]["transactionCount"]
            .as_u64()
            .unwrap() as usize;
        let whole = anvils(&s, "ots_getBlockTransactions", json!([n, 0, count.max(1)])).unwrap();
        for size in [1, 2, 4, 25] {
            for page in 0..=count.div_ceil(size) {
                let mut got = ours(&serve, "ots_getBlockTransactions", json!([n, page, size]));
                if let Ok(v) = &mut got {
                    for r in v["receipts"].as_array_mut().unwrap() {
                        r.as_object_mut().unwrap().remove("blockTimestamp");
                    }
                }
                tally.check(
                    "ots_getBlockTransactions",
                    &format!("{case} page {page} of {size}"),
                    &got,
                    &Ok(block_page_as_erigon(&whole, page, size)),
                );
            }
        }
    }

    // Every account's every nonce, and one past.
    for (name, a) in &s.addresses {
        let count = parse_u64(&s.anvil.rpc("eth_getTransactionCount", json!([a, "latest"])));
        for nonce in 0..=count + 1 {
            tally.check(
                "ots_getTransactionBySenderAndNonce",
                &format!("{name} nonce {nonce}"),
                &ours(
                    &serve,
                    "ots_getTransactionBySenderAndNonce",
                    json!([a, nonce]),
                ),
                &anvils(&s, "ots_getTransactionBySenderAndNonce", json!([a, nonce])),
            );
        }
    }
    let sender = s.addr("sender");
    tally.check(
        "ots_getTransactionBySenderAndNonce",
        "sender nonce 0x3",
        &ours(
            &serve,
            "ots_getTransactionBySenderAndNonce",
            json!([sender, "0x3"]),
        ),
        &anvils(
            &s,
            "ots_getTransactionBySenderAndNonce",
            json!([sender, "0x3"]),
        ),
    );

    // Every account, every contract any transaction created (and those that destroyed
    // themselves), and an address never used.
    let mut addresses: BTreeSet<Address> = s.addresses.values().copied().collect();
    addresses.extend(creates_seen);
    addresses.insert(Address::repeat_byte(0xee));
    let mut gone = 0;
    for a in &addresses {
        let code = s.anvil.rpc("eth_getCode", json!([a, "latest"]));
        let mut want = anvils(&s, "ots_getContractCreator", json!([a]));
        if code == json!("0x") && want.as_ref().is_ok_and(|v| !v.is_null()) {
            // Departure: no code now, Erigon's null (see the module docs).
            want = Ok(Value::Null);
            gone += 1;
        }
        tally.check(
            "ots_getContractCreator",
            &format!("{a}"),
            &ours(&serve, "ots_getContractCreator", json!([a])),
            &want,
        );
        // By hash as Erigon takes it (anvil takes numbers and tags): its number's answer.
        let head_hash = s
            .anvil
            .rpc("eth_getBlockByNumber", json!(["latest", false]))["hash"]
            .clone();
        tally.check(
            "ots_hasCode",
            &format!("{a} at the head's hash"),
            &ours(&serve, "ots_hasCode", json!([a, head_hash])),
            &anvils(&s, "ots_hasCode", json!([a, head])),
        );
        for block in (0..=head).map(|n| json!(n)).chain([json!("latest")]) {
            tally.check(
                "ots_hasCode",
                &format!("{a} at {block}"),
                &ours(&serve, "ots_hasCode", json!([a, block])),
                &anvils(&s, "ots_hasCode", json!([a, block])),
            );
        }
    }
    assert!(gone > 0, "no destroyed contract was asked about");

    // Few round trips: one batch for a block's methods, the mined transaction's fast path for
    // a trace, one probe per step of a binary search (and a block, or a block's replay).
    let probes = u64::from((head + 2).next_power_of_two().trailing_zeros());
    for (m, most) in [
        ("ots_getApiLevel", 0),
        ("ots_hasCode", 1),
        ("erigon_getHeaderByNumber", 1),
        ("ots_getBlockDetails", 1),
        ("ots_getBlockDetailsByHash", 1),
        ("ots_getBlockTransactions", 1),
        ("ots_getInternalOperations", 3),
        ("ots_traceTransaction", 3),
        ("ots_getTransactionError", 3),
        ("ots_getTransactionBySenderAndNonce", 2 + probes),
        ("ots_getContractCreator", 2 + probes + 4),
    ] {
        // One call per comparison; each trace is compared twice.
        let calls = match m {
            "ots_traceTransaction" | "ots_getInternalOperations" => tally.0[m] / 2,
            _ => tally.0[m],
        };
        // The server logs a call before answering it; the log's reader may lag behind.
        serve.log_when(|_| upstream_requests(&serve, m).len() >= calls);
        let r = upstream_requests(&serve, m);
        assert_eq!(r.len(), calls, "{m}: one log line per call");
        let max = r.iter().copied().max().unwrap_or(0);
        assert!(max <= most, "{m}: {max} upstream requests (at most {most})");
        eprintln!(
            "{m}: {} calls, at most {max} upstream requests each",
            r.len()
        );
    }
    eprintln!(
        "ots: {} comparisons with anvil over {} transactions, {} blocks, {} addresses: {:?}",
        tally.total(),
        txs.len(),
        head + 1,
        addresses.len(),
        tally.0
    );
}

#[test]
fn ots_unknown_transactions_and_blocks_and_bad_params_answer_as_anvil() {
    let (s, proxy, serve) = start();
    check_proxy_denies(&proxy, &s);
    let mut tally = Tally::default();
    let none = format!("{:?}", B256::repeat_byte(0x11));
    let far = s.anvil.block_number() + 1000;
    let cases: Vec<(&'static str, Value)> = vec![
        // Unknown: anvil's null, empty list, `0x` or error, each matched.
        ("ots_getInternalOperations", json!([none])),
        ("ots_traceTransaction", json!([none])),
        ("ots_getTransactionError", json!([none])),
        ("ots_getBlockDetails", json!([far])),
        ("ots_getBlockDetailsByHash", json!([none])),
        ("ots_getBlockTransactions", json!([far, 0, 10])),
        ("erigon_getHeaderByNumber", json!([far])),
        // Malformed: -32602 from both.
        ("ots_getInternalOperations", json!(["0x12"])),
        ("ots_traceTransaction", json!(["0x12"])),
        ("ots_getTransactionError", json!([7])),
        ("ots_getBlockDetails", json!([{}])),
        ("ots_getBlockDetailsByHash", json!(["0x12"])),
        ("ots_getBlockTransactions", json!(["x", 0, 1])),
        ("ots_getBlockTransactions", json!([1, "x", 1])),
        ("ots_getBlockTransactions", json!([1, 0])),
        ("ots_hasCode", json!(["0x12", "latest"])),
        ("ots_getTransactionBySenderAndNonce", json!(["0x12", 1])),
        (
            "ots_getTransactionBySenderAndNonce",
            json!([Address::ZERO, {}]),
        ),
        ("ots_getContractCreator", json!(["0x12"])),
        ("ots_getContractCreator", json!([])),
    ];
    for (method, params) in cases {
        let got = ours(&serve, method, params.clone());
        let want = anvils(&s, method, params.clone());
        tally.check(method, &params.to_string(), &got, &want);
        if let Err(e) = &want {
            if e["code"] == json!(-32602) {
                assert_eq!(got.unwrap_err()["code"], json!(-32602), "{method} {params}");
            }
        }
    }
    eprintln!(
        "ots: {} unknown or malformed calls answered as anvil: {:?}",
        tally.total(),
        tally.0
    );
}

/// The worker path's limits hold for these methods: `--max-response` (geth's -32003, as a
/// trace's) and `--request-timeout` (a binary search of slow probes ends by the deadline with
/// geth's -32002, not after all of them).
#[test]
fn ots_methods_obey_the_response_limit_and_the_deadline() {
    let s = anvil::scenario();
    let proxy = Proxy::start(&s.url, &["--deny", "ots_", "--deny", "erigon_"]);
    let block = s.anvil.receipt(s.multi_tx_block[0])["blockNumber"].clone();
    let block = parse_u64(&block);
    let tiny = Serve::start(&proxy.url, &["--max-response", "1024"]);
    let got = ours(&tiny, "ots_getBlockTransactions", json!([block, 0, 25]));
    assert_eq!(got.unwrap_err()["code"], json!(-32003));
    assert_eq!(ours(&tiny, "ots_getApiLevel", json!([])), Ok(json!(8)));

    let slow = Proxy::start(
        &s.url,
        &["--deny", "ots_", "--deny", "erigon_", "--delay-ms", "400"],
    );
    let serve = Serve::start(&slow.url, &["--request-timeout", "1"]);
    let started = std::time::Instant::now();
    let got = ours(&serve, "ots_getContractCreator", json!([s.addr("Hub")]));
    let took = started.elapsed();
    assert_eq!(got.unwrap_err()["code"], json!(-32002));
    assert!(took < std::time::Duration::from_millis(1700), "{took:?}");
    eprintln!("ots: -32003 past --max-response; -32002 after {took:?} with --request-timeout 1");
}

/// One raw HTTP/1.1 exchange with `url` (`Connection: close`): the status line and headers
/// (lower-cased names), and the body.
fn http_exchange(
    url: &str,
    request_line: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (String, String) {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(host).expect("connect to serve");
    let mut text = format!("{request_line}\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.to_ascii_lowercase(), body.to_string())
}

/// Otterscan runs in a browser: `--cors-origin` lets its page's origin read the answers (a
/// preflight, then the POST), and no other origin; without the flag no CORS header at all.
#[test]
fn a_browser_page_of_an_allowed_origin_may_call_serve() {
    let s = anvil::scenario();
    let page = "http://localhost:5100";
    let serve = Serve::start(&s.url, &["--cors-origin", page]);
    let (head, _) = http_exchange(
        &serve.url,
        "OPTIONS / HTTP/1.1",
        &[
            ("Origin", page),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type"),
        ],
        "",
    );
    assert!(head.starts_with("http/1.1 204"), "{head}");
    assert!(
        head.contains(&format!("access-control-allow-origin: {page}")),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-methods: post"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-headers: content-type"),
        "{head}"
    );
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ots_getApiLevel", "params": []}).to_string();
    let post = |origin: &str, serve: &Serve| {
        http_exchange(
            &serve.url,
            "POST / HTTP/1.1",
            &[("Origin", origin), ("Content-Type", "application/json")],
            &body,
        )
    };
    let (head, answer_text) = post(page, &serve);
    assert!(
        head.contains(&format!("access-control-allow-origin: {page}")),
        "{head}"
    );
    assert_eq!(answer(&answer_text), Ok(json!(8)));
    let (head, _) = post("http://evil.example", &serve);
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    let closed = Serve::start(&s.url, &[]);
    let (head, answer_text) = post(page, &closed);
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    assert_eq!(answer(&answer_text), Ok(json!(8)));
}
