//! Which rules a node runs, and the fork of a block it serves: `--chain-rules`, else the
//! node's `web3_clientVersion` for chains with rules of their own (chains 1329/1328 and the
//! OP-stack presets: a dev node started with such a chain id runs Ethereum's), else what the
//! chain data shows of the OP stack on a chain chaintrace has no preset for (a deposit
//! transaction, a receipt's deposit or L1-fee fields: an OP dev node such as
//! `anvil --network optimism`), or what anvil says of itself: its `anvil_nodeInfo`, asked in
//! the same first batch, names an OP fork (`hardFork` Bedrock … Jovian) only in OP mode and
//! Ethereum's fork names otherwise (anvil 1.7.1: `Jovian` under `--network optimism`,
//! `Holocene` with `--hardfork holocene` too, `Bpo1` or `Cancun` without it; the fork it names
//! is not the one it runs: `dev_op_fork`). Notes for stderr say which rules were taken and why.

use serde_json::Value;

use super::chain_data::BlockInfo;
use super::deposit::is_deposit_json;
use super::error::SourceError;
use super::rpc::RpcSource;
use crate::chain::op::OpFork;
use crate::chain::rules::{classify_client, NodeClient, Ruleset};

/// What a mined transaction and its receipt show of the OP stack: a deposit, or a receipt
/// with op-geth's deposit or L1-fee fields.
pub fn tx_op_evidence(tx: &Value, receipt: &Value) -> Option<&'static str> {
    if is_deposit_json(tx) {
        return Some("the transaction is a deposit (type 0x7e)");
    }
    ["l1Fee", "l1GasUsed", "depositNonce"]
        .iter()
        .any(|k| receipt.get(k).is_some())
        .then_some("its receipt has OP-stack fields (l1Fee, depositNonce)")
}

/// A node that only simulates a chain (a local fork or a dev chain started with its id):
/// it runs the chain's special rules only where it says so.
fn dev_node(version: &str) -> bool {
    let name = version.split('/').next().unwrap_or("").to_ascii_lowercase();
    [
        "anvil",
        "hardhat",
        "hardhatnetwork",
        "ganache",
        "tevm",
        "edr",
    ]
    .contains(&name.as_str())
}

impl RpcSource {
    /// The OP fork anvil's `anvil_nodeInfo` names, which it does in OP mode only; `None` for
    /// any other node, and for anvil running Ethereum's rules.
    fn anvil_op_fork(&self) -> Option<OpFork> {
        match self.client_version.get() {
            Some(Ok(v)) if v.to_ascii_lowercase().starts_with("anvil/") => {}
            _ => return None,
        }
        OpFork::from_name(self.node_fork.get()?.as_deref()?)
    }

    /// The rules the node runs for chain `chain_id`, and why: `--chain-rules` when given;
    /// Ethereum's for chains without rules of their own; otherwise what `web3_clientVersion`
    /// says ([`classify_client`]): the chain's node runs the chain's rules, a dev node or
    /// another client Ethereum's, and a node that cannot be told is taken at its chain id. An
    /// OP-stack preset's rules are taken unless the node is a dev node (anvil, Hardhat, …):
    /// op-geth and op-reth name themselves as geth and reth do.
    pub fn ruleset(&self, chain_id: u64) -> (Ruleset, String) {
        if let Some(r) = self.ruleset_override {
            return (r, "--chain-rules".to_string());
        }
        if let Some(c) = self.op_config.as_ref().filter(|c| c.chain_id == chain_id) {
            return (
                Ruleset::Chain,
                format!("--chain-config {} has the OP stack", c.what),
            );
        }
        if let Some(c) = crate::chain::op::known(chain_id) {
            return match self.client_version.get() {
                Some(Ok(v)) if dev_node(v) => (
                    Ruleset::Ethereum,
                    format!("the node is {v}, a dev node, which runs Ethereum's rules unless its chain data shows the OP stack's"),
                ),
                _ => (Ruleset::Chain, format!("chain {chain_id} is {}", c.name)),
            };
        }
        if crate::chain::rules::rules_at(chain_id, u64::MAX).is_none() {
            return (Ruleset::Chain, String::new());
        }
        match self.client_version.get() {
            Some(Ok(v)) => match classify_client(v) {
                NodeClient::ChainNode => (Ruleset::Chain, format!("the node is the chain's ({v})")),
                NodeClient::Ethereum(name) => (
                    Ruleset::Ethereum,
                    format!("the node is {name}, which runs Ethereum's rules"),
                ),
                NodeClient::Unknown => (
                    Ruleset::Chain,
                    format!("the node ({v}) is not one chaintrace knows; taken at its chain id"),
                ),
            },
            Some(Err(e)) => (
                Ruleset::Chain,
                format!("web3_clientVersion failed ({e}); taken at its chain id"),
            ),
            None => (Ruleset::Chain, "taken at its chain id".to_string()),
        }
    }

    /// Refuses chain `chain_id` when it is an L2 whose rules chaintrace does not replay
    /// (`chain/l2.rs`), known by its id or by the client the node names; under `--chain-rules`
    /// the replay goes ahead, with a warning on stderr.
    pub fn check_replayable(&self, chain_id: u64) -> Result<(), SourceError> {
        let version = match self.client_version.get() {
            Some(Ok(v)) => Some(v.as_str()),
            _ => None,
        };
        let (l2, why) = match (crate::chain::l2::by_chain_id(chain_id), version) {
            (Some(l2), _) => (l2, "by its chain id".to_string()),
            (None, Some(v)) => match crate::chain::l2::by_client(v) {
                Some(l2) => (l2, format!("the node is {v}")),
                None => return Ok(()),
            },
            (None, None) => return Ok(()),
        };
        match self.ruleset_override {
            Some(r) => {
                self.note(format!(
                    "warning: chain {chain_id} is {} ({why}), whose rules chaintrace does not \
                     replay ({}); replayed under {} rules as --chain-rules asks: the trace, \
                     gas and state may differ from the chain's",
                    l2.name,
                    l2.differs,
                    r.name()
                ));
                Ok(())
            }
            None => Err(SourceError::Unreplayed {
                chain_id,
                name: l2.name.to_string(),
                why,
                differs: l2.differs.to_string(),
            }),
        }
    }

    /// Whether block `number` of chain `chain_id` will be replayed under the OP stack's rules,
    /// as far as is known before its header (the fork, which needs the block's time, is not
    /// asked): the rules [`Self::prepare_block`] takes, with `evidence` the transaction's
    /// ([`tx_op_evidence`]).
    pub fn op_likely(&self, chain_id: u64, number: u64, evidence: Option<&'static str>) -> bool {
        let info = BlockInfo {
            number,
            op_evidence: evidence,
            ..BlockInfo::default()
        };
        let (ruleset, _) = self.block_ruleset(chain_id, &info);
        let custom = self
            .op_config
            .as_ref()
            .filter(|c| c.chain_id == chain_id)
            .map(|c| &c.schedule);
        crate::chain::op::op_rules(chain_id, ruleset, custom, number, u64::MAX).is_some()
    }

    /// [`Self::ruleset`], then the OP stack's rules where the block's own data shows them
    /// (`info.op_evidence`) on a chain without rules of its own or under a dev node.
    fn block_ruleset(&self, chain_id: u64, info: &BlockInfo) -> (Ruleset, String) {
        let (ruleset, why) = self.ruleset(chain_id);
        let overridden = self.ruleset_override.is_some();
        let plain = crate::chain::rules::rules_at(chain_id, u64::MAX).is_none()
            && (ruleset == Ruleset::Ethereum || crate::chain::op::known(chain_id).is_none());
        let node = match self.client_version.get() {
            Some(Ok(v)) => format!("; the node is {v}"),
            _ => String::new(),
        };
        let custom = self
            .op_config
            .as_ref()
            .is_some_and(|c| c.chain_id == chain_id);
        match (info.op_evidence, self.anvil_op_fork()) {
            _ if overridden || !plain => (ruleset, why),
            (None, Some(_)) if custom => (ruleset, why),
            (Some(e), _) => (Ruleset::Optimism, format!("{e}{node}")),
            (None, Some(f)) => (
                Ruleset::Optimism,
                format!("its anvil_nodeInfo names the OP fork {}{node}", f.name()),
            ),
            (None, None) => (ruleset, why),
        }
    }

    /// Prepares block `info` of chain `chain_id` for replay and returns its fork: which rules
    /// the node runs ([`Self::block_ruleset`]), what only the consensus layer knows of the
    /// block on chains 1329/1328 with `--consensus-rpc` (header time nanoseconds, the SSTORE
    /// set cost), and the fork (`hardfork`, else the chain's schedule, else the header's
    /// fields). Notes for stderr say which rules and which fork were taken where that was not
    /// plain.
    pub fn prepare_block(
        &self,
        chain_id: u64,
        info: &mut BlockInfo,
        hardfork: Option<revm::primitives::hardfork::SpecId>,
    ) -> Result<revm::primitives::hardfork::SpecId, SourceError> {
        self.check_replayable(chain_id)?;
        if let Some(c) = &self.op_config {
            if c.chain_id != chain_id {
                return Err(SourceError::WrongChainConfig {
                    what: c.what.clone(),
                    config: c.chain_id,
                    node: chain_id,
                });
            }
            info.op_schedule = Some(c.schedule.clone());
        }
        let (ruleset, why) = self.block_ruleset(chain_id, info);
        info.ruleset = ruleset;
        let dev = match self.client_version.get() {
            Some(Ok(v)) if dev_node(v) => Some(v.as_str()),
            _ => None,
        };
        let preset = crate::chain::op::known(chain_id);
        let custom = self.op_config.as_ref();
        if let (Some(v), None, Ruleset::Optimism) = (dev, custom, ruleset) {
            self.dev_op_fork(v, preset.is_some(), info);
        }
        let header_decides = ruleset == Ruleset::Optimism
            && custom.is_none()
            && preset.is_none()
            && info.op_dev_fork.is_none();
        if header_decides {
            info.op_dev_fork = Some(op_fork_from_header(chain_id, info, &why)?);
        }
        let has_rules = crate::chain::rules::rules_at(chain_id, info.number).is_some();
        let op = info.op_rules(chain_id);
        if has_rules {
            self.note(match ruleset {
                Ruleset::Chain => format!(
                    "chain {chain_id}'s own rules applied ({why}): fees credited to the fee \
                     collector as COINBASE, base fee not burned, the chain's precompiles and \
                     SSTORE cost; --chain-rules ethereum if the node runs Ethereum's"
                ),
                Ruleset::Ethereum => format!(
                    "chain {chain_id} replayed under Ethereum's rules ({why}); --chain-rules \
                     chain to apply the chain's own"
                ),
                Ruleset::Optimism => format!(
                    "chain {chain_id} replayed under the OP stack's rules ({why}); \
                     --chain-rules chain to apply the chain's own"
                ),
            });
        } else if let Some(rules) = op {
            let at = rules.latest().map_or("Bedrock", |f| f.name());
            let forks = match (&preset, info.op_dev_fork) {
                _ if custom.is_some() => {
                    format!("the schedule of --chain-config, {at} at this block")
                }
                (_, Some(f)) if header_decides => {
                    let evidence = info.header_fork.and_then(|h| h.op).map(|o| o.evidence);
                    format!(
                        "every OP fork through {} (no schedule for this chain: its block \
                         header's {} decides it)",
                        f.name(),
                        evidence.unwrap_or("fields")
                    )
                }
                (_, Some(f)) => format!("every OP fork through {}", f.name()),
                (Some(c), None) => format!("{}'s schedule, {at} at this block", c.name),
                (None, None) => {
                    "every OP fork through Jovian (no schedule for this chain)".to_string()
                }
            };
            self.note(format!(
                "chain {chain_id}: the OP stack's rules applied ({why}), {forks}: deposits, \
                 L1 data fee and operator fee from the L1Block predeploy, fee vaults; \
                 --chain-rules ethereum to drop them"
            ));
        } else if crate::chain::op::known(chain_id).is_some() && ruleset == Ruleset::Ethereum {
            self.note(format!(
                "chain {chain_id} replayed under Ethereum's rules ({why}); --chain-rules \
                 optimism if the node runs the OP stack's"
            ));
        }
        let chain_rules = has_rules && ruleset == Ruleset::Chain;
        if let (Some(c), true, None) = (&self.consensus, chain_rules, info.consensus) {
            info.consensus = Some(c.facts(info.number)?);
        }
        // An OP block's EVM is its OP fork's (op-geth's pairing), not what its header shows.
        let op_spec = op.and_then(|r| r.latest()).map(OpFork::eth_spec);
        let spec = hardfork.or(op_spec).unwrap_or_else(|| {
            crate::chain::block_spec(
                chain_id,
                info.number,
                info.timestamp,
                info.header_fork,
                chain_rules,
            )
        });
        let from_header = hardfork.is_none() && op_spec.is_none() && chain_id != 1 && !chain_rules;
        if let Some(n) = info
            .header_fork
            .filter(|_| from_header)
            .and_then(|h| h.ambiguity(chain_id))
        {
            let mut d = self.doubts.lock().unwrap_or_else(|p| p.into_inner());
            if !d.contains(&n) {
                d.push(n);
            }
        }
        Ok(spec)
    }

    /// The OP fork a dev node in OP mode runs, whatever a block's time: Isthmus, where its
    /// `anvil_nodeInfo` names an OP fork (the whole OP mode runs one) or no preset gives a
    /// schedule. The fork anvil 1.7.1 names is not the one it runs: named Jovian (its default)
    /// or Holocene (`--hardfork holocene`) it charges Isthmus's L1 data and operator fees (not
    /// Jovian's operator fee × 100; an operator fee before Isthmus), and its `eth_call` runs
    /// Prague's EVM (the BLS12-381 precompiles, TSTORE) at every fork it names, Bedrock too.
    /// So the fork it names is said, and Isthmus applied.
    fn dev_op_fork(&self, v: &str, preset: bool, info: &mut BlockInfo) {
        let named = self.anvil_op_fork();
        if named.is_none() && preset {
            return;
        }
        info.op_dev_fork = Some(OpFork::Isthmus);
        let named = named.map_or("Jovian", OpFork::name);
        self.note(format!(
            "{v} is a dev node: its OP mode (anvil --network optimism) names its fork {named} \
             but charges Isthmus's fees whatever fork it names (Isthmus's operator fee, gasUsed \
             × scalar / 10⁶ + constant: not Jovian's × 100, and charged before Isthmus too), so \
             the OP forks through Isthmus applied"
        ));
    }

    pub(super) fn note(&self, n: String) {
        let mut said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        if said.insert(n.clone()) {
            self.notes.lock().unwrap_or_else(|p| p.into_inner()).push(n);
        }
    }
}

/// The OP fork of block `info` of an OP chain with no schedule (no preset, no
/// `--chain-config`), where its header's own fields decide it ([`OpHeaderFork`]); otherwise
/// the replay is refused, naming `--chain-config`, rather than run under a guessed fork.
///
/// [`OpHeaderFork`]: crate::chain::op::OpHeaderFork
fn op_fork_from_header(chain_id: u64, info: &BlockInfo, why: &str) -> Result<OpFork, SourceError> {
    let op = info.header_fork.map(|h| h.op);
    if let Some(fork) = op.flatten().and_then(|o| o.decided()) {
        return Ok(fork);
    }
    let fits = match op {
        None => "was not read".to_string(),
        Some(None) => "has fields no OP fork writes together".to_string(),
        Some(Some(o)) => format!(
            "({}) fits {} to {}, whose rules differ",
            o.evidence,
            o.earliest.name(),
            o.latest.name()
        ),
    };
    Err(SourceError::OpForkUnknown {
        chain_id,
        number: info.number,
        why: why.to_string(),
        fits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deposits_and_op_receipts_are_evidence() {
        let dep = json!({"type": "0x7e"});
        assert!(tx_op_evidence(&dep, &Value::Null).is_some());
        assert!(is_deposit_json(&json!({"type": "0x7E"})));
        let user = json!({"type": "0x2"});
        assert_eq!(tx_op_evidence(&user, &json!({"status": "0x1"})), None);
        assert!(tx_op_evidence(&user, &json!({"l1Fee": "0x1"})).is_some());
        assert!(
            dev_node("anvil/v1.7.1") && !dev_node("Geth/v1.101503.4-stable/linux-amd64/go1.23")
        );
    }
}
