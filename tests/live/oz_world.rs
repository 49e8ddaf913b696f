//! OpenZeppelin Contracts as npm publishes them (5.7.0, scripts/install-test-tools.sh), used as
//! a project would (tests/contracts/oz-world/World.sol: an ERC20 asset, an ERC4626 vault over it
//! whose keepers AccessControl manages), built by solc-js 0.8.30 and deployed on anvil: a
//! deposit, a role granted, a keeper's harvest and a pause, each named by variable — by solc's
//! own `storageLayout`, and by the layout computed from the AST when the build has neither a
//! layout nor metadata: the same changes — and every value read back from anvil by its getter
//! and by `eth_getStorageAt`.

use std::path::{Path, PathBuf};

use alloy_primitives::{keccak256, Address, U256};
use serde_json::{json, Value};

use crate::anvil::{calldata, hex0x, w_addr, w_b32, w_u, with_ctor_args, Anvil};
use crate::run;
use crate::state_changes::{change_of, read_back, word};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// World.sol and what it imports of the npm package, compiled (ABI, bytecodes, metadata,
/// layouts, ASTs) into a temporary directory: (the directory, the output).
fn build() -> (PathBuf, Value) {
    let js = Path::new(ROOT).join(".tools/js");
    let oz = js.join("node_modules/@openzeppelin/contracts");
    assert!(
        oz.join("package.json").is_file(),
        "{} is missing: run scripts/install-test-tools.sh",
        oz.display()
    );
    let dir = std::env::temp_dir().join(format!("chaintrace-oz-world-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/@openzeppelin")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("tests/contracts/oz-world/World.sol"),
        dir.join("src/World.sol"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&oz, dir.join("src/@openzeppelin/contracts")).unwrap();
    let out = dir.join("solc-output.json");
    let r = std::process::Command::new("node")
        .arg(Path::new(ROOT).join("scripts/compile-layouts.js"))
        .arg(&js)
        .arg(dir.join("src"))
        .arg(&out)
        .arg("World.sol")
        .output()
        .expect("node");
    assert!(
        r.status.success(),
        "compile-layouts.js: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (dir, v)
}

/// `tx HASH --abi BUILD --no-project --json --decode`: its `stateChanges` and stderr.
fn named(anvil: &Anvil, hash: &str, build: &Path) -> (Value, String) {
    let r = run::cmd(&[
        "tx",
        hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        build.to_str().unwrap(),
        "--no-project",
        "--json",
        "--decode",
    ])
    .no_cache()
    .env("PATH", "/usr/bin:/bin")
    .env_remove("CHAINTRACE_SOLC")
    .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    (v["stateChanges"].clone(), r.stderr)
}

#[test]
fn an_erc4626_vault_with_access_control_is_named_by_variable() {
    let (dir, out) = build();
    let anvil = Anvil::start();
    let me = anvil.sender();
    let keeper = anvil.accounts()[1];
    let code = |name: &str| {
        out["contracts"]["World.sol"][name]["evm"]["bytecode"]["object"]
            .as_str()
            .unwrap_or_else(|| panic!("World.sol:{name} in the build"))
            .to_string()
    };
    let asset = anvil.deploy(&code("Asset"));
    let vault = anvil.deploy(&with_ctor_args(&code("Vault"), &[w_addr(asset)]));
    let send = |from: Address, to: Address, data: Vec<u8>| {
        let (h, r) = anvil.send_and_wait(json!({
            "from": from, "to": to, "data": hex0x(&data), "gas": "0x989680",
        }));
        assert_eq!(r["status"], "0x1", "{r}");
        format!("{h:?}")
    };
    let e21 = U256::from(10u128.pow(21));
    send(
        me,
        asset,
        calldata(
            "approve(address,uint256)",
            &[w_addr(vault), e21.to_be_bytes()],
        ),
    );
    let deposit = send(
        me,
        vault,
        calldata(
            "deposit(uint256,address)",
            &[w_u(4 * 10u128.pow(20)), w_addr(me)],
        ),
    );
    let role = keccak256("KEEPER");
    let grant = send(
        me,
        vault,
        calldata("grantRole(bytes32,address)", &[w_b32(role), w_addr(keeper)]),
    );
    let harvest = send(keeper, vault, calldata("harvest()", &[]));
    let pause = send(me, vault, calldata("setPaused(bool)", &[w_u(1)]));

    // The same build without layouts or metadata: named from its AST alone.
    let mut bare = out.clone();
    for c in bare["contracts"]["World.sol"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        let c = c.as_object_mut().unwrap();
        for k in ["storageLayout", "transientStorageLayout", "metadata"] {
            c.remove(k);
        }
    }
    let declared_build = dir.join("solc-output.json");
    let bare_build = dir.join("bare.json");
    std::fs::write(&bare_build, bare.to_string()).unwrap();

    let call = |to: Address, sig: &str, args: &[[u8; 32]]| anvil.call(to, &calldata(sig, args));
    let mut read = 0;
    let mut named_all = 0;
    for hash in [&deposit, &grant, &harvest, &pause] {
        let (declared, _) = named(&anvil, hash, &declared_build);
        let (computed, notes) = named(&anvil, hash, &bare_build);
        assert!(
            notes.contains(
                "the build has no storageLayout for Vault: computed from its AST by solc's rules"
            ),
            "{notes}"
        );
        assert_eq!(declared, computed, "{hash}");
        read += read_back(&anvil, &computed);
        named_all += computed.as_array().unwrap().len();
        let at = |a: Address, name: &str| change_of(&computed, a, name)["after"].clone();
        if hash == &deposit {
            for (token, holder) in [(asset, me), (asset, vault), (vault, me)] {
                let name = format!("_balances[{}]", holder.to_checksum(None));
                let got = call(token, "balanceOf(address)", &[w_addr(holder)]);
                assert_eq!(at(token, &name), word(&got, 0).to_string(), "{name}");
            }
            let name = format!(
                "_allowances[{}][{}]",
                me.to_checksum(None),
                vault.to_checksum(None)
            );
            let got = call(
                asset,
                "allowance(address,address)",
                &[w_addr(me), w_addr(vault)],
            );
            assert_eq!(at(asset, &name), word(&got, 0).to_string());
            let got = call(vault, "totalSupply()", &[]);
            assert_eq!(at(vault, "_totalSupply"), word(&got, 0).to_string());
        } else if hash == &grant {
            let name = format!("_roles[{role}].hasRole[{}]", keeper.to_checksum(None));
            let c = change_of(&computed, vault, &name);
            assert_eq!(
                (&c["before"], &c["after"]),
                (&json!("false"), &json!("true"))
            );
            let got = call(
                vault,
                "hasRole(bytes32,address)",
                &[w_b32(role), w_addr(keeper)],
            );
            assert_eq!(word(&got, 0), U256::from(1));
        } else if hash == &harvest {
            assert_eq!(at(vault, "harvests"), "1");
        } else {
            let c = change_of(&computed, vault, "paused");
            assert_eq!(
                (c["slot"].as_str(), c["offset"].as_u64()),
                (Some(format!("{:#066x}", 6).as_str()), Some(8))
            );
            assert_eq!(at(vault, "paused"), "true");
        }
    }
    eprintln!("oz world: {named_all} changes named in 4 transactions, {read} read back by eth_getStorageAt");
    assert_eq!((named_all, read), (8, 8));
    let _ = std::fs::remove_dir_all(dir);
}
