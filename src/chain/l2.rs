//! Layer-2 chains whose execution chaintrace does not replay: recognised by chain id, or by the
//! node's `web3_clientVersion` where the client names itself (Arbitrum's nitro, which also
//! serves Orbit chains under ids of their own; zkSync's node), so that a replay under
//! Ethereum's rules — which would trace them wrong — is refused before it runs, naming what
//! differs. OP-stack chains are replayed (`op/`), but not the chains built from the OP stack
//! whose execution departs from op-geth's (Blast, Mantle, Metis, Celo): under OP rules they
//! would be traced wrong just the same.

/// A family of chains chaintrace does not replay, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherL2 {
    /// The chain's name (for a client match, the stack's).
    pub name: &'static str,
    /// What differs from Ethereum's execution.
    pub differs: &'static str,
}

const ARBITRUM: &str = "ArbOS runs beside the EVM: precompiles at 0x64–0x73 and 0xff \
    (ArbSys, ArbGasInfo, ArbRetryableTx, …) that read and write ArbOS state, gas used that \
    includes the L1 calldata cost (poster fee) charged as gas, its own transaction types \
    (0x64–0x6a: deposits, retryables, internal), and NUMBER/BLOCKHASH of the L1";
const ZKSYNC: &str = "EraVM, not the EVM: contracts run as EraVM bytecode (or through its EVM \
    interpreter contract) with their own gas, system contracts and native account abstraction";
const SCROLL: &str = "a zkEVM with a precompile set of its own (RIPEMD-160 and BLAKE2F \
    unsupported, modexp limited), an L1 data fee from its L1GasPriceOracle, L1 message \
    transactions (type 0x7e) and a fork schedule chaintrace does not model";
const LINEA: &str = "a zkEVM whose fork schedule, precompile limits and fee rules chaintrace \
    does not model and has not checked against the chain's own traces";
const POLYGON_ZKEVM: &str = "a zkEVM with its own gas for some opcodes and precompiles \
    (several precompiles unsupported), SELFDESTRUCT replaced by SENDALL, and BLOCKHASH/NUMBER \
    of its batches";

const BLAST: &str = "an OP-stack chain whose balances rebase: ETH and WETH earn native yield \
    (an account's balance changes with no transaction of its own, by the yield mode it set in \
    the Blast predeploy 0x4300000000000000000000000000000000000002) and contracts claim the gas \
    fees they generate, rules op-geth does not run";
const MANTLE: &str = "an OP-stack chain whose native token is MNT: gas is paid in MNT, ETH is \
    an ERC-20 (BVM_ETH) that deposits mint beside MNT, and the L1 data fee is scaled by a \
    token ratio, so op-geth's rules would charge and mint the wrong amounts";
const METIS: &str = "a chain built from the OP stack with METIS as its gas token, a sequencer \
    pool and fee and deposit rules of its own, which op-geth does not run";
const CELO: &str = "an OP-stack chain whose native token CELO is also an ERC-20 (a transfer \
    precompile at 0xfd moves native balances) and whose transactions may pay gas in ERC-20 fee \
    currencies (CIP-64, type 0x7b) under a base-fee floor, which op-geth does not run";

/// The chain with id `chain_id`, if it is one chaintrace knows it does not replay.
pub fn by_chain_id(chain_id: u64) -> Option<OtherL2> {
    let (name, differs) = match chain_id {
        42_161 => ("Arbitrum One", ARBITRUM),
        42_170 => ("Arbitrum Nova", ARBITRUM),
        421_614 => ("Arbitrum Sepolia", ARBITRUM),
        324 => ("zkSync Era", ZKSYNC),
        300 => ("zkSync Era Sepolia", ZKSYNC),
        534_352 => ("Scroll", SCROLL),
        534_351 => ("Scroll Sepolia", SCROLL),
        59_144 => ("Linea", LINEA),
        59_141 => ("Linea Sepolia", LINEA),
        1101 => ("Polygon zkEVM", POLYGON_ZKEVM),
        2442 => ("Polygon zkEVM Cardona", POLYGON_ZKEVM),
        81_457 => ("Blast", BLAST),
        168_587_773 => ("Blast Sepolia", BLAST),
        5000 => ("Mantle", MANTLE),
        5003 => ("Mantle Sepolia", MANTLE),
        1088 => ("Metis Andromeda", METIS),
        59_902 => ("Metis Sepolia", METIS),
        42_220 => ("Celo", CELO),
        44_787 => ("Celo Alfajores", CELO),
        11_142_220 => ("Celo Sepolia", CELO),
        _ => return None,
    };
    Some(OtherL2 { name, differs })
}

/// The stack a `web3_clientVersion` answer names, if chaintrace does not replay it: nitro
/// (`nitro/v3.6.5-…`, Arbitrum and its Orbit chains) and zkSync's node (`zkSync/v2.0`).
pub fn by_client(version: &str) -> Option<OtherL2> {
    let name = version.split('/').next().unwrap_or("").to_ascii_lowercase();
    match name.as_str() {
        "nitro" => Some(OtherL2 {
            name: "an Arbitrum (nitro) chain",
            differs: ARBITRUM,
        }),
        "zksync" | "zksync-era" => Some(OtherL2 {
            name: "a zkSync (EraVM) chain",
            differs: ZKSYNC,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_l2s_are_known_by_id_and_client() {
        for id in [
            42_161, 42_170, 421_614, 324, 300, 534_352, 534_351, 59_144, 59_141, 1101, 2442,
            81_457, 5000, 1088, 42_220,
        ] {
            assert!(by_chain_id(id).is_some(), "{id}");
        }
        for id in [1, 10, 8453, 1329, 31_337] {
            assert_eq!(by_chain_id(id), None, "{id}");
        }
        assert_eq!(by_chain_id(42_161).unwrap().name, "Arbitrum One");
        assert!(by_chain_id(324).unwrap().differs.contains("EraVM"));
        assert!(by_client("nitro/v3.6.5-89cef87/linux-amd64/go1.23.1").is_some());
        assert!(by_client("zkSync/v2.0").is_some());
        assert_eq!(by_client("Geth/v1.15.0-stable/linux-amd64/go1.23"), None);
        assert_eq!(by_client("anvil/v1.7.1"), None);
    }
}
