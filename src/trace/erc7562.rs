//! geth's `erc7562Tracer` (ERC-4337 validation rules): the callTracer's frames, each with what
//! its code touched — opcodes used, storage and transient slots, `EXTCODE*` targets, the code
//! size of every address an `EXTCODE*`/`CALL*` named — and the transaction's KECCAK256
//! preimages in the top frame.
//!
//! The frames themselves (kinds, gas, errors, revert reasons, logs, SELFDESTRUCT frames) follow
//! the callTracer's rules, so this tracer runs a [`CallTracer`] inside and keeps beside it a
//! parallel stack of per-frame [`FrameOps`], opened and closed in the same hooks; the two trees
//! are zipped into [`Erc7562Frame`]s at the end. The per-opcode rules are those of geth's
//! `eth/tracers/native/erc7562.go` (line numbers below refer to it).

use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::bytecode::opcode::{
    ADD, AND, CALL, CALLCODE, DELEGATECALL, DIV, EQ, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, GAS,
    GT, ISZERO, KECCAK256, LT, MUL, NOT, OR, POP, PUSH0, RETURN, REVERT, SGT, SHL, SHR, SLOAD, SLT,
    SSTORE, STATICCALL, SUB, SWAP16, TLOAD, TSTORE,
};
use revm::interpreter::interpreter_types::{Jumps, MemoryTr};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::call::{CallFrame, CallKind, CallLog, CallTracer, CallTracerConfig};
use super::errors::{frontier_deposit_oog, returned_output, FrameError, CODE_STORE_OUT_OF_GAS};
use super::hexser;
use super::keccak::memory_copy_padded;
use super::state::Ctx;
use super::state::{StateReader, StateView};

/// `tracerConfig` of the erc7562 tracer (geth's `erc7562TracerConfig`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Erc7562Config {
    /// How many stack items the previous opcode keeps (0: geth's default, 3). Only the top one
    /// is ever read (geth line 462), so any positive size gives the same result.
    pub stack_top_items_size: i64,
    /// Opcodes left out of `usedOpcodes`, as `0x` quantities; absent or `null`: geth's default
    /// list (`defaultIgnoredOpcodes`), `[]`: none.
    pub ignored_opcodes: Option<Vec<HexU64>>,
    /// Record each frame's logs, as the callTracer's `withLog`.
    pub with_log: bool,
}

impl Erc7562Config {
    /// geth's config errors: a negative `stackTopItemsSize` makes geth panic (a negative slice
    /// length, line 378); here it is refused.
    pub fn check(&self) -> Result<(), String> {
        if self.stack_top_items_size < 0 {
            return Err(format!(
                "stackTopItemsSize: must not be negative, got {}",
                self.stack_top_items_size
            ));
        }
        Ok(())
    }

    /// One flag per opcode byte: left out of `usedOpcodes`. geth converts each `uint64` to a
    /// `vm.OpCode` (a byte), keeping the low 8 bits (line 199).
    fn ignored(&self) -> [bool; 256] {
        let mut set = [false; 256];
        match &self.ignored_opcodes {
            Some(list) => {
                for op in list {
                    set[(op.0 & 0xff) as usize] = true;
                }
            }
            None => {
                for op in default_ignored_opcodes() {
                    set[op as usize] = true;
                }
            }
        }
        set
    }
}

/// geth's `defaultIgnoredOpcodes` (line 519): PUSH0..SWAP16 and a few arithmetic/stack ops.
pub fn default_ignored_opcodes() -> Vec<u8> {
    let mut v: Vec<u8> = (PUSH0..=SWAP16).collect();
    v.extend([
        POP, ADD, SUB, MUL, DIV, EQ, LT, GT, SLT, SGT, SHL, SHR, AND, OR, NOT, ISZERO,
    ]);
    v
}

/// geth's `hexutil.Uint64` as JSON input: a string, `0x` and 1 to 16 hex digits without
/// leading zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HexU64(pub u64);

impl<'de> Deserialize<'de> for HexU64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        let Some(s) = v.as_str() else {
            return Err(D::Error::custom(
                "json: cannot unmarshal non-string into Go value of type hexutil.Uint64",
            ));
        };
        let digits = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            _ if s.is_empty() => return Err(D::Error::custom("empty hex string")),
            None => return Err(D::Error::custom("hex string without 0x prefix")),
            Some("") => return Err(D::Error::custom("hex string \"0x\"")),
            Some(d) => d,
        };
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(D::Error::custom("hex number with leading zero digits"));
        }
        if digits.len() > 16 {
            return Err(D::Error::custom("hex number > 64 bits"));
        }
        u64::from_str_radix(digits, 16)
            .map(HexU64)
            .map_err(|_| D::Error::custom("invalid hex string"))
    }
}

/// An address's code size when an opcode first named it in a frame (`contractSizeWithOpcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractSize {
    #[serde(rename = "contractSize")]
    pub contract_size: u64,
    /// The opcode, as a JSON number (geth's `vm.OpCode` has no JSON form of its own).
    pub opcode: u8,
}

/// Storage and transient-storage slots a frame touched (geth's `accessedSlots`), keyed by slot
/// alone (the address is the frame's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessedSlots {
    /// Slot → its value at the first SLOAD, if the frame had not written it before.
    pub reads: BTreeMap<B256, Vec<B256>>,
    /// Slot → number of SSTOREs.
    pub writes: BTreeMap<B256, u64>,
    #[serde(rename = "transientReads")]
    pub transient_reads: BTreeMap<B256, u64>,
    #[serde(rename = "transientWrites")]
    pub transient_writes: BTreeMap<B256, u64>,
}

/// Opcode → times used. Go writes a map keyed by `hexutil.Uint64` with the keys' text (`0x5b`)
/// sorted as strings, so `0x1` < `0x10` < `0x2`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsedOpcodes(pub BTreeMap<u8, u64>);

impl Serialize for UsedOpcodes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut keyed: Vec<(String, u64)> = self
            .0
            .iter()
            .map(|(op, n)| (format!("{op:#x}"), *n))
            .collect();
        keyed.sort();
        s.collect_map(keyed)
    }
}

impl<'de> Deserialize<'de> for UsedOpcodes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let m = BTreeMap::<String, u64>::deserialize(d)?;
        let mut out = BTreeMap::new();
        for (k, n) in m {
            let v = serde_json::Value::String(k);
            let op = HexU64::deserialize(v).map_err(D::Error::custom)?;
            // geth's map is keyed by vm.OpCode: the low byte.
            *out.entry((op.0 & 0xff) as u8).or_insert(0) += n;
        }
        Ok(UsedOpcodes(out))
    }
}

fn address_list<S: Serializer>(v: &[Address], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        v.iter()
            .map(|a| format!("0x{}", alloy_primitives::hex::encode(a))),
    )
}

fn address_map<S: Serializer>(
    m: &BTreeMap<Address, ContractSize>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(
        m.iter()
            .map(|(a, c)| (format!("0x{}", alloy_primitives::hex::encode(a)), c)),
    )
}

/// One frame of an erc7562Tracer result, fields in the order of geth's generated marshaller
/// (`gen_callframewithopcodes_json.go`) with its omission rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erc7562Frame {
    #[serde(serialize_with = "hexser::address")]
    pub from: Address,
    #[serde(with = "alloy_serde::quantity")]
    pub gas: u64,
    #[serde(rename = "gasUsed", with = "alloy_serde::quantity")]
    pub gas_used: u64,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address",
        default
    )]
    pub to: Option<Address>,
    pub input: Bytes,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<FrameError>,
    #[serde(
        rename = "revertReason",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub revert_reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub logs: Vec<CallLog>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<U256>,
    #[serde(rename = "accessedSlots")]
    pub accessed_slots: AccessedSlots,
    /// Addresses an `EXTCODE*` read, once per such opcode (duplicates kept), except an
    /// EXTCODESIZE followed by ISZERO.
    #[serde(rename = "extCodeAccessInfo", serialize_with = "address_list")]
    pub ext_code_access_info: Vec<Address>,
    #[serde(rename = "usedOpcodes")]
    pub used_opcodes: UsedOpcodes,
    #[serde(rename = "contractSize", serialize_with = "address_map")]
    pub contract_size: BTreeMap<Address, ContractSize>,
    #[serde(rename = "outOfGas")]
    pub out_of_gas: bool,
    /// KECCAK256 preimages of the whole transaction, sorted, in the top frame only.
    #[serde(rename = "keccak", skip_serializing_if = "Vec::is_empty", default)]
    pub keccak: Vec<Bytes>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub calls: Vec<Erc7562Frame>,
    #[serde(rename = "type")]
    pub kind: CallKind,
}

/// What one frame's code did, collected per opcode.
#[derive(Default)]
struct FrameOps {
    slots: AccessedSlots,
    ext_code_access: Vec<Address>,
    used: BTreeMap<u8, u64>,
    contract_size: BTreeMap<Address, ContractSize>,
    /// A pre-Homestead CREATE whose code deposit ran out of gas: geth sets `outOfGas` from the
    /// raw error before `processOutput` clears it (lines 274-278).
    deposit_oog: bool,
    /// What the frame's RETURN handed back (kept before Homestead only).
    returned: Option<Bytes>,
    /// A CREATE with empty init code: geth runs no opcode in it (core/vm/interpreter.go, "Don't
    /// bother with the execution if there's no code"), revm runs the padding's STOP.
    no_code: bool,
    calls: Vec<FrameOps>,
}

/// The previous opcode, tracer-wide (geth's `lastOpWithStack`: not per frame, so the first
/// opcode of a callee sees its caller's CALL, and the caller's next opcode sees the callee's
/// last).
#[derive(Clone, Copy)]
struct LastOp {
    op: u8,
    /// Top of the stack then (`StackTopItems[0]`), `None` for an empty stack.
    top: Option<U256>,
}

/// The erc7562 tracer's state during one transaction.
pub struct Erc7562Tracer {
    calls: CallTracer,
    ignored: [bool; 256],
    stack: Vec<FrameOps>,
    root: Option<FrameOps>,
    last: Option<LastOp>,
    keccak: BTreeSet<Vec<u8>>,
}

fn is_ext(op: u8) -> bool {
    matches!(op, EXTCODEHASH | EXTCODESIZE | EXTCODECOPY)
}

fn is_call(op: u8) -> bool {
    matches!(op, CALL | CALLCODE | DELEGATECALL | STATICCALL)
}

/// The `n`th stack item from the top.
fn peep(stack: &[U256], n: usize) -> Option<U256> {
    stack.len().checked_sub(n + 1).map(|i| stack[i])
}

fn word_address(w: U256) -> Address {
    Address::from_word(B256::from(w.to_be_bytes::<32>()))
}

/// errors.Is(err, ErrOutOfGas) || errors.Is(err, ErrCodeStoreOutOfGas) (line 274), on geth's
/// text: `out of gas`, the dynamic-gas failures wrapped as `out of gas: …`, and the code
/// deposit's error.
fn is_out_of_gas(e: &FrameError) -> bool {
    let s = e.as_str();
    s == "out of gas" || s.starts_with("out of gas: ") || s == CODE_STORE_OUT_OF_GAS
}

impl Erc7562Tracer {
    pub fn new(config: &Erc7562Config, log_index_offset: u64) -> Self {
        let call_config = CallTracerConfig {
            only_top_call: false,
            with_log: config.with_log,
            source_steps: false,
            marks: None,
        };
        Erc7562Tracer {
            calls: CallTracer::new(call_config, log_index_offset),
            ignored: config.ignored(),
            stack: Vec::new(),
            root: None,
            last: None,
            keccak: BTreeSet::new(),
        }
    }

    fn open(&mut self, no_code: bool) {
        self.stack.push(FrameOps {
            no_code,
            ..FrameOps::default()
        });
    }

    fn close(&mut self, deposit_oog: bool) {
        let Some(mut ops) = self.stack.pop() else {
            return;
        };
        ops.deposit_oog = deposit_oog;
        ops.returned = None;
        match self.stack.last_mut() {
            Some(parent) => parent.calls.push(ops),
            None => self.root = Some(ops),
        }
    }

    /// Finishes the trace (geth's `OnTxEnd` + `GetResult`): the top frame's `gas` is the tx gas
    /// limit and its `gasUsed` the receipt's; `None` when no frame ran.
    /// A deposit that failed before it ran: the call tracer's STOP frame, no opcodes.
    pub fn enter_failed_deposit(&mut self) {
        self.calls.enter_failed_deposit();
    }

    pub fn into_result(self, tx_gas_limit: u64, receipt_gas_used: u64) -> Option<Erc7562Frame> {
        let call = self.calls.into_result(tx_gas_limit, receipt_gas_used)?;
        let ops = self.root.unwrap_or_default();
        let mut top = merge(call, ops, true);
        top.keccak = self.keccak.into_iter().map(Bytes::from).collect();
        Some(top)
    }

    fn on_opcode<DB: Database>(&mut self, interp: &Interpreter, ctx: &mut Ctx<DB>) {
        if self.stack.last().is_none_or(|f| f.no_code) {
            return;
        }
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        // handleReturnRevert (line 403): RETURN and REVERT forget the previous opcode before
        // the rules that look at it.
        let last = if op == RETURN || op == REVERT {
            None
        } else {
            self.last
        };
        self.last = Some(LastOp {
            op,
            top: peep(stack, 0),
        });
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        // handleExtOpcodes [OP-051] (line 460): the address an EXTCODE* read, recorded at the
        // next opcode unless it is EXTCODESIZE followed by ISZERO.
        if let Some(LastOp {
            op: prev,
            top: Some(addr),
        }) = last
        {
            if is_ext(prev) && !(prev == EXTCODESIZE && op == ISZERO) {
                frame.ext_code_access.push(word_address(addr));
            }
        }
        // handleAccessedContractSize [OP-041] (line 473): the first opcode to name an address
        // records its current code size.
        if is_ext(op) || is_call(op) {
            let n = if is_ext(op) { 0 } else { 1 };
            if let Some(w) = peep(stack, n) {
                let addr = word_address(w);
                if let std::collections::btree_map::Entry::Vacant(e) =
                    frame.contract_size.entry(addr)
                {
                    let mut view = StateView {
                        state: &ctx.journaled_state.inner.state,
                        db: &mut ctx.journaled_state.database,
                    };
                    e.insert(ContractSize {
                        contract_size: view.code(addr).len() as u64,
                        opcode: op,
                    });
                }
            }
        }
        // handleGasObserved [OP-012] (line 409): GAS counts only when a CALL* does not follow.
        if let Some(prev) = last {
            if prev.op == GAS && !is_call(op) {
                *frame.used.entry(GAS).or_insert(0) += 1;
            }
        }
        // storeUsedOpcode (line 417).
        if op != GAS && !self.ignored[op as usize] {
            *frame.used.entry(op).or_insert(0) += 1;
        }
        // handleStorageAccess (line 424).
        if matches!(op, SLOAD | SSTORE | TLOAD | TSTORE) {
            if let Some(w) = peep(stack, 0) {
                let slot = B256::from(w.to_be_bytes::<32>());
                let s = &mut frame.slots;
                match op {
                    SLOAD => {
                        if !s.reads.contains_key(&slot) && !s.writes.contains_key(&slot) {
                            let mut view = StateView {
                                state: &ctx.journaled_state.inner.state,
                                db: &mut ctx.journaled_state.database,
                            };
                            let v = view.storage(interp.input.target_address, w);
                            s.reads
                                .insert(slot, vec![B256::from(v.to_be_bytes::<32>())]);
                        }
                    }
                    SSTORE => *s.writes.entry(slot).or_insert(0) += 1,
                    TLOAD => *s.transient_reads.entry(slot).or_insert(0) += 1,
                    _ => *s.transient_writes.entry(slot).or_insert(0) += 1,
                }
            }
        }
        // storeKeccak (line 447): offset and size are the low 64 bits, as int64.
        if op == KECCAK256 {
            if let (Some(off), Some(len)) = (peep(stack, 0), peep(stack, 1)) {
                let off = off.as_limbs()[0] as i64;
                let len = len.as_limbs()[0] as i64;
                let size = interp.memory.size();
                let mem = interp.memory.slice(0..size);
                if let Some(pre) = memory_copy_padded(&mem, off, len) {
                    self.keccak.insert(pre);
                }
            }
        }
    }
}

/// Zips the callTracer's frame with its opcode data. SELFDESTRUCT frames have none (geth
/// opens and closes them around no opcodes).
fn merge(call: CallFrame, ops: FrameOps, top: bool) -> Erc7562Frame {
    let out_of_gas = !top && (ops.deposit_oog || call.error.as_ref().is_some_and(is_out_of_gas));
    let mut children = ops.calls.into_iter();
    let calls = call
        .calls
        .into_iter()
        .map(|c| {
            let ops = if c.kind == CallKind::Selfdestruct {
                FrameOps::default()
            } else {
                children.next().unwrap_or_default()
            };
            merge(c, ops, false)
        })
        .collect();
    Erc7562Frame {
        from: call.from,
        gas: call.gas,
        gas_used: call.gas_used,
        to: call.to,
        input: call.input,
        output: call.output,
        error: call.error,
        revert_reason: call.revert_reason,
        logs: call.logs,
        value: call.value,
        accessed_slots: ops.slots,
        ext_code_access_info: ops.ext_code_access,
        used_opcodes: UsedOpcodes(ops.used),
        contract_size: ops.contract_size,
        out_of_gas,
        keccak: Vec::new(),
        calls,
        kind: call.kind,
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for Erc7562Tracer {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.calls.step(interp, ctx);
        self.on_opcode(interp, ctx);
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.calls.step_end(interp, ctx);
        if !ctx.cfg.spec.is_enabled_in(SpecId::HOMESTEAD) {
            if let (Some(top), Some(out)) = (self.stack.last_mut(), returned_output(interp)) {
                top.returned = Some(out.clone());
            }
        }
    }

    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        self.calls.log_full(interp, ctx, log)
    }

    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        Inspector::<Ctx<DB>>::log(&mut self.calls, ctx, log)
    }

    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        // revm runs no opcode for a call to empty code, as geth.
        self.open(false);
        self.calls.call(ctx, inputs)
    }

    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.calls.call_end(ctx, inputs, outcome);
        self.close(false);
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.open(inputs.init_code().is_empty());
        self.calls.create(ctx, inputs)
    }

    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        self.calls.create_end(ctx, inputs, outcome);
        let r = &outcome.result;
        let returned = self.stack.last().and_then(|f| f.returned.as_ref());
        let deposit_oog =
            frontier_deposit_oog(ctx.cfg.spec, r.result, &r.output, returned).is_some();
        self.close(deposit_oog);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_opcodes_sort_as_go_sorts_their_text() {
        let u = UsedOpcodes(
            [(0x2, 1), (0x10, 2), (0x1, 3), (0xa2, 4)]
                .into_iter()
                .collect(),
        );
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"0x1":3,"0x10":2,"0x2":1,"0xa2":4}"#
        );
    }

    #[test]
    fn default_ignored_list_is_gethes() {
        let v = default_ignored_opcodes();
        assert_eq!(v.len(), 65 + 16);
        assert!(v.contains(&0x5f) && v.contains(&0x9f) && v.contains(&ISZERO));
        assert!(!v.contains(&SLOAD) && !v.contains(&GAS));
    }

    #[test]
    fn hex_u64_follows_hexutil() {
        let ok: Vec<HexU64> =
            serde_json::from_str(r#"["0x0","0x5b","0xffffffffffffffff"]"#).unwrap();
        assert_eq!(ok, vec![HexU64(0), HexU64(0x5b), HexU64(u64::MAX)]);
        for bad in [
            r#""0x""#,
            r#""5b""#,
            r#""0x05""#,
            "91",
            r#""0x1ffffffffffffffff""#,
        ] {
            assert!(serde_json::from_str::<HexU64>(bad).is_err(), "{bad}");
        }
    }
}
