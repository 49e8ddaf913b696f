//! `chaintrace bundle capture`: write a self-contained replay bundle of a mined transaction.
//!
//! The bundle is a geth tracetest fixture (so `tx --fixture` and geth's own test harness read
//! it) plus the receipt, the block hashes BLOCKHASH read and the block-wide log index offset.

use std::collections::BTreeMap;

use alloy_primitives::{hex, U256};
use chaintrace::replay::remote::{replay_block, replay_txs_from};
use chaintrace::replay::EvmEnv;
use chaintrace::trace::{TracerKind, TracerSpec};
use clap::{Args, Subcommand};
use revm::database::AccountState;
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Map, Value};

use super::common::parse_hash;
use super::common::{exit, CliError, RpcArgs};

#[derive(Subcommand, Debug)]
pub enum BundleCommand {
    /// Capture a mined transaction and exactly the pre-state it needs into one JSON file.
    Capture(CaptureArgs),
}

impl BundleCommand {
    pub fn run(&self) -> Result<u8, CliError> {
        match self {
            BundleCommand::Capture(a) => a.run(),
        }
    }
}

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Transaction hash.
    pub hash: String,
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    pub output: String,
    /// Replay under this fork instead of the chain's schedule.
    #[arg(long, value_name = "NAME")]
    pub hardfork: Option<String>,
    #[command(flatten)]
    pub rpc: RpcArgs,
}

/// A geth chain config with every fork up to `spec` active from genesis.
pub fn geth_config(chain_id: u64, spec: SpecId) -> Value {
    let mut c = Map::new();
    c.insert("chainId".into(), json!(chain_id));
    let blocks = [
        ("homesteadBlock", SpecId::HOMESTEAD),
        ("eip150Block", SpecId::TANGERINE),
        ("eip155Block", SpecId::SPURIOUS_DRAGON),
        ("eip158Block", SpecId::SPURIOUS_DRAGON),
        ("byzantiumBlock", SpecId::BYZANTIUM),
        ("constantinopleBlock", SpecId::PETERSBURG),
        ("petersburgBlock", SpecId::PETERSBURG),
        ("istanbulBlock", SpecId::ISTANBUL),
        ("berlinBlock", SpecId::BERLIN),
        ("londonBlock", SpecId::LONDON),
    ];
    for (k, s) in blocks {
        if spec >= s {
            c.insert(k.into(), json!(0));
        }
    }
    if spec >= SpecId::MERGE {
        c.insert("terminalTotalDifficulty".into(), json!(0));
    }
    for (k, s) in [
        ("shanghaiTime", SpecId::SHANGHAI),
        ("cancunTime", SpecId::CANCUN),
        ("pragueTime", SpecId::PRAGUE),
        ("osakaTime", SpecId::OSAKA),
    ] {
        if spec >= s {
            c.insert(k.into(), json!(0));
        }
    }
    Value::Object(c)
}

impl CaptureArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let hash = parse_hash(&self.hash, "transaction hash")?;
        let hardfork = super::common::hardfork_arg(self.hardfork.as_deref())?;
        let source = self.rpc.source()?;
        let chain_id = source.chain_id()?;
        let (tx, receipt) = source.tx_and_receipt(hash)?;
        let block_hash = tx
            .get("blockHash")
            .and_then(Value::as_str)
            .filter(|_| !receipt.is_null())
            .ok_or_else(|| {
                CliError::source(format!("transaction {hash} is not mined yet (no receipt)"))
            })?
            .to_string();
        let mut block = source.block(&block_hash)?;
        let index = block
            .txs
            .iter()
            .position(|t| t.hash == hash)
            .ok_or_else(|| CliError::source(format!("transaction {hash} is not in its block")))?;
        let spec_id = source.prepare_block(chain_id, &mut block.info, hardfork)?;
        let env = EvmEnv::new(spec_id, chain_id, &block.info);
        let tracer = TracerSpec::new(TracerKind::Call, None).expect("default config");
        let replay = replay_block(&source, &block, &env, index, index, &tracer)?;
        // The pre-state of the target: the parent state with the block's earlier transactions
        // applied through the replay driver, so that what they did in a chain's own precompiles
        // is the node's (spliced), as in the replay itself; their logs counted for the target's
        // log index.
        let parent = source.parent_at(&block.info);
        let prior = replay_txs_from(
            &source,
            &block.txs[..index],
            &env,
            index,
            &parent,
            &tracer,
            &|_| {},
            replay.snapshot.fork(),
        )?;
        let snap = &replay.snapshot;
        let mut db = snap.db();
        db.cache = prior.post;
        // The block-wide index of the target's first log: the logs of the transactions before
        // it, as their receipts record them.
        let earlier: Vec<_> = block.txs[..index].iter().map(|t| t.hash).collect();
        let log_offset: u64 = match earlier.is_empty() {
            true => 0,
            false => source
                .receipts(&earlier)?
                .iter()
                .map(|r| r["logs"].as_array().map_or(0, Vec::len) as u64)
                .sum(),
        };
        let mut slots: BTreeMap<_, BTreeMap<String, String>> = BTreeMap::new();
        let mut storage_keys: Vec<_> = snap.storage.keys().copied().collect();
        storage_keys.sort();
        for (addr, slot) in storage_keys {
            // The value the earlier transactions left, else the parent state's: an account
            // they only looked up (cached as absent) keeps the storage the snapshot read.
            // (An account cleared by them reads zero.)
            let parent = || snap.storage.get(&(addr, slot)).copied().unwrap_or_default();
            let v = match db.cache.accounts.get(&addr) {
                Some(a) => match a.storage.get(&slot) {
                    Some(v) => *v,
                    None if a.account_state == AccountState::StorageCleared => U256::ZERO,
                    None => parent(),
                },
                None => parent(),
            };
            slots
                .entry(addr)
                .or_default()
                .insert(format!("{slot:#066x}"), format!("{v:#066x}"));
        }
        // Every account read, and every account whose storage was read without the account
        // itself (the L1Block predeploy's fee parameters, read beside the EVM on OP chains).
        let mut addrs: Vec<_> = snap.accounts.keys().copied().collect();
        addrs.extend(slots.keys().copied());
        addrs.sort();
        addrs.dedup();
        let mut alloc = Map::new();
        for addr in addrs {
            let (balance, nonce, code) = chaintrace::trace::prestate::read_account(&mut db, addr);
            let mut a = Map::new();
            a.insert("balance".into(), json!(format!("{balance:#x}")));
            if nonce != 0 {
                a.insert("nonce".into(), json!(nonce));
            }
            if !code.is_empty() {
                a.insert("code".into(), json!(format!("0x{}", hex::encode(&code))));
            }
            if let Some(s) = slots.remove(&addr) {
                a.insert("storage".into(), json!(s));
            }
            alloc.insert(format!("{addr:?}"), Value::Object(a));
        }
        let info = &block.info;
        let mut context = json!({
            "number": info.number.to_string(),
            "difficulty": info.difficulty.to_string(),
            "timestamp": info.timestamp.to_string(),
            "gasLimit": info.gas_limit.to_string(),
            "miner": format!("{:?}", info.coinbase),
            "mixHash": format!("{:?}", info.mix_hash),
        });
        if let Some(b) = info.base_fee {
            context["baseFeePerGas"] = json!(b.to_string());
        }
        if let Some(x) = info.excess_blob_gas {
            context["excessBlobGas"] = json!(x.to_string());
        }
        let block_hashes: BTreeMap<String, String> = snap
            .block_hashes
            .iter()
            .map(|(n, h)| (n.to_string(), format!("{h:?}")))
            .collect();
        let bundle = json!({
            "genesis": {
                "config": geth_config(chain_id, spec_id),
                "alloc": alloc,
                "number": info.number.saturating_sub(1).to_string(),
                "mixHash": format!("{:?}", info.mix_hash),
                "gasLimit": info.gas_limit.to_string(),
                "difficulty": "0",
                "timestamp": info.timestamp.to_string(),
            },
            "context": context,
            "input": format!("0x{}", hex::encode(&block.txs[index].raw)),
            "receipt": receipt,
            "blockHashes": block_hashes,
            "logIndexOffset": log_offset,
            "txHash": format!("{hash:?}"),
        });
        let mut bundle = bundle;
        // The rules the node ran, so that the offline replay applies the same: where the chain
        // id has rules of its own (1329/1328, an OP preset) or the node's differ from them (a
        // dev node's Ethereum rules, the OP stack found in a chain's data), the OP forks a dev
        // node in OP mode runs, and a custom OP chain's schedule.
        let own_rules = chaintrace::chain::rules::rules_at(chain_id, info.number).is_some()
            || chaintrace::chain::op::known(chain_id).is_some();
        if own_rules || info.ruleset != chaintrace::chain::rules::Ruleset::Chain {
            bundle["chainRules"] = json!(info.ruleset.name());
        }
        if let Some(f) = info.op_dev_fork {
            bundle["opDevFork"] = json!(f.name());
        }
        // A custom OP chain's schedule (`--chain-config`), which the chain id alone does not give.
        if let Some(s) = &info.op_schedule {
            bundle["opChainConfig"] = chaintrace::chain::op::OpChainConfig::geth_json(chain_id, s);
        }
        let text =
            serde_json::to_string_pretty(&bundle).map_err(|e| CliError::source(e.to_string()))?;
        // Write then rename, so a crash never leaves half a bundle under the final name; a
        // failure removes the temporary file.
        if std::path::Path::new(&self.output).is_dir() {
            return Err(CliError::input(format!(
                "-o {} is a folder: give the bundle's file name",
                self.output
            )));
        }
        chaintrace::source::cache::write_atomic(
            std::path::Path::new(&self.output),
            (text + "\n").as_bytes(),
        )
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", self.output)))?;
        super::common::print_notes(&source);
        note!(
            "bundle: {} accounts, {} slots, {} state round trips → {}",
            alloc.len(),
            snap.storage.len(),
            replay.passes,
            self.output
        );
        Ok(exit::OK)
    }
}
