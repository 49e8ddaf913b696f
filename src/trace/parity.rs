//! The Parity/OpenEthereum `trace` shape, as reth serves `trace_transaction`/`trace_block`:
//! a flat list of frames in call order, each with its `traceAddress`.
//!
//! Built from the callTracer's frames ([`CallFrame`] and its hidden [`FrameFacts`]) — one frame
//! model, two shapes. The reference is revm-inspectors 0.44 (what reth and anvil run):
//! `ParityTraceBuilder` (`src/tracing/builder/parity.rs`), `CallTraceNode::parity_*`
//! (`src/tracing/types.rs`) and `fmt_error_msg` (`src/tracing/utils.rs`); the JSON is alloy's
//! `alloy-rpc-types-trace` `parity` types, which are reth's.

use alloy_primitives::{Bytes, B256};
use alloy_rpc_types_trace::parity::{
    Action, CallAction, CallOutput, CallType, CreateAction, CreateOutput, CreationMethod,
    LocalizedTransactionTrace, SelfdestructAction, TraceOutput, TraceResults, TransactionTrace,
};
use revm::interpreter::InstructionResult;

use super::call::{CallFrame, CallKind};

/// Where a transaction's traces sit in the chain (reth's `TransactionInfo`); all `None` for a
/// simulated call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxPosition {
    pub hash: Option<B256>,
    pub index: Option<u64>,
    pub block_hash: Option<B256>,
    pub block_number: Option<u64>,
}

/// The transaction's traces with its position, as `trace_transaction` lists them.
pub fn localized(root: &CallFrame, at: TxPosition) -> Vec<LocalizedTransactionTrace> {
    transaction_traces(root)
        .into_iter()
        .map(|trace| LocalizedTransactionTrace {
            trace,
            block_hash: at.block_hash,
            block_number: at.block_number,
            transaction_hash: at.hash,
            transaction_position: at.index,
        })
        .collect()
}

/// The transaction's traces, depth first (the order revm-inspectors' sort by `traceAddress`
/// gives). Calls to precompiles are left out and not counted in their caller's `subtraces`;
/// a SELFDESTRUCT is a trace of its own after the frame's other children.
pub fn transaction_traces(root: &CallFrame) -> Vec<TransactionTrace> {
    let mut out = Vec::new();
    walk(root, Vec::new(), &mut out);
    out
}

fn walk(frame: &CallFrame, address: Vec<usize>, out: &mut Vec<TransactionTrace>) {
    let children: Vec<&CallFrame> = frame.calls.iter().filter(|c| !c.facts.precompile).collect();
    out.push(trace_of(frame, address.clone(), children.len()));
    for (i, child) in children.into_iter().enumerate() {
        let mut a = address.clone();
        a.push(i);
        walk(child, a, out);
    }
}

fn trace_of(f: &CallFrame, trace_address: Vec<usize>, subtraces: usize) -> TransactionTrace {
    if f.kind == CallKind::Selfdestruct {
        // revm-inspectors' `parity_selfdestruct_trace`: no result, no error, no subtraces.
        let action = Action::Selfdestruct(SelfdestructAction {
            address: f.from,
            refund_address: f.to.unwrap_or_default(),
            balance: f.value.unwrap_or_default(),
        });
        return TransactionTrace {
            action,
            error: None,
            result: None,
            subtraces,
            trace_address,
        };
    }
    // The frame's own gas in revm's terms; a frame taken from the node has only geth's, which
    // below the top frame is the same.
    let (gas, gas_used) = match f.facts.status {
        Some(_) => (f.facts.gas_limit, f.facts.gas_spent),
        None => (f.gas, f.gas_used),
    };
    let value = f.value.unwrap_or_default();
    let action = if f.kind.is_create() {
        Action::Create(CreateAction {
            from: f.from,
            gas,
            init: f.input.clone(),
            value,
            creation_method: match f.kind {
                CallKind::Create2 => CreationMethod::Create2,
                _ => CreationMethod::Create,
            },
        })
    } else {
        Action::Call(CallAction {
            from: f.from,
            call_type: match f.kind {
                CallKind::Callcode => CallType::CallCode,
                CallKind::Delegatecall => CallType::DelegateCall,
                CallKind::Staticcall => CallType::StaticCall,
                _ => CallType::Call,
            },
            gas,
            input: f.input.clone(),
            to: f.to.unwrap_or_default(),
            value,
        })
    };
    let error = error_text(f);
    // `parity_transaction_trace`: a failure other than a revert has no result.
    let failed = error.as_deref().is_some_and(|e| e != "Reverted");
    let output = f.output.clone().unwrap_or_default();
    let result = (!failed).then(|| {
        if f.kind.is_create() {
            TraceOutput::Create(CreateOutput {
                address: f.facts.created.or(f.to).unwrap_or_default(),
                code: output,
                gas_used,
            })
        } else {
            TraceOutput::Call(CallOutput { gas_used, output })
        }
    });
    TransactionTrace {
        action,
        error,
        result,
        subtraces,
        trace_address,
    }
}

/// Parity's error text of a frame (revm-inspectors' `fmt_error_msg` with `TraceStyle::Parity`);
/// for a frame taken from the node, read from geth's text.
fn error_text(f: &CallFrame) -> Option<String> {
    match f.facts.status {
        Some(status) => parity_error(status),
        None => f.error.as_ref().map(|e| from_geth(e.as_str()).to_string()),
    }
}

/// revm-inspectors' `fmt_error_msg(res, TraceStyle::Parity)`, case by case.
pub fn parity_error(status: InstructionResult) -> Option<String> {
    use InstructionResult as R;
    if status.is_ok() {
        return None;
    }
    let text = match status {
        R::Revert => "Reverted",
        R::OutOfGas
        | R::PrecompileOOG
        | R::MemoryOOG
        | R::MemoryLimitOOG
        | R::InvalidOperandOOG
        | R::ReentrancySentryOOG => "Out of gas",
        R::OutOfFunds => "Insufficient balance for transfer",
        R::OpcodeNotFound | R::InvalidFEOpcode => "Bad instruction",
        R::StackOverflow => "Out of stack",
        R::InvalidJump => "Bad jump destination",
        R::PrecompileError => "Built-in failed",
        other => return Some(format!("{other:?}")),
    };
    Some(text.to_string())
}

/// Parity's text for geth's (a node's frame), the same table read the other way.
fn from_geth(geth: &str) -> &str {
    match geth {
        "execution reverted" => "Reverted",
        g if g.starts_with("out of gas") => "Out of gas",
        "insufficient balance for transfer" => "Insufficient balance for transfer",
        g if g.starts_with("invalid opcode") => "Bad instruction",
        "invalid jump destination" => "Bad jump destination",
        g if g.starts_with("stack limit reached") => "Out of stack",
        g if g.starts_with("stack underflow") => "Stack underflow",
        "precompiled failed" => "Built-in failed",
        other => other,
    }
}

/// `trace_replayTransaction`'s answer with only `trace` filled (`stateDiff` and `vmTrace`
/// `null`): revm-inspectors' `into_trace_results`, whose `output` is the transaction's output
/// (a revert's data; empty after any other failure) and whose `trace` is empty unless asked.
pub fn trace_results(root: &CallFrame, output: Bytes, with_trace: bool) -> TraceResults {
    TraceResults {
        output,
        state_diff: None,
        trace: if with_trace {
            transaction_traces(root)
        } else {
            Vec::new()
        },
        vm_trace: None,
    }
}
