//! How the sources of chain data fail: [`SourceError`] (a node's answer missing, unreadable or
//! not the one asked for) and [`TxError`] (a transaction that cannot be decoded).

use crate::rpc::RpcError;

/// A transaction that cannot be decoded or whose sender cannot be recovered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TxError(pub String);

/// Errors from the RPC source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("{what} not found on the node")]
    NotFound { what: String },
    #[error("the node returned an unreadable {what}: {reason}")]
    BadData { what: String, reason: String },
    /// The node answered with something other than what was asked for.
    #[error("the node returned the wrong {what}: asked for {asked}, its `{field}` is {got}")]
    Mismatch {
        what: String,
        field: String,
        asked: String,
        got: String,
    },
    /// A transaction the node returned cannot be decoded.
    #[error(transparent)]
    Tx(#[from] TxError),
    /// A chain whose execution chaintrace does not replay (`chain/l2.rs`).
    #[error(
        "chain {chain_id} is {name}, whose rules chaintrace does not replay ({why}): {differs}. \
         Replayed under Ethereum's (or the OP stack's) rules it would be traced wrong. Use --remote for the node's \
         own trace, or --chain-rules ethereum to replay it under Ethereum's rules anyway"
    )]
    Unreplayed {
        chain_id: u64,
        name: String,
        why: String,
        differs: String,
    },
    /// An OP-stack chain without a preset or `--chain-config` whose block header does not
    /// decide the fork: replaying it under a guessed fork could be wrong without a sign.
    #[error(
        "chain {chain_id} runs the OP stack ({why}), but chaintrace has no fork schedule for it \
         and the header of block {number} {fits}: pass --chain-config with the chain's \
         op-geth genesis config or op-node rollup.json"
    )]
    OpForkUnknown {
        chain_id: u64,
        number: u64,
        why: String,
        fits: String,
    },
    /// A block's parent is no longer the block its number names on a node that cannot be
    /// asked for state by block hash: its state there would be another branch's.
    #[error(
        "the node does not take a block by hash (EIP-1898), and block {number} on it is now \
         {there}, not {expected}, the parent of the block replayed (a reorg): its state there \
         is another branch's, so the replay was not run"
    )]
    Reorged {
        number: u64,
        expected: alloy_primitives::B256,
        there: String,
    },
    /// `--chain-config` describes another chain than the node serves.
    #[error(
        "--chain-config {what} is chain {config}'s, but the node serves chain {node}: its OP \
         forks would be applied to the wrong chain"
    )]
    WrongChainConfig {
        what: String,
        config: u64,
        node: u64,
    },
}
