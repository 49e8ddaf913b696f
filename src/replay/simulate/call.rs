//! One simulated call, as geth's simulator applies it: its defaults, its transaction, the state
//! transition's checks in their order with geth's codes and texts, its run under the
//! simulator's tracer; and the blocks' system calls.

use alloy_primitives::{keccak256, Address, Bytes, Log, B256, U256};
use revm::context_interface::cfg::gas::calculate_initial_tx_gas_for_tx;
use revm::primitives::hardfork::SpecId;
use revm::{Database, DatabaseCommit, MainBuilder, SystemCallEvm};

use super::types::{code, CallFailure, SimCall, SimCallResult, SimFault, SimTx};
use crate::replay::traced::SimRun;
use crate::replay::{EvmCtx, EvmEnv, ReplayError, ReplayTx};
use crate::source::ReplayDb;
use crate::trace::errors::FrameError;
use crate::trace::sim_logs::SimLogTracer;

/// A Go `Address.Hex()`: EIP-55 checksummed.
fn hex_address(a: Address) -> String {
    a.to_checksum(None)
}

/// The order of work within one pass: what a call needs besides itself.
pub(super) struct CallCtx<'a> {
    pub env: &'a EvmEnv,
    pub chain_id: u64,
    pub validation: bool,
    pub base_fee: Option<u64>,
}

/// How a call ended: its result, its transaction and its receipt's encoding parts.
pub(super) struct Ran {
    pub result: SimCallResult,
    pub tx: SimTx,
    pub logs: Vec<Log>,
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
pub(super) fn run_call(
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
    let (run, outcome) =
        match crate::replay::traced::run(db, cx.env, &replay, tracer, Some(index as u64)) {
            Ok(r) => r,
            // Anything revm still refuses: geth's default code for a message it cannot apply.
            Err(ReplayError::Invalid { msg, .. }) => {
                return Ok(Err(refused(code::INTERNAL, msg, gas)))
            }
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
pub(super) const BEACON_ROOTS: Address =
    alloy_primitives::address!("000F3df6D732807Ef1319fB7B8bB8522d0Beac02");
pub(super) const HISTORY_STORAGE: Address =
    alloy_primitives::address!("0000F90827F1C53a10cb7A02335B175320002935");
/// EIP-7002's withdrawal and EIP-7251's consolidation request contracts.
pub(super) const WITHDRAWAL_REQUESTS: Address =
    alloy_primitives::address!("00000961Ef480Eb55e80D19ad83579A64c007002");
pub(super) const CONSOLIDATION_REQUESTS: Address =
    alloy_primitives::address!("0000BBdDc7CE488642fb579F8B00f3a590007251");

/// A system call (from `0xff…fe`, no fee, no nonce) to `to` with `data`, committed; its output.
pub(super) fn system_call(
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
pub(super) fn has_code(db: &mut ReplayDb<'_>, a: Address) -> Result<bool, ReplayError> {
    let info = db
        .basic(a)
        .map_err(|e| ReplayError::BadTransaction(e.to_string()))?;
    Ok(info.is_some_and(|i| !i.is_empty_code_hash()))
}
