//! `eth_simulateV1` (ethereum/execution-apis `src/eth/execute.yaml`) over any node: blocks of
//! calls chained on each other's state on top of a block of the chain, run locally in the replay
//! driver ([`super::driver::Driver::converge`]: every pass runs the whole simulation on the
//! state read so far, what it missed is fetched in one batch, and the next pass starts over).
//!
//! go-ethereum's `internal/ethapi/simulate.go` is the reference where the specification is
//! loose: its chain sanitising (numbers and times strictly increasing, gaps filled with empty
//! blocks 12 s apart, at most 256 blocks past the base), its header defaults (coinbase and gas
//! limit carried from the parent, base fee 0 without validation, `prevRandao` zero), its call
//! defaults (the sender's nonce, the block's remaining gas within the RPC gas cap, a dynamic-fee
//! transaction with zero fees unless `gasPrice` asks for a legacy one), its validation (the
//! nonce only with `validation`, fee caps unless both fees are zero without it, the balance,
//! intrinsic gas and EIP-7623's floor always), its error codes and texts, and its log tracer
//! (`trace::sim_logs`).
//!
//! What a node without the state trie cannot give: `stateRoot` is zero (the header's hash is
//! then not the one geth would compute, and nor are `parentHash` past the first block or the
//! logs' `blockHash`); deposit requests (EIP-6110) are not parsed from logs, and EIP-7002/7251's
//! system contracts are called only where they have code (geth refuses the simulation
//! otherwise); blob and EIP-7702 transactions are refused; the blob schedule is Cancun's, then
//! Prague's (no BPO forks).

mod call;
mod chain;
mod encode;
mod types;

pub use types::*;

use alloy_consensus::{Header, EMPTY_OMMER_ROOT_HASH};
use alloy_primitives::{Address, Bloom, Bytes, Log, B256, B64, U256};
use revm::primitives::hardfork::SpecId;

use super::driver::Driver;
use super::env::BlockInfo;
use super::mined::spec_for;
use super::{EvmEnv, ReplayError, ReplayTx};
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::source::{ReplayDb, StateSnapshot};
use call::{
    has_code, run_call, system_call, CallCtx, BEACON_ROOTS, CONSOLIDATION_REQUESTS,
    HISTORY_STORAGE, WITHDRAWAL_REQUESTS,
};
pub use chain::check_limits;
use chain::{next_base_fee, next_excess_blob_gas, sanitize, Parent, Planned};
use encode::{block_size, receipt_encoding};

/// Runs the simulation `req` on the state after block `block_ref`.
pub fn simulate(
    source: &RpcSource,
    req: &SimRequest,
    block_ref: &str,
) -> Result<Simulation, SimError> {
    check_limits(&req.blocks).map_err(SimError::Refused)?;
    let (chain_id, mut base, raw) = source.call_block_header(block_ref)?;
    let base_spec = source.prepare_block(chain_id, &mut base, None)?;
    let planned = sanitize(&req.blocks, base.number, base.timestamp).map_err(SimError::Refused)?;
    let field = |k: &str| raw.get(k).and_then(|v| crate::geth::hex::parse_u64(v).ok());
    let parent = Parent {
        hash: base.hash.ok_or_else(|| SourceError::BadData {
            what: "block".into(),
            reason: "the base block has no hash".into(),
        })?,
        gas_limit: base.gas_limit,
        gas_used: field("gasUsed").unwrap_or(0),
        base_fee: base.base_fee,
        excess_blob_gas: base.excess_blob_gas,
        blob_gas_used: field("blobGasUsed"),
        coinbase: base.coinbase,
        difficulty: base.difficulty,
        spec: base_spec,
    };
    let state_at = format!("{:#x}", base.number);
    let mut driver = Driver::new(source, &state_at);
    let mut snap = StateSnapshot::partial();
    // What the calls obviously touch, in one batch before the first pass.
    let rough: Vec<ReplayTx> = req
        .blocks
        .iter()
        .flat_map(|b| &b.calls)
        .map(|c| {
            let mut t = ReplayTx::simulated(
                c.from.unwrap_or_default(),
                c.to,
                Bytes::new(),
                U256::ZERO,
                0,
                0,
            );
            t.env.access_list = c.access_list.clone().unwrap_or_default();
            t
        })
        .collect();
    let env = EvmEnv::new(base_spec, chain_id, &base);
    driver.prefetch(&mut snap, &rough, &env)?;
    let (blocks, _) = driver.converge(&mut snap, |db| {
        run_blocks(db, req, &planned, &base, chain_id, parent.clone())
    })?;
    let blocks = blocks.map_err(SimError::Refused)?;
    Ok(Simulation {
        blocks,
        passes: driver.passes,
    })
}

/// One pass: every block of the sanitised chain, in order, on `db`.
fn run_blocks(
    db: &mut ReplayDb<'_>,
    req: &SimRequest,
    planned: &[Planned<'_>],
    base: &BlockInfo,
    chain_id: u64,
    mut parent: Parent,
) -> Result<Result<Vec<SimulatedBlock>, SimFault>, ReplayError> {
    let mut out = Vec::with_capacity(planned.len());
    let mut budget = match req.gas_cap {
        0 => u64::MAX,
        c => c,
    };
    let empty = SimBlock::default();
    for p in planned {
        let entry = p.entry.unwrap_or(&empty);
        let o = &entry.block;
        let mut info = BlockInfo {
            number: p.number,
            timestamp: p.time,
            coinbase: o.fee_recipient.unwrap_or(parent.coinbase),
            gas_limit: o.gas_limit.unwrap_or(parent.gas_limit),
            mix_hash: o.prev_randao.unwrap_or_default(),
            hash: None,
            parent_hash: Some(parent.hash),
            ..base.clone()
        };
        let spec = spec_for(chain_id, &info, None);
        info.difficulty = match (o.difficulty, spec >= SpecId::MERGE) {
            (Some(d), _) => d,
            (None, true) => U256::ZERO,
            (None, false) => parent.difficulty,
        };
        let base_fee = match spec >= SpecId::LONDON {
            false => None,
            true => Some(match o.base_fee_per_gas {
                Some(f) => match u64::try_from(f) {
                    Ok(f) => f,
                    Err(_) => {
                        return Ok(Err(SimFault::new(
                            code::INVALID_PARAMS,
                            "baseFeePerGas exceeds 64 bits",
                        )))
                    }
                },
                None if req.validation => next_base_fee(&parent),
                None => 0,
            }),
        };
        info.base_fee = base_fee;
        let excess = (spec >= SpecId::CANCUN).then(|| next_excess_blob_gas(&parent, spec));
        info.excess_blob_gas = excess;
        let mut env = EvmEnv::new(spec, chain_id, &info);
        if let Err(e) = o.apply_env(&mut env.block) {
            return Ok(Err(SimFault::new(code::INVALID_PARAMS, e.to_string())));
        }
        // geth's simulator: EIP-3607 and EIP-7825 never checked, the nonce checked here
        // (`run_call`), the base fee only with validation, the block's gas by its own pool.
        env.cfg.disable_eip3607 = true;
        env.cfg.disable_nonce_check = true;
        env.cfg.disable_base_fee = !req.validation;
        env.cfg.disable_block_gas_limit = true;
        env.cfg.tx_gas_limit_cap = Some(u64::MAX);
        // Earlier simulated blocks answer BLOCKHASH.
        for b in &out {
            let b: &SimulatedBlock = b;
            db.cache
                .block_hashes
                .insert(U256::from(b.header.number), b.hash);
        }
        if let Some(state) = &entry.state {
            // Overrides of precompiles' addresses take them away, or move them, for this block.
            let active = super::op_precompiles::active(&env);
            let accounts: Vec<(Address, Option<Address>)> = state
                .0
                .iter()
                .map(|(a, o)| (*a, o.move_precompile_to))
                .collect();
            let plan = match super::precompile_moves::plan(&accounts, active) {
                Ok(p) => p,
                Err(m) => return Ok(Err(SimFault::new(code::SERVER, m))),
            };
            if !plan.is_empty() {
                match super::precompile_moves::modified(active, &plan) {
                    Ok(m) => env.precompiles = Some(m),
                    Err(m) => return Ok(Err(SimFault::new(code::CLIENT_LIMIT, m))),
                }
            }
            state.apply(db);
        }
        let beacon_root = (spec >= SpecId::CANCUN).then(|| o.beacon_root.unwrap_or_default());
        if let Some(root) = beacon_root {
            system_call(db, &env, BEACON_ROOTS, Bytes::from(root.to_vec()))?;
        }
        if spec >= SpecId::PRAGUE {
            system_call(db, &env, HISTORY_STORAGE, Bytes::from(parent.hash.to_vec()))?;
        }
        let cx = CallCtx {
            env: &env,
            chain_id,
            validation: req.validation,
            base_fee,
        };
        let mut used = 0u64;
        let mut log_count = 0u64;
        let mut txs = Vec::new();
        let mut raws = Vec::new();
        let mut receipts = Vec::new();
        let mut calls = Vec::new();
        let mut all_logs: Vec<Log> = Vec::new();
        for (i, call) in entry.calls.iter().enumerate() {
            let remaining = info.gas_limit.saturating_sub(used);
            let ran = match run_call(
                db,
                &cx,
                call,
                i,
                remaining,
                &mut budget,
                &mut log_count,
                req.trace_transfers,
            )? {
                Ok(r) => r,
                Err(f) => return Ok(Err(f)),
            };
            used += ran.result.gas_used;
            receipts.push(receipt_encoding(
                ran.tx.kind,
                ran.result.success,
                used,
                &ran.logs,
            ));
            raws.push((ran.tx.kind, ran.tx.encoding()));
            all_logs.extend(ran.logs);
            txs.push(ran.tx);
            calls.push(ran.result);
        }
        // Withdrawals are credited after the calls (the consensus engine's `Finalize`).
        let withdrawals =
            (spec >= SpecId::SHANGHAI).then(|| o.withdrawals.clone().unwrap_or_default());
        for w in withdrawals.iter().flatten() {
            let mut acc = db
                .load_account(w.address)
                .map(|a| a.info.clone())
                .unwrap_or_default();
            acc.balance = acc
                .balance
                .saturating_add(U256::from(w.amount) * U256::from(1_000_000_000u64));
            db.insert_account_info(w.address, acc);
        }
        // EIP-7685's requests: the withdrawal and consolidation queues, where deployed.
        let requests_hash = match spec >= SpecId::PRAGUE {
            false => None,
            true => {
                let mut requests = Vec::new();
                for (kind, at) in [(1u8, WITHDRAWAL_REQUESTS), (2, CONSOLIDATION_REQUESTS)] {
                    if !has_code(db, at)? {
                        continue;
                    }
                    if let Some(out) =
                        system_call(db, &env, at, Bytes::new())?.filter(|o| !o.is_empty())
                    {
                        let mut r = vec![kind];
                        r.extend_from_slice(&out);
                        requests.push(Bytes::from(r));
                    }
                }
                Some(alloy_eips::eip7685::Requests::new(requests).requests_hash())
            }
        };
        let bloom: Bloom = alloy_primitives::logs_bloom(all_logs.iter());
        let header = Header {
            parent_hash: parent.hash,
            ommers_hash: EMPTY_OMMER_ROOT_HASH,
            beneficiary: info.coinbase,
            state_root: B256::ZERO,
            transactions_root: alloy_consensus::proofs::ordered_trie_root_with_encoder(
                &raws,
                |(_, raw), buf| buf.extend_from_slice(raw),
            ),
            receipts_root: alloy_consensus::proofs::ordered_trie_root_with_encoder(
                &receipts,
                |r, buf| buf.extend_from_slice(r),
            ),
            logs_bloom: bloom,
            difficulty: info.difficulty,
            number: p.number,
            gas_limit: info.gas_limit,
            gas_used: used,
            timestamp: p.time,
            extra_data: Bytes::new(),
            mix_hash: info.mix_hash,
            nonce: B64::ZERO,
            base_fee_per_gas: base_fee,
            withdrawals_root: withdrawals
                .as_deref()
                .map(alloy_consensus::proofs::calculate_withdrawals_root),
            blob_gas_used: (spec >= SpecId::CANCUN).then_some(0),
            excess_blob_gas: excess,
            parent_beacon_block_root: beacon_root,
            requests_hash,
            block_access_list_hash: None,
            slot_number: None,
        };
        let hash = header.hash_slow();
        let size = block_size(&header, &raws, withdrawals.as_deref());
        parent = Parent {
            hash,
            gas_limit: info.gas_limit,
            gas_used: used,
            base_fee,
            excess_blob_gas: excess,
            blob_gas_used: header.blob_gas_used,
            coinbase: info.coinbase,
            difficulty: info.difficulty,
            spec,
        };
        out.push(SimulatedBlock {
            header,
            hash,
            size,
            txs,
            calls,
            withdrawals,
        });
    }
    Ok(Ok(out))
}
