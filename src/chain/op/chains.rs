//! The OP-stack chains chaintrace knows by chain id, with their fork schedules as the
//! superchain registry gives them, and which chains' blocks run under the OP stack's rules.
//!
//! Fork times: superchain-registry `superchain/configs/mainnet/op.toml` (OP Mainnet, 10) and
//! `superchain/configs/sepolia/op.toml` (OP Sepolia, 11155420) at commit 8336d2ae;
//! `superchain/configs/mainnet/base.toml` (Base, 8453) and `superchain/configs/sepolia/base.toml`
//! (Base Sepolia, 84532) as they were before commit 0d9aefc4 removed them from the registry.
//! The registry lists no `regolith_time`: op-geth activates Regolith at genesis for registry
//! chains (`params/superchain.go`: `RegolithTime: &genesisActivation`), and OP Mainnet's first
//! Bedrock block is its L2 genesis, 105,235,063 (the `OPMainnetChainID` override there).
//! Unichain (130), Ink (57073), Soneium (1868), World Chain (480), Zora (7777777) and Mode
//! (34443): `superchain/configs/mainnet/{unichain,ink,soneium,worldchain,zora,mode}.toml` at
//! commit 8336d2ae, each born on Bedrock (L2 genesis block 0).
//! Karst (Upgrade 19): `karst_time` of the same files at commit 8336d2ae — 1,783,526,401 on
//! OP Mainnet, Unichain, Ink, Soneium, Zora and Mode, 1,781,712,001 on OP Sepolia; World Chain's
//! file schedules none, and Base's files left the registry before Karst was scheduled, so Base
//! and Base Sepolia run Jovian's rules until a `--chain-config` says otherwise.

use super::fork::{OpRules, OpSchedule};
use crate::chain::rules::Ruleset;

/// One known OP-stack chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpChain {
    pub chain_id: u64,
    pub name: &'static str,
    pub schedule: OpSchedule,
}

fn schedule(bedrock_block: u64, times: [u64; 8], karst: Option<u64>) -> OpSchedule {
    let [canyon, delta, ecotone, fjord, granite, holocene, isthmus, jovian] = times;
    OpSchedule {
        bedrock_block,
        regolith_time: Some(0),
        canyon_time: Some(canyon),
        delta_time: Some(delta),
        ecotone_time: Some(ecotone),
        fjord_time: Some(fjord),
        granite_time: Some(granite),
        holocene_time: Some(holocene),
        isthmus_time: Some(isthmus),
        jovian_time: Some(jovian),
        karst_time: karst,
    }
}

/// Karst on the mainnet chains the Optimism Collective governs (op.toml, unichain.toml, …).
const MAINNET_KARST: Option<u64> = Some(1_783_526_401);

/// Mainnet times, shared by OP Mainnet and Base.
const MAINNET_TIMES: [u64; 8] = [
    1_704_992_401, // canyon
    1_708_560_000, // delta
    1_710_374_401, // ecotone
    1_720_627_201, // fjord
    1_726_070_401, // granite
    1_736_445_601, // holocene
    1_746_806_401, // isthmus
    1_764_691_201, // jovian
];

/// Sepolia times, shared by OP Sepolia and Base Sepolia.
const SEPOLIA_TIMES: [u64; 8] = [
    1_699_981_200, // canyon
    1_703_203_200, // delta
    1_708_534_800, // ecotone
    1_716_998_400, // fjord
    1_723_478_400, // granite
    1_732_633_200, // holocene
    1_744_905_600, // isthmus
    1_763_568_001, // jovian
];

/// Holocene times of the chains born at Granite (Canyon to Granite at 0), each from its own
/// registry file; Isthmus and Jovian as the mainnet's.
const fn granite_born(holocene: u64) -> [u64; 8] {
    [0, 0, 0, 0, 0, holocene, MAINNET_TIMES[6], MAINNET_TIMES[7]]
}

/// World Chain (`superchain/configs/mainnet/worldchain.toml`): Ecotone at genesis, its own
/// later forks.
const WORLDCHAIN_TIMES: [u64; 8] = [
    0,             // canyon
    0,             // delta
    0,             // ecotone
    1_721_826_000, // fjord
    1_727_780_400, // granite
    1_738_238_400, // holocene
    1_764_072_000, // isthmus
    1_777_593_600, // jovian
];

/// The OP-stack chain with id `chain_id`, if chaintrace knows it.
pub fn known(chain_id: u64) -> Option<OpChain> {
    let (name, schedule) = match chain_id {
        10 => (
            "OP Mainnet",
            schedule(105_235_063, MAINNET_TIMES, MAINNET_KARST),
        ),
        8453 => ("Base", schedule(0, MAINNET_TIMES, None)),
        // superchain/configs/sepolia/op.toml: karst_time 1781712001.
        11_155_420 => (
            "OP Sepolia",
            schedule(0, SEPOLIA_TIMES, Some(1_781_712_001)),
        ),
        84_532 => ("Base Sepolia", schedule(0, SEPOLIA_TIMES, None)),
        // superchain/configs/mainnet/unichain.toml: holocene_time 1736445601.
        130 => (
            "Unichain",
            schedule(0, granite_born(1_736_445_601), MAINNET_KARST),
        ),
        // superchain/configs/mainnet/ink.toml: holocene_time 1742396400.
        57_073 => (
            "Ink",
            schedule(0, granite_born(1_742_396_400), MAINNET_KARST),
        ),
        // superchain/configs/mainnet/soneium.toml: holocene_time 1738573200.
        1868 => (
            "Soneium",
            schedule(0, granite_born(1_738_573_200), MAINNET_KARST),
        ),
        // superchain/configs/mainnet/worldchain.toml (no karst_time).
        480 => ("World Chain", schedule(0, WORLDCHAIN_TIMES, None)),
        // superchain/configs/mainnet/zora.toml and mode.toml: the mainnet's times.
        7_777_777 => ("Zora", schedule(0, MAINNET_TIMES, MAINNET_KARST)),
        34_443 => ("Mode", schedule(0, MAINNET_TIMES, MAINNET_KARST)),
        _ => return None,
    };
    Some(OpChain {
        chain_id,
        name,
        schedule,
    })
}

/// The OP-stack forks in force for block (`number`, `timestamp`) of chain `chain_id` under
/// `ruleset`: a custom chain's schedule (`custom`, from `--chain-config`) or a known OP chain's,
/// under its own rules or `--chain-rules optimism`; on a chain chaintrace has no schedule for,
/// every fork through Jovian active — only before a header is read (`op_likely`'s prefetch
/// guess): a block's replay takes the fork its header decides or is refused
/// (`source/node_rules.rs`); `None` under Ethereum's
/// rules, for other chains, and before Bedrock (the legacy OVM chain, whose rules these are
/// not).
pub fn op_rules(
    chain_id: u64,
    ruleset: Ruleset,
    custom: Option<&OpSchedule>,
    number: u64,
    timestamp: u64,
) -> Option<OpRules> {
    let schedule = match (ruleset, custom, known(chain_id)) {
        (Ruleset::Ethereum, _, _) => return None,
        (_, Some(s), _) => s.clone(),
        (Ruleset::Chain, None, None) => return None,
        (_, None, Some(c)) => c.schedule,
        (Ruleset::Optimism, None, None) => OpSchedule::all_from_genesis(super::OpFork::Jovian),
    };
    schedule
        .is_bedrock(number)
        .then(|| schedule.rules_at(timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::op::OpFork;

    #[test]
    fn op_mainnet_forks_by_the_registry() {
        // Isthmus at 1746806401 (superchain/configs/mainnet/op.toml), Bedrock from 105235063.
        let r = op_rules(10, Ruleset::Chain, None, 130_000_000, 1_746_806_401).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Isthmus));
        let r = op_rules(10, Ruleset::Chain, None, 130_000_000, 1_746_806_400).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Holocene));
        assert_eq!(op_rules(10, Ruleset::Chain, None, 105_235_062, 0), None);
        assert_eq!(op_rules(10, Ruleset::Ethereum, None, 130_000_000, 1), None);
        assert_eq!(op_rules(1, Ruleset::Chain, None, 1, 1), None);
        assert!(op_rules(1, Ruleset::Optimism, None, 1, 1)
            .unwrap()
            .is(OpFork::Jovian));
        // The Superchain presets, each at a fork boundary of its registry file.
        let at = |id, t| {
            op_rules(id, Ruleset::Chain, None, 1, t)
                .unwrap()
                .latest()
                .unwrap()
        };
        // Karst (Upgrade 19) where the registry schedules it; Base and World Chain stay on
        // Jovian.
        let op = |t| {
            op_rules(10, Ruleset::Chain, None, 130_000_000, t)
                .unwrap()
                .latest()
        };
        assert_eq!(op(1_783_526_400), Some(OpFork::Jovian));
        assert_eq!(op(1_783_526_401), Some(OpFork::Karst));
        assert_eq!(at(11_155_420, 1_781_712_001), OpFork::Karst);
        assert_eq!(at(130, 1_783_526_401), OpFork::Karst);
        assert_eq!(at(8453, u64::MAX), OpFork::Jovian);
        assert_eq!(at(480, u64::MAX), OpFork::Jovian);
        assert_eq!(
            OpFork::Karst.eth_spec(),
            revm::primitives::hardfork::SpecId::OSAKA
        );
        assert_eq!(at(130, 1_736_445_600), OpFork::Granite);
        assert_eq!(at(130, 1_736_445_601), OpFork::Holocene);
        assert_eq!(at(57_073, 1_742_396_400), OpFork::Holocene);
        assert_eq!(at(1868, 1_738_573_199), OpFork::Granite);
        assert_eq!(at(480, 1_721_825_999), OpFork::Ecotone);
        assert_eq!(at(480, 1_764_072_000), OpFork::Isthmus);
        assert_eq!(at(480, 1_777_593_600), OpFork::Jovian);
        assert_eq!(at(7_777_777, 1_710_374_401), OpFork::Ecotone);
        assert_eq!(at(34_443, 1_764_691_201), OpFork::Jovian);
        assert_eq!(known(34_443).unwrap().name, "Mode");
        // Base Sepolia at genesis: Bedrock and Regolith only.
        let r = op_rules(84_532, Ruleset::Chain, None, 0, 1_695_768_288).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Regolith));
        // A custom schedule (--chain-config) wins over the preset and the all-forks default,
        // not over Ethereum's rules.
        let custom = OpSchedule {
            bedrock_block: 5,
            regolith_time: Some(0),
            ecotone_time: Some(100),
            ..OpSchedule::default()
        };
        let c = Some(&custom);
        assert_eq!(op_rules(901, Ruleset::Chain, c, 4, 1_000), None);
        let r = op_rules(901, Ruleset::Chain, c, 5, 99).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Regolith));
        let r = op_rules(901, Ruleset::Optimism, c, 5, 100).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Ecotone));
        assert!(!r.is(OpFork::Canyon));
        let r = op_rules(10, Ruleset::Chain, c, 5, 100).unwrap();
        assert_eq!(r.latest(), Some(OpFork::Ecotone));
        assert_eq!(op_rules(901, Ruleset::Ethereum, c, 5, 100), None);
    }
}
