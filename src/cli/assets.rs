//! `--assets`: what a transaction moved (`replay::assets`), computed from a callTracer run with
//! logs, its token symbols and decimals read on the state after it.

use chaintrace::replay::assets::metadata::{read_metadata, PostState};
use chaintrace::replay::assets::{asset_changes, AssetChanges, FeeInputs};
use chaintrace::replay::{CallTraced, EvmEnv, ReplayTx, TraceResult};
use chaintrace::source::rpc::RpcSource;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::call::CallTracerConfig;
use chaintrace::trace::TracerSpec;
use clap::Args;

use super::common::{CliError, TraceArgs};

/// `--assets`.
#[derive(Args, Debug, Clone, Default)]
pub struct AssetArgs {
    /// Show what the transaction moved: each address's net change of the native currency
    /// (transfers and fees apart) and of ERC-20/721/1155 tokens, with symbols and decimals read
    /// from the tokens. `tx` shows it by default when anything moved; with `--json --decode` it
    /// is the `assetChanges` member.
    #[arg(long)]
    pub assets: bool,
}

impl AssetArgs {
    /// Refuses `--assets` where it would change geth's JSON.
    pub fn check(&self, trace: &TraceArgs) -> Result<(), CliError> {
        if self.assets && trace.json && !trace.decode {
            return Err(CliError::input(
                "--assets adds to the human output or to --json --decode (assetChanges); plain \
                 --json prints geth's result only",
            ));
        }
        Ok(())
    }
}

/// The callTracer with logs, which asset changes are read from.
pub fn assets_config() -> CallTracerConfig {
    CallTracerConfig {
        with_log: true,
        ..CallTracerConfig::default()
    }
}

/// The callTracer of `spec` when its run records what asset changes need (every frame, with
/// logs): they are then read from that run's call tree, with no second run.
pub fn assets_call(spec: &TracerSpec) -> Option<&CallTracerConfig> {
    match spec {
        TracerSpec::Call(c) if c.with_log && !c.only_top_call => Some(c),
        _ => None,
    }
}

/// Where the state the metadata calls miss comes from: the node at a block (a number tag), or
/// nowhere (a complete snapshot).
pub type StateAt<'a> = Option<(&'a RpcSource, &'a str)>;

/// The asset changes of `traced` (a callTracer run with logs) run as `tx` in `env`, with token
/// metadata read on `post` (fetching what it lacks from `at`); `passes` counts the round trips.
pub fn compute(
    traced: &CallTraced,
    env: &EvmEnv,
    tx: &ReplayTx,
    post: &revm::database::Cache,
    pre: &StateSnapshot,
    at: StateAt<'_>,
    passes: &mut usize,
) -> Result<AssetChanges, CliError> {
    let fee = FeeInputs::new(env, tx, &traced.outcome);
    let mut changes = asset_changes(&traced.root, Some(&fee));
    changes.meta = read_meta(&changes, env, post, pre, at, passes)?;
    Ok(changes)
}

/// Symbols and decimals of the tokens `changes` moved.
pub fn read_meta(
    changes: &AssetChanges,
    env: &EvmEnv,
    post: &revm::database::Cache,
    pre: &StateSnapshot,
    at: StateAt<'_>,
    passes: &mut usize,
) -> Result<
    std::collections::BTreeMap<alloy_primitives::Address, chaintrace::replay::assets::TokenMeta>,
    CliError,
> {
    let tokens = changes.token_addresses();
    if tokens.is_empty() {
        return Ok(Default::default());
    }
    let post = PostState { cache: post, pre };
    let mut fetch =
        |snap: &mut StateSnapshot, misses: &chaintrace::source::Misses| -> Result<(), CliError> {
            match at {
                Some((source, block)) => source.fill(snap, misses, block).map_err(CliError::from),
                None => Ok(()),
            }
        };
    let (meta, n) = read_metadata(&tokens, env, &post, &mut fetch)?;
    *passes += n;
    Ok(meta)
}

/// The asset changes of every transaction a block replay traced (with the callTracer and
/// logs), their token metadata read once on the state after the block.
pub fn block_assets(
    r: &chaintrace::replay::remote::BlockReplay,
    env: &EvmEnv,
    txs: &[ReplayTx],
    at: StateAt<'_>,
    passes: &mut usize,
) -> Result<Vec<AssetChanges>, CliError> {
    let first = txs.len().saturating_sub(r.traces.len());
    // The block's runs are of the user's tracer, which `block --assets` requires to be the
    // callTracer with logs (`assets_call`): another result is an error, never no changes.
    let mut all: Vec<_> = r
        .traces
        .iter()
        .zip(&txs[first..])
        .map(|(t, tx)| match &t.result {
            TraceResult::Call(root) => Ok(asset_changes(
                root,
                Some(&FeeInputs::new(env, tx, &t.outcome)),
            )),
            _ => Err(CliError::source(format!(
                "{}: the block's run holds no call tree for --assets",
                t.hash
            ))),
        })
        .collect::<Result<_, CliError>>()?;
    let mut union = AssetChanges::default();
    for a in &all {
        union.tokens.extend(a.tokens.iter().cloned());
    }
    let meta = read_meta(&union, env, &r.post, &r.snapshot, at, passes)?;
    for a in &mut all {
        for (token, _) in a.token_addresses() {
            if let Some(m) = meta.get(&token) {
                a.meta.insert(token, m.clone());
            }
        }
    }
    Ok(all)
}
