//! Replaying one mined transaction from a node, in as few round trips as the node allows.
//!
//! * **Fast path** (`prestate`): the first batch asks for the node's identity, the transaction,
//!   its receipt and the node's `prestateTracer` pre-state; the second for the block header. The
//!   replay then runs offline on that exact pre-state, with no earlier transaction replayed.
//! * **RPC path** (`rpc`): the block's earlier transactions are replayed on the parent block's
//!   state, fetched by speculative prefetch (one batch per pass).
//! * `auto` tries the fast path and falls back to the RPC path, saying why in [`Mined::note`].
//!
//! With a [`Cache`], everything fetched is immutable and stored; a second trace of the same
//! transaction costs one small request (the node's identity) and no state request.
//!
//! A miss on the fast path (something the node's prestate left out) is fetched from the parent
//! block only when that is exact (the first transaction of its block, or a block hash); otherwise
//! the replay falls back to the RPC path rather than guess. The passes run in the replay driver
//! ([`super::driver`]): the RPC path's prefetch, speculative passes untraced, the traced one
//! last, and the one pass that writes struct logs through to an output.

use alloy_primitives::{keccak256, B256};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

use super::driver::{traced_once, DriveError, Driver, Frames, Plan, Ran};
use super::{BlockInfo, EvmEnv, ReplayError, ReplayTx};

use crate::replay::splice::Splice;
use crate::rpc::RpcError;
use crate::source::cache::{Cache, Kind};
use crate::source::error::SourceError;
use crate::source::prestate_rpc::{
    block_json, first_log_index, first_round, h256, merge_json, snapshot_from_prestate,
    snapshot_to_json, Identity,
};
use crate::source::rpc::RpcSource;
use crate::source::rpc::{block_info_from_json, tx_from_json, RpcBlock};
use crate::source::{ReplayDb, StateSnapshot};

/// Where the pre-state comes from (`--state-source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateMode {
    Auto,
    Prestate,
    Rpc,
}

/// A mined transaction ready to replay: chain data, environment and pre-state.
pub struct Mined {
    pub chain_id: u64,
    pub tx_json: Value,
    pub receipt: Value,
    pub info: BlockInfo,
    pub env: EvmEnv,
    /// Earlier transactions of the block, replayed untraced first (RPC path only).
    pub prefix: Vec<ReplayTx>,
    pub target: ReplayTx,
    /// Block-wide index of the target's first log (fast path; the RPC path counts the prefix).
    log_offset: u64,
    pub snapshot: StateSnapshot,
    /// State round trips spent so far.
    pub passes: usize,
    /// True when the pre-state is the node's prestate (fast path).
    pub fast: bool,
    /// Why the fast path was not used, for a one-line note on stderr.
    pub note: Option<String>,
    parent: String,
    parent_hash: B256,
    /// Position of the transaction in its block.
    pub index: usize,
    /// The snapshot's extent when it was last saved to the cache: each pass of a run (the
    /// trace's, the state changes' access run) saves only what it added.
    saved: Option<(bool, [usize; 4])>,
    /// Whether the last drive that ran to its end without a `prepare` skipped unknown vaults
    /// (the one way its environment differs from another's): a next such drive in the same
    /// environment finds nothing missing ([`Driver::settled`]).
    settled: Option<bool>,
}

/// The fork for a block of a chain, honouring an explicit `--hardfork`.
pub fn spec_for(chain_id: u64, info: &BlockInfo, hardfork: Option<SpecId>) -> SpecId {
    hardfork.unwrap_or_else(|| {
        crate::chain::block_spec(
            chain_id,
            info.number,
            info.timestamp,
            info.header_fork,
            info.ruleset == crate::chain::rules::Ruleset::Chain,
        )
    })
}

/// What traces the target: its database, environment, the transaction and the block-wide index
/// of its first log.
type TargetFn<'f, T> =
    &'f dyn Fn(&mut ReplayDb<'_>, &EvmEnv, &ReplayTx, u64) -> Result<T, ReplayError>;

/// The node's identity, the transaction, its receipt, and the node's prestate when asked for
/// (the node's error when it could not give it).
type FirstFetch = (Identity, Value, Value, Option<Result<Value, RpcError>>);

/// Learns the node's chain, and fetches (or reads from the cache) the transaction, its receipt
/// and, unless `mode` is `Rpc`, the node's prestate for it.
fn fetch_first(
    source: &RpcSource,
    cache: Option<&Cache>,
    hash: B256,
    mode: StateMode,
) -> Result<FirstFetch, super::Error> {
    let url_key = format!("{:x}", keccak256(source.client.redacted_url()));
    let memo = cache
        .and_then(|c| c.get(Kind::Endpoint, &url_key))
        .and_then(|v| Identity::from_json(&v));
    if let (Some(c), Some(id)) = (cache, memo) {
        c.select_chain(id.chain_id, id.genesis);
    }
    let key = format!("{hash:?}");
    let get = |k: Kind| {
        cache
            .filter(|_| memo.is_some())
            .and_then(|c| c.get(k, &key))
    };
    let mut tx = get(Kind::Tx);
    let want_pre = mode != StateMode::Rpc;
    let mut pre = if want_pre {
        get(Kind::Prestate).map(Ok)
    } else {
        None
    };
    let first = first_round(source, hash, tx.is_none(), want_pre && pre.is_none())?;
    let id = first.identity;
    if let Some(c) = cache {
        if memo != Some(id) {
            // First visit, or the URL now serves another chain: what was read is not for it.
            c.select_chain(id.chain_id, id.genesis);
            c.put(Kind::Endpoint, &url_key, &id.to_json());
            if first.tx.is_none() {
                tx = c.get(Kind::Tx, &key);
            }
            if want_pre && first.prestate.is_none() {
                pre = c.get(Kind::Prestate, &key).map(Ok);
            }
        }
    }
    let (tx, receipt) = match (first.tx, tx) {
        (Some(pair), _) => pair,
        (None, Some(v)) => (v["tx"].clone(), v["receipt"].clone()),
        (None, None) => {
            // The identity memo was stale and the new chain's cache lacks the entry.
            let again = first_round(source, hash, true, want_pre && pre.is_none())?;
            pre = pre.or(again.prestate);
            again.tx.expect("asked for the transaction")
        }
    };
    let pre = pre.or(first.prestate);
    if let Some(c) = cache {
        if !receipt.is_null() {
            c.put(Kind::Tx, &key, &json!({"tx": tx, "receipt": receipt}));
        }
        if let Some(Ok(p)) = &pre {
            c.put(Kind::Prestate, &key, p);
        }
    }
    Ok((id, tx, receipt, pre))
}

impl Mined {
    /// Fetches everything needed to replay transaction `hash` (see the module docs).
    pub fn load(
        source: &RpcSource,
        cache: Option<&Cache>,
        hash: B256,
        mode: StateMode,
        hardfork: Option<SpecId>,
    ) -> Result<Mined, super::Error> {
        let (id, tx_json, receipt, pre) = fetch_first(source, cache, hash, mode)?;
        let block_hash = h256(&tx_json, "blockHash")
            .filter(|_| !receipt.is_null())
            .ok_or_else(|| SourceError::BadData {
                what: "transaction".into(),
                reason: format!("{hash} is not mined yet (no receipt)"),
            })?;
        let index = tx_json
            .get("transactionIndex")
            .and_then(|v| crate::geth::hex::parse_u64(v).ok())
            .unwrap_or(0) as usize;
        let note = match pre {
            Some(Ok(p)) => {
                let mut snapshot = snapshot_from_prestate(&p)?;
                let evidence = crate::source::node_rules::tx_op_evidence(&tx_json, &receipt);
                let fees = tx_json
                    .get("blockNumber")
                    .and_then(|v| crate::geth::hex::parse_u64(v).ok())
                    .filter(|&n| source.op_likely(id.chain_id, n, evidence))
                    .map(|n| crate::source::op_fee_reads::op_fee_misses(n, index, &snapshot))
                    .filter(|(m, _)| !m.is_empty());
                let head = crate::source::op_fee_reads::header_and_fees(source, cache, block_hash, fees, &mut snapshot)?;
                let mut info = block_info_from_json(&head)?;
                info.op_evidence = evidence;
                let spec = source.prepare_block(id.chain_id, &mut info, hardfork)?;
                let env = EvmEnv::new(spec, id.chain_id, &info);
                let parent_hash = h256(&head, "parentHash").unwrap_or_default();
                if let Some(s) = cache.and_then(|c| c.get(Kind::State, &format!("{parent_hash:?}")))
                {
                    merge_json(&mut snapshot, &s, false);
                }
                return Ok(Mined {
                    chain_id: id.chain_id,
                    target: tx_from_json(&tx_json)?,
                    log_offset: first_log_index(&receipt).unwrap_or(0),
                    tx_json,
                    receipt,
                    parent: source.parent_at(&info),
                    info,
                    env,
                    prefix: Vec::new(),
                    snapshot,
                    passes: 0,
                    fast: true,
                    note: None,
                    parent_hash,
                    index,
                    saved: None,
                    settled: None,
                });
            }
            Some(Err(e)) if mode == StateMode::Prestate => {
                return Err(SourceError::BadData {
                    what: "prestate".into(),
                    reason: format!("{e}; use --state-source rpc"),
                }.into())
            }
            Some(Err(e)) => Some(format!(
                "the node's prestateTracer is unavailable ({e}); fetching state with eth_get* instead"
            )),
            None => None,
        };
        let mut m = Self::load_rpc(source, cache, id.chain_id, tx_json, receipt, hardfork)?;
        m.note = note;
        Ok(m)
    }

    fn load_rpc(
        source: &RpcSource,
        cache: Option<&Cache>,
        chain_id: u64,
        tx_json: Value,
        receipt: Value,
        hardfork: Option<SpecId>,
    ) -> Result<Mined, super::Error> {
        let block_hash = h256(&tx_json, "blockHash").unwrap_or_default();
        let raw = block_json(source, cache, block_hash, true)?;
        let block: RpcBlock = RpcSource::parse_block(&raw)?;
        let hash = h256(&tx_json, "hash").unwrap_or_default();
        let index = block
            .txs
            .iter()
            .position(|t| t.hash == hash)
            .ok_or_else(|| SourceError::BadData {
                what: "block".into(),
                reason: format!("transaction {hash} is not in its block {block_hash}"),
            })?;
        let mut info = block.info.clone();
        // What the transaction itself shows, as on the fast path (whose header has no
        // transactions): the same rules whichever way the state comes.
        info.op_evidence = crate::source::node_rules::tx_op_evidence(&tx_json, &receipt);
        let spec = source.prepare_block(chain_id, &mut info, hardfork)?;
        let env = EvmEnv::new(spec, chain_id, &info);
        let parent_hash = h256(&raw, "parentHash").unwrap_or_default();
        let mut snapshot = StateSnapshot::partial();
        if let Some(s) = cache.and_then(|c| c.get(Kind::State, &format!("{parent_hash:?}"))) {
            merge_json(&mut snapshot, &s, true);
        }
        let mut txs = block.txs;
        txs.truncate(index + 1);
        let target = txs.pop().expect("index is in range");
        let mut m = Mined {
            chain_id,
            tx_json,
            receipt,
            parent: source.parent_at(&info),
            info,
            env,
            prefix: txs,
            target,
            log_offset: 0,
            snapshot,
            passes: 0,
            fast: false,
            note: None,
            parent_hash,
            index,
            saved: None,
            settled: None,
        };
        let (txs, _) = m.txs();
        let mut driver = Driver::new(source, &m.parent);
        driver.prefetch(&mut m.snapshot, &txs, &m.env)?;
        m.passes += driver.passes;
        Ok(m)
    }

    /// Runs the target (after the prefix) in the replay driver until the pre-state is complete
    /// for it, and returns what `f` returned on the traced pass. `f` gets the database,
    /// environment, target and the block-wide index of its first log.
    pub fn run<T: Ran>(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        f: impl Fn(&mut ReplayDb<'_>, &EvmEnv, &ReplayTx, u64) -> Result<T, ReplayError>,
    ) -> Result<T, super::Error> {
        self.drive(source, cache, None, false, &f).map(|(t, _)| t)
    }

    /// [`run`](Self::run) with `prepare` applied to each pass's database just before the
    /// target, also returning revm's cache of the final pass. The speculative passes run
    /// untraced; the node's frames of calls into the chain's precompiles are asked for the
    /// target (`debug_traceTransaction`). A miss the fast path cannot read exactly (a later
    /// transaction of its block) switches to the RPC path and drives again.
    fn drive<T: Ran>(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        prepare: Option<&dyn Fn(&mut ReplayDb<'_>)>,
        unread: bool,
        f: TargetFn<'_, T>,
    ) -> Result<(T, revm::database::Cache), super::Error> {
        loop {
            let (txs, first) = self.txs();
            let env = self.pass_env(unread);
            let plan = self.plan(&env, &txs, prepare);
            let mut driver = Driver::new(source, &self.parent);
            // The node's prestate of a later transaction is not its block's parent state.
            driver.state_reads = !(self.fast && self.index > 0);
            driver.settled = prepare.is_none() && self.settled == Some(env.skip_unknown_vaults);
            let driven = driver.run(&mut self.snapshot, &plan, &|db, env, tx, offset, _| {
                f(db, env, tx, offset)
            });
            self.passes += driver.passes;
            match driven {
                Ok(mut d) => {
                    if prepare.is_none() {
                        self.settled = Some(env.skip_unknown_vaults);
                    }
                    self.env.splice = d.splices.get(first).cloned().flatten();
                    self.save(cache);
                    let t = d.traced.pop().ok_or_else(|| SourceError::BadData {
                        what: "replay".into(),
                        reason: "the traced pass gave no trace".into(),
                    })?;
                    return Ok((t, d.post));
                }
                Err(DriveError::Inexact { items }) => self.switch_to_rpc(source, cache, items)?,
                Err(DriveError::Failed(e)) => return Err(e),
            }
        }
    }

    /// The environment of a pass (the node's frames are set per transaction by the driver):
    /// with `unread` (nothing the caller reads shows an account the transaction did not look
    /// up), the OP fee vaults the fast path cannot know at a later transaction of its block
    /// are left uncredited ([`EvmEnv::skip_unknown_vaults`]) rather than read.
    fn pass_env(&self, unread: bool) -> EvmEnv {
        let mut env = self.env.clone();
        env.splice = None;
        env.skip_unknown_vaults = unread && self.fast && self.index > 0 && env.op.is_some();
        env
    }

    /// The transactions a replay runs: the block's earlier ones (RPC path), then the target,
    /// and where the target is.
    fn txs(&self) -> (Vec<ReplayTx>, usize) {
        let mut txs = self.prefix.clone();
        txs.push(self.target.clone());
        (txs, self.prefix.len())
    }

    /// The driver's plan of `txs` (from [`txs`](Self::txs)) in `env` (no splice): the target
    /// traced after the block's earlier transactions, its frames asked for by its hash.
    fn plan<'p>(
        &self,
        env: &'p EvmEnv,
        txs: &'p [ReplayTx],
        prepare: Option<&'p dyn Fn(&mut ReplayDb<'_>)>,
    ) -> Plan<'p> {
        let first = self.prefix.len();
        Plan {
            env,
            txs,
            first,
            log_offset: self.log_offset,
            index: Some(self.index.saturating_sub(first) as u64),
            prepare,
            frames: Frames::Transaction(self.target.hash),
        }
    }

    /// Leaves the fast path: the node's prestate lacks `items` this replay reads, and its block's
    /// parent state is not the transaction's; the block's earlier transactions are replayed on
    /// `eth_get*` state instead.
    fn switch_to_rpc(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        items: usize,
    ) -> Result<(), super::Error> {
        let mut rpc = Self::load_rpc(
            source,
            cache,
            self.chain_id,
            self.tx_json.take(),
            self.receipt.take(),
            Some(self.env.spec),
        )?;
        rpc.passes += self.passes;
        rpc.note = Some(format!(
            "the node's prestate lacks {items} item(s) this replay reads; replaying the block's \
             earlier transactions on eth_get* state instead"
        ));
        *self = rpc;
        Ok(())
    }

    /// Where the replay's final state still differs from the node's own diff of the
    /// transaction (`None` when no diff was compared: no chain precompile was called, or the
    /// node gave none). Each item is `account field: replay X, node Y`.
    pub fn state_check(&self) -> Option<(usize, Vec<String>)> {
        self.env.splice.as_deref().and_then(Splice::state_check)
    }

    /// Traces the transaction under `spec`, fetching whatever the replay still misses.
    pub fn trace(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        spec: &crate::trace::TracerSpec,
    ) -> Result<super::TracedTx, super::Error> {
        self.trace_keeping_post(source, cache, spec).map(|(t, _)| t)
    }

    /// [`trace`](Self::trace), also returning revm's cache of the final pass: the state after
    /// the transaction as far as the replay wrote or read it (asset metadata runs on it).
    pub fn trace_keeping_post(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        spec: &crate::trace::TracerSpec,
    ) -> Result<(super::TracedTx, revm::database::Cache), super::Error> {
        let index = Some(self.index as u64);
        let unread = !spec.shows_unlooked_balances();
        self.drive(source, cache, None, unread, &|db, env, tx, offset| {
            super::trace_at(db, env, tx, spec, offset, index)
        })
    }

    /// [`trace_keeping_post`](Self::trace_keeping_post) under the callTracer configured by
    /// `config`: the call tree, typed.
    pub fn trace_call_tree_keeping_post(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        config: &crate::trace::call::CallTracerConfig,
    ) -> Result<(super::CallTraced, revm::database::Cache), super::Error> {
        let index = Some(self.index as u64);
        // A call tree shows no balance.
        self.drive(source, cache, None, true, &|db, env, tx, offset| {
            super::trace_call_tree(db, env, tx, config, offset, index)
        })
    }

    /// The state just before the target runs — the block's earlier transactions applied, then
    /// `overrides` — as revm's cache over [`Mined::snapshot`], with the environment its replay
    /// runs in (the node's frames of the chain's precompiles spliced): what a step debugger
    /// runs again and again, offline.
    pub fn pre_state(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        overrides: Option<&super::overrides::StateOverride>,
    ) -> Result<(revm::database::Cache, EvmEnv), super::Error> {
        let index = Some(self.index as u64);
        let prepare = |db: &mut ReplayDb<'_>| {
            if let Some(o) = overrides {
                o.apply(db)
            }
        };
        let noop = crate::trace::TracerSpec::Noop;
        // The state is what the caller reads: the vaults are credited as they are.
        let ((pre, _), _) = self.drive(
            source,
            cache,
            Some(&prepare),
            false,
            &|db, env, tx, offset| {
                let pre = (db.cache.clone(), env.clone());
                let t = super::trace_at(db, env, tx, &noop, offset, index)?;
                Ok((pre, t.outcome))
            },
        )?;
        Ok(pre)
    }

    /// The block whose state the snapshot holds: the parent of the transaction's block, by hash
    /// where the header gave it ([`RpcSource::parent_at`]).
    pub fn state_block(&self) -> &str {
        &self.parent
    }

    /// Traces the transaction as [`trace`](Self::trace) does, with `overrides` applied to the
    /// state just before it runs (after the block's earlier transactions on the RPC path): a
    /// what-if replay, for example with a contract's code replaced. Nothing fetched is changed:
    /// the overrides live in the pass's database, never in the snapshot or the cache.
    pub fn trace_overridden(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        spec: &crate::trace::TracerSpec,
        overrides: &super::overrides::StateOverride,
    ) -> Result<super::TracedTx, super::Error> {
        let index = Some(self.index as u64);
        let prepare = |db: &mut ReplayDb<'_>| overrides.apply(db);
        let unread = !spec.shows_unlooked_balances();
        self.drive(
            source,
            cache,
            Some(&prepare),
            unread,
            &|db, env, tx, offset| super::trace_at(db, env, tx, spec, offset, index),
        )
        .map(|(t, _)| t)
    }

    /// [`run`](Self::run) with `overrides` applied on the state just before the transaction,
    /// as [`trace_overridden`](Self::trace_overridden) does (what-if's own runs: the access
    /// pattern of the patched code).
    pub fn run_overridden<T: Ran>(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        overrides: &super::overrides::StateOverride,
        f: impl Fn(&mut ReplayDb<'_>, &EvmEnv, &ReplayTx, u64) -> Result<T, ReplayError>,
    ) -> Result<T, super::Error> {
        let prepare = |db: &mut ReplayDb<'_>| overrides.apply(db);
        self.drive(source, cache, Some(&prepare), false, &f)
            .map(|(t, _)| t)
    }

    /// Traces the transaction under geth's struct logger with its result written to `out` as
    /// it runs, not spooled (`to` names `out` in errors). Passes that write nothing
    /// ([`StructLogger::dry`](crate::trace::opcode::StructLogger::dry)) first fetch what the
    /// replay misses, the logger's own reads included, and end with geth's head keys (`gas`,
    /// `failed`, `returnValue`), which are written first; one pass of the driver
    /// ([`traced_once`], with the node's frames the dry passes asked for) then writes the struct
    /// logs and closes the document only if it ends the same way (see
    /// [`super::trace_struct_logs_to`]).
    pub fn trace_struct_logs(
        &mut self,
        source: &RpcSource,
        cache: Option<&Cache>,
        cfg: &crate::trace::opcode::StructLoggerConfig,
        out: Box<dyn std::io::Write + Send>,
        to: &str,
    ) -> Result<super::TracedTx, super::Error> {
        let index = Some(self.index as u64);
        // Struct logs show no balance the transaction did not look up.
        let (dry, _) = self.drive(source, cache, None, true, &|db, env, tx, _| {
            super::trace_struct_logs_dry(db, env, tx, cfg, index)
        })?;
        let super::TraceResult::StructLog(r) = &dry.result else {
            unreachable!("a struct logger's pass gives a struct log");
        };
        let head = crate::trace::opcode::StructLogHead {
            gas: r.gas,
            failed: r.failed,
            return_value: r.return_value.clone(),
        };
        let (txs, first) = self.txs();
        let env = self.pass_env(true);
        let plan = self.plan(&env, &txs, None);
        // The node's frames are the target's: earlier transactions run without them.
        let mut splices = vec![None; first];
        splices.push(self.env.splice.clone());
        // Written once: the one traced transaction, the target, takes the output.
        let once = std::cell::Cell::new(Some((out, head)));
        let mut traced = traced_once(&mut self.snapshot, &plan, &splices, &|db, env, tx, _, _| {
            let (out, head) = once.take().expect("one pass traces only the target");
            super::trace_struct_logs_to(db, env, tx, cfg, head, out, to, index)
        })?;
        Ok(traced.pop().expect("one traced transaction: the target"))
    }

    /// What the replay did with the chain's precompiles, for a note on stderr.
    pub fn splice_note(&self) -> Option<String> {
        let splice = self.env.splice.as_ref()?;
        let log = splice.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        crate::replay::splice::note(&log, self.env.rules.as_ref()?)
    }

    /// Stores what was fetched from the parent block's state (immutable) in the cache.
    fn save(&mut self, cache: Option<&Cache>) {
        let Some(c) = cache else { return };
        if self.parent_hash == B256::ZERO {
            return;
        }
        // The snapshot only grows as passes fetch: the same extent is the same contents.
        let extent = (self.fast, self.snapshot.extent());
        if self.saved.replace(extent) == Some(extent) {
            return;
        }
        let key = format!("{:?}", self.parent_hash);
        if self.fast {
            // Only block hashes (and, for a block's first tx, parent state) were fetched.
            let mut s = StateSnapshot::partial();
            s.block_hashes = self.snapshot.block_hashes.clone();
            if let Some(old) = c.get(Kind::State, &key) {
                merge_json(&mut s, &old, true);
            }
            if s.block_hashes.is_empty() && s.accounts.is_empty() {
                return;
            }
            c.put(Kind::State, &key, &snapshot_to_json(&s));
        } else {
            c.put(Kind::State, &key, &snapshot_to_json(&self.snapshot));
        }
    }
}
