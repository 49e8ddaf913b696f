//! An OpenZeppelin project (`tests/contracts/oz/`: OpenZeppelin Contracts 5.4.0 from npm,
//! solc-js 0.8.30 with the optimizer): a vault pulling a token through SafeERC20. The token's
//! refusal is passed on by SafeERC20's assembly; the vault's frame is placed where the failing
//! call was made, in the tree and in the stack alike, and `safeTransferFrom` at its own call
//! although the optimizer shares the JUMP into `_callOptionalReturn` with `safeTransfer`.
//! Expected locations are found in the `.sol` texts; values are the transaction's own.

use crate::anvil::{calldata, hex0x, w_addr, w_u, with_ctor_args, Anvil, EXPLICIT_GAS};
use crate::run;
use crate::sources_live::{frame_lines, stack};
use alloy_primitives::Address;
use serde_json::{json, Value};
use std::path::Path;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contracts/oz");
const OZ: &str = "@openzeppelin/contracts/token/ERC20";

/// `file:line:column` of `needle` in `file` (relative to the project).
fn at(file: &str, needle: &str) -> String {
    at_after(file, needle, "")
}

/// `file:line:column` of the first `needle` in `file` after `after`.
fn at_after(file: &str, needle: &str, after: &str) -> String {
    let text = std::fs::read_to_string(Path::new(DIR).join(file)).unwrap();
    let from = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not in {file}"));
    let offset = from
        + text[from..]
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {file}"));
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    format!(
        "{file}:{line}:{}",
        text[line_start..offset].chars().count() + 1
    )
}

/// A vault deployed from `output` (one of the project's standard-JSON outputs) over a coin of
/// 1,000, and a deposit of 5 it refuses (no allowance); the anvil, the coin, the vault, the
/// sender and the failed transaction's hash.
pub(crate) struct Refused {
    pub anvil: Anvil,
    pub coin: Address,
    vault: Address,
    me: Address,
    pub hash: String,
}

pub(crate) fn refused_deposit(output: &str) -> Refused {
    let anvil = Anvil::start();
    let out: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/{output}")).unwrap()).unwrap();
    let code = |name: &str| {
        out["contracts"]["Vault.sol"][name]["evm"]["bytecode"]["object"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let coin = anvil.deploy(&with_ctor_args(&code("Coin"), &[w_u(1000)]));
    let vault = anvil.deploy(&with_ctor_args(&code("Vault"), &[w_addr(coin)]));
    let me = anvil.sender();
    let (h, r) = anvil.send_and_wait(json!({
        "to": vault, "data": hex0x(&calldata("deposit(uint256)", &[w_u(5)])),
        "gas": format!("{EXPLICIT_GAS:#x}"),
    }));
    assert_eq!(r["status"], "0x0", "{r}");
    Refused {
        anvil,
        coin,
        vault,
        me,
        hash: format!("{h:?}"),
    }
}

/// `chaintrace tx` of the refused deposit with `abi`; its output (exit 3: it failed).
fn traced(w: &Refused, abi: &str) -> String {
    let run = run::cmd(&["tx", &w.hash, "--rpc-url", w.anvil.url(), "--abi", abi])
        .no_cache()
        .run();
    assert_eq!(run.code, 3, "{}", run.stderr);
    run.stdout
}

#[test]
fn a_frame_passing_a_failure_on_is_placed_at_its_call_in_tree_and_stack() {
    // A deposit without an allowance: the token reverts with ERC20InsufficientAllowance.
    let w = refused_deposit("solc-output.json");
    let (coin, vault, me) = (w.coin, w.vault, w.me);
    let tree = traced(&w, &format!("{DIR}/solc-output.json"));
    assert!(
        tree.contains(&format!(
            "ERC20InsufficientAllowance(spender: {vault}, allowance: 0, needed: 5)"
        )),
        "{tree}"
    );
    let call = at(&format!("{OZ}/utils/SafeERC20.sol"), "call(gas(), token");
    let spend = at(
        &format!("{OZ}/ERC20.sol"),
        "ERC20InsufficientAllowance(spender, currentAllowance",
    );
    let expected = vec![
        format!("at Coin._spendAllowance(owner: {me}, spender: {vault}, value: 5) ({spend})"),
        format!(
            "at Coin.transferFrom(from: {me}, to: {vault}, value: 5) ({}), reached by CALL",
            at(
                &format!("{OZ}/ERC20.sol"),
                "_spendAllowance(from, spender, value)"
            )
        ),
        format!("at SafeERC20._callOptionalReturn(token: {coin}, data) ({call})"),
        format!(
            "at SafeERC20.safeTransferFrom(token: {coin}, from: {me}, to: {vault}, value: 5) ({})",
            at(
                &format!("{OZ}/utils/SafeERC20.sol"),
                "_callOptionalReturn(token, abi.encodeCall(token.transferFrom"
            )
        ),
        format!(
            "at Vault.deposit(assets: 5) ({})",
            at("Vault.sol", "asset.safeTransferFrom(")
        ),
    ];
    assert_eq!(stack(&tree), expected, "{tree}");
    // One frame, one line: the vault's frame in the tree is where the stack places it (the
    // call), not where SafeERC20's assembly passes the revert on.
    let top = tree.lines().next().unwrap();
    assert!(top.ends_with(&format!(" at {call}")), "{tree}");
    let (token_line, _, _) = frame_lines(&tree, "transferFrom(from:");
    assert!(token_line.ends_with(&format!(" at {spend}")), "{tree}");
}

/// `--code-override` with the vault as fixed (built alone, `tests/contracts/oz/VaultFixed.sol`,
/// laid out as forge writes `out/<File>.sol/<Name>.json`): its `asset` immutable is copied from
/// the vault's code on chain, so the patched run calls the real token; an account whose code
/// holds no such read is refused, naming the immutable.
#[test]
fn a_code_override_copies_immutables_from_the_code_on_chain() {
    let w = refused_deposit("solc-output.json");
    let (anvil, coin, vault, me) = (&w.anvil, w.coin, w.vault, w.me);
    let fixed: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{DIR}/solc-output-fixed.json")).unwrap(),
    )
    .unwrap();

    // Forge's artifact layout: abi, bytecode and deployedBytecode objects with their maps and
    // references.
    let c = &fixed["contracts"]["VaultFixed.sol"]["Vault"];
    let evm = &c["evm"];
    let with_0x = |v: &Value| {
        let mut v = v.clone();
        let object = format!("0x{}", v["object"].as_str().unwrap());
        v["object"] = json!(object);
        v
    };
    let artifact = json!({
        "abi": c["abi"],
        "bytecode": with_0x(&evm["bytecode"]),
        "deployedBytecode": with_0x(&evm["deployedBytecode"]),
    });
    let dir = std::env::temp_dir().join(format!("chaintrace-oz-fixed-{}", std::process::id()));
    let path = dir.join("out/VaultFixed.sol/Vault.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, artifact.to_string()).unwrap();
    let ids: Vec<&String> = evm["deployedBytecode"]["immutableReferences"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(ids.len(), 1, "the fixed vault has one immutable, `asset`");

    let hash = w.hash.clone();
    let fixed_abi = format!("{DIR}/solc-output-fixed.json");
    let over = format!("{vault}={}", path.display());
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--code-override",
        &over,
        "--abi",
        &fixed_abi,
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 3, "the patched run reverts: {}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "immutable values copied from its code on chain (#{} = {coin})",
            ids[0]
        )),
        "{}",
        r.stderr
    );
    // The fixed code asked the real token (the immutable's value) and failed with its own error
    // at its own line.
    let short = |a: alloy_primitives::Address| {
        let s = a.to_checksum(None);
        format!("{}…{}", &s[..6], &s[s.len() - 4..])
    };
    assert!(
        r.stdout.contains(&format!(
            "STATICCALL {} Vault → {} allowance(owner: {me}, spender: {vault})",
            short(vault),
            short(coin)
        )),
        "{}",
        r.stdout
    );
    let revert = at("VaultFixed.sol", "NotApproved(allowed, assets)");
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!("NotApproved(allowance: 0, assets: 5) at {revert}")),
        "{}",
        r.stdout
    );

    // The token's code reads no such immutable: refused before the patched run, naming it.
    let over = format!("{coin}={}", path.display());
    let r = run::cmd(&[
        "tx",
        &hash,
        "--rpc-url",
        anvil.url(),
        "--code-override",
        &over,
    ])
    .no_cache()
    .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "immutable #{}: no read of it was found in the code on chain (the layouts differ)",
            ids[0]
        )),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The same project built with viaIR: the optimizer inlines `safeTransferFrom` and
/// `_callOptionalReturn` into `deposit`, and `_spendAllowance` into `transferFrom`, with no jump
/// the map marks. The stack still names every function down from the one each frame's selector
/// chose, found along the only chain of internal calls in the source text.
#[test]
fn via_ir_inlined_functions_are_frames_of_the_stack() {
    let w = refused_deposit("solc-output-viair.json");
    let (vault, me) = (w.vault, w.me);
    let stdout = traced(&w, &format!("{DIR}/solc-output-viair.json"));
    let safe = format!("{OZ}/utils/SafeERC20.sol");
    let erc20 = format!("{OZ}/ERC20.sol");
    let st = stack(&stdout);
    let expected = vec![
        format!(
            "at Coin._spendAllowance ({})",
            at(
                &erc20,
                "ERC20InsufficientAllowance(spender, currentAllowance"
            )
        ),
        format!(
            "at Coin.transferFrom(from: {me}, to: {vault}, value: 5) ({}), reached by CALL",
            at(&erc20, "_spendAllowance(from, spender, value)")
        ),
        format!(
            "at SafeERC20._callOptionalReturn(token, data) ({})",
            at_after(&safe, "assembly", "function _callOptionalReturn(")
        ),
        format!(
            "at SafeERC20.safeTransferFrom(token, from, to, value) ({})",
            at(
                &safe,
                "_callOptionalReturn(token, abi.encodeCall(token.transferFrom"
            )
        ),
        format!(
            "at Vault.deposit(assets: 5) ({})",
            at("Vault.sol", "asset.safeTransferFrom(")
        ),
    ];
    assert_eq!(st, expected, "{stdout}");
}
