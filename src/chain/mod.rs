//! Chain presets and hard-fork schedules.
//!
//! A [`ForkSchedule`] says at which block number or timestamp each fork activates and turns a
//! `(number, timestamp)` pair into the revm [`SpecId`] that governs execution. Schedules come from
//! a geth genesis `config` object (fixtures and replay bundles), from a built-in preset (Ethereum
//! mainnet, the 1329/1328 chain), or default to the latest fork for unknown chains.

pub mod l2;
pub mod op;
pub mod pure;
pub mod rules;

use revm::primitives::hardfork::SpecId;
use serde_json::Value;

use crate::geth::hex::HexError;

/// Why a geth genesis `config` object cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config is not an object of keys.
    #[error("chain config is not a JSON object")]
    NotAnObject,
    /// A fork block, time or the chain id is not a 64-bit quantity.
    #[error("chain config key {key}: {source}")]
    Key { key: String, source: HexError },
}

/// Activation points of every fork that changes EVM semantics.
///
/// Block-activated forks carry a block number, post-merge forks a timestamp. `merged` is true when
/// the chain has passed the merge (geth: `terminalTotalDifficulty == 0` or a merge netsplit at a
/// block already reached); Shanghai and later only apply after the merge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForkSchedule {
    pub chain_id: u64,
    pub homestead: Option<u64>,
    pub tangerine: Option<u64>,
    pub spurious_dragon: Option<u64>,
    pub byzantium: Option<u64>,
    pub constantinople: Option<u64>,
    pub petersburg: Option<u64>,
    pub istanbul: Option<u64>,
    pub berlin: Option<u64>,
    pub london: Option<u64>,
    /// Block at which the merge happened, when known; `Some(0)` for chains born merged.
    pub merge_block: Option<u64>,
    pub shanghai_time: Option<u64>,
    pub cancun_time: Option<u64>,
    pub prague_time: Option<u64>,
    pub osaka_time: Option<u64>,
}

/// Named chains the tool knows without asking the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainPreset {
    pub id: u64,
    pub name: &'static str,
    pub currency: &'static str,
    /// Decimals of the native currency.
    pub decimals: u8,
    /// Explorer URL template for a transaction; `{hash}` is replaced.
    pub explorer_tx: Option<&'static str>,
    /// Etherscan-compatible API for verified ABIs (`module=contract&action=getabi`), used when
    /// `ETHERSCAN_API_KEY` is set.
    pub explorer_api: Option<&'static str>,
}

/// Presets, looked up by id or name.
pub const PRESETS: &[ChainPreset] = &[
    ChainPreset {
        id: 1,
        name: "ethereum",
        decimals: 18,
        currency: "ETH",
        explorer_tx: Some("https://etherscan.io/tx/{hash}"),
        explorer_api: Some("https://api.etherscan.io/v2/api"),
    },
    ChainPreset {
        id: 1329,
        name: "mainnet",
        decimals: 18,
        currency: "SEI",
        explorer_tx: None,
        explorer_api: None,
    },
    ChainPreset {
        id: 1328,
        name: "testnet",
        decimals: 18,
        currency: "SEI",
        explorer_tx: None,
        explorer_api: None,
    },
];

/// Finds a preset by chain id.
pub fn preset(id: u64) -> Option<&'static ChainPreset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The native currency's symbol for amounts on chain `chain_id`: the preset's, or `native` for
/// a chain chaintrace does not know (an unknown chain's coin is not ETH).
pub fn currency(chain_id: u64) -> &'static str {
    preset(chain_id).map_or("native", |p| p.currency)
}

/// Resolves a `--chain` value: a decimal id (`1329`), a hex id (`0x531`), a CAIP-2 id
/// (`eip155:1329`) or a preset name (`mainnet`, `testnet`, `ethereum`), case-insensitively.
pub fn resolve_chain(s: &str) -> Option<&'static ChainPreset> {
    let t = s.trim().to_ascii_lowercase();
    let id = if let Some(h) = t.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(d) = t.strip_prefix("eip155:") {
        d.parse().ok()
    } else {
        t.parse().ok()
    };
    match id {
        Some(id) => preset(id),
        None => PRESETS.iter().find(|p| p.name == t),
    }
}

impl ChainPreset {
    /// The id as `eth_chainId` returns it (`0x531`), derived from the id.
    pub fn hex_id(&self) -> String {
        format!("{:#x}", self.id)
    }

    /// CAIP-2 chain id (`eip155:1329`), as wallet providers name chains, derived from the id.
    pub fn caip2(&self) -> String {
        format!("eip155:{}", self.id)
    }

    /// The explorer link for a transaction hash: `template` (a `--explorer` override, `{hash}`
    /// replaced) when given, else the preset's own template; `None` when neither exists.
    pub fn tx_url(&self, hash: &str, template: Option<&str>) -> Option<String> {
        template
            .or(self.explorer_tx)
            .map(|t| t.replace("{hash}", hash))
    }
}

/// The explorer link for a transaction on any chain: the `--explorer` template when given (any
/// chain), else the chain preset's own template.
pub fn explorer_tx_url(chain_id: u64, hash: &str, template: Option<&str>) -> Option<String> {
    match preset(chain_id) {
        Some(p) => p.tx_url(hash, template),
        None => template.map(|t| t.replace("{hash}", hash)),
    }
}

impl ForkSchedule {
    /// Every fork active from genesis, up to and including `spec`.
    pub fn all_from_genesis(chain_id: u64, spec: SpecId) -> Self {
        let at = |s: SpecId| if spec >= s { Some(0) } else { None };
        ForkSchedule {
            chain_id,
            homestead: at(SpecId::HOMESTEAD),
            tangerine: at(SpecId::TANGERINE),
            spurious_dragon: at(SpecId::SPURIOUS_DRAGON),
            byzantium: at(SpecId::BYZANTIUM),
            constantinople: at(SpecId::PETERSBURG),
            petersburg: at(SpecId::PETERSBURG),
            istanbul: at(SpecId::ISTANBUL),
            berlin: at(SpecId::BERLIN),
            london: at(SpecId::LONDON),
            merge_block: at(SpecId::MERGE),
            shanghai_time: at(SpecId::SHANGHAI),
            cancun_time: at(SpecId::CANCUN),
            prague_time: at(SpecId::PRAGUE),
            osaka_time: at(SpecId::OSAKA),
        }
    }

    /// The Ethereum mainnet schedule.
    pub fn ethereum_mainnet() -> Self {
        ForkSchedule {
            chain_id: 1,
            homestead: Some(1_150_000),
            tangerine: Some(2_463_000),
            spurious_dragon: Some(2_675_000),
            byzantium: Some(4_370_000),
            constantinople: Some(7_280_000),
            petersburg: Some(7_280_000),
            istanbul: Some(9_069_000),
            berlin: Some(12_244_000),
            london: Some(12_965_000),
            merge_block: Some(15_537_394),
            shanghai_time: Some(1_681_338_455),
            cancun_time: Some(1_710_338_135),
            prague_time: Some(1_746_612_311),
            osaka_time: Some(1_764_798_551),
        }
    }

    /// The schedule for a chain id: a preset when known, otherwise every fork up to `latest`.
    ///
    /// The 1329/1328 chain runs the Cancun instruction set with Prague's transaction types; its
    /// operators document Prague-level EVM semantics, so both presets replay as Prague.
    pub fn for_chain(chain_id: u64, latest: SpecId) -> Self {
        match chain_id {
            1 => Self::ethereum_mainnet(),
            1329 | 1328 => Self::all_from_genesis(chain_id, SpecId::PRAGUE),
            _ => Self::all_from_genesis(chain_id, latest),
        }
    }

    /// Reads a geth genesis `config` object. Keys are matched case-insensitively, as geth does
    /// (fixtures contain `"IstanbulBlock"`); unknown keys are ignored.
    pub fn from_geth_config(config: &Value) -> Result<Self, ConfigError> {
        let obj = config.as_object().ok_or(ConfigError::NotAnObject)?;
        let get = |name: &str| -> Result<Option<u64>, ConfigError> {
            for (k, v) in obj {
                if k.eq_ignore_ascii_case(name) {
                    if v.is_null() {
                        return Ok(None);
                    }
                    return crate::geth::hex::parse_u64(v).map(Some).map_err(|source| {
                        ConfigError::Key {
                            key: k.clone(),
                            source,
                        }
                    });
                }
            }
            Ok(None)
        };
        let ttd_zero = obj
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("terminalTotalDifficulty"))
            .map(|(_, v)| match v {
                Value::Number(n) => n.as_u64() == Some(0) || n.as_f64() == Some(0.0),
                Value::String(s) => s == "0" || s == "0x0",
                _ => false,
            })
            .unwrap_or(false);
        let merge_block = if ttd_zero {
            Some(get("mergeNetsplitBlock")?.unwrap_or(0))
        } else {
            None
        };
        let constantinople = get("constantinopleBlock")?;
        Ok(ForkSchedule {
            chain_id: get("chainId")?.unwrap_or(1),
            homestead: get("homesteadBlock")?,
            tangerine: get("eip150Block")?,
            spurious_dragon: get("eip158Block")?.or(get("eip155Block")?),
            byzantium: get("byzantiumBlock")?,
            constantinople,
            petersburg: get("petersburgBlock")?,
            istanbul: get("istanbulBlock")?,
            berlin: get("berlinBlock")?,
            london: get("londonBlock")?,
            merge_block,
            shanghai_time: get("shanghaiTime")?,
            cancun_time: get("cancunTime")?,
            prague_time: get("pragueTime")?,
            osaka_time: get("osakaTime")?,
        })
    }

    /// The fork in force for a block with this number and timestamp.
    pub fn spec_at(&self, number: u64, timestamp: u64) -> SpecId {
        let block = |b: Option<u64>| b.is_some_and(|b| number >= b);
        let time = |t: Option<u64>| t.is_some_and(|t| timestamp >= t);
        let merged = block(self.merge_block);
        if merged {
            if time(self.osaka_time) {
                return SpecId::OSAKA;
            }
            if time(self.prague_time) {
                return SpecId::PRAGUE;
            }
            if time(self.cancun_time) {
                return SpecId::CANCUN;
            }
            if time(self.shanghai_time) {
                return SpecId::SHANGHAI;
            }
            return SpecId::MERGE;
        }
        let checks = [
            (self.london, SpecId::LONDON),
            (self.berlin, SpecId::BERLIN),
            (self.istanbul, SpecId::ISTANBUL),
            (self.petersburg, SpecId::PETERSBURG),
            // revm has no separate Constantinople: its EIP-1283 was withdrawn by Petersburg.
            (self.constantinople, SpecId::PETERSBURG),
            (self.byzantium, SpecId::BYZANTIUM),
            (self.spurious_dragon, SpecId::SPURIOUS_DRAGON),
            (self.tangerine, SpecId::TANGERINE),
            (self.homestead, SpecId::HOMESTEAD),
        ];
        checks
            .iter()
            .find(|(b, _)| block(*b))
            .map(|(_, s)| *s)
            .unwrap_or(SpecId::FRONTIER)
    }
}

/// What a block header's own fields say of the fork it was built under, for chains without a
/// schedule here (a dev node, a private chain): each fork since London added a field
/// (`baseFeePerGas` London, `withdrawalsRoot` Shanghai, `parentBeaconBlockRoot` with the blob
/// fields Cancun, `requestsHash` Prague), and the merge set `difficulty` to 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderFork {
    /// The fork taken: the latest one the fields fit.
    pub spec: SpecId,
    /// The earliest fork the fields also fit; equal to `spec` when the fields tell exactly.
    pub earliest: SpecId,
    /// The field (or fact) that decided.
    pub evidence: &'static str,
    /// The OP forks the same fields fit, for an OP chain without a schedule; `None` when they
    /// fit none.
    pub op: Option<op::OpHeaderFork>,
}

impl HeaderFork {
    /// Reads a header object as `eth_getBlockBy*` returns it.
    pub fn from_header(h: &Value) -> HeaderFork {
        let has = |k: &str| h.get(k).is_some_and(|v| !v.is_null());
        let op = op::OpHeaderFork::from_header(h);
        let fork = |spec, earliest, evidence| HeaderFork {
            spec,
            earliest,
            evidence,
            op,
        };
        // Only blob fields, without parentBeaconBlockRoot, do not make Cancun: anvil prints
        // `blobGasUsed`/`excessBlobGas` on the blocks of every fork.
        if has("requestsHash") {
            // Osaka added no header field.
            fork(SpecId::OSAKA, SpecId::PRAGUE, "requestsHash")
        } else if has("parentBeaconBlockRoot") {
            fork(SpecId::CANCUN, SpecId::CANCUN, "parentBeaconBlockRoot")
        } else if has("withdrawalsRoot") {
            fork(SpecId::SHANGHAI, SpecId::SHANGHAI, "withdrawalsRoot")
        } else if has("baseFeePerGas") {
            let zero = h
                .get("difficulty")
                .and_then(|d| crate::geth::hex::parse_u256(d).ok())
                .is_none_or(|d| d.is_zero());
            if zero {
                // Paris set the difficulty to 0; a London block of a proof-of-work chain has
                // one, but a dev chain's London block may not.
                fork(
                    SpecId::MERGE,
                    SpecId::LONDON,
                    "baseFeePerGas and difficulty 0",
                )
            } else {
                fork(
                    SpecId::LONDON,
                    SpecId::LONDON,
                    "baseFeePerGas and a difficulty",
                )
            }
        } else {
            fork(SpecId::BERLIN, SpecId::FRONTIER, "no baseFeePerGas")
        }
    }

    /// The sentence for stderr when the fields fit more than one fork.
    pub fn ambiguity(&self, chain_id: u64) -> Option<String> {
        (self.spec != self.earliest).then(|| {
            format!(
                "chain {chain_id} has no fork schedule here: the block header ({}) fits {} to {}, \
                 which its fields cannot tell apart; replayed under {} (--hardfork overrides)",
                self.evidence,
                fork_name(self.earliest),
                fork_name(self.spec),
                fork_name(self.spec),
            )
        })
    }
}

/// The fork a block of chain `chain_id` runs under: Ethereum mainnet's schedule for chain 1, the
/// chain's preset for 1329/1328 when the node runs the chain's own rules, otherwise what the
/// block header says ([`HeaderFork`]), and the latest fork only when no header was read.
pub fn block_spec(
    chain_id: u64,
    number: u64,
    timestamp: u64,
    header: Option<HeaderFork>,
    chain_rules: bool,
) -> SpecId {
    match chain_id {
        1 => ForkSchedule::ethereum_mainnet().spec_at(number, timestamp),
        1329 | 1328 if chain_rules => {
            ForkSchedule::for_chain(chain_id, SpecId::OSAKA).spec_at(number, timestamp)
        }
        _ => header.map_or(SpecId::OSAKA, |h| h.spec),
    }
}

/// A fork's name as `--hardfork` takes it.
pub fn fork_name(spec: SpecId) -> &'static str {
    match spec {
        SpecId::FRONTIER => "Frontier",
        SpecId::HOMESTEAD => "Homestead",
        SpecId::TANGERINE => "Tangerine",
        SpecId::SPURIOUS_DRAGON => "SpuriousDragon",
        SpecId::BYZANTIUM => "Byzantium",
        SpecId::PETERSBURG => "Petersburg",
        SpecId::ISTANBUL => "Istanbul",
        SpecId::BERLIN => "Berlin",
        SpecId::LONDON => "London",
        SpecId::MERGE => "Paris",
        SpecId::SHANGHAI => "Shanghai",
        SpecId::CANCUN => "Cancun",
        SpecId::PRAGUE => "Prague",
        SpecId::OSAKA => "Osaka",
        SpecId::AMSTERDAM => "Amsterdam",
    }
}

/// Parses a fork name as given to `--hardfork` (case-insensitive, geth or revm spelling).
pub fn parse_hardfork(name: &str) -> Option<SpecId> {
    let n = name.to_ascii_lowercase().replace(['-', '_'], "");
    Some(match n.as_str() {
        "frontier" => SpecId::FRONTIER,
        "homestead" => SpecId::HOMESTEAD,
        "tangerine" | "tangerinewhistle" | "eip150" => SpecId::TANGERINE,
        "spuriousdragon" | "eip158" | "eip155" => SpecId::SPURIOUS_DRAGON,
        "byzantium" => SpecId::BYZANTIUM,
        "constantinople" | "petersburg" => SpecId::PETERSBURG,
        "istanbul" | "muirglacier" => SpecId::ISTANBUL,
        "berlin" => SpecId::BERLIN,
        "london" | "arrowglacier" | "grayglacier" => SpecId::LONDON,
        "merge" | "paris" => SpecId::MERGE,
        "shanghai" => SpecId::SHANGHAI,
        "cancun" => SpecId::CANCUN,
        "prague" => SpecId::PRAGUE,
        "osaka" => SpecId::OSAKA,
        _ => return None,
    })
}

/// The names `--hardfork` accepts, for error messages.
pub const HARDFORK_NAMES: &str = "frontier, homestead, tangerine, spuriousdragon, byzantium, \
petersburg, istanbul, berlin, london, merge, shanghai, cancun, prague, osaka";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_named_in_the_chains_own_currency() {
        assert_eq!(currency(1), "ETH");
        assert_eq!(currency(1329), "SEI");
        assert_eq!(currency(1328), "SEI");
        assert_eq!(currency(31337), "native");
    }

    #[test]
    fn explorer_links_come_from_the_override_or_the_preset() {
        assert_eq!(
            explorer_tx_url(1, "0xab", None).as_deref(),
            Some("https://etherscan.io/tx/0xab")
        );
        assert_eq!(explorer_tx_url(1329, "0xab", None), None);
        assert_eq!(
            explorer_tx_url(1329, "0xab", Some("https://x.example/tx/{hash}")).as_deref(),
            Some("https://x.example/tx/0xab")
        );
    }

    #[test]
    fn mainnet_schedule_picks_forks_by_block_and_time() {
        let s = ForkSchedule::ethereum_mainnet();
        assert_eq!(s.spec_at(1_000_000, 0), SpecId::FRONTIER);
        assert_eq!(s.spec_at(4_370_000, 0), SpecId::BYZANTIUM);
        assert_eq!(s.spec_at(15_537_394, 1_663_224_179), SpecId::MERGE);
        assert_eq!(s.spec_at(19_426_587, 1_710_338_135), SpecId::CANCUN);
    }

    #[test]
    fn geth_config_keys_are_case_insensitive() {
        let cfg: Value =
            serde_json::json!({"chainId": 3, "IstanbulBlock": 10, "byzantiumBlock": 0});
        let s = ForkSchedule::from_geth_config(&cfg).unwrap();
        assert_eq!(s.spec_at(10, 0), SpecId::ISTANBUL);
        assert_eq!(s.spec_at(9, 0), SpecId::BYZANTIUM);
    }

    #[test]
    fn chain_is_resolved_by_id_hex_caip2_and_name() {
        for s in [
            "1329",
            "0x531",
            "0X531",
            "eip155:1329",
            "mainnet",
            "MAINNET",
        ] {
            let p = resolve_chain(s).unwrap_or_else(|| panic!("{s} not resolved"));
            assert_eq!(
                (p.id, p.hex_id(), p.caip2(), p.decimals),
                (1329, "0x531".to_string(), "eip155:1329".to_string(), 18)
            );
        }
        for s in ["1328", "0x530", "eip155:1328", "testnet"] {
            assert_eq!(resolve_chain(s).map(|p| p.id), Some(1328), "{s}");
        }
        assert_eq!(resolve_chain("7"), None);
        assert_eq!(resolve_chain("devnet"), None);
        let p = resolve_chain("testnet").unwrap();
        assert_eq!(p.tx_url("0xab", None), None);
        assert_eq!(
            p.tx_url("0xab", Some("https://x.example/tx/{hash}"))
                .as_deref(),
            Some("https://x.example/tx/0xab")
        );
    }

    #[test]
    fn shanghai_needs_the_merge() {
        let cfg: Value = serde_json::json!({"chainId": 1337, "londonBlock": 0, "shanghaiTime": 0});
        let s = ForkSchedule::from_geth_config(&cfg).unwrap();
        assert_eq!(s.spec_at(5, 100), SpecId::LONDON);
    }
}
