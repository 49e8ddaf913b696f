//! State, transactions and blocks from a JSON-RPC node.
//!
//! Chain data (transaction, receipt, block) costs two round trips; state costs one batched round
//! trip per speculative pass: execution against a partial [`StateSnapshot`] records every account,
//! slot and block hash it missed, and [`RpcSource::fill`] fetches them all in one batch request.

use alloy_consensus::TxEnvelope;
use alloy_primitives::{Address, B256, U256};
use serde_json::{json, Value};

use super::chain_data::{BlockInfo, ReplayTx};
use super::error::SourceError;
use super::{AccountData, Misses, StateSnapshot};
use crate::chain::rules::Ruleset;
use crate::geth::hex::{parse_hex, parse_u256, parse_u64};
use crate::rpc::{RpcClient, RpcError};

/// Why the node's `web3_clientVersion` names no client.
#[derive(Debug, thiserror::Error)]
pub enum ClientVersionError {
    /// An answer that is not a string.
    #[error("answered {0}")]
    NotAString(Value),
    /// The node's error (the method is optional).
    #[error(transparent)]
    Rpc(#[from] RpcError),
}

/// A block with its transactions, as the node returned it.
#[derive(Clone, Debug)]
pub struct RpcBlock {
    pub info: BlockInfo,
    pub txs: Vec<ReplayTx>,
    /// Accounts the block's withdrawals credit after its transactions (EIP-4895).
    pub withdrawals: Vec<Address>,
    /// How many ommers the block names (pre-merge: their miners are rewarded).
    pub uncles: usize,
}

/// A node seen as a source of chain data and state.
pub struct RpcSource {
    pub client: RpcClient,
    /// The node's CometBFT RPC, for chains 1329/1328 (`--consensus-rpc`).
    pub consensus: Option<super::consensus::ConsensusClient>,
    /// `--chain-rules`: the rules the user says the node runs, instead of asking it.
    pub ruleset_override: Option<Ruleset>,
    /// `--chain-config`: a custom OP-stack chain's id and fork schedule.
    pub op_config: Option<crate::chain::op::OpChainConfig>,
    /// The node's `web3_clientVersion`, asked in the first batch (or the node's error).
    pub(super) client_version: std::sync::OnceLock<Result<String, ClientVersionError>>,
    /// The `hardFork` of the node's `anvil_nodeInfo`, asked in the same batch (`None`: no such
    /// method, or no such field).
    pub(super) node_fork: std::sync::OnceLock<Option<String>>,
    /// Set once the node answered that it has no `eth_getBlockReceipts`.
    no_block_receipts: std::sync::atomic::AtomicBool,
    /// Set once the node refused a block named by hash (EIP-1898) in a state read: from then
    /// on a parent's state is read at its number, once that number is checked to still name it.
    no_block_hashes: std::sync::atomic::AtomicBool,
    /// The parents named by hash ([`RpcSource::parent_at`]) and their numbers, with whether the
    /// number was checked to name that block on the node (for [`Self::no_block_hashes`]).
    parents: std::sync::Mutex<std::collections::HashMap<B256, (u64, bool)>>,
    /// Notes for stderr (which rules, which fork), each once.
    pub(super) notes: std::sync::Mutex<Vec<String>>,
    /// Notes already handed out, so that a long run says each once.
    pub(super) said: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Notes that only explain a doubt (the fork read from a header that fits several): worth
    /// saying when the replay does not match, noise when it does.
    pub(super) doubts: std::sync::Mutex<Vec<String>>,
}

/// The node's identity requests of a first batch: `web3_clientVersion`, and `anvil_nodeInfo`,
/// whose answer is read only when the client is anvil (the fork it names shows its OP mode:
/// `node_rules.rs`). Other nodes answer `anvil_nodeInfo` with an error of its own item, which
/// is ignored, as a node without the debug API answers the fast path's prestate request; both
/// ride in a batch that is sent anyway, so neither costs a round trip.
pub fn client_requests() -> [(String, Value); 2] {
    [
        ("web3_clientVersion".to_string(), json!([])),
        ("anvil_nodeInfo".to_string(), json!([])),
    ]
}

/// What the node returned must be what was asked for: `v[field]` (a hash or a hex quantity)
/// must equal `asked`. A node that answers another block or transaction is not a source.
pub fn expect_field(v: &Value, what: &str, field: &str, asked: &str) -> Result<(), SourceError> {
    let got = v.get(field).and_then(Value::as_str).unwrap_or("");
    let same = match (asked.parse::<B256>(), got.parse::<B256>()) {
        (Ok(a), Ok(g)) => a == g,
        _ => match (parse_u64(&Value::from(asked)), parse_u64(&Value::from(got))) {
            (Ok(a), Ok(g)) => a == g,
            _ => false,
        },
    };
    if same {
        return Ok(());
    }
    let mut got = v.get(field).map_or("nothing".to_string(), Value::to_string);
    if let Some((i, _)) = got.char_indices().nth(80) {
        got.truncate(i);
        got.push('…');
    }
    Err(SourceError::Mismatch {
        what: what.into(),
        field: field.into(),
        asked: asked.into(),
        got,
    })
}

/// The transaction and receipt the node returned for `hash` are that transaction's.
pub fn check_tx_and_receipt(hash: B256, tx: &Value, receipt: &Value) -> Result<(), SourceError> {
    let h = format!("{hash:?}");
    expect_field(tx, "transaction", "hash", &h)?;
    if !receipt.is_null() {
        expect_field(receipt, "receipt", "transactionHash", &h)?;
    }
    Ok(())
}

/// A block batch's answers: the chain id, the block, and the extra call's answer.
type BlockBatch = (u64, Value, Option<Result<Value, RpcError>>);

fn bad(what: &str, reason: impl std::fmt::Display) -> SourceError {
    SourceError::BadData {
        what: what.to_string(),
        reason: reason.to_string(),
    }
}

fn get_u64(v: &Value, key: &str, what: &str) -> Result<u64, SourceError> {
    v.get(key)
        .ok_or_else(|| bad(what, format!("missing {key}")))
        .and_then(|x| parse_u64(x).map_err(|e| bad(what, format!("{key}: {e}"))))
}

/// A block's `hash` member, when it is one.
fn header_hash(block: &Value) -> Option<B256> {
    block
        .get("hash")
        .and_then(Value::as_str)
        .and_then(|h| h.parse().ok())
}

/// Reads a transaction object (`eth_getTransactionByHash` / full block) into a replayable tx.
pub fn tx_from_json(v: &Value) -> Result<ReplayTx, SourceError> {
    if super::deposit::is_deposit_json(v) {
        // An OP-stack deposit: alloy's Ethereum envelope has no such type.
        return Ok(ReplayTx::from_deposit(
            crate::source::deposit::DepositTx::from_json(v).map_err(|e| bad("transaction", e))?,
        ));
    }
    // Read from the value in place (`&Value` is a deserializer): no copy of the object first.
    let tx = <alloy_rpc_types_eth::Transaction<TxEnvelope> as serde::Deserialize>::deserialize(v)
        .map_err(|e| bad("transaction", e))?;
    let sender = tx.inner.signer();
    Ok(ReplayTx::from_envelope_with_sender(
        tx.inner.into_inner(),
        sender,
    )?)
}

/// Reads a block header object into the block environment's inputs.
pub fn block_info_from_json(b: &Value) -> Result<BlockInfo, SourceError> {
    let what = "block";
    let h256 = |k: &str| {
        b.get(k)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<B256>().ok())
    };
    Ok(BlockInfo {
        number: get_u64(b, "number", what)?,
        timestamp: get_u64(b, "timestamp", what)?,
        coinbase: b
            .get("miner")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad(what, "missing miner"))?,
        gas_limit: get_u64(b, "gasLimit", what)?,
        base_fee: b.get("baseFeePerGas").and_then(|v| parse_u64(v).ok()),
        difficulty: b
            .get("difficulty")
            .and_then(|v| parse_u256(v).ok())
            .unwrap_or_default(),
        mix_hash: h256("mixHash")
            .or_else(|| h256("prevRandao"))
            .unwrap_or_default(),
        excess_blob_gas: b.get("excessBlobGas").and_then(|v| parse_u64(v).ok()),
        consensus: None,
        hash: h256("hash"),
        parent_hash: h256("parentHash"),
        ruleset: Default::default(),
        header_fork: Some(crate::chain::HeaderFork::from_header(b)),
        op_evidence: b
            .get("transactions")
            .and_then(Value::as_array)
            .is_some_and(|t| t.iter().any(super::deposit::is_deposit_json))
            .then_some("the block holds deposit transactions (type 0x7e)"),
        op_dev_fork: None,
        op_schedule: None,
    })
}

impl RpcSource {
    pub fn new(client: RpcClient) -> Self {
        RpcSource {
            client,
            consensus: None,
            ruleset_override: None,
            op_config: None,
            client_version: std::sync::OnceLock::new(),
            node_fork: std::sync::OnceLock::new(),
            no_block_receipts: Default::default(),
            no_block_hashes: Default::default(),
            parents: Default::default(),
            notes: Default::default(),
            said: Default::default(),
            doubts: Default::default(),
        }
    }

    /// Keeps the answers to the first batch's [`client_requests`] (the first ones only), in
    /// their order: `web3_clientVersion`, then `anvil_nodeInfo`.
    pub fn note_client(&self, mut answers: impl Iterator<Item = Result<Value, RpcError>>) {
        let v = match answers.next().unwrap_or(Ok(Value::Null)) {
            Ok(Value::String(s)) => Ok(s),
            Ok(other) => Err(ClientVersionError::NotAString(other)),
            Err(e) => Err(e.into()),
        };
        let _ = self.client_version.set(v);
        let fork = answers
            .next()
            .and_then(Result::ok)
            .and_then(|info| Some(info.get("hardFork")?.as_str()?.to_string()));
        let _ = self.node_fork.set(fork);
    }

    /// The doubts gathered since the last call (see `doubts`).
    pub fn take_doubts(&self) -> Vec<String> {
        std::mem::take(&mut *self.doubts.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The notes gathered since the last call, each said once per run.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The node's `web3_clientVersion`, as the first batch that asked for it read it.
    pub fn client_version_text(&self) -> Option<String> {
        self.client_version.get()?.as_ref().ok().cloned()
    }

    /// The node's chain id and the hash of block `block_ref` (a number, tag or hash; the header
    /// alone), with its `web3_clientVersion` in the same batch: one small request.
    pub fn block_identity(&self, block_ref: &str) -> Result<(u64, B256), SourceError> {
        let (chain_id, v, _) = self.block_batch(block_ref, false, None)?;
        let hash = header_hash(&v).ok_or_else(|| bad("block", "no hash"))?;
        Ok((chain_id, hash))
    }

    /// One batch about block `block_ref` (see [`BlockBatch`]): the chain id, the node's identity (`client_requests`, kept),
    /// the block (`full`: with its transactions), checked to be the one asked for, and the answer
    /// to `extra` after them.
    fn block_batch(
        &self,
        block_ref: &str,
        full: bool,
        extra: Option<(String, Value)>,
    ) -> Result<BlockBatch, SourceError> {
        let by_hash = block_ref.len() == 66;
        let method = if by_hash {
            "eth_getBlockByHash"
        } else {
            "eth_getBlockByNumber"
        };
        let mut calls = vec![("eth_chainId".to_string(), json!([]))];
        calls.extend(client_requests());
        calls.push((method.to_string(), json!([block_ref, full])));
        calls.extend(extra);
        let mut res = self.client.batch(&calls)?.into_iter();
        let id = res.next().unwrap_or(Ok(Value::Null))?;
        self.note_client(res.by_ref().take(2));
        let chain_id = parse_u64(&id).map_err(|e| bad("chain id", e))?;
        let v = res.next().unwrap_or(Ok(Value::Null))?;
        if v.is_null() {
            return Err(SourceError::NotFound {
                what: format!("block {block_ref}"),
            });
        }
        if by_hash {
            expect_field(&v, "block", "hash", block_ref)?;
        } else if block_ref.starts_with("0x") {
            expect_field(&v, "block", "number", block_ref)?;
        }
        Ok((chain_id, v, res.next()))
    }

    /// The node's chain id, with its identity ([`client_requests`]) in the same batch.
    pub fn chain_id(&self) -> Result<u64, SourceError> {
        Ok(self.chain_batch(&[])?.0)
    }

    /// One batch: `eth_chainId`, the calls `extra`, and the node's identity
    /// ([`client_requests`], kept); the chain id and `extra`'s answers, in order.
    fn chain_batch(&self, extra: &[(&str, Value)]) -> Result<(u64, Vec<Value>), SourceError> {
        let mut calls = vec![("eth_chainId".to_string(), json!([]))];
        calls.extend(extra.iter().map(|(m, p)| (m.to_string(), p.clone())));
        calls.extend(client_requests());
        let mut res = self.client.batch(&calls)?.into_iter();
        let id = res.next().unwrap_or(Ok(Value::Null))?;
        let answers = (0..extra.len())
            .map(|_| res.next().unwrap_or(Ok(Value::Null)))
            .collect::<Result<Vec<Value>, _>>()?;
        self.note_client(res.by_ref().take(2));
        Ok((parse_u64(&id).map_err(|e| bad("chain id", e))?, answers))
    }

    /// The chain id and the number of the node's latest block, with its identity
    /// ([`client_requests`]), in one batch.
    pub fn chain_and_head(&self) -> Result<(u64, u64), SourceError> {
        let (id, answers) = self.chain_batch(&[("eth_blockNumber", json!([]))])?;
        let head = parse_u64(&answers[0]).map_err(|e| bad("block number", e))?;
        Ok((id, head))
    }

    /// The hashes of blocks `numbers` (headers only, one batch); `None` for a block the node
    /// does not have.
    pub fn block_hashes(&self, numbers: &[u64]) -> Result<Vec<Option<B256>>, SourceError> {
        let calls: Vec<(String, Value)> = numbers
            .iter()
            .map(|n| {
                (
                    "eth_getBlockByNumber".to_string(),
                    json!([format!("{n:#x}"), false]),
                )
            })
            .collect();
        self.client
            .batch(&calls)?
            .into_iter()
            .map(|r| Ok(header_hash(&r?)))
            .collect()
    }

    /// The chain id, the genesis block's hash and the number of the node's latest block, with
    /// its identity ([`client_requests`]), in one batch.
    pub fn genesis_and_head(&self) -> Result<(u64, B256, u64), SourceError> {
        let (id, answers) = self.chain_batch(&[
            ("eth_getBlockByNumber", json!(["0x0", false])),
            ("eth_blockNumber", json!([])),
        ])?;
        let genesis = header_hash(&answers[0]).ok_or_else(|| bad("genesis block", "no hash"))?;
        let head = parse_u64(&answers[1]).map_err(|e| bad("block number", e))?;
        Ok((id, genesis, head))
    }

    /// The chain id and the header of block `block_ref` (a number, tag or hash) a simulated
    /// call runs after, in one batch with the node's identity: the block resolved once, its
    /// header only. Its first transaction rides along for what it shows of the OP stack (a
    /// deposit), taken only when it is that block's.
    pub fn call_block(&self, block_ref: &str) -> Result<(u64, BlockInfo), SourceError> {
        self.call_block_header(block_ref)
            .map(|(chain_id, info, _)| (chain_id, info))
    }

    /// [`call_block`](Self::call_block) with the header's JSON as the node gave it (what a
    /// simulated block after it reads of its parent: `gasUsed`, `blobGasUsed`).
    pub fn call_block_header(
        &self,
        block_ref: &str,
    ) -> Result<(u64, BlockInfo, Value), SourceError> {
        let first = match block_ref.len() == 66 {
            true => "eth_getTransactionByBlockHashAndIndex",
            false => "eth_getTransactionByBlockNumberAndIndex",
        };
        let extra = (first.to_string(), json!([block_ref, "0x0"]));
        let (chain_id, v, first) = self.block_batch(block_ref, false, Some(extra))?;
        let mut info = block_info_from_json(&v)?;
        // A node that has no such method, or a block without transactions, shows nothing.
        let first = first.and_then(Result::ok).unwrap_or(Value::Null);
        let same_block =
            first.get("blockHash").and_then(Value::as_str) == v.get("hash").and_then(Value::as_str);
        if same_block && super::deposit::is_deposit_json(&first) {
            info.op_evidence = Some("the block holds deposit transactions (type 0x7e)");
        }
        Ok((chain_id, info, v))
    }

    /// A block by number tag or hash, with full transactions.
    pub fn block(&self, block_ref: &str) -> Result<RpcBlock, SourceError> {
        let (method, param) = if block_ref.len() == 66 {
            ("eth_getBlockByHash", json!(block_ref))
        } else {
            ("eth_getBlockByNumber", json!(block_ref))
        };
        let v = self.client.call(method, json!([param, true]))?;
        if v.is_null() {
            return Err(SourceError::NotFound {
                what: format!("block {block_ref}"),
            });
        }
        if block_ref.len() == 66 {
            expect_field(&v, "block", "hash", block_ref)?;
        } else if block_ref.starts_with("0x") {
            expect_field(&v, "block", "number", block_ref)?;
        }
        Self::parse_block(&v)
    }

    pub fn parse_block(v: &Value) -> Result<RpcBlock, SourceError> {
        let info = block_info_from_json(v)?;
        let txs = v
            .get("transactions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(tx_from_json)
            .collect::<Result<Vec<_>, _>>()?;
        let withdrawals = v
            .get("withdrawals")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|w| w.get("address")?.as_str()?.parse().ok())
            .collect();
        let uncles = v
            .get("uncles")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Ok(RpcBlock {
            info,
            txs,
            withdrawals,
            uncles,
        })
    }

    /// Blocks `numbers` with full transactions and their receipts (in transaction order), in
    /// one batch request: `eth_getBlockByNumber` and `eth_getBlockReceipts` for each. A node
    /// that does not serve `eth_getBlockReceipts` is asked, from then on, for each
    /// transaction's receipt in a second batch. The outer error is the batch's; each block has
    /// its own (a block past the head is not found).
    #[allow(clippy::type_complexity)]
    pub fn blocks_with_receipts(
        &self,
        numbers: &[u64],
    ) -> Result<Vec<Result<(RpcBlock, Vec<Value>), SourceError>>, SourceError> {
        use std::sync::atomic::Ordering;
        let by_block = !self.no_block_receipts.load(Ordering::Relaxed);
        let mut calls = Vec::with_capacity(numbers.len() * 2);
        for n in numbers {
            calls.push((
                "eth_getBlockByNumber".to_string(),
                json!([format!("{n:#x}"), true]),
            ));
            if by_block {
                calls.push((
                    "eth_getBlockReceipts".to_string(),
                    json!([format!("{n:#x}")]),
                ));
            }
        }
        let mut answers = self.client.batch(&calls)?.into_iter();
        let mut out = Vec::with_capacity(numbers.len());
        let mut wanted: Vec<B256> = Vec::new();
        for n in numbers {
            let raw = answers.next().unwrap_or(Ok(Value::Null));
            let receipts = if by_block { answers.next() } else { None };
            let one = self.block_and_receipts(*n, raw, receipts);
            if let Ok((block, r)) = &one {
                if r.is_empty() && !block.txs.is_empty() {
                    wanted.extend(block.txs.iter().map(|t| t.hash));
                }
            }
            out.push(one);
        }
        if !wanted.is_empty() {
            let mut receipts = self.receipts(&wanted)?.into_iter();
            for (block, r) in out.iter_mut().flatten() {
                if r.is_empty() {
                    r.extend(receipts.by_ref().take(block.txs.len()));
                }
            }
        }
        Ok(out)
    }

    /// One block of [`Self::blocks_with_receipts`]: its answer and its receipts' (empty when
    /// they are to be asked by transaction).
    fn block_and_receipts(
        &self,
        n: u64,
        raw: Result<Value, RpcError>,
        receipts: Option<Result<Value, RpcError>>,
    ) -> Result<(RpcBlock, Vec<Value>), SourceError> {
        let raw = raw?;
        if raw.is_null() {
            return Err(SourceError::NotFound {
                what: format!("block {n}"),
            });
        }
        expect_field(&raw, "block", "number", &format!("{n:#x}"))?;
        let block = Self::parse_block(&raw)?;
        let receipts = match receipts {
            Some(Ok(Value::Array(r))) if r.len() == block.txs.len() => r,
            Some(Ok(other)) => {
                return Err(bad(
                    "receipts",
                    format!(
                        "eth_getBlockReceipts of block {n} answered {} for {} transactions",
                        other
                            .as_array()
                            .map_or_else(|| other.to_string(), |a| format!("{} receipts", a.len())),
                        block.txs.len()
                    ),
                ))
            }
            Some(Err(e)) if e.is_method_not_found() => {
                self.no_block_receipts
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                Vec::new()
            }
            Some(Err(e)) => return Err(e.into()),
            None => Vec::new(),
        };
        for (tx, r) in block.txs.iter().zip(&receipts) {
            expect_field(r, "receipt", "transactionHash", &format!("{:?}", tx.hash))?;
        }
        Ok((block, receipts))
    }

    /// The chain id, a block (by number tag or hash, with full transactions) and its receipts
    /// in transaction order, in one batch with the node's identity ([`client_requests`]): all a block's replay needs
    /// before state. The receipts are `None` where the node has no `eth_getBlockReceipts`.
    pub fn chain_block_receipts(
        &self,
        block_ref: &str,
    ) -> Result<(u64, RpcBlock, Option<Vec<Value>>), SourceError> {
        use std::sync::atomic::Ordering;
        let by_block = !self.no_block_receipts.load(Ordering::Relaxed);
        let receipts_call =
            by_block.then(|| ("eth_getBlockReceipts".to_string(), json!([block_ref])));
        let (chain_id, v, receipts) = self.block_batch(block_ref, true, receipts_call)?;
        let block = Self::parse_block(&v)?;
        let receipts = match receipts {
            Some(Ok(Value::Array(r))) if r.len() == block.txs.len() => {
                for (tx, r) in block.txs.iter().zip(&r) {
                    expect_field(r, "receipt", "transactionHash", &format!("{:?}", tx.hash))?;
                }
                Some(r)
            }
            Some(Err(e)) if e.is_method_not_found() => {
                self.no_block_receipts.store(true, Ordering::Relaxed);
                None
            }
            // A tag such as `latest` may have moved between the two calls: ask by hash later.
            _ => None,
        };
        Ok((chain_id, block, receipts))
    }

    /// The transaction and its receipt, in one round trip.
    pub fn tx_and_receipt(&self, hash: B256) -> Result<(Value, Value), SourceError> {
        let calls = vec![
            ("eth_getTransactionByHash".to_string(), json!([hash])),
            ("eth_getTransactionReceipt".to_string(), json!([hash])),
        ];
        let mut res = self.client.batch(&calls)?.into_iter();
        let tx = res.next().unwrap_or(Ok(Value::Null))?;
        let receipt = res.next().unwrap_or(Ok(Value::Null))?;
        if tx.is_null() {
            return Err(SourceError::NotFound {
                what: format!("transaction {hash}"),
            });
        }
        check_tx_and_receipt(hash, &tx, &receipt)?;
        Ok((tx, receipt))
    }

    /// The receipts of `hashes`, in order, in one batch request.
    pub fn receipts(&self, hashes: &[B256]) -> Result<Vec<Value>, SourceError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let calls: Vec<(String, Value)> = hashes
            .iter()
            .map(|h| ("eth_getTransactionReceipt".to_string(), json!([h])))
            .collect();
        let receipts = self
            .client
            .batch(&calls)?
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        for (h, r) in hashes.iter().zip(&receipts) {
            if !r.is_null() {
                expect_field(r, "receipt", "transactionHash", &format!("{h:?}"))?;
            }
        }
        Ok(receipts)
    }

    /// Fetches everything in `misses` as of block `at` (a number tag) in one batch request.
    pub fn fill(
        &self,
        snap: &mut StateSnapshot,
        misses: &Misses,
        at: &str,
    ) -> Result<(), SourceError> {
        if state_calls(misses, &json!(at)).is_empty() {
            return Ok(());
        }
        let (_, mut res) = self.state_batch(Vec::new(), &[(at, misses)])?;
        read_state(snap, misses, &mut res)
    }

    /// Fetches each `(at, misses)` as of its block, all in one batch request; a snapshot each.
    pub fn fetch_states(
        &self,
        asks: &[(&str, &Misses)],
    ) -> Result<Vec<StateSnapshot>, SourceError> {
        let (_, mut res) = self.state_batch(Vec::new(), asks)?;
        asks.iter()
            .map(|(_, m)| {
                let mut snap = StateSnapshot::partial();
                read_state(&mut snap, m, &mut res)?;
                Ok(snap)
            })
            .collect()
    }

    /// The tag block `info`'s parent state is read at: the parent's hash, which state reads
    /// send as EIP-1898's `{"blockHash": …}`, so that a block is replayed on its own parent
    /// even where the parent's number now names another block (a reorg, a block traced by the
    /// hash of a branch that lost); the number where the header gave no parent hash.
    pub fn parent_at(&self, info: &BlockInfo) -> String {
        let parent = info.parent_hash.filter(|_| info.number > 0);
        self.at_block(parent, info.number.saturating_sub(1))
    }

    fn at_block(&self, hash: Option<B256>, number: u64) -> String {
        match hash {
            Some(h) => {
                let mut known = self.parents.lock().unwrap_or_else(|p| p.into_inner());
                known.entry(h).or_insert((number, false));
                format!("{h:?}")
            }
            None => format!("{number:#x}"),
        }
    }

    /// The block parameter of a state read at `at`: a block hash as EIP-1898's object, a
    /// number or tag as it is. A node that refused hashes gets the number of a parent named by
    /// [`Self::parent_at`], once checked to still name that block.
    fn block_param(&self, at: &str) -> Result<Value, SourceError> {
        let Some(hash) = (at.len() == 66).then(|| at.parse::<B256>().ok()).flatten() else {
            return Ok(json!(at));
        };
        if !self
            .no_block_hashes
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Ok(json!({ "blockHash": at }));
        }
        let known = self
            .parents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash)
            .copied();
        let Some((number, checked)) = known else {
            return Err(SourceError::BadData {
                what: "state".into(),
                reason: format!(
                    "the node does not take a block by hash (EIP-1898) and block {hash} has no \
                     known number"
                ),
            });
        };
        if !checked {
            let block = self.client.call(
                "eth_getBlockByNumber",
                json!([format!("{number:#x}"), false]),
            )?;
            let there = block.get("hash").and_then(Value::as_str).unwrap_or("none");
            if there.parse::<B256>().ok() != Some(hash) {
                return Err(SourceError::Reorged {
                    number,
                    expected: hash,
                    there: there.to_string(),
                });
            }
            self.parents
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(hash, (number, true));
        }
        Ok(json!(format!("{number:#x}")))
    }

    /// `prefix` and the state reads of `asks` in one batch: the prefix's answers, then an
    /// iterator over the reads' answers in [`state_calls`]' order. When a read at a block hash
    /// is refused with "invalid params" (a node without EIP-1898), the reads are asked again at
    /// the parents' numbers ([`Self::block_param`]), and so from then on.
    fn state_batch(
        &self,
        prefix: Vec<(String, Value)>,
        asks: &[(&str, &Misses)],
    ) -> Result<(Vec<Answer>, std::vec::IntoIter<Answer>), SourceError> {
        loop {
            let mut calls = prefix.clone();
            let mut by_hash = false;
            for (at, m) in asks {
                let param = self.block_param(at)?;
                by_hash |= param.is_object();
                calls.extend(state_calls(m, &param));
            }
            let mut answers = self.client.batch(&calls)?;
            let reads = answers.split_off(prefix.len().min(answers.len()));
            let refused = reads.iter().any(|r| match r {
                Err(RpcError::Node { code, message, .. }) => refuses_block_hash(*code, message),
                _ => false,
            });
            if by_hash && refused {
                self.no_block_hashes
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                self.note(
                    "the node refused a block named by hash (EIP-1898): parent states read at \
                     their numbers, each checked to still name the block's parent"
                        .to_string(),
                );
                continue;
            }
            return Ok((answers, reads.into_iter()));
        }
    }
}

/// One call's answer in a batch.
type Answer = Result<Value, RpcError>;

/// Whether a node's error to a state read at `{"blockHash": …}` says it does not take that
/// parameter form (EIP-1898), rather than that it lacks the block or its state.
fn refuses_block_hash(code: i64, message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    code == -32602 && !m.contains("not found") && !m.contains("missing") && !m.contains("pruned")
}

impl RpcSource {
    /// Block `hash`'s header and each `(at, misses)` as of its block, in one batch request
    /// ([`super::prestate_rpc::header`]'s checks; the state a snapshot each).
    pub fn header_with_states(
        &self,
        hash: B256,
        asks: &[(&str, &Misses)],
    ) -> Result<(Value, Vec<StateSnapshot>), SourceError> {
        let head_call = vec![("eth_getBlockByHash".to_string(), json!([hash, false]))];
        let (head, mut res) = self.state_batch(head_call, asks)?;
        let head = head.into_iter().next().unwrap_or(Ok(Value::Null))?;
        if head.is_null() {
            return Err(SourceError::NotFound {
                what: format!("block {hash}"),
            });
        }
        expect_field(&head, "block", "hash", &format!("{hash:?}"))?;
        let states = asks
            .iter()
            .map(|(_, m)| {
                let mut snap = StateSnapshot::partial();
                read_state(&mut snap, m, &mut res)?;
                Ok(snap)
            })
            .collect::<Result<_, SourceError>>()?;
        Ok((head, states))
    }
}

/// The calls that read `misses` as of block `at` (a JSON-RPC block parameter).
fn state_calls(misses: &Misses, at: &Value) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for a in &misses.accounts {
        calls.push(("eth_getBalance".to_string(), json!([a, at])));
        calls.push(("eth_getTransactionCount".to_string(), json!([a, at])));
        calls.push(("eth_getCode".to_string(), json!([a, at])));
    }
    for (a, slot) in &misses.slots {
        calls.push((
            "eth_getStorageAt".to_string(),
            json!([a, format!("{slot:#x}"), at]),
        ));
    }
    for n in &misses.block_hashes {
        calls.push((
            "eth_getBlockByNumber".to_string(),
            json!([format!("{n:#x}"), false]),
        ));
    }
    calls
}

/// Reads the answers to [`state_calls`] of `misses`, in order, into `snap`.
fn read_state(
    snap: &mut StateSnapshot,
    misses: &Misses,
    res: &mut impl Iterator<Item = Result<Value, RpcError>>,
) -> Result<(), SourceError> {
    let mut next = || -> Result<Value, SourceError> { Ok(res.next().unwrap_or(Ok(Value::Null))?) };
    for a in &misses.accounts {
        let balance = parse_u256(&next()?).map_err(|e| bad("balance", e))?;
        let nonce = parse_u64(&next()?).map_err(|e| bad("nonce", e))?;
        let code = next()?;
        let code = parse_hex(code.as_str().unwrap_or("0x")).map_err(|e| bad("code", e))?;
        snap.insert_account(
            *a,
            AccountData {
                balance,
                nonce,
                code,
            },
        );
    }
    for (a, slot) in &misses.slots {
        let v = parse_u256(&next()?).map_err(|e| bad("storage value", e))?;
        snap.insert_slot(*a, *slot, v);
    }
    for n in &misses.block_hashes {
        let b = next()?;
        if !b.is_null() {
            expect_field(&b, "block", "number", &format!("{n:#x}"))?;
        }
        let h = header_hash(&b).unwrap_or_default();
        snap.block_hashes.insert(*n, h);
    }
    Ok(())
}

/// The accounts every transaction obviously touches: sender, recipient, coinbase; under the
/// OP stack's rules `op`, for a user transaction, also what its fees read — the L1Block
/// predeploy's fee slots and the fee vaults it credits ([`crate::chain::op::fee_reads`]) — so
/// that the L1 fee costs no round trip of its own.
pub fn obvious_accounts(
    txs: &[ReplayTx],
    coinbase: Address,
    op: Option<crate::chain::op::OpRules>,
) -> Misses {
    let mut m = Misses::default();
    m.accounts.insert(coinbase);
    if let Some(rules) = op.filter(|_| txs.iter().any(|t| t.deposit.is_none())) {
        let (accounts, slots) = crate::chain::op::fee_reads(rules);
        m.accounts.extend(accounts);
        m.slots.extend(slots);
    }
    for tx in txs {
        m.accounts.insert(tx.sender);
        if let Some(to) = tx.to() {
            m.accounts.insert(to);
        }
        for a in &tx.authorities {
            m.accounts.insert(*a);
        }
        for item in tx.env.access_list.iter() {
            m.accounts.insert(item.address);
            for k in &item.storage_keys {
                m.slots.insert((item.address, U256::from_be_bytes(k.0)));
            }
        }
    }
    m
}
