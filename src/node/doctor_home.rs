//! What `node doctor --home DIR` reads besides the log, where the chain's documentation names
//! it: `log_level` in `config/config.toml` (the node's default is `info`; the documentation asks
//! for `debug` while diagnosing, `trace` for the most detail, and a level stricter than `info`
//! hides the lines the diagnosis reads, so an empty diagnosis would mean nothing) and the state-sync
//! snapshots under `data/snapshots/` (what a "restore a snapshot" step can start from).
//! A file that cannot be read is reported as not checked, never as fine.

use std::path::Path;

use serde::Serialize;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HomeStatus {
    Ok,
    Warn,
    NotChecked,
}

/// One item of the node home, checked.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HomeCheck {
    pub item: String,
    pub path: String,
    pub status: HomeStatus,
    pub detail: String,
}

/// Every check of `home`.
pub fn home_checks(home: &Path) -> Vec<HomeCheck> {
    let mut checks = vec![log_level(home), snapshots(home)];
    checks.extend(config_settings(home));
    checks
}

/// `log_format` and the peer lists (see [`super::config_checks`]): one check each, `ok` when
/// set as the node reads them or not set.
fn config_settings(home: &Path) -> Vec<HomeCheck> {
    let path = home.join("config/config.toml");
    let check = |item: &str, status, detail: String| HomeCheck {
        item: item.into(),
        path: path.display().to_string(),
        status,
        detail,
    };
    let table: toml::Table = match std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
        .and_then(|t| {
            t.parse().map_err(|e: toml::de::Error| {
                format!("{} is not valid TOML: {}", path.display(), e.message())
            })
        }) {
        Ok(t) => t,
        Err(why) => {
            return vec![
                check("log_format", HomeStatus::NotChecked, why.clone()),
                check("peers", HomeStatus::NotChecked, why),
            ]
        }
    };
    let issues = super::config_checks::config_issues(&table);
    let found = |settings: &[&str]| -> Vec<String> {
        issues
            .iter()
            .filter(|i| settings.contains(&i.setting))
            .map(|i| format!("{}; fix: {}", i.message, i.fix))
            .collect()
    };
    let one = |item: &str, settings: &[&str], fine: &str| {
        let bad = found(settings);
        if bad.is_empty() {
            check(item, HomeStatus::Ok, fine.into())
        } else {
            check(item, HomeStatus::Warn, bad.join(" | "))
        }
    };
    vec![
        one(
            "log_format",
            &["log_format"],
            "plain or json (or not set: plain), as the node writes them",
        ),
        one(
            "peers",
            &["bootstrap-peers", "persistent-peers"],
            "every bootstrap-peers / persistent-peers entry is <node_id>@<host>:<port>",
        ),
    ]
}

/// Levels that keep the info lines (block commits, peer errors, app hash lines).
fn shows_info(level: &str) -> Option<bool> {
    match level.trim().to_ascii_lowercase().as_str() {
        "trace" | "debug" | "info" => Some(true),
        "warn" | "warning" | "error" | "fatal" | "panic" | "none" | "disabled" => Some(false),
        _ => None,
    }
}

fn log_level(home: &Path) -> HomeCheck {
    let path = home.join("config/config.toml");
    let mut check = HomeCheck {
        item: "log_level".into(),
        path: path.display().to_string(),
        status: HomeStatus::NotChecked,
        detail: String::new(),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            check.detail = format!("cannot read {}: {e}", path.display());
            return check;
        }
    };
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            check.detail = format!("{} is not valid TOML: {}", path.display(), e.message());
            return check;
        }
    };
    let Some(value) = table.get("log_level").or_else(|| {
        table
            .values()
            .filter_map(toml::Value::as_table)
            .find_map(|t| t.get("log_level"))
    }) else {
        check.status = HomeStatus::Ok;
        check.detail = format!(
            "not set: the node logs at its default level, info, which keeps the lines the \
             diagnosis reads. {DIAGNOSING}"
        );
        return check;
    };
    let Some(level) = value.as_str() else {
        check.detail = format!("log_level = {value:?} is not a string");
        return check;
    };
    // `info`, or a module list such as `main:info,state:info,*:error`.
    let mut hidden = Vec::new();
    let mut detailed = true;
    let mut unknown = Vec::new();
    for part in level.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (module, lvl) = match part.split_once(':') {
            Some((m, l)) => (m.trim(), l),
            None => ("*", part),
        };
        detailed &= matches!(lvl.trim().to_ascii_lowercase().as_str(), "debug" | "trace");
        match shows_info(lvl) {
            Some(true) => {}
            Some(false) => hidden.push(if module == "*" {
                "every module".to_string()
            } else {
                format!("module {module}")
            }),
            None => unknown.push(part.to_string()),
        }
    }
    if !unknown.is_empty() {
        check.detail = format!("log_level = {level:?}: cannot read {}", unknown.join(", "));
    } else if hidden.is_empty() && detailed {
        check.status = HomeStatus::Ok;
        check.detail = format!(
            "log_level = {level:?}: the detail the documentation asks for while diagnosing"
        );
    } else if hidden.is_empty() {
        check.status = HomeStatus::Ok;
        check.detail =
            format!("log_level = {level:?} keeps the info lines the diagnosis reads. {DIAGNOSING}");
    } else {
        check.status = HomeStatus::Warn;
        check.detail = format!(
            "log_level = {level:?} hides info lines of {}: block commits, peer errors and app \
             hash lines may be missing from this log, so a clean diagnosis proves little. \
             {DIAGNOSING}",
            hidden.join(", ")
        );
    }
    check
}

/// The documented level while diagnosing.
const DIAGNOSING: &str = "While diagnosing, set log_level = \"debug\" (\"trace\" for the most \
                          detail) in config/config.toml and restart the node; set it back \
                          afterwards, as debug logs grow fast";

fn snapshots(home: &Path) -> HomeCheck {
    let path = home.join("data/snapshots");
    let mut check = HomeCheck {
        item: "snapshots".into(),
        path: path.display().to_string(),
        status: HomeStatus::NotChecked,
        detail: String::new(),
    };
    let entries = match std::fs::read_dir(&path) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check.status = HomeStatus::Warn;
            check.detail = "no data/snapshots/: a restore needs a snapshot downloaded for the \
                            network's current node version, or state sync"
                .into();
            return check;
        }
        Err(e) => {
            check.detail = format!("cannot read {}: {e}", path.display());
            return check;
        }
    };
    // Snapshots are kept one directory per height (metadata.db beside them).
    let mut heights: Vec<u64> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    heights.sort_unstable();
    if heights.is_empty() {
        check.status = HomeStatus::Warn;
        check.detail = "data/snapshots/ holds no snapshot: a restore needs a downloaded \
                        snapshot or state sync"
            .into();
    } else {
        check.status = HomeStatus::Ok;
        let shown: Vec<String> = heights.iter().rev().take(5).map(u64::to_string).collect();
        check.detail = format!(
            "{} local snapshot(s), newest heights {}",
            heights.len(),
            shown.join(", ")
        );
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(config: Option<&str>, snapshots: &[&str]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "chaintrace-doctor-home-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(dir.join("config")).unwrap();
        if let Some(c) = config {
            std::fs::write(dir.join("config/config.toml"), c).unwrap();
        }
        for s in snapshots {
            std::fs::create_dir_all(dir.join("data/snapshots").join(s)).unwrap();
        }
        dir
    }

    #[test]
    fn log_levels() {
        let h = home(Some("log_level = \"info\"\n"), &[]);
        let c = log_level(&h);
        assert_eq!(c.status, HomeStatus::Ok);
        assert!(
            c.detail
                .contains("set log_level = \"debug\" (\"trace\" for the most detail)"),
            "{}",
            c.detail
        );
        let h = home(Some("log_level = \"debug\"\n"), &[]);
        let c = log_level(&h);
        assert_eq!(c.status, HomeStatus::Ok);
        assert!(!c.detail.contains("While diagnosing"), "{}", c.detail);
        let h = home(Some("log_level = \"error\"\n"), &[]);
        let c = log_level(&h);
        assert_eq!(c.status, HomeStatus::Warn);
        assert!(c.detail.contains("every module"), "{}", c.detail);
        assert!(c.detail.contains("log_level = \"debug\""), "{}", c.detail);
        assert!(!c.detail.contains("log_level = \"info\""), "{}", c.detail);
        let h = home(Some("log_level = \"main:info,p2p:error,*:info\"\n"), &[]);
        let c = log_level(&h);
        assert_eq!(c.status, HomeStatus::Warn);
        assert!(c.detail.contains("module p2p"), "{}", c.detail);
        let h = home(Some("moniker = \"x\"\n"), &[]);
        assert_eq!(log_level(&h).status, HomeStatus::Ok);
        let h = home(None, &[]);
        assert_eq!(log_level(&h).status, HomeStatus::NotChecked);
        let h = home(Some("log_level = \"loud\"\n"), &[]);
        assert_eq!(log_level(&h).status, HomeStatus::NotChecked);
    }

    #[test]
    fn snapshot_directory() {
        let h = home(None, &[]);
        assert_eq!(snapshots(&h).status, HomeStatus::Warn);
        let h = home(None, &["1000", "2000", "metadata.db"]);
        let c = snapshots(&h);
        assert_eq!(c.status, HomeStatus::Ok);
        assert_eq!(c.detail, "2 local snapshot(s), newest heights 2000, 1000");
    }
}
