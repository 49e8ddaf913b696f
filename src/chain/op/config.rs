//! A custom OP-stack chain from its own config file (`--chain-config FILE`): its chain id and
//! when each OP fork activates, for a chain chaintrace has no preset for (a devnet, an L3, a
//! chain newer than the presets).
//!
//! Two formats are read:
//!
//! - **op-geth's genesis / chain config** (`geth init`'s `genesis.json`, or its `config`
//!   object alone): the `optimism` member marks an OP-stack chain (op-geth
//!   `params/config.go`: `IsOptimism() = Optimism != nil`), and the OP forks are members of
//!   `config` beside Ethereum's, as op-geth's `ChainConfig` names them: `bedrockBlock`,
//!   `regolithTime`, `canyonTime`, `ecotoneTime`, `fjordTime`, `graniteTime`, `holoceneTime`,
//!   `isthmusTime`, `jovianTime` (`params/config.go`, `ChainConfig`; through `holoceneTime` as
//!   at op-geth commit 7b56c7315, the later two as op-geth's current `params/config.go` declares
//!   them: `json:"isthmusTime,omitempty"`, `json:"jovianTime,omitempty"`). op-geth has no
//!   `deltaTime` ("the Delta upgrade does not affect the execution-layer, and is thus not
//!   configurable in the chain config"); one is read if present. Keys are matched
//!   case-insensitively, as geth's JSON decoding does; numbers may be JSON numbers or hex/decimal
//!   strings.
//! - **op-node's rollup config** (`rollup.json`): `l2_chain_id`, `genesis.l2.number` (the first
//!   Bedrock block) and `regolith_time` … `jovian_time` (op-node `rollup/types.go`).
//!
//! A fork that is absent or `null` is not scheduled (op-geth: "nil = no fork"); each is asked
//! on its own ([`OpSchedule::rules_at`]), as op-geth asks them.

use serde_json::{json, Map, Value};

use super::fork::{OpFork, OpSchedule};

/// Why a chain config cannot be read as an OP-stack chain's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OpConfigError(pub String);

/// A custom OP-stack chain: its id and fork schedule, read from `what` (for notes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpChainConfig {
    pub chain_id: u64,
    pub schedule: OpSchedule,
    /// Where it came from (the file's path), for notes and errors.
    pub what: String,
}

fn member<'v>(obj: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    obj.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

fn number(obj: &Map<String, Value>, name: &str) -> Result<Option<u64>, OpConfigError> {
    member(obj, name)
        .map(|v| {
            crate::geth::hex::parse_u64(v)
                .map_err(|e| OpConfigError(format!("`{name}` is not a 64-bit number: {e}")))
        })
        .transpose()
}

/// The config key of each timestamp fork in op-geth's chain config and op-node's rollup
/// config.
fn keys(fork: OpFork) -> (&'static str, &'static str) {
    match fork {
        OpFork::Bedrock => ("bedrockBlock", ""),
        OpFork::Regolith => ("regolithTime", "regolith_time"),
        OpFork::Canyon => ("canyonTime", "canyon_time"),
        OpFork::Delta => ("deltaTime", "delta_time"),
        OpFork::Ecotone => ("ecotoneTime", "ecotone_time"),
        OpFork::Fjord => ("fjordTime", "fjord_time"),
        OpFork::Granite => ("graniteTime", "granite_time"),
        OpFork::Holocene => ("holoceneTime", "holocene_time"),
        OpFork::Isthmus => ("isthmusTime", "isthmus_time"),
        OpFork::Jovian => ("jovianTime", "jovian_time"),
        // op-reth's genesis config (op-geth never had Karst) and op-node's rollup config.
        OpFork::Karst => ("karstTime", "karst_time"),
    }
}

fn schedule(
    obj: &Map<String, Value>,
    bedrock_block: u64,
    rollup: bool,
) -> Result<OpSchedule, OpConfigError> {
    let time = |f: OpFork| {
        let (geth, node) = keys(f);
        number(obj, if rollup { node } else { geth })
    };
    Ok(OpSchedule {
        bedrock_block,
        regolith_time: time(OpFork::Regolith)?,
        canyon_time: time(OpFork::Canyon)?,
        delta_time: time(OpFork::Delta)?,
        ecotone_time: time(OpFork::Ecotone)?,
        fjord_time: time(OpFork::Fjord)?,
        granite_time: time(OpFork::Granite)?,
        holocene_time: time(OpFork::Holocene)?,
        isthmus_time: time(OpFork::Isthmus)?,
        jovian_time: time(OpFork::Jovian)?,
        karst_time: time(OpFork::Karst)?,
    })
}

impl OpChainConfig {
    /// Reads an op-geth genesis or chain config, or an op-node rollup config, named `what`.
    pub fn from_json(v: &Value, what: &str) -> Result<OpChainConfig, OpConfigError> {
        let bad = |m: String| OpConfigError(format!("{what}: {m}"));
        let top = v
            .as_object()
            .ok_or_else(|| bad("not a JSON object".into()))?;
        let read = || -> Result<(u64, OpSchedule), OpConfigError> {
            if let Some(id) = number(top, "l2_chain_id")? {
                // op-node's rollup.json: the first Bedrock block is the L2 genesis.
                let bedrock = top
                    .get("genesis")
                    .and_then(|g| g.get("l2"))
                    .and_then(Value::as_object)
                    .map(|l2| number(l2, "number"))
                    .transpose()?
                    .flatten()
                    .unwrap_or(0);
                return Ok((id, schedule(top, bedrock, true)?));
            }
            // A genesis file holds the chain config under `config`; else this is the config.
            let config = match member(top, "config").and_then(Value::as_object) {
                Some(c) => c,
                None => top,
            };
            if member(config, "optimism").is_none() {
                return Err(OpConfigError(
                    "no `optimism` member: op-geth runs such a chain as Ethereum, not as an \
                     OP-stack chain (a rollup.json needs `l2_chain_id`)"
                        .into(),
                ));
            }
            let id =
                number(config, "chainId")?.ok_or_else(|| OpConfigError("no `chainId`".into()))?;
            let bedrock = number(config, "bedrockBlock")?.ok_or_else(|| {
                OpConfigError(
                    "no `bedrockBlock`: op-geth applies no OP-stack rule to such a chain".into(),
                )
            })?;
            Ok((id, schedule(config, bedrock, false)?))
        };
        let (chain_id, schedule) = read().map_err(|e| bad(e.0))?;
        Ok(OpChainConfig {
            chain_id,
            schedule,
            what: what.to_string(),
        })
    }

    /// Chain `chain_id` with `schedule` as op-geth's chain config object names it: `chainId`,
    /// `bedrockBlock`, each scheduled fork's time, an `optimism` member. What a replay bundle
    /// records of a `--chain-config` chain (`opChainConfig`), read back by [`Self::from_json`].
    pub fn geth_json(chain_id: u64, schedule: &OpSchedule) -> Value {
        let mut config = Map::new();
        config.insert("chainId".into(), json!(chain_id));
        config.insert("bedrockBlock".into(), json!(schedule.bedrock_block));
        for fork in OpFork::ALL {
            if let Some(t) = schedule.activation_time(fork) {
                config.insert(keys(fork).0.into(), json!(t));
            }
        }
        config.insert("optimism".into(), json!({}));
        Value::Object(config)
    }

    /// Reads the file at `path`.
    pub fn from_file(path: &str) -> Result<OpChainConfig, OpConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OpConfigError(format!("cannot read --chain-config {path}: {e}")))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| OpConfigError(format!("{path} is not JSON: {e}")))?;
        Self::from_json(&v, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_back_from_its_geth_json() {
        let mut schedule = OpSchedule::all_from_genesis(OpFork::Holocene);
        schedule.bedrock_block = 7;
        schedule.isthmus_time = Some(1_700_000_000);
        let v = OpChainConfig::geth_json(901, &schedule);
        assert_eq!(v["isthmusTime"], json!(1_700_000_000));
        assert!(v.get("jovianTime").is_none());
        let back = OpChainConfig::from_json(&v, "opChainConfig").unwrap();
        assert_eq!((back.chain_id, back.schedule), (901, schedule));
    }
    use crate::chain::op::OpRules;
    use serde_json::json;

    /// A chain config as op-geth writes and reads it (`params/config.go`, `ChainConfig`: the
    /// OP forks' JSON names beside Ethereum's, `optimism` the EIP-1559 parameters), inside a
    /// genesis file as `geth init` takes it; times as JSON numbers, the way op-geth's
    /// `MarshalJSON` writes a `*uint64`.
    const OP_GETH_GENESIS: &str = r#"{
      "config": {
        "chainId": 901,
        "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0, "eip158Block": 0,
        "byzantiumBlock": 0, "constantinopleBlock": 0, "petersburgBlock": 0,
        "istanbulBlock": 0, "muirGlacierBlock": 0, "berlinBlock": 0, "londonBlock": 0,
        "arrowGlacierBlock": 0, "grayGlacierBlock": 0, "mergeNetsplitBlock": 0,
        "shanghaiTime": 0, "cancunTime": 0, "pragueTime": 1000,
        "bedrockBlock": 0, "regolithTime": 0, "canyonTime": 0, "ecotoneTime": 0,
        "fjordTime": 0, "graniteTime": 0, "holoceneTime": 500, "isthmusTime": 1000,
        "jovianTime": null,
        "terminalTotalDifficulty": 0,
        "depositContractAddress": "0x0000000000000000000000000000000000000000",
        "optimism": {"eip1559Elasticity": 6, "eip1559Denominator": 50,
                     "eip1559DenominatorCanyon": 250}
      },
      "alloc": {}
    }"#;

    #[test]
    fn reads_op_geths_genesis_config() {
        let v: Value = serde_json::from_str(OP_GETH_GENESIS).unwrap();
        let c = OpChainConfig::from_json(&v, "genesis.json").unwrap();
        assert_eq!(c.chain_id, 901);
        let s = &c.schedule;
        assert_eq!(s.bedrock_block, 0);
        assert_eq!(s.holocene_time, Some(500));
        assert_eq!(s.isthmus_time, Some(1000));
        assert_eq!(s.jovian_time, None);
        // op-geth has no deltaTime; none given, none scheduled.
        assert_eq!(s.delta_time, None);
        assert_eq!(s.fork_at(499), OpFork::Granite);
        assert_eq!(s.fork_at(500), OpFork::Holocene);
        assert_eq!(s.fork_at(u64::MAX), OpFork::Isthmus);
        // Each fork asked on its own: Delta unscheduled is off while later forks are on.
        assert!(!s.rules_at(600).is(OpFork::Delta));
        assert!(s.rules_at(600).is(OpFork::Granite));
        // The config object alone (not inside a genesis) reads the same.
        let alone = OpChainConfig::from_json(&v["config"], "config.json").unwrap();
        assert_eq!(alone.schedule, c.schedule);
        // Keys case-insensitively, numbers as strings too.
        let mut odd = v["config"].clone();
        odd["IsthmusTime"] = odd.as_object_mut().unwrap().remove("isthmusTime").unwrap();
        odd["IsthmusTime"] = json!("0x3e8");
        assert_eq!(
            OpChainConfig::from_json(&odd, "x").unwrap().schedule,
            c.schedule
        );
    }

    #[test]
    fn refuses_a_config_without_the_op_stack() {
        let mut v: Value = serde_json::from_str(OP_GETH_GENESIS).unwrap();
        v["config"].as_object_mut().unwrap().remove("optimism");
        let e = OpChainConfig::from_json(&v, "g.json").unwrap_err();
        assert!(e.0.starts_with("g.json: no `optimism` member"), "{e}");
        let mut v: Value = serde_json::from_str(OP_GETH_GENESIS).unwrap();
        v["config"].as_object_mut().unwrap().remove("bedrockBlock");
        let e = OpChainConfig::from_json(&v, "g.json").unwrap_err();
        assert!(e.0.contains("no `bedrockBlock`"), "{e}");
        let mut v: Value = serde_json::from_str(OP_GETH_GENESIS).unwrap();
        v["config"]["fjordTime"] = json!("soon");
        let e = OpChainConfig::from_json(&v, "g.json").unwrap_err();
        assert!(e.0.contains("`fjordTime` is not a 64-bit number"), "{e}");
        assert!(OpChainConfig::from_json(&json!([1]), "g.json").is_err());
    }

    #[test]
    fn reads_op_nodes_rollup_config() {
        // op-node's rollup.json (rollup/types.go `Config`): snake_case times, the L2 genesis
        // block the first Bedrock block.
        let v = json!({
            "genesis": {"l1": {"number": 10}, "l2": {"number": 7, "hash": "0x00"}, "l2_time": 0},
            "block_time": 2, "l1_chain_id": 11155111, "l2_chain_id": 902,
            "regolith_time": 0, "canyon_time": 0, "delta_time": 0, "ecotone_time": 0,
            "fjord_time": 0, "granite_time": 0, "holocene_time": 0, "isthmus_time": 0,
            "jovian_time": 2000, "karst_time": 3000
        });
        let c = OpChainConfig::from_json(&v, "rollup.json").unwrap();
        assert_eq!(c.chain_id, 902);
        assert_eq!(c.schedule.bedrock_block, 7);
        assert_eq!(c.schedule.delta_time, Some(0));
        assert_eq!(c.schedule.fork_at(1999), OpFork::Isthmus);
        assert_eq!(c.schedule.fork_at(2000), OpFork::Jovian);
        assert_eq!(
            c.schedule.rules_at(2000),
            OpRules::up_to(OpFork::Jovian),
            "every fork through Jovian"
        );
        assert_eq!(c.schedule.fork_at(3000), OpFork::Karst);
        // op-reth's genesis config names it `karstTime`.
        let mut v: Value = serde_json::from_str(OP_GETH_GENESIS).unwrap();
        v["config"]["karstTime"] = json!(5);
        let c = OpChainConfig::from_json(&v, "g.json").unwrap();
        assert_eq!(c.schedule.karst_time, Some(5));
    }
}
