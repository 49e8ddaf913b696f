//! Settings of `config/config.toml` that the node reads at start and that both `split-check`
//! and `doctor --home` report: `log_format` (the node writes `plain` or `json` logs, nothing
//! else) and the peer lists `bootstrap-peers` / `persistent-peers`, whose entries the chain's
//! documentation writes `<node_id>@<host>:26656` (a node id is 20 bytes, 40 hex digits).
//! A value these checks cannot read is reported, never passed over.

use toml::Table;

use super::split_report::lookup;

/// One setting that is not what the node reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigIssue {
    /// The setting, as written in the documentation (`log_format`, `bootstrap-peers`, …).
    pub setting: &'static str,
    pub message: String,
    pub fix: String,
}

/// The peer lists, with the section they live in.
const PEER_LISTS: [&str; 2] = ["bootstrap-peers", "persistent-peers"];

/// Every issue of `config` (a parsed config.toml).
pub fn config_issues(config: &Table) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    if let Some(v) = lookup(config, "", "log_format") {
        match v.as_str() {
            Some("plain" | "json") => {}
            other => issues.push(ConfigIssue {
                setting: "log_format",
                message: format!(
                    "log_format = {}: the node writes only \"plain\" or \"json\" logs",
                    other
                        .map(|s| format!("{s:?}"))
                        .unwrap_or_else(|| format!("a {}", v.type_str()))
                ),
                fix: "set `log_format = \"plain\"` (or \"json\") in config/config.toml".into(),
            }),
        }
    }
    for list in PEER_LISTS {
        let Some(v) = lookup(config, "p2p", list) else {
            continue;
        };
        let Some(text) = v.as_str() else {
            issues.push(ConfigIssue {
                setting: list,
                message: format!(
                    "[p2p] {list} is a {}, not a comma-separated string",
                    v.type_str()
                ),
                fix: format!("write {list} as \"<node_id>@<host>:26656,…\" under [p2p]"),
            });
            continue;
        };
        let bad: Vec<String> = text
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .filter_map(|e| peer_problem(e).map(|why| format!("{e:?} ({why})")))
            .collect();
        if !bad.is_empty() {
            issues.push(ConfigIssue {
                setting: list,
                message: format!(
                    "[p2p] {list} has {} malformed entr{}: {}",
                    bad.len(),
                    if bad.len() == 1 { "y" } else { "ies" },
                    bad.join("; ")
                ),
                fix: format!(
                    "write each entry of {list} as <node_id>@<host>:26656, the pair taken from \
                     the network's published peer list, or remove it"
                ),
            });
        }
    }
    issues
}

/// Why a peer entry is not `<node_id>@<host>:<port>`, if it is not.
fn peer_problem(entry: &str) -> Option<&'static str> {
    let Some((id, addr)) = entry.split_once('@') else {
        return Some("no <node_id>@ before the address");
    };
    if id.len() != 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some("the node id is not 40 hex digits");
    }
    let Some((host, port)) = addr.rsplit_once(':') else {
        return Some("no :port after the host");
    };
    if host.is_empty() || host.contains(['/', '@', ' ']) {
        return Some("no host");
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => None,
        _ => Some("the port is not a number from 1 to 65535"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_entries_are_node_id_at_host_port() {
        let id = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
        assert_eq!(peer_problem(&format!("{id}@203.0.113.9:26656")), None);
        assert_eq!(peer_problem(&format!("{id}@seed.example:26656")), None);
        assert!(peer_problem("203.0.113.9:26656").is_some());
        assert!(peer_problem(&format!("{id}@203.0.113.9")).is_some());
        assert!(peer_problem(&format!("{}@203.0.113.9:26656", &id[..39])).is_some());
        assert!(peer_problem(&format!("tcp://{id}@203.0.113.9:26656")).is_some());
        assert!(peer_problem(&format!("{id}@:26656")).is_some());
        assert!(peer_problem(&format!("{id}@203.0.113.9:http")).is_some());
    }
}
