//! Name-source flags (`--signatures`, `--explorer-api`, `--sourcify`, `--no-project`,
//! `--lookup-signatures`; `--abi` lives in [`TraceArgs`]) and the decoder of one trace.

use std::path::PathBuf;
use std::time::Duration;

use chaintrace::names::explorer::{preset_api, Explorer, SOURCIFY_DEFAULT};
use chaintrace::names::signature_db::{SignatureDb, Wanted, SIGNATURE_DB_DEFAULT};
use chaintrace::names::Names;
use chaintrace::render::decoder::Decoder;
use chaintrace::replay::{TraceResult, TracedTx};
use chaintrace::source::cache::default_root;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::gas_context::MarkSource;
use chaintrace::trace::TracerSpec;

use super::common::{CliError, TraceArgs};
use super::foundry::{rpc_alias, Config, ExplorerKey, ETHERSCAN_V2};

impl TraceArgs {
    /// The decoder of `--abi`, project artifacts and `--signatures`, without per-contract ABIs.
    pub fn decoder(&self) -> Result<Decoder, CliError> {
        Ok(load_names(self)?.decoder())
    }
}

/// The run's name sources (explorer not yet attached: it needs the chain id).
pub fn load_names(args: &TraceArgs) -> Result<Names, CliError> {
    load_names_from(&args.abi, &args.names)
}

/// [`load_names`] from `--abi` and the name flags alone (`debug` takes no tracer flags).
pub fn load_names_from(abi: &[String], names: &super::common::NameArgs) -> Result<Names, CliError> {
    let cwd = std::env::current_dir().ok();
    let discover = if names.no_project {
        None
    } else {
        cwd.as_deref()
    };
    let cache = cache_dir();
    let kept = cache.as_ref().map(|d| d.join("names"));
    Names::load_kept(abi, &names.signatures, discover, kept.as_deref())
        .map(|n| {
            n.with_solc(names.solc.clone())
                .with_layout_cache(cache.map(|d| d.join("layouts")))
        })
        .map_err(|e| CliError::input(e.to_string()))
}

/// The command's cache directory ([`super::state::StateArgs::cache_root`]: `--no-cache` and
/// `--cache-dir`, each also read from its environment variable by clap), where it takes them:
/// set once, before the command runs.
static CACHE_ROOT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

/// Sets [`CACHE_ROOT`], for [`cache_dir`].
pub(super) fn set_cache_root(root: Option<PathBuf>) {
    let _ = CACHE_ROOT.set(root);
}

/// The cache directory of the stores beside the chain data (a project's artifacts, compiled
/// layouts, verified ABIs, signatures, a wallet's): the command's, where it takes
/// `--no-cache`/`--cache-dir`, else `CHAINTRACE_NO_CACHE`/`CHAINTRACE_CACHE_DIR`, else the
/// default.
pub(super) fn cache_dir() -> Option<PathBuf> {
    if let Some(root) = CACHE_ROOT.get() {
        return root.clone();
    }
    // The same reading as clap's FalseyValueParser gives `--no-cache`.
    let off = std::env::var("CHAINTRACE_NO_CACHE").is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off" | "n" | "f"
        )
    });
    if off {
        return None;
    }
    std::env::var_os("CHAINTRACE_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            default_root(
                std::env::var("XDG_CACHE_HOME").ok().as_deref(),
                std::env::var("HOME").ok().as_deref(),
            )
        })
}

/// `spec` with the call tracer recording where failed frames were in their code, when a source
/// map may be found and the output names things (the tree, `--decode`): see "Where it failed"
/// in docs/names-and-sources.md. Plain `--json` never records (its output is geth's, and costs nothing more).
///
/// A gas report asked for by line or function follows internal functions by the source maps'
/// jump markers ([`Names::jump_marks`]); without any source map loaded it says so, and every
/// row is a contract's "no source map" row.
/// The call tracer `c` recording where frames were in their code, when names are shown
/// (`shown`) and a source map may match: one is loaded, or Sourcify's answers may bring one
/// after the run.
pub fn record_source_steps(
    c: &mut chaintrace::trace::call::CallTracerConfig,
    names: &Names,
    flags: &super::common::NameArgs,
    shown: bool,
) {
    let maybe = names.has_sources() || flags.sourcify || flags.sourcify_url.is_some();
    c.source_steps = shown && maybe;
    // Internal functions' arguments, read at the jumps the maps mark
    // (`CHAINTRACE_ARGUMENT_VALUES=0`: names alone, what scripts/bench-srcmap.py measures
    // values against).
    let values = std::env::var("CHAINTRACE_ARGUMENT_VALUES").map_or(true, |v| v != "0");
    if c.source_steps && values {
        c.marks = Some(MarkSource(names.jump_marks()));
    }
}

pub fn with_source_steps(mut spec: TracerSpec, names: &Names, args: &TraceArgs) -> TracerSpec {
    match &mut spec {
        TracerSpec::Call(c) => {
            record_source_steps(c, names, &args.names, !args.json || args.decode)
        }
        TracerSpec::Gas(c) if args.by_line || args.by_function => {
            if !names.has_sources() && !args.names.sourcify && args.names.sourcify_url.is_none() {
                eprintln!(
                    "warning: gas by {}: no source map is loaded (give --abi with a solc \
                     standard-JSON output or build info, or run inside a Foundry/Hardhat \
                     project): every contract's gas is one \"no source map\" row",
                    if args.by_line { "line" } else { "function" }
                );
            }
            c.marks = Some(MarkSource(names.jump_marks()));
        }
        _ => {}
    }
    spec
}

/// `spec` without its source steps, when it records them: a replay that locates failures
/// (source steps, and the stack words of internal functions' arguments at the jumps the maps
/// mark) costs about as much again as one that does not, and only failed frames keep what it
/// recorded. A run first replays without them and replays with them ([`needs_source_steps`])
/// only when a frame failed. `None`: `spec` records none, or its steps are used otherwise
/// (gas by line or function).
pub fn without_source_steps(spec: &TracerSpec) -> Option<TracerSpec> {
    match spec {
        TracerSpec::Call(c) if c.source_steps => {
            let mut c = c.clone();
            c.source_steps = false;
            c.marks = None;
            Some(TracerSpec::Call(c))
        }
        _ => None,
    }
}

/// Whether a call tree replayed [`without_source_steps`] must be replayed with them: one of
/// its frames failed (only failed frames are located).
pub fn needs_source_steps(result: &TraceResult) -> bool {
    fn failed(f: &chaintrace::trace::call::CallFrame) -> bool {
        f.error.is_some() || f.calls.iter().any(failed)
    }
    matches!(result, TraceResult::Call(root) if failed(root))
}

/// Attaches the explorer/Sourcify lookup and the signature database when the user opted in,
/// for `chain_id`.
pub fn attach_explorer(names: &mut Names, args: &TraceArgs, chain_id: u64, timeout: Duration) {
    // foundry.toml is read only when names may be printed (plain `--json` prints none).
    let wants_names = !args.json || args.decode || args.wants_gas();
    attach_lookups(names, &args.names, wants_names, chain_id, timeout);
}

/// [`attach_explorer`] from the name flags alone; `wants_names`: whether names will be shown
/// (foundry.toml's explorer keys are read only then).
pub fn attach_lookups(
    names: &mut Names,
    args: &super::common::NameArgs,
    wants_names: bool,
    chain_id: u64,
    timeout: Duration,
) {
    names.signature_db = args.lookup_signatures.then(|| {
        let url = args
            .signature_db_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| SIGNATURE_DB_DEFAULT.to_string());
        SignatureDb::new(url, cache_dir(), timeout)
    });
    let key = std::env::var("ETHERSCAN_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty());
    let configured = wants_names
        .then(|| configured_explorer(chain_id, key.as_deref()))
        .flatten();
    let api = match (&args.explorer_api, configured, &key) {
        (Some(url), Some(c), _) => Some((url.clone(), Some(c.key))),
        (Some(url), None, _) => Some((url.clone(), key.clone())),
        (None, Some(c), _) => {
            let url = c
                .url
                .or_else(|| preset_api(chain_id).map(str::to_string))
                .unwrap_or_else(|| ETHERSCAN_V2.to_string());
            Some((url, Some(c.key)))
        }
        (None, None, Some(k)) => preset_api(chain_id).map(|u| (u.to_string(), Some(k.clone()))),
        (None, None, None) => None,
    };
    let sourcify = match (&args.sourcify_url, args.sourcify) {
        (Some(url), _) => Some(url.clone()),
        (None, true) => Some(SOURCIFY_DEFAULT.to_string()),
        (None, false) => None,
    };
    if api.is_none() && sourcify.is_none() {
        return;
    }
    names.explorer = Some(Explorer::new(chain_id, api, sourcify, cache_dir(), timeout));
}

/// The explorer key foundry.toml's `[etherscan]` gives for `chain_id` (see cli/foundry.rs);
/// `env_key` is `ETHERSCAN_API_KEY`, which may name an entry. A configuration that cannot be
/// read, or an entry with an unset variable, is said on stderr and gives no key: names are a
/// convenience, the trace goes on.
fn configured_explorer(chain_id: u64, env_key: Option<&str>) -> Option<ExplorerKey> {
    let config = match Config::from_process() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("warning: names: foundry.toml [etherscan] not read: {e}");
            return None;
        }
    };
    let var = |v: &str| std::env::var(v).ok();
    match config.explorer_key(chain_id, env_key, rpc_alias(), &var) {
        Ok(k) => k,
        Err(e) => {
            note!("note: names: no explorer key from foundry.toml: {e}");
            None
        }
    }
}

/// The decoder for `traced`: per-contract ABIs only when names will be printed (human output or
/// a gas report, `--decode`); `--json` of a geth tracer stays name-free and offline.
pub fn decoder_for(
    names: &Names,
    args: &TraceArgs,
    traced: &TracedTx,
    state: &StateSnapshot,
) -> Decoder {
    let wants_names = !args.json || args.decode || matches!(traced.result, TraceResult::Gas(_));
    if !wants_names {
        return names.decoder();
    }
    let mut d = names.decoder_for(&traced.result, state);
    for n in names.take_notes() {
        eprintln!("note: {n}");
    }
    add_looked_up(names, &traced.result, &mut d);
    if let Some(e) = &names.explorer {
        if let Ok(f) = e.fetched.lock() {
            if !f.is_empty() {
                note!("names: verified ABIs fetched for {}", f.join(", "));
            }
        }
        if let Ok(f) = e.failed.lock() {
            if !f.is_empty() {
                eprintln!(
                    "warning: names: lookups failed (their names are missing, not absent): {}",
                    f.join(", ")
                );
            }
        }
        warn_cache_failures(&e.cache_failed);
    }
    d
}

/// Adds to `d` the signature database's names for what it cannot name in `result` (from the
/// run's answers and the disk cache, or the run's one request), when the user opted in.
pub fn add_looked_up(names: &Names, result: &TraceResult, d: &mut Decoder) {
    let Some(db) = &names.signature_db else {
        return;
    };
    let mut wanted = Wanted::default();
    wanted.add_unknown(result, d);
    if !wanted.is_empty() {
        d.add_signatures(db.resolve(&wanted));
    }
    warn_failed_lookups(db);
}

/// Names the run's signature lookup failed on, once, on stderr.
fn warn_failed_lookups(db: &SignatureDb) {
    let failed: Vec<String> = db
        .failed
        .lock()
        .map(|mut f| std::mem::take(&mut *f))
        .unwrap_or_default();
    for why in failed {
        eprintln!("warning: signature lookup failed: {why} (names it would give are missing)");
    }
    warn_cache_failures(&db.cache_failed);
}

/// Cache entries of name lookups that could not be written (the next run asks again).
fn warn_cache_failures(list: &std::sync::Mutex<Vec<String>>) {
    let failed = list
        .lock()
        .map(|mut f| std::mem::take(&mut *f))
        .unwrap_or_default();
    for why in failed {
        eprintln!("warning: cannot write cache entry {why}");
    }
}

/// Looks up, in one request, what the decoders of every trace in `traces` cannot name, before
/// they are decoded one by one (a block, or a what-if's two runs): the run's one request covers
/// them all. Nothing happens without `--lookup-signatures` or when names are not printed.
pub fn prefetch_signatures(
    names: &Names,
    args: &TraceArgs,
    traces: &[&TracedTx],
    state: &StateSnapshot,
) {
    let Some(db) = &names.signature_db else {
        return;
    };
    let mut wanted = Wanted::default();
    for t in traces {
        let wants_names = !args.json || args.decode || matches!(t.result, TraceResult::Gas(_));
        if wants_names {
            wanted.add_unknown(&t.result, &names.decoder_for(&t.result, state));
        }
    }
    if !wanted.is_empty() {
        db.resolve(&wanted);
    }
    warn_failed_lookups(db);
}
