//! The upstream node as one piece of the server's work reaches it: a source whose requests end
//! by that work's deadline, under the chain rules `serve` was told (`--chain-rules`,
//! `--chain-config`). Calls, walk preparations and index syncs each make theirs here.

use std::time::{Duration, Instant};

use crate::rpc::{RpcClient, RpcError};
use crate::source::rpc::RpcSource;

/// A source for work ending by `deadline` (`None`: each request bounded by its own timeout and
/// retries only).
pub fn source(
    url: &str,
    rpc_timeout: Duration,
    deadline: Option<Instant>,
    chain_rules: Option<crate::chain::rules::Ruleset>,
    op_config: Option<&crate::chain::op::OpChainConfig>,
) -> Result<RpcSource, RpcError> {
    let mut client = RpcClient::new(url, rpc_timeout)?;
    if let Some(d) = deadline {
        client = client.ending_by(d);
    }
    let mut source = RpcSource::new(client);
    source.ruleset_override = chain_rules;
    source.op_config = op_config.cloned();
    Ok(source)
}

/// What background work (walk preparations, index syncs) needs to reach the upstream.
#[derive(Clone)]
pub struct Upstream {
    pub url: String,
    pub rpc_timeout: Duration,
    pub chain_rules: Option<crate::chain::rules::Ruleset>,
    pub op_config: Option<crate::chain::op::OpChainConfig>,
}

impl Upstream {
    /// A source for work ending by `deadline` (`None`: see [`source`]).
    pub fn source(&self, deadline: Option<Instant>) -> Result<RpcSource, RpcError> {
        source(
            &self.url,
            self.rpc_timeout,
            deadline,
            self.chain_rules,
            self.op_config.as_ref(),
        )
    }
}
