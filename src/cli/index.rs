//! `chaintrace index A..B --out DIR`: build (or extend) the address index of a block range.
//!
//! The blocks are replayed on the ranges engine under the Parity tracer (`index::build`), each
//! transaction checked against its receipt, and appended to `DIR/index.ndjson` in chain order
//! (`index::store`). An index already in DIR is read first: blocks it holds are not replayed
//! again unless they are no longer the node's (a reorg since: the new chain's blocks are indexed
//! from where the two part), and a range that leaves a gap after the index is refused, so the
//! index stays one contiguous stretch of one chain. `serve --index DIR` answers from it.

use std::path::PathBuf;

use chaintrace::index::build::{fork_point, index_blocks, IndexError};
use chaintrace::index::store;
use chaintrace::replay::range::default_jobs;
use clap::Args;

use super::common::{exit, report_rpc, CliError, RpcArgs};

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Inclusive block range A..B (decimal or 0x hex).
    pub range: String,
    /// The index directory (created if missing; an index there is extended).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub rpc: RpcArgs,
}

impl From<IndexError> for CliError {
    fn from(e: IndexError) -> Self {
        match e {
            IndexError::Source(e) => e.into(),
            IndexError::Replay(e) => e.into(),
            IndexError::Diverged { .. } => CliError {
                code: exit::DIVERGED,
                message: e.to_string(),
            },
            IndexError::Store(store::StoreError::Io { .. }) => CliError::source(e.to_string()),
            e => CliError::input(e.to_string()),
        }
    }
}

impl IndexArgs {
    pub fn run(&self) -> Result<u8, CliError> {
        let (from, to) = super::range::parse_range(&self.range).unwrap_or_else(|| {
            Err(CliError::input(format!(
                "malformed block range {:?}: expected A..B with numbers A <= B (inclusive)",
                self.range
            )))
        })?;
        let source = self.rpc.source()?;
        let (chain_id, genesis, head) = source.genesis_and_head()?;
        source.check_replayable(chain_id)?;
        if to > head {
            return Err(CliError::input(format!(
                "block {to} is past the node's head ({head})"
            )));
        }
        let mut opened = store::open(&self.out, (chain_id, genesis), true)
            .map_err(|e| CliError::from(IndexError::from(e)))?;
        for n in &opened.notes {
            note!("{n}");
        }
        // What is left to index: from the first block the index lacks or holds stale.
        let start = match opened.index.span() {
            None => from,
            Some((lo, hi)) => {
                if from < lo || from > hi + 1 {
                    return Err(CliError::input(format!(
                        "the index in {} holds blocks {lo}..{hi}: a range must start inside it or \
                         right after it ({}..), so that the index stays one contiguous stretch",
                        self.out.display(),
                        hi + 1
                    )));
                }
                match fork_point(&source, &opened.index)? {
                    Some(stale) => {
                        note!("index: blocks from {stale} are no longer the node's (a reorg); they are indexed again");
                        stale
                    }
                    None => hi + 1,
                }
            }
        };
        // A stale tail is indexed again in full, whatever the range asked.
        let to = match opened.index.span() {
            Some((_, hi)) if start <= hi => to.max(hi).min(head),
            _ => to,
        };
        if start > to {
            note!(
                "index: blocks {from}..{to} are already indexed in {}",
                self.out.display()
            );
            return Ok(exit::OK);
        }
        let blocks = to - start + 1;
        let pb = super::range::progress(blocks, super::output::quiet());
        let mut txs = 0usize;
        let (index, st) = (&mut opened.index, &mut opened.store);
        index_blocks(
            &source,
            chain_id,
            &[(start, to)],
            default_jobs(),
            &|f| f(),
            &mut |b| {
                st.append(&b)?;
                txs += b.txs.len();
                index.insert(b);
                pb.inc(1);
                Ok(true)
            },
        )?;
        opened
            .store
            .sync()
            .map_err(|e| CliError::from(IndexError::from(e)))?;
        pb.finish_and_clear();
        let (indexed, all_txs, entries) = opened.index.size();
        let (lo, hi) = opened.index.span().unwrap_or((start, to));
        report_rpc(&source, 0);
        note!(
            "index: {blocks} blocks ({txs} transactions) indexed; {} holds blocks {lo}..{hi}: {indexed} blocks, {all_txs} transactions, {entries} address entries",
            self.out.display()
        );
        Ok(exit::OK)
    }
}
