//! Otterscan's `ots_*` methods (API level 8) over any node, shaped as anvil 1.7.1 answers them
//! except where Erigon's source — the implementation Otterscan's UI reads — shows anvil's answer
//! wrong (each such place is named below, and in `tests/live/ots_serve.rs`):
//!
//! - `ots_getApiLevel` (8); `ots_hasCode(address, block)`: `eth_getCode` is not empty;
//! - `ots_getInternalOperations(hash)`, `ots_traceTransaction(hash)`: the mined transaction
//!   replayed under the callTracer (as `debug_traceTransaction` is), its frames read as Erigon's
//!   tracers read the EVM's;
//! - `ots_getTransactionError(hash)`: a failed transaction replayed, its revert data;
//! - `ots_getBlockDetails(number)`, `ots_getBlockDetailsByHash(hash)`,
//!   `ots_getBlockTransactions(number, page, pageSize)`: the node's block and receipts, one batch;
//! - `ots_getTransactionBySenderAndNonce(address, nonce)`: a binary search over
//!   `eth_getTransactionCount` by block, then that block's transactions;
//! - `ots_getContractCreator(address)`: a binary search over `eth_getCode` by block, then that
//!   block's receipts, or its replay under the callTracer for a contract a contract made;
//! - `erigon_getHeaderByNumber(number)`, which Otterscan probes before anything else: the
//!   node's `eth_getBlockByNumber(number, false)`, as anvil answers it.
//!
//! `ots_searchTransactionsBefore`/`After` need an address index and are forwarded.

use alloy_primitives::{Address, Bytes, B256, U256};
use serde::Serialize;
use serde_json::{json, Value};

use super::methods::{
    hash_param, replay_block, self_check, timed_out, too_large, Ctx, Fault, Outcome,
};
use crate::replay::mined::Mined;
use crate::replay::TraceResult;
use crate::rpc::RpcError;
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::trace::call::{CallFrame, CallKind, CallTracerConfig};
use crate::trace::TracerSpec;

/// The Otterscan methods `serve` answers.
pub const METHODS: &[&str] = &[
    "ots_getApiLevel",
    "ots_hasCode",
    "ots_getInternalOperations",
    "ots_getTransactionError",
    "ots_traceTransaction",
    "ots_getBlockDetails",
    "ots_getBlockDetailsByHash",
    "ots_getBlockTransactions",
    "ots_getTransactionBySenderAndNonce",
    "ots_getContractCreator",
    "erigon_getHeaderByNumber",
    "ots_searchTransactionsBefore",
    "ots_searchTransactionsAfter",
];

/// The level Otterscan asks for (`MIN_API_LEVEL` in its `params.ts`; Erigon's `API_LEVEL`).
const API_LEVEL: u64 = 8;

/// anvil's error for a block it does not have (`BlockchainError::BlockNotFound`); Erigon
/// answers `null`.
const BLOCK_NOT_FOUND: i64 = -32001;

/// anvil's error for `ots_getInternalOperations` of a transaction it does not have
/// (`BlockchainError::DataUnavailable`).
const DATA_UNAVAILABLE: i64 = -32603;

/// One of `ots_getInternalOperations`' entries: a value transfer (0), self-destruct (1), CREATE
/// (2) or CREATE2 (3) inside the transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InternalOperation {
    #[serde(rename = "type")]
    pub kind: u8,
    pub from: Address,
    pub to: Address,
    pub value: U256,
}

/// One of `ots_traceTransaction`'s entries, in Erigon's key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceEntry {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub depth: usize,
    pub from: Address,
    pub to: Address,
    pub value: Option<U256>,
    pub input: Bytes,
    pub output: Bytes,
}

/// The address a frame went to: a CREATE's, made or attempted, whose `to` geth's JSON drops
/// when it failed.
fn target(f: &CallFrame) -> Address {
    f.to.or(f.create_address).unwrap_or_default()
}

/// Erigon's `OperationsTracer` over a call tree: every frame but the transaction's own, in the
/// order the EVM entered them — CALL frames that carry value (a CALLCODE's stays with its
/// caller; DELEGATECALL and STATICCALL carry none), CREATE and CREATE2 frames (failed ones too,
/// at the address they tried), and SELFDESTRUCT with the balance it moved.
///
/// anvil 1.7.1 lists the transaction's own frame too (a plain transfer shows as an internal
/// one; Erigon's tracer returns at depth 0), and lists a frame that self-destructs only as the
/// self-destruct, not the value its call brought (Erigon lists both).
pub fn internal_operations(root: &CallFrame) -> Vec<InternalOperation> {
    fn walk(f: &CallFrame, out: &mut Vec<InternalOperation>) {
        for c in &f.calls {
            let value = c.value.unwrap_or_default();
            let kind = match c.kind {
                CallKind::Call if !value.is_zero() => Some(0),
                CallKind::Selfdestruct => Some(1),
                CallKind::Create => Some(2),
                CallKind::Create2 => Some(3),
                _ => None,
            };
            if let Some(kind) = kind {
                out.push(InternalOperation {
                    kind,
                    from: c.from,
                    to: target(c),
                    value,
                });
            }
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// Erigon's `TransactionTracer` over a call tree: every frame in the order the EVM entered
/// them, the transaction's own at depth 0; `value` null for STATICCALL and DELEGATECALL (no
/// value moves), a SELFDESTRUCT's the balance it moved, one level below the frame that ran it;
/// `output` what the frame returned (a revert's data; nothing for any other failure).
///
/// anvil 1.7.1 builds its list from Parity traces: calls only (no CREATE, CREATE2 or
/// SELFDESTRUCT entry, which Otterscan's trace view draws) and a value on every call. Erigon
/// leaves calls into precompiles out ("maybe we shouldn't?", its comment says); anvil lists
/// them, and so does this.
pub fn trace_entries(root: &CallFrame) -> Vec<TraceEntry> {
    fn walk(f: &CallFrame, depth: usize, out: &mut Vec<TraceEntry>) {
        let value = match f.kind {
            CallKind::Staticcall | CallKind::Delegatecall => None,
            _ => Some(f.value.unwrap_or_default()),
        };
        out.push(TraceEntry {
            kind: f.kind.as_str(),
            depth,
            from: f.from,
            to: target(f),
            value,
            input: f.input.clone(),
            output: f.output.clone().unwrap_or_default(),
        });
        for c in &f.calls {
            walk(c, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(root, 0, &mut out);
    out
}

/// The answer as text, within what the response may take.
fn text(ctx: &Ctx<'_>, v: &impl Serialize) -> Result<String, Fault> {
    let t = serde_json::to_string(v).map_err(|e| Fault::server(e.to_string()))?;
    if t.len() > ctx.max_response {
        return Err(too_large());
    }
    Ok(t)
}

/// Stops a loop of upstream requests at the request's deadline or byte budget.
fn still_running() -> Result<(), Fault> {
    match crate::replay::cancel::passed() {
        true => Err(crate::replay::Error::Replay(crate::replay::cancel::stopped()).into()),
        false => Ok(()),
    }
}

fn rpc_error(e: RpcError) -> Fault {
    SourceError::from(e).into()
}

fn missing(i: usize) -> Fault {
    Fault::params(format!("missing value for required argument {i}"))
}

/// Argument `i` as an address, with geth's messages.
fn address_param(params: &Value, i: usize) -> Result<Address, Fault> {
    let s = params
        .get(i)
        .ok_or_else(|| missing(i))?
        .as_str()
        .ok_or_else(|| Fault::params(format!("invalid argument {i}: address must be a string")))?;
    let hex = s.strip_prefix("0x").unwrap_or(s);
    if hex.len() != 40 {
        return Err(Fault::params(format!(
            "invalid argument {i}: hex string has length {}, want 40 for common.Address",
            hex.len()
        )));
    }
    s.parse::<Address>()
        .map_err(|_| Fault::params(format!("invalid argument {i}: invalid hex string")))
}

/// Argument `i` as a whole number: a JSON integer (what Otterscan sends) or a `0x` quantity.
fn number_param(params: &Value, i: usize) -> Result<u64, Fault> {
    let bad = || Fault::params(format!("invalid argument {i}: expected a number"));
    match params.get(i).ok_or_else(|| missing(i))? {
        Value::Number(n) => n.as_u64().ok_or_else(bad),
        Value::String(s) => s
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Argument `i` as a block: a number (a JSON integer or a `0x` quantity) or a tag, `latest`
/// when absent (anvil's `lenient_block_number`).
fn block_param(params: &Value, i: usize) -> Result<String, Fault> {
    match params.get(i) {
        None | Some(Value::Null) => Ok("latest".into()),
        Some(Value::String(s))
            if matches!(
                s.as_str(),
                "latest" | "earliest" | "pending" | "safe" | "finalized"
            ) =>
        {
            Ok(s.clone())
        }
        Some(_) => number_param(params, i).map(|n| format!("{n:#x}")),
    }
}

/// `ots_hasCode`'s block: [`block_param`]'s, or a block hash (EIP-1898, as Erigon takes it).
fn block_or_hash_param(params: &Value, i: usize) -> Result<Value, Fault> {
    match params.get(i) {
        Some(Value::String(s)) if s.len() == 66 => Ok(json!({"blockHash": hash_param(params, i)?})),
        Some(Value::Object(o)) => match (o.get("blockHash"), o.get("blockNumber")) {
            (Some(h), _) => Ok(json!({"blockHash": hash_param(&json!([h]), 0)?})),
            (None, Some(n)) => block_param(&json!([n]), 0).map(Value::String),
            _ => Err(Fault::params(format!(
                "invalid argument {i}: expected blockHash or blockNumber"
            ))),
        },
        _ => block_param(params, i).map(Value::String),
    }
}

/// Answers one of [`METHODS`].
pub fn dispatch(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    method: &str,
    params: &Value,
    outcome: &mut Outcome,
) -> Result<String, Fault> {
    match method {
        "ots_getApiLevel" => text(ctx, &API_LEVEL),
        // The address history, from the address index (`serve --index`).
        "ots_searchTransactionsBefore" => super::ots_search::search(ctx, source, params, true),
        "ots_searchTransactionsAfter" => super::ots_search::search(ctx, source, params, false),
        "ots_hasCode" => {
            let address = address_param(params, 0)?;
            let block = block_or_hash_param(params, 1)?;
            let code = source
                .client
                .call("eth_getCode", json!([address, block]))
                .map_err(rpc_error)?;
            text(ctx, &has_code(&code))
        }
        "ots_getInternalOperations" => {
            let hash = hash_param(params, 0)?;
            match call_tree(ctx, source, hash, outcome) {
                Ok(root) => text(ctx, &internal_operations(&root)),
                Err(f) if f.missing => Err(Fault::new(
                    DATA_UNAVAILABLE,
                    format!("transaction {hash} not found"),
                )),
                Err(f) => Err(f),
            }
        }
        "ots_traceTransaction" => {
            let hash = hash_param(params, 0)?;
            match call_tree(ctx, source, hash, outcome) {
                Ok(root) => text(ctx, &trace_entries(&root)),
                // anvil: an empty list (Erigon: an error).
                Err(f) if f.missing => Ok("[]".into()),
                Err(f) => Err(f),
            }
        }
        "ots_getTransactionError" => {
            let hash = hash_param(params, 0)?;
            text(ctx, &transaction_error(ctx, source, hash, outcome)?)
        }
        "ots_getBlockDetails" => {
            let block = block_param(params, 0)?;
            text(ctx, &block_details(source, &block)?)
        }
        "ots_getBlockDetailsByHash" => {
            let hash = hash_param(params, 0)?;
            text(ctx, &block_details(source, &format!("{hash:?}"))?)
        }
        "ots_getBlockTransactions" => {
            let block = block_param(params, 0)?;
            let page = number_param(params, 1)?;
            let size = number_param(params, 2)?;
            text(ctx, &block_transactions(source, &block, page, size)?)
        }
        "ots_getTransactionBySenderAndNonce" => {
            let sender = address_param(params, 0)?;
            let nonce = number_param(params, 1)?;
            text(ctx, &by_sender_and_nonce(source, sender, nonce)?)
        }
        "ots_getContractCreator" => {
            let address = address_param(params, 0)?;
            text(ctx, &contract_creator(ctx, source, address, outcome)?)
        }
        "erigon_getHeaderByNumber" => {
            let block = block_param(params, 0)?;
            let header = source
                .client
                .call("eth_getBlockByNumber", json!([block, false]))
                .map_err(rpc_error)?;
            text(ctx, &header)
        }
        other => Err(Fault::new(
            -32601,
            format!("the method {other} does not exist/is not available"),
        )),
    }
}

/// The mined transaction's call tree (its replay checked against its receipt).
fn call_tree(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    hash: B256,
    outcome: &mut Outcome,
) -> Result<CallFrame, Fault> {
    let spec = TracerSpec::Call(CallTracerConfig::default());
    let traced = super::parity::mined(ctx, source, hash, &spec, outcome)?;
    match traced.result {
        TraceResult::Call(root) => Ok(*root),
        _ => Err(Fault::server("the replay gave no call frames")),
    }
}

/// A transaction's revert data: none for one that succeeded (its receipt says so, no replay)
/// or failed without REVERT, or one the node does not have (anvil's `0x`; Erigon errs).
fn transaction_error(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    hash: B256,
    outcome: &mut Outcome,
) -> Result<Bytes, Fault> {
    let _guard = ctx
        .memo
        .lock_key(&format!("tx:{hash:?}"), ctx.deadline)
        .ok_or_else(timed_out)?;
    let mut m = match Mined::load(source, ctx.cache, hash, ctx.mode, None) {
        Ok(m) => m,
        Err(e) => {
            let f = Fault::from(e);
            return match f.missing {
                true => Ok(Bytes::new()),
                false => Err(f),
            };
        }
    };
    if m.receipt.get("status").and_then(Value::as_str) == Some("0x1") {
        return Ok(Bytes::new());
    }
    let traced = m.trace(source, ctx.cache, &TracerSpec::Noop)?;
    self_check(traced.hash, &traced.outcome, &m.receipt, outcome);
    let o = traced.outcome;
    Ok(match !o.success && o.halt.is_none() {
        true => o.output,
        false => Bytes::new(),
    })
}

/// The hashes of a block's transactions (objects or hashes).
fn tx_hashes(block: &Value) -> Vec<B256> {
    block
        .get("transactions")
        .and_then(Value::as_array)
        .map(|txs| {
            txs.iter()
                .filter_map(|t| t.get("hash").unwrap_or(t).as_str())
                .filter_map(|h| h.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Block `block` (a number, tag or hash; `full`: with its transactions) and its receipts in
/// transaction order, in one batch; the receipts asked by transaction, in a second, where the
/// node's `eth_getBlockReceipts` gave no answer for this block (no such method, a block hash
/// refused, a tag that moved).
fn block_and_receipts(
    source: &RpcSource,
    block: &str,
    full: bool,
) -> Result<(Value, Vec<Value>), Fault> {
    let method = match block.len() == 66 {
        true => "eth_getBlockByHash",
        false => "eth_getBlockByNumber",
    };
    let calls = [
        (method.to_string(), json!([block, full])),
        ("eth_getBlockReceipts".to_string(), json!([block])),
    ];
    let mut answers = source.client.batch(&calls).map_err(rpc_error)?.into_iter();
    let raw = answers
        .next()
        .unwrap_or(Ok(Value::Null))
        .map_err(rpc_error)?;
    if raw.is_null() {
        return Err(Fault::new(
            BLOCK_NOT_FOUND,
            format!("block {block} not found"),
        ));
    }
    let hashes = tx_hashes(&raw);
    let this_block = |r: &Value| r.get("blockHash") == raw.get("hash");
    let receipts = match answers.next() {
        Some(Ok(Value::Array(r))) if r.len() == hashes.len() && r.iter().all(this_block) => r,
        // No such method, a block hash refused, a tag that moved: by transaction.
        _ => source.receipts(&hashes)?,
    };
    if receipts.iter().any(Value::is_null) {
        return Err(Fault::server(format!(
            "the node has no receipt for a transaction of block {block}"
        )));
    }
    Ok((raw, receipts))
}

fn u256_field(v: &Value, field: &str) -> Result<U256, Fault> {
    v.get(field)
        .and_then(|x| crate::geth::hex::parse_u256(x).ok())
        .ok_or_else(|| Fault::server(format!("a receipt without {field}")))
}

/// anvil's `ots_getBlockDetails`: the block without its transactions but with their count,
/// `issuance` zero (anvil's; Erigon's engine rewards are zero after the merge too), and
/// `totalFees` (what the transactions paid, burnt base fee included: Σ gasUsed ×
/// effectiveGasPrice, as both compute it). The block keeps its `logsBloom` (anvil; Erigon nulls
/// it, and Otterscan does not read it).
fn block_details(source: &RpcSource, block: &str) -> Result<Value, Fault> {
    let (mut raw, receipts) = block_and_receipts(source, block, false)?;
    let mut fees = U256::ZERO;
    for r in &receipts {
        fees += u256_field(r, "gasUsed")? * u256_field(r, "effectiveGasPrice")?;
    }
    let count = receipts.len();
    if let Some(o) = raw.as_object_mut() {
        o.remove("transactions");
        o.insert("transactionCount".into(), json!(count));
    }
    Ok(json!({
        "block": raw,
        "issuance": {"blockReward": "0x0", "uncleReward": "0x0", "issuance": "0x0"},
        "totalFees": fees,
    }))
}

/// The transactions of page `page` of `size`, counted from the block's last (Erigon's paging:
/// page 0 is the last `size`, which Otterscan shows newest first).
fn page_range(count: usize, page: u64, size: u64) -> std::ops::Range<usize> {
    let count = count as u128;
    let end = count.saturating_sub(page as u128 * size as u128);
    let start = end.saturating_sub(size as u128);
    start as usize..end as usize
}

/// Erigon's `ots_getBlockTransactions`: the block with one page of its transactions, each
/// input cut to its selector, `transactionCount` the whole block's; the page's receipts with
/// `logs` and `logsBloom` null and the block's `timestamp`.
///
/// anvil 1.7.1 pages from the block's first transaction, counts only the page in
/// `transactionCount` and keeps the receipts' logs; Otterscan takes `transactionCount` as the
/// block's total and reverses each page, as Erigon's paging needs.
fn block_transactions(
    source: &RpcSource,
    block: &str,
    page: u64,
    size: u64,
) -> Result<Value, Fault> {
    let (mut raw, mut receipts) = block_and_receipts(source, block, true)?;
    let count = receipts.len();
    let range = page_range(count, page, size);
    let timestamp = raw.get("timestamp").cloned().unwrap_or(Value::Null);
    let mut page_receipts: Vec<Value> = receipts.drain(range.clone()).collect();
    for r in &mut page_receipts {
        if let Some(o) = r.as_object_mut() {
            o.insert("logs".into(), Value::Null);
            o.insert("logsBloom".into(), Value::Null);
            o.insert("timestamp".into(), timestamp.clone());
        }
    }
    if let Some(o) = raw.as_object_mut() {
        let mut txs = match o.remove("transactions") {
            Some(Value::Array(t)) => t,
            _ => Vec::new(),
        };
        let mut txs: Vec<Value> = txs.drain(range).collect();
        for t in &mut txs {
            if let Some(Value::String(input)) = t.get_mut("input") {
                input.truncate(10);
            }
        }
        o.insert("transactions".into(), Value::Array(txs));
        o.insert("transactionCount".into(), json!(count));
    }
    Ok(json!({"fullblock": raw, "receipts": page_receipts}))
}

/// The head's number and `method(address, "latest")`, in one batch.
fn head_and(source: &RpcSource, method: &str, address: Address) -> Result<(u64, Value), Fault> {
    let calls = [
        ("eth_blockNumber".to_string(), json!([])),
        (method.to_string(), json!([address, "latest"])),
    ];
    let mut answers = source.client.batch(&calls).map_err(rpc_error)?.into_iter();
    let mut next = || answers.next().unwrap_or(Ok(Value::Null)).map_err(rpc_error);
    let head = crate::geth::hex::parse_u64(&next()?)
        .map_err(|e| Fault::server(format!("eth_blockNumber: {e}")))?;
    Ok((head, next()?))
}

/// The first block in `0..=last` where `holds` (which, once true, stays true), or `last + 1`
/// where it never does: one upstream request per probe, stopped at the request's deadline.
fn first_block(last: u64, mut holds: impl FnMut(u64) -> Result<bool, Fault>) -> Result<u64, Fault> {
    let (mut lo, mut hi) = (0u64, last + 1);
    while lo < hi {
        still_running()?;
        let mid = lo + (hi - lo) / 2;
        match holds(mid)? {
            true => hi = mid,
            false => lo = mid + 1,
        }
    }
    Ok(lo)
}

/// The hash of `sender`'s transaction with `nonce`, or `None`: the first block after which the
/// account's nonce passed `nonce` holds it, if a transaction and not an EIP-7702 authorization
/// or a contract's CREATE moved it there.
fn by_sender_and_nonce(
    source: &RpcSource,
    sender: Address,
    nonce: u64,
) -> Result<Option<B256>, Fault> {
    let (last, latest) = head_and(source, "eth_getTransactionCount", sender)?;
    let count = |v: Result<Value, RpcError>| -> Result<u64, Fault> {
        crate::geth::hex::parse_u64(&v.map_err(rpc_error)?)
            .map_err(|e| Fault::server(format!("eth_getTransactionCount: {e}")))
    };
    if count(Ok(latest))? <= nonce {
        return Ok(None);
    }
    let n = first_block(last, |b| {
        let v = source.client.call(
            "eth_getTransactionCount",
            json!([sender, format!("{b:#x}")]),
        );
        Ok(count(v)? > nonce)
    })?;
    // Block 0 holds no transaction: a nonce given at genesis.
    if n == 0 {
        return Ok(None);
    }
    let block = source
        .client
        .call("eth_getBlockByNumber", json!([format!("{n:#x}"), true]))
        .map_err(rpc_error)?;
    let found = block
        .get("transactions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| {
            t.get("from")
                .and_then(Value::as_str)
                .and_then(|f| f.parse::<Address>().ok())
                == Some(sender)
                && t.get("nonce")
                    .map(crate::geth::hex::parse_u64)
                    .and_then(Result::ok)
                    == Some(nonce)
        })
        .and_then(|t| t.get("hash").and_then(Value::as_str))
        .and_then(|h| h.parse().ok());
    Ok(found)
}

/// `ots_getContractCreator`'s answer.
#[derive(Serialize)]
struct Creator {
    hash: B256,
    creator: Address,
}

fn has_code(v: &Value) -> bool {
    !matches!(v.as_str(), None | Some("0x") | Some(""))
}

/// Who created the contract now at `address` and in which transaction, or `None` for an
/// address without code (Erigon: an EOA, an account that does not exist, a contract that
/// destroyed itself; anvil finds the creation of a contract gone since). The first block with
/// its code holds its creation (a contract redeployed at the same address before EIP-6780
/// may be found at an earlier deployment); a transaction that created it is in the block's
/// receipts, a contract that did is found by replaying the block under the callTracer (the
/// last CREATE or CREATE2 of the address in the block that did not fail, nor any frame above
/// it).
fn contract_creator(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    address: Address,
    outcome: &mut Outcome,
) -> Result<Option<Creator>, Fault> {
    let (last, code) = head_and(source, "eth_getCode", address)?;
    if !has_code(&code) {
        return Ok(None);
    }
    let n = first_block(last, |b| {
        source
            .client
            .call("eth_getCode", json!([address, format!("{b:#x}")]))
            .map(|c| has_code(&c))
            .map_err(rpc_error)
    })?;
    // Code at genesis (or only after the head the search saw): nobody created it in a block.
    if n == 0 || n > last {
        return Ok(None);
    }
    let block = format!("{n:#x}");
    let (_, receipts) = block_and_receipts(source, &block, false)?;
    let made_by_tx = receipts.iter().rev().find(|r| {
        r.get("status").and_then(Value::as_str) == Some("0x1")
            && r.get("contractAddress")
                .and_then(Value::as_str)
                .and_then(|a| a.parse::<Address>().ok())
                == Some(address)
    });
    if let Some(r) = made_by_tx {
        let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        return match (field("transactionHash").parse(), field("from").parse()) {
            (Ok(hash), Ok(creator)) => Ok(Some(Creator { hash, creator })),
            _ => Err(Fault::server("a receipt without its hash or sender")),
        };
    }
    let spec = TracerSpec::Call(CallTracerConfig::default());
    let replay = replay_block(ctx, source, &block, &spec, outcome)?;
    let mut found = None;
    for t in &replay.traces {
        if let TraceResult::Call(root) = &t.result {
            if let Some(creator) = creator_in(root, address) {
                found = Some(Creator {
                    hash: t.hash,
                    creator,
                });
            }
        }
    }
    Ok(found)
}

/// The `from` of the last CREATE or CREATE2 frame of `address` under `root` that succeeded, as
/// did every frame above it.
fn creator_in(root: &CallFrame, address: Address) -> Option<Address> {
    if root.error.is_some() {
        return None;
    }
    let mut found = None;
    if root.kind.is_create() && target(root) == address {
        found = Some(root.from);
    }
    for c in &root.calls {
        if let Some(from) = creator_in(c, address) {
            found = Some(from);
        }
    }
    found
}

#[cfg(test)]
#[path = "ots_tests.rs"]
mod tests;
