//! Parity/OpenEthereum `trace` entries, as reth serves them (`trace_transaction`,
//! `trace_block`, the `trace` of `trace_replay*` and `trace_call*`): renderings of the frames the
//! [`CallTracer`](super::call::CallTracer) collects — one frame model, several shapes — in
//! alloy's `parity` types (`alloy-rpc-types-trace`), which serialise as reth does.
//!
//! The reference is reth's builder, revm-inspectors' `ParityTraceBuilder`
//! (`tracing/builder/parity.rs`, `CallTraceNode::parity_*` in `tracing/types.rs`,
//! `utils::fmt_error_msg`); where it departs from geth's flatCallTracer, this follows it:
//! - the top frame is as the EVM ran it: `gas` the gas limit less the intrinsic gas, `gasUsed`
//!   what the frame spent before refunds (geth's flat tracer: the limit, the receipt's gas);
//! - a call to a precompile is left out (any call type) unless it is the top frame or carries
//!   value (`is_precompile_call`);
//! - errors in Parity's words (`Reverted`, `Out of gas`, `Bad instruction`, `Mutable Call In
//!   Static Context`, `Built-in failed`, …); a failure other than a revert has no `result`, and a
//!   reverted creation's result is a call's (`gasUsed`, `output`);
//! - a selfdestruct is an entry of its own, after its frame's calls, with no result.

use alloy_primitives::{Address, U256};
use alloy_rpc_types_trace::parity::{
    Action, CallAction, CallOutput, CallType, CreateAction, CreateOutput, CreationMethod,
    LocalizedTransactionTrace, SelfdestructAction, TraceOutput, TransactionTrace,
};

use super::call::{CallFrame, CallKind};
use super::flat::FlatContext;

/// A geth error text in Parity's words (revm-inspectors' `fmt_error_msg` for the revm result
/// the text stands for); `precompile` for a frame that ran a precompile, whose failures are
/// `Built-in failed` there.
pub fn parity_error(geth: &str, precompile: bool) -> String {
    let p = match geth {
        "execution reverted" => "Reverted",
        "insufficient balance for transfer" => "Insufficient balance for transfer",
        "max call depth exceeded" => "Max call depth exceeded",
        "invalid jump destination" => "Bad jump destination",
        "return data out of bounds" => "Out of bounds",
        "stack limit reached 1024 (1023)" => "Out of stack",
        "write protection" | "out of gas: write protection" => "Mutable Call In Static Context",
        "contract address collision" => "Contract address collision",
        "nonce uint64 overflow" => "Nonce overflow",
        "invalid code: must not begin with 0xef" => "Invalid code",
        "out of gas"
        | "contract creation code storage out of gas"
        | "max code size exceeded"
        | "max initcode size exceeded"
        | "gas uint64 overflow" => "Out of gas",
        s if s.starts_with("out of gas") => "Out of gas",
        s if s.starts_with("invalid opcode") || s.starts_with("opcode ") => "Bad instruction",
        s if s.starts_with("stack underflow") => "Stack underflow",
        _ if precompile => "Built-in failed",
        other => return other.to_string(),
    };
    p.to_string()
}

/// The `trace` entries of one transaction's frames (`root` from
/// [`CallTracer::into_frames`](super::call::CallTracer::into_frames)), in reth's order.
pub fn transaction_traces(
    root: &CallFrame,
    is_precompile: &dyn Fn(Address) -> bool,
) -> Vec<TransactionTrace> {
    let mut out = Vec::new();
    let mut address = Vec::new();
    walk(root, true, is_precompile, &mut address, &mut out);
    out
}

/// What the `parity` tracer gives for one transaction: its `trace` entries (all that prints)
/// and, for the `trace_replay*`/`trace_call*` answers, its `stateDiff` and vmTrace.
#[derive(Clone, Debug, Default)]
pub struct ParityResult {
    pub traces: Vec<LocalizedTransactionTrace>,
    /// When asked for ([`TracerSpec::ParityReplay`](super::TracerSpec::ParityReplay)).
    pub state_diff: Option<alloy_rpc_types_trace::parity::StateDiff>,
    /// When asked for ([`TracerSpec::ParityReplay`](super::TracerSpec::ParityReplay)
    /// with `vm_trace`).
    pub vm_trace: Option<alloy_rpc_types_trace::parity::VmTrace>,
}

impl serde::Serialize for ParityResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.traces.serialize(s)
    }
}

/// [`transaction_traces`] with the block and transaction they belong to.
pub fn localized(
    traces: Vec<TransactionTrace>,
    ctx: &FlatContext,
) -> Vec<LocalizedTransactionTrace> {
    traces
        .into_iter()
        .map(|trace| LocalizedTransactionTrace {
            trace,
            block_hash: ctx.block_hash,
            block_number: ctx.tx_hash.map(|_| ctx.block_number),
            transaction_hash: ctx.tx_hash,
            transaction_position: ctx.tx_hash.map(|_| ctx.tx_index),
        })
        .collect()
}

fn skipped(f: &CallFrame, is_precompile: &dyn Fn(Address) -> bool) -> bool {
    f.kind != CallKind::Selfdestruct
        && !f.kind.is_create()
        && f.to.is_some_and(is_precompile)
        && f.value.is_none_or(|v| v.is_zero())
}

fn walk(
    f: &CallFrame,
    top: bool,
    is_precompile: &dyn Fn(Address) -> bool,
    address: &mut Vec<usize>,
    out: &mut Vec<TransactionTrace>,
) {
    let kept: Vec<&CallFrame> = f
        .calls
        .iter()
        .filter(|c| !skipped(c, is_precompile))
        .collect();
    out.push(entry(f, top, is_precompile, address.clone(), kept.len()));
    for (i, c) in kept.into_iter().enumerate() {
        address.push(i);
        walk(c, false, is_precompile, address, out);
        address.pop();
    }
}

fn entry(
    f: &CallFrame,
    top: bool,
    is_precompile: &dyn Fn(Address) -> bool,
    trace_address: Vec<usize>,
    subtraces: usize,
) -> TransactionTrace {
    let value = f.value.unwrap_or(U256::ZERO);
    let output = f.output.clone().unwrap_or_default();
    let reverted = f.error.as_ref().is_some_and(|e| e.is_revert());
    let failed = f.error.is_some() && !reverted;
    let action = match f.kind {
        CallKind::Selfdestruct => {
            return TransactionTrace {
                action: Action::Selfdestruct(SelfdestructAction {
                    address: f.from,
                    refund_address: f.to.unwrap_or_default(),
                    balance: value,
                }),
                error: None,
                result: None,
                subtraces: 0,
                trace_address,
            }
        }
        CallKind::Create | CallKind::Create2 => Action::Create(CreateAction {
            from: f.from,
            value,
            gas: f.gas,
            init: f.input.clone(),
            creation_method: if f.kind == CallKind::Create2 {
                CreationMethod::Create2
            } else {
                CreationMethod::Create
            },
        }),
        kind => Action::Call(CallAction {
            from: f.from,
            to: f.to.unwrap_or_default(),
            value,
            gas: f.gas,
            input: f.input.clone(),
            call_type: match kind {
                CallKind::Staticcall => CallType::StaticCall,
                CallKind::Callcode => CallType::CallCode,
                CallKind::Delegatecall => CallType::DelegateCall,
                _ => CallType::Call,
            },
        }),
    };
    let result = if failed {
        None
    } else if f.kind.is_create() && !reverted {
        Some(TraceOutput::Create(CreateOutput {
            gas_used: f.gas_used,
            code: output,
            address: f.to.unwrap_or_default(),
        }))
    } else {
        Some(TraceOutput::Call(CallOutput {
            gas_used: f.gas_used,
            output,
        }))
    };
    let precompile = !top && f.to.is_some_and(is_precompile);
    TransactionTrace {
        action,
        error: f
            .error
            .as_ref()
            .map(|e| parity_error(e.as_str(), precompile)),
        result,
        subtraces,
        trace_address,
    }
}

/// Parity's `stateDiff` of one transaction: `state` (what it changed, not yet committed)
/// against `db` (the state before it), as revm-inspectors' `populate_state_diff` builds it
/// (tracing/builder/parity.rs): a destroyed account `-` with its balance, nonce and code; an
/// account that did not exist `+` with its final values and changed slots; any other changed
/// account `*`/`=` per field and `*` for each changed slot; an account nothing changed in is
/// left out. A read that fails (a state source that cannot answer) leaves the account out.
pub fn state_diff<DB: revm::Database>(
    db: &mut DB,
    state: &revm::state::EvmState,
) -> alloy_rpc_types_trace::parity::StateDiff {
    use alloy_primitives::{Bytes, U64};
    use alloy_rpc_types_trace::parity::{ChangedType, Delta, StateDiff};
    use revm::state::AccountInfo;
    let mut diff = StateDiff::default();
    let code = |db: &mut DB, info: &AccountInfo| -> Bytes {
        match &info.code {
            Some(c) => c.original_bytes(),
            None if info.code_hash == revm::primitives::KECCAK_EMPTY => Bytes::new(),
            None => db
                .code_by_hash(info.code_hash)
                .map(|c| c.original_bytes())
                .unwrap_or_default(),
        }
    };
    for (addr, acc) in state {
        let Ok(before) = db.basic(*addr) else {
            continue;
        };
        // A state source answers an absent account as empty: an empty account did not exist
        // (EIP-161: none can, since Spurious Dragon), as reth's database answers `None`.
        let existed = before.as_ref().is_some_and(|b| !b.is_empty());
        if acc.is_selfdestructed() && !existed {
            continue;
        }
        let before = before.unwrap_or_default();
        let entry = diff.entry(*addr).or_default();
        if acc.is_selfdestructed() {
            entry.balance = Delta::Removed(before.balance);
            entry.nonce = Delta::Removed(U64::from(before.nonce));
            entry.code = Delta::Removed(code(db, &before));
            continue;
        }
        if !existed && (acc.is_created() || !acc.is_empty()) {
            entry.balance = Delta::Added(acc.info.balance);
            entry.nonce = Delta::Added(U64::from(acc.info.nonce));
            entry.code = Delta::Added(code(db, &acc.info));
            for (k, slot) in acc.storage.iter().filter(|(_, s)| s.is_changed()) {
                entry
                    .storage
                    .insert((*k).into(), Delta::Added(slot.present_value.into()));
            }
            continue;
        }
        if before.code_hash != acc.info.code_hash {
            entry.code = Delta::changed(code(db, &before), code(db, &acc.info));
        }
        for (k, slot) in acc.storage.iter().filter(|(_, s)| s.is_changed()) {
            entry.storage.insert(
                (*k).into(),
                Delta::changed(slot.original_value.into(), slot.present_value.into()),
            );
        }
        let same = before.balance == acc.info.balance
            && before.nonce == acc.info.nonce
            && before.code_hash == acc.info.code_hash;
        if entry.storage.is_empty() && same {
            diff.remove(addr);
            continue;
        }
        entry.balance = match before.balance == acc.info.balance {
            true => Delta::Unchanged,
            false => Delta::Changed(ChangedType {
                from: before.balance,
                to: acc.info.balance,
            }),
        };
        entry.nonce = match before.nonce == acc.info.nonce {
            true => Delta::Unchanged,
            false => Delta::Changed(ChangedType {
                from: U64::from(before.nonce),
                to: U64::from(acc.info.nonce),
            }),
        };
    }
    diff
}

/// The `parity` tracer while it runs: the callTracer's frames, and the vmTrace when asked.
pub struct ParityTracer {
    pub call: super::call::CallTracer,
    /// Keep the transaction's `stateDiff` when it ends.
    pub state_diff: bool,
    pub vm: Option<super::vm_trace::VmTracer>,
}

impl<DB: revm::Database> revm::Inspector<super::state::Ctx<DB>> for ParityTracer {
    #[inline]
    fn step(
        &mut self,
        interp: &mut revm::interpreter::Interpreter,
        ctx: &mut super::state::Ctx<DB>,
    ) {
        self.call.step(interp, ctx);
        if let Some(v) = &mut self.vm {
            v.step(interp, ctx);
        }
    }
    #[inline]
    fn step_end(
        &mut self,
        interp: &mut revm::interpreter::Interpreter,
        ctx: &mut super::state::Ctx<DB>,
    ) {
        self.call.step_end(interp, ctx);
        if let Some(v) = &mut self.vm {
            v.step_end(interp, ctx);
        }
    }
    fn log(&mut self, ctx: &mut super::state::Ctx<DB>, log: revm::primitives::Log) {
        revm::Inspector::<super::state::Ctx<DB>>::log(&mut self.call, ctx, log)
    }
    fn log_full(
        &mut self,
        interp: &mut revm::interpreter::Interpreter,
        ctx: &mut super::state::Ctx<DB>,
        log: revm::primitives::Log,
    ) {
        self.call.log_full(interp, ctx, log)
    }
    fn call(
        &mut self,
        ctx: &mut super::state::Ctx<DB>,
        inputs: &mut revm::interpreter::CallInputs,
    ) -> Option<revm::interpreter::CallOutcome> {
        if let Some(v) = &mut self.vm {
            v.call(ctx, inputs);
        }
        self.call.call(ctx, inputs)
    }
    fn call_end(
        &mut self,
        ctx: &mut super::state::Ctx<DB>,
        inputs: &revm::interpreter::CallInputs,
        outcome: &mut revm::interpreter::CallOutcome,
    ) {
        self.call.call_end(ctx, inputs, outcome);
        if let Some(v) = &mut self.vm {
            v.call_end(ctx, inputs, outcome);
        }
    }
    fn create(
        &mut self,
        ctx: &mut super::state::Ctx<DB>,
        inputs: &mut revm::interpreter::CreateInputs,
    ) -> Option<revm::interpreter::CreateOutcome> {
        if let Some(v) = &mut self.vm {
            v.create(ctx, inputs);
        }
        self.call.create(ctx, inputs)
    }
    fn create_end(
        &mut self,
        ctx: &mut super::state::Ctx<DB>,
        inputs: &revm::interpreter::CreateInputs,
        outcome: &mut revm::interpreter::CreateOutcome,
    ) {
        self.call.create_end(ctx, inputs, outcome);
        if let Some(v) = &mut self.vm {
            v.create_end(ctx, inputs, outcome);
        }
    }
}
