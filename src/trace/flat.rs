//! geth's `flatCallTracer`: the callTracer's frames, flattened into Parity-style entries.
//!
//! geth builds it on an inner callTracer with its default config (no logs, every frame) and
//! only post-processes the nested result (eth/tracers/native/call_flat.go), so chaintrace does
//! the same: [`FlatCallTracer`] runs the [`CallTracer`] unchanged, and [`flatten`] turns its
//! finished [`CallFrame`] into [`FlatCallFrame`]s. The few things geth's flat tracer does to
//! the frames while they are collected are applied afterwards, with the same effect:
//! - a CALL or STATICCALL to an active precompile is dropped (call_flat.go `OnExit`), unless
//!   `includePrecompiles`; a precompile frame has no children, so dropping it at the end is
//!   dropping it when it exits;
//! - a child frame without a value (STATICCALL) gets value 0 (call_flat.go `OnEnter`).
//!
//! Serialisation is hand-written here only in the sense of field order and omission rules:
//! geth's `flatCallAction`/`flatCallResult` are pointer fields with `omitempty`, so a present
//! but empty byte string prints `"0x"` and a present zero gas prints `"0x0"`; the struct
//! fields below mirror that with `Option`.

use alloy_primitives::{Address, Bytes, B256, U256};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, Interpreter};
use revm::primitives::Log;
use revm::{Database, Inspector};
use serde::{Deserialize, Serialize};

use super::call::{CallFrame, CallKind, CallTracer, CallTracerConfig};
use super::hexser;
use super::state::Ctx;

/// `tracerConfig` of the flat call tracer.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FlatCallConfig {
    /// Errors in Parity's words (`Reverted`, `Out of gas`, …).
    pub convert_parity_errors: bool,
    /// Keep CALL/STATICCALL frames to precompiles.
    pub include_precompiles: bool,
}

/// Where the traced transaction sits (geth's `tracers.Context`): block hash and number, tx hash
/// and position. Unknown parts print as geth prints a zero context (`null`, `0`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlatContext {
    pub block_hash: Option<B256>,
    pub block_number: u64,
    pub tx_hash: Option<B256>,
    pub tx_index: u64,
}

/// The flat call tracer during one transaction: geth's inner callTracer with `{}`.
pub struct FlatCallTracer {
    pub config: FlatCallConfig,
    pub inner: CallTracer,
}

impl FlatCallTracer {
    pub fn new(config: FlatCallConfig) -> Self {
        FlatCallTracer {
            config,
            inner: CallTracer::new(CallTracerConfig::default(), 0),
        }
    }
}

/// One entry of geth's flat call trace, keys in geth's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlatCallFrame {
    pub action: FlatCallAction,
    #[serde(rename = "blockHash")]
    pub block_hash: Option<B256>,
    #[serde(rename = "blockNumber")]
    pub block_number: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<FlatCallResult>,
    pub subtraces: usize,
    #[serde(rename = "traceAddress")]
    pub trace_address: Vec<usize>,
    #[serde(rename = "transactionHash")]
    pub transaction_hash: Option<B256>,
    #[serde(rename = "transactionPosition")]
    pub transaction_position: u64,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// geth's `flatCallAction` (author and rewardType are for block rewards, which a transaction
/// trace never has).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlatCallAction {
    #[serde(
        rename = "address",
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address"
    )]
    pub self_destructed: Option<Address>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance: Option<U256>,
    #[serde(rename = "callType", skip_serializing_if = "Option::is_none")]
    pub call_type: Option<&'static str>,
    #[serde(rename = "creationMethod", skip_serializing_if = "Option::is_none")]
    pub creation_method: Option<&'static str>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address"
    )]
    pub from: Option<Address>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "alloy_serde::quantity::opt"
    )]
    pub gas: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Bytes>,
    #[serde(
        rename = "refundAddress",
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address"
    )]
    pub refund_address: Option<Address>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address"
    )]
    pub to: Option<Address>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<U256>,
}

/// geth's `flatCallResult`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlatCallResult {
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "hexser::opt_address"
    )]
    pub address: Option<Address>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Bytes>,
    #[serde(
        rename = "gasUsed",
        skip_serializing_if = "Option::is_none",
        with = "alloy_serde::quantity::opt"
    )]
    pub gas_used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Bytes>,
}

/// geth's `parityErrorMapping` and `parityErrorMappingStartingWith` (call_flat.go).
pub fn parity_error(geth: &str) -> Option<&'static str> {
    Some(match geth {
        "contract creation code storage out of gas"
        | "out of gas"
        | "gas uint64 overflow"
        | "max code size exceeded" => "Out of gas",
        "invalid jump destination" => "Bad jump destination",
        "execution reverted" => "Reverted",
        "return data out of bounds" => "Out of bounds",
        "stack limit reached 1024 (1023)" => "Out of stack",
        "precompiled failed" | "invalid input length" => "Built-in failed",
        s if s.starts_with("out of gas:") => "Out of gas",
        s if s.starts_with("invalid opcode:") => "Bad instruction",
        s if s.starts_with("stack underflow") => "Stack underflow",
        _ => return None,
    })
}

/// Drops CALL/STATICCALL frames to precompiles (those `is_precompile` names) beneath `frame`,
/// and gives every child frame without a value a zero one, as geth's flat tracer does while
/// collecting.
pub fn prepare(
    frame: &mut CallFrame,
    include_precompiles: bool,
    is_precompile: &dyn Fn(Address) -> bool,
) {
    for c in &mut frame.calls {
        if c.value.is_none() {
            c.value = Some(U256::ZERO);
        }
        prepare(c, include_precompiles, is_precompile);
    }
    if !include_precompiles {
        frame.calls.retain(|c| {
            !(matches!(c.kind, CallKind::Call | CallKind::Staticcall)
                && c.to.is_some_and(is_precompile))
        });
    }
}

/// geth's `flatFromNested`: the frame, then its children depth first, each with its trace
/// address.
pub fn flatten(root: &CallFrame, config: &FlatCallConfig, ctx: &FlatContext) -> Vec<FlatCallFrame> {
    let mut out = Vec::new();
    let mut address = Vec::new();
    flatten_into(root, config, ctx, &mut address, &mut out);
    out
}

fn flatten_into(
    f: &CallFrame,
    config: &FlatCallConfig,
    ctx: &FlatContext,
    address: &mut Vec<usize>,
    out: &mut Vec<FlatCallFrame>,
) {
    let output = f.output.clone().unwrap_or_default();
    let (kind, action, result) = match f.kind {
        CallKind::Create | CallKind::Create2 => (
            "create",
            FlatCallAction {
                creation_method: Some(if f.kind == CallKind::Create2 {
                    "create2"
                } else {
                    "create"
                }),
                from: Some(f.from),
                gas: Some(f.gas),
                value: f.value,
                init: Some(f.input.clone()),
                ..Default::default()
            },
            Some(FlatCallResult {
                gas_used: Some(f.gas_used),
                address: f.to,
                code: Some(output),
                ..Default::default()
            }),
        ),
        CallKind::Selfdestruct => (
            "suicide",
            FlatCallAction {
                self_destructed: Some(f.from),
                balance: f.value,
                refund_address: f.to,
                ..Default::default()
            },
            None,
        ),
        // op-geth flattens a failed deposit's STOP frame as a call (`call_flat.go`).
        CallKind::Call
        | CallKind::Staticcall
        | CallKind::Callcode
        | CallKind::Delegatecall
        | CallKind::Stop => (
            "call",
            FlatCallAction {
                from: Some(f.from),
                to: f.to,
                gas: Some(f.gas),
                value: f.value,
                call_type: Some(match f.kind {
                    CallKind::Call => "call",
                    CallKind::Staticcall => "staticcall",
                    CallKind::Callcode => "callcode",
                    CallKind::Stop => "stop",
                    _ => "delegatecall",
                }),
                input: Some(f.input.clone()),
                ..Default::default()
            },
            Some(FlatCallResult {
                gas_used: Some(f.gas_used),
                output: Some(output),
                ..Default::default()
            }),
        ),
    };
    let geth_error = f.error.as_ref().map(|e| e.as_str()).unwrap_or_default();
    let error = match config
        .convert_parity_errors
        .then(|| parity_error(geth_error))
    {
        Some(Some(p)) => p.to_string(),
        _ => geth_error.to_string(),
    };
    // A revert's output carries its reason; any other failure discards the result.
    let result = if !geth_error.is_empty() && geth_error != super::errors::FrameError::REVERTED {
        None
    } else {
        result
    };
    out.push(FlatCallFrame {
        action,
        block_hash: ctx.block_hash,
        block_number: ctx.block_number,
        error,
        result,
        subtraces: f.calls.len(),
        trace_address: address.clone(),
        transaction_hash: ctx.tx_hash,
        transaction_position: ctx.tx_index,
        kind,
    });
    for (i, c) in f.calls.iter().enumerate() {
        address.push(i);
        flatten_into(c, config, ctx, address, out);
        address.pop();
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for FlatCallTracer {
    #[inline]
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.inner.step(interp, ctx)
    }
    #[inline]
    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.inner.step_end(interp, ctx)
    }
    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        Inspector::<Ctx<DB>>::log(&mut self.inner, ctx, log)
    }
    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        self.inner.log_full(interp, ctx, log)
    }
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.inner.call(ctx, inputs)
    }
    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.inner.call_end(ctx, inputs, outcome)
    }
    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.inner.create(ctx, inputs)
    }
    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        self.inner.create_end(ctx, inputs, outcome)
    }
}
