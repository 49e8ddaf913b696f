//! The user's Foundry configuration, read as `cast` reads it: `[rpc_endpoints]` aliases for
//! `--rpc-url`/`ETH_RPC_URL` (`--rpc-url mainnet`), and `[etherscan]` entries for the explorer
//! key of verified-ABI lookups.
//!
//! Where: `FOUNDRY_CONFIG` when it is an absolute path; otherwise the nearest `foundry.toml` (or
//! the relative `FOUNDRY_CONFIG` name) walking up from the working directory, then
//! `~/.foundry/foundry.toml`. An alias missing from the project's file is looked up in the
//! global one, as Foundry merges the two. A section may also sit under `[profile.default]` or
//! `[profile.$FOUNDRY_PROFILE]`, which win over the standalone one.
//!
//! Values may hold `${VAR}` placeholders, replaced by the environment variable; one that is unset
//! or empty is an error naming it, never an empty string in a URL or key. Messages never hold a
//! resolved URL other than through [`redact_url`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chaintrace::rpc::redact_url;
use toml::{Table, Value};

/// Etherscan's multichain API (the `chainid` parameter selects the chain), used for an
/// `[etherscan]` entry without a `url` on a chain whose preset carries no explorer API.
pub const ETHERSCAN_V2: &str = "https://api.etherscan.io/v2/api";

/// The `[rpc_endpoints]` alias the run's node URL came from, for the `[etherscan]` entry of
/// the same name (Foundry pairs them so).
static RPC_ALIAS: OnceLock<String> = OnceLock::new();

/// One configuration file's two sections, values as written (placeholders unresolved).
#[derive(Debug, Default, Clone)]
pub struct FoundryToml {
    pub path: PathBuf,
    pub rpc_endpoints: BTreeMap<String, String>,
    pub etherscan: BTreeMap<String, EtherscanEntry>,
}

/// An `[etherscan]` entry: `<alias> = { key = "...", url = "...", chain = 1 | "mainnet" }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtherscanEntry {
    pub key: String,
    pub url: Option<String>,
    /// The chain id: `chain`, else the alias read as a chain name (`mainnet`, `arbitrum-one`).
    pub chain: Option<u64>,
}

/// An explorer key (and maybe API URL) taken from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplorerKey {
    pub key: String,
    pub url: Option<String>,
}

/// The configuration files in the order they are asked: the project's, then the global one.
#[derive(Debug, Default)]
pub struct Config {
    pub files: Vec<FoundryToml>,
}

/// Where the process's environment says to look (passed in so that it can be tested).
pub struct Env<'a> {
    pub cwd: Option<&'a Path>,
    pub foundry_config: Option<&'a str>,
    pub home: Option<&'a Path>,
    pub profile: Option<&'a str>,
}

/// The paths of the project's and the global `foundry.toml` that exist, in that order.
pub fn config_paths(env: &Env) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let name = env.foundry_config.filter(|v| !v.trim().is_empty());
    match name.map(Path::new) {
        Some(p) if p.is_absolute() => out.push(p.to_path_buf()),
        name => {
            let name = name.unwrap_or(Path::new("foundry.toml"));
            if let Some(found) = env
                .cwd
                .into_iter()
                .flat_map(Path::ancestors)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
            {
                out.push(found);
            }
        }
    }
    if let Some(global) = env.home.map(|h| h.join(".foundry").join("foundry.toml")) {
        if global.is_file() && !out.contains(&global) {
            out.push(global);
        }
    }
    out
}

impl Config {
    /// Reads the files [`config_paths`] names; a file that cannot be read or parsed is an error.
    pub fn load(env: &Env) -> Result<Config, String> {
        let files = config_paths(env)
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                parse(&text, path.clone(), env.profile)
                    .map_err(|e| format!("{} is not valid TOML: {e}", path.display()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Config { files })
    }

    /// The process's configuration.
    pub fn from_process() -> Result<Config, String> {
        let cwd = std::env::current_dir().ok();
        let config = std::env::var("FOUNDRY_CONFIG").ok();
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let profile = std::env::var("FOUNDRY_PROFILE").ok();
        Config::load(&Env {
            cwd: cwd.as_deref(),
            foundry_config: config.as_deref(),
            home: home.as_deref(),
            profile: profile.as_deref(),
        })
    }

    fn where_(&self) -> String {
        let paths: Vec<String> = self
            .files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        paths.join(", ")
    }

    /// Every alias of `[rpc_endpoints]`, sorted, without duplicates.
    pub fn rpc_aliases(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .files
            .iter()
            .flat_map(|f| f.rpc_endpoints.keys().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The URL of `alias`, placeholders resolved by `var`: `Ok(None)` when no file has it.
    pub fn rpc_endpoint(
        &self,
        alias: &str,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, String> {
        let Some((file, raw)) = self
            .files
            .iter()
            .find_map(|f| f.rpc_endpoints.get(alias).map(|r| (f, r)))
        else {
            return Ok(None);
        };
        interpolate(raw, var).map(Some).map_err(|v| {
            format!(
                "{} [rpc_endpoints] {alias} needs the environment variable {v}, which is not set",
                file.path.display()
            )
        })
    }

    /// The explorer key for `chain_id`, as Foundry picks it: the entry named by
    /// `ETHERSCAN_API_KEY` (`env_key`) or by the run's RPC alias, else the first entry of the
    /// chain (whose key an `env_key` that names no entry replaces). `Ok(None)`: no entry
    /// applies. `Err`: one applies and cannot be resolved (an unset variable).
    pub fn explorer_key(
        &self,
        chain_id: u64,
        env_key: Option<&str>,
        rpc_alias: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ExplorerKey>, String> {
        let entry = |alias: &str| {
            self.files
                .iter()
                .find_map(|f| f.etherscan.get(alias).map(|e| (f, alias.to_string(), e)))
        };
        let named = env_key
            .and_then(entry)
            .or_else(|| rpc_alias.and_then(entry));
        let (chosen, key_override) = match named {
            Some(n) => (Some(n), None),
            None => {
                let by_chain = self.files.iter().find_map(|f| {
                    f.etherscan
                        .iter()
                        .find(|(_, e)| e.chain == Some(chain_id))
                        .map(|(a, e)| (f, a.clone(), e))
                });
                (by_chain, env_key)
            }
        };
        let Some((file, alias, e)) = chosen else {
            return Ok(None);
        };
        let unset = |v: String| {
            format!(
                "{} [etherscan] {alias} needs the environment variable {v}, which is not set",
                file.path.display()
            )
        };
        let url = e
            .url
            .as_deref()
            .map(|u| interpolate(u, var))
            .transpose()
            .map_err(unset)?;
        let key = match key_override {
            Some(k) => k.to_string(),
            None => interpolate(&e.key, var).map_err(unset)?,
        };
        Ok(Some(ExplorerKey { key, url }))
    }
}

/// The run's `[rpc_endpoints]` alias, once a node URL was resolved from one.
pub fn rpc_alias() -> Option<&'static str> {
    RPC_ALIAS.get().map(String::as_str)
}

/// The node URL for a `--rpc-url`/`ETH_RPC_URL` value (`what` names which, for messages): a
/// URL (it has `://`) as given; anything else an alias of the configuration's
/// `[rpc_endpoints]`.
pub fn resolve_rpc_value(value: &str, what: &str) -> Result<String, String> {
    if value.contains("://") {
        return Ok(value.to_string());
    }
    let config =
        Config::from_process().map_err(|e| format!("{what} {}: {e}", redact_url(value)))?;
    let var = |v: &str| std::env::var(v).ok();
    let url = resolve_alias(&config, value, what, &var)?;
    let _ = RPC_ALIAS.set(value.to_string());
    Ok(url)
}

/// [`resolve_rpc_value`] for a value that is not a URL, with the configuration given.
pub fn resolve_alias(
    config: &Config,
    alias: &str,
    what: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let shown = redact_url(alias);
    if config.files.is_empty() {
        return Err(format!(
            "{what} {shown} is not a URL (http:// or https://), and no foundry.toml was found \
             to read it as an [rpc_endpoints] alias from (looked in FOUNDRY_CONFIG, from the \
             working directory up, and in ~/.foundry/)"
        ));
    }
    match config.rpc_endpoint(alias, var) {
        Ok(Some(url)) => Ok(url),
        Ok(None) => {
            let names = config.rpc_aliases();
            let known = if names.is_empty() {
                "none are configured".to_string()
            } else {
                format!("configured: {}", names.join(", "))
            };
            Err(format!(
                "{what} {shown} is neither a URL nor an alias in [rpc_endpoints] of {} ({known})",
                config.where_()
            ))
        }
        Err(e) => Err(format!("{what} {shown}: {e}")),
    }
}

/// Parses one file: the standalone sections, overridden by `[profile.default.*]` and then by
/// `[profile.<profile>.*]`.
pub fn parse(text: &str, path: PathBuf, profile: Option<&str>) -> Result<FoundryToml, String> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let mut out = FoundryToml {
        path,
        ..Default::default()
    };
    let profiles = table.get("profile").and_then(Value::as_table);
    let mut sources = vec![Some(&table)];
    sources.push(
        profiles
            .and_then(|p| p.get("default"))
            .and_then(Value::as_table),
    );
    if let Some(name) = profile.filter(|p| !p.is_empty() && *p != "default") {
        sources.push(profiles.and_then(|p| p.get(name)).and_then(Value::as_table));
    }
    for t in sources.into_iter().flatten() {
        if let Some(rpc) = section(t, "rpc_endpoints") {
            for (alias, v) in rpc {
                // A URL string, or a table with `endpoint` (or `url`) and retry settings.
                let url = v.as_str().or_else(|| {
                    v.as_table()
                        .and_then(|t| t.get("endpoint").or_else(|| t.get("url")))
                        .and_then(Value::as_str)
                });
                match url {
                    Some(u) => out.rpc_endpoints.insert(alias.clone(), u.to_string()),
                    None => return Err(format!("[rpc_endpoints] {alias} is not a URL string")),
                };
            }
        }
        if let Some(es) = section(t, "etherscan") {
            for (alias, v) in es {
                let e = v
                    .as_table()
                    .ok_or_else(|| format!("[etherscan] {alias} is not a table"))?;
                let key = e
                    .get("key")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("[etherscan] {alias} has no `key` string"))?;
                let chain = match e.get("chain") {
                    Some(Value::Integer(n)) => u64::try_from(*n).ok(),
                    Some(Value::String(s)) => chain_id(s),
                    _ => chain_id(alias),
                };
                out.etherscan.insert(
                    alias.clone(),
                    EtherscanEntry {
                        key: key.to_string(),
                        url: e.get("url").and_then(Value::as_str).map(str::to_string),
                        chain,
                    },
                );
            }
        }
    }
    Ok(out)
}

fn section<'a>(t: &'a Table, name: &str) -> Option<&'a Table> {
    t.get(name)
        .or_else(|| t.get(&name.replace('_', "-")))
        .and_then(Value::as_table)
}

/// Replaces every `${VAR}` in `s` with the variable's value; `Err(VAR)` for the first one that
/// is unset or empty.
pub fn interpolate(s: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let name = rest[start + 2..start + len].trim();
        let value = var(name)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| name.to_string())?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The chain id of a chain name as Foundry spells them (case and `_`/`-` aside), or a number.
pub fn chain_id(name: &str) -> Option<u64> {
    let n = name.trim().to_ascii_lowercase().replace('_', "-");
    if let Ok(id) = n.parse() {
        return Some(id);
    }
    Some(match n.as_str() {
        "mainnet" | "ethereum" => 1,
        "goerli" => 5,
        "sepolia" => 11_155_111,
        "holesky" => 17_000,
        "hoodi" => 560_048,
        "optimism" => 10,
        "optimism-sepolia" => 11_155_420,
        "arbitrum" | "arbitrum-one" => 42_161,
        "arbitrum-nova" => 42_170,
        "arbitrum-sepolia" => 421_614,
        "base" => 8_453,
        "base-sepolia" => 84_532,
        "polygon" | "matic" => 137,
        "polygon-amoy" | "amoy" => 80_002,
        "bsc" | "binance-smart-chain" | "bnb-smart-chain" => 56,
        "bsc-testnet" | "binance-smart-chain-testnet" => 97,
        "gnosis" | "gnosis-chain" | "xdai" => 100,
        "avalanche" => 43_114,
        "fantom" => 250,
        "celo" => 42_220,
        "linea" => 59_144,
        "scroll" => 534_352,
        "zksync" => 324,
        "blast" => 81_457,
        "mantle" => 5_000,
        "unichain" => 130,
        "sonic" => 146,
        "berachain" => 80_094,
        "sei" => 1_329,
        "sei-testnet" => 1_328,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn placeholders_resolve_and_unset_ones_are_named() {
        let v = vars(&[("KEY", "abc"), ("PORT", "8545"), ("EMPTY", "")]);
        assert_eq!(
            interpolate("http://h:${PORT}/v2/${ KEY }", &v).unwrap(),
            "http://h:8545/v2/abc"
        );
        assert_eq!(interpolate("${KEY}", &v).unwrap(), "abc");
        assert_eq!(interpolate("no placeholder", &v).unwrap(), "no placeholder");
        assert_eq!(interpolate("http://h/${NOPE}", &v).unwrap_err(), "NOPE");
        assert_eq!(interpolate("http://h/${EMPTY}", &v).unwrap_err(), "EMPTY");
        // `$VAR` without braces is not Foundry's syntax: left as written.
        assert_eq!(interpolate("http://h/$KEY", &v).unwrap(), "http://h/$KEY");
    }

    const TOML: &str = r#"
[profile.default]
src = "src"

[rpc_endpoints]
local = "http://127.0.0.1:${PORT}/x"
mainnet = { endpoint = "https://eth.example/v2/${ALCHEMY_KEY}", retries = 3 }
old = { url = "https://old.example" }

[etherscan]
mainnet = { key = "${ETHERSCAN_KEY}" }
arbitrum_one = { key = "ARB", url = "https://api.arbiscan.io/api" }
custom = { key = "C", chain = 1329 }
named = { key = "N", chain = "base" }

[profile.ci.rpc_endpoints]
local = "http://127.0.0.1:9/ci"
"#;

    #[test]
    fn sections_parse_as_foundry_writes_them() {
        let f = parse(TOML, "f.toml".into(), None).unwrap();
        assert_eq!(f.rpc_endpoints["local"], "http://127.0.0.1:${PORT}/x");
        assert_eq!(
            f.rpc_endpoints["mainnet"],
            "https://eth.example/v2/${ALCHEMY_KEY}"
        );
        assert_eq!(f.rpc_endpoints["old"], "https://old.example");
        assert_eq!(f.etherscan["mainnet"].chain, Some(1));
        assert_eq!(f.etherscan["arbitrum_one"].chain, Some(42_161));
        assert_eq!(f.etherscan["custom"].chain, Some(1329));
        assert_eq!(f.etherscan["named"].chain, Some(8453));
        let ci = parse(TOML, "f.toml".into(), Some("ci")).unwrap();
        assert_eq!(ci.rpc_endpoints["local"], "http://127.0.0.1:9/ci");
        assert!(parse("[rpc_endpoints]\nx = 3\n", "f".into(), None).is_err());
        assert!(parse("not toml [", "f".into(), None).is_err());
    }

    #[test]
    fn aliases_resolve_and_unknown_ones_list_the_configured() {
        let config = Config {
            files: vec![parse(TOML, "/p/foundry.toml".into(), None).unwrap()],
        };
        let v = vars(&[("PORT", "8545")]);
        assert_eq!(
            resolve_alias(&config, "local", "--rpc-url", &v).unwrap(),
            "http://127.0.0.1:8545/x"
        );
        let e = resolve_alias(&config, "mainnet", "--rpc-url", &v).unwrap_err();
        assert!(e.contains("ALCHEMY_KEY"), "{e}");
        let e = resolve_alias(&config, "nope", "ETH_RPC_URL", &v).unwrap_err();
        assert!(e.contains("configured: local, mainnet, old"), "{e}");
        assert!(!e.contains("eth.example"), "names only: {e}");
        let none = resolve_alias(&Config::default(), "local", "--rpc-url", &v).unwrap_err();
        assert!(none.contains("no foundry.toml"), "{none}");
    }

    #[test]
    fn the_project_file_wins_and_the_global_one_fills_in() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("p");
        let deep = project.join("a/b");
        std::fs::create_dir_all(home.join(".foundry")).unwrap();
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(
            home.join(".foundry/foundry.toml"),
            "[rpc_endpoints]\nglobal = \"http://g\"\nshared = \"http://from-global\"\n",
        )
        .unwrap();
        std::fs::write(
            project.join("foundry.toml"),
            "[rpc_endpoints]\nshared = \"http://from-project\"\n",
        )
        .unwrap();
        let env = Env {
            cwd: Some(&deep),
            foundry_config: None,
            home: Some(&home),
            profile: None,
        };
        let config = Config::load(&env).unwrap();
        assert_eq!(config.files.len(), 2);
        let v = vars(&[]);
        let get = |a: &str| config.rpc_endpoint(a, &v).unwrap();
        assert_eq!(get("shared").as_deref(), Some("http://from-project"));
        assert_eq!(get("global").as_deref(), Some("http://g"));
        assert_eq!(get("missing"), None);
        // An absolute FOUNDRY_CONFIG is the project file, searched nowhere else.
        let other = dir.path().join("other.toml");
        std::fs::write(&other, "[rpc_endpoints]\nshared = \"http://other\"\n").unwrap();
        let other_s = other.to_str().unwrap();
        let env = Env {
            foundry_config: Some(other_s),
            ..env
        };
        let config = Config::load(&env).unwrap();
        let got = config.rpc_endpoint("shared", &v).unwrap();
        assert_eq!(got.as_deref(), Some("http://other"));
    }

    #[test]
    fn explorer_keys_are_picked_as_foundry_picks_them() {
        let config = Config {
            files: vec![parse(TOML, "/p/foundry.toml".into(), None).unwrap()],
        };
        let v = vars(&[("ETHERSCAN_KEY", "EK")]);
        let key = |chain, env: Option<&str>, alias: Option<&str>| {
            config.explorer_key(chain, env, alias, &v)
        };
        // By chain: the entry's key and URL.
        let arb = key(42_161, None, None).unwrap().unwrap();
        assert_eq!(
            (arb.key.as_str(), arb.url.as_deref()),
            ("ARB", Some("https://api.arbiscan.io/api"))
        );
        assert_eq!(key(1, None, None).unwrap().unwrap().key, "EK");
        // ETHERSCAN_API_KEY naming an entry picks it whatever the chain.
        assert_eq!(key(1, Some("custom"), None).unwrap().unwrap().key, "C");
        // ETHERSCAN_API_KEY that is a key replaces the chain's entry's key, keeps its URL.
        let over = key(42_161, Some("RAWKEY"), None).unwrap().unwrap();
        assert_eq!(over.key, "RAWKEY");
        assert_eq!(over.url.as_deref(), Some("https://api.arbiscan.io/api"));
        // The RPC alias names an entry.
        assert_eq!(key(5, None, Some("named")).unwrap().unwrap().key, "N");
        // No entry for the chain.
        assert_eq!(key(5, None, None).unwrap(), None);
        // An unset variable in the chosen entry is named.
        let unset = config.explorer_key(1, None, None, &vars(&[])).unwrap_err();
        assert!(unset.contains("ETHERSCAN_KEY"), "{unset}");
    }

    #[test]
    fn chain_names_as_foundry_spells_them() {
        assert_eq!(chain_id("Mainnet"), Some(1));
        assert_eq!(chain_id("arbitrum_one"), Some(42_161));
        assert_eq!(chain_id("8453"), Some(8453));
        assert_eq!(chain_id("local"), None);
    }
}
