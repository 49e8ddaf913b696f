//! What geth reports for a step that fails before its opcode executes: the step's cost and the
//! error text.
//!
//! geth's interpreter checks the stack, charges the constant gas, sizes memory and computes the
//! dynamic gas before the opcode runs. When one of these fails, the step is reported (struct
//! logger `gasCost`/`error`, JS `getCost()`/`getError()`) with the cost computed so far — the
//! constant gas plus whatever the dynamic gas function returned — and the frame fails with the
//! same error: `out of gas`, `gas uint64 overflow` (memory size), or `out of gas: <reason>`
//! when the dynamic gas function itself refused (`write protection` since v1.17,
//! `not enough gas for reentrancy sentry`, an out-of-gas charge inside a CALL's gas function…).
//!
//! revm halts the same opcode but says neither what it would have cost nor why in geth's words,
//! so this module recomputes it with geth v1.17's gas functions (core/vm/gas_table.go,
//! operations_acl.go) from the state before the opcode. Only failing steps come here.

use alloy_primitives::{Address, Bytes, U256};
use revm::bytecode::opcode::{
    BALANCE, CALL, CALLCODE, CALLDATACOPY, CODECOPY, CREATE, CREATE2, DELEGATECALL, EXP,
    EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, KECCAK256, LOG0, LOG4, MCOPY, MLOAD, MSTORE, MSTORE8,
    RETURN, RETURNDATACOPY, REVERT, SELFDESTRUCT, SLOAD, SSTORE, STATICCALL,
};
use revm::interpreter::GasTable;
use revm::primitives::hardfork::SpecId;

/// The state before the failing opcode, as geth's gas functions read it.
pub trait PreOpState {
    /// Whether the address was in the access list (EIP-2929).
    fn account_warm(&mut self, a: Address) -> bool;
    /// Whether the slot was in the access list (EIP-2929).
    fn slot_warm(&mut self, a: Address, slot: U256) -> bool;
    /// The slot's current and committed (transaction-start) values.
    fn slot(&mut self, a: Address, slot: U256) -> (U256, U256);
    fn exists(&mut self, a: Address) -> bool;
    /// EIP-161 empty: no nonce, no balance, no code.
    fn empty(&mut self, a: Address) -> bool;
    fn balance(&mut self, a: Address) -> U256;
    fn code(&mut self, a: Address) -> Bytes;
}

/// The failing opcode and its frame before it ran.
pub struct FailedOp<'a> {
    pub op: u8,
    pub spec: SpecId,
    /// Gas left before the opcode.
    pub gas: u64,
    /// The top of the stack before the opcode, bottom to top: at least the items it reads.
    pub stack: &'a [U256],
    pub mem_len: usize,
    pub is_static: bool,
    pub contract: Address,
}

impl FailedOp<'_> {
    /// geth's `stack.back(i)`: the i-th item from the top.
    fn back(&self, i: usize) -> U256 {
        self.stack
            .len()
            .checked_sub(i + 1)
            .map_or(U256::ZERO, |j| self.stack[j])
    }

    fn at_least(&self, fork: SpecId) -> bool {
        self.spec.is_enabled_in(fork)
    }
}

/// Whether geth prices `op` with a dynamic gas function (whose inputs must be kept).
#[inline]
pub fn has_dynamic_gas(op: u8) -> bool {
    DYNAMIC[op as usize]
}

const DYNAMIC: [bool; 256] = {
    let mut t = [false; 256];
    let mut op = 0;
    while op < 256 {
        t[op] = matches!(
            op as u8,
            EXP | KECCAK256 | BALANCE | CALLDATACOPY | CODECOPY | EXTCODESIZE..=EXTCODEHASH | MLOAD..=SSTORE | MCOPY | LOG0..=LOG4
                | CREATE..=CREATE2 | STATICCALL | REVERT | SELFDESTRUCT
        );
        op += 1;
    }
    t
};

/// The stack items a dynamic-gas opcode reads, kept in `step` so that a failure found in
/// `step_end` (after revm popped them) can be priced. Other opcodes keep nothing. The buffer is
/// reused, so keeping allocates nothing after the first opcodes.
#[derive(Clone, Default)]
pub struct KeptStack {
    items: Vec<U256>,
}

impl KeptStack {
    pub fn keep(&mut self, op: u8, stack: &[U256]) {
        self.items.clear();
        if has_dynamic_gas(op) {
            let n = stack.len().min(7);
            self.items.extend_from_slice(&stack[stack.len() - n..]);
        }
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Bottom to top.
    pub fn items(&self) -> &[U256] {
        &self.items
    }
}

/// geth's constant gas for `op`: revm's static cost, except where geth splits the price
/// differently between constant and dynamic gas.
pub fn constant_gas(op: u8, spec: SpecId, revm_table: &GasTable) -> u64 {
    let berlin = spec.is_enabled_in(SpecId::BERLIN);
    match op {
        // geth prices EXP, LOGn and SSTORE entirely in their dynamic gas.
        EXP | LOG0..=LOG4 | SSTORE => 0,
        SLOAD if berlin => 0,
        SELFDESTRUCT if !berlin => 0,
        _ => u64::from(revm_table[op as usize]),
    }
}

/// Why a dynamic gas function refused (geth returns 0 gas with it), in geth's words; the step
/// then fails with `out of gas: <refusal>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Refusal {
    #[error("gas uint64 overflow")]
    GasOverflow,
    #[error("out of gas")]
    OutOfGas,
    #[error("write protection")]
    WriteProtection,
    #[error("not enough gas for reentrancy sentry")]
    ReentrancySentry,
    #[error("max initcode size exceeded: code size {0} limit 49152")]
    InitcodeSize(u64),
}

fn to_word_size(size: u64) -> u64 {
    if size > u64::MAX - 31 {
        u64::MAX / 32 + 1
    } else {
        size.div_ceil(32)
    }
}

fn as_u64(v: U256) -> Option<u64> {
    u64::try_from(v).ok()
}

/// geth's `calcMemSize64`: `None` on overflow.
fn mem_size(off: U256, len: U256) -> Option<u64> {
    let len = as_u64(len)?;
    mem_size_u64(off, len)
}

fn mem_size_u64(off: U256, len: u64) -> Option<u64> {
    if len == 0 {
        return Some(0);
    }
    as_u64(off)?.checked_add(len)
}

/// The memory size the opcode needs (geth's `memorySize` functions); `Some(None)` when the
/// computation overflows, `None` for opcodes without one.
fn memory_needed(o: &FailedOp) -> Option<Option<u64>> {
    let b = |i| o.back(i);
    Some(match o.op {
        KECCAK256 | RETURN | REVERT | LOG0..=LOG4 => mem_size(b(0), b(1)),
        CALLDATACOPY | CODECOPY | RETURNDATACOPY => mem_size(b(0), b(2)),
        EXTCODECOPY => mem_size(b(1), b(3)),
        MLOAD | MSTORE => mem_size_u64(b(0), 32),
        MSTORE8 => mem_size_u64(b(0), 1),
        MCOPY => {
            let (dst, src) = (b(0), b(1));
            mem_size(dst.max(src), b(2))
        }
        CREATE | CREATE2 => mem_size(b(1), b(2)),
        CALL | CALLCODE => match (mem_size(b(5), b(6)), mem_size(b(3), b(4))) {
            (Some(x), Some(y)) => Some(x.max(y)),
            _ => None,
        },
        DELEGATECALL | STATICCALL => match (mem_size(b(4), b(5)), mem_size(b(2), b(3))) {
            (Some(x), Some(y)) => Some(x.max(y)),
            _ => None,
        },
        _ => return None,
    })
}

/// geth's `memoryGasCost`: the quadratic price of growing memory to `new_size` bytes.
fn memory_gas(mem_len: usize, new_size: u64) -> Result<u64, Refusal> {
    if new_size == 0 {
        return Ok(0);
    }
    if new_size > 0x1F_FFFF_FFE0 {
        return Err(Refusal::GasOverflow);
    }
    let fee = |words: u64| words * 3 + words * words / 512;
    let words = to_word_size(new_size);
    if words * 32 > mem_len as u64 {
        Ok(fee(words) - fee(mem_len as u64 / 32))
    } else {
        Ok(0)
    }
}

fn add(a: u64, b: u64) -> Result<u64, Refusal> {
    a.checked_add(b).ok_or(Refusal::GasOverflow)
}

fn mul(a: u64, b: u64) -> Result<u64, Refusal> {
    a.checked_mul(b).ok_or(Refusal::GasOverflow)
}

fn word_arg(v: U256) -> Result<u64, Refusal> {
    as_u64(v).ok_or(Refusal::GasOverflow)
}

/// The address in stack item `i`.
fn address_at(o: &FailedOp, i: usize) -> Address {
    Address::from_word(o.back(i).to_be_bytes::<32>().into())
}

/// geth's `callGas` (EIP-150's 63/64 rule; Go's unsigned arithmetic wraps).
fn call_gas(eip150: bool, available: u64, base: u64, requested: U256) -> Result<u64, Refusal> {
    if eip150 {
        let available = available.wrapping_sub(base);
        let gas = available - available / 64;
        match as_u64(requested) {
            Some(r) if r <= gas => return Ok(r),
            _ => return Ok(gas),
        }
    }
    word_arg(requested)
}

/// geth's `gasCallIntrinsic` and its CALLCODE/DELEGATECALL/STATICCALL siblings: memory, value
/// transfer and (CALL only) new-account gas, with `available` the gas left when it runs.
fn call_intrinsic(
    o: &FailedOp,
    st: &mut dyn PreOpState,
    mem: u64,
    available: u64,
) -> Result<u64, Refusal> {
    let memory = memory_gas(o.mem_len, mem)?;
    match o.op {
        CALL => {
            let value = !o.back(2).is_zero();
            let to = address_at(o, 1);
            if o.is_static && value {
                return Err(Refusal::WriteProtection);
            }
            let gas = add(memory, if value { 9000 } else { 0 })?;
            if available < gas {
                return Err(Refusal::OutOfGas);
            }
            let new_account = if o.at_least(SpecId::SPURIOUS_DRAGON) {
                value && st.empty(to)
            } else {
                !st.exists(to)
            };
            add(gas, if new_account { 25000 } else { 0 })
        }
        CALLCODE => add(if o.back(2).is_zero() { 0 } else { 9000 }, memory),
        _ => Ok(memory),
    }
}

/// The CALL family's dynamic gas, fork by fork.
fn call_dynamic(
    o: &FailedOp,
    st: &mut dyn PreOpState,
    mem: u64,
    avail: u64,
) -> Result<u64, Refusal> {
    let eip150 = o.at_least(SpecId::TANGERINE);
    if !o.at_least(SpecId::BERLIN) {
        let intrinsic = call_intrinsic(o, st, mem, avail)?;
        let temp = call_gas(eip150, avail, intrinsic, o.back(0))?;
        return add(intrinsic, temp);
    }
    let to = address_at(o, 1);
    if o.at_least(SpecId::PRAGUE) {
        // makeCallVariantGasCallEIP7702: each part is charged as it is priced.
        if o.op == CALL && o.is_static && !o.back(2).is_zero() {
            return Err(Refusal::WriteProtection);
        }
        let mut left = avail;
        let cold = if st.account_warm(to) { 0 } else { 2500 };
        left = left.checked_sub(cold).ok_or(Refusal::OutOfGas)?;
        let intrinsic = call_intrinsic(o, st, mem, left)?;
        left = left.checked_sub(intrinsic).ok_or(Refusal::OutOfGas)?;
        let mut delegation = 0;
        let code = st.code(to);
        if code.len() == 23 && code.starts_with(&[0xef, 0x01, 0x00]) {
            let target = Address::from_slice(&code[3..]);
            delegation = if st.account_warm(target) { 100 } else { 2600 };
            left = left.checked_sub(delegation).ok_or(Refusal::OutOfGas)?;
        }
        let temp = call_gas(true, left, 0, o.back(0))?;
        return add(add(add(cold, delegation)?, intrinsic)?, temp);
    }
    // makeCallVariantGasCallEIP2929 around makeCallVariantGasCost.
    let warm = st.account_warm(to);
    let mut left = avail;
    if !warm {
        left = left.checked_sub(2500).ok_or(Refusal::OutOfGas)?;
    }
    let intrinsic = call_intrinsic(o, st, mem, left)?;
    let temp = call_gas(eip150, left, intrinsic, o.back(0))?;
    let gas = add(intrinsic, temp)?;
    if warm {
        Ok(gas)
    } else {
        add(gas, 2500)
    }
}

/// geth's SSTORE gas (EIP-2200/2929/3529 rules; the refund side does not matter here).
fn sstore_dynamic(o: &FailedOp, st: &mut dyn PreOpState, avail: u64) -> Result<u64, Refusal> {
    if o.is_static {
        return Err(Refusal::WriteProtection);
    }
    let slot = o.back(0);
    let value = o.back(1);
    if !o.at_least(SpecId::ISTANBUL) {
        let (current, _) = st.slot(o.contract, slot);
        return Ok(if current.is_zero() && !value.is_zero() {
            20000
        } else {
            5000
        });
    }
    if avail <= 2300 {
        return Err(Refusal::ReentrancySentry);
    }
    let (current, original) = st.slot(o.contract, slot);
    if !o.at_least(SpecId::BERLIN) {
        return Ok(if current == value {
            800
        } else if original == current {
            if original.is_zero() {
                20000
            } else {
                5000
            }
        } else {
            800
        });
    }
    let cold = if st.slot_warm(o.contract, slot) {
        0
    } else {
        2100
    };
    Ok(cold
        + if current == value {
            100
        } else if original == current {
            if original.is_zero() {
                20000
            } else {
                5000 - 2100
            }
        } else {
            100
        })
}

/// geth's dynamic gas for `o` given the memory size it needs (already checked for overflow)
/// and the gas left after the constant gas; `Ok(None)` for opcodes without dynamic gas.
fn dynamic_gas(
    o: &FailedOp,
    st: &mut dyn PreOpState,
    mem: u64,
    avail: u64,
) -> Result<Option<u64>, Refusal> {
    let berlin = o.at_least(SpecId::BERLIN);
    let b = |i| o.back(i);
    let copier = |size: U256| -> Result<u64, Refusal> {
        let gas = memory_gas(o.mem_len, mem)?;
        let words = mul(to_word_size(word_arg(size)?), 3)?;
        add(gas, words)
    };
    let gas = match o.op {
        KECCAK256 => {
            let gas = memory_gas(o.mem_len, mem)?;
            add(gas, mul(to_word_size(word_arg(b(1))?), 6)?)?
        }
        CALLDATACOPY | CODECOPY | RETURNDATACOPY | MCOPY => copier(b(2))?,
        EXTCODECOPY => {
            let gas = copier(b(3))?;
            if berlin && !st.account_warm(address_at(o, 0)) {
                add(gas, 2500)?
            } else {
                gas
            }
        }
        MLOAD..=MSTORE8 | RETURN | REVERT => memory_gas(o.mem_len, mem)?,
        EXP => {
            let bytes = b(1).bit_len().div_ceil(8) as u64;
            let per = if o.at_least(SpecId::SPURIOUS_DRAGON) {
                50
            } else {
                10
            };
            10 + bytes * per
        }
        LOG0..=LOG4 => {
            let n = u64::from(o.op - LOG0);
            let size = word_arg(b(1))?;
            let gas = memory_gas(o.mem_len, mem)?;
            let gas = add(add(gas, 375)?, n * 375)?;
            add(gas, mul(size, 8)?)?
        }
        SLOAD if berlin => {
            if st.slot_warm(o.contract, b(0)) {
                100
            } else {
                2100
            }
        }
        SSTORE => sstore_dynamic(o, st, avail)?,
        BALANCE | EXTCODESIZE | EXTCODEHASH if berlin => {
            if st.account_warm(address_at(o, 0)) {
                0
            } else {
                2500
            }
        }
        CREATE | CREATE2 => {
            if o.is_static {
                return Err(Refusal::WriteProtection);
            }
            let gas = memory_gas(o.mem_len, mem)?;
            let size = word_arg(b(2))?;
            if o.at_least(SpecId::SHANGHAI) {
                if size > 49152 {
                    return Err(Refusal::InitcodeSize(size));
                }
                let per = if o.op == CREATE2 { 2 + 6 } else { 2 };
                add(gas, per * size.div_ceil(32))?
            } else if o.op == CREATE2 {
                add(gas, mul(to_word_size(size), 6)?)?
            } else {
                gas
            }
        }
        CALL | CALLCODE | DELEGATECALL | STATICCALL => call_dynamic(o, st, mem, avail)?,
        SELFDESTRUCT => {
            if o.is_static {
                return Err(Refusal::WriteProtection);
            }
            let to = address_at(o, 0);
            let transfers = !st.balance(o.contract).is_zero();
            if berlin {
                let mut gas = 0;
                if !st.account_warm(to) {
                    gas = 2600;
                    if avail < gas {
                        return Err(Refusal::OutOfGas);
                    }
                }
                if st.empty(to) && transfers {
                    gas += 25000;
                }
                gas
            } else if o.at_least(SpecId::TANGERINE) {
                let new_account = if o.at_least(SpecId::SPURIOUS_DRAGON) {
                    st.empty(to) && transfers
                } else {
                    !st.exists(to)
                };
                5000 + if new_account { 25000 } else { 0 }
            } else {
                0
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(gas))
}

/// geth's cost and error for `o`, an opcode that revm stopped with a gas failure before it
/// executed; `None` when geth's rules find enough gas (then revm's own verdict stands).
pub fn out_of_gas_step(
    o: &FailedOp,
    st: &mut dyn PreOpState,
    revm_table: &GasTable,
) -> Option<(u64, String)> {
    let constant = constant_gas(o.op, o.spec, revm_table);
    if o.gas < constant {
        return Some((constant, Refusal::OutOfGas.to_string()));
    }
    let avail = o.gas - constant;
    let mem = match memory_needed(o) {
        None => 0,
        Some(None) => return Some((constant, Refusal::GasOverflow.to_string())),
        Some(Some(size)) => match to_word_size(size).checked_mul(32) {
            Some(m) => m,
            None => return Some((constant, Refusal::GasOverflow.to_string())),
        },
    };
    match dynamic_gas(o, st, mem, avail) {
        Err(why) => Some((constant, format!("{}: {why}", Refusal::OutOfGas))),
        Ok(Some(d)) if avail < d => {
            Some((constant.saturating_add(d), Refusal::OutOfGas.to_string()))
        }
        Ok(_) => None,
    }
}

/// Whether geth's gas function for `op` refuses a static context (v1.17: SSTORE, SELFDESTRUCT,
/// CREATE, CREATE2, and CALL with value), so that the failure comes before the opcode executes.
/// LOGn and TSTORE still fail while executing (`write protection`, then `fault`).
pub fn static_refused_by_gas(op: u8) -> bool {
    matches!(op, SSTORE | SELFDESTRUCT | CREATE | CREATE2 | CALL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use revm::interpreter::instructions::gas_table_spec;

    /// An empty, all-cold world.
    struct Cold;

    impl PreOpState for Cold {
        fn account_warm(&mut self, _: Address) -> bool {
            false
        }
        fn slot_warm(&mut self, _: Address, _: U256) -> bool {
            false
        }
        fn slot(&mut self, _: Address, _: U256) -> (U256, U256) {
            (U256::ZERO, U256::ZERO)
        }
        fn exists(&mut self, _: Address) -> bool {
            false
        }
        fn empty(&mut self, _: Address) -> bool {
            true
        }
        fn balance(&mut self, _: Address) -> U256 {
            U256::ZERO
        }
        fn code(&mut self, _: Address) -> Bytes {
            Bytes::new()
        }
    }

    fn step(op: u8, gas: u64, stack: &[u64], is_static: bool) -> Option<(u64, String)> {
        let stack: Vec<U256> = stack.iter().map(|v| U256::from(*v)).collect();
        let o = FailedOp {
            op,
            spec: SpecId::CANCUN,
            gas,
            stack: &stack,
            mem_len: 0,
            is_static,
            contract: Address::ZERO,
        };
        out_of_gas_step(&o, &mut Cold, &gas_table_spec(SpecId::CANCUN))
    }

    #[test]
    fn memory_expansion_cost_is_reported_with_the_constant_part() {
        // MSTORE at offset 0x1000 (stack: value, offset on top): 129 words of memory.
        let words = 0x1020u64 / 32;
        let fee = words * 3 + words * words / 512;
        assert_eq!(
            step(MSTORE, 100, &[1, 0x1000], false),
            Some((3 + fee, "out of gas".into()))
        );
    }

    #[test]
    fn an_overflowing_memory_offset_is_a_gas_overflow_at_the_constant_cost() {
        let o = FailedOp {
            op: MSTORE,
            spec: SpecId::CANCUN,
            gas: 100,
            stack: &[U256::from(1), U256::MAX],
            mem_len: 0,
            is_static: false,
            contract: Address::ZERO,
        };
        let got = out_of_gas_step(&o, &mut Cold, &gas_table_spec(SpecId::CANCUN));
        assert_eq!(got, Some((3, "gas uint64 overflow".into())));
    }

    #[test]
    fn sstore_in_a_static_frame_is_refused_by_its_gas_function() {
        assert_eq!(
            step(SSTORE, 50_000, &[1, 0], true),
            Some((0, "out of gas: write protection".into()))
        );
        assert_eq!(
            step(SSTORE, 2300, &[1, 0], false),
            Some((0, "out of gas: not enough gas for reentrancy sentry".into()))
        );
        // A cold zero slot set to 1: 2100 + 20000.
        assert_eq!(
            step(SSTORE, 5000, &[1, 0], false),
            Some((22100, "out of gas".into()))
        );
    }

    #[test]
    fn a_cold_call_that_cannot_pay_the_access_fails_inside_its_gas_function() {
        // CALL(gas, to, 0, 0, 0, 0, 0) with 150 gas: the constant 100 is paid, the cold 2500
        // is not.
        assert_eq!(
            step(CALL, 150, &[0, 0, 0, 0, 0, 0xbb, 1000], false),
            Some((100, "out of gas: out of gas".into()))
        );
    }

    #[test]
    fn exp_prices_every_exponent_byte() {
        assert_eq!(
            step(EXP, 50, &[0x0100, 2], false),
            Some((110, "out of gas".into()))
        );
    }
}
