//! Traces flattened into tables for columnar output (`block A..B --out DIR --format parquet`).
//!
//! One [`Tables`] collects the rows of one partition; [`Tables::batches`] turns them into Arrow
//! record batches, one per table of the tracer (the schema table of docs/ranges.md):
//!
//! | tracer | tables |
//! |---|---|
//! | callTracer | `calls` (one row per frame), `logs` (one row per log, with `withLog`) |
//! | prestateTracer | `state` (one row per account and per storage slot, `side` pre/post) |
//! | structLogger | `ops` (per transaction and opcode: executions and summed `gasCost`) |
//! | `--gas-report` | `ops` (self gas by opcode), `contracts` (per code address) |
//! | flatCallTracer | `traces` (one row per flat entry; cryo's `traces` columns: `action_*`, `result_*`, `trace_address` as space-separated text, `subtraces`, `error`) |
//! | JavaScript, 4byte, keccak256Preimage, mux, noop | `results` (one row per transaction, the result as JSON text) |
//! | erc7562Tracer | `results` (one row per transaction, geth's JSON) |
//! | `--assets` (callTracer) | `asset_changes` (one row per address and asset, [`crate::render::assets::AssetChangeRow`]) |
//! | `--abi` with storage layouts (any tracer) | `storage_changes` (one row per variable or raw slot a transaction changed, [`crate::render::state_changes::StorageChangeRow`]; `key_path` a list of strings) |
//!
//! Addresses, hashes and byte strings are lowercase `0x` hex text; wei values are decimal text
//! (they exceed 64 bits); gas and counts are unsigned 64-bit integers.

use std::sync::Arc;

use alloy_primitives::{hex, Address, B256};
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{ArrowError, DataType, Field, Schema};

use crate::geth::opcode::op_name;
use crate::render::table::Table;
use crate::replay::{TraceResult, TracedTx};
use crate::trace::call::CallFrame;
use crate::trace::prestate::{AccountState, PrestateResult};
use crate::trace::TracerSpec;

fn hx(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn addr(a: &Address) -> String {
    hx(a.as_slice())
}

fn h256(h: &B256) -> String {
    hx(h.as_slice())
}

/// Columns shared by every table: block, transaction index in the block, transaction hash.
#[derive(Default)]
struct Keys {
    block: Vec<u64>,
    tx_index: Vec<u32>,
    tx_hash: Vec<String>,
}

impl Keys {
    fn push(&mut self, block: u64, tx_index: u32, tx_hash: &str) {
        self.block.push(block);
        self.tx_index.push(tx_index);
        self.tx_hash.push(tx_hash.to_string());
    }
    fn fields() -> Vec<Field> {
        vec![
            Field::new("block", DataType::UInt64, false),
            Field::new("tx_index", DataType::UInt32, false),
            Field::new("tx_hash", DataType::Utf8, false),
        ]
    }
    fn arrays(self) -> Vec<ArrayRef> {
        vec![
            Arc::new(UInt64Array::from(self.block)),
            Arc::new(UInt32Array::from(self.tx_index)),
            Arc::new(StringArray::from(self.tx_hash)),
        ]
    }
}

#[derive(Default)]
struct Calls {
    keys: Keys,
    path: Vec<String>,
    kind: Vec<&'static str>,
    from: Vec<String>,
    to: Vec<Option<String>>,
    value: Vec<Option<String>>,
    gas: Vec<u64>,
    gas_used: Vec<u64>,
    selector: Vec<Option<String>>,
    error: Vec<Option<String>>,
    revert_reason: Vec<Option<String>>,
    depth: Vec<u32>,
}

#[derive(Default)]
struct Logs {
    keys: Keys,
    path: Vec<String>,
    address: Vec<String>,
    topics: [Vec<Option<String>>; 4],
    data: Vec<String>,
    log_index: Vec<u64>,
}

#[derive(Default)]
struct State {
    keys: Keys,
    side: Vec<&'static str>,
    address: Vec<String>,
    balance: Vec<Option<String>>,
    nonce: Vec<Option<u64>>,
    code_hash: Vec<Option<String>>,
    code_size: Vec<Option<u64>>,
    slot: Vec<Option<String>>,
    value: Vec<Option<String>>,
}

#[derive(Default)]
struct Ops {
    keys: Keys,
    op: Vec<String>,
    count: Vec<u64>,
    gas: Vec<u64>,
}

#[derive(Default)]
struct Contracts {
    keys: Keys,
    address: Vec<String>,
    frames: Vec<u64>,
    self_gas: Vec<u64>,
    inclusive_gas: Vec<u64>,
}

#[derive(Default)]
struct AssetTable {
    keys: Keys,
    rows: Vec<crate::render::assets::AssetChangeRow>,
}

#[derive(Default)]
struct StorageTable {
    keys: Keys,
    rows: Vec<crate::render::state_changes::StorageChangeRow>,
}

/// cryo's `traces` columns, from flat call trace entries.
#[derive(Default)]
struct Traces {
    keys: Keys,
    action_type: Vec<&'static str>,
    action_from: Vec<Option<String>>,
    action_to: Vec<Option<String>>,
    action_value: Vec<Option<String>>,
    action_gas: Vec<Option<u64>>,
    action_input: Vec<Option<String>>,
    action_init: Vec<Option<String>>,
    action_call_type: Vec<Option<&'static str>>,
    result_gas_used: Vec<Option<u64>>,
    result_output: Vec<Option<String>>,
    result_code: Vec<Option<String>>,
    result_address: Vec<Option<String>>,
    trace_address: Vec<String>,
    subtraces: Vec<u64>,
    error: Vec<Option<String>>,
}

impl Traces {
    fn push(&mut self, block: u64, tx: u32, hash: &str, f: &crate::trace::flat::FlatCallFrame) {
        let a = &f.action;
        let r = f.result.as_ref();
        self.keys.push(block, tx, hash);
        self.action_type.push(f.kind);
        // A selfdestruct's "from" is the destroyed contract, its "to" the beneficiary.
        self.action_from
            .push(a.from.or(a.self_destructed).as_ref().map(addr));
        self.action_to
            .push(a.to.or(a.refund_address).as_ref().map(addr));
        self.action_value
            .push(a.value.or(a.balance).map(|v| v.to_string()));
        self.action_gas.push(a.gas);
        self.action_input.push(a.input.as_ref().map(|b| hx(b)));
        self.action_init.push(a.init.as_ref().map(|b| hx(b)));
        self.action_call_type
            .push(a.call_type.or(a.creation_method));
        self.result_gas_used.push(r.and_then(|r| r.gas_used));
        self.result_output
            .push(r.and_then(|r| r.output.as_ref()).map(|b| hx(b)));
        self.result_code
            .push(r.and_then(|r| r.code.as_ref()).map(|b| hx(b)));
        self.result_address
            .push(r.and_then(|r| r.address.as_ref()).map(addr));
        self.trace_address.push(
            f.trace_address
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(" "),
        );
        self.subtraces.push(f.subtraces as u64);
        self.error
            .push((!f.error.is_empty()).then(|| f.error.clone()));
    }
}

#[derive(Default)]
struct Results {
    keys: Keys,
    result: Vec<String>,
}

/// An error flattening a trace (a struct log that is not geth's JSON, an Arrow refusal).
#[derive(Debug, thiserror::Error)]
pub enum ColumnarError {
    #[error("cannot read the struct logs of {0}: {1}")]
    StructLogs(String, String),
    #[error("cannot build a columnar batch: {0}")]
    Arrow(#[from] ArrowError),
}

/// The rows of one partition, for the tables of one tracer.
pub struct Tables {
    names: Vec<Table>,
    calls: Calls,
    logs: Logs,
    state: State,
    ops: Ops,
    contracts: Contracts,
    results: Results,
    traces: Traces,
    assets: AssetTable,
    storage: StorageTable,
}

#[derive(serde::Deserialize)]
struct StepOp {
    op: String,
    #[serde(rename = "gasCost")]
    gas_cost: u64,
}

impl Tables {
    /// The tables of `spec`, `asset_changes` when `assets`, `storage_changes` when `storage`.
    pub fn new(spec: &TracerSpec, assets: bool, storage: bool) -> Self {
        Tables {
            names: Table::of_with(spec, assets, storage),
            calls: Calls::default(),
            logs: Logs::default(),
            state: State::default(),
            ops: Ops::default(),
            contracts: Contracts::default(),
            results: Results::default(),
            traces: Traces::default(),
            assets: AssetTable::default(),
            storage: StorageTable::default(),
        }
    }

    /// The table names, in the order [`Tables::batches`] returns them.
    pub fn names(&self) -> &[Table] {
        &self.names
    }

    /// Adds the asset change rows of transaction `tx_index` of block `block`.
    pub fn push_assets(
        &mut self,
        block: u64,
        tx_index: u32,
        hash: &B256,
        rows: Vec<crate::render::assets::AssetChangeRow>,
    ) {
        let hash = h256(hash);
        for r in rows {
            self.assets.keys.push(block, tx_index, &hash);
            self.assets.rows.push(r);
        }
    }

    /// Adds the storage change rows of transaction `tx_index` of block `block`.
    pub fn push_storage(
        &mut self,
        block: u64,
        tx_index: u32,
        hash: &B256,
        rows: &[crate::render::state_changes::StorageChangeRow],
    ) {
        let hash = h256(hash);
        for r in rows {
            self.storage.keys.push(block, tx_index, &hash);
            self.storage.rows.push(r.clone());
        }
    }

    /// Adds the rows of transaction `tx_index` of block `block`.
    pub fn push(&mut self, block: u64, tx_index: u32, t: &TracedTx) -> Result<(), ColumnarError> {
        let hash = h256(&t.hash);
        match &t.result {
            TraceResult::Call(frame) => {
                self.frame(block, tx_index, &hash, frame, "0".to_string(), 0)
            }
            TraceResult::Prestate(p) => match p {
                PrestateResult::Pre(m) => {
                    for (a, s) in m {
                        self.account(block, tx_index, &hash, "pre", a, s);
                    }
                }
                PrestateResult::Diff { pre, post } => {
                    for (a, s) in pre {
                        self.account(block, tx_index, &hash, "pre", a, s);
                    }
                    for (a, s) in post {
                        self.account(block, tx_index, &hash, "post", a, s);
                    }
                }
            },
            TraceResult::StructLog(r) => {
                let text = r
                    .logs
                    .lock()
                    .map_err(|_| ColumnarError::StructLogs(hash.clone(), "spool poisoned".into()))?
                    .to_vec()
                    .map_err(|e| ColumnarError::StructLogs(hash.clone(), e.to_string()))?;
                let mut json = Vec::with_capacity(text.len() + 2);
                json.push(b'[');
                json.extend_from_slice(&text);
                json.push(b']');
                let steps: Vec<StepOp> = serde_json::from_slice(&json)
                    .map_err(|e| ColumnarError::StructLogs(hash.clone(), e.to_string()))?;
                // Per opcode, in order of first execution.
                let mut by: Vec<(String, u64, u64)> = Vec::new();
                for s in steps {
                    match by.iter_mut().find(|(op, _, _)| *op == s.op) {
                        Some(e) => {
                            e.1 += 1;
                            e.2 += s.gas_cost;
                        }
                        None => by.push((s.op, 1, s.gas_cost)),
                    }
                }
                for (op, count, gas) in by {
                    self.ops.keys.push(block, tx_index, &hash);
                    self.ops.op.push(op);
                    self.ops.count.push(count);
                    self.ops.gas.push(gas);
                }
            }
            TraceResult::Gas(r) => {
                for (op, (count, gas)) in r.ops.iter().enumerate() {
                    if *count == 0 && *gas == 0 {
                        continue;
                    }
                    self.ops.keys.push(block, tx_index, &hash);
                    self.ops.op.push(op_name(op as u8));
                    self.ops.count.push(*count);
                    self.ops.gas.push(*gas);
                }
                for (a, frames, self_gas, inclusive) in crate::render::gas::contract_rows(r) {
                    let c = &mut self.contracts;
                    c.keys.push(block, tx_index, &hash);
                    c.address.push(addr(&a));
                    c.frames.push(frames);
                    c.self_gas.push(self_gas);
                    c.inclusive_gas.push(inclusive);
                }
            }
            TraceResult::Erc7562(frame) => {
                self.results.keys.push(block, tx_index, &hash);
                self.results
                    .result
                    .push(crate::geth::json::to_json_string(frame));
            }
            TraceResult::Js(raw) => {
                self.results.keys.push(block, tx_index, &hash);
                self.results.result.push(raw.get().to_string());
            }
            TraceResult::FlatCall(frames) => {
                for f in frames {
                    self.traces.push(block, tx_index, &hash, f);
                }
            }
            // A step debugger's record: no table has it (no range runs it).
            TraceResult::Steps(_) => {}
            other @ (TraceResult::FourByte(_)
            | TraceResult::Keccak256Preimage(_)
            | TraceResult::Noop(_)
            | TraceResult::Mux(_)
            | TraceResult::Parity(_)) => {
                self.results.keys.push(block, tx_index, &hash);
                self.results
                    .result
                    .push(crate::geth::json::to_json_string(other));
            }
        }
        Ok(())
    }

    fn frame(&mut self, block: u64, tx: u32, hash: &str, f: &CallFrame, path: String, depth: u32) {
        let c = &mut self.calls;
        c.keys.push(block, tx, hash);
        c.path.push(path.clone());
        c.kind.push(f.kind.as_str());
        c.from.push(addr(&f.from));
        c.to.push(f.to.as_ref().map(addr));
        c.value.push(f.value.map(|v| v.to_string()));
        c.gas.push(f.gas);
        c.gas_used.push(f.gas_used);
        c.selector
            .push((!f.kind.is_create() && f.input.len() >= 4).then(|| hx(&f.input[..4])));
        c.error.push(f.error.as_ref().map(ToString::to_string));
        c.revert_reason.push(f.revert_reason.clone());
        c.depth.push(depth);
        for l in &f.logs {
            let g = &mut self.logs;
            g.keys.push(block, tx, hash);
            g.path.push(path.clone());
            g.address.push(addr(&l.address));
            for (i, col) in g.topics.iter_mut().enumerate() {
                col.push(l.topics.get(i).map(h256));
            }
            g.data.push(hx(&l.data));
            g.log_index.push(l.index);
        }
        for (i, child) in f.calls.iter().enumerate() {
            self.frame(block, tx, hash, child, format!("{path}.{i}"), depth + 1);
        }
    }

    fn account(
        &mut self,
        block: u64,
        tx: u32,
        hash: &str,
        side: &'static str,
        a: &Address,
        s: &AccountState,
    ) {
        let t = &mut self.state;
        t.keys.push(block, tx, hash);
        t.side.push(side);
        t.address.push(addr(a));
        t.balance.push(s.balance.map(|b| b.to_string()));
        t.nonce.push(Some(s.nonce));
        t.code_hash.push(s.code_hash.as_ref().map(h256));
        t.code_size.push(s.code.as_ref().map(|c| c.len() as u64));
        t.slot.push(None);
        t.value.push(None);
        for (k, v) in s.storage.iter().flatten() {
            t.keys.push(block, tx, hash);
            t.side.push(side);
            t.address.push(addr(a));
            t.balance.push(None);
            t.nonce.push(None);
            t.code_hash.push(None);
            t.code_size.push(None);
            t.slot.push(Some(h256(k)));
            t.value.push(Some(h256(v)));
        }
    }

    /// The tables as Arrow batches, named, in [`Tables::names`] order.
    pub fn batches(self) -> Result<Vec<(Table, RecordBatch)>, ColumnarError> {
        let mut out = Vec::new();
        let Tables {
            names,
            calls,
            logs,
            state,
            ops,
            contracts,
            results,
            traces,
            assets,
            storage,
        } = self;
        let mut traces = Some(traces);
        let (mut calls, mut logs, mut state, mut ops, mut contracts, mut results) = (
            Some(calls),
            Some(logs),
            Some(state),
            Some(ops),
            Some(contracts),
            Some(results),
        );
        let mut assets = Some(assets);
        let mut storage = Some(storage);
        for name in names {
            let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = match name {
                Table::Calls => calls_columns(calls.take().unwrap_or_default()),
                Table::Logs => logs_columns(logs.take().unwrap_or_default()),
                Table::State => state_columns(state.take().unwrap_or_default()),
                Table::Ops => ops_columns(ops.take().unwrap_or_default()),
                Table::Contracts => contracts_columns(contracts.take().unwrap_or_default()),
                Table::AssetChanges => asset_columns(assets.take().unwrap_or_default()),
                Table::StorageChanges => storage_columns(storage.take().unwrap_or_default()),
                Table::Results => results_columns(results.take().unwrap_or_default()),
                // In parquet, the flat call trace entries (the NDJSON stream is also
                // named `traces`, in its own format).
                Table::Traces => traces_columns(traces.take().unwrap_or_default()),
            };
            let schema = Arc::new(Schema::new(fields));
            out.push((name, RecordBatch::try_new(schema, arrays)?));
        }
        Ok(out)
    }
}

fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

fn u64f(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::UInt64, nullable)
}

fn columns(keys: Keys, rest: Vec<(Field, ArrayRef)>) -> (Vec<Field>, Vec<ArrayRef>) {
    let mut fields = Keys::fields();
    let mut arrays = keys.arrays();
    for (f, a) in rest {
        fields.push(f);
        arrays.push(a);
    }
    (fields, arrays)
}

fn s(v: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn os(v: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn st(v: Vec<&'static str>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn u(v: Vec<u64>) -> ArrayRef {
    Arc::new(UInt64Array::from(v))
}

fn calls_columns(c: Calls) -> (Vec<Field>, Vec<ArrayRef>) {
    columns(
        c.keys,
        vec![
            (utf8("path", false), s(c.path)),
            (utf8("type", false), st(c.kind)),
            (utf8("from", false), s(c.from)),
            (utf8("to", true), os(c.to)),
            (utf8("value", true), os(c.value)),
            (u64f("gas", false), u(c.gas)),
            (u64f("gas_used", false), u(c.gas_used)),
            (utf8("selector", true), os(c.selector)),
            (utf8("error", true), os(c.error)),
            (utf8("revert_reason", true), os(c.revert_reason)),
            (
                Field::new("depth", DataType::UInt32, false),
                Arc::new(UInt32Array::from(c.depth)),
            ),
        ],
    )
}

fn logs_columns(l: Logs) -> (Vec<Field>, Vec<ArrayRef>) {
    let [t0, t1, t2, t3] = l.topics;
    columns(
        l.keys,
        vec![
            (utf8("path", false), s(l.path)),
            (utf8("address", false), s(l.address)),
            (utf8("topic0", true), os(t0)),
            (utf8("topic1", true), os(t1)),
            (utf8("topic2", true), os(t2)),
            (utf8("topic3", true), os(t3)),
            (utf8("data", false), s(l.data)),
            (u64f("log_index", false), u(l.log_index)),
        ],
    )
}

fn state_columns(t: State) -> (Vec<Field>, Vec<ArrayRef>) {
    columns(
        t.keys,
        vec![
            (utf8("side", false), st(t.side)),
            (utf8("address", false), s(t.address)),
            (utf8("balance", true), os(t.balance)),
            (u64f("nonce", true), Arc::new(UInt64Array::from(t.nonce))),
            (utf8("code_hash", true), os(t.code_hash)),
            (
                u64f("code_size", true),
                Arc::new(UInt64Array::from(t.code_size)),
            ),
            (utf8("slot", true), os(t.slot)),
            (utf8("value", true), os(t.value)),
        ],
    )
}

fn ops_columns(o: Ops) -> (Vec<Field>, Vec<ArrayRef>) {
    columns(
        o.keys,
        vec![
            (utf8("op", false), s(o.op)),
            (u64f("count", false), u(o.count)),
            (u64f("gas", false), u(o.gas)),
        ],
    )
}

fn contracts_columns(c: Contracts) -> (Vec<Field>, Vec<ArrayRef>) {
    columns(
        c.keys,
        vec![
            (utf8("address", false), s(c.address)),
            (u64f("frames", false), u(c.frames)),
            (u64f("self_gas", false), u(c.self_gas)),
            (u64f("inclusive_gas", false), u(c.inclusive_gas)),
        ],
    )
}

fn traces_columns(t: Traces) -> (Vec<Field>, Vec<ArrayRef>) {
    let ou = |v: Vec<Option<u64>>| -> ArrayRef { Arc::new(UInt64Array::from(v)) };
    let ost = |v: Vec<Option<&'static str>>| -> ArrayRef { Arc::new(StringArray::from(v)) };
    columns(
        t.keys,
        vec![
            (utf8("action_type", false), st(t.action_type)),
            (utf8("action_from", true), os(t.action_from)),
            (utf8("action_to", true), os(t.action_to)),
            (utf8("action_value", true), os(t.action_value)),
            (u64f("action_gas", true), ou(t.action_gas)),
            (utf8("action_input", true), os(t.action_input)),
            (utf8("action_init", true), os(t.action_init)),
            (utf8("action_call_type", true), ost(t.action_call_type)),
            (u64f("result_gas_used", true), ou(t.result_gas_used)),
            (utf8("result_output", true), os(t.result_output)),
            (utf8("result_code", true), os(t.result_code)),
            (utf8("result_address", true), os(t.result_address)),
            (utf8("trace_address", false), s(t.trace_address)),
            (u64f("subtraces", false), u(t.subtraces)),
            (utf8("error", true), os(t.error)),
        ],
    )
}

fn results_columns(r: Results) -> (Vec<Field>, Vec<ArrayRef>) {
    columns(r.keys, vec![(utf8("result", false), s(r.result))])
}

fn asset_columns(a: AssetTable) -> (Vec<Field>, Vec<ArrayRef>) {
    let mut address = Vec::new();
    let mut asset = Vec::new();
    let mut standard = Vec::new();
    let mut token_id = Vec::new();
    let mut symbol = Vec::new();
    let mut decimals = Vec::new();
    let mut change = Vec::new();
    let mut fee = Vec::new();
    for r in a.rows {
        address.push(r.address);
        asset.push(r.asset);
        standard.push(r.standard);
        token_id.push(r.token_id);
        symbol.push(r.symbol);
        decimals.push(r.decimals.map(u32::from));
        change.push(r.change);
        fee.push(r.fee);
    }
    columns(
        a.keys,
        vec![
            (utf8("address", false), s(address)),
            (utf8("asset", false), s(asset)),
            (utf8("standard", false), st(standard)),
            (utf8("token_id", true), os(token_id)),
            (utf8("symbol", true), os(symbol)),
            (
                Field::new("decimals", DataType::UInt32, true),
                Arc::new(UInt32Array::from(decimals)),
            ),
            (utf8("change", false), s(change)),
            (utf8("fee", true), os(fee)),
        ],
    )
}

fn storage_columns(t: StorageTable) -> (Vec<Field>, Vec<ArrayRef>) {
    let n = t.rows.len();
    let mut address = Vec::with_capacity(n);
    let mut slot = Vec::with_capacity(n);
    let mut contract = Vec::with_capacity(n);
    let mut variable = Vec::with_capacity(n);
    let mut key_path = ListBuilder::new(StringBuilder::new());
    let mut name = Vec::with_capacity(n);
    let mut ty = Vec::with_capacity(n);
    let mut offset = Vec::with_capacity(n);
    let mut part = Vec::with_capacity(n);
    let mut before = Vec::with_capacity(n);
    let mut after = Vec::with_capacity(n);
    let mut transient = Vec::with_capacity(n);
    let mut raw = Vec::with_capacity(n);
    for r in t.rows {
        address.push(r.address);
        slot.push(r.slot);
        contract.push(r.contract);
        variable.push(r.variable);
        match r.key_path {
            Some(keys) => {
                for k in keys {
                    key_path.values().append_value(k);
                }
                key_path.append(true);
            }
            None => key_path.append(false),
        }
        name.push(r.name);
        ty.push(r.ty);
        offset.push(r.offset);
        part.push(r.part);
        before.push(r.before);
        after.push(r.after);
        transient.push(r.transient);
        raw.push(r.raw);
    }
    let key_path = key_path.finish();
    let list = Field::new(
        "key_path",
        arrow_array::Array::data_type(&key_path).clone(),
        true,
    );
    columns(
        t.keys,
        vec![
            (utf8("address", false), s(address)),
            (utf8("slot", false), s(slot)),
            (utf8("contract", true), os(contract)),
            (utf8("variable", true), os(variable)),
            (list, Arc::new(key_path)),
            (utf8("name", true), os(name)),
            (utf8("type", true), os(ty)),
            (u64f("offset", true), Arc::new(UInt64Array::from(offset))),
            (utf8("part", true), os(part)),
            (utf8("before", false), s(before)),
            (utf8("after", false), s(after)),
            (
                Field::new("transient", DataType::Boolean, false),
                Arc::new(BooleanArray::from(transient)),
            ),
            (utf8("raw", true), os(raw)),
        ],
    )
}
