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

use crate::chain::{ConfigError, ForkSchedule};
use crate::geth::hex::HexError;
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
    #[error("{path}: {source}")]
    Invalid { path: String, source: BadFixture },
}

/// What is wrong inside a fixture or bundle, naming the member as the file writes it.
#[derive(Debug, thiserror::Error)]
pub enum BadFixture {
    /// Past [`MAX_FIXTURE_BYTES`] (in MiB).
    #[error("larger than {0} MiB: not a fixture or bundle")]
    TooLarge(u64),
    /// A required member is absent (`"genesis"`, `"context"`, …).
    #[error("missing {0}")]
    Missing(&'static str),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("\"genesis.alloc\" is not an object")]
    AllocNotObject,
    #[error("alloc key {0:?} is not an address")]
    AllocKey(String),
    /// One pre-state account.
    #[error("alloc {address}: {source}")]
    Account {
        address: String,
        source: AccountError,
    },
    /// A member that is not a quantity or hex (`context.number`, `input`, `logIndexOffset`).
    #[error("{member}: {source}")]
    Member { member: String, source: HexError },
    /// A context quantity past 64 bits.
    #[error("context.{0} too large")]
    TooLargeFor(&'static str),
    #[error("genesis.mixHash {0:?} is not a hash")]
    MixHash(String),
    #[error("context.miner {0:?} is not an address")]
    Miner(String),
    #[error("blockHashes must be an object of number → hash")]
    BlockHashesNotObject,
    #[error("blockHashes.{0} is not a hash")]
    BlockHash(String),
    #[error("chainRules {0} is not \"chain\", \"ethereum\" or \"optimism\"")]
    ChainRules(Value),
    #[error("opDevFork {0} is not an OP fork (Bedrock … Jovian)")]
    OpDevFork(Value),
    /// `opChainConfig`: not an op-geth chain config, or another chain's.
    #[error("{0}")]
    OpChainConfig(String),
}

/// What is wrong with one account of a fixture's `alloc`.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// `balance`, `nonce`, `code`, a storage key or value that cannot be read.
    #[error("{field}: {source}")]
    Field {
        field: &'static str,
        source: HexError,
    },
    #[error("storage is not an object")]
    StorageNotObject,
    #[error("storage value: storage value is not a string")]
    StorageValueNotString,
}

fn member(member: impl Into<String>) -> impl FnOnce(HexError) -> BadFixture {
    let member = member.into();
    move |source| BadFixture::Member { member, source }
}

fn account_field(field: &'static str) -> impl FnOnce(HexError) -> AccountError {
    move |source| AccountError::Field { field, source }
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
    /// rules (the default), Ethereum's (a dev node started with the chain's id) or the OP
    /// stack's.
    pub ruleset: crate::chain::rules::Ruleset,
    /// `opDevFork` of a bundle: the last OP fork a dev node in OP mode ran (anvil's Isthmus).
    pub op_dev_fork: Option<crate::chain::op::OpFork>,
    /// `opChainConfig` of a bundle: the OP fork schedule of a custom chain it was captured
    /// under (`--chain-config`), as op-geth's chain config names it.
    pub op_schedule: Option<crate::chain::op::OpSchedule>,
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
                source: BadFixture::TooLarge(MAX_FIXTURE_BYTES >> 20),
            });
        }
        let json: Value = serde_json::from_str(&text).map_err(|source| FixtureError::Json {
            path: path.to_string(),
            source,
        })?;
        Self::from_json(&json).map_err(|source| FixtureError::Invalid {
            path: path.to_string(),
            source,
        })
    }

    /// Parses a fixture from its JSON value.
    pub fn from_json(json: &Value) -> Result<Self, BadFixture> {
        use BadFixture as B;
        let genesis = field(json, "genesis").ok_or(B::Missing("\"genesis\""))?;
        let config = field(genesis, "config").ok_or(B::Missing("\"genesis.config\""))?;
        let schedule = ForkSchedule::from_geth_config(config)?;
        let mut alloc = BTreeMap::new();
        if let Some(a) = field(genesis, "alloc") {
            let a = a.as_object().ok_or(B::AllocNotObject)?;
            for (addr, acc) in a {
                let address: Address = addr.parse().map_err(|_| B::AllocKey(addr.clone()))?;
                let account = parse_account(acc).map_err(|source| B::Account {
                    address: addr.clone(),
                    source,
                })?;
                alloc.insert(address, account);
            }
        }
        let ctx = field(json, "context").ok_or(B::Missing("\"context\""))?;
        let num = |k: &str| -> Result<Option<U256>, BadFixture> {
            field(ctx, k)
                .map(parse_u256)
                .transpose()
                .map_err(member(format!("context.{k}")))
        };
        let to_u64 = |k: &'static str, v: Option<U256>| -> Result<u64, BadFixture> {
            v.map(|n| u64::try_from(n).map_err(|_| B::TooLargeFor(k)))
                .transpose()
                .map(|o| o.unwrap_or(0))
        };
        let mix_hash = field(genesis, "mixHash")
            .and_then(Value::as_str)
            .map(|s| s.parse::<B256>().map_err(|_| B::MixHash(s.to_string())))
            .transpose()?
            .unwrap_or_default();
        let coinbase = field(ctx, "miner")
            .and_then(Value::as_str)
            .map(|s| s.parse::<Address>().map_err(|_| B::Miner(s.to_string())))
            .transpose()?
            .unwrap_or_default();
        let context = BlockContext {
            number: to_u64("number", num("number")?)?,
            timestamp: to_u64("timestamp", num("timestamp")?)?,
            difficulty: num("difficulty")?.unwrap_or_default(),
            gas_limit: to_u64("gasLimit", num("gasLimit")?)?,
            coinbase,
            base_fee: num("baseFeePerGas")?
                .map(|n| u64::try_from(n).map_err(|_| B::TooLargeFor("baseFeePerGas")))
                .transpose()?,
            mix_hash: field(ctx, "mixHash")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())
                .unwrap_or(mix_hash),
            excess_blob_gas: field(ctx, "excessBlobGas")
                .map(parse_u64)
                .transpose()
                .map_err(member("context.excessBlobGas"))?,
        };
        let input = field(json, "input")
            .and_then(Value::as_str)
            .ok_or(B::Missing("\"input\" (the raw signed transaction)"))?;
        let input = parse_hex(input).map_err(member("input"))?;
        let mut block_hashes = BTreeMap::new();
        if let Some(h) = field(json, "blockHashes") {
            let h = h.as_object().ok_or(B::BlockHashesNotObject)?;
            for (k, v) in h {
                let n = parse_u64(&Value::String(k.clone())).map_err(member("blockHashes"))?;
                let hash = v
                    .as_str()
                    .and_then(|s| s.parse::<B256>().ok())
                    .ok_or_else(|| B::BlockHash(k.clone()))?;
                block_hashes.insert(n, hash);
            }
        }
        let schedule_chain_id = schedule.chain_id;
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
                .map_err(member("logIndexOffset"))?
                .unwrap_or(0),
            ruleset: match field(json, "chainRules") {
                None => Default::default(),
                Some(v) => v
                    .as_str()
                    .and_then(crate::chain::rules::Ruleset::parse)
                    .ok_or_else(|| B::ChainRules(v.clone()))?,
            },
            op_dev_fork: match field(json, "opDevFork") {
                None => None,
                Some(v) => Some(
                    v.as_str()
                        .and_then(crate::chain::op::OpFork::from_name)
                        .ok_or_else(|| B::OpDevFork(v.clone()))?,
                ),
            },
            op_schedule: field(json, "opChainConfig")
                .map(|v| op_schedule(v, schedule_chain_id))
                .transpose()?,
        })
    }
}

/// A bundle's `opChainConfig`: the schedule of chain `chain_id` (the bundle's own).
fn op_schedule(v: &Value, chain_id: u64) -> Result<crate::chain::op::OpSchedule, BadFixture> {
    let c = crate::chain::op::OpChainConfig::from_json(v, "opChainConfig")
        .map_err(|e| BadFixture::OpChainConfig(e.0))?;
    if c.chain_id != chain_id {
        return Err(BadFixture::OpChainConfig(format!(
            "opChainConfig is chain {}'s, but the bundle's genesis config is chain {chain_id}'s",
            c.chain_id
        )));
    }
    Ok(c.schedule)
}

fn parse_account(acc: &Value) -> Result<AllocAccount, AccountError> {
    let mut out = AllocAccount::default();
    if let Some(b) = field(acc, "balance") {
        out.balance = parse_u256(b).map_err(account_field("balance"))?;
    }
    if let Some(n) = field(acc, "nonce") {
        out.nonce = parse_u64(n).map_err(account_field("nonce"))?;
    }
    if let Some(c) = field(acc, "code").and_then(Value::as_str) {
        out.code = parse_hex(c).map_err(account_field("code"))?;
    }
    if let Some(s) = field(acc, "storage") {
        let s = s.as_object().ok_or(AccountError::StorageNotObject)?;
        for (k, v) in s {
            let key = parse_u256_str(k).map_err(account_field("storage key"))?;
            let val = v
                .as_str()
                .ok_or(AccountError::StorageValueNotString)
                .and_then(|v| parse_u256_str(v).map_err(account_field("storage value")))?;
            out.storage.insert(key, val);
        }
    }
    Ok(out)
}
