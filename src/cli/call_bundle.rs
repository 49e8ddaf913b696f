//! `chaintrace call --bundle FILE`: several calls run in order on the state after `--block`,
//! each on the state the one before it left (a state write, then a read; an approval, then a
//! `transferFrom`), traced one by one like `call`.
//!
//! The file is a JSON array of call objects, each with the members `call`'s flags have: `from`,
//! `to`, `data` (or `input`) or `sig` with `args`, `value`, `gas`, `gasPrice`, in the flags'
//! syntax (`"value": "1ether"`). A file that cannot be read, is not such an array, or has a
//! member no call has (named with the closest one) is bad input: exit 1, naming the file and
//! the call.

use alloy_primitives::{Address, Bytes, U256};
use chaintrace::render::json::write_trace;
use chaintrace::replay::call::{prepare_calls, CallRequest};
use chaintrace::replay::driver::Frames;
use chaintrace::replay::overrides::{BlockOverrides, StateOverride};
use chaintrace::replay::remote::replay_with_frames;
use chaintrace::replay::ReplayTx;
use chaintrace::rpc::client::json_kind;
use chaintrace::source::fixture::{parse_hex, parse_u256_str};
use chaintrace::source::StateSnapshot;
use serde_json::{Map, Value};

use super::call_input::{call_error, encode_call, parse_value};
use super::common::{exit, print_trace, report_rpc, CliError, RpcArgs, TraceArgs};
use super::names::{attach_explorer, decoder_for, load_names};

/// The most calls one bundle may hold (geth's `eth_simulateV1` bound on calls).
pub const MAX_CALLS: usize = 10_000;

/// The members a bundle's call may have.
const MEMBERS: &[&str] = &[
    "from", "to", "data", "input", "sig", "args", "value", "gas", "gasPrice",
];

/// Reads the bundle file `path` into the calls it holds.
pub fn read(path: &str) -> Result<Vec<CallRequest>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("cannot read --bundle {path}: {e}")))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::input(format!("--bundle {path} is not valid JSON: {e}")))?;
    let list = v.as_array().ok_or_else(|| {
        CliError::input(format!(
            "--bundle {path}: expected a JSON array of call objects, got {}",
            json_kind(&v)
        ))
    })?;
    if list.is_empty() {
        return Err(CliError::input(format!("--bundle {path} holds no call")));
    }
    if list.len() > MAX_CALLS {
        return Err(CliError::input(format!(
            "--bundle {path} holds {} calls; at most {MAX_CALLS} run in one bundle",
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            call(c).map_err(|e| {
                CliError::input(format!(
                    "--bundle {path}: call {} of {}: {e}",
                    i + 1,
                    list.len()
                ))
            })
        })
        .collect()
}

/// A member's text: a string, or a number written as one.
fn text(o: &Map<String, Value>, k: &str) -> Result<Option<String>, String> {
    match o.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(v) => Err(format!("{k} must be a string, got {}", json_kind(v))),
    }
}

fn address(o: &Map<String, Value>, k: &str) -> Result<Option<Address>, String> {
    text(o, k)?
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| format!("{k} {s:?} is not a 20-byte 0x address"))
        })
        .transpose()
}

fn quantity(o: &Map<String, Value>, k: &str) -> Result<Option<U256>, String> {
    text(o, k)?
        .map(|s| parse_u256_str(&s).map_err(|e| format!("malformed {k}: {e}")))
        .transpose()
}

/// One call object, read as `call`'s flags are.
fn call(v: &Value) -> Result<CallRequest, String> {
    let o = v
        .as_object()
        .ok_or_else(|| format!("expected a call object, got {}", json_kind(v)))?;
    for k in o.keys() {
        if !MEMBERS.contains(&k.as_str()) {
            let near = MEMBERS
                .iter()
                .max_by(|a, b| {
                    strsim::jaro_winkler(k, a)
                        .partial_cmp(&strsim::jaro_winkler(k, b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .copied()
                .unwrap_or("to");
            return Err(format!(
                "unknown member {k:?} (did you mean {near:?}? a call has {})",
                MEMBERS.join(", ")
            ));
        }
    }
    let data: Bytes = match (text(o, "sig")?, text(o, "data")?.or(text(o, "input")?)) {
        (Some(_), Some(_)) => return Err("give either sig (with args) or data, not both".into()),
        (Some(sig), None) => {
            let args = match o.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| match x {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(_) | Value::Bool(_) => Ok(x.to_string()),
                        other => Err(format!("args must be strings, got {}", json_kind(other))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(v) => return Err(format!("args must be an array, got {}", json_kind(v))),
            };
            encode_call(&sig, &args).map_err(|e| e.message)?.into()
        }
        (None, Some(d)) => parse_hex(&d).map_err(|e| format!("malformed data: {e}"))?,
        (None, None) if o.contains_key("args") => return Err("args without sig".into()),
        (None, None) => Bytes::new(),
    };
    let value = match text(o, "value")? {
        Some(v) => parse_value(&v, "value").map_err(|e| e.message)?,
        None => U256::ZERO,
    };
    let gas = quantity(o, "gas")?
        .map(|g| u64::try_from(g).map_err(|_| "gas is too large".to_string()))
        .transpose()?;
    let gas_price = quantity(o, "gasPrice")?.unwrap_or_default();
    Ok(CallRequest {
        from: address(o, "from")?.unwrap_or_default(),
        to: address(o, "to")?,
        data,
        value,
        gas,
        gas_price: u128::try_from(gas_price).map_err(|_| "gasPrice is too large".to_string())?,
        gas_cap: 0,
        geth_default: false,
    })
}

/// What `call --bundle` runs with: the file and `call`'s flags that apply to every call.
pub struct Bundle<'a> {
    pub path: &'a str,
    pub trace: &'a TraceArgs,
    pub rpc: &'a RpcArgs,
    /// `--block`.
    pub block: &'a str,
    pub block_override: Option<&'a BlockOverrides>,
    /// Applied once, before the first call.
    pub state_override: Option<&'a StateOverride>,
    /// `--assets` (refused).
    pub assets: bool,
}

/// Runs `call --bundle FILE`: every call traced in order on one state; exit 3 when any of them
/// failed at top level.
pub fn run(args: &Bundle<'_>) -> Result<u8, CliError> {
    let (path, state) = (args.path, args.state_override);
    if args.assets || args.trace.decode {
        return Err(CliError::input(
            "--bundle prints each call's trace; --assets and --decode are for a single call",
        ));
    }
    let calls = read(path)?;
    let block_ref = super::block::parse_block_ref(args.block)?;
    let block_override = args.block_override;
    let hardfork = args.trace.hardfork()?;
    let mut names = load_names(args.trace)?;
    let spec = args.trace.spec(None)?;
    let source = args.rpc.source()?;
    let prepared =
        prepare_calls(&source, &calls, &block_ref, block_override, hardfork).map_err(call_error)?;
    let first = &prepared[0];
    let mut env = first.env.clone();
    // One environment for the bundle: a call at gas price 0 pays nothing under any base fee.
    env.cfg.disable_base_fee = calls.iter().any(|c| c.gas_price == 0);
    let txs: Vec<ReplayTx> = prepared.iter().map(|p| p.tx.clone()).collect();
    let prepare = |db: &mut chaintrace::source::ReplayDb<'_>| {
        if let Some(o) = state {
            o.apply(db);
        }
    };
    let replay = replay_with_frames(
        &source,
        &txs,
        &env,
        0,
        &first.state_at,
        &spec,
        &prepare,
        StateSnapshot::partial(),
        Frames::Calls,
    )
    .map_err(|e| call_error(e.into()))?;
    let currency = chaintrace::chain::currency(first.chain_id);
    attach_explorer(
        &mut names,
        args.trace,
        first.chain_id,
        source.client.timeout(),
    );
    if args.trace.json {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        use std::io::Write;
        let written = (|| {
            out.write_all(b"[")?;
            for (i, t) in replay.traces.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_trace(&mut out, &t.result)?;
            }
            out.write_all(b"]\n")?;
            out.flush()
        })();
        written.map_err(|e| CliError::source(format!("cannot write the traces: {e}")))?;
    } else {
        let n = replay.traces.len();
        for (i, t) in replay.traces.iter().enumerate() {
            if i > 0 {
                println!();
            }
            println!("call {} of {n}:", i + 1);
            let decoder = decoder_for(&names, args.trace, t, &replay.snapshot);
            print_trace(t, args.trace, &decoder, currency, None, None)?;
        }
    }
    if let Some(n) = replay.splice_note(&env) {
        note!("note: {n}");
    }
    report_rpc(&source, replay.passes);
    Ok(match replay.traces.iter().all(|t| t.outcome.success) {
        true => exit::OK,
        false => exit::TX_FAILED,
    })
}
