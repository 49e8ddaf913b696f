//! The fast path: a transaction's exact pre-state from the node's own `prestateTracer`.
//!
//! `debug_traceTransaction` with `prestateTracer` returns every account and slot the transaction
//! touched, as they were right before it ran — after the earlier transactions of its block, and
//! after any state change the block hides from `eth_getBlock*` (begin-block logic, non-EVM
//! transactions on chains like 1329). Replaying on it needs no earlier transaction and no
//! per-slot request, so a trace costs two round trips: the first batch asks for the node's
//! identity, the transaction, its receipt and its pre-state together; the second for the block
//! header, whose hash only the transaction names.
//!
//! What the node leaves out (geth drops empty accounts unless `includeEmpty`; some nodes omit
//! other things) shows up as a miss during replay; the caller then fetches it or falls back, it
//! never guesses.

use alloy_primitives::{Address, B256, U256};
use serde_json::{json, Map, Value};

use super::cache::{Cache, Kind};
use super::error::SourceError;
use super::rpc::RpcSource;
use super::{AccountData, StateSnapshot};
use crate::geth::hex::{parse_hex, parse_u256, parse_u64};
use crate::rpc::RpcError;

/// The tracer config sent to the node. `includeEmpty` makes geth keep accounts that were empty
/// before the transaction, which the replay needs to see as "known empty" rather than missing.
pub fn prestate_request(hash: B256) -> (String, Value) {
    (
        "debug_traceTransaction".to_string(),
        json!([hash, {"tracer": "prestateTracer", "tracerConfig": {"includeEmpty": true}}]),
    )
}

/// Which chain a node serves: its chain id and genesis block hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub chain_id: u64,
    pub genesis: B256,
}

impl Identity {
    pub fn to_json(self) -> Value {
        json!({"chainId": self.chain_id, "genesis": self.genesis})
    }
    pub fn from_json(v: &Value) -> Option<Identity> {
        Some(Identity {
            chain_id: v.get("chainId")?.as_u64()?,
            genesis: v.get("genesis")?.as_str()?.parse().ok()?,
        })
    }
}

/// What the first round trip brought back.
#[derive(Debug)]
pub struct FirstRound {
    pub identity: Identity,
    /// `(tx, receipt)` when asked for; the receipt is `null` for a pending transaction.
    pub tx: Option<(Value, Value)>,
    /// The node's prestate when asked for; a node error (e.g. no debug API) stays per item.
    pub prestate: Option<Result<Value, RpcError>>,
}

fn bad(what: &str, reason: impl std::fmt::Display) -> SourceError {
    SourceError::BadData {
        what: what.to_string(),
        reason: reason.to_string(),
    }
}

/// Sends one batch: the node's identity, plus the transaction and receipt and the node's
/// prestate for it when asked.
pub fn first_round(
    source: &RpcSource,
    hash: B256,
    want_tx: bool,
    want_prestate: bool,
) -> Result<FirstRound, SourceError> {
    let mut calls = vec![
        ("eth_chainId".to_string(), json!([])),
        ("eth_getBlockByNumber".to_string(), json!(["0x0", false])),
    ];
    calls.extend(super::rpc::client_requests());
    if want_tx {
        calls.push(("eth_getTransactionByHash".to_string(), json!([hash])));
        calls.push(("eth_getTransactionReceipt".to_string(), json!([hash])));
    }
    if want_prestate {
        calls.push(prestate_request(hash));
    }
    let mut res = source.client.batch(&calls)?.into_iter();
    let mut next = || res.next().unwrap_or(Ok(Value::Null));
    let chain_id = parse_u64(&next()?).map_err(|e| bad("chain id", e))?;
    let genesis = next()?
        .get("hash")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or_default();
    source.note_client(std::iter::from_fn(|| Some(next())).take(2));
    // Before anything of the chain's is read: an L2 chaintrace does not replay is refused here.
    source.check_replayable(chain_id)?;
    let tx = if want_tx {
        let tx = next()?;
        let receipt = next()?;
        if tx.is_null() {
            return Err(SourceError::NotFound {
                what: format!("transaction {hash}"),
            });
        }
        crate::source::rpc::check_tx_and_receipt(hash, &tx, &receipt)?;
        Some((tx, receipt))
    } else {
        None
    };
    let prestate = want_prestate.then(&mut next);
    Ok(FirstRound {
        identity: Identity { chain_id, genesis },
        tx,
        prestate,
    })
}

/// A block header (no transactions) by hash.
pub fn header(source: &RpcSource, block_hash: B256) -> Result<Value, SourceError> {
    source.header_with_states(block_hash, &[]).map(|(h, _)| h)
}

/// Turns the node's prestate (`{addr: {balance, nonce, code, storage}}`) into a partial snapshot:
/// everything listed is known exactly; anything else is a miss.
pub fn snapshot_from_prestate(v: &Value) -> Result<StateSnapshot, SourceError> {
    let map = v
        .as_object()
        .ok_or_else(|| bad("prestate", "expected an object of accounts"))?;
    let mut snap = StateSnapshot::partial();
    for (addr, acc) in map {
        let addr: Address = addr.parse().map_err(|e| bad("prestate address", e))?;
        let field = |k: &str| acc.get(k).filter(|v| !v.is_null());
        let balance = field("balance")
            .map(parse_u256)
            .transpose()
            .map_err(|e| bad("prestate balance", e))?
            .unwrap_or_default();
        let nonce = field("nonce")
            .map(parse_u64)
            .transpose()
            .map_err(|e| bad("prestate nonce", e))?
            .unwrap_or_default();
        let code = match field("code").and_then(Value::as_str) {
            Some(c) => parse_hex(c).map_err(|e| bad("prestate code", e))?,
            None => Default::default(),
        };
        snap.insert_account(
            addr,
            AccountData {
                balance,
                nonce,
                code,
            },
        );
        if let Some(storage) = field("storage").and_then(Value::as_object) {
            for (k, val) in storage {
                let slot = parse_u256(&json!(k)).map_err(|e| bad("prestate slot", e))?;
                let val = parse_u256(val).map_err(|e| bad("prestate slot value", e))?;
                snap.insert_slot(addr, slot, val);
            }
        }
    }
    Ok(snap)
}

/// The block-wide index of the transaction's first log, from its receipt. `None` when the
/// transaction logged nothing, in which case no trace shows a log index.
pub fn first_log_index(receipt: &Value) -> Option<u64> {
    let first = receipt.get("logs")?.as_array()?.first()?;
    parse_u64(first.get("logIndex")?).ok()
}

/// State held by a snapshot, as JSON for the cache.
pub fn snapshot_to_json(snap: &StateSnapshot) -> Value {
    let mut accounts = Map::new();
    for (a, d) in &snap.accounts {
        accounts.insert(
            format!("{a:?}"),
            json!({"balance": format!("{:#x}", d.balance), "nonce": d.nonce, "code": d.code}),
        );
    }
    let storage: Vec<Value> = snap
        .storage
        .iter()
        .map(|((a, k), v)| json!([a, format!("{k:#x}"), format!("{v:#x}")]))
        .collect();
    let hashes: Map<String, Value> = snap
        .block_hashes
        .iter()
        .map(|(n, h)| (n.to_string(), json!(h)))
        .collect();
    json!({"accounts": accounts, "storage": storage, "blockHashes": hashes})
}

/// Adds cached state to a snapshot; `with_state` false adds only block hashes.
pub fn merge_json(snap: &mut StateSnapshot, v: &Value, with_state: bool) {
    if let Some(h) = v.get("blockHashes").and_then(Value::as_object) {
        for (n, h) in h {
            if let (Ok(n), Some(Ok(h))) = (n.parse(), h.as_str().map(str::parse::<B256>)) {
                snap.block_hashes.insert(n, h);
            }
        }
    }
    if !with_state {
        return;
    }
    if let Some(accs) = v.get("accounts").and_then(Value::as_object) {
        for (a, d) in accs {
            let parsed = (|| {
                Some((
                    a.parse::<Address>().ok()?,
                    AccountData {
                        balance: parse_u256(d.get("balance")?).ok()?,
                        nonce: d.get("nonce")?.as_u64()?,
                        code: parse_hex(d.get("code")?.as_str()?).ok()?,
                    },
                ))
            })();
            if let Some((a, d)) = parsed {
                snap.insert_account(a, d);
            }
        }
    }
    for item in v
        .get("storage")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let parsed = (|| {
            let a: Address = item.get(0)?.as_str()?.parse().ok()?;
            let k: U256 = parse_u256(item.get(1)?).ok()?;
            let v: U256 = parse_u256(item.get(2)?).ok()?;
            Some((a, k, v))
        })();
        if let Some((a, k, v)) = parsed {
            snap.insert_slot(a, k, v);
        }
    }
}

/// The 32-byte hash at `key` of a node's JSON object, if it is one.
pub fn h256(v: &Value, key: &str) -> Option<B256> {
    v.get(key)?.as_str()?.parse().ok()
}

/// Gets a block (header only, or with full transactions) by hash, through the cache.
pub fn block_json(
    source: &RpcSource,
    cache: Option<&Cache>,
    hash: B256,
    full: bool,
) -> Result<Value, SourceError> {
    let (kind, key) = (
        if full { Kind::Block } else { Kind::Header },
        format!("{hash:?}"),
    );
    if let Some(v) = cache.and_then(|c| c.get(kind, &key)) {
        return Ok(v);
    }
    let v = if full {
        let v = source
            .client
            .call("eth_getBlockByHash", json!([hash, true]))?;
        if v.is_null() {
            return Err(SourceError::NotFound {
                what: format!("block {hash}"),
            });
        }
        crate::source::rpc::expect_field(&v, "block", "hash", &format!("{hash:?}"))?;
        v
    } else {
        header(source, hash)?
    };
    if let Some(c) = cache {
        c.put(kind, &key, &v);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prestate_becomes_a_partial_snapshot() {
        let v = json!({
            "0x00000000000000000000000000000000000000aa": {"balance": "0x10", "nonce": 2,
                "code": "0x6001", "storage": {"0x01": "0x02",
                "0x0000000000000000000000000000000000000000000000000000000000000003": "0x0"}},
            "0x00000000000000000000000000000000000000bb": {"balance": "0x0"}
        });
        let snap = snapshot_from_prestate(&v).unwrap();
        assert!(!snap.complete);
        let a: Address = "0x00000000000000000000000000000000000000aa"
            .parse()
            .unwrap();
        assert_eq!(snap.accounts[&a].nonce, 2);
        assert_eq!(snap.storage[&(a, U256::from(1))], U256::from(2));
        assert_eq!(snap.storage[&(a, U256::from(3))], U256::ZERO);
        assert_eq!(snap.accounts.len(), 2);
        let back = snapshot_to_json(&snap);
        let mut again = StateSnapshot::partial();
        merge_json(&mut again, &back, true);
        assert_eq!(again.accounts, snap.accounts);
        assert_eq!(again.storage, snap.storage);
    }

    #[test]
    fn first_log_index_reads_the_receipt() {
        let r = json!({"logs": [{"logIndex": "0x7"}, {"logIndex": "0x8"}]});
        assert_eq!(first_log_index(&r), Some(7));
        assert_eq!(first_log_index(&json!({"logs": []})), None);
    }
}
