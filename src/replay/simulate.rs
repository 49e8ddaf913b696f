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

use alloy_consensus::{Header, EMPTY_OMMER_ROOT_HASH};
use alloy_eips::eip2930::AccessList;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{keccak256, Address, Bloom, Bytes, Log, TxKind, B256, B64, U256};
use alloy_rlp::Encodable;
use revm::context_interface::block::calc_blob_gasprice;
use revm::context_interface::cfg::gas::calculate_initial_tx_gas_for_tx;
use revm::primitives::hardfork::SpecId;
use revm::{Database, DatabaseCommit, MainBuilder, SystemCallEvm};

use super::driver::Driver;
use super::env::BlockInfo;
use super::mined::spec_for;
use super::overrides::{BlockOverrides, StateOverride};
use super::traced::SimRun;
use super::{EvmCtx, EvmEnv, ReplayError, ReplayTx};
use crate::source::error::SourceError;
use crate::source::rpc::RpcSource;
use crate::source::{ReplayDb, StateSnapshot};
use crate::trace::errors::FrameError;
use crate::trace::sim_logs::{SimLog, SimLogTracer};

/// geth's `maxSimulateBlocks`: blocks past the base, gaps included.
pub const MAX_BLOCKS: u64 = 256;
/// geth's `maxSimulateCallsPerBlock`.
pub const MAX_CALLS_PER_BLOCK: usize = 5000;
/// geth's `maxSimulateTotalCalls`.
pub const MAX_CALLS: usize = 10000;
/// geth's `timestampIncrement`: a block without a time is 12 s after its parent.
pub const TIMESTAMP_INCREMENT: u64 = 12;

/// The error codes of `eth_simulateV1` (execution-apis `execute.yaml`, geth's `errors.go`).
pub mod code {
    pub const NONCE_TOO_LOW: i64 = -38010;
    pub const NONCE_TOO_HIGH: i64 = -38011;
    pub const BASE_FEE_TOO_LOW: i64 = -38012;
    pub const INTRINSIC_GAS: i64 = -38013;
    pub const INSUFFICIENT_FUNDS: i64 = -38014;
    pub const BLOCK_GAS_LIMIT: i64 = -38015;
    pub const BLOCK_NUMBER_ORDER: i64 = -38020;
    pub const BLOCK_TIMESTAMP_ORDER: i64 = -38021;
    pub const INIT_CODE_SIZE: i64 = -38025;
    pub const CLIENT_LIMIT: i64 = -38026;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    /// A call's failure other than a revert (`errCodeVMError`).
    pub const VM_ERROR: i64 = -32015;
    /// A call's revert (`revertError.ErrorCode`).
    pub const REVERTED: i64 = 3;
    /// An error geth returns without a code of its own.
    pub const SERVER: i64 = -32000;
}

/// One call: geth's `TransactionArgs` as `eth_simulateV1` reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimCall {
    pub from: Option<Address>,
    pub to: Option<Address>,
    pub gas: Option<u64>,
    pub gas_price: Option<U256>,
    pub max_fee_per_gas: Option<U256>,
    pub max_priority_fee_per_gas: Option<U256>,
    pub value: Option<U256>,
    pub nonce: Option<u64>,
    /// `input`, else `data`.
    pub input: Bytes,
    pub access_list: Option<AccessList>,
    pub chain_id: Option<U256>,
}

/// One entry of `blockStateCalls`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimBlock {
    pub block: BlockOverrides,
    pub state: Option<StateOverride>,
    pub calls: Vec<SimCall>,
}

/// `eth_simulateV1`'s payload, with the server's RPC gas cap (0: none).
#[derive(Clone, Debug, Default)]
pub struct SimRequest {
    pub blocks: Vec<SimBlock>,
    pub trace_transfers: bool,
    pub validation: bool,
    pub gas_cap: u64,
}

/// An error geth answers the whole request with: its code and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimFault {
    pub code: i64,
    pub message: String,
}

impl SimFault {
    fn new(code: i64, message: impl Into<String>) -> SimFault {
        SimFault {
            code,
            message: message.into(),
        }
    }
}

/// Why a simulation has no result.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Refused as geth refuses it (bad order, a call that cannot be included, a limit).
    #[error("{}", .0.message)]
    Refused(SimFault),
    #[error(transparent)]
    Failed(#[from] super::Error),
}

impl From<SourceError> for SimError {
    fn from(e: SourceError) -> Self {
        SimError::Failed(e.into())
    }
}

impl From<super::driver::DriveError> for SimError {
    fn from(e: super::driver::DriveError) -> Self {
        SimError::Failed(e.into())
    }
}

/// A simulated transaction as its block lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct SimTx {
    /// 0 (legacy: `gasPrice` given), 1 (an access list without fees, pre-London) or 2.
    pub kind: u8,
    pub hash: B256,
    pub from: Address,
    pub to: Option<Address>,
    pub nonce: u64,
    pub gas: u64,
    /// Legacy and access-list transactions' price.
    pub gas_price: Option<U256>,
    /// Dynamic-fee transactions' caps.
    pub max_fee_per_gas: Option<U256>,
    pub max_priority_fee_per_gas: Option<U256>,
    pub value: U256,
    pub input: Bytes,
    pub access_list: AccessList,
    pub chain_id: u64,
    /// The price it paid per gas (RPC `gasPrice` of a mined dynamic-fee transaction).
    pub effective_gas_price: U256,
}

/// A call's failure (`error` of its result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallFailure {
    pub code: i64,
    pub message: String,
    /// The revert data, for a revert.
    pub data: Option<Bytes>,
}

/// One call's result.
#[derive(Clone, Debug, PartialEq)]
pub struct SimCallResult {
    pub return_data: Bytes,
    pub logs: Vec<SimLog>,
    pub gas_used: u64,
    /// The gas used before the refund (and EIP-7623's floor), geth's `MaxUsedGas`.
    pub max_used_gas: u64,
    pub success: bool,
    pub error: Option<CallFailure>,
}

/// One simulated block.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedBlock {
    pub header: Header,
    pub hash: B256,
    /// Its RLP size, as geth's `Block.Size`.
    pub size: u64,
    pub txs: Vec<SimTx>,
    pub calls: Vec<SimCallResult>,
    /// From Shanghai.
    pub withdrawals: Option<Vec<Withdrawal>>,
}

/// What a simulation gave, and what it cost.
pub struct Simulation {
    pub blocks: Vec<SimulatedBlock>,
    /// State round trips.
    pub passes: usize,
}

/// A block of the sanitised chain: its number and time, and the request's entry (`None`: an
/// empty block filling a gap in the numbers).
struct Planned<'r> {
    number: u64,
    time: u64,
    entry: Option<&'r SimBlock>,
}

/// geth's `sanitizeChain`: numbers default to the parent's + 1 and must increase, times default
/// to the parent's + 12 and must increase, gaps are filled with empty blocks, and no block may
/// be more than [`MAX_BLOCKS`] past the base.
fn sanitize(
    blocks: &[SimBlock],
    base_number: u64,
    base_time: u64,
) -> Result<Vec<Planned<'_>>, SimFault> {
    let mut out = Vec::new();
    let (mut prev_number, mut prev_time) = (base_number, base_time);
    for b in blocks {
        let number = b.block.number.unwrap_or(prev_number.saturating_add(1));
        if number <= prev_number {
            return Err(SimFault::new(
                code::BLOCK_NUMBER_ORDER,
                format!("block numbers must be in order: {number} <= {prev_number}"),
            ));
        }
        if number - base_number > MAX_BLOCKS {
            return Err(SimFault::new(code::CLIENT_LIMIT, "too many blocks"));
        }
        for n in prev_number + 1..number {
            prev_time += TIMESTAMP_INCREMENT;
            out.push(Planned {
                number: n,
                time: prev_time,
                entry: None,
            });
        }
        prev_number = number;
        let time = match b.block.time {
            None => prev_time + TIMESTAMP_INCREMENT,
            Some(t) if t <= prev_time => {
                return Err(SimFault::new(
                    code::BLOCK_TIMESTAMP_ORDER,
                    format!("block timestamps must be in order: {t} <= {prev_time}"),
                ))
            }
            Some(t) => t,
        };
        prev_time = time;
        out.push(Planned {
            number,
            time,
            entry: Some(b),
        });
    }
    Ok(out)
}

/// geth's checks of the request's size before anything is read.
pub fn check_limits(blocks: &[SimBlock]) -> Result<(), SimFault> {
    if blocks.is_empty() {
        return Err(SimFault::new(code::INVALID_PARAMS, "empty input"));
    }
    if blocks.len() as u64 > MAX_BLOCKS {
        return Err(SimFault::new(code::CLIENT_LIMIT, "too many blocks"));
    }
    let mut total = 0;
    for b in blocks {
        if b.calls.len() > MAX_CALLS_PER_BLOCK {
            return Err(SimFault::new(
                code::CLIENT_LIMIT,
                format!(
                    "too many calls in block: {} > {MAX_CALLS_PER_BLOCK}",
                    b.calls.len()
                ),
            ));
        }
        total += b.calls.len();
        if total > MAX_CALLS {
            return Err(SimFault::new(
                code::CLIENT_LIMIT,
                format!("too many calls: {total} > {MAX_CALLS}"),
            ));
        }
    }
    Ok(())
}

/// What a simulated block reads of its parent.
#[derive(Clone, Debug)]
struct Parent {
    hash: B256,
    gas_limit: u64,
    gas_used: u64,
    base_fee: Option<u64>,
    excess_blob_gas: Option<u64>,
    blob_gas_used: Option<u64>,
    coinbase: Address,
    difficulty: U256,
    spec: SpecId,
}

/// EIP-1559's base fee after `parent` (geth's `eip1559.CalcBaseFee`): 1 gwei at London's first
/// block.
fn next_base_fee(parent: &Parent) -> u64 {
    match (parent.spec >= SpecId::LONDON, parent.base_fee) {
        (true, Some(fee)) => alloy_eips::calc_next_block_base_fee(
            parent.gas_used,
            parent.gas_limit,
            fee,
            alloy_eips::eip1559::BaseFeeParams::ethereum(),
        ),
        _ => alloy_eips::eip1559::INITIAL_BASE_FEE,
    }
}

/// Blobs per block a fork targets and allows, and its base fee update fraction.
fn blob_schedule(spec: SpecId) -> (u64, u64, u64) {
    if spec >= SpecId::PRAGUE {
        (
            6,
            9,
            revm::primitives::eip4844::BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
        )
    } else {
        (
            3,
            6,
            revm::primitives::eip4844::BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN,
        )
    }
}

/// EIP-4844's excess blob gas after `parent` (geth's `eip4844.CalcExcessBlobGas`, with
/// EIP-7918's reserve price from Osaka), for a block of fork `spec`.
fn next_excess_blob_gas(parent: &Parent, spec: SpecId) -> u64 {
    if parent.spec < SpecId::CANCUN {
        return 0;
    }
    const PER_BLOB: u64 = 131_072;
    let (target, max, fraction) = blob_schedule(spec);
    let (excess, used) = (
        parent.excess_blob_gas.unwrap_or(0),
        parent.blob_gas_used.unwrap_or(0),
    );
    let total = excess + used;
    let target_gas = target * PER_BLOB;
    if total < target_gas {
        return 0;
    }
    if spec >= SpecId::OSAKA {
        let reserve = U256::from(8192u64) * U256::from(parent.base_fee.unwrap_or(0));
        let price = U256::from(calc_blob_gasprice(excess, fraction));
        if reserve > price {
            return excess + used * (max - target) / max;
        }
    }
    total - target_gas
}

/// A Go `Address.Hex()`: EIP-55 checksummed.
fn hex_address(a: Address) -> String {
    a.to_checksum(None)
}

/// The RLP list of `parts`.
fn rlp_list(parts: &[&dyn Encodable]) -> Vec<u8> {
    let payload: usize = parts.iter().map(|p| p.length()).sum();
    let mut out = Vec::with_capacity(payload + 9);
    alloy_rlp::Header {
        list: true,
        payload_length: payload,
    }
    .encode(&mut out);
    for p in parts {
        p.encode(&mut out);
    }
    out
}

impl SimTx {
    /// The transaction's consensus encoding (EIP-2718), unsigned: `v`, `r` and `s` zero, as
    /// geth's `TransactionArgs.ToTransaction` leaves them.
    fn encoding(&self) -> Vec<u8> {
        let to = self.to.map_or(TxKind::Create, TxKind::Call);
        let zero = 0u8;
        let chain_id = U256::from(self.chain_id);
        let price = self.gas_price.unwrap_or_default();
        match self.kind {
            0 => rlp_list(&[
                &self.nonce,
                &price,
                &self.gas,
                &to,
                &self.value,
                &self.input,
                &zero,
                &zero,
                &zero,
            ]),
            1 => {
                let mut out = vec![1u8];
                out.extend(rlp_list(&[
                    &chain_id,
                    &self.nonce,
                    &price,
                    &self.gas,
                    &to,
                    &self.value,
                    &self.input,
                    &self.access_list,
                    &zero,
                    &zero,
                    &zero,
                ]));
                out
            }
            _ => {
                let mut out = vec![2u8];
                out.extend(rlp_list(&[
                    &chain_id,
                    &self.nonce,
                    &self.max_priority_fee_per_gas.unwrap_or_default(),
                    &self.max_fee_per_gas.unwrap_or_default(),
                    &self.gas,
                    &to,
                    &self.value,
                    &self.input,
                    &self.access_list,
                    &zero,
                    &zero,
                    &zero,
                ]));
                out
            }
        }
    }
}

/// A receipt's consensus encoding: status, cumulative gas, bloom and logs, typed as its
/// transaction.
fn receipt_encoding(kind: u8, success: bool, cumulative: u64, logs: &[Log]) -> Vec<u8> {
    let bloom = alloy_primitives::logs_bloom(logs.iter());
    let logs = logs.to_vec();
    let status = u8::from(success);
    let body = rlp_list(&[&status, &cumulative, &bloom, &logs]);
    match kind {
        0 => body,
        k => {
            let mut out = vec![k];
            out.extend(body);
            out
        }
    }
}

/// geth's `Block.Size`: the RLP length of header, transactions, uncles and withdrawals.
fn block_size(header: &Header, txs: &[(u8, Vec<u8>)], withdrawals: Option<&[Withdrawal]>) -> u64 {
    let list = |payload: usize| alloy_rlp::length_of_length(payload) + payload;
    let txs: usize = txs
        .iter()
        .map(|(kind, raw)| match kind {
            0 => raw.len(),
            _ => raw.as_slice().length(),
        })
        .sum();
    let withdrawals = withdrawals.map_or(0, |w| list(w.iter().map(Encodable::length).sum()));
    list(header.length() + list(txs) + list(0) + withdrawals) as u64
}

/// The order of work within one pass: what a call needs besides itself.
struct CallCtx<'a> {
    env: &'a EvmEnv,
    chain_id: u64,
    validation: bool,
    base_fee: Option<u64>,
}

/// How a call ended: its result, its transaction and its receipt's encoding parts.
struct Ran {
    result: SimCallResult,
    tx: SimTx,
    logs: Vec<Log>,
}

/// `err: … (supplied gas N)`: geth's `applyMessageWithEVM` wrapping of a message it could not
/// apply.
fn refused(code: i64, msg: String, gas: u64) -> SimFault {
    SimFault::new(code, format!("err: {msg} (supplied gas {gas})"))
}

/// The account's nonce and balance as the pass's state holds them.
fn account(db: &mut ReplayDb<'_>, a: Address) -> Result<(u64, U256), ReplayError> {
    let info = db
        .basic(a)
        .map_err(|e| ReplayError::BadTransaction(e.to_string()))?
        .unwrap_or_default();
    Ok((info.nonce, info.balance))
}

/// One call of a block: geth's `sanitizeCall`, `CallDefaults`, `ToTransaction`, the state
/// transition's checks in their order, then the run under the simulator's tracer.
#[allow(clippy::too_many_arguments)]
fn run_call(
    db: &mut ReplayDb<'_>,
    cx: &CallCtx<'_>,
    call: &SimCall,
    index: usize,
    remaining: u64,
    budget: &mut u64,
    log_count: &mut u64,
    transfers: bool,
) -> Result<Result<Ran, SimFault>, ReplayError> {
    let from = call.from.unwrap_or_default();
    let (state_nonce, balance) = account(db, from)?;
    let nonce = call.nonce.unwrap_or(state_nonce);
    let gas = call.gas.unwrap_or(remaining);
    if remaining < gas {
        return Ok(Err(SimFault::new(
            code::BLOCK_GAS_LIMIT,
            format!("block gas limit reached: remaining: {remaining}, required: {gas}"),
        )));
    }
    let capped = gas > *budget;
    let gas = gas.min(*budget);
    // CallDefaults.
    if call.gas_price.is_some()
        && (call.max_fee_per_gas.is_some() || call.max_priority_fee_per_gas.is_some())
    {
        return Ok(Err(SimFault::new(
            code::SERVER,
            "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified",
        )));
    }
    if let Some(have) = call.chain_id.filter(|c| *c != U256::from(cx.chain_id)) {
        return Ok(Err(SimFault::new(
            code::SERVER,
            format!(
                "chainId does not match node's (have={have}, want={})",
                cx.chain_id
            ),
        )));
    }
    let value = call.value.unwrap_or_default();
    // ToMessage's prices and ToTransaction's type.
    let (kind, fee_cap, tip, price) = match (cx.base_fee, call.gas_price) {
        (_, Some(p)) => (0u8, p, p, p),
        (None, None) => match call.access_list {
            Some(_) => (1, U256::ZERO, U256::ZERO, U256::ZERO),
            None => (0, U256::ZERO, U256::ZERO, U256::ZERO),
        },
        (Some(base), None) => {
            let cap = call.max_fee_per_gas.unwrap_or_default();
            let tip = call.max_priority_fee_per_gas.unwrap_or_default();
            let price = match cap.is_zero() && tip.is_zero() {
                true => U256::ZERO,
                false => (tip + U256::from(base)).min(cap),
            };
            (2, cap, tip, price)
        }
    };
    let access_list = call.access_list.clone().unwrap_or_default();
    let tx = SimTx {
        kind,
        hash: B256::ZERO,
        from,
        to: call.to,
        nonce,
        gas,
        gas_price: (kind != 2).then_some(price),
        max_fee_per_gas: (kind == 2).then_some(fee_cap),
        max_priority_fee_per_gas: (kind == 2).then_some(tip),
        value,
        input: call.input.clone(),
        access_list: access_list.clone(),
        chain_id: cx.chain_id,
        effective_gas_price: price,
    };
    let raw = tx.encoding();
    let tx = SimTx {
        hash: keccak256(&raw),
        ..tx
    };
    let spec = cx.env.spec;
    let who = hex_address(from);
    // preCheck: the nonce (with validation only).
    if cx.validation {
        if state_nonce < nonce {
            let m = format!("nonce too high: address {who}, tx: {nonce} state: {state_nonce}");
            return Ok(Err(refused(code::NONCE_TOO_HIGH, m, gas)));
        }
        if state_nonce > nonce {
            let m = format!("nonce too low: address {who}, tx: {nonce} state: {state_nonce}");
            return Ok(Err(refused(code::NONCE_TOO_LOW, m, gas)));
        }
        if state_nonce == u64::MAX {
            let m = format!("nonce has max value: address {who}, nonce: {state_nonce}");
            return Ok(Err(refused(code::INTERNAL, m, gas)));
        }
    }
    // The fee caps, unless both are zero without validation (`NoBaseFee`).
    if let Some(base) = cx
        .base_fee
        .filter(|_| cx.validation || !fee_cap.is_zero() || !tip.is_zero())
    {
        if fee_cap < tip {
            let m = format!(
                "max priority fee per gas higher than max fee per gas: address {who}, \
                 maxPriorityFeePerGas: {tip}, maxFeePerGas: {fee_cap}"
            );
            return Ok(Err(refused(code::INVALID_PARAMS, m, gas)));
        }
        if fee_cap < U256::from(base) {
            let m = format!(
                "max fee per gas less than block base fee: address {who}, maxFeePerGas: \
                 {fee_cap}, baseFee: {base}"
            );
            return Ok(Err(refused(code::BASE_FEE_TOO_LOW, m, gas)));
        }
    }
    if call.to.is_none() && spec >= SpecId::SHANGHAI && call.input.len() > 2 * 24_576 {
        let m = format!(
            "max initcode size exceeded: code size {} limit {}",
            call.input.len(),
            2 * 24_576
        );
        return Ok(Err(refused(code::INIT_CODE_SIZE, m, gas)));
    }
    // buyGas: gas × the fee cap, and the value.
    let want = U256::from(gas)
        .checked_mul(fee_cap)
        .and_then(|g| g.checked_add(value));
    match want {
        None => {
            let m = format!(
                "insufficient funds for gas * price + value: address {who} required balance \
                 exceeds 256 bits"
            );
            return Ok(Err(refused(code::INSUFFICIENT_FUNDS, m, gas)));
        }
        Some(want) if balance < want => {
            let m = format!(
                "insufficient funds for gas * price + value: address {who} have {balance} want \
                 {want}"
            );
            return Ok(Err(refused(code::INSUFFICIENT_FUNDS, m, gas)));
        }
        Some(_) => {}
    }
    let mut replay = ReplayTx::simulated(from, call.to, call.input.clone(), value, gas, 0);
    replay.hash = tx.hash;
    replay.raw = Bytes::from(raw);
    // revm refuses a transaction nonce of 2^64 - 1 even unchecked; the nonce was checked above
    // and revm reads no other use of it.
    replay.env.nonce = nonce.min(u64::MAX - 1);
    replay.env.tx_type = kind;
    replay.env.access_list = access_list;
    replay.env.chain_id = Some(cx.chain_id);
    match kind {
        2 => {
            replay.env.gas_price = u128::try_from(fee_cap).unwrap_or(u128::MAX);
            replay.env.gas_priority_fee = Some(u128::try_from(tip).unwrap_or(u128::MAX));
        }
        _ => replay.env.gas_price = u128::try_from(price).unwrap_or(u128::MAX),
    }
    // Intrinsic gas, then EIP-7623's floor.
    let initial = calculate_initial_tx_gas_for_tx(&replay.env, spec, None);
    if gas < initial.initial_total_gas() {
        let m = format!(
            "intrinsic gas too low: have {gas}, want {}",
            initial.initial_total_gas()
        );
        return Ok(Err(refused(code::INTRINSIC_GAS, m, gas)));
    }
    if spec >= SpecId::PRAGUE && gas < initial.floor_gas {
        let m = format!(
            "insufficient gas for floor data gas cost: have {gas}, want {}",
            initial.floor_gas
        );
        return Ok(Err(refused(code::INTERNAL, m, gas)));
    }
    let tracer = SimLogTracer::new(transfers, *log_count, cx.env.precompiles.map(|m| m.warm));
    let (run, outcome) = match super::traced::run(db, cx.env, &replay, tracer, Some(index as u64)) {
        Ok(r) => r,
        // Anything revm still refuses: geth's default code for a message it cannot apply.
        Err(ReplayError::Invalid { msg, .. }) => return Ok(Err(refused(code::INTERNAL, msg, gas))),
        Err(e) => return Err(e),
    };
    let SimRun {
        logs,
        next,
        top,
        peak,
    } = run;
    *log_count = next;
    *budget = budget.saturating_sub(outcome.gas_used);
    let error = match (&top.error, outcome.success) {
        (_, true) => None,
        (Some(FrameError::Reverted), false) => {
            let message = match crate::geth::revert::decode_revert_reason(&outcome.output) {
                Some(r) => format!("{}: {r}", FrameError::REVERTED),
                None => FrameError::REVERTED.to_string(),
            };
            Some(CallFailure {
                code: code::REVERTED,
                message,
                data: Some(outcome.output.clone()),
            })
        }
        (e, false) => {
            let mut message = e
                .as_ref()
                .map(|e| e.to_string())
                .or_else(|| outcome.halt.clone())
                .unwrap_or_default();
            if capped {
                message.push_str(" (gas limit was capped by the RPC server's global gas cap)");
            }
            Some(CallFailure {
                code: code::VM_ERROR,
                message,
                data: None,
            })
        }
    };
    let result = SimCallResult {
        // geth's `ExecutionResult.Return`: nothing for a failed call (a revert's data is the
        // error's `data`).
        return_data: match outcome.success {
            true => outcome.output.clone(),
            false => Bytes::new(),
        },
        logs,
        gas_used: outcome.gas_used,
        max_used_gas: peak,
        success: outcome.success,
        error,
    };
    Ok(Ok(Ran {
        result,
        tx,
        logs: outcome.logs,
    }))
}

/// EIP-4788's beacon roots contract and EIP-2935's history storage contract.
const BEACON_ROOTS: Address =
    alloy_primitives::address!("000F3df6D732807Ef1319fB7B8bB8522d0Beac02");
const HISTORY_STORAGE: Address =
    alloy_primitives::address!("0000F90827F1C53a10cb7A02335B175320002935");
/// EIP-7002's withdrawal and EIP-7251's consolidation request contracts.
const WITHDRAWAL_REQUESTS: Address =
    alloy_primitives::address!("00000961Ef480Eb55e80D19ad83579A64c007002");
const CONSOLIDATION_REQUESTS: Address =
    alloy_primitives::address!("0000BBdDc7CE488642fb579F8B00f3a590007251");

/// A system call (from `0xff…fe`, no fee, no nonce) to `to` with `data`, committed; its output.
fn system_call(
    db: &mut ReplayDb<'_>,
    env: &EvmEnv,
    to: Address,
    data: Bytes,
) -> Result<Option<Bytes>, ReplayError> {
    let mut evm = EvmCtx::new(&mut *db, env.spec)
        .with_block(env.block.clone())
        .with_cfg(env.cfg.clone())
        .build_mainnet();
    let out = evm
        .system_call(to, data)
        .map_err(|e| ReplayError::BadTransaction(format!("system call to {to}: {e}")))?;
    drop(evm);
    let output = out.result.output().cloned();
    let success = out.result.is_success();
    db.commit(out.state);
    Ok(success.then_some(output).flatten())
}

/// Whether `a` has code in the pass's state.
fn has_code(db: &mut ReplayDb<'_>, a: Address) -> Result<bool, ReplayError> {
    let info = db
        .basic(a)
        .map_err(|e| ReplayError::BadTransaction(e.to_string()))?;
    Ok(info.is_some_and(|i| !i.is_empty_code_hash()))
}

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
            let plan = match super::precompile_moves::plan(state, active) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn block(number: Option<u64>, time: Option<u64>) -> SimBlock {
        SimBlock {
            block: BlockOverrides {
                number,
                time,
                ..BlockOverrides::default()
            },
            ..SimBlock::default()
        }
    }

    /// geth's `sanitizeChain` on execution-apis' cases (base block 0x36 at time 0x21c).
    #[test]
    fn chains_are_sanitised_as_geth_does() {
        let plan = |b: &[SimBlock]| {
            sanitize(b, 0x36, 0x21c).map(|p| {
                p.iter()
                    .map(|p| (p.number, p.time, p.entry.is_some()))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            plan(&[block(None, None), block(Some(0x39), None)]).unwrap(),
            vec![
                (0x37, 0x228, true),
                (0x38, 0x234, false),
                (0x39, 0x240, true)
            ]
        );
        let e = plan(&[block(Some(0x9a), None), block(Some(0x90), None)]).unwrap_err();
        assert_eq!(e.code, code::BLOCK_NUMBER_ORDER);
        assert_eq!(e.message, "block numbers must be in order: 144 <= 154");
        let e = plan(&[block(None, Some(0x228)), block(None, Some(0x227))]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                code::BLOCK_TIMESTAMP_ORDER,
                "block timestamps must be in order: 551 <= 552"
            )
        );
        // ethSimulate-block-timestamp-auto-increment: a block without a time is 12 s later.
        let e = plan(&[
            block(None, Some(0x227)),
            block(None, None),
            block(None, Some(0x228)),
        ])
        .unwrap_err();
        assert_eq!(e.message, "block timestamps must be in order: 552 <= 563");
        let e = plan(&[block(Some(0x36 + 257), None)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (code::CLIENT_LIMIT, "too many blocks")
        );
        assert!(plan(&[block(Some(0x36 + 256), None)]).is_ok());
    }

    #[test]
    fn limits_are_geths() {
        assert_eq!(check_limits(&[]).unwrap_err().code, code::INVALID_PARAMS);
        let many = vec![SimBlock::default(); 257];
        assert_eq!(
            check_limits(&many).unwrap_err(),
            SimFault::new(code::CLIENT_LIMIT, "too many blocks")
        );
        let big = SimBlock {
            calls: vec![SimCall::default(); MAX_CALLS_PER_BLOCK + 1],
            ..SimBlock::default()
        };
        assert_eq!(
            check_limits(&[big]).unwrap_err().message,
            "too many calls in block: 5001 > 5000"
        );
    }

    /// The unsigned transactions of execution-apis' `ethSimulate-simple-validation-fulltx`:
    /// their hashes are geth's.
    #[test]
    fn transactions_hash_as_geths() {
        let tx = SimTx {
            kind: 2,
            hash: B256::ZERO,
            from: Address::repeat_byte(0),
            to: Some(
                "0xc100000000000000000000000000000000000000"
                    .parse()
                    .unwrap(),
            ),
            nonce: 0,
            gas: 0x2faf080,
            gas_price: None,
            max_fee_per_gas: Some(U256::from(0x10)),
            max_priority_fee_per_gas: Some(U256::ZERO),
            value: U256::from(0x2540be400u64),
            input: Bytes::new(),
            access_list: AccessList::default(),
            chain_id: 0xc72dd9d5e883e,
            effective_gas_price: U256::from(0xf),
        };
        assert_eq!(
            keccak256(tx.encoding()),
            "0xc2df7444d2b0604cdfaa20cad5855422b575d8d2ec02868ed9eb45eb20490f66"
                .parse::<B256>()
                .unwrap()
        );
    }
}
