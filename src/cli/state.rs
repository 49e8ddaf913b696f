//! Options for where a mined transaction's pre-state comes from (`--state-source`, the cache),
//! `--remote` (print the node's own trace), and the stderr report of what the node was asked.

use std::io::Write;
use std::path::PathBuf;

use chaintrace::render::decoder::Decoder;
use chaintrace::render::json::write_json;
use chaintrace::render::tree::render_call_tree;
use chaintrace::replay::mined::{Mined, StateMode};
use chaintrace::source::cache::{default_root, Cache};
use chaintrace::source::rpc::RpcSource;
use chaintrace::trace::call::CallFrame;
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::common::{tree_options, CliError, TraceArgs};

/// `--state-source`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StateSourceArg {
    /// Try the node's prestateTracer, fall back to eth_get* state with a note on stderr.
    Auto,
    /// The node's debug_traceTransaction with prestateTracer (two round trips), or fail.
    Prestate,
    /// eth_getBalance/Code/StorageAt, one batch per speculative pass.
    Rpc,
}

/// Where pre-state comes from, and the on-disk cache.
#[derive(Args, Debug, Clone)]
pub struct StateArgs {
    /// Where a mined transaction's pre-state comes from.
    #[arg(long, value_enum, default_value = "auto", value_name = "SOURCE")]
    pub state_source: StateSourceArg,
    /// Cache directory for immutable chain data, and for the project's artifacts, compiled
    /// layouts, verified ABIs and signatures kept between runs [default:
    /// $XDG_CACHE_HOME/chaintrace or ~/.cache/chaintrace].
    #[arg(long, value_name = "DIR", env = "CHAINTRACE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Neither read nor write the on-disk cache, nor any store under it (also
    /// CHAINTRACE_NO_CACHE=1).
    #[arg(long, env = "CHAINTRACE_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

impl StateArgs {
    pub fn mode(&self) -> StateMode {
        match self.state_source {
            StateSourceArg::Auto => StateMode::Auto,
            StateSourceArg::Prestate => StateMode::Prestate,
            StateSourceArg::Rpc => StateMode::Rpc,
        }
    }

    /// The cache, unless `--no-cache` (or no cache directory can be found).
    pub fn cache(&self) -> Option<Cache> {
        self.cache_root().map(Cache::new)
    }

    /// The cache directory: `--cache-dir`, else the default; `None` under `--no-cache` (or when
    /// no directory can be found).
    pub fn cache_root(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache_dir.clone().or_else(|| {
            default_root(
                std::env::var("XDG_CACHE_HOME").ok().as_deref(),
                std::env::var("HOME").ok().as_deref(),
            )
        })
    }
}

/// Prints the cache's warnings and the one-line rpc report on stderr:
/// `rpc: N requests, M calls, K state passes (...)`.
pub fn report(source: &RpcSource, cache: Option<&Cache>, mined: Option<&Mined>, passes: usize) {
    super::common::print_notes(source);
    if let Some(c) = cache {
        for w in c.take_warnings() {
            eprintln!("warning: {w}");
        }
    }
    let st = source.client.stats();
    let state = match mined {
        Some(m) if m.fast => "; state: node prestate",
        Some(_) => "; state: eth_get*",
        None => "",
    };
    let hits = cache.map_or(String::new(), |c| format!("; cache hits: {}", c.hits()));
    note!(
        "rpc: {} requests, {} calls, {} state passes{state}{hits}",
        st.requests,
        st.calls,
        passes
    );
}

/// Prints the fast path's fallback note, if any.
pub fn print_note(m: &Mined) {
    if let Some(n) = &m.note {
        note!("note: {n}");
    }
    if let Some(n) = m.splice_note() {
        note!("note: {n}");
    }
}

/// The tracer options the node is asked for with `--remote`: the same name and config.
pub fn node_tracer_options(args: &TraceArgs) -> Result<Value, CliError> {
    if args.wants_gas() {
        return Err(CliError::input(
            "--gas-report is computed locally; nodes have no such tracer (drop --remote)",
        ));
    }
    let tracer = match super::common::js_source(&args.tracer)? {
        Some(src) => src,
        None => args.tracer.clone(),
    };
    let mut opts = json!({ "tracer": tracer });
    if let Some(c) = &args.tracer_config {
        let cfg: Value = serde_json::from_str(c)
            .map_err(|e| CliError::input(format!("--tracer-config is not valid JSON: {e}")))?;
        opts["tracerConfig"] = cfg;
    }
    if let Some(t) = &args.timeout {
        opts["timeout"] = json!(t);
    }
    Ok(opts)
}

/// Prints a trace the node produced, in the same renderers as a local one: geth JSON with
/// `--json`, a call tree for callTracer results, pretty JSON otherwise.
pub fn print_node_result(
    v: &Value,
    args: &TraceArgs,
    decoder: &Decoder,
    currency: &str,
) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        write_json(&mut out, v)?;
        writeln!(out)?;
    } else if let (Some(frame), true) = (
        serde_json::from_value::<CallFrame>(v.clone()).ok(),
        args.tracer == "callTracer",
    ) {
        let opts = tree_options(currency);
        render_call_tree(&frame, decoder, &opts, &mut out)?;
    } else {
        serde_json::to_writer_pretty(&mut out, v).map_err(std::io::Error::other)?;
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}

/// The node's own trace (`method` with `params`) and the chain's currency symbol, in one round
/// trip.
pub fn node_trace(
    source: &RpcSource,
    method: &str,
    params: Value,
) -> Result<(Value, &'static str), CliError> {
    let calls = [
        ("eth_chainId".to_string(), json!([])),
        (method.to_string(), params),
    ];
    let mut res = source
        .client
        .batch(&calls)
        .map_err(|e| CliError::source(e.to_string()))?
        .into_iter();
    let chain = res.next().and_then(Result::ok);
    let v = res
        .next()
        .unwrap_or(Ok(Value::Null))
        .map_err(|e| CliError::source(e.to_string()))?;
    let currency = chain
        .as_ref()
        .and_then(|c| chaintrace::source::fixture::parse_u64(c).ok())
        .map_or("native", chaintrace::chain::currency);
    Ok((v, currency))
}

/// The exit code for a node's callTracer result: 3 when the top frame failed.
pub fn node_result_code(v: &Value) -> u8 {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        super::common::exit::TX_FAILED
    } else {
        super::common::exit::OK
    }
}

/// `block --remote`: the node's own debug_traceBlockByNumber/ByHash, printed like a local block.
pub fn run_remote_block(
    rpc: &super::common::RpcArgs,
    args: &TraceArgs,
    block_ref: &str,
) -> Result<u8, CliError> {
    let source = rpc.source()?;
    let method = if block_ref.len() == 66 {
        "debug_traceBlockByHash"
    } else {
        "debug_traceBlockByNumber"
    };
    let (v, currency) = node_trace(
        &source,
        method,
        json!([block_ref, node_tracer_options(args)?]),
    )?;
    let decoder = args.decoder()?;
    if args.json {
        print_node_result(&v, args, &decoder, currency)?;
    } else {
        for (i, item) in v.as_array().into_iter().flatten().enumerate() {
            let hash = item["txHash"].as_str().unwrap_or("?");
            writeln!(std::io::stdout().lock(), "\n#{i} {hash}")?;
            print_node_result(&item["result"], args, &decoder, currency)?;
        }
    }
    report(&source, None, None, 0);
    Ok(super::common::exit::OK)
}
