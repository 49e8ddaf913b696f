//! geth tracetest fixtures and replay bundles.
//!
//! One format serves both: a `genesis` (chain `config` and pre-state `alloc`), the block
//! `context`, the raw signed transaction as `input`, an optional `tracerConfig` and an optional
//! expected `result`. Bundles written by `chaintrace bundle capture` add the `receipt` so the
//! self-check also works offline. Numbers arrive as decimal strings, hex strings or bare JSON
//! integers; keys geth ignores are ignored here too.

use std::collections::BTreeMap;

use alloy_primitives::{Address, Bytes, B256, U256};
use serde_json::Value;

use crate::chain::ForkSchedule;
// Re-exported: the parsers are geth's encodings (`crate::geth::hex`), used well beyond fixtures.
pub use crate::geth::hex::{parse_hex, parse_u256, parse_u256_str, parse_u64};

/// The largest fixture or bundle read (a bundle of a whole block's pre-state stays far below).
pub const MAX_FIXTURE_BYTES: u64 = 256 << 20;

/// Errors reading a fixture or bundle.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: {msg}")]
    Invalid { path: String, msg: String },
}

/// One account of the pre-state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocAccount {
    pub balance: U256,
    pub nonce: u64,
    pub code: Bytes,
    pub storage: BTreeMap<U256, U256>,
}

/// The block a fixture's transaction runs in.
#[derive(Clone, Debug, Default)]
pub struct BlockContext {
    pub number: u64,
    pub timestamp: u64,
    pub difficulty: U256,
    pub gas_limit: u64,
    pub coinbase: Address,
    pub base_fee: Option<u64>,
    pub mix_hash: B256,
    pub excess_blob_gas: Option<u64>,
}

/// A parsed fixture or bundle.
#[derive(Clone, Debug)]
pub struct Fixture {
    pub schedule: ForkSchedule,
    pub alloc: BTreeMap<Address, AllocAccount>,
    pub context: BlockContext,
    /// The raw signed transaction (EIP-2718 envelope or legacy RLP).
    pub input: Bytes,
    pub tracer_config: Option<Value>,
    pub result: Option<Value>,
    /// The mined receipt, present in bundles captured from a node.
    pub receipt: Option<Value>,
    /// Hashes of earlier blocks for BLOCKHASH, present in bundles captured from a node.
    pub block_hashes: BTreeMap<u64, B256>,
    /// The block-wide index of this transaction's first log (bundles of a tx inside a block).
    pub log_index_offset: u64,
    /// `chainRules` of a bundle: whether the node it was captured from ran the chain's own
    /// rules (the default) or Ethereum's (a dev node started with the chain's id).
    pub ruleset: crate::chain::rules::Ruleset,
}

fn field<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

impl Fixture {
    /// Reads and parses a fixture file of at most [`MAX_FIXTURE_BYTES`].
    pub fn load(path: &str) -> Result<Self, FixtureError> {
        let io = |source| FixtureError::Io {
            path: path.to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(file, MAX_FIXTURE_BYTES + 1),
            &mut text,
        )
        .map_err(io)?;
        if text.len() as u64 > MAX_FIXTURE_BYTES {
            return Err(FixtureError::Invalid {
                path: path.to_string(),
                msg: format!(
                    "larger than {} MiB: not a fixture or bundle",
                    MAX_FIXTURE_BYTES >> 20
                ),
            });
        }
        let json: Value = serde_json::from_str(&text).map_err(|source| FixtureError::Json {
            path: path.to_string(),
            source,
        })?;
        Self::from_json(&json).map_err(|msg| FixtureError::Invalid {
            path: path.to_string(),
            msg,
        })
    }

    /// Parses a fixture from its JSON value.
    pub fn from_json(json: &Value) -> Result<Self, String> {
        let genesis = field(json, "genesis").ok_or("missing \"genesis\"")?;
        let config = field(genesis, "config").ok_or("missing \"genesis.config\"")?;
        let schedule = ForkSchedule::from_geth_config(config)?;
        let mut alloc = BTreeMap::new();
        if let Some(a) = field(genesis, "alloc") {
            let a = a.as_object().ok_or("\"genesis.alloc\" is not an object")?;
            for (addr, acc) in a {
                let address: Address = addr
                    .parse()
                    .map_err(|_| format!("alloc key {addr:?} is not an address"))?;
                alloc.insert(
                    address,
                    parse_account(acc).map_err(|e| format!("alloc {addr}: {e}"))?,
                );
            }
        }
        let ctx = field(json, "context").ok_or("missing \"context\"")?;
        let num = |k: &str| -> Result<Option<U256>, String> {
            field(ctx, k)
                .map(parse_u256)
                .transpose()
                .map_err(|e| format!("context.{k}: {e}"))
        };
        let to_u64 = |k: &str, v: Option<U256>| -> Result<u64, String> {
            v.map(|n| u64::try_from(n).map_err(|_| format!("context.{k} too large")))
                .transpose()
                .map(|o| o.unwrap_or(0))
        };
        let mix_hash = field(genesis, "mixHash")
            .and_then(Value::as_str)
            .map(|s| {
                s.parse::<B256>()
                    .map_err(|_| format!("genesis.mixHash {s:?} is not a hash"))
            })
            .transpose()?
            .unwrap_or_default();
        let coinbase = field(ctx, "miner")
            .and_then(Value::as_str)
            .map(|s| {
                s.parse::<Address>()
                    .map_err(|_| format!("context.miner {s:?} is not an address"))
            })
            .transpose()?
            .unwrap_or_default();
        let context = BlockContext {
            number: to_u64("number", num("number")?)?,
            timestamp: to_u64("timestamp", num("timestamp")?)?,
            difficulty: num("difficulty")?.unwrap_or_default(),
            gas_limit: to_u64("gasLimit", num("gasLimit")?)?,
            coinbase,
            base_fee: num("baseFeePerGas")?
                .map(|n| {
                    u64::try_from(n).map_err(|_| "context.baseFeePerGas too large".to_string())
                })
                .transpose()?,
            mix_hash: field(ctx, "mixHash")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())
                .unwrap_or(mix_hash),
            excess_blob_gas: field(ctx, "excessBlobGas")
                .map(parse_u64)
                .transpose()
                .map_err(|e| format!("context.excessBlobGas: {e}"))?,
        };
        let input = field(json, "input")
            .and_then(Value::as_str)
            .ok_or("missing \"input\" (the raw signed transaction)")?;
        let input = parse_hex(input).map_err(|e| format!("input: {e}"))?;
        let mut block_hashes = BTreeMap::new();
        if let Some(h) = field(json, "blockHashes") {
            let h = h
                .as_object()
                .ok_or("blockHashes must be an object of number → hash")?;
            for (k, v) in h {
                let n = parse_u64(&Value::String(k.clone()))
                    .map_err(|e| format!("blockHashes: {e}"))?;
                let hash = v
                    .as_str()
                    .and_then(|s| s.parse::<B256>().ok())
                    .ok_or_else(|| format!("blockHashes.{k} is not a hash"))?;
                block_hashes.insert(n, hash);
            }
        }
        Ok(Fixture {
            schedule,
            alloc,
            context,
            input,
            tracer_config: field(json, "tracerConfig").cloned(),
            result: field(json, "result").cloned(),
            receipt: field(json, "receipt").cloned(),
            block_hashes,
            log_index_offset: field(json, "logIndexOffset")
                .map(parse_u64)
                .transpose()
                .map_err(|e| format!("logIndexOffset: {e}"))?
                .unwrap_or(0),
            ruleset: match field(json, "chainRules") {
                None => Default::default(),
                Some(v) => v
                    .as_str()
                    .and_then(crate::chain::rules::Ruleset::parse)
                    .ok_or_else(|| {
                        format!("chainRules {v} is neither \"chain\" nor \"ethereum\"")
                    })?,
            },
        })
    }
}

fn parse_account(acc: &Value) -> Result<AllocAccount, String> {
    let mut out = AllocAccount::default();
    if let Some(b) = field(acc, "balance") {
        out.balance = parse_u256(b).map_err(|e| format!("balance: {e}"))?;
    }
    if let Some(n) = field(acc, "nonce") {
        out.nonce = parse_u64(n).map_err(|e| format!("nonce: {e}"))?;
    }
    if let Some(c) = field(acc, "code").and_then(Value::as_str) {
        out.code = parse_hex(c).map_err(|e| format!("code: {e}"))?;
    }
    if let Some(s) = field(acc, "storage") {
        let s = s.as_object().ok_or("storage is not an object")?;
        for (k, v) in s {
            let key = parse_u256_str(k).map_err(|e| format!("storage key: {e}"))?;
            let val = v
                .as_str()
                .ok_or("storage value is not a string")
                .map_err(String::from)
                .and_then(parse_u256_str)
                .map_err(|e| format!("storage value: {e}"))?;
            out.storage.insert(key, val);
        }
    }
    Ok(out)
}
