//! `eth_simulateV1`'s request and answer as chaintrace holds them, its limits and its error
//! codes.

use alloy_consensus::Header;
use alloy_eips::eip2930::AccessList;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bytes, B256, U256};

use crate::replay::overrides::{BlockOverrides, StateOverride};
use crate::source::error::SourceError;
use crate::trace::sim_logs::SimLog;

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
    pub fn new(code: i64, message: impl Into<String>) -> SimFault {
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
    Failed(#[from] crate::replay::Error),
}

impl From<SourceError> for SimError {
    fn from(e: SourceError) -> Self {
        SimError::Failed(e.into())
    }
}

impl From<crate::replay::driver::DriveError> for SimError {
    fn from(e: crate::replay::driver::DriveError) -> Self {
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
