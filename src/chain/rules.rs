//! Where a chain's execution departs from Ethereum's, as data by height.
//!
//! Ethereum-like chains have no entry: their fork schedule says everything. Chains 1329 and 1328
//! run geth's EVM inside a Cosmos application that changes the fee flow, COINBASE, the SSTORE
//! set cost and the precompile set (../shared/chain/replay-divergences.md, gathered from the
//! node's source). Each rule below names that source; values marked "derived" or "default" are
//! to be checked against a node's own traces, and the self-check reports any divergence.

use alloy_primitives::{address, Address};

/// A precompile of the chain that plain revm does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainPrecompile {
    pub address: Address,
    pub name: &'static str,
    /// A pure function of its input (could be computed locally); otherwise it reads or writes
    /// Cosmos state and only the node can say what it did.
    pub pure: bool,
}

/// The chain's execution rules at one height.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainRules {
    /// Ethereum burns the base fee; these chains credit the coinbase with
    /// `gasUsed × (baseFee + tip)` (the fork's `core/state_transition.go`).
    pub burn_base_fee: bool,
    /// COINBASE and the fee recipient, when not the header's miner.
    pub coinbase: Option<Address>,
    /// SSTORE's cost to set a zero slot (`SeiSstoreSetGasEip2200`, a governance parameter).
    pub sstore_set_gas: u64,
    /// Whether `sstore_set_gas` was read from the chain's consensus layer for this block;
    /// otherwise it is the parameter's default (and a replay that depends on it says so).
    pub consensus_read: bool,
    /// Whether blob (type-3) transactions are accepted.
    pub blob_txs: bool,
    /// Receipts report `cumulativeGasUsed` 0 (legacy receipts) at this height.
    pub zero_cumulative_gas_used: bool,
    /// PREVRANDAO is `keccak256` of the block time's Go binary encoding, not the header's
    /// `mixHash` (which the node's `eth_getBlock*` prints as zero).
    pub prevrandao_from_time: bool,
    pub precompiles: &'static [ChainPrecompile],
}

impl ChainRules {
    /// The chain precompile at `a`, if any.
    pub fn precompile(&self, a: Address) -> Option<&'static ChainPrecompile> {
        self.precompiles.iter().find(|p| p.address == a)
    }
}

/// The fee collector module's account: a Cosmos module address is the first 20 bytes of
/// sha256 of its name, and an account without an association has the same 20 bytes as its EVM
/// address (derived, not yet checked against a node).
pub const FEE_COLLECTOR: Address = address!("f1829676db577682e944fc3493d451b67ff3e29f");

/// Ethereum's SSTORE set cost, the parameter's default.
pub const DEFAULT_SSTORE_SET_GAS: u64 = 20_000;

const fn pc(address: Address, name: &'static str, pure: bool) -> ChainPrecompile {
    ChainPrecompile {
        address,
        name,
        pure,
    }
}

/// `precompiles/setup.go`: every address the node's HEAD knows (some exist only at later
/// heights; a call to one that does not exist yet fails on the node and shows in the
/// self-check).
pub const PRECOMPILES: &[ChainPrecompile] = &[
    pc(
        address!("0000000000000000000000000000000000001001"),
        "bank",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001002"),
        "wasmd",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001003"),
        "json",
        true,
    ),
    pc(
        address!("0000000000000000000000000000000000001004"),
        "addr",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001005"),
        "staking",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001006"),
        "gov",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001007"),
        "distribution",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001008"),
        "oracle",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001009"),
        "ibc",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100a"),
        "pointerview",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100b"),
        "pointer",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100c"),
        "solo",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100d"),
        "auth",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100e"),
        "authz",
        false,
    ),
    pc(
        address!("000000000000000000000000000000000000100f"),
        "evidence",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001011"),
        "p256",
        true,
    ),
    pc(
        address!("0000000000000000000000000000000000001012"),
        "mint",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001013"),
        "params",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001014"),
        "slashing",
        false,
    ),
    pc(
        address!("0000000000000000000000000000000000001015"),
        "upgrade",
        false,
    ),
];

/// A change of rules from a height on.
struct Epoch {
    from: u64,
    zero_cumulative_gas_used: bool,
}

/// Receipts are legacy (`cumulativeGasUsed` 0) below pacific-1 162,745,893 and atlantic-2
/// 191,939,681 (`evmrpc` receipt encoding).
const MAINNET: &[Epoch] = &[
    Epoch {
        from: 0,
        zero_cumulative_gas_used: true,
    },
    Epoch {
        from: 162_745_893,
        zero_cumulative_gas_used: false,
    },
];

const TESTNET: &[Epoch] = &[
    Epoch {
        from: 0,
        zero_cumulative_gas_used: true,
    },
    Epoch {
        from: 191_939_681,
        zero_cumulative_gas_used: false,
    },
];

/// Which rules the node behind a chain id runs. A chain id with rules of its own (1329/1328) is
/// not proof that the node runs them: an anvil or Hardhat node started with `--chain-id 1329`
/// (a local fork of the chain) runs Ethereum's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ruleset {
    /// The chain's own rules, when its chain id has any ([`rules_at`]).
    #[default]
    Chain,
    /// Ethereum's rules, whatever the chain id.
    Ethereum,
    /// The OP stack's rules, whatever the chain id (`--chain-rules optimism`): deposits, the
    /// L1 data fee and the operator fee, the fee vaults.
    Optimism,
}

impl Ruleset {
    pub fn name(self) -> &'static str {
        match self {
            Ruleset::Chain => "chain",
            Ruleset::Ethereum => "ethereum",
            Ruleset::Optimism => "optimism",
        }
    }

    pub fn parse(s: &str) -> Option<Ruleset> {
        match s.to_ascii_lowercase().as_str() {
            "chain" => Some(Ruleset::Chain),
            "ethereum" => Some(Ruleset::Ethereum),
            "optimism" => Some(Ruleset::Optimism),
            _ => None,
        }
    }
}

/// What a node's `web3_clientVersion` says of the rules it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeClient {
    /// The chain's own node. Its `evmrpc/web3.go` answers `Geth/` + GOOS-GOARCH + `/` + Go's
    /// version (`Geth/linux-amd64/go1.24.4`): "Geth" with no version of its own, which no
    /// release of geth prints (geth: `Geth/v1.17.5-stable-…/linux-amd64/go1.25.1`).
    ChainNode,
    /// A node that runs Ethereum's rules (a dev node, geth, another client), named.
    Ethereum(String),
    /// Not recognised.
    Unknown,
}

/// Classifies a `web3_clientVersion` answer.
pub fn classify_client(version: &str) -> NodeClient {
    let parts: Vec<&str> = version.split('/').collect();
    let is_platform = |p: &str| {
        p.split_once('-').is_some_and(|(os, arch)| {
            !os.is_empty()
                && !arch.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
    };
    if parts.len() == 3 && parts[0] == "Geth" && is_platform(parts[1]) && parts[2].starts_with("go")
    {
        return NodeClient::ChainNode;
    }
    const ETHEREUM: &[&str] = &[
        "anvil",
        "hardhatnetwork",
        "hardhat",
        "ganache",
        "ethereumjs",
        "geth",
        "reth",
        "erigon",
        "nethermind",
        "besu",
        "tevm",
        "edr",
    ];
    let name = parts[0].to_ascii_lowercase();
    if ETHEREUM.iter().any(|k| name == *k) {
        return NodeClient::Ethereum(version.to_string());
    }
    NodeClient::Unknown
}

/// The rules of chain `chain_id` at block `height`; `None` for chains that follow Ethereum.
pub fn rules_at(chain_id: u64, height: u64) -> Option<ChainRules> {
    let epochs = match chain_id {
        1329 => MAINNET,
        1328 => TESTNET,
        _ => return None,
    };
    let epoch = epochs.iter().rev().find(|e| e.from <= height)?;
    Some(ChainRules {
        burn_base_fee: false,
        coinbase: Some(FEE_COLLECTOR),
        sstore_set_gas: DEFAULT_SSTORE_SET_GAS,
        consensus_read: false,
        blob_txs: false,
        zero_cumulative_gas_used: epoch.zero_cumulative_gas_used,
        prevrandao_from_time: true,
        precompiles: PRECOMPILES,
    })
}

/// PREVRANDAO of chains 1329/1328: `keccak256(header.Time.MarshalBinary())` (x/evm/keeper
/// `GetVMBlockContext`). Go's encoding of a UTC time is version 1, the seconds since 1 January
/// of year 1 (8 bytes), the nanoseconds (4 bytes) and the zone offset -1 meaning UTC (2
/// bytes), all big-endian. The consensus header's time has nanoseconds; `eth_getBlock*` gives
/// whole seconds only, so a replay that knows only those passes `nanos` 0 and says so.
pub fn prevrandao_from_time(unix_seconds: u64, nanos: u32) -> alloy_primitives::B256 {
    const UNIX_TO_INTERNAL: i64 = 62_135_596_800;
    let mut b = Vec::with_capacity(15);
    b.push(1u8);
    b.extend_from_slice(&(unix_seconds as i64 + UNIX_TO_INTERNAL).to_be_bytes());
    b.extend_from_slice(&(nanos as i32).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    alloy_primitives::keccak256(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethereum_has_no_rules_and_the_presets_change_by_height() {
        assert_eq!(rules_at(1, 20_000_000), None);
        let early = rules_at(1329, 100_000_000).unwrap();
        let late = rules_at(1329, 162_745_893).unwrap();
        assert!(early.zero_cumulative_gas_used && !late.zero_cumulative_gas_used);
        assert!(!late.burn_base_fee && !late.blob_txs);
        assert!(
            rules_at(1328, 191_939_680)
                .unwrap()
                .zero_cumulative_gas_used
        );
        let json = late
            .precompile(address!("0000000000000000000000000000000000001003"))
            .unwrap();
        assert!(json.pure && json.name == "json");
    }

    /// Go's `time.Unix(0, 0).UTC().MarshalBinary()` is 01 0000000e7791f700 00000000 ffff (the
    /// seconds between year 1 and 1970, 62135596800 = 0xe7791f700).
    #[test]
    fn prevrandao_hashes_gos_binary_time() {
        let want = alloy_primitives::keccak256(
            alloy_primitives::hex::decode("010000000e7791f70000000000ffff").unwrap(),
        );
        assert_eq!(prevrandao_from_time(0, 0), want);
        assert_ne!(prevrandao_from_time(0, 1), want);
    }

    /// The chain's node answers `Geth/` GOOS-GOARCH `/` runtime.Version() (sei-chain
    /// `evmrpc/web3.go`); anvil 1.7.1 answers `anvil/v1.7.1`; geth v1.17 `Geth/v1.17.5-stable-…`.
    #[test]
    fn client_versions_name_the_rules() {
        assert_eq!(
            classify_client("Geth/linux-amd64/go1.24.4"),
            NodeClient::ChainNode
        );
        assert_eq!(
            classify_client("Geth/darwin-arm64/go1.22.12"),
            NodeClient::ChainNode
        );
        for other in [
            "anvil/v1.7.1",
            "HardhatNetwork/2.22.19/@nomicfoundation/edr/0.10.0",
            "Geth/v1.17.5-stable-a1b2c3d4/linux-amd64/go1.25.1",
            "reth/v1.9.3-abcdef/x86_64-unknown-linux-gnu",
        ] {
            assert!(
                matches!(classify_client(other), NodeClient::Ethereum(_)),
                "{other}"
            );
        }
        assert_eq!(classify_client("SomeProxy/1.0"), NodeClient::Unknown);
        assert_eq!(
            classify_client("Geth/v1.17.5/x/go1.25"),
            NodeClient::Ethereum("Geth/v1.17.5/x/go1.25".into())
        );
    }

    #[test]
    fn the_fee_collector_is_the_module_address() {
        use sha2::Digest;
        let h = sha2::Sha256::digest(b"fee_collector");
        assert_eq!(FEE_COLLECTOR.as_slice(), &h[..20]);
    }
}
