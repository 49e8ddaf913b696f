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
    http::serve(move |r| {
        let body: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let answer = |q: &Value| {
            let result = match q["method"].as_str().unwrap_or("") {
                "eth_chainId" => json!(format!("{chain_id:#x}")),
                "web3_clientVersion" => json!(version),
                "eth_getBlockByNumber" => serde_json::from_str(BLOCK).unwrap(),
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
