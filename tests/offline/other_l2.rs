//! L2s whose rules chaintrace does not replay are refused before any replay, naming what
//! differs and what to do (exit 2); `--chain-rules ethereum` forces the replay with a warning.
//! A loopback fake node answers only what the refusal needs (`eth_chainId`,
//! `web3_clientVersion`) and, for the forced run, one empty block.

use crate::http::{self, Reply};
use crate::run::chaintrace;
use serde_json::{json, Value};

const BLOCK: &str = r#"{"number":"0x5","hash":"0x1111111111111111111111111111111111111111111111111111111111111111",
"parentHash":"0x2222222222222222222222222222222222222222222222222222222222222222","timestamp":"0x65000000",
"miner":"0x0000000000000000000000000000000000000000","gasLimit":"0x1c9c380","gasUsed":"0x0",
"baseFeePerGas":"0x1","difficulty":"0x0","mixHash":"0x0000000000000000000000000000000000000000000000000000000000000000",
"transactions":[],"uncles":[],"withdrawals":[]}"#;

/// A node with chain id `chain_id` whose client is `version`; every other method an error.
fn node(chain_id: u64, version: &'static str) -> String {
    node_with(chain_id, version, serde_json::from_str(BLOCK).unwrap())
}

/// [`node`] whose block 5 is `block`.
fn node_with(chain_id: u64, version: &'static str, block: Value) -> String {
    http::serve(move |r| {
        let body: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let answer = |q: &Value| {
            let result = match q["method"].as_str().unwrap_or("") {
                "eth_chainId" => json!(format!("{chain_id:#x}")),
                "web3_clientVersion" => json!(version),
                "eth_getBlockByNumber" => block.clone(),
                "eth_getBlockReceipts" => json!([]),
                _ => {
                    return json!({"jsonrpc": "2.0", "id": q["id"],
                        "error": {"code": -32601, "message": "the method does not exist"}})
                }
            };
            json!({"jsonrpc": "2.0", "id": q["id"], "result": result})
        };
        let out = match &body {
            Value::Array(b) => Value::Array(b.iter().map(answer).collect()),
            q => answer(q),
        };
        Reply::Answer(200, out.to_string())
    })
}

const HASH: &str = "0x3333333333333333333333333333333333333333333333333333333333333333";

#[test]
fn arbitrum_is_refused_by_chain_id_naming_what_differs() {
    let url = node(42_161, "Geth/v1.15.0-stable/linux-amd64/go1.23");
    for args in [
        vec!["block", "5", "--rpc-url", &url],
        vec!["tx", HASH, "--rpc-url", &url, "--no-cache"],
    ] {
        let run = chaintrace(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        for want in [
            "chain 42161 is Arbitrum One, whose rules chaintrace does not replay (by its chain id)",
            "ArbOS",
            "--remote for the node's own trace",
            "--chain-rules ethereum",
        ] {
            assert!(run.stderr.contains(want), "{want:?} not in {}", run.stderr);
        }
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn zk_rollups_are_refused_by_chain_id() {
    for (id, name, what) in [
        (324, "zkSync Era", "EraVM"),
        (534_352, "Scroll", "zkEVM"),
        (59_144, "Linea", "zkEVM"),
        (1101, "Polygon zkEVM", "SENDALL"),
    ] {
        let url = node(id, "Geth/v1.15.0-stable/linux-amd64/go1.23");
        let run = chaintrace(&["block", "5", "--rpc-url", &url]);
        assert_eq!(run.code, 2, "{id}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("chain {id} is {name},")) && run.stderr.contains(what),
            "{}",
            run.stderr
        );
    }
}

/// An Orbit chain has an id of its own; its node names itself nitro.
#[test]
fn a_nitro_node_is_refused_whatever_its_chain_id() {
    let url = node(660_279, "nitro/v3.6.5-89cef87/linux-amd64/go1.23.1");
    let run = chaintrace(&["block", "5", "--rpc-url", &url]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "chain 660279 is an Arbitrum (nitro) chain, whose rules chaintrace does not replay \
             (the node is nitro/v3.6.5-89cef87/linux-amd64/go1.23.1)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn chain_rules_ethereum_forces_the_replay_with_a_warning() {
    let url = node(42_161, "nitro/v3.6.5-89cef87/linux-amd64/go1.23.1");
    let run = chaintrace(&["block", "5", "--rpc-url", &url, "--chain-rules", "ethereum"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "warning: chain 42161 is Arbitrum One (by its chain id), whose rules chaintrace \
             does not replay"
        ) && run
            .stderr
            .contains("replayed under ethereum rules as --chain-rules asks"),
        "{}",
        run.stderr
    );
}

/// Chains built from the OP stack whose execution departs from op-geth's are refused as the
/// other L2s are: under the OP stack's rules they would be traced wrong too.
#[test]
fn op_derived_chains_that_execute_differently_are_refused() {
    for (id, name, what) in [
        (81_457, "Blast", "native yield"),
        (5000, "Mantle", "MNT"),
        (1088, "Metis Andromeda", "METIS"),
        (42_220, "Celo", "fee currencies"),
    ] {
        let url = node(id, "Geth/v1.101503.4-stable/linux-amd64/go1.23.4");
        let run = chaintrace(&["block", "5", "--rpc-url", &url]);
        assert_eq!(run.code, 2, "{id}: {}", run.stderr);
        for want in [
            format!(
                "chain {id} is {name}, whose rules chaintrace does not replay (by its chain id)"
            ),
            what.to_string(),
            "Replayed under Ethereum's (or the OP stack's) rules it would be traced wrong".into(),
        ] {
            assert!(run.stderr.contains(&want), "{want:?} not in {}", run.stderr);
        }
    }
}

/// An OP chain chaintrace has no schedule for, without `--chain-config`: the fork comes from
/// the block header's fields where they decide it (the OP specs' `exec-engine` pages: Holocene's
/// 9-byte `extraData` of version 0, Isthmus's `requestsHash`, Jovian's 17-byte `extraData` of
/// version 1), and the replay is refused, naming `--chain-config`, where they do not.
#[test]
fn an_op_chain_without_a_schedule_takes_its_fork_from_the_header_or_is_refused() {
    let root = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
    let header = |fields: Value| {
        let mut b: Value = serde_json::from_str(BLOCK).unwrap();
        for (k, v) in fields.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    let op_geth = "Geth/v1.101503.4-stable/linux-amd64/go1.23.4";
    let run = |block: Value| {
        let url = node_with(902, op_geth, block);
        chaintrace(&["block", "5", "--rpc-url", &url, "--chain-rules", "optimism"])
    };
    // Bedrock or Regolith (deposit gas differs): refused.
    let r = run(header(json!({"extraData": "0x"})));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "chain 902 runs the OP stack (--chain-rules), but chaintrace has no fork \
             schedule for it and the header of block 5 (no withdrawalsRoot) fits Bedrock to \
             Regolith, whose rules differ: pass --chain-config with the chain's op-geth genesis \
             config or op-node rollup.json"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    let ecotone = json!({"extraData": "0x", "withdrawalsRoot": root,
        "parentBeaconBlockRoot": root, "blobGasUsed": "0x0", "excessBlobGas": "0x0"});
    let r = run(header(ecotone.clone()));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("fits Ecotone to Granite, whose rules differ"),
        "{}",
        r.stderr
    );
    // Jovian's extraData with requestsHash: Jovian or Karst (Osaka's EIPs): refused.
    let mut jovian = ecotone.clone();
    jovian["extraData"] = json!("0x01000000320000000600000000000f4240");
    jovian["requestsHash"] = json!(root);
    let r = run(header(jovian));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("fits Jovian to Karst, whose rules differ"),
        "{}",
        r.stderr
    );
    // Holocene's extraData without requestsHash decides Holocene; with it, Isthmus.
    let mut holocene = ecotone;
    holocene["extraData"] = json!("0x000000003200000006");
    for (fields, fork) in [
        (holocene.clone(), "Holocene"),
        (
            {
                let mut h = holocene;
                h["requestsHash"] = json!(root);
                h
            },
            "Isthmus",
        ),
    ] {
        let r = run(header(fields));
        assert_eq!(r.code, 0, "{fork}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "every OP fork through {fork} (no schedule for this chain: its block header's"
            )),
            "{}",
            r.stderr
        );
    }
}
