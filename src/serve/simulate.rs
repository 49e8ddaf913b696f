//! `eth_simulateV1` (ethereum/execution-apis `src/eth/execute.yaml`) answered locally over any
//! node: the payload read as go-ethereum reads it (`simOpts`, `simBlock`, `TransactionArgs`,
//! `override.StateOverride`, `override.BlockOverrides`: member names matched without regard to
//! case, members geth does not know ignored, quantities in geth's hex), the blocks run by
//! [`crate::replay::simulate`], and the answer shaped as geth's `simBlockResult`: the block as
//! `RPCMarshalBlock` writes it (its members in Go's sorted map order) with `calls` among them.
//!
//! Like the trace methods it runs on a worker, under the request's deadline and byte budget;
//! its own limits are geth's: 256 blocks, 5,000 calls a block, 10,000 calls in all (-38026).

use alloy_eips::eip2930::{AccessList, AccessListItem};
use alloy_primitives::{Address, Bytes, B256};
use serde_json::{json, Map, Value};

use super::methods::{block_ref_param, reply, Ctx, Fault, Outcome, Reply};
use crate::replay::overrides::{hash, quantity, quantity_u64, BlockOverrides, StateOverride};
use crate::replay::simulate::{
    simulate, SimBlock, SimCall, SimError, SimRequest, SimTx, SimulatedBlock,
};
use crate::source::rpc::RpcSource;

/// `invalid argument 0: …` (-32602), geth's answer to a payload it cannot decode.
fn bad(why: impl std::fmt::Display) -> Fault {
    Fault::params(format!("invalid argument 0: {why}"))
}

/// The member `name` of `o`, matched as Go's JSON decoder matches struct fields (exact first,
/// then without regard to case); `null` is absent.
fn member<'a>(o: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    o.get(name)
        .or_else(|| {
            o.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .filter(|v| !v.is_null())
}

fn flag(o: &Map<String, Value>, name: &str) -> Result<bool, Fault> {
    match member(o, name) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(bad(format!("{name}: expected a boolean, got {v}"))),
    }
}

fn address(v: &Value, what: &str) -> Result<Address, Fault> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("{what}: {v} is not an address")))
}

fn bytes(v: &Value, what: &str) -> Result<Bytes, Fault> {
    v.as_str()
        .filter(|s| s.starts_with("0x") || s.starts_with("0X"))
        .and_then(|s| alloy_primitives::hex::decode(&s[2..]).ok())
        .map(Bytes::from)
        .ok_or_else(|| bad(format!("{what}: {v} is not 0x-prefixed hex bytes")))
}

fn access_list(v: &Value, what: &str) -> Result<AccessList, Fault> {
    let items = v
        .as_array()
        .ok_or_else(|| bad(format!("{what}: expected an array")))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let o = item
            .as_object()
            .ok_or_else(|| bad(format!("{what}[{i}]: expected an object")))?;
        let address = address(
            member(o, "address").unwrap_or(&Value::Null),
            &format!("{what}[{i}].address"),
        )?;
        let keys = match member(o, "storageKeys") {
            None => Vec::new(),
            Some(Value::Array(keys)) => keys
                .iter()
                .map(|k| {
                    hash(
                        k.as_str().unwrap_or_default(),
                        &format!("{what}[{i}].storageKeys"),
                    )
                    .map_err(bad)
                })
                .collect::<Result<Vec<B256>, Fault>>()?,
            Some(v) => return Err(bad(format!("{what}[{i}].storageKeys: {v} is not an array"))),
        };
        out.push(AccessListItem {
            address,
            storage_keys: keys,
        });
    }
    Ok(AccessList(out))
}

/// geth's `TransactionArgs` as `eth_simulateV1` reads them. Blob and EIP-7702 fields are refused
/// (not simulated here); anything else geth does not know is ignored, as it is there.
fn call(v: &Value, at: &str) -> Result<SimCall, Fault> {
    let o = v
        .as_object()
        .ok_or_else(|| bad(format!("{at}: expected an object")))?;
    // `maxFeePerBlobGas` alone is read and left unused, as geth leaves it without blob hashes.
    for unsupported in [
        "blobVersionedHashes",
        "blobs",
        "commitments",
        "proofs",
        "authorizationList",
    ] {
        if member(o, unsupported).is_some() {
            return Err(bad(format!(
                "{at}.{unsupported}: blob and EIP-7702 transactions are not simulated by this \
                 server"
            )));
        }
    }
    let what = |k: &str| format!("{at}.{k}");
    let addr = |k: &str| member(o, k).map(|v| address(v, &what(k))).transpose();
    let big = |k: &str| {
        member(o, k)
            .map(|v| quantity(v, &what(k)).map_err(bad))
            .transpose()
    };
    let small = |k: &str| {
        member(o, k)
            .map(|v| quantity_u64(v, &what(k)).map_err(bad))
            .transpose()
    };
    let input = match (member(o, "input"), member(o, "data")) {
        (Some(v), _) => bytes(v, &what("input"))?,
        (None, Some(v)) => bytes(v, &what("data"))?,
        (None, None) => Bytes::new(),
    };
    Ok(SimCall {
        from: addr("from")?,
        to: addr("to")?,
        gas: small("gas")?,
        gas_price: big("gasPrice")?,
        max_fee_per_gas: big("maxFeePerGas")?,
        max_priority_fee_per_gas: big("maxPriorityFeePerGas")?,
        value: big("value")?,
        nonce: small("nonce")?,
        input,
        access_list: member(o, "accessList")
            .map(|v| access_list(v, &what("accessList")))
            .transpose()?,
        chain_id: big("chainId")?,
    })
}

/// geth's `simOpts` (argument 0) and the RPC gas cap.
pub fn request(params: &Value, gas_cap: u64) -> Result<(SimRequest, bool), Fault> {
    let o = params
        .get(0)
        .and_then(Value::as_object)
        .ok_or_else(|| bad("expected the simulation payload object"))?;
    let list = match member(o, "blockStateCalls") {
        None => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(v) => return Err(bad(format!("blockStateCalls: {v} is not an array"))),
    };
    let mut blocks = Vec::with_capacity(list.len());
    for (i, b) in list.iter().enumerate() {
        let at = format!("blockStateCalls[{i}]");
        let b = b
            .as_object()
            .ok_or_else(|| bad(format!("{at}: expected an object")))?;
        let block = member(b, "blockOverrides")
            .map(BlockOverrides::from_json_simulate)
            .transpose()
            .map_err(|e| bad(format!("{at}.blockOverrides: {e}")))?
            .unwrap_or_default();
        let state = member(b, "stateOverrides")
            .map(StateOverride::from_json_simulate)
            .transpose()
            .map_err(|e| bad(format!("{at}.stateOverrides: {e}")))?;
        let calls = match member(b, "calls") {
            None => Vec::new(),
            Some(Value::Array(c)) => c
                .iter()
                .enumerate()
                .map(|(j, c)| call(c, &format!("{at}.calls[{j}]")))
                .collect::<Result<_, _>>()?,
            Some(v) => return Err(bad(format!("{at}.calls: {v} is not an array"))),
        };
        blocks.push(SimBlock {
            block,
            state,
            calls,
        });
    }
    let req = SimRequest {
        blocks,
        trace_transfers: flag(o, "traceTransfers")?,
        validation: flag(o, "validation")?,
        gas_cap,
    };
    Ok((req, flag(o, "returnFullTransactions")?))
}

/// Answers `eth_simulateV1(payload, block?)`.
pub fn answer(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<Reply, Fault> {
    let (req, full) = request(params, ctx.gas_cap)?;
    // geth checks the payload's size before it resolves the block.
    crate::replay::simulate::check_limits(&req.blocks)
        .map_err(|f| Fault::new(f.code, f.message))?;
    let at = block_ref_param(params, 1)?;
    let sim = match simulate(source, &req, &at) {
        Ok(s) => s,
        Err(SimError::Refused(f)) => return Err(Fault::new(f.code, f.message)),
        // geth's text for a block it does not have.
        Err(SimError::Failed(crate::replay::Error::Source(
            crate::source::error::SourceError::NotFound { .. },
        ))) => return Err(Fault::server("header not found")),
        Err(SimError::Failed(e)) => return Err(e.into()),
    };
    if sim.passes > 1 {
        outcome
            .notes
            .push(format!("state read in {} round trips", sim.passes));
    }
    let blocks: Vec<Value> = sim.blocks.iter().map(|b| block_json(b, full)).collect();
    let result = Value::Array(blocks);
    reply(ctx, move |out| {
        serde_json::to_writer(out, &result).map_err(std::io::Error::other)
    })
}

fn qty(n: impl std::fmt::LowerHex) -> Value {
    json!(format!("{n:#x}"))
}

fn hex(b: &[u8]) -> Value {
    json!(alloy_primitives::hex::encode_prefixed(b))
}

/// One block as geth's `RPCMarshalBlock` writes it (a Go map: members in sorted order), with
/// its `calls`.
fn block_json(b: &SimulatedBlock, full: bool) -> Value {
    let h = &b.header;
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    if let Some(f) = h.base_fee_per_gas {
        put("baseFeePerGas", qty(f));
    }
    if let Some(g) = h.blob_gas_used {
        put("blobGasUsed", qty(g));
    }
    let calls: Vec<Value> = b
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| call_json(b, i, c))
        .collect();
    put("calls", Value::Array(calls));
    put("difficulty", qty(h.difficulty));
    if let Some(e) = h.excess_blob_gas {
        put("excessBlobGas", qty(e));
    }
    put("extraData", hex(&h.extra_data));
    put("gasLimit", qty(h.gas_limit));
    put("gasUsed", qty(h.gas_used));
    put("hash", json!(b.hash));
    put("logsBloom", hex(h.logs_bloom.as_slice()));
    put("miner", json!(h.beneficiary));
    put("mixHash", json!(h.mix_hash));
    put("nonce", json!(h.nonce));
    put("number", qty(h.number));
    if let Some(r) = h.parent_beacon_block_root {
        put("parentBeaconBlockRoot", json!(r));
    }
    put("parentHash", json!(h.parent_hash));
    put("receiptsRoot", json!(h.receipts_root));
    if let Some(r) = h.requests_hash {
        put("requestsHash", json!(r));
    }
    put("sha3Uncles", json!(h.ommers_hash));
    put("size", qty(b.size));
    put("stateRoot", json!(h.state_root));
    put("timestamp", qty(h.timestamp));
    let txs: Vec<Value> = b
        .txs
        .iter()
        .enumerate()
        .map(|(i, t)| match full {
            true => tx_json(b, t, i),
            false => json!(t.hash),
        })
        .collect();
    put("transactions", Value::Array(txs));
    put("transactionsRoot", json!(h.transactions_root));
    put("uncles", json!([]));
    if let Some(ws) = &b.withdrawals {
        let ws: Vec<Value> = ws
            .iter()
            .map(|w| {
                json!({"index": qty(w.index), "validatorIndex": qty(w.validator_index),
                    "address": w.address, "amount": qty(w.amount)})
            })
            .collect();
        put("withdrawals", Value::Array(ws));
    }
    if let Some(r) = h.withdrawals_root {
        put("withdrawalsRoot", json!(r));
    }
    Value::Object(m)
}

/// geth's `simCallResult`: `returnData`, `logs`, `gasUsed`, `maxUsedGas`, `status`, `error`.
fn call_json(b: &SimulatedBlock, i: usize, c: &crate::replay::simulate::SimCallResult) -> Value {
    let tx_hash = b.txs.get(i).map(|t| t.hash).unwrap_or_default();
    let logs: Vec<Value> = c
        .logs
        .iter()
        .map(|l| {
            json!({
                "address": l.address,
                "topics": l.topics,
                "data": hex(&l.data),
                "blockNumber": qty(b.header.number),
                "transactionHash": tx_hash,
                "transactionIndex": qty(i as u64),
                "blockHash": b.hash,
                "blockTimestamp": qty(b.header.timestamp),
                "logIndex": qty(l.index),
                "removed": false,
            })
        })
        .collect();
    let mut v = json!({
        "returnData": hex(&c.return_data),
        "logs": logs,
        "gasUsed": qty(c.gas_used),
        "maxUsedGas": qty(c.max_used_gas),
        "status": qty(u64::from(c.success)),
    });
    if let Some(e) = &c.error {
        let mut err = json!({"message": e.message, "code": e.code});
        if let Some(d) = &e.data {
            err["data"] = hex(d);
        }
        v["error"] = err;
    }
    v
}

/// geth's `RPCTransaction` of a simulated transaction (`newRPCTransactionFromBlockIndex`, its
/// sender the call's `from`), unsigned: `v`, `r`, `s` zero.
fn tx_json(b: &SimulatedBlock, t: &SimTx, index: usize) -> Value {
    let mut v = json!({
        "blockHash": b.hash,
        "blockNumber": qty(b.header.number),
        "blockTimestamp": qty(b.header.timestamp),
        "from": t.from,
        "gas": qty(t.gas),
        "gasPrice": qty(t.effective_gas_price),
    });
    if let (Some(cap), Some(tip)) = (t.max_fee_per_gas, t.max_priority_fee_per_gas) {
        v["maxFeePerGas"] = qty(cap);
        v["maxPriorityFeePerGas"] = qty(tip);
    }
    v["hash"] = json!(t.hash);
    v["input"] = hex(&t.input);
    v["nonce"] = qty(t.nonce);
    v["to"] = json!(t.to);
    v["transactionIndex"] = qty(index as u64);
    v["value"] = qty(t.value);
    v["type"] = qty(t.kind);
    match t.kind {
        // geth derives a legacy transaction's chain id from `v`, which is 0 here:
        // `deriveChainId` computes (0 - 35) / 2 in uint64 (core/types/transaction_signing.go).
        0 => v["chainId"] = qty(u64::MAX.wrapping_sub(34) / 2),
        _ => {
            v["accessList"] = json!(t.access_list);
            v["chainId"] = qty(t.chain_id);
        }
    }
    v["v"] = json!("0x0");
    v["r"] = json!("0x0");
    v["s"] = json!("0x0");
    if t.kind != 0 {
        v["yParity"] = json!("0x0");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::U256;

    #[test]
    fn payloads_are_read_as_geth_reads_them() {
        let (req, full) = request(
            &json!([{"BlockStateCalls": [{"calls": [{"from": "0xc000000000000000000000000000000000000000",
                "to": "0xc100000000000000000000000000000000000000", "value": "0x3e8",
                "Input": "0x01", "data": "0x02", "unknownField": 1}],
                "blockOverrides": {"number": "0x40", "withdrawals": []},
                "stateOverrides": {"0xc000000000000000000000000000000000000000": {"balance": "0x7d0",
                    "movePrecompileToAddress": "0x0000000000000000000000000000000000123456"}}}],
                "traceTransfers": true, "returnFullTransactions": true}]),
            7,
        )
        .unwrap();
        assert!(full && req.trace_transfers && !req.validation);
        assert_eq!(req.gas_cap, 7);
        let c = &req.blocks[0].calls[0];
        assert_eq!(c.value, Some(U256::from(1000)));
        assert_eq!(c.input.as_ref(), &[1]);
        assert_eq!(req.blocks[0].block.number, Some(0x40));
        for (bad_payload, needle) in [
            (
                json!([{"blockStateCalls": [{"calls": [{"gas": "10"}]}]}]),
                "gas",
            ),
            (
                json!([{"blockStateCalls": [{"calls": [{"value": "0x01"}]}]}]),
                "leading zero",
            ),
            (
                json!([{"blockStateCalls": [{"calls": [{"authorizationList": []}]}]}]),
                "EIP-7702",
            ),
            (json!([{"blockStateCalls": {}}]), "not an array"),
            (json!([{"validation": "yes"}]), "boolean"),
            (json!(["latest"]), "payload"),
        ] {
            let e = request(&bad_payload, 0).unwrap_err();
            assert_eq!(e.code, -32602, "{bad_payload}");
            assert!(e.message.contains(needle), "{bad_payload}: {}", e.message);
        }
    }
}
