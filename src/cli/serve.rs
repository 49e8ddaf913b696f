//! `chaintrace serve`: geth's debug API over any plain node (see `chaintrace::serve`).

use std::net::SocketAddr;
use std::time::Duration;

use chaintrace::serve::{memo::DEFAULT_MAX_ENTRIES, run, ServeConfig, ServeError};
use clap::Args;

use super::common::{exit, resolve_rpc_url, CliError};
use super::state::StateArgs;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The upstream node (http or https, or a foundry.toml [rpc_endpoints] alias); defaults to
    /// $ETH_RPC_URL. Methods serve does not answer are forwarded there unchanged.
    #[arg(long, value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Address to listen on. Anything but loopback needs --auth-token or --insecure.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8546")]
    pub listen: SocketAddr,
    /// Trace workers (calls replayed at once); default: one per core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub workers: Option<u64>,
    /// Trace calls that may wait for a worker; further ones are refused at once as busy
    /// (JSON-RPC error -32005).
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub queue: u64,
    /// Deadline of one request in seconds (a batch: of all its calls), queueing and forwarded
    /// calls included (error -32002 "request timed out").
    #[arg(long, value_name = "SECS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub request_timeout: u64,
    /// Seconds a client has to send a request's headers (idle keep-alive connections are
    /// closed after it), and as long again for its body (HTTP 408 beyond).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub read_timeout: u64,
    /// Seconds to wait for one upstream request (1 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub rpc_timeout: u64,
    /// Largest request body in bytes (HTTP 413 beyond).
    #[arg(long, value_name = "BYTES", default_value_t = 5 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub max_body: u64,
    /// Largest response in bytes (error -32003 "response too large" beyond).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30,
          value_parser = clap::value_parser!(u64).range(1024..=1 << 34))]
    pub max_response: u64,
    /// geth's RPC gas cap for simulated calls (debug_traceCall, trace_call, trace_callMany):
    /// a larger `gas` is lowered to it (with a warning in the request log); a debug_traceCall
    /// without one gets the cap itself, as geth's (a trace_call the block's limit, no more
    /// than the cap, as reth's); 0: no cap.
    #[arg(long, value_name = "GAS", default_value_t = chaintrace::serve::DEFAULT_RPC_GAS_CAP)]
    pub rpc_gas_cap: u64,
    /// The address index (built by `chaintrace index A..B --out DIR`) to answer trace_filter by
    /// address from, replaying only the blocks that touch the addresses; kept current as new
    /// blocks arrive (a reorg undone), and checked against the node before every answer.
    #[arg(long, value_name = "DIR")]
    pub index: Option<std::path::PathBuf>,
    /// Seconds between two syncs of --index with the node's head.
    #[arg(long, value_name = "SECS", default_value_t = 2, requires = "index",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub index_poll: u64,
    /// Blocks replayed ahead of a client walking the chain: when debug_traceBlockByNumber asks
    /// a block near one it asked just before with the same options, up to N blocks after it
    /// are replayed in the background on the ranges engine and their answers kept for the
    /// walk's next requests (0: none).
    #[arg(long, value_name = "N", default_value_t = chaintrace::serve::DEFAULT_AHEAD,
          value_parser = clap::value_parser!(u64).range(0..=1024))]
    pub ahead: u64,
    /// Most blocks one trace_filter request may span: `toBlock - fromBlock` at most this
    /// (reth's rule and default); a larger range is refused with -32602.
    #[arg(long, value_name = "N", default_value_t = chaintrace::serve::DEFAULT_MAX_FILTER_BLOCKS,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub max_filter_blocks: u64,
    /// Most calls in one batch request.
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_batch: u64,
    /// Require `Authorization: Bearer TOKEN` on every request (also $CHAINTRACE_AUTH_TOKEN).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CHAINTRACE_AUTH_TOKEN",
        hide_env_values = true
    )]
    pub auth_token: Option<String>,
    /// Allow listening on a non-loopback address without a token.
    #[arg(long)]
    pub insecure: bool,
    /// Which rules the upstream node runs, as for `tx`: by default the node decides (chains
    /// 1329/1328 by its web3_clientVersion; the OP stack by a Superchain preset's chain id, the
    /// chain data or anvil's OP mode); also replays a chain chaintrace refuses, with a warning.
    #[arg(long, value_enum, value_name = "RULES")]
    pub chain_rules: Option<super::common::ChainRulesArg>,
    /// Answer a replay that disagrees with its receipt (status, gasUsed, logs, L1-fee fields)
    /// with its trace anyway; by default such a call gets a JSON-RPC error naming the
    /// divergence, since its trace is not the chain's.
    #[arg(long)]
    pub allow_divergent: bool,
    /// A custom OP-stack chain the upstream serves: its op-geth genesis or chain config, or
    /// op-node rollup.json (as for `tx`).
    #[arg(long, value_name = "FILE")]
    pub chain_config: Option<String>,
    /// Web origins whose pages may call the server from a browser, e.g. Otterscan's
    /// `http://localhost:5100` (comma-separated or repeated; `*`: any page, which then also
    /// reaches the upstream through the server). None by default.
    #[arg(long, value_name = "ORIGIN", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    #[command(flatten)]
    pub state: StateArgs,
}

impl ServeArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let env = std::env::var("ETH_RPC_URL").ok();
        let upstream =
            resolve_rpc_url(self.rpc_url.as_deref(), env.as_deref())?.ok_or_else(|| {
                CliError::input("no upstream node given: pass --rpc-url URL or set ETH_RPC_URL")
            })?;
        if self.auth_token.as_deref().is_some_and(|t| t.len() < 16) {
            return Err(CliError::input(
                "--auth-token must be at least 16 characters (use a random token)",
            ));
        }
        let workers = self.workers.map(|w| w as usize).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        });
        let cfg = ServeConfig {
            upstream,
            listen: self.listen,
            workers,
            queue: self.queue as usize,
            request_timeout: Duration::from_secs(self.request_timeout),
            read_timeout: Duration::from_secs(self.read_timeout),
            rpc_timeout: Duration::from_secs(self.rpc_timeout),
            max_body: self.max_body as usize,
            max_response: self.max_response as usize,
            max_batch: self.max_batch as usize,
            rpc_gas_cap: self.rpc_gas_cap,
            max_filter_blocks: self.max_filter_blocks,
            ahead: self.ahead,
            index: self.index.clone(),
            index_poll: Duration::from_secs(self.index_poll),
            allow_divergent: self.allow_divergent,
            auth_token: self.auth_token.clone(),
            insecure: self.insecure,
            cache: self.state.cache(),
            mode: self.state.mode(),
            memo_entries: DEFAULT_MAX_ENTRIES,
            chain_rules: self.chain_rules.map(super::common::ChainRulesArg::ruleset),
            op_config: self
                .chain_config
                .as_deref()
                .map(chaintrace::chain::op::OpChainConfig::from_file)
                .transpose()
                .map_err(|e| CliError::input(e.to_string()))?,
            cors_origins: self.cors_origin.clone(),
        };
        keep_heap_tops();
        run(cfg, |addr| {
            use std::io::Write;
            // The one line on stdout: where to point clients (tests and scripts read it).
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening http://{addr}");
            let _ = out.flush();
        })
        .map_err(|e| match e {
            ServeError::Unsafe(_) => CliError::input(e.to_string()),
            ServeError::Upstream(m) => CliError::input(format!("bad --rpc-url: {m}")),
            ServeError::Index(m) => CliError::input(format!("--index: {m}")),
            other => CliError::source(other.to_string()),
        })?;
        Ok(exit::OK)
    }
}

/// A server's requests allocate and free the same few megabytes again and again. glibc gives
/// the top of a heap back to the system once 128 KiB of it is free, and the next request takes
/// it back a page at a time, each a fault the kernel zeroes; past its 128 KiB threshold a
/// buffer is its own mapping, made and unmapped per use. Kept instead: up to 16 MiB free at a
/// heap's top, grown 4 MiB at a time, buffers up to 4 MiB from the heap (with `main`'s one
/// arena per core, at most 32 MiB more kept on 2 cores). `scripts/bench-serve.py`, 4 runs
/// each, alternated: cold blocks 1.35-1.46x anvil without, 1.54-1.70x with; walk
/// 1.87-2.42x, 2.20-2.49x; peak RSS 25-26 MiB both.
fn keep_heap_tops() {
    // SAFETY: malloc tunables, set before the server starts its threads; mallopt takes the
    // allocator's own lock.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 16 << 20);
        libc::mallopt(libc::M_TOP_PAD, 4 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}
