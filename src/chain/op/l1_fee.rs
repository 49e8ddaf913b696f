//! The OP-stack L1 data fee and operator fee, as op-geth computes them.
//!
//! A non-deposit transaction on an OP-stack chain pays, besides `gasUsed × gasPrice`, an L1 data
//! fee for the bytes its batch occupies on L1 (the L1 fee vault receives it) and, from Isthmus,
//! an operator fee (the operator fee vault). Both are charged upfront with the gas
//! (`core/state_transition.go` `buyGas`: the L1 fee of the encoded transaction and the operator
//! fee of the gas limit) and settled after execution (`innerExecute`: the operator fee of the
//! unused gas returned to the sender by `refundIsthmusOperatorCost`).
//!
//! The parameters live in the L1Block predeploy, written by each block's first deposit (the L1
//! attributes transaction): [`L1BlockInfo::from_storage`] reads its slots,
//! [`L1BlockInfo::from_calldata`] parses that deposit's input. Every rule below follows op-geth's
//! `core/types/rollup_cost.go`; a function named in a comment is from that file unless another
//! is given. Amounts that op-geth keeps in `big.Int` are computed here in 1024-bit integers and
//! narrowed at the end, so that they are exact wherever op-geth's fit in 256 bits (where they
//! do not, op-geth fails the transaction and these saturate at `U256::MAX`); where every step
//! fits in 256 bits, as with any real parameters, they are computed in 256 bits (the same
//! integers, faster), and the operator fee in 128.

use alloy_primitives::aliases::U1024;
use alloy_primitives::U256;

pub use super::fastlz::flz_compress_len;
use super::fork::{OpFork, OpRules};

/// `setL1BlockValues` (Bedrock to the first Ecotone block): 8 ABI words after the selector.
pub const BEDROCK_L1_ATTRIBUTES_SELECTOR: [u8; 4] = [0x01, 0x5d, 0x8e, 0xb9];
/// `setL1BlockValuesEcotone` (Ecotone to the first Isthmus block): 164 packed bytes.
pub const ECOTONE_L1_ATTRIBUTES_SELECTOR: [u8; 4] = [0x44, 0x0a, 0x5e, 0x20];
/// `setL1BlockValuesIsthmus`: Ecotone's fields and the operator fee parameters, 176 bytes.
pub const ISTHMUS_L1_ATTRIBUTES_SELECTOR: [u8; 4] = [0x09, 0x89, 0x99, 0xbe];
/// `setL1BlockValuesJovian`: Isthmus's fields and the DA footprint gas scalar, 178 bytes.
pub const JOVIAN_L1_ATTRIBUTES_SELECTOR: [u8; 4] = [0x3d, 0xb6, 0xbe, 0x2b];

/// Length of Ecotone's packed L1 attributes calldata (`extractL1GasParamsPostEcotone`).
pub const ECOTONE_L1_ATTRIBUTES_LEN: usize = 164;
/// `IsthmusL1AttributesLen`.
pub const ISTHMUS_L1_ATTRIBUTES_LEN: usize = 176;
/// `JovianL1AttributesLen`.
pub const JOVIAN_L1_ATTRIBUTES_LEN: usize = 178;
/// Bedrock's calldata: the selector and 8 words (`extractL1GasParamsPreEcotone`).
pub const BEDROCK_L1_ATTRIBUTES_MIN_LEN: usize = 4 + 32 * 8;

/// L1Block slot of the L1 base fee (`L1BaseFeeSlot`).
pub const L1_BASE_FEE_SLOT: U256 = U256::from_limbs([1, 0, 0, 0]);
/// L1Block slot packing, from Ecotone, the base fee scalar at bytes `[16, 20)` and the blob
/// base fee scalar at `[20, 24)` beside the sequence number at `[24, 32)` (`L1FeeScalarsSlot`).
pub const L1_FEE_SCALARS_SLOT: U256 = U256::from_limbs([3, 0, 0, 0]);
/// L1Block slot of the pre-Ecotone fee overhead (`OverheadSlot`).
pub const L1_FEE_OVERHEAD_SLOT: U256 = U256::from_limbs([5, 0, 0, 0]);
/// L1Block slot of the pre-Ecotone fee scalar (`ScalarSlot`).
pub const L1_FEE_SCALAR_SLOT: U256 = U256::from_limbs([6, 0, 0, 0]);
/// L1Block slot of the L1 blob base fee, from Ecotone (`L1BlobBaseFeeSlot`).
pub const L1_BLOB_BASE_FEE_SLOT: U256 = U256::from_limbs([7, 0, 0, 0]);
/// L1Block slot packing, from Isthmus, the operator fee scalar at bytes `[20, 24)` and the
/// operator fee constant at `[24, 32)` (`OperatorFeeParamsSlot`); from Jovian also the DA
/// footprint gas scalar at `[18, 20)` (op-revm `constants.rs`: `DA_FOOTPRINT_GAS_SCALAR_SLOT`).
pub const OPERATOR_FEE_PARAMS_SLOT: U256 = U256::from_limbs([8, 0, 0, 0]);

/// Calldata gas of a zero byte and of a non-zero byte (EIP-2028), the units of the Bedrock and
/// Ecotone size estimates.
const ZERO_BYTE_GAS: u64 = 4;
const NON_ZERO_BYTE_GAS: u64 = 16;
/// Pre-Regolith, 68 non-zero bytes were added for the signature the batch did not yet carry.
const BEDROCK_SIGNATURE_PADDING: u64 = 68;
/// Fjord's linear regression from FastLZ size to batch size, scaled by 1e6 (`L1CostIntercept`,
/// `L1CostFastlzCoef`, `MinTransactionSizeScaled`).
const FJORD_INTERCEPT: i128 = -42_585_600;
const FJORD_FASTLZ_COEF: i128 = 836_500;
const FJORD_MIN_TX_SIZE_SCALED: i128 = 100 * 1_000_000;

/// Which of op-geth's L1 cost functions prices a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1CostFunction {
    /// `newL1CostFuncBedrockHelper`: `(calldataGas + overhead) × l1BaseFee × scalar / 1e6`,
    /// with 68 more non-zero bytes before Regolith.
    Bedrock,
    /// `newL1CostFuncEcotone`: `calldataGas × (16·l1BaseFee·baseFeeScalar +
    /// blobBaseFee·blobBaseFeeScalar) / 16e6`.
    Ecotone,
    /// `NewL1CostFuncFjord`: the FastLZ size estimate × the same per-byte price / 1e12.
    Fjord,
}

/// The L1 fee parameters of one L2 block, as the L1Block predeploy holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct L1BlockInfo {
    /// The L1 origin's base fee (slot 1; `l1GasPrice` in receipts).
    pub l1_base_fee: U256,
    /// The fee overhead, in L1 gas (slot 5); used by the Bedrock cost function only.
    pub l1_fee_overhead: U256,
    /// The fee scalar, 6 decimals (slot 6); used by the Bedrock cost function only.
    pub l1_fee_scalar: U256,
    /// The L1 origin's blob base fee (slot 7), from Ecotone.
    pub l1_blob_base_fee: U256,
    /// From Ecotone (slot 3, bytes `[16, 20)`).
    pub base_fee_scalar: u32,
    /// From Ecotone (slot 3, bytes `[20, 24)`).
    pub blob_base_fee_scalar: u32,
    /// From Isthmus (slot 8, bytes `[20, 24)`).
    pub operator_fee_scalar: u32,
    /// From Isthmus (slot 8, bytes `[24, 32)`).
    pub operator_fee_constant: u64,
    /// From Jovian (slot 8, bytes `[18, 20)`): gas charged per byte of estimated DA size toward
    /// the block's DA footprint (`blobGasUsed`).
    pub da_footprint_gas_scalar: u16,
    /// The cost function, when the source fixed it: the L1 attributes calldata does, by its
    /// selector (`extractL1GasParams`). `None` chooses by the fork and the fields as
    /// `NewL1CostFunc` does with the L1Block storage: see [`L1BlockInfo::cost_function_for`].
    pub cost_function: Option<L1CostFunction>,
}

/// Why an L1 attributes calldata cannot be read; the texts are op-geth's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum L1InfoError {
    #[error("expected at least {want} L1 info bytes, got {got}")]
    TooShort { want: usize, got: usize },
    #[error("expected {want} L1 info bytes, got {got}")]
    WrongLength { want: usize, got: usize },
    #[error("L1 attributes transaction data too short for DA footprint gas scalar: {0}")]
    NoDaFootprintGasScalar(usize),
    #[error("L1 attributes transaction data does not have Jovian selector")]
    NotJovian,
}

/// What op-geth caches of a transaction to price its data (`RollupCostData`): its encoding's
/// zero and non-zero bytes and FastLZ-compressed length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollupCostData {
    pub zeroes: u64,
    pub ones: u64,
    pub fastlz_size: u64,
}

impl RollupCostData {
    /// The cost data of a byte string (`NewRollupCostData`).
    pub fn new(data: &[u8]) -> RollupCostData {
        // Counted in bytes, 255 at a time, which vectorises (a `filter().count()` does not).
        let zeroes = data
            .chunks(255)
            .map(|c| u64::from(c.iter().map(|&b| u8::from(b == 0)).sum::<u8>()))
            .sum::<u64>();
        RollupCostData {
            zeroes,
            ones: data.len() as u64 - zeroes,
            fastlz_size: u64::from(flz_compress_len(data)),
        }
    }

    /// The cost data of a transaction in its binary (EIP-2718) encoding: empty for a deposit
    /// (type `0x7e`), which pays no data fee (`Transaction.RollupCostData`).
    pub fn of_tx(encoded: &[u8]) -> RollupCostData {
        if encoded.first() == Some(&DEPOSIT_TX_TYPE) {
            RollupCostData::default()
        } else {
            RollupCostData::new(encoded)
        }
    }

    /// Fjord's estimate of the transaction's size in its batch, scaled by 1e6:
    /// `max(100e6, -42_585_600 + 836_500 × fastlzSize)` (`estimatedDASizeScaled`).
    pub fn estimated_da_size_scaled(&self) -> u128 {
        let linear = FJORD_INTERCEPT + FJORD_FASTLZ_COEF * i128::from(self.fastlz_size);
        linear.max(FJORD_MIN_TX_SIZE_SCALED) as u128
    }

    /// Fjord's estimate in bytes (`EstimatedDASize`, truncated to 64 bits as its `Uint64`).
    pub fn estimated_da_size(&self) -> u64 {
        (self.estimated_da_size_scaled() / 1_000_000) as u64
    }

    /// Calldata gas of the bytes: 4 per zero, 16 per non-zero (`bedrockCalldataGasUsed`).
    fn calldata_gas(&self) -> u64 {
        self.zeroes
            .wrapping_mul(ZERO_BYTE_GAS)
            .wrapping_add(self.ones.wrapping_mul(NON_ZERO_BYTE_GAS))
    }
}

/// The EIP-2718 type byte of a deposit transaction (`source/deposit.rs` decodes them).
pub const DEPOSIT_TX_TYPE: u8 = 0x7e;

/// A transaction's L1 data fee and the L1 gas its receipt reports (`l1Fee`, `l1GasUsed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L1Cost {
    pub fee: U256,
    pub gas_used: U256,
}

fn wide(v: U256) -> U1024 {
    U1024::from(v)
}

fn narrow(v: U1024) -> U256 {
    v.saturating_to()
}

fn word(bytes: &[u8]) -> U256 {
    U256::from_be_slice(bytes)
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().expect("4 bytes"))
}

fn be_u64(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes.try_into().expect("8 bytes"))
}

impl L1BlockInfo {
    /// Reads the L1Block predeploy's storage (`0x4200…0015`) through `read_slot`, the slots
    /// op-geth reads for a block under `rules` and no other: `NewL1CostFunc` reads slots 1, 5
    /// and 6 before Ecotone; 1, 3 and 7 from Ecotone, and 5 and 6 as well when the Ecotone
    /// scalars and the blob base fee are all zero (the first Ecotone block, priced by the Bedrock
    /// function); `NewOperatorCostFunc` reads slot 8 from Isthmus. The DA footprint gas scalar
    /// is read from slot 8 from Jovian as op-revm does (op-geth takes it from the calldata).
    ///
    /// The state must be the one after the block's deposits, just before its first non-deposit
    /// transaction: op-geth reads the slots at the first transaction it prices, once per block,
    /// after the L1 attributes deposit has written them ("consensus critical", `NewL1CostFunc`).
    pub fn from_storage(rules: impl Into<OpRules>, read_slot: impl Fn(U256) -> U256) -> Self {
        let rules = rules.into();
        let mut info = L1BlockInfo {
            l1_base_fee: read_slot(L1_BASE_FEE_SLOT),
            ..L1BlockInfo::default()
        };
        let bedrock_params = if rules.is(OpFork::Ecotone) {
            info.l1_blob_base_fee = read_slot(L1_BLOB_BASE_FEE_SLOT);
            let scalars = read_slot(L1_FEE_SCALARS_SLOT).to_be_bytes::<32>();
            info.base_fee_scalar = be_u32(&scalars[16..20]);
            info.blob_base_fee_scalar = be_u32(&scalars[20..24]);
            info.ecotone_params_unset()
        } else {
            true
        };
        if bedrock_params {
            info.l1_fee_overhead = read_slot(L1_FEE_OVERHEAD_SLOT);
            info.l1_fee_scalar = read_slot(L1_FEE_SCALAR_SLOT);
        }
        if rules.is(OpFork::Isthmus) {
            let params = read_slot(OPERATOR_FEE_PARAMS_SLOT).to_be_bytes::<32>();
            info.operator_fee_scalar = be_u32(&params[20..24]);
            info.operator_fee_constant = be_u64(&params[24..32]);
            if rules.is(OpFork::Jovian) {
                info.da_footprint_gas_scalar = u16::from_be_bytes([params[18], params[19]]);
            }
        }
        info
    }

    /// Parses the L1 attributes deposit's calldata as op-geth does to fill receipts
    /// (`extractL1GasParams`, and `ExtractDAFootprintGasScalar` from Jovian):
    ///
    /// - from Isthmus, any selector but Ecotone's: `setL1BlockValuesIsthmus`' layout, at least
    ///   176 bytes (Jovian's 178 read alike), priced by the Fjord function whether or not Fjord
    ///   is active; Ecotone's selector is the first Isthmus block, read as below;
    /// - from Ecotone, any selector but Bedrock's: exactly 164 bytes, priced by Fjord's function
    ///   when Fjord is active, else Ecotone's; Bedrock's selector is the first Ecotone block;
    /// - otherwise `setL1BlockValues`: at least 260 bytes (more is ignored), base fee in word 2,
    ///   overhead in word 6, scalar in word 7, priced by the Bedrock function.
    ///
    /// From Jovian the DA footprint gas scalar is the big-endian `uint16` at bytes `[176, 178)`
    /// and the selector must be Jovian's, except for Isthmus' exact 176 bytes: the Jovian
    /// activation block, which carries no user transaction and whose DA footprint is 0
    /// (`CalcDAFootprint`); the scalar is then 0.
    pub fn from_calldata(rules: impl Into<OpRules>, data: &[u8]) -> Result<Self, L1InfoError> {
        let rules = rules.into();
        let selector = data.get(..4);
        let mut info = if rules.is(OpFork::Isthmus)
            && selector.is_some_and(|s| s != ECOTONE_L1_ATTRIBUTES_SELECTOR)
        {
            if data.len() < ISTHMUS_L1_ATTRIBUTES_LEN {
                return Err(L1InfoError::TooShort {
                    want: ISTHMUS_L1_ATTRIBUTES_LEN,
                    got: data.len(),
                });
            }
            let mut info = Self::ecotone_fields(data, L1CostFunction::Fjord);
            info.operator_fee_scalar = be_u32(&data[164..168]);
            info.operator_fee_constant = be_u64(&data[168..176]);
            info
        } else if rules.is(OpFork::Ecotone)
            && selector.is_some_and(|s| s != BEDROCK_L1_ATTRIBUTES_SELECTOR)
        {
            if data.len() != ECOTONE_L1_ATTRIBUTES_LEN {
                return Err(L1InfoError::WrongLength {
                    want: ECOTONE_L1_ATTRIBUTES_LEN,
                    got: data.len(),
                });
            }
            let function = if rules.is(OpFork::Fjord) {
                L1CostFunction::Fjord
            } else {
                L1CostFunction::Ecotone
            };
            Self::ecotone_fields(data, function)
        } else {
            if data.len() < BEDROCK_L1_ATTRIBUTES_MIN_LEN {
                return Err(L1InfoError::TooShort {
                    want: BEDROCK_L1_ATTRIBUTES_MIN_LEN,
                    got: data.len(),
                });
            }
            let arg = |i: usize| word(&data[4 + 32 * i..4 + 32 * (i + 1)]);
            L1BlockInfo {
                l1_base_fee: arg(2),
                l1_fee_overhead: arg(6),
                l1_fee_scalar: arg(7),
                cost_function: Some(L1CostFunction::Bedrock),
                ..L1BlockInfo::default()
            }
        };
        if rules.is(OpFork::Jovian) && data.len() != ISTHMUS_L1_ATTRIBUTES_LEN {
            info.da_footprint_gas_scalar = extract_da_footprint_gas_scalar(data)?;
        }
        Ok(info)
    }

    /// The fields Ecotone's packed calldata and its successors share:
    /// `[4, 8)` base fee scalar, `[8, 12)` blob base fee scalar, `[12, 36)` sequence number,
    /// timestamp and L1 block number, `[36, 68)` base fee, `[68, 100)` blob base fee,
    /// `[100, 164)` block hash and batcher hash.
    fn ecotone_fields(data: &[u8], function: L1CostFunction) -> L1BlockInfo {
        L1BlockInfo {
            l1_base_fee: word(&data[36..68]),
            l1_blob_base_fee: word(&data[68..100]),
            base_fee_scalar: be_u32(&data[4..8]),
            blob_base_fee_scalar: be_u32(&data[8..12]),
            cost_function: Some(function),
            ..L1BlockInfo::default()
        }
    }

    /// Whether the Ecotone parameters are all unset: the blob base fee and both scalars zero,
    /// which `NewL1CostFunc` takes for the first Ecotone block (the L1Block contract is upgraded
    /// in that block, after its attributes deposit ran the Bedrock setter).
    fn ecotone_params_unset(&self) -> bool {
        self.l1_blob_base_fee.is_zero()
            && self.base_fee_scalar == 0
            && self.blob_base_fee_scalar == 0
    }

    /// The cost function for a block under `rules`: the one the calldata fixed, else
    /// `NewL1CostFunc`'s choice — Bedrock's before Ecotone and in the first Ecotone block (even
    /// when Fjord activates with it: that check comes first), then Fjord's from Fjord, else
    /// Ecotone's.
    pub fn cost_function_for(&self, rules: impl Into<OpRules>) -> L1CostFunction {
        let rules = rules.into();
        if let Some(f) = self.cost_function {
            return f;
        }
        if !rules.is(OpFork::Ecotone) || self.ecotone_params_unset() {
            L1CostFunction::Bedrock
        } else if rules.is(OpFork::Fjord) {
            L1CostFunction::Fjord
        } else {
            L1CostFunction::Ecotone
        }
    }

    /// `l1BaseFee × 16 × baseFeeScalar + l1BlobBaseFee × blobBaseFeeScalar`: the price of a
    /// compressed byte scaled by 1e6, shared by the Ecotone and Fjord functions.
    fn l1_fee_scaled(&self) -> U1024 {
        wide(self.l1_base_fee) * U1024::from(NON_ZERO_BYTE_GAS) * U1024::from(self.base_fee_scalar)
            + wide(self.l1_blob_base_fee) * U1024::from(self.blob_base_fee_scalar)
    }

    /// [`Self::l1_fee_scaled`] in 256 bits, `None` when it does not fit.
    fn l1_fee_scaled_narrow(&self) -> Option<U256> {
        let per_byte = NON_ZERO_BYTE_GAS * u64::from(self.base_fee_scalar);
        self.l1_base_fee
            .checked_mul(U256::from(per_byte))?
            .checked_add(
                self.l1_blob_base_fee
                    .checked_mul(U256::from(self.blob_base_fee_scalar))?,
            )
    }
}

/// `ExtractDAFootprintGasScalar`: the big-endian `uint16` at bytes `[176, 178)` of Jovian's
/// L1 attributes calldata.
pub fn extract_da_footprint_gas_scalar(data: &[u8]) -> Result<u16, L1InfoError> {
    if data.len() < JOVIAN_L1_ATTRIBUTES_LEN {
        return Err(L1InfoError::NoDaFootprintGasScalar(data.len()));
    }
    if data[..4] != JOVIAN_L1_ATTRIBUTES_SELECTOR {
        return Err(L1InfoError::NotJovian);
    }
    Ok(u16::from_be_bytes([data[176], data[177]]))
}

/// The L1 data fee and L1 gas of a transaction's cost data; `None` for empty cost data (a
/// deposit, or a call that is not a transaction), which op-geth does not charge
/// (`NewL1CostFunc`, `newL1CostFuncBedrockHelper`).
pub fn l1_cost(
    info: &L1BlockInfo,
    rules: impl Into<OpRules>,
    data: &RollupCostData,
) -> Option<L1Cost> {
    if *data == RollupCostData::default() {
        return None;
    }
    let rules = rules.into();
    let function = info.cost_function_for(rules);
    // In 256 bits where every step fits (real parameters always do), else in 1024 bits: the
    // same integers either way, the narrower arithmetic only the faster.
    let (fee, gas_used) = l1_cost_narrow(info, rules, function, data)
        .unwrap_or_else(|| l1_cost_wide(info, rules, function, data));
    Some(L1Cost { fee, gas_used })
}

/// Regolith dropped the 68 bytes of signature padding (`newL1CostFuncBedrockHelper`): the
/// Bedrock function's calldata gas.
fn bedrock_calldata_gas(rules: OpRules, data: &RollupCostData) -> u64 {
    let padding = if rules.is(OpFork::Regolith) {
        0
    } else {
        BEDROCK_SIGNATURE_PADDING
    };
    data.zeroes.wrapping_mul(ZERO_BYTE_GAS).wrapping_add(
        data.ones
            .wrapping_add(padding)
            .wrapping_mul(NON_ZERO_BYTE_GAS),
    )
}

/// [`l1_cost`]'s fee and gas in 256-bit arithmetic; `None` when a product or sum does not fit,
/// and [`l1_cost_wide`] must compute them.
pub(super) fn l1_cost_narrow(
    info: &L1BlockInfo,
    rules: OpRules,
    function: L1CostFunction,
    data: &RollupCostData,
) -> Option<(U256, U256)> {
    match function {
        L1CostFunction::Bedrock => {
            let gas =
                U256::from(bedrock_calldata_gas(rules, data)).checked_add(info.l1_fee_overhead)?;
            let fee = gas
                .checked_mul(info.l1_base_fee)?
                .checked_mul(info.l1_fee_scalar)?
                / U256::from(1_000_000u64);
            Some((fee, gas))
        }
        L1CostFunction::Ecotone => {
            let gas = U256::from(data.calldata_gas());
            let fee = mul_div(info.l1_fee_scaled_narrow()?, gas, 16_000_000)?;
            Some((fee, gas))
        }
        L1CostFunction::Fjord => {
            let size = data.estimated_da_size_scaled();
            let fee = mul_div(
                info.l1_fee_scaled_narrow()?,
                U256::from(size),
                1_000_000_000_000,
            )?;
            // At most 836,500 × 2^64 × 16: no overflow in 128 bits.
            let gas = U256::from(div(size * u128::from(NON_ZERO_BYTE_GAS), 1_000_000));
            Some((fee, gas))
        }
    }
}

/// `a × b / d` in 256 bits, `None` when the product does not fit; in 128 bits where it fits
/// there (any real fee), whose division is the cheaper.
fn mul_div(a: U256, b: U256, d: u64) -> Option<U256> {
    if let (Ok(a), Ok(b)) = (u128::try_from(a), u128::try_from(b)) {
        if let Some(p) = a.checked_mul(b) {
            return Some(U256::from(div(p, d)));
        }
    }
    Some(a.checked_mul(b)? / U256::from(d))
}

/// `n / d`, by a 64-bit division where `n` fits in 64 bits (a 128-bit one is a library call).
fn div(n: u128, d: u64) -> u128 {
    match u64::try_from(n) {
        Ok(n) => u128::from(n / d),
        Err(_) => n / u128::from(d),
    }
}

/// [`l1_cost`]'s fee and gas in 1024-bit arithmetic, exact wherever op-geth's `big.Int`s fit
/// in 256 bits, saturated at `U256::MAX` where they do not.
pub(super) fn l1_cost_wide(
    info: &L1BlockInfo,
    rules: OpRules,
    function: L1CostFunction,
    data: &RollupCostData,
) -> (U256, U256) {
    let (fee, gas_used) = match function {
        L1CostFunction::Bedrock => {
            let gas = U1024::from(bedrock_calldata_gas(rules, data)) + wide(info.l1_fee_overhead);
            let fee =
                gas * wide(info.l1_base_fee) * wide(info.l1_fee_scalar) / U1024::from(1_000_000u64);
            (fee, gas)
        }
        L1CostFunction::Ecotone => {
            let gas = U1024::from(data.calldata_gas());
            let fee = info.l1_fee_scaled() * gas / U1024::from(16_000_000u64);
            (fee, gas)
        }
        L1CostFunction::Fjord => {
            let size = U1024::from(data.estimated_da_size_scaled());
            let fee = size * info.l1_fee_scaled() / U1024::from(1_000_000_000_000u64);
            let gas = size * U1024::from(NON_ZERO_BYTE_GAS) / U1024::from(1_000_000u64);
            (fee, gas)
        }
    };
    (narrow(fee), narrow(gas_used))
}

/// The L1 data fee of a transaction in its binary (EIP-2718) encoding; 0 for a deposit.
pub fn l1_data_fee(info: &L1BlockInfo, rules: impl Into<OpRules>, encoded_tx: &[u8]) -> U256 {
    l1_cost(info, rules, &RollupCostData::of_tx(encoded_tx)).map_or(U256::ZERO, |c| c.fee)
}

/// The L1 gas a transaction's receipt reports (`l1GasUsed`); 0 for a deposit, which has none.
pub fn l1_gas_used(info: &L1BlockInfo, rules: impl Into<OpRules>, encoded_tx: &[u8]) -> U256 {
    l1_cost(info, rules, &RollupCostData::of_tx(encoded_tx)).map_or(U256::ZERO, |c| c.gas_used)
}

/// The operator fee for `gas` (`NewOperatorCostFunc`): 0 before Isthmus;
/// `gas × operatorFeeScalar / 1e6 + operatorFeeConstant` from Isthmus
/// (`newOperatorCostFuncIsthmus`); `gas × operatorFeeScalar × 100 + operatorFeeConstant` from
/// Jovian (`newOperatorCostFuncOperatorFeeFix`). op-geth returns 0 without the formula when slot
/// 8 is all zero, which the formula gives too.
///
/// `buyGas` charges it for the gas limit, for every non-deposit transaction from Isthmus.
pub fn operator_fee(info: &L1BlockInfo, rules: impl Into<OpRules>, gas: u64) -> U256 {
    let rules = rules.into();
    if !rules.is(OpFork::Isthmus) {
        return U256::ZERO;
    }
    // At most 2^64 × 2^32 × 100 + 2^64: every step fits in 128 bits.
    let product = u128::from(gas) * u128::from(info.operator_fee_scalar);
    let variable = if rules.is(OpFork::Jovian) {
        product * 100
    } else {
        div(product, 1_000_000)
    };
    U256::from(variable + u128::from(info.operator_fee_constant))
}

/// What a non-deposit transaction gets back of the operator fee after execution
/// (`core/state_transition.go` `refundIsthmusOperatorCost`): the fee of its gas limit less the
/// fee of the gas it used; 0 before Isthmus. `gas_used` is the transaction's gas after refunds
/// and after the EIP-7623 calldata floor (`st.gasUsed()` once `returnGas` has run); the operator
/// fee vault is credited `operator_fee(gas_used)`.
pub fn operator_fee_refund(
    info: &L1BlockInfo,
    rules: impl Into<OpRules>,
    gas_limit: u64,
    gas_used: u64,
) -> U256 {
    let rules = rules.into();
    operator_fee(info, rules, gas_limit).saturating_sub(operator_fee(info, rules, gas_used))
}

/// What a transaction pays upfront beyond its gas (`NewTotalRollupCostFunc`, and `buyGas`):
/// the L1 data fee of its encoding and the operator fee of its gas limit.
pub fn total_rollup_cost(
    info: &L1BlockInfo,
    rules: impl Into<OpRules>,
    encoded_tx: &[u8],
    gas_limit: u64,
) -> U256 {
    let rules = rules.into();
    if encoded_tx.first() == Some(&DEPOSIT_TX_TYPE) {
        // `preCheck` returns before `buyGas` for deposits: neither fee is charged.
        return U256::ZERO;
    }
    l1_data_fee(info, rules, encoded_tx).saturating_add(operator_fee(info, rules, gas_limit))
}

/// A transaction's share of its block's DA footprint from Jovian (its receipt's `blobGasUsed`,
/// `deriveOPStackFields`): `daFootprintGasScalar × estimatedDASize`, in 64-bit arithmetic that
/// wraps as Go's does; 0 for a deposit.
pub fn da_footprint_gas(info: &L1BlockInfo, encoded_tx: &[u8]) -> u64 {
    let data = RollupCostData::of_tx(encoded_tx);
    if data == RollupCostData::default() {
        return 0;
    }
    u64::from(info.da_footprint_gas_scalar).wrapping_mul(data.estimated_da_size())
}
