//! The "state changes" of `tx` and `call`: what the transaction changed in storage, by
//! variable (`names::state`), worked out by one more local run of it under the access
//! inspector (its writes with their values before and after, and the KECCAK256 preimages that
//! give mapping keys exactly) — on the state the trace already fetched, so no round trip — and
//! only where a loaded artifact has a `storageLayout`. Printed after the tree (and its asset
//! changes) or as `stateChanges` in `--json --decode` (`state_view.rs`).

use chaintrace::names::state::StateChanges;
use chaintrace::names::Names;
use chaintrace::replay::access::trace_access_keyed;
use chaintrace::replay::mined::Mined;
use chaintrace::source::cache::Cache;
use chaintrace::source::rpc::RpcSource;
use chaintrace::trace::TracerSpec;

use super::common::{CliError, TraceArgs};

/// Whether state changes are shown: the call tree or `--json --decode` of it, and some loaded
/// artifact has a `storageLayout`.
pub fn wanted(args: &TraceArgs, spec: &TracerSpec, names: &Names) -> bool {
    matches!(spec, TracerSpec::Call(_))
        && !args.wants_gas()
        && (!args.json || args.decode)
        && names.has_layouts()
}

/// The storage changes of `mined`'s transaction, by variable; notes go to stderr.
pub fn of_mined(
    mined: &mut Mined,
    source: &RpcSource,
    cache: Option<&Cache>,
    names: &Names,
) -> Result<StateChanges, CliError> {
    let ((rows, preimages), _) = mined.run(source, cache, |db, env, tx, _| {
        trace_access_keyed(db, env, tx)
            .map(|(rows, preimages, outcome)| ((rows, preimages), outcome))
    })?;
    let changes = names.state_changes(&mined.snapshot, &rows, &preimages);
    for n in &changes.notes {
        note!("note: {n}");
    }
    Ok(changes)
}
