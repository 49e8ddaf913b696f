//! Option groups shared by several subcommands, and the error type of the binary edge.

use std::io::Write;
use std::time::Duration;

use alloy_primitives::B256;
use chaintrace::chain::rules::Ruleset;
use chaintrace::chain::{parse_hardfork, HARDFORK_NAMES};
use chaintrace::render::assets::{render_asset_changes, AssetJson};
use chaintrace::render::decoded::write_decoded;
use chaintrace::render::decoder::Decoder;
use chaintrace::render::erc7562::render_erc7562;
use chaintrace::render::gas::{
    gas_json, op_cost_json, render_gas_tables, write_flamegraph, write_stacks_flamegraph,
};
use chaintrace::render::gas_source::{render_source_tables, source_gas_json, SourceTables};
use chaintrace::render::json::{write_json, write_trace};
use chaintrace::render::selectors::{render_flat_calls, render_four_byte, render_preimages};
use chaintrace::render::steps::render_struct_logs;
use chaintrace::render::style::TableStyle;
use chaintrace::render::tree::{render_call_tree, TreeOptions};
use chaintrace::replay::assets::AssetChanges;
use chaintrace::replay::selfcheck::{check, Divergence};
use chaintrace::replay::{ReplayError, TraceResult, TracedTx, TxOutcome};
use chaintrace::rpc::{redact_url, RpcClient};
use chaintrace::source::consensus::ConsensusClient;
use chaintrace::source::error::SourceError;
use chaintrace::source::rpc::RpcSource;
use chaintrace::trace::gas::GasConfig;
use chaintrace::trace::opcode::StructLogError;
use chaintrace::trace::prestate::PrestateResult;
use chaintrace::trace::{TracerKind, TracerSpec};
use clap::Args;
use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use super::output::use_color;

/// Where function, error and event names come from besides `--abi`.
#[derive(Args, Debug, Clone, Default)]
pub struct NameArgs {
    /// Extra signatures: human-readable declarations, one per line (`function f(uint256 a)`,
    /// `error E(address)`, `event T(address indexed from)`), or a JSON ABI. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub signatures: Vec<String>,
    /// Etherscan-compatible explorer API (e.g. https://api.etherscan.io/v2/api) for verified ABIs
    /// by address; the key comes from ETHERSCAN_API_KEY. With only the key set, the chain
    /// preset's API is used.
    #[arg(long, value_name = "URL")]
    pub explorer_api: Option<String>,
    /// Also look verified ABIs up on Sourcify (https://sourcify.dev/server).
    #[arg(long)]
    pub sourcify: bool,
    /// Sourcify server to use instead of the public one (implies --sourcify).
    #[arg(long, value_name = "URL")]
    pub sourcify_url: Option<String>,
    /// Do not look for a Foundry/Hardhat project around the working directory.
    #[arg(long)]
    pub no_project: bool,
    /// Name selectors, custom errors and events that no local source knows from Sourcify's
    /// public signature database (https://api.4byte.sourcify.dev): one request per run, answers
    /// cached on disk. Only when names are printed. Also CHAINTRACE_LOOKUP_SIGNATURES=1.
    #[arg(long, env = "CHAINTRACE_LOOKUP_SIGNATURES", value_parser = clap::builder::FalseyValueParser::new())]
    pub lookup_signatures: bool,
    /// Where --lookup-signatures asks: an openchain-compatible signature database
    /// (`/signature-database/v1/lookup`) instead of Sourcify's, e.g. a self-hosted one. Does not
    /// opt in by itself. (Its value, which may carry an access key, is never shown here.)
    #[arg(
        long,
        value_name = "URL",
        env = "CHAINTRACE_SIGNATURE_DB_URL",
        hide_env_values = true
    )]
    pub signature_db_url: Option<String>,
    /// The solc a source map that does not fit its code is rebuilt with (solc 0.6/0.7 reports a
    /// wrong map for a contract another one of the same build creates with `new`). Without it,
    /// a solc of the build's version is looked for where Foundry (~/.svm) and Hardhat keep
    /// compilers, then on PATH.
    #[arg(long, value_name = "PATH", env = "CHAINTRACE_SOLC")]
    pub solc: Option<std::path::PathBuf>,
}

/// Documented exit codes.
pub mod exit {
    /// Traced, and the traced transaction succeeded.
    pub const OK: u8 = 0;
    /// Bad input or usage.
    pub const BAD_INPUT: u8 = 1;
    /// RPC or source failure.
    pub const SOURCE: u8 = 2;
    /// Traced, and the traced transaction failed at top level.
    pub const TX_FAILED: u8 = 3;
    /// The replay diverged from the chain's receipt.
    pub const DIVERGED: u8 = 4;
    /// `node split-check` found a blocker; `node status`: the height did not move.
    pub const BLOCKER: u8 = 5;
    /// `policy check` / `preflight`: the policy denies the request.
    pub const DENIED: u8 = 6;
    /// `preflight`: the request body would be rejected or mis-signed.
    pub const INVALID_REQUEST: u8 = 7;
    /// `diff`: the local trace and the node's own differ.
    pub const TRACES_DIFFER: u8 = 8;
}

/// An error at the binary edge: a one-line message and its exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    pub fn input(message: impl Into<String>) -> Self {
        CliError {
            code: exit::BAD_INPUT,
            message: message.into(),
        }
    }
    pub fn source(message: impl Into<String>) -> Self {
        CliError {
            code: exit::SOURCE,
            message: message.into(),
        }
    }
}

impl From<SourceError> for CliError {
    fn from(e: SourceError) -> Self {
        match e {
            // The user's file, not the node, is wrong.
            SourceError::WrongChainConfig { .. } | SourceError::OpForkUnknown { .. } => {
                CliError::input(e.to_string())
            }
            e => CliError::source(e.to_string()),
        }
    }
}

impl From<chaintrace::replay::Error> for CliError {
    fn from(e: chaintrace::replay::Error) -> Self {
        match e {
            chaintrace::replay::Error::Source(e) => e.into(),
            // A failing tracer script is bad input, not a failing node.
            chaintrace::replay::Error::Replay(ReplayError::Tracer(m)) => CliError::input(m),
            // A simulated call the state refuses (gas 0, value above the balance) is bad input.
            chaintrace::replay::Error::Replay(e @ ReplayError::Invalid { .. }) if matches!(&e, ReplayError::Invalid { tx, .. } if tx.is_zero()) => {
                CliError::input(e.to_string())
            }
            // A closed pipe (`| head`) while the struct log went to stdout: the reader's choice.
            chaintrace::replay::Error::Replay(ReplayError::StructLog(StructLogError::Write {
                source,
                ..
            })) if source.kind() == std::io::ErrorKind::BrokenPipe => CliError {
                code: exit::OK,
                message: String::new(),
            },
            chaintrace::replay::Error::Replay(e) => CliError::source(e.to_string()),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // A closed pipe (`| head`) is the reader's choice, not a failure.
            return CliError {
                code: exit::OK,
                message: String::new(),
            };
        }
        CliError::source(format!("cannot write output: {e}"))
    }
}

/// Which value names the node: the flag, else `ETH_RPC_URL` (passed in so it can be tested),
/// trimmed, with the name to show in messages.
pub fn rpc_value<'a>(
    flag: Option<&'a str>,
    env: Option<&'a str>,
) -> Option<(&'a str, &'static str)> {
    let (value, what) = match flag {
        Some(f) => (f, "--rpc-url"),
        None => (env?, "ETH_RPC_URL"),
    };
    Some((value.trim(), what)).filter(|(v, _)| !v.is_empty())
}

/// Resolves the node URL of every command that takes one: the flag, else `ETH_RPC_URL`; a value
/// that is not a URL is an alias of foundry.toml's `[rpc_endpoints]`, resolved as `cast`
/// resolves it (cli/foundry.rs). Errors are bad input and never show more than a redacted URL.
pub fn resolve_rpc_url(flag: Option<&str>, env: Option<&str>) -> Result<Option<String>, CliError> {
    rpc_value(flag, env)
        .map(|(value, what)| {
            super::foundry::resolve_rpc_value(value, what).map_err(CliError::input)
        })
        .transpose()
}

/// Where the node is.
#[derive(Args, Debug, Clone)]
pub struct RpcArgs {
    /// JSON-RPC endpoint (http or https), or an alias of foundry.toml's [rpc_endpoints]
    /// (`--rpc-url mainnet`); defaults to $ETH_RPC_URL (a URL or an alias too).
    #[arg(long, value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Seconds to wait for one JSON-RPC request (1 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub rpc_timeout: u64,
    /// Chains 1329/1328: the node's CometBFT RPC (http://host:26657), read for what only the
    /// consensus layer has at each replayed height: the block time's nanoseconds (PREVRANDAO)
    /// and the SSTORE set-cost parameter. Two GETs per block.
    #[arg(long, value_name = "URL")]
    pub consensus_rpc: Option<String>,
    /// Which rules the node runs. By default the node decides: for chains 1329/1328 its
    /// web3_clientVersion (the chain's own node runs the chain's rules; anvil, Hardhat and other
    /// Ethereum clients started with the chain's id run Ethereum's); for the OP stack a
    /// Superchain preset's chain id, the chain data (deposits, L1-fee receipts) or anvil's OP
    /// mode. Also replays a chain chaintrace refuses (Arbitrum, the zk rollups, Blast, Mantle,
    /// Metis, Celo) under the rules given, with a warning.
    #[arg(long, value_enum, value_name = "RULES")]
    pub chain_rules: Option<ChainRulesArg>,
    /// A custom OP-stack chain: its op-geth genesis or chain config (an `optimism` member, the
    /// OP forks as `bedrockBlock`, `regolithTime` … `jovianTime`) or op-node rollup.json; its OP
    /// forks are applied by block time. The node's chain id must be the config's.
    #[arg(long, value_name = "FILE")]
    pub chain_config: Option<String>,
}

/// `--chain-rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ChainRulesArg {
    /// Ethereum's rules, whatever the chain id.
    Ethereum,
    /// The chain's own rules (fee collector, unburned base fee, precompiles, SSTORE cost).
    Chain,
    /// The OP stack's rules (deposits, L1 data fee, operator fee, fee vaults), whatever the
    /// chain id. The Superchain presets (OP Mainnet, Base, OP Sepolia, Base Sepolia, Unichain,
    /// Ink, Soneium, World Chain, Zora, Mode) get them by their chain id, with their fork
    /// schedules; another chain takes its forks from --chain-config, else from block headers
    /// that decide them, else is refused.
    Optimism,
}

impl ChainRulesArg {
    pub fn ruleset(self) -> Ruleset {
        match self {
            ChainRulesArg::Ethereum => Ruleset::Ethereum,
            ChainRulesArg::Chain => Ruleset::Chain,
            ChainRulesArg::Optimism => Ruleset::Optimism,
        }
    }
}

impl RpcArgs {
    pub fn source(&self) -> Result<RpcSource, CliError> {
        let env = std::env::var("ETH_RPC_URL").ok();
        let url = resolve_rpc_url(self.rpc_url.as_deref(), env.as_deref())?.ok_or_else(|| {
            CliError::input("no node given: pass --rpc-url URL or set ETH_RPC_URL")
        })?;
        let client = RpcClient::new(&url, Duration::from_secs(self.rpc_timeout.max(1)))
            .map_err(|e| CliError::input(format!("bad --rpc-url {}: {e}", redact_url(&url))))?;
        let mut source = RpcSource::new(client);
        source.ruleset_override = self.chain_rules.map(ChainRulesArg::ruleset);
        if let Some(path) = &self.chain_config {
            let c = chaintrace::chain::op::OpChainConfig::from_file(path)
                .map_err(|e| CliError::input(e.to_string()))?;
            source.op_config = Some(c);
        }
        if let Some(u) = &self.consensus_rpc {
            let c = ConsensusClient::new(u, Duration::from_secs(self.rpc_timeout.max(1)))
                .map_err(|e| CliError::input(format!("bad --consensus-rpc: {e}")))?;
            source.consensus = Some(c);
        }
        Ok(source)
    }
}

/// Parses a `--hardfork` value; unknown names are bad input listing the known ones.
pub fn hardfork_arg(name: Option<&str>) -> Result<Option<SpecId>, CliError> {
    name.map(|h| {
        parse_hardfork(h).ok_or_else(|| {
            CliError::input(format!("unknown hardfork {h:?}; known: {HARDFORK_NAMES}"))
        })
    })
    .transpose()
}

/// Which tracer, with what config, printed how.
#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Tracer: one geth registers (callTracer, flatCallTracer, prestateTracer, 4byteTracer,
    /// muxTracer, keccak256PreimageTracer, noopTracer, opcodeTracer, erc7562Tracer), `parity`
    /// (Parity's `trace` entries, as reth's trace_transaction gives them), a
    /// JavaScript tracer geth ships by name (bigramTracer, evmdisTracer, opcountTracer,
    /// trigramTracer, unigramTracer, callTracerLegacy, prestateTracerLegacy,
    /// 4byteTracerLegacy, noopTracerLegacy), or your own JavaScript tracer: a .js file, or
    /// inline source starting with '{' (geth's JS tracer API).
    #[arg(long, default_value = "callTracer")]
    pub tracer: String,
    /// Time limit of a JavaScript tracer, Go duration syntax (e.g. 500ms, 10s); default 5s.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Tracer configuration as JSON, e.g. '{"withLog":true}'.
    #[arg(long, value_name = "JSON")]
    pub tracer_config: Option<String>,
    /// Print exactly geth's JSON result on stdout and nothing else.
    #[arg(long)]
    pub json: bool,
    /// With --json and a call tree: print {"result": <geth's result unchanged>, "decoded":
    /// [{"frame", "address", "call", "revert", "logs"}]} with the names the tree would show.
    #[arg(long, requires = "json")]
    pub decode: bool,
    /// Replay under this fork instead of the chain's schedule (e.g. cancun, prague).
    #[arg(long, value_name = "NAME")]
    pub hardfork: Option<String>,
    /// JSON ABI, Foundry/Hardhat artifact, or a directory of them (Foundry `out/`, Hardhat
    /// `artifacts/`) to name functions, errors and events; artifacts are matched to deployed
    /// contracts by runtime code. Repeatable.
    #[arg(long, value_name = "FILE|DIR")]
    pub abi: Vec<String>,
    #[command(flatten)]
    pub names: NameArgs,
    /// Instead of a trace, print where the gas went: by opcode, contract and frame, and the
    /// transaction line (intrinsic, execution, refund, gas used). `--json` gives the same tables.
    #[arg(long)]
    pub gas_report: bool,
    /// With a gas report of one transaction, also write an SVG flamegraph of gas by call stack.
    #[arg(long, value_name = "FILE.svg")]
    pub flamegraph: Option<String>,
    /// In the flamegraph, split each frame's own gas by opcode.
    #[arg(long, requires = "flamegraph", conflicts_with = "by_function")]
    pub by_op: bool,
    /// Gas report: also gas by source line (self and inclusive), from the source maps of the
    /// contracts' artifacts (see "Where it failed" in docs/names-and-sources.md for where they are found).
    #[arg(long)]
    pub by_line: bool,
    /// Gas report: also gas by Solidity function, internal functions included (self and
    /// inclusive); with --flamegraph, the flamegraph's frames are those functions.
    #[arg(long)]
    pub by_function: bool,
    /// Gas tables: every row, instead of the top 10 by gas and one "others" row.
    #[arg(long)]
    pub all: bool,
}

impl TraceArgs {
    pub fn hardfork(&self) -> Result<Option<SpecId>, CliError> {
        hardfork_arg(self.hardfork.as_deref())
    }

    /// The tracer spec; `fallback_config` (a fixture's tracerConfig) applies unless
    /// `--tracer-config` is given.
    /// Whether the output is a gas report (`gas`, `--gas-report`, a flamegraph, gas by source).
    pub fn wants_gas(&self) -> bool {
        self.gas_report || self.flamegraph.is_some() || self.by_line || self.by_function
    }

    /// Which gas-by-source tables were asked for.
    pub fn source_tables(&self) -> SourceTables {
        SourceTables {
            by_line: self.by_line,
            by_function: self.by_function,
        }
    }

    pub fn spec(&self, fallback_config: Option<&Value>) -> Result<TracerSpec, CliError> {
        if self.wants_gas() {
            return Ok(TracerSpec::Gas(GasConfig::default()));
        }
        if let Some(source) = js_source(&self.tracer)? {
            return self.js_spec(&source, fallback_config);
        }
        let kind =
            TracerKind::from_name(&self.tracer).map_err(|e| CliError::input(e.to_string()))?;
        let timeout = self.timeout()?;
        let parsed = self
            .tracer_config
            .as_deref()
            .map(|s| {
                serde_json::from_str::<Value>(s)
                    .map_err(|e| CliError::input(format!("--tracer-config is not valid JSON: {e}")))
            })
            .transpose()?;
        let mut config = parsed.as_ref().or(fallback_config).cloned();
        // The tree for people shows events under their frames: the callTracer records logs
        // unless the config says otherwise. `--json` keeps exactly the config given.
        if !self.json && kind == TracerKind::Call {
            let c = config.get_or_insert_with(|| serde_json::json!({}));
            if let Some(o) = c.as_object_mut() {
                o.entry("withLog").or_insert(Value::Bool(true));
            }
        }
        TracerSpec::named(&self.tracer, config.as_ref(), timeout)
            .map_err(|e| CliError::input(e.to_string()))
    }

    /// `--timeout`: a JavaScript tracer's time limit (geth's default 5 s).
    fn timeout(&self) -> Result<std::time::Duration, CliError> {
        match self.timeout.as_deref() {
            Some(t) => chaintrace::geth::time::parse_go_duration(t)
                .map_err(|e| CliError::input(format!("--timeout: {e}"))),
            None => Ok(chaintrace::trace::DEFAULT_JS_TIMEOUT),
        }
    }

    fn config(&self, fallback: Option<&Value>) -> Result<Option<Value>, CliError> {
        match self.tracer_config.as_deref() {
            Some(s) => serde_json::from_str::<Value>(s)
                .map(Some)
                .map_err(|e| CliError::input(format!("--tracer-config is not valid JSON: {e}"))),
            None => Ok(fallback.cloned()),
        }
    }

    #[cfg(feature = "js")]
    fn js_spec(&self, source: &str, fallback: Option<&Value>) -> Result<TracerSpec, CliError> {
        let timeout = self.timeout()?;
        let config = self.config(fallback)?;
        TracerSpec::js(source, config.as_ref(), timeout).map_err(|e| CliError::input(e.to_string()))
    }

    #[cfg(not(feature = "js"))]
    fn js_spec(&self, _source: &str, fallback: Option<&Value>) -> Result<TracerSpec, CliError> {
        self.config(fallback)?;
        Err(CliError::input(
            "this build has no JavaScript tracers (rebuild with the `js` feature)",
        ))
    }
}

/// The source of a JavaScript tracer given as `--tracer`: inline when it starts with `{`, read
/// from the file when it names a `.js` file; `None` for a tracer name.
pub fn js_source(tracer: &str) -> Result<Option<String>, CliError> {
    #[cfg(feature = "js")]
    if let Some(s) = chaintrace::js::named::source(tracer) {
        return Ok(Some(s.to_string()));
    }
    let t = tracer.trim_start();
    if t.starts_with('{') {
        return Ok(Some(tracer.to_string()));
    }
    if tracer.ends_with(".js") {
        return std::fs::read_to_string(tracer)
            .map(Some)
            .map_err(|e| CliError::input(format!("cannot read tracer {tracer}: {e}")));
    }
    Ok(None)
}

/// Prints the source's notes (which chain rules, which fork) on stderr.
/// Doubts (the fork a header fits) are held for a failed self-check, or shown with `-v`.
pub fn print_notes(source: &RpcSource) {
    for n in source.take_notes() {
        if n.starts_with("warning: ") {
            note!("{n}");
        } else {
            note!("note: {n}");
        }
    }
    for n in source.take_doubts() {
        super::output::doubt(n);
    }
}

/// Reports what the node was asked, on stderr: HTTP requests, JSON-RPC calls, state passes.
pub fn report_rpc(source: &RpcSource, passes: usize) {
    print_notes(source);
    let st = source.client.stats();
    note!(
        "rpc: {} requests, {} calls, {} state passes",
        st.requests,
        st.calls,
        passes
    );
}

/// Tables for people: UTF-8 box drawing where colour is on ([`use_color`]: `--color`, else a
/// terminal without NO_COLOR), ASCII otherwise.
pub fn table_style(all: bool) -> TableStyle {
    TableStyle {
        utf8: use_color(),
        all,
    }
}

/// Call-tree options for the terminal: colour by [`use_color`], logs shown.
pub fn tree_options(currency: &str) -> TreeOptions {
    TreeOptions {
        color: use_color(),
        show_logs: true,
        currency: currency.to_string(),
        deposit: None,
    }
}

/// Prints one traced transaction for people or as geth JSON.
pub fn print_trace(
    t: &TracedTx,
    args: &TraceArgs,
    decoder: &Decoder,
    currency: &str,
    assets: Option<&AssetChanges>,
    state: Option<&chaintrace::names::state::StateChanges>,
) -> Result<(), CliError> {
    let state = state.filter(|s| s.shown());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let TraceResult::Gas(report) = &t.result {
        let by_source = decoder.sources().and_then(|s| s.gas.as_ref());
        if let Some(path) = &args.flamegraph {
            let file = std::fs::File::create(path)
                .map_err(|e| CliError::input(format!("cannot write {path}: {e}")))?;
            let file = std::io::BufWriter::new(file);
            let written = match by_source.filter(|_| args.by_function) {
                Some(g) => write_stacks_flamegraph(&g.stacks, "Gas by Solidity function", file),
                None => write_flamegraph(report, decoder, args.by_op, file),
            };
            written.map_err(|e| {
                CliError::source(format!("cannot write the flamegraph {path}: {e}"))
            })?;
            note!("flamegraph: {path}");
        }
        let which = args.source_tables();
        let op = t.outcome.op_fee.as_ref().map(|f| f.cost);
        if args.json {
            let mut v = gas_json(report, decoder);
            if let (Some(c), Some(o)) = (&op, v.as_object_mut()) {
                o.insert("cost".to_string(), op_cost_json(c));
            }
            if let (Some(g), Some(o)) = (by_source, v.as_object_mut()) {
                o.extend(
                    source_gas_json(g, which)
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v)),
                );
            }
            write_json(&mut out, &v)?;
            writeln!(out)?;
        } else {
            let op = op.as_ref().map(|c| (c, currency));
            render_gas_tables(report, decoder, op, table_style(args.all), &mut out)?;
            if let Some(g) = by_source {
                render_source_tables(g, which, table_style(args.all), &mut out)?;
            }
        }
    } else if args.json && args.decode {
        let json = assets.map(|a| AssetJson::new(a, currency));
        let state = state.map(super::state_view::to_json);
        write_decoded(&mut out, &t.result, decoder, json.as_ref(), state.as_ref())?;
        writeln!(out)?;
    } else if args.json {
        match &t.result {
            // Written to stdout as the replay ran.
            TraceResult::StructLog(r) if r.streamed => {}
            result => write_trace(&mut out, result)?,
        }
        writeln!(out)?;
    } else {
        match &t.result {
            TraceResult::Call(frame) => {
                let opts = TreeOptions {
                    deposit: t.outcome.deposit,
                    ..tree_options(currency)
                };
                render_call_tree(frame, decoder, &opts, &mut out)?;
            }
            TraceResult::StructLog(r) => render_struct_logs(r, &mut out)?,
            TraceResult::FourByte(counts) => {
                render_four_byte(counts, decoder, table_style(args.all), &mut out)?
            }
            TraceResult::FlatCall(frames) => {
                render_flat_calls(frames, decoder, table_style(true), &mut out)?
            }
            TraceResult::Keccak256Preimage(hashes) => {
                render_preimages(hashes, table_style(true), &mut out)?
            }
            TraceResult::Erc7562(frame) => render_erc7562(frame, &mut out)?,
            TraceResult::Prestate(PrestateResult::Diff { pre, post }) => {
                super::state_view::render_prestate_diff(pre, post, state, &mut out)?
            }
            other => {
                let v = serde_json::to_value(other).map_err(|e| CliError::source(e.to_string()))?;
                serde_json::to_writer_pretty(&mut out, &v).map_err(std::io::Error::other)?;
                writeln!(out)?;
            }
        }
    }
    if let (Some(a), false) = (assets, args.json) {
        writeln!(out)?;
        render_asset_changes(a, decoder, currency, table_style(args.all), &mut out)?;
    }
    // A prestate diff's slots are named in it.
    let diff = matches!(
        &t.result,
        TraceResult::Prestate(PrestateResult::Diff { .. })
    );
    if let (Some(s), false, false) = (state, args.json, diff) {
        writeln!(out)?;
        super::state_view::render(s, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// Parses a 32-byte hash given on the command line.
pub fn parse_hash(s: &str, what: &str) -> Result<B256, CliError> {
    let t = s.trim();
    if !(t.len() == 66 && t.starts_with("0x")) {
        return Err(CliError::input(format!(
            "malformed {what} {s:?}: expected 0x followed by 64 hex digits"
        )));
    }
    t.parse()
        .map_err(|_| CliError::input(format!("malformed {what} {s:?}: not hex")))
}

/// Reports the self-check on stderr and turns the outcome into the documented exit code.
///
/// A receipt the check could not read in full is a source failure (exit 2): the trace was
/// printed, but "matches" is never said of fields that were not compared.
///
/// `state` is the comparison with the node's own state diff made when chain precompile frames
/// were spliced (accounts compared, items that differ); a difference there fails the check too.
pub fn finish(
    hash: B256,
    outcome: &TxOutcome,
    receipt: Option<&Value>,
    quiet: bool,
    state: Option<&(usize, Vec<String>)>,
) -> u8 {
    let report = receipt.map(|r| check(outcome, r)).unwrap_or_default();
    let divergences: Vec<Divergence> = report.divergences;
    let state_items = state.map_or(&[][..], |(_, items)| items.as_slice());
    if !divergences.is_empty() || !state_items.is_empty() {
        eprintln!(
            "self-check FAILED for {}: the replay differs from the {}",
            hash,
            if divergences.is_empty() {
                "node's post-state"
            } else {
                "receipt"
            }
        );
        for d in &divergences {
            eprintln!("  {d}");
        }
        for s in state_items {
            eprintln!("  state {s}");
        }
        for u in &report.unchecked {
            eprintln!("  not checked: {u}");
        }
        super::output::release_held();
        return exit::DIVERGED;
    }
    if !report.unchecked.is_empty() {
        eprintln!(
            "self-check NOT DONE for {}: the receipt could not be read ({})",
            hash,
            report.unchecked.join("; ")
        );
        return exit::SOURCE;
    }
    if receipt.is_some() && !quiet {
        let post = match state {
            Some((n, _)) => format!(" and the node's post-state of {n} account(s)"),
            None => String::new(),
        };
        // On the OP stack, which L1-fee fields of the receipt were compared.
        let op = match &report.op_fields {
            None => String::new(),
            Some(f) if f.is_empty() => "; the receipt has no L1-fee fields to compare".into(),
            Some(f) => format!("; L1 fee fields {}", f.join(", ")),
        };
        note!(
            "self-check: replay matches the receipt (status {}, gasUsed {}, {} logs{op}){post}",
            if outcome.success { "success" } else { "failed" },
            outcome.gas_used,
            outcome.logs.len()
        );
    }
    if outcome.success {
        exit::OK
    } else {
        exit::TX_FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::{resolve_rpc_url, rpc_value};

    #[test]
    fn flag_wins_over_environment() {
        let url = |f, e| resolve_rpc_url(f, e).unwrap();
        assert_eq!(
            url(Some("http://a"), Some("http://b")).as_deref(),
            Some("http://a")
        );
        assert_eq!(url(None, Some(" http://b ")).as_deref(), Some("http://b"));
        assert_eq!(url(None, Some("")), None);
        assert_eq!(url(None, None), None);
        assert_eq!(
            rpc_value(None, Some("mainnet")),
            Some(("mainnet", "ETH_RPC_URL"))
        );
        assert_eq!(
            rpc_value(Some(" local "), Some("mainnet")),
            Some(("local", "--rpc-url"))
        );
    }
}
