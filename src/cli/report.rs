//! `--html FILE` of `tx`, `call` and `gas`: the self-contained report (`render::html`), made
//! from three more local runs of the same transaction on the state already fetched — the call
//! tree with logs (and source positions when a source map may match), the prestate diff and
//! the gas report — plus its asset changes and, where an artifact has a storage layout, its
//! storage changes by variable.

use std::io::Write;

use alloy_primitives::B256;
use chaintrace::names::Names;
use chaintrace::render::gas::write_flamegraph;
use chaintrace::render::html::{write_report, Check, Report, Verdict};
use chaintrace::replay::assets::check::compare_with_diff;
use chaintrace::replay::assets::{format_units, AssetChanges};
use chaintrace::replay::selfcheck::check;
use chaintrace::replay::{CallTraced, ReplayTx, TraceResult, TracedTx};
use chaintrace::source::StateSnapshot;
use chaintrace::trace::call::CallTracerConfig;
use chaintrace::trace::{TracerKind, TracerSpec};
use serde_json::Value;

use super::common::{CliError, TraceArgs};
use super::names::decoder_for;

/// The runs a report is made of.
pub struct Runs {
    /// The callTracer with logs (and source positions when a source map may match).
    pub call: CallTraced,
    /// The prestateTracer in diffMode.
    pub diff: TracedTx,
    pub gas: TracedTx,
    pub assets: AssetChanges,
    /// The storage changes by variable, where some artifact has a storage layout.
    pub state: Option<chaintrace::names::state::StateChanges>,
}

/// The three tracers a report runs: call tree (the callTracer with logs, and source positions
/// when a source map may match), prestate diff, gas.
pub fn specs(names: &Names) -> (CallTracerConfig, TracerSpec, TracerSpec) {
    let mut call = super::assets::assets_config();
    call.source_steps = names.has_sources();
    if call.source_steps {
        call.marks = Some(chaintrace::trace::gas_context::MarkSource(
            names.jump_marks(),
        ));
    }
    let diff = TracerSpec::new(
        TracerKind::Prestate,
        Some(&serde_json::json!({"diffMode": true})),
    )
    .expect("the prestateTracer takes diffMode");
    (call, diff, TracerSpec::Gas(Default::default()))
}

/// What the report says about a transaction or call besides its traces.
pub struct Context<'a> {
    pub title: String,
    pub facts: Vec<(String, String)>,
    pub chain_id: u64,
    /// The receipt of a mined transaction (`None`: a simulated call, or a fixture without one).
    pub receipt: Option<&'a Value>,
    /// Why there is no receipt to compare with, when there is none.
    pub no_receipt: &'a str,
    /// The comparison with the node's post-state, when chain precompiles were spliced.
    pub state_check: Option<(usize, Vec<String>)>,
}

/// The command line, each argument quoted for a POSIX shell where needed, URLs without their
/// secrets.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let a = match a.split_once("://") {
                Some(_) => match a.split_once('=') {
                    Some((flag, url)) if flag.starts_with("--") => {
                        format!("{flag}={}", chaintrace::rpc::redact_url(url))
                    }
                    _ => chaintrace::rpc::redact_url(&a),
                },
                None => a,
            };
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+#".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Facts every report has: chain, sender, recipient, value, status, gas.
pub fn tx_facts(
    chain_id: u64,
    tx: &ReplayTx,
    t: &CallTraced,
    currency: &str,
) -> Vec<(String, String)> {
    let mut f = vec![
        (
            "chain".to_string(),
            format!("{chain_id} (native currency: {currency})"),
        ),
        ("from".to_string(), tx.sender.to_checksum(None)),
        (
            "to".to_string(),
            tx.to().map_or_else(
                || "(contract creation)".to_string(),
                |a| a.to_checksum(None),
            ),
        ),
        (
            "value".to_string(),
            format!("{} {currency}", format_units(tx.env.value, 18)),
        ),
        (
            "status".to_string(),
            if t.outcome.success {
                "success".to_string()
            } else {
                format!(
                    "failed{}",
                    t.outcome
                        .halt
                        .as_deref()
                        .map(|h| format!(" ({h})"))
                        .unwrap_or_default()
                )
            },
        ),
        (
            "gas".to_string(),
            format!("{} used of {}", t.outcome.gas_used, tx.env.gas_limit),
        ),
    ];
    if t.hash != B256::ZERO {
        f.insert(1, ("transaction".to_string(), format!("{:?}", t.hash)));
    }
    let units = |v: alloy_primitives::U256| format!("{} {currency}", format_units(v, 18));
    // An OP-stack deposit, as the tree marks it.
    if let Some((_, d)) = &t.outcome.deposit {
        let kind = if d.is_system_tx {
            "deposit from L1 (system transaction)"
        } else {
            "deposit from L1"
        };
        f.push((
            kind.to_string(),
            format!(
                "mint {}, source hash {:?}",
                units(d.mint.unwrap_or_default()),
                d.source_hash
            ),
        ));
    }
    // An OP-stack user transaction's cost, as the gas report splits it.
    if let Some(c) = t.outcome.op_fee.as_ref().map(|o| &o.cost) {
        f.push((
            "cost".to_string(),
            format!(
                "{}: L2 execution {} (base fee {}, priority fee {}), L1 data fee {}, operator \
                 fee {}",
                units(c.total()),
                units(c.execution()),
                units(c.base),
                units(c.priority),
                units(c.l1),
                units(c.operator)
            ),
        ));
    }
    f
}

fn checks(ctx: &Context<'_>, runs: &Runs) -> Vec<Check> {
    let mut out = Vec::new();
    match ctx.receipt {
        Some(r) => {
            let c = check(&runs.call.outcome, r);
            let o = &runs.call.outcome;
            out.push(if !c.divergences.is_empty() {
                Check {
                    verdict: Verdict::Failed,
                    what: "the replay against the chain's receipt".into(),
                    details: c.divergences.iter().map(|d| d.to_string()).collect(),
                }
            } else if !c.unchecked.is_empty() {
                Check {
                    verdict: Verdict::NotChecked,
                    what: "the replay against the chain's receipt (it could not be read)".into(),
                    details: c.unchecked.clone(),
                }
            } else {
                Check {
                    verdict: Verdict::Passed,
                    what: format!(
                        "the replay matches the chain's receipt: status {}, gasUsed {}, {} logs",
                        if o.success { "success" } else { "failed" },
                        o.gas_used,
                        o.logs.len()
                    ),
                    details: Vec::new(),
                }
            });
        }
        None => out.push(Check {
            verdict: Verdict::NotChecked,
            what: format!("against a receipt: {}", ctx.no_receipt),
            details: Vec::new(),
        }),
    }
    if let Some((n, items)) = &ctx.state_check {
        out.push(Check {
            verdict: if items.is_empty() {
                Verdict::Passed
            } else {
                Verdict::Failed
            },
            what: format!("the replay's final state against the node's own diff of {n} account(s)"),
            details: items.clone(),
        });
    }
    let differences = match &runs.diff.result {
        TraceResult::Prestate(p) => compare_with_diff(&runs.assets, p),
        _ => vec!["the state diff run gave no prestate result".to_string()],
    };
    out.push(Check {
        verdict: if differences.is_empty() {
            Verdict::Passed
        } else {
            Verdict::Failed
        },
        what: "native changes (value transfers and fees) against the balances of the replay's \
               state diff"
            .into(),
        details: differences,
    });
    out.push(Check {
        verdict: Verdict::NotChecked,
        what: "token changes and symbols: read from the logs and from the tokens' own \
               symbol()/decimals(), not compared with balances"
            .into(),
        details: Vec::new(),
    });
    out
}

/// Writes the report of `runs` to `path` and says so on stderr.
pub fn write(
    path: &str,
    ctx: Context<'_>,
    runs: &Runs,
    names: &Names,
    args: &TraceArgs,
    state: &StateSnapshot,
) -> Result<(), CliError> {
    let mut human = args.clone();
    human.json = false;
    human.decode = false;
    // The decoder reads a tracer's result: the call tree as one.
    let decoder = decoder_for(names, &human, &runs.call.clone().into_traced(), state);
    let currency = chaintrace::chain::currency(ctx.chain_id);
    let flame = match &runs.gas.result {
        TraceResult::Gas(g) => {
            let mut svg = Vec::new();
            write_flamegraph(g, &decoder, false, &mut svg)
                .map_err(|e| CliError::source(format!("cannot draw the flamegraph: {e}")))?;
            Some(String::from_utf8_lossy(&svg).into_owned())
        }
        _ => None,
    };
    let report = Report {
        title: ctx.title.clone(),
        facts: ctx.facts.clone(),
        command: command_line(),
        call: Some(&runs.call.root),
        decoder: &decoder,
        currency,
        assets: Some(&runs.assets),
        state: runs.state.as_ref().filter(|s| s.shown()),
        diff: match &runs.diff.result {
            TraceResult::Prestate(p) => Some(p),
            _ => None,
        },
        gas: match &runs.gas.result {
            TraceResult::Gas(g) => Some(g),
            _ => None,
        },
        flamegraph: flame.as_deref(),
        checks: checks(&ctx, runs),
        generator: format!("chaintrace {}", env!("CARGO_PKG_VERSION")),
    };
    let mut buf = Vec::new();
    write_report(&report, &mut buf)?;
    std::fs::write(path, &buf).map_err(|e| CliError::input(format!("cannot write {path}: {e}")))?;
    let _ = std::io::stderr().flush();
    note!("report: {path} ({} bytes)", buf.len());
    Ok(())
}
