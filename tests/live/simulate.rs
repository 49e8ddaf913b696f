//! `eth_simulateV1` through `chaintrace serve` on a node that refuses it: the loopback proxy in
//! front of the test anvil answers the method "not found" (`--deny eth_simulateV1`), so every
//! answer is chaintrace's own replay.
//!
//! Two references:
//! - anvil 1.7.1's own `eth_simulateV1` on the same chain, whole JSON, for plain transfers,
//!   contract calls into the scenario's contracts, state overrides, two chained blocks,
//!   `traceTransfers` and `validation`. anvil departs from the specification and from geth in
//!   many members; each is named where it is mapped ([`anvil_as_spec`]), with the line of
//!   geth's `internal/ethapi/simulate.go` or execution-apis' notes it departs from, and the
//!   value chaintrace gives there is checked another way ([`check_own`]: the header's hash is
//!   the keccak of its RLP, parents chain, receipts root and bloom from the calls, transactions
//!   rebuilt with alloy). Everything else is compared as anvil gives it.
//! - execution-apis' own examples (geth's answers, `tests/data/execution-apis/`) on an anvil
//!   shaped like the specification's test chain: whole JSON, but for what only that chain's
//!   state gives (`stateRoot`, hence the hashes), checked with [`check_own`].

use std::path::Path;

use alloy_consensus::{
    Receipt, ReceiptEnvelope, ReceiptWithBloom, SignableTransaction, TxEip1559, TxEnvelope,
};
use alloy_primitives::{Address, Bytes, Log, LogData, Signature, B256, U256};
use serde_json::{json, Value};

use crate::anvil::{self, calldata, hex0x, parse_u64, w_addr, w_u, Anvil};
use crate::proxy::Proxy;
use crate::serve_support::Serve;

/// ERC-7528's address, the emitter of `traceTransfers`' logs.
const TRANSFERS: &str = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
const ETH: u128 = 1_000_000_000_000_000_000;
/// execution-apis' `EMPTY_REQUESTS_HASH` (sha256 of nothing) and the empty trie's root.
const EMPTY_REQUESTS: &str = "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const EMPTY_ROOT: &str = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
const ZERO_HASH: &str = "0x0000000000000000000000000000000000000000000000000000000000000000";

/// One JSON-RPC request to `url`; the whole response.
fn post(url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, text) = chaintrace::rpc::transport::post_json(
        url,
        &[],
        body.to_string(),
        std::time::Duration::from_secs(120),
        1 << 30,
    )
    .unwrap_or_else(|e| panic!("POST {url}: {}", e.reason()));
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn simulate(url: &str, payload: &Value, block: &Value) -> Value {
    post(url, "eth_simulateV1", json!([payload, block]))
}

fn result(v: &Value, what: &str) -> Value {
    assert!(v.get("error").is_none(), "{what}: {v}");
    v["result"].clone()
}

fn b256(v: &Value) -> B256 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a hash: {v}"))
}

fn u256(v: &Value) -> U256 {
    let s = v.as_str().unwrap_or_else(|| panic!("not a quantity: {v}"));
    U256::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// A call's logs as alloy logs, ERC-7528's synthetic ones left out when `keep_transfers` is
/// false (execution-apis' notes: "ETH logs are not part of the calculation for logs bloom").
fn logs_of(call: &Value, keep_transfers: bool) -> Vec<Log> {
    call["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| keep_transfers || l["address"] != json!(TRANSFERS))
        .map(|l| {
            let topics = l["topics"].as_array().unwrap().iter().map(b256).collect();
            let data: Bytes = l["data"].as_str().unwrap().parse().unwrap();
            Log {
                address: l["address"].as_str().unwrap().parse().unwrap(),
                data: LogData::new_unchecked(topics, data),
            }
        })
        .collect()
}

/// What chaintrace's answer must hold whatever anvil says: each block's parent is the one
/// before it (the base block first), its hash is the keccak of its header's RLP, `stateRoot` is
/// zero (chaintrace's one departure: no state trie over RPC), its receipts root and bloom are
/// those of its calls (type-2 transactions: no call here gives `gasPrice`) without ERC-7528's
/// logs, every log names its block, and full transactions rebuilt with alloy (unsigned:
/// `v`, `r`, `s` zero) hash as listed and root as `transactionsRoot`.
fn check_own(blocks: &Value, base_hash: B256, what: &str) {
    let mut parent = base_hash;
    for (i, b) in blocks.as_array().unwrap().iter().enumerate() {
        let what = format!("{what}, block {i}");
        assert_eq!(b256(&b["parentHash"]), parent, "{what}: parentHash");
        let header: alloy_rpc_types_eth::Header =
            serde_json::from_value(b.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(header.inner.hash_slow(), header.hash, "{what}: hash");
        assert_eq!(b["stateRoot"], json!(ZERO_HASH), "{what}");
        parent = header.hash;
        let mut cumulative = 0u64;
        let mut receipts = Vec::new();
        let mut all = Vec::new();
        for c in b["calls"].as_array().unwrap() {
            cumulative += parse_u64(&c["gasUsed"]);
            assert!(
                parse_u64(&c["maxUsedGas"]) >= parse_u64(&c["gasUsed"]),
                "{what}"
            );
            let logs = logs_of(c, false);
            all.extend(logs.clone());
            let receipt = Receipt {
                status: (c["status"] == json!("0x1")).into(),
                cumulative_gas_used: cumulative,
                logs,
            };
            receipts.push(ReceiptEnvelope::Eip1559(ReceiptWithBloom::from(receipt)));
            for l in c["logs"].as_array().unwrap() {
                assert_eq!(l["blockHash"], b["hash"], "{what}: a log's blockHash");
                assert_eq!(l["blockNumber"], b["number"], "{what}");
            }
        }
        assert_eq!(
            alloy_consensus::proofs::calculate_receipt_root(&receipts),
            header.inner.receipts_root,
            "{what}: receiptsRoot"
        );
        assert_eq!(
            alloy_primitives::logs_bloom(all.iter()),
            header.inner.logs_bloom,
            "{what}: logsBloom"
        );
        let txs = b["transactions"].as_array().unwrap();
        if txs.iter().all(Value::is_object) {
            let envelopes: Vec<TxEnvelope> = txs
                .iter()
                .map(|t| {
                    let tx = TxEip1559 {
                        chain_id: parse_u64(&t["chainId"]),
                        nonce: parse_u64(&t["nonce"]),
                        gas_limit: parse_u64(&t["gas"]),
                        max_fee_per_gas: u256(&t["maxFeePerGas"]).to(),
                        max_priority_fee_per_gas: u256(&t["maxPriorityFeePerGas"]).to(),
                        to: match t["to"].as_str() {
                            Some(a) => a.parse::<Address>().unwrap().into(),
                            None => alloy_primitives::TxKind::Create,
                        },
                        value: u256(&t["value"]),
                        access_list: Default::default(),
                        input: t["input"].as_str().unwrap().parse().unwrap(),
                    };
                    let signed = tx.into_signed(Signature::new(U256::ZERO, U256::ZERO, false));
                    assert_eq!(
                        *signed.hash(),
                        b256(&t["hash"]),
                        "{what}: a transaction's hash"
                    );
                    TxEnvelope::Eip1559(signed)
                })
                .collect();
            assert_eq!(
                alloy_consensus::proofs::calculate_transaction_root(&envelopes),
                header.inner.transactions_root,
                "{what}: transactionsRoot"
            );
        }
    }
}

/// anvil 1.7.1's answer (`crates/anvil/src/eth/backend/mem/mod.rs`, `Backend::simulate`) with
/// each of its departures from the specification and geth mapped to what they say, after
/// checking it is that departure; `ours` gives the values anvil cannot (checked by
/// [`check_own`]).
fn anvil_as_spec(anvil: &Value, ours: &Value, base: &Value, transfers: bool) -> Value {
    let mut out = anvil.clone();
    let ours = ours.as_array().unwrap();
    for (i, b) in out.as_array_mut().unwrap().iter_mut().enumerate() {
        let o = &ours[i];
        // anvil runs its first block at the base block's own number and time, then adds 1 and
        // 12 (`block_env.number += 1`, `timestamp += 12` after each block); geth's
        // `sanitizeChain`: "n := prevNumber + 1", "t = prevTimestamp + timestampIncrement".
        let (n, t) = (parse_u64(&b["number"]), parse_u64(&b["timestamp"]));
        assert_eq!(n + 1, parse_u64(&o["number"]), "anvil's number, block {i}");
        assert_eq!(
            t + 12,
            parse_u64(&o["timestamp"]),
            "anvil's time, block {i}"
        );
        if i == 0 {
            assert_eq!(b["number"], base["number"]);
        }
        // anvil leaves `parentHash` zero (`parent_hash: Default::default()`); geth:
        // `header.ParentHash = parent.Hash()`.
        assert_eq!(b["parentHash"], json!(ZERO_HASH), "block {i}");
        // anvil never zeroes the base fee (its header takes `block_env.basefee`, the base
        // block's, then its own next-block fee); geth without validation: "the base fee is set
        // to 0 if it is not overridden", with it `eip1559.CalcBaseFee(parent)`.
        if i == 0 {
            assert_eq!(
                b["baseFeePerGas"], base["baseFeePerGas"],
                "anvil's base fee"
            );
        }
        // anvil's receipts root is its transactions' root (`calculate_receipt_root` over the
        // transaction envelopes); geth's `types.DeriveSha(receipts)`.
        assert_eq!(b["receiptsRoot"], b["transactionsRoot"], "block {i}");
        // anvil's transactions are its request objects, unsigned as anvil impersonates them:
        // chain id 1, nonce and gas as given (0 when absent), no block fields; geth's are
        // `ToTransaction(types.DynamicFeeTxType)` after `sanitizeCall`'s defaults (the sender's
        // nonce, the block's remaining gas) with the chain's id: other hashes, another root.
        // And its header, with all of the above, hashes otherwise.
        for k in [
            "number",
            "timestamp",
            "parentHash",
            "baseFeePerGas",
            "receiptsRoot",
            "transactions",
            "transactionsRoot",
            "hash",
        ] {
            b[k] = o[k].clone();
        }
        // anvil's bloom takes ERC-7528's logs in (`logs.extend(sim_res.logs…)`); execution-apis'
        // notes: "ETH logs are not part of the calculation for logs bloom filter".
        if transfers {
            let all: Vec<Log> = b["calls"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| logs_of(c, true))
                .collect();
            assert_eq!(
                b["logsBloom"],
                json!(hex0x(alloy_primitives::logs_bloom(all.iter()).as_slice())),
                "anvil's bloom with the transfer logs, block {i}"
            );
            b["logsBloom"] = o["logsBloom"].clone();
        }
        // What anvil leaves out of its header (`withdrawals_root: None`, `blob_gas_used: None`,
        // `excess_blob_gas: None`, `parent_beacon_block_root: None`, `requests_hash: None`, no
        // `size`, no `withdrawals`), which geth's `makeHeaders`/`processBlock` set from
        // Shanghai, Cancun and Prague on (this anvil's fork): checked to be the values of a
        // block of this chain, then taken.
        assert_eq!(o["withdrawals"], json!([]));
        assert_eq!(o["withdrawalsRoot"], json!(EMPTY_ROOT));
        assert_eq!(o["blobGasUsed"], json!("0x0"));
        assert_eq!(o["excessBlobGas"], json!("0x0"));
        assert_eq!(o["parentBeaconBlockRoot"], json!(ZERO_HASH));
        assert_eq!(o["requestsHash"], json!(EMPTY_REQUESTS));
        for k in [
            "size",
            "withdrawals",
            "withdrawalsRoot",
            "blobGasUsed",
            "excessBlobGas",
            "parentBeaconBlockRoot",
            "requestsHash",
        ] {
            assert!(b.get(k).is_none(), "anvil now gives {k}");
            b[k] = o[k].clone();
        }
        let calls = b["calls"].as_array_mut().unwrap();
        for (j, c) in calls.iter_mut().enumerate() {
            let oc = &o["calls"][j];
            // anvil gives no `maxUsedGas` (`max_used_gas: None`); geth's `simCallResult`
            // always does.
            assert!(c.get("maxUsedGas").is_none());
            c["maxUsedGas"] = oc["maxUsedGas"].clone();
            if c["status"] == json!("0x0") {
                // anvil's error is always {-3200, "execution failed"}; geth's a revert's
                // {3, "execution reverted: …", data} or {-32015, the VM's error}. And anvil
                // returns a revert's data as `returnData`; geth's `result.Return()` is empty
                // for a failed call.
                assert_eq!(
                    c["error"],
                    json!({"code": -3200, "message": "execution failed"})
                );
                if oc["error"]["code"] == json!(3) {
                    assert_eq!(c["returnData"], oc["error"]["data"], "a revert's data");
                }
                c["error"] = oc["error"].clone();
                c["returnData"] = oc["returnData"].clone();
            }
            for (k, l) in c["logs"].as_array_mut().unwrap().iter_mut().enumerate() {
                let ol = &oc["logs"][k];
                // A log names anvil's block (its hash, number and time, above) and a
                // transaction hash anvil computes before building the one it lists.
                for m in [
                    "blockHash",
                    "blockNumber",
                    "blockTimestamp",
                    "transactionHash",
                ] {
                    l[m] = ol[m].clone();
                }
            }
        }
    }
    out
}

/// Runs `payload` through chaintrace and anvil, checks chaintrace's own answer and compares
/// the two whole once anvil's departures are mapped.
fn same_as_anvil(serve: &Serve, anvil: &Anvil, base: &Value, payload: Value, what: &str) -> Value {
    let at = base["number"].clone();
    let ours = result(&simulate(&serve.url, &payload, &at), what);
    check_own(&ours, b256(&base["hash"]), what);
    let theirs = anvil.rpc("eth_simulateV1", json!([payload, at]));
    let transfers = payload["traceTransfers"] == json!(true);
    assert_eq!(
        anvil_as_spec(&theirs, &ours, base, transfers),
        ours,
        "{what}: anvil (departures mapped) vs chaintrace"
    );
    ours
}

/// A contract that stores its calldata's first word in slot 0, and returns slot 0 when called
/// without calldata (`CALLDATASIZE ISZERO PUSH1 0x0c JUMPI PUSH1 0 CALLDATALOAD PUSH1 0 SSTORE
/// STOP JUMPDEST PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN`).
const STORE_OR_LOAD: &str = "0x3615600c57600035600055005b60005460005260206000f3";

#[test]
fn simulate_v1_equals_anvils_own_behind_a_node_refusing_it() {
    let s = anvil::scenario();
    let proxy = Proxy::start(&s.url, &["--deny", "eth_simulateV1"]);
    let serve = Serve::start(&proxy.url, &[]);
    let base = s
        .anvil
        .rpc("eth_getBlockByNumber", json!(["latest", false]));
    let one = json!({"blockStateCalls": [{"calls": []}]});
    // The node behind the proxy does not answer the method.
    let refused = simulate(&proxy.url, &one, &json!("latest"));
    assert_eq!(refused["error"]["code"], json!(-32601), "{refused}");

    let (sender, alice, bob, carol) = (
        s.addr("sender"),
        s.addr("alice"),
        s.addr("bob"),
        s.addr("carol"),
    );
    let (logger, reverter, sink, hub) = (
        s.addr("Logger"),
        s.addr("Reverter"),
        s.addr("Sink"),
        s.addr("Hub"),
    );
    let q = anvil::qty;
    let fresh: Address = "0x00000000000000000000000000000000000a11ce"
        .parse()
        .unwrap();
    let store: Address = "0x000000000000000000000000000000000000c0de"
        .parse()
        .unwrap();

    // Plain transfers, each sender's nonce its own.
    let plain = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"blockStateCalls": [{"calls": [
            {"from": sender, "to": alice, "value": q(ETH)},
            {"from": alice, "to": bob, "value": q(ETH / 2)},
            {"from": sender, "to": carol, "value": q(1)}]}]}),
        "plain transfers",
    );
    assert_eq!(plain[0]["gasUsed"], json!(q(3 * 21_000)));

    // The scenario's contracts: logs, a revert with its reason, a receive() with value.
    let calls = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"blockStateCalls": [{"calls": [
            {"from": sender, "to": logger, "input": hex0x(&calldata("logAll(uint256)", &[w_u(77)]))},
            {"from": sender, "to": reverter, "input": hex0x(&calldata("failString()", &[]))},
            {"from": sender, "to": sink, "value": q(ETH / 4)},
            {"from": sender, "to": logger, "input": hex0x(&calldata("peek(uint256)", &[w_u(5)]))}]}]}),
        "contract calls",
    );
    let failed = &calls[0]["calls"][1];
    assert_eq!(failed["status"], json!("0x0"));
    assert_eq!(failed["returnData"], json!("0x"));
    assert_eq!(failed["error"]["code"], json!(3));
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("execution reverted: "),
        "{failed}"
    );
    // LOG0 … LOG4 and `Ping`.
    assert_eq!(calls[0]["calls"][0]["logs"].as_array().unwrap().len(), 6);

    // State overrides: a balance for an empty account, code with a slot set by stateDiff.
    let overridden = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"blockStateCalls": [{
            "stateOverrides": {
                fresh.to_string(): {"balance": q(2 * ETH)},
                store.to_string(): {"code": STORE_OR_LOAD, "stateDiff": {
                    "0x0000000000000000000000000000000000000000000000000000000000000000":
                    "0x000000000000000000000000000000000000000000000000000000000000002a"}}},
            "calls": [
                {"from": fresh, "to": bob, "value": q(ETH)},
                {"from": fresh, "to": store}]}]}),
        "state overrides",
    );
    assert_eq!(
        overridden[0]["calls"][1]["returnData"],
        json!(format!("0x{:064x}", 0x2a))
    );

    // Two blocks, the second on the state the first left: a stored word read back, and ether
    // the first block gave spent in the second.
    let chained = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"blockStateCalls": [
            {"stateOverrides": {store.to_string(): {"code": STORE_OR_LOAD}},
             "calls": [
                {"from": sender, "to": store, "input": format!("0x{:064x}", 7)},
                {"from": sender, "to": fresh, "value": q(ETH)}]},
            {"calls": [
                {"from": bob, "to": store},
                {"from": fresh, "to": carol, "value": q(ETH / 2)}]}]}),
        "two chained blocks",
    );
    assert_eq!(
        chained[1]["calls"][0]["returnData"],
        json!(format!("0x{:064x}", 7))
    );
    assert_eq!(chained[1]["calls"][1]["status"], json!("0x1"));

    // traceTransfers: Hub.fanout moves ether to an account, into Sink's receive() (which
    // logs) and through Sink.forward: ERC-7528 logs between the contracts' own, in order.
    let fanout = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"traceTransfers": true, "blockStateCalls": [{"calls": [
            {"from": sender, "to": hub, "value": q(3000),
             "input": hex0x(&calldata("fanout(address,address)", &[w_addr(carol), w_addr(sink)]))},
            {"from": sender, "to": alice, "value": q(5)}]}]}),
        "traceTransfers",
    );
    let logs = fanout[0]["calls"][0]["logs"].as_array().unwrap();
    let emitters: Vec<&str> = logs
        .iter()
        .map(|l| l["address"].as_str().unwrap())
        .collect();
    let sink_text = format!("{sink:?}");
    assert_eq!(
        emitters,
        vec![
            TRANSFERS,
            TRANSFERS,
            TRANSFERS,
            sink_text.as_str(),
            TRANSFERS,
            TRANSFERS
        ],
        "{logs:?}"
    );
    assert_eq!(
        fanout[0]["calls"][1]["logs"][0]["logIndex"],
        json!(q(logs.len() as u128))
    );

    // validation: with the sender's nonce and a fee cap over the base fee, a block anvil
    // answers too (its base fee mapped, see anvil_as_spec).
    let nonce = parse_u64(
        &s.anvil
            .rpc("eth_getTransactionCount", json!([sender, base["number"]])),
    );
    let valid = same_as_anvil(
        &serve,
        &s.anvil,
        &base,
        json!({"validation": true, "blockStateCalls": [{"calls": [
            {"from": sender, "to": alice, "value": q(1), "nonce": q(nonce as u128),
             "maxFeePerGas": q(100_000_000_000), "maxPriorityFeePerGas": q(1)}]}]}),
        "validation",
    );
    // geth's base fee of a validated block: EIP-1559's after the base block.
    let base_fee = alloy_eips::calc_next_block_base_fee(
        parse_u64(&base["gasUsed"]),
        parse_u64(&base["gasLimit"]),
        parse_u64(&base["baseFeePerGas"]),
        alloy_eips::eip1559::BaseFeeParams::ethereum(),
    );
    assert_eq!(valid[0]["baseFeePerGas"], json!(q(base_fee as u128)));

    // validation with a nonce the sender has used: geth's -38010 with its text. anvil 1.7.1
    // checks no nonce in eth_simulateV1 (its call environment never compares it) and answers
    // the block; the specification (execute.yaml: -38010 "Transactions nonce is too low")
    // and geth (`preCheck`, `txValidationError`) refuse it.
    let stale = json!({"validation": true, "blockStateCalls": [{"calls": [
        {"from": sender, "to": alice, "value": q(1), "nonce": "0x0",
         "maxFeePerGas": q(100_000_000_000)}]}]});
    let ours = simulate(&serve.url, &stale, &base["number"]);
    let gas = parse_u64(&base["gasLimit"]);
    assert_eq!(
        ours["error"],
        json!({"code": -38010, "message": format!(
            "err: nonce too low: address {}, tx: 0 state: {nonce} (supplied gas {gas})",
            sender.to_checksum(None))}),
        "{ours}"
    );
    let theirs = s
        .anvil
        .try_rpc("eth_simulateV1", json!([stale, base["number"]]));
    assert!(
        matches!(theirs, Ok(Ok(_))),
        "anvil now refuses it: {theirs:?}"
    );
    // A nonce ahead of the sender's: -38011; and a call asking more gas than its block has
    // left: -38015 (geth's `sanitizeCall`), with their texts.
    let ahead = json!({"validation": true, "blockStateCalls": [{"calls": [
        {"from": sender, "to": alice, "nonce": q(nonce as u128 + 5),
         "maxFeePerGas": q(100_000_000_000), "gas": q(21_000)}]}]});
    let e = simulate(&serve.url, &ahead, &base["number"]);
    assert_eq!(
        e["error"],
        json!({"code": -38011, "message": format!(
            "err: nonce too high: address {}, tx: {} state: {nonce} (supplied gas 21000)",
            sender.to_checksum(None), nonce + 5)}),
        "{e}"
    );
    let full = json!({"blockStateCalls": [{"blockOverrides": {"gasLimit": q(30_000)},
        "calls": [{"from": sender, "to": alice, "gas": q(21_000)},
                  {"from": sender, "to": bob, "gas": q(21_000)}]}]});
    let e = simulate(&serve.url, &full, &base["number"]);
    assert_eq!(
        e["error"],
        json!({"code": -38015,
            "message": "block gas limit reached: remaining: 9000, required: 21000"}),
        "{e}"
    );

    // The request's bounds, before the node is asked anything.
    let many = json!({"blockStateCalls": vec![json!({}); 257]});
    let e = simulate(&serve.url, &many, &json!("latest"));
    assert_eq!(
        e["error"],
        json!({"code": -38026, "message": "too many blocks"})
    );
    let wide = json!({"blockStateCalls": [{"calls": vec![json!({}); 5001]}]});
    let e = simulate(&serve.url, &wide, &json!("latest"));
    assert_eq!(
        e["error"],
        json!({"code": -38026, "message": "too many calls in block: 5001 > 5000"})
    );
    let e = simulate(&serve.url, &json!({}), &json!("latest"));
    assert_eq!(
        e["error"],
        json!({"code": -32602, "message": "empty input"})
    );
    let e = simulate(&serve.url, &one, &json!("0xffffff"));
    assert_eq!(
        e["error"],
        json!({"code": -32000, "message": "header not found"})
    );
    let log = serve.log_when(|l| l.matches("\"method\":\"eth_simulateV1\"").count() >= 13);
    assert!(!log.contains("forwarded"), "{log}");
}

/// The execution-apis example files kept in tests/data (their request and geth's answer).
fn examples() -> Vec<(String, Value, Value)> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/execution-apis/eth_simulateV1");
    let mut out: Vec<(String, Value, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let line = |p: &str| -> Value {
                let l = text.lines().find(|l| l.starts_with(p)).unwrap();
                serde_json::from_str(&l[p.len()..]).unwrap()
            };
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, line(">> "), line("<< "))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `v` without what only the specification's own chain state gives: `stateRoot` and the
/// hashes that follow from it.
fn without_state_hashes(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "stateRoot" | "hash" | "parentHash" | "blockHash"
                    )
                })
                .map(|(k, v)| (k.clone(), without_state_hashes(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_state_hashes).collect()),
        other => other.clone(),
    }
}

#[test]
fn execution_apis_examples_equal_geths_answers() {
    // The specification's test chain as far as these examples read it: its chain id, gas
    // limit and fork, head block 0x36 at time 0x21c (tests/genesis.json, tests/headfcu.json).
    let node = Anvil::start_with_args(&[
        "--chain-id",
        "3503995874084926",
        "--gas-limit",
        "200000000",
        "--timestamp",
        "0",
        "--hardfork",
        "osaka",
    ]);
    node.rpc("anvil_mine", json!(["0x35", "0xa"]));
    node.rpc("evm_setNextBlockTimestamp", json!(["0x21c"]));
    node.rpc("evm_mine", json!([]));
    let head = node.rpc("eth_getBlockByNumber", json!(["latest", false]));
    assert_eq!(
        (head["number"].clone(), head["timestamp"].clone()),
        (json!("0x36"), json!("0x21c"))
    );
    let proxy = Proxy::start(&node.url, &["--deny", "eth_simulateV1"]);
    let serve = Serve::start(&proxy.url, &[]);
    let list = examples();
    assert!(list.len() >= 20, "{}", list.len());
    for (name, request, answer) in &list {
        let got = post(&serve.url, "eth_simulateV1", request["params"].clone());
        match answer.get("error") {
            Some(e) => assert_eq!(got["error"], *e, "{name}"),
            None => {
                let ours = result(&got, name);
                assert_eq!(
                    without_state_hashes(&ours),
                    without_state_hashes(&answer["result"]),
                    "{name}: chaintrace vs geth"
                );
                // What was left out, checked another way.
                check_own(&ours, b256(&head["hash"]), name);
            }
        }
    }
    eprintln!(
        "execution-apis: {} eth_simulateV1 examples equal geth's answers",
        list.len()
    );
}
