//! Name-source flags (`--signatures`, `--explorer-api`, `--sourcify`, `--no-project`; `--abi`
//! lives in [`TraceArgs`]) and the decoder of one trace.

use std::path::PathBuf;
use std::time::Duration;

use chaintrace::names::explorer::{preset_api, Explorer, SOURCIFY_DEFAULT};
use chaintrace::names::Names;
use chaintrace::render::decoder::Decoder;
use chaintrace::replay::{TraceResult, TracedTx};
use chaintrace::source::cache::default_root;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::TracerSpec;

use super::common::{CliError, TraceArgs};

impl TraceArgs {
    /// The decoder of `--abi`, project artifacts and `--signatures`, without per-contract ABIs.
    pub fn decoder(&self) -> Result<Decoder, CliError> {
        Ok(load_names(self)?.decoder())
    }
}

/// The run's name sources (explorer not yet attached: it needs the chain id).
pub fn load_names(args: &TraceArgs) -> Result<Names, CliError> {
    let cwd = std::env::current_dir().ok();
    let discover = if args.names.no_project {
        None
    } else {
        cwd.as_deref()
    };
    Names::load(&args.abi, &args.names.signatures, discover)
        .map_err(|e| CliError::input(e.to_string()))
}

fn cache_dir() -> Option<PathBuf> {
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
/// in the README. Plain `--json` never records (its output is geth's, and costs nothing more).
pub fn with_source_steps(mut spec: TracerSpec, names: &Names, args: &TraceArgs) -> TracerSpec {
    if let TracerSpec::Call(c) = &mut spec {
        c.source_steps = (!args.json || args.decode) && names.has_sources();
    }
    spec
}

/// Attaches the explorer/Sourcify lookup when the user opted in, for `chain_id`.
pub fn attach_explorer(names: &mut Names, args: &TraceArgs, chain_id: u64, timeout: Duration) {
    let key = std::env::var("ETHERSCAN_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty());
    let api = match (&args.names.explorer_api, &key) {
        (Some(url), _) => Some((url.clone(), key.clone())),
        (None, Some(k)) => preset_api(chain_id).map(|u| (u.to_string(), Some(k.clone()))),
        (None, None) => None,
    };
    let sourcify = match (&args.names.sourcify_url, args.names.sourcify) {
        (Some(url), _) => Some(url.clone()),
        (None, true) => Some(SOURCIFY_DEFAULT.to_string()),
        (None, false) => None,
    };
    if api.is_none() && sourcify.is_none() {
        return;
    }
    names.explorer = Some(Explorer::new(chain_id, api, sourcify, cache_dir(), timeout));
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
    let d = names.decoder_for(&traced.result, state);
    if let Some(e) = &names.explorer {
        if let Ok(f) = e.fetched.lock() {
            if !f.is_empty() {
                eprintln!("names: verified ABIs fetched for {}", f.join(", "));
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
    }
    d
}
