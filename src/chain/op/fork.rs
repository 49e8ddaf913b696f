//! OP-stack hard forks and their activation schedule.
//!
//! Bedrock activates at a block number, every later fork at an L2 block timestamp. op-geth asks
//! each fork on its own (`params/config.go`: `IsRegolith(time)`, `IsEcotone(time)`, … each a
//! `isTimestampForked` of its own field), so a chain config that sets Ecotone but not Regolith
//! runs Ecotone's rules with Regolith's off; op-geth's own tests build such configs. [`OpRules`]
//! keeps that set exactly; [`OpFork`] is the usual case, every fork up to one active (op-node's
//! rollup config requires the forks in order).

/// An OP-stack hard fork, in activation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpFork {
    Bedrock,
    Regolith,
    Canyon,
    /// No execution-layer change (op-geth's chain config has no Delta time); kept so that a
    /// rollup config's schedule reads whole.
    Delta,
    Ecotone,
    Fjord,
    Granite,
    Holocene,
    Isthmus,
    Jovian,
    /// Osaka's EIPs on L2 (7823, 7825, 7883, 7939, 7951) and the bn256 pairing bounded to 300
    /// pairs (Upgrade 19; specs.optimism.io `protocol/karst/exec-engine`). op-geth does not
    /// run it (its support ended before Karst); op-revm's `OpSpecId::KARST` is the reference.
    Karst,
}

impl OpFork {
    /// Every fork, oldest first.
    pub const ALL: [OpFork; 11] = [
        OpFork::Bedrock,
        OpFork::Regolith,
        OpFork::Canyon,
        OpFork::Delta,
        OpFork::Ecotone,
        OpFork::Fjord,
        OpFork::Granite,
        OpFork::Holocene,
        OpFork::Isthmus,
        OpFork::Jovian,
        OpFork::Karst,
    ];

    /// The fork's name as the OP-stack specs spell it.
    pub fn name(self) -> &'static str {
        match self {
            OpFork::Bedrock => "Bedrock",
            OpFork::Regolith => "Regolith",
            OpFork::Canyon => "Canyon",
            OpFork::Delta => "Delta",
            OpFork::Ecotone => "Ecotone",
            OpFork::Fjord => "Fjord",
            OpFork::Granite => "Granite",
            OpFork::Holocene => "Holocene",
            OpFork::Isthmus => "Isthmus",
            OpFork::Jovian => "Jovian",
            OpFork::Karst => "Karst",
        }
    }

    /// A fork by name, case-insensitively.
    pub fn from_name(name: &str) -> Option<OpFork> {
        OpFork::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The Ethereum fork whose EVM the OP fork runs, as op-geth's chain configs pair them
    /// (and op-revm's `OpSpecId::into_eth_spec`): Bedrock and Regolith London with the merge's
    /// PREVRANDAO, Canyon Shanghai, Ecotone to Holocene Cancun, Isthmus and Jovian Prague,
    /// Karst Osaka (op-revm 20 `OpSpecId::KARST => SpecId::OSAKA`). Delta changes nothing in
    /// execution and runs Canyon's.
    pub fn eth_spec(self) -> revm::primitives::hardfork::SpecId {
        use revm::primitives::hardfork::SpecId;
        match self {
            OpFork::Bedrock | OpFork::Regolith => SpecId::MERGE,
            OpFork::Canyon | OpFork::Delta => SpecId::SHANGHAI,
            OpFork::Ecotone | OpFork::Fjord | OpFork::Granite | OpFork::Holocene => SpecId::CANCUN,
            OpFork::Isthmus | OpFork::Jovian => SpecId::PRAGUE,
            OpFork::Karst => SpecId::OSAKA,
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// The set of OP-stack forks active for one block, each on its own as op-geth's `params.Rules`
/// (`IsOptimismRegolith`, …) has them. `OpRules::from(fork)` is every fork up to `fork`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpRules(u16);

impl OpRules {
    /// No fork active.
    pub const fn none() -> OpRules {
        OpRules(0)
    }

    /// Every fork up to and including `fork`.
    pub fn up_to(fork: OpFork) -> OpRules {
        OpRules((fork.bit() << 1) - 1)
    }

    /// These rules with `fork` active too.
    pub fn with(self, fork: OpFork) -> OpRules {
        OpRules(self.0 | fork.bit())
    }

    /// Whether `fork` is active.
    pub fn is(self, fork: OpFork) -> bool {
        self.0 & fork.bit() != 0
    }

    /// The latest active fork, if any.
    pub fn latest(self) -> Option<OpFork> {
        OpFork::ALL.into_iter().rev().find(|f| self.is(*f))
    }
}

impl From<OpFork> for OpRules {
    fn from(fork: OpFork) -> OpRules {
        OpRules::up_to(fork)
    }
}

/// When each OP-stack fork activates on a chain: a rollup config's `*_time` fields (`None`: not
/// scheduled) and the Bedrock block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpSchedule {
    /// The first Bedrock block (0 for chains born on Bedrock; OP Mainnet's is 105,235,063).
    pub bedrock_block: u64,
    pub regolith_time: Option<u64>,
    pub canyon_time: Option<u64>,
    pub delta_time: Option<u64>,
    pub ecotone_time: Option<u64>,
    pub fjord_time: Option<u64>,
    pub granite_time: Option<u64>,
    pub holocene_time: Option<u64>,
    pub isthmus_time: Option<u64>,
    pub jovian_time: Option<u64>,
    pub karst_time: Option<u64>,
}

impl OpSchedule {
    /// Every fork up to and including `fork` active from genesis (block 0, time 0).
    pub fn all_from_genesis(fork: OpFork) -> OpSchedule {
        let at = |f: OpFork| (fork >= f).then_some(0);
        OpSchedule {
            bedrock_block: 0,
            regolith_time: at(OpFork::Regolith),
            canyon_time: at(OpFork::Canyon),
            delta_time: at(OpFork::Delta),
            ecotone_time: at(OpFork::Ecotone),
            fjord_time: at(OpFork::Fjord),
            granite_time: at(OpFork::Granite),
            holocene_time: at(OpFork::Holocene),
            isthmus_time: at(OpFork::Isthmus),
            jovian_time: at(OpFork::Jovian),
            karst_time: at(OpFork::Karst),
        }
    }

    /// A timestamp fork's activation time; `None` for Bedrock, which a block number activates.
    pub fn activation_time(&self, fork: OpFork) -> Option<u64> {
        match fork {
            OpFork::Bedrock => None,
            OpFork::Regolith => self.regolith_time,
            OpFork::Canyon => self.canyon_time,
            OpFork::Delta => self.delta_time,
            OpFork::Ecotone => self.ecotone_time,
            OpFork::Fjord => self.fjord_time,
            OpFork::Granite => self.granite_time,
            OpFork::Holocene => self.holocene_time,
            OpFork::Isthmus => self.isthmus_time,
            OpFork::Jovian => self.jovian_time,
            OpFork::Karst => self.karst_time,
        }
    }

    /// Whether block `number` is a Bedrock block (op-geth `IsBedrock`).
    pub fn is_bedrock(&self, number: u64) -> bool {
        number >= self.bedrock_block
    }

    /// The forks active at `timestamp`, each asked on its own as op-geth does
    /// (`isTimestampForked`: scheduled and `time <= timestamp`). Bedrock counts as active: it
    /// is block-activated, see [`OpSchedule::is_bedrock`].
    pub fn rules_at(&self, timestamp: u64) -> OpRules {
        OpFork::ALL
            .into_iter()
            .filter(|f| match self.activation_time(*f) {
                None => *f == OpFork::Bedrock,
                Some(t) => t <= timestamp,
            })
            .fold(OpRules::none(), OpRules::with)
    }

    /// The latest fork active at `timestamp` (Bedrock when no timestamp fork is).
    pub fn fork_at(&self, timestamp: u64) -> OpFork {
        self.rules_at(timestamp).latest().unwrap_or(OpFork::Bedrock)
    }

    /// The latest fork of block (`number`, `timestamp`); `None` before Bedrock (the legacy OVM
    /// chain, whose fees these rules do not describe).
    pub fn fork_at_block(&self, number: u64, timestamp: u64) -> Option<OpFork> {
        self.is_bedrock(number).then(|| self.fork_at(timestamp))
    }
}

/// What an OP block header's own fields say of its fork, for a chain with neither a preset nor
/// `--chain-config`: the range of forks the fields fit, and the fields that decided.
///
/// The fields (op-geth's headers; the specs' `exec-engine` pages): `withdrawalsRoot` from
/// Canyon, `parentBeaconBlockRoot` and the blob fields from Ecotone, `extraData` of 9 bytes
/// with version 0 (EIP-1559 denominator and elasticity) from Holocene, `requestsHash` from
/// Isthmus, `extraData` of 17 bytes with version 1 (and the minimum base fee) from Jovian.
/// Nothing tells Bedrock from Regolith, Ecotone from Fjord and Granite, or Jovian from Karst:
/// their rules differ (deposit gas; the L1 fee and precompile bounds; Osaka's EIPs), so such a
/// block's fork is not decided. Canyon and Delta run the same execution rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpHeaderFork {
    pub earliest: OpFork,
    pub latest: OpFork,
    /// The fields that decided, for messages.
    pub evidence: &'static str,
}

impl OpHeaderFork {
    /// Reads a header as `eth_getBlockBy*` returns it; `None` when its fields fit no OP fork
    /// (`requestsHash` without Holocene's `extraData`, Jovian's `extraData` without it).
    pub fn from_header(h: &serde_json::Value) -> Option<OpHeaderFork> {
        let has = |k: &str| h.get(k).is_some_and(|v| !v.is_null());
        let extra = h
            .get("extraData")
            .and_then(serde_json::Value::as_str)
            .and_then(|s| crate::geth::hex::parse_hex(s).ok())
            .unwrap_or_default();
        let holocene = extra.len() == 9 && extra[0] == 0;
        let jovian = extra.len() == 17 && extra[0] == 1;
        let fits = |earliest, latest, evidence| {
            Some(OpHeaderFork {
                earliest,
                latest,
                evidence,
            })
        };
        use OpFork::*;
        match (has("requestsHash"), has("parentBeaconBlockRoot")) {
            (true, _) if jovian => fits(
                Jovian,
                Karst,
                "requestsHash and Jovian's extraData (version 1, 17 bytes)",
            ),
            (true, _) if holocene => fits(
                Isthmus,
                Isthmus,
                "requestsHash and Holocene's extraData (version 0, 9 bytes)",
            ),
            (true, _) => None,
            (false, _) if jovian => None,
            (false, true) if holocene => fits(
                Holocene,
                Holocene,
                "Holocene's extraData (version 0, 9 bytes) without requestsHash",
            ),
            (false, true) => fits(
                Ecotone,
                Granite,
                "parentBeaconBlockRoot without Holocene's extraData",
            ),
            (false, false) if has("withdrawalsRoot") => fits(
                Canyon,
                Delta,
                "withdrawalsRoot without parentBeaconBlockRoot",
            ),
            (false, false) => fits(Bedrock, Regolith, "no withdrawalsRoot"),
        }
    }

    /// The fork to replay under when the fields decide it: one fork, or forks whose execution
    /// rules are the same (Canyon and Delta).
    pub fn decided(&self) -> Option<OpFork> {
        match (self.earliest, self.latest) {
            (a, b) if a == b => Some(a),
            (OpFork::Canyon, OpFork::Delta) => Some(OpFork::Delta),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forks_are_ordered_and_named() {
        assert!(OpFork::Bedrock < OpFork::Regolith);
        assert!(OpFork::Isthmus < OpFork::Jovian);
        for f in OpFork::ALL {
            assert_eq!(OpFork::from_name(f.name()), Some(f));
        }
        assert_eq!(OpFork::from_name("ecotone"), Some(OpFork::Ecotone));
        assert_eq!(OpFork::from_name("cancun"), None);
    }

    #[test]
    fn op_forks_run_the_ethereum_fork_op_geth_pairs_them_with() {
        use revm::primitives::hardfork::SpecId;
        let want = [
            (OpFork::Bedrock, SpecId::MERGE),
            (OpFork::Regolith, SpecId::MERGE),
            (OpFork::Canyon, SpecId::SHANGHAI),
            (OpFork::Delta, SpecId::SHANGHAI),
            (OpFork::Ecotone, SpecId::CANCUN),
            (OpFork::Fjord, SpecId::CANCUN),
            (OpFork::Granite, SpecId::CANCUN),
            (OpFork::Holocene, SpecId::CANCUN),
            (OpFork::Isthmus, SpecId::PRAGUE),
            (OpFork::Jovian, SpecId::PRAGUE),
        ];
        for (f, spec) in want {
            assert_eq!(f.eth_spec(), spec, "{f:?}");
        }
    }

    #[test]
    fn rules_up_to_a_fork_hold_every_earlier_one() {
        let r = OpRules::from(OpFork::Fjord);
        assert!(r.is(OpFork::Bedrock) && r.is(OpFork::Ecotone) && r.is(OpFork::Fjord));
        assert!(!r.is(OpFork::Granite));
        assert_eq!(r.latest(), Some(OpFork::Fjord));
        assert_eq!(OpRules::none().latest(), None);
        let odd = OpRules::none().with(OpFork::Ecotone);
        assert!(odd.is(OpFork::Ecotone) && !odd.is(OpFork::Regolith));
    }

    #[test]
    fn fork_at_picks_the_latest_activated() {
        let s = OpSchedule {
            bedrock_block: 100,
            regolith_time: Some(0),
            canyon_time: Some(10),
            delta_time: Some(20),
            ecotone_time: Some(30),
            fjord_time: Some(40),
            granite_time: Some(50),
            holocene_time: Some(60),
            isthmus_time: Some(70),
            jovian_time: None,
            karst_time: None,
        };
        assert_eq!(s.fork_at(0), OpFork::Regolith);
        assert_eq!(s.fork_at(29), OpFork::Delta);
        assert_eq!(s.fork_at(30), OpFork::Ecotone);
        assert_eq!(s.fork_at(u64::MAX), OpFork::Isthmus);
        assert_eq!(s.fork_at_block(99, 70), None);
        assert_eq!(s.fork_at_block(100, 70), Some(OpFork::Isthmus));
        assert_eq!(OpSchedule::default().fork_at(5), OpFork::Bedrock);
        let g = OpSchedule::all_from_genesis(OpFork::Holocene);
        assert_eq!(g.fork_at(0), OpFork::Holocene);
        assert_eq!(g.rules_at(0), OpRules::from(OpFork::Holocene));
    }

    #[test]
    fn forks_are_asked_one_by_one() {
        // op-geth's test configs set Ecotone without Regolith (receipt_opstack_test.go).
        let s = OpSchedule {
            ecotone_time: Some(0),
            ..OpSchedule::default()
        };
        let r = s.rules_at(0);
        assert!(r.is(OpFork::Ecotone) && !r.is(OpFork::Regolith));
        assert_eq!(s.fork_at(0), OpFork::Ecotone);
    }

    #[test]
    fn op_header_fields_decide_a_fork_only_where_they_tell_it() {
        use serde_json::json;
        let holocene = "0x000000003200000006";
        let jovian = "0x01000000320000000600000000000f4240";
        let fork = |h: serde_json::Value| {
            OpHeaderFork::from_header(&h).map(|f| (f.earliest, f.latest, f.decided()))
        };
        let root = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
        assert_eq!(
            fork(json!({"extraData": "0x"})),
            Some((OpFork::Bedrock, OpFork::Regolith, None))
        );
        assert_eq!(
            fork(json!({"extraData": "0x", "withdrawalsRoot": root})),
            Some((OpFork::Canyon, OpFork::Delta, Some(OpFork::Delta)))
        );
        let ecotone = json!({"extraData": "0x", "withdrawalsRoot": root, "parentBeaconBlockRoot": root, "blobGasUsed": "0x0"});
        assert_eq!(
            fork(ecotone.clone()),
            Some((OpFork::Ecotone, OpFork::Granite, None))
        );
        let mut h = ecotone.clone();
        h["extraData"] = json!(holocene);
        assert_eq!(
            fork(h.clone()),
            Some((OpFork::Holocene, OpFork::Holocene, Some(OpFork::Holocene)))
        );
        h["requestsHash"] = json!(root);
        assert_eq!(
            fork(h.clone()),
            Some((OpFork::Isthmus, OpFork::Isthmus, Some(OpFork::Isthmus)))
        );
        h["extraData"] = json!(jovian);
        assert_eq!(fork(h.clone()), Some((OpFork::Jovian, OpFork::Karst, None)));
        // Fields no OP fork writes together.
        h["extraData"] = json!("0x");
        assert_eq!(fork(h), None);
        let mut h = ecotone;
        h["extraData"] = json!(jovian);
        assert_eq!(fork(h), None);
    }
}
