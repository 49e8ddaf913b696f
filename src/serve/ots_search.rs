//! Otterscan's address history, `ots_searchTransactionsBefore` and
//! `ots_searchTransactionsAfter`, answered from the address index (`serve --index`): the
//! transactions whose traces touch an address, a page at a time, as Erigon's and anvil's
//! searches give them.
//!
//! The paging is anvil's (`crates/anvil/src/eth/otterscan/api.rs`): blocks are walked from the
//! one before (after) `blockNumber` — the head (block 1) for 0 — toward block 1 (the head), a
//! block's matching transactions taken whole, newest first within it, and the walk stops at
//! the first block after the page holds `pageSize`; `firstPage` says the walk started at the
//! head or reached it, `lastPage` that it reached block 1 (anvil's exact conditions below).
//! Results are newest first. Each transaction comes with the node's own transaction object and
//! its receipt plus the block's `timestamp`, asked in one batch and checked to be in the block
//! the index holds (else the chain moved under the query: an error, retry).

use alloy_primitives::{Address, B256};
use serde_json::{json, Map, Value};

use super::indexed::{Indexed, MAX_SYNC_BLOCKS};
use super::methods::{Ctx, Fault};
use crate::index::AddressIndex;
use crate::source::rpc::RpcSource;

/// The members of alloy's `TransactionReceipt<OtsReceipt>`.
const RECEIPT_MEMBERS: &[&str] = &[
    "status",
    "cumulativeGasUsed",
    "logs",
    "logsBloom",
    "type",
    "transactionHash",
    "transactionIndex",
    "blockHash",
    "blockNumber",
    "gasUsed",
    "effectiveGasPrice",
    "blobGasUsed",
    "blobGasPrice",
    "from",
    "to",
    "contractAddress",
];

/// Most transactions one page may ask for.
const MAX_PAGE: u64 = 1000;

/// The search's blocks start after genesis (anvil's first block without a fork).
const FIRST_BLOCK: u64 = 1;

fn number_param(v: Option<&Value>, i: usize) -> Result<u64, Fault> {
    match v {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        },
        _ => None,
    }
    .ok_or_else(|| Fault::params(format!("invalid argument {i}: expected a number")))
}

/// The transactions a page holds, newest first, and its flags.
struct Page {
    txs: Vec<(u64, B256)>,
    first_page: bool,
    last_page: bool,
}

/// The per-block hits of `address` in `from..=to`, each block's transactions newest first.
fn hits(index: &AddressIndex, address: Address, from: u64, to: u64) -> Vec<(u64, Vec<B256>)> {
    let mut out: Vec<(u64, Vec<B256>)> = Vec::new();
    for ((block, _), hash) in index.txs_touching(address, from, to) {
        match out.last_mut() {
            Some((b, list)) if *b == block => list.push(hash),
            _ => out.push((block, vec![hash])),
        }
    }
    for (_, list) in &mut out {
        list.reverse();
    }
    out
}

/// anvil's `ots_search_transactions_before`: from `from` down to [`FIRST_BLOCK`].
fn before(index: &AddressIndex, address: Address, from: u64, best: u64, size: u64) -> Page {
    let first_page = from >= best;
    let mut txs = Vec::new();
    for (block, list) in hits(index, address, FIRST_BLOCK, from).into_iter().rev() {
        if txs.len() as u64 >= size {
            break;
        }
        txs.extend(list.into_iter().map(|h| (block, h)));
    }
    // anvil breaks at the first block after the page is full, hit or not: its walk reached
    // FIRST_BLOCK (the last page) only when the page never filled, or filled there.
    let full = txs.len() as u64 >= size;
    let last_page = !full || txs.last().is_some_and(|(b, _)| *b == FIRST_BLOCK);
    Page {
        txs,
        first_page,
        last_page,
    }
}

/// anvil's `ots_search_transactions_after`: from `from` up to the head, then newest first.
fn after(index: &AddressIndex, address: Address, from: u64, best: u64, size: u64) -> Page {
    let mut first_page = from >= best;
    let last_page = from == FIRST_BLOCK && from <= best;
    let mut txs: Vec<(u64, B256)> = Vec::new();
    let mut filled_at = None;
    for (block, list) in hits(index, address, from, best) {
        if txs.len() as u64 >= size {
            break;
        }
        txs.extend(list.into_iter().map(|h| (block, h)));
        if txs.len() as u64 >= size {
            filled_at = Some(block);
        }
    }
    // anvil sets `firstPage` once its walk reaches the head: it does unless the page filled
    // at a block below it (the walk breaks at the next block).
    if from <= best && filled_at.is_none_or(|b| b == best) {
        first_page = true;
    }
    txs.reverse();
    Page {
        txs,
        first_page,
        last_page,
    }
}

/// Answers `ots_searchTransactionsBefore` (`before`) or `ots_searchTransactionsAfter`.
pub fn search(
    ctx: &Ctx<'_>,
    source: &RpcSource,
    params: &Value,
    is_before: bool,
) -> Result<String, Fault> {
    let address: Address = params
        .get(0)
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Fault::params("invalid argument 0: expected an address"))?;
    let number = number_param(params.get(1), 1)?;
    let size = number_param(params.get(2), 2)?;
    if size == 0 || size > MAX_PAGE {
        return Err(Fault::params(format!(
            "invalid argument 2: the page size must be 1 to {MAX_PAGE}"
        )));
    }
    let ix: &Indexed = ctx.index.ok_or_else(|| {
        Fault::server(
            "the address history needs the address index: start serve with --index DIR \
             (built by `chaintrace index A..B --out DIR`)",
        )
    })?;
    let synced = ix
        .sync(ctx.deadline, MAX_SYNC_BLOCKS)
        .map_err(super::filter::not_ready)?;
    let best = synced.head;
    let (lo, hi) = synced
        .span
        .ok_or_else(|| Fault::server("the address index is empty"))?;
    if hi < best {
        return Err(Fault::server(format!(
            "the address index holds blocks up to {hi} and the node is at {best}: it is catching up, retry"
        )));
    }
    let page = ix.read(|index| {
        if is_before {
            let from = if number == 0 { best } else { number - 1 };
            before(index, address, from.min(best), best, size)
        } else {
            let from = if number == 0 { FIRST_BLOCK } else { number + 1 };
            after(index, address, from, best, size)
        }
    });
    // A walk that went below the index's first block read blocks it does not hold.
    let reached = match is_before {
        true => match page.txs.last() {
            Some((b, _)) if page.txs.len() as u64 >= size && !page.last_page => *b,
            _ => FIRST_BLOCK,
        },
        false => {
            if number == 0 {
                FIRST_BLOCK
            } else {
                number + 1
            }
        }
    };
    if reached < lo {
        return Err(Fault::server(format!(
            "blocks before {lo} are not in the address index (it holds {lo}..{hi}): the history of {address} there is unknown"
        )));
    }
    let (txs, receipts) = fetch(ix, source, &page.txs)?;
    let out = json!({
        "txs": txs,
        "receipts": receipts,
        "firstPage": page.first_page,
        "lastPage": page.last_page,
    });
    Ok(out.to_string())
}

/// The node's transaction objects and receipts (with their block's `timestamp`) of `txs`, in
/// one batch, each checked to be in the block the index holds.
fn fetch(
    ix: &Indexed,
    source: &RpcSource,
    txs: &[(u64, B256)],
) -> Result<(Vec<Value>, Vec<Value>), Fault> {
    let mut blocks: Vec<u64> = txs.iter().map(|(b, _)| *b).collect();
    blocks.dedup();
    let mut calls: Vec<(String, Value)> = Vec::new();
    for (_, h) in txs {
        calls.push(("eth_getTransactionByHash".into(), json!([h])));
        calls.push(("eth_getTransactionReceipt".into(), json!([h])));
    }
    for b in &blocks {
        calls.push((
            "eth_getBlockByNumber".into(),
            json!([format!("{b:#x}"), false]),
        ));
    }
    if calls.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let answers: Vec<Value> = source
        .client
        .batch(&calls)
        .map_err(|e| Fault::server(e.to_string()))?
        .into_iter()
        .map(|r| r.map_err(|e| Fault::server(e.to_string())))
        .collect::<Result<_, _>>()?;
    let moved = |n: u64| {
        Fault::server(format!(
            "block {n} changed while it was read (a reorg): retry"
        ))
    };
    let hash_at = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .and_then(|h| h.parse::<B256>().ok())
    };
    // Each block's hash, checked to be the indexed one, and its timestamp.
    let mut checked = std::collections::HashMap::new();
    for (i, b) in blocks.iter().enumerate() {
        let header = &answers[2 * txs.len() + i];
        let want = ix.read(|x| x.block(*b).map(|blk| blk.hash));
        if want.is_none() || want != hash_at(header, "hash") {
            return Err(moved(*b));
        }
        let stamp = header.get("timestamp").cloned().unwrap_or(Value::Null);
        checked.insert(*b, (want, stamp));
    }
    let mut tx_objects = Vec::with_capacity(txs.len());
    let mut receipts = Vec::with_capacity(txs.len());
    for (k, (b, _)) in txs.iter().enumerate() {
        let tx = answers[2 * k].clone();
        let mut receipt: Map<String, Value> = match answers[2 * k + 1].clone() {
            Value::Object(o) => o,
            _ => return Err(moved(*b)),
        };
        let (want, stamp) = &checked[b];
        if *want != hash_at(&answers[2 * k + 1], "blockHash") {
            return Err(moved(*b));
        }
        // alloy's `OtsTransactionReceipt`, as anvil serialises it: a receipt's own members,
        // none a node adds (`blockTimestamp`, an OP chain's L1 fee members), and `timestamp`.
        receipt.retain(|k, _| RECEIPT_MEMBERS.contains(&k.as_str()));
        receipt.insert("timestamp".into(), stamp.clone());
        tx_objects.push(tx);
        receipts.push(Value::Object(receipt));
    }
    Ok((tx_objects, receipts))
}
