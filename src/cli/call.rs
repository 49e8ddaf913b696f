//! `chaintrace call`: trace a simulated call on a block's state (geth's debug_traceCall), with
//! cast-style inputs (`--sig` and arguments, `--value 1ether`) and geth's state and block
//! overrides.

use alloy_primitives::{Address, Bytes, U256};
use chaintrace::replay::call::{prepare_call, CallRequest, TracedCall};
use chaintrace::replay::overrides::{BlockOverrides, StateOverride};
use chaintrace::replay::{CallTraced, TraceResult};
use chaintrace::source::fixture::{parse_hex, parse_u256_str};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::prestate::PrestateResult;
use clap::Args;
use serde_json::Value;

use super::assets::{assets_call, assets_config, compute};
use super::block::parse_block_ref;
use super::call_input::{call_error, encode_call, json_arg, parse_value};
use super::common::{exit, print_trace, report_rpc, CliError, RpcArgs, TraceArgs};
use super::names::{attach_explorer, decoder_for, load_names};

/// Trace a call that is not on chain, on the state after block `--block` (default latest).
#[derive(Args, Debug)]
pub struct CallArgs {
    /// Sender address (default: the zero address, as geth's debug_traceCall).
    #[arg(long, default_value = "0x0000000000000000000000000000000000000000")]
    pub from: String,
    /// Recipient address; omit to simulate a contract creation with --data as init code.
    #[arg(long)]
    pub to: Option<String>,
    /// Calldata as hex.
    #[arg(long, default_value = "0x", conflicts_with = "sig")]
    pub data: String,
    /// Function signature to call, e.g. 'transfer(address,uint256)'; its arguments follow as
    /// ARGS (cast syntax).
    #[arg(long, value_name = "SIG")]
    pub sig: Option<String>,
    /// Arguments of --sig (a negative number after `--`).
    #[arg(value_name = "ARGS", requires = "sig")]
    pub args: Vec<String>,
    /// Value: wei (decimal or 0x hex), or with a unit: 1ether, 1.5ether, 20gwei.
    #[arg(long, default_value = "0")]
    pub value: String,
    /// Gas limit (default: the block's gas limit, capped at 2^24 from Osaka on, EIP-7825).
    #[arg(long)]
    pub gas: Option<String>,
    /// Gas price in wei (default 0: no fee is charged and the base fee is not enforced).
    #[arg(long, default_value = "0")]
    pub gas_price: String,
    /// Block whose resulting state the call runs on.
    #[arg(long, default_value = "latest")]
    pub block: String,
    #[command(flatten)]
    pub rpc: RpcArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Print the node's own debug_traceCall with the same tracer and config.
    #[arg(long)]
    pub remote: bool,
    /// geth's stateOverrides, as JSON or a JSON file: {"0xADDR": {"balance", "nonce", "code",
    /// "state" | "stateDiff"}}.
    #[arg(long, value_name = "JSON|FILE")]
    pub state_override: Option<String>,
    /// geth's blockOverrides, as JSON or a JSON file: {"number", "time", "gasLimit",
    /// "feeRecipient", "prevRandao", "baseFeePerGas", "blobBaseFee", "difficulty"}.
    #[arg(long, value_name = "JSON|FILE")]
    pub block_override: Option<String>,
    #[command(flatten)]
    pub assets: super::assets::AssetArgs,
    /// Also write a self-contained HTML report (call tree, revert location, asset changes, state
    /// diff, gas tables, flamegraph) to FILE; it loads nothing when opened.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Run the calls of a JSON file in order, each on the state the one before it left: an
    /// array of objects with the members `from`, `to`, `data` (or `sig` and `args`), `value`,
    /// `gas`, `gasPrice` (the flags' syntax). Prints each call's trace (`--json`: an array).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["from", "to", "data", "sig", "args",
          "value", "gas", "gas_price", "remote", "html"])]
    pub bundle: Option<String>,
}

fn parse_address(s: &str, flag: &str) -> Result<Address, CliError> {
    s.trim().parse().map_err(|_| {
        CliError::input(format!(
            "malformed {flag} {s:?}: expected a 20-byte 0x address"
        ))
    })
}

fn parse_quantity(s: &str, flag: &str) -> Result<U256, CliError> {
    parse_u256_str(s).map_err(|e| CliError::input(format!("malformed {flag}: {e}")))
}

impl CallArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let from = parse_address(&self.from, "--from")?;
        let to = self
            .to
            .as_deref()
            .map(|t| parse_address(t, "--to"))
            .transpose()?;
        let data: Bytes = match &self.sig {
            Some(sig) => encode_call(sig, &self.args)?.into(),
            None => parse_hex(&self.data)
                .map_err(|e| CliError::input(format!("malformed --data: {e}")))?,
        };
        let value = parse_value(&self.value, "--value")?;
        let state_json = self
            .state_override
            .as_deref()
            .map(|s| json_arg(s, "--state-override"))
            .transpose()?;
        let block_json = self
            .block_override
            .as_deref()
            .map(|s| json_arg(s, "--block-override"))
            .transpose()?;
        let state_override = state_json
            .as_ref()
            .map(StateOverride::from_json)
            .transpose()
            .map_err(|e| CliError::input(format!("--state-override: {e}")))?;
        let block_override = block_json
            .as_ref()
            .map(BlockOverrides::from_json)
            .transpose()
            .map_err(|e| CliError::input(format!("--block-override: {e}")))?;
        if let Some(path) = &self.bundle {
            let bundle = super::call_bundle::Bundle {
                path,
                trace: &self.trace,
                rpc: &self.rpc,
                block: &self.block,
                block_override: block_override.as_ref(),
                state_override: state_override.as_ref(),
                assets: self.assets.assets,
            };
            return super::call_bundle::run(&bundle);
        }
        let gas_price = parse_quantity(&self.gas_price, "--gas-price")?;
        let gas_price =
            u128::try_from(gas_price).map_err(|_| CliError::input("--gas-price is too large"))?;
        let block_ref = parse_block_ref(&self.block)?;
        self.assets.check(&self.trace)?;
        if self.remote && (self.assets.assets || self.html.is_some()) {
            return Err(CliError::input(
                "--assets and --html are read from a local replay: they cannot be used with \
                 --remote",
            ));
        }
        if self.remote {
            let mut call = serde_json::json!({"from": from, "data": data, "value": value,
                "gasPrice": format!("{gas_price:#x}")});
            if let Some(to) = to {
                call["to"] = serde_json::json!(to);
            }
            if let Some(g) = &self.gas {
                call["gas"] = serde_json::json!(parse_quantity(g, "--gas")?);
            }
            return run_remote(self, call, &block_ref, state_json, block_json);
        }
        let hardfork = self.trace.hardfork()?;
        let mut names = load_names(&self.trace)?;
        let spec = super::names::with_source_steps(self.trace.spec(None)?, &names, &self.trace);
        let source = self.rpc.source()?;
        let gas = self
            .gas
            .as_deref()
            .map(|g| {
                u64::try_from(parse_quantity(g, "--gas")?)
                    .map_err(|_| CliError::input("--gas is too large"))
            })
            .transpose()?;
        let call = CallRequest {
            from,
            to,
            data,
            value,
            gas,
            gas_price,
            gas_cap: 0,
            geth_default: false,
        };
        let prepared = prepare_call(
            &source,
            &call,
            &block_ref,
            block_override.as_ref(),
            hardfork,
        )
        .map_err(call_error)?;
        let tree = matches!(spec, chaintrace::trace::TracerSpec::Call(_));
        let wants_assets = self.assets.assets || (tree && self.trace.json && self.trace.decode);
        let overrides = state_override.as_ref();
        let assets_of = |t: &TracedCall<CallTraced>, passes: &mut usize| {
            compute(
                &t.traced,
                &prepared.env,
                &prepared.tx,
                &t.post,
                &t.snapshot,
                Some((&source, &prepared.state_at)),
                passes,
            )
        };
        // Failures are located by a second replay, only when a frame failed.
        let plain = super::names::without_source_steps(&spec);
        let run_spec = plain.as_ref().unwrap_or(&spec);
        let (run, assets) = match assets_call(run_spec).filter(|_| wants_assets) {
            // The user's own run is the callTracer with logs: the changes are read from it.
            Some(config) => {
                let t = prepared
                    .trace_call_tree(&source, config, overrides, StateSnapshot::partial())
                    .map_err(call_error)?;
                let mut passes = t.passes;
                let assets = assets_of(&t, &mut passes)?;
                let mut t = t.map(CallTraced::into_traced);
                t.passes = passes;
                (t, Some(assets))
            }
            None => {
                let t = prepared
                    .trace(&source, run_spec, overrides, StateSnapshot::partial())
                    .map_err(call_error)?;
                if wants_assets {
                    let again = prepared
                        .trace_call_tree(&source, &assets_config(), overrides, t.snapshot)
                        .map_err(call_error)?;
                    let mut passes = t.passes + again.passes;
                    let assets = assets_of(&again, &mut passes)?;
                    let run = TracedCall {
                        traced: t.traced,
                        snapshot: again.snapshot,
                        chain_id: t.chain_id,
                        passes,
                        post: again.post,
                        splice_note: t.splice_note,
                    };
                    (run, Some(assets))
                } else {
                    (t, None)
                }
            }
        };
        let TracedCall {
            traced,
            mut snapshot,
            chain_id,
            mut passes,
            splice_note,
            ..
        } = run;
        let traced = match plain {
            Some(_) if super::names::needs_source_steps(&traced.result) => {
                let t = prepared
                    .trace(&source, &spec, overrides, std::mem::take(&mut snapshot))
                    .map_err(call_error)?;
                passes += t.passes;
                snapshot = t.snapshot;
                t.traced
            }
            _ => traced,
        };
        let currency = chaintrace::chain::currency(chain_id);
        attach_explorer(&mut names, &self.trace, chain_id, source.client.timeout());
        let decoder = decoder_for(&names, &self.trace, &traced, &snapshot);
        // The call once more under the access inspector, on the state already read (it comes
        // back filled further): the hashes and writes its storage is named by.
        let access_run = |snapshot: &mut StateSnapshot,
                          passes: &mut usize|
         -> Result<chaintrace::replay::access::Keyed, CliError> {
            let more = |s: &_, r: &[_], p: &_, read: &mut dyn FnMut(_, _) -> _| {
                names.span_values(s, r, p, read)
            };
            let t = prepared
                .access(&source, overrides, std::mem::take(snapshot), &more)
                .map_err(call_error)?;
            *passes += t.passes;
            *snapshot = t.snapshot;
            Ok(t.traced.0)
        };
        // What the call changed, by variable.
        let by_variable = |snapshot: &mut StateSnapshot,
                           passes: &mut usize|
         -> Result<chaintrace::names::state::StateChanges, CliError> {
            let keyed = access_run(snapshot, passes)?;
            let changes = names.state_changes(snapshot, &keyed);
            for n in &changes.notes {
                note!("note: {n}");
            }
            Ok(changes)
        };
        let state = match super::state_changes::wanted(&self.trace, &spec, &names) {
            true => Some(by_variable(&mut snapshot, &mut passes)?),
            false => None,
        };
        // A prestateTracer diff for people: its slots named by variable, as `tx` names them.
        let diff_named = match (&traced.result, self.trace.json || !names.has_layouts()) {
            (TraceResult::Prestate(PrestateResult::Diff { pre, post }), false) => {
                let slots = super::state_view::prestate_diff_slots(pre, post);
                let keyed = access_run(&mut snapshot, &mut passes)?;
                Some(super::state_changes::diff_slots(
                    &names, &snapshot, &keyed, &slots,
                ))
            }
            _ => None,
        };
        print_trace(
            &traced,
            &self.trace,
            &decoder,
            currency,
            assets.as_ref(),
            diff_named.as_ref().or(state.as_ref()),
        )?;
        if let Some(html) = &self.html {
            // The state changes by variable: those shown already, or one more local run.
            let state = match (state, names.has_layouts()) {
                (Some(c), _) => Some(c),
                (None, true) => Some(by_variable(&mut snapshot, &mut passes)?),
                (None, false) => None,
            };
            let (call_config, diff, gas) = super::report::specs(&names);
            let c = prepared
                .trace_call_tree(&source, &call_config, overrides, snapshot)
                .map_err(call_error)?;
            passes += c.passes;
            let mut run = |spec: &chaintrace::trace::TracerSpec,
                           snap: StateSnapshot|
             -> Result<TracedCall, CliError> {
                let t = prepared
                    .trace(&source, spec, overrides, snap)
                    .map_err(call_error)?;
                passes += t.passes;
                Ok(t)
            };
            let d = run(&diff, c.snapshot)?;
            let g = run(&gas, d.snapshot)?;
            snapshot = g.snapshot;
            let assets = compute(
                &c.traced,
                &prepared.env,
                &prepared.tx,
                &c.post,
                &snapshot,
                Some((&source, &prepared.state_at)),
                &mut passes,
            )?;
            let runs = super::report::Runs {
                call: c.traced,
                diff: d.traced,
                gas: g.traced,
                assets,
                state,
            };
            let mut facts = super::report::tx_facts(chain_id, &prepared.tx, &runs.call, currency);
            facts.insert(
                1,
                (
                    "state".to_string(),
                    format!(
                        "after block {}",
                        u64::from_str_radix(prepared.state_at.trim_start_matches("0x"), 16)
                            .unwrap_or_default()
                    ),
                ),
            );
            let ctx = super::report::Context {
                title: "Simulated call".to_string(),
                facts,
                chain_id,
                receipt: None,
                no_receipt: "a simulated call has no receipt",
                state_check: None,
            };
            super::report::write(html, ctx, &runs, &names, &self.trace, &snapshot)?;
        }
        if let Some(n) = splice_note {
            note!("note: {n}");
        }
        report_rpc(&source, passes);
        Ok(if traced.outcome.success {
            exit::OK
        } else {
            exit::TX_FAILED
        })
    }
}

/// `--remote`: the node's own debug_traceCall, overrides passed as geth's `stateOverrides` and
/// `blockOverrides` members of the trace config.
fn run_remote(
    args: &CallArgs,
    call: Value,
    block_ref: &str,
    state: Option<Value>,
    block: Option<Value>,
) -> Result<u8, CliError> {
    use super::state::{node_result_code, node_tracer_options, print_node_result, report};
    let source = args.rpc.source()?;
    let mut opts = node_tracer_options(&args.trace)?;
    if let Some(s) = state {
        opts["stateOverrides"] = s;
    }
    if let Some(b) = block {
        opts["blockOverrides"] = b;
    }
    let (v, currency) = super::state::node_trace(
        &source,
        "debug_traceCall",
        serde_json::json!([call, block_ref, opts]),
    )?;
    print_node_result(&v, &args.trace, &args.trace.decoder()?, currency)?;
    report(&source, None, None, 0);
    Ok(node_result_code(&v))
}
