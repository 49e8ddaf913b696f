//! A Foundry project nobody tuned for chaintrace: tests/contracts/forge-world, built by the
//! pinned forge 1.7.1 (scripts/build-forge-world.sh: solc-js 0.8.30 behind the solc stand-in,
//! offline) from npm's OpenZeppelin Contracts and Contracts Upgradeable 5.7.0 — an ERC20 asset,
//! an ERC4626 + AccessControl vault, an ERC-7201 UUPS ledger behind an ERC1967Proxy and a router
//! whose `zap` moves through all three — deployed by `forge create` and driven by `cast`
//! (scripts/forge-world-demo.sh). `chaintrace tx` is run from inside the project, given nothing
//! but the hash: it finds `out/` itself and names every storage change of the zap by variable,
//! the ledger's behind the proxy by its implementation's ERC-7201 namespaces. Each value is then
//! read back by `cast storage` (before and after, at the blocks around the zap) and by
//! `cast call` of the variable's getter. The same project built with forge's default artifacts
//! (no storageLayout, no AST) gets the same names: the layouts compiled from each artifact's
//! metadata by the solc given with `--solc`, the namespaces from that compilation's ASTs.

use std::path::Path;
use std::process::Command;

use alloy_primitives::U256;
use serde_json::Value;

use crate::anvil::Anvil;
use crate::run;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs a script of the project's; its stdout, or a panic with its stderr.
fn script(args: &[&str]) -> String {
    let r = Command::new("bash")
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("bash");
    assert!(
        r.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    String::from_utf8(r.stdout).unwrap()
}

/// `cast ARGS --rpc-url URL`'s one line of output.
fn cast(url: &str, args: &[&str]) -> String {
    crate::state_changes::cast(&[args, &["--rpc-url", url]].concat())
}

fn u256(hex: &str) -> U256 {
    U256::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap()
}

/// The getter that reads variable `name` (`_balances[0x…]`, `$LedgerStorage.count`): its
/// signature and arguments.
fn getter(name: &str) -> (&'static str, Vec<String>) {
    let name = match name.strip_prefix('$') {
        Some(rest) => rest.split_once('.').expect("a namespace's member").1,
        None => name,
    };
    let (var, keys) = name.split_once('[').unwrap_or((name, ""));
    let keys: Vec<String> = keys
        .split(['[', ']'])
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect();
    let sig = match var {
        "_balances" => "balanceOf(address)",
        "_allowances" => "allowance(address,address)",
        "_totalSupply" => "totalSupply()",
        "credits" => "credits(address)",
        "count" => "count()",
        other => panic!("no getter known for {other}"),
    };
    (sig, keys)
}

#[test]
fn a_forge_projects_zap_is_named_by_variable_through_the_proxy_and_read_back_by_cast() {
    let dir = std::env::temp_dir().join(format!("chaintrace-forge-world-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    script(&["scripts/build-forge-world.sh", d]);
    let anvil = Anvil::start();
    let url = anvil.url();
    let out = script(&["scripts/forge-world-demo.sh", url, d]);
    let var = |k: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} not in {out}"))
            .to_string()
    };
    let zap = var("ZAP_TX");

    // From inside the project, nothing but the hash: `out/` is found next to foundry.toml.
    let r = run::cmd(&["tx", &zap, "--rpc-url", url, "--json", "--decode"])
        .no_cache()
        .dir(&dir)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let changes = v["stateChanges"].as_array().unwrap();
    let got: Vec<(String, String, String, String)> = changes
        .iter()
        .map(|c| {
            assert!(c["variable"].is_string(), "unnamed: {c}");
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("contract"), s("name"), s("before"), s("after"))
        })
        .collect();
    let (user, router, vault) = (var("USER"), var("ROUTER"), var("VAULT"));
    let e20 = |n: u64| (U256::from(n) * U256::from(10u64).pow(U256::from(18))).to_string();
    let want = [
        (
            "Asset",
            format!("_allowances[{user}][{router}]"),
            e20(250),
            e20(150),
        ),
        ("Asset", format!("_balances[{user}]"), e20(1000), e20(900)),
        ("Asset", format!("_balances[{vault}]"), "0".into(), e20(100)),
        ("Vault", "_totalSupply".into(), "0".into(), e20(100)),
        ("Vault", format!("_balances[{user}]"), "0".into(), e20(100)),
        (
            "Ledger",
            format!("$LedgerStorage.credits[{user}]"),
            "0".into(),
            e20(100),
        ),
        (
            "Ledger",
            "$LedgerStorage.count".into(),
            "0".into(),
            "1".into(),
        ),
        (
            "Ledger",
            "$ERC20Storage._totalSupply".into(),
            "0".into(),
            e20(100),
        ),
        (
            "Ledger",
            format!("$ERC20Storage._balances[{user}]"),
            "0".into(),
            e20(100),
        ),
    ]
    .map(|(c, n, b, a)| (c.to_string(), n, b, a));
    assert_eq!(got, want, "{:#}", v["stateChanges"]);
    // The ledger's changes are at the proxy's address, named by the implementation's layout.
    let ledger = var("LEDGER");
    for c in &changes[5..] {
        assert_eq!(c["address"], ledger.as_str(), "{c}");
    }

    // The project's artifacts kept between runs: a run that reads them from the store prints
    // what the run that loaded them printed. (The tree is aged first: one whose files changed
    // in the last two seconds is not kept.)
    fn age(dir: &Path) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                age(&p);
            } else {
                let f = std::fs::File::options().write(true).open(&p).unwrap();
                let t = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
                f.set_modified(t).unwrap();
            }
        }
    }
    // (forge's own `cache/` too: its solidity-files-cache.json chooses the builds.)
    age(&dir.join("out"));
    age(&dir.join("cache"));
    let cache = dir.with_extension("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let kept_run = || {
        run::cmd(&["tx", &zap, "--rpc-url", url, "--json", "--decode"])
            .env("CHAINTRACE_NO_CACHE", "")
            .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
            .dir(&dir)
            .run()
    };
    let first = kept_run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    let kept: Vec<_> = std::fs::read_dir(cache.join("names")).unwrap().collect();
    assert_eq!(kept.len(), 1, "one store for the project");
    let second = kept_run();
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(first.stdout, r.stdout);
    assert_eq!(second.stdout, r.stdout);
    let _ = std::fs::remove_dir_all(&cache);
    // The flags reach the store too: `--no-cache` writes nothing, `--cache-dir` moves it.
    let flagged = |flags: &[&str]| {
        run::cmd(&["tx", &zap, "--rpc-url", url, "--json", "--decode"])
            .args(flags.iter().copied())
            .env("CHAINTRACE_NO_CACHE", "")
            .env("CHAINTRACE_CACHE_DIR", cache.to_str().unwrap())
            .dir(&dir)
            .run()
    };
    let off = flagged(&["--no-cache"]);
    assert_eq!((off.code, &off.stdout), (0, &r.stdout), "{}", off.stderr);
    assert!(!cache.exists(), "--no-cache wrote {}", cache.display());
    let elsewhere = dir.with_extension("elsewhere");
    let _ = std::fs::remove_dir_all(&elsewhere);
    let moved = flagged(&["--cache-dir", elsewhere.to_str().unwrap()]);
    assert_eq!(
        (moved.code, &moved.stdout),
        (0, &r.stdout),
        "{}",
        moved.stderr
    );
    assert!(!cache.exists(), "--cache-dir wrote {}", cache.display());
    assert_eq!(
        std::fs::read_dir(elsewhere.join("names")).unwrap().count(),
        1
    );
    let _ = std::fs::remove_dir_all(&elsewhere);

    // Forge's default artifacts: layouts and namespaces compiled from the metadata.
    let defaults = dir.with_extension("defaults");
    let _ = std::fs::remove_dir_all(&defaults);
    script(&[
        "scripts/build-forge-world.sh",
        "--defaults",
        defaults.to_str().unwrap(),
    ]);
    let solc = Path::new(ROOT).join(".tools/js/solc");
    let r = run::cmd(&["tx", &zap, "--rpc-url", url, "--json", "--decode"])
        .args(["--solc", solc.to_str().unwrap()])
        .no_cache()
        .env("PATH", "/usr/bin:/bin")
        .dir(&defaults)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    for name in ["Asset", "Vault", "Ledger"] {
        let note = format!(
            "note: the build has no storageLayout for {name}: compiled from its metadata with {}",
            solc.display()
        );
        assert!(r.stderr.contains(&note), "{note}\n{}", r.stderr);
    }
    let compiled: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(compiled["stateChanges"], v["stateChanges"]);
    let _ = std::fs::remove_dir_all(defaults);

    // For people: the same names, the proxy's section headed by the implementation's name.
    let human = run::cmd(&["tx", &zap, "--rpc-url", url])
        .no_cache()
        .env("NO_COLOR", "1")
        .dir(&dir)
        .run();
    assert_eq!(human.code, 0, "{}", human.stderr);
    for line in [
        format!("  {ledger} (Ledger)"),
        format!("    Ledger.$LedgerStorage.credits[{user}]: 0 → 100000000000000000000 [1e20]"),
        "    Ledger.$LedgerStorage.count: 0 → 1".to_string(),
    ] {
        assert!(human.stdout.contains(&line), "{line}\n{}", human.stdout);
    }

    // Read back by cast at the zap's block and the one before it.
    let block: u64 = cast(url, &["receipt", &zap, "blockNumber"])
        .parse()
        .unwrap();
    let mut read = 0;
    for c in changes {
        let address = c["address"].as_str().unwrap();
        let slot = c["slot"].as_str().unwrap();
        let offset = c["offset"].as_u64().unwrap() as usize;
        let bits = c["type"].as_str().unwrap()["uint".len()..]
            .parse::<usize>()
            .unwrap();
        let mask = (U256::from(1) << bits) - U256::from(1);
        let (sig, keys) = getter(c["name"].as_str().unwrap());
        for (at, want) in [(block - 1, &c["before"]), (block, &c["after"])] {
            let at = at.to_string();
            let word = u256(&cast(url, &["storage", address, slot, "--block", &at]));
            let stored = (word >> (offset * 8)) & mask;
            assert_eq!(want, &stored.to_string(), "cast storage: {c}");
            let mut args = vec!["call", address, sig];
            args.extend(keys.iter().map(String::as_str));
            args.extend(["--block", &at]);
            assert_eq!(
                want,
                &u256(&cast(url, &args)).to_string(),
                "cast call {sig}: {c}"
            );
        }
        read += 1;
    }
    eprintln!("forge world: {} changes named, {read} read back by cast storage and cast call at two blocks", changes.len());
    assert_eq!(read, 9);
    let _ = std::fs::remove_dir_all(dir);
}
