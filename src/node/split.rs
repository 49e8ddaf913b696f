//! `node split-check`: pre-flight of the EVM state-store split migration.
//!
//! Reads `config/app.toml`, `config/config.toml` and `data/` of a node home and predicts what the
//! node will do at its next start with the split on: the settings it needs, whether the node is
//! of a kind that may migrate at all (RPC nodes only: not validators, not archive nodes), and
//! the three start-up checks that abort a misprepared node. Every finding carries a severity;
//! a blocker means the node would refuse to start or must not be migrated.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

pub use super::split_report::{lookup, CheckStatus, Finding, Severity, SplitReport, StartupCheck};
use super::split_store::{store_state, StoreState};
use super::NodeError;

fn read_toml(path: &Path) -> Result<Option<Table>, NodeError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(NodeError::Io {
                path: path.display().to_string(),
                source,
            })
        }
    };
    text.parse::<Table>()
        .map(Some)
        .map_err(|e| NodeError::Config {
            path: path.display().to_string(),
            reason: e.to_string().lines().next().unwrap_or_default().to_string(),
        })
}

fn flag(t: &Table, section: &str, key: &str) -> Option<bool> {
    lookup(t, section, key).and_then(Value::as_bool)
}

/// Runs the offline part of the pre-flight on the node home `home`.
pub fn split_check(home: &Path) -> Result<SplitReport, NodeError> {
    let mut r = SplitReport {
        home: home.display().to_string(),
        split_enabled: false,
        startup_checks: Vec::new(),
        findings: Vec::new(),
        blockers: 0,
        warnings: 0,
        ss_backend: "pebbledb".into(),
        evm_ss_dir: home.join("data/evm_ss"),
    };
    let app_path = home.join("config/app.toml");
    let Some(app) = read_toml(&app_path)? else {
        r.push(
            Severity::Blocker,
            "app-toml-missing",
            format!(
                "{} not found: is {} a node home?",
                app_path.display(),
                home.display()
            ),
            Some("pass the node's home directory (the one holding config/ and data/)"),
        );
        return Ok(r);
    };
    let config = read_toml(&home.join("config/config.toml"))?;
    check_state_settings(&app, &mut r);
    check_node_kind(home, &app, config.as_ref(), &mut r);
    predict_startup(home, &app, &mut r);
    // What a start-up log must show to confirm this home: the backend it configures (pebbledb
    // when unset, the node's default) and its EVM state store.
    if let Some(b) = lookup(&app, "state-store", "ss-backend").and_then(Value::as_str) {
        r.ss_backend = b.to_string();
    }
    match &config {
        Some(c) => {
            super::split_settings::recommended(c, &mut r);
            for i in super::config_checks::config_issues(c) {
                r.push(Severity::Warning, i.setting, i.message, Some(&i.fix));
            }
        }
        None => r.push(
            Severity::Warning,
            "config-toml-missing",
            "config/config.toml not found: validator and network settings not checked".into(),
            None,
        ),
    }
    Ok(r)
}

fn check_state_settings(app: &Table, r: &mut SplitReport) {
    for (section, key) in [("state-commit", "sc-enable"), ("state-store", "ss-enable")] {
        match flag(app, section, key) {
            Some(true) => r.push(
                Severity::Info,
                key,
                format!("[{section}] {key} = true"),
                None,
            ),
            other => r.push(
                Severity::Blocker,
                key,
                format!(
                    "[{section}] {key} is {}: the split needs it true",
                    match (other, lookup(app, section, key)) {
                        (Some(b), _) => b.to_string(),
                        // Set, but not a boolean: the node refuses to parse it.
                        (None, Some(v)) => match v.as_str() {
                            Some(t) => format!("{t:?}, not a boolean"),
                            None => format!("{}, not a boolean", v.type_str()),
                        },
                        (None, None) => "not set".into(),
                    }
                ),
                Some(&format!(
                    "set `{key} = true` under [{section}] in config/app.toml"
                )),
            ),
        }
    }
    match lookup(app, "state-store", "ss-backend").and_then(Value::as_str) {
        None => r.push(
            Severity::Info,
            "ss-backend",
            "ss-backend not set: pebbledb (the default)".into(),
            None,
        ),
        Some("pebbledb") => r.push(
            Severity::Info,
            "ss-backend",
            "ss-backend = \"pebbledb\"".into(),
            None,
        ),
        Some("rocksdb") => r.push(
            Severity::Warning,
            "ss-backend",
            "ss-backend = \"rocksdb\" needs a chaind built with the rocksdbBackend build tag"
                .into(),
            Some(
                "check `chaind version --long` lists rocksdbBackend in build_tags, or use pebbledb",
            ),
        ),
        Some(other) => r.push(
            Severity::Blocker,
            "ss-backend",
            format!("ss-backend = {other:?} is not a known backend"),
            Some("use \"pebbledb\" (default) or \"rocksdb\""),
        ),
    }
    r.split_enabled = flag(app, "state-store", "evm-ss-split") == Some(true);
    if r.split_enabled {
        r.push(
            Severity::Info,
            "evm-ss-split",
            "evm-ss-split = true: the node starts with separate EVM state stores".into(),
            None,
        );
    } else {
        r.push(
            Severity::Warning,
            "evm-ss-split",
            "evm-ss-split is not true: the split is off and the start-up checks will not run"
                .into(),
            Some("set `evm-ss-split = true` under [state-store] in config/app.toml to migrate"),
        );
    }
    for key in ["evm-ss-write-mode", "evm-ss-read-mode"] {
        if lookup(app, "state-store", key).is_some() {
            r.push(
                Severity::Blocker,
                "legacy-evm-ss-mode",
                format!("legacy `{key}` found: this configuration predates chaind 6.5"),
                Some("upgrade chaind to 6.5 or later first, then replace the legacy keys with `evm-ss-split`"),
            );
        }
    }
}

fn check_node_kind(home: &Path, app: &Table, config: Option<&Table>, r: &mut SplitReport) {
    let rel = |key: &str, default: &str| -> PathBuf {
        let p = config
            .and_then(|c| lookup(c, "", key))
            .and_then(Value::as_str)
            .unwrap_or(default);
        home.join(p)
    };
    let laddr = config
        .and_then(|c| lookup(c, "", "priv_validator_laddr"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mode = config
        .and_then(|c| lookup(c, "", "mode"))
        .and_then(Value::as_str);
    let state = std::fs::read_to_string(rel(
        "priv_validator_state_file",
        "data/priv_validator_state.json",
    ))
    .ok()
    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let signed = state
        .as_ref()
        .and_then(|s| s.get("height"))
        .and_then(|h| {
            h.as_str()
                .map(String::from)
                .or_else(|| h.as_u64().map(|n| n.to_string()))
        })
        .and_then(|h| h.parse::<u64>().ok())
        .unwrap_or(0);
    let validator_fix = Some("migrate RPC nodes only; keep validators on the unsplit store");
    if !laddr.is_empty() {
        r.push(Severity::Blocker, "validator", format!("priv_validator_laddr = {laddr:?}: this node signs through a remote signer, it is a validator"), validator_fix);
    } else if mode == Some("validator") {
        r.push(
            Severity::Blocker,
            "validator",
            "mode = \"validator\" in config.toml".into(),
            validator_fix,
        );
    } else if signed > 0 {
        r.push(Severity::Blocker, "validator", format!("priv_validator_key.json is in use: priv_validator_state.json has signed up to height {signed}"), validator_fix);
    } else if rel("priv_validator_key_file", "config/priv_validator_key.json").exists() {
        r.push(
            Severity::Info,
            "validator",
            "priv_validator_key.json exists but has never signed: not a validator".into(),
            None,
        );
    }
    let pruning = lookup(app, "", "pruning").and_then(Value::as_str);
    let keep_recent = lookup(app, "state-store", "ss-keep-recent").and_then(Value::as_integer);
    if pruning == Some("nothing") {
        r.push(
            Severity::Blocker,
            "archive",
            "pruning = \"nothing\": this is an archive node".into(),
            Some("migrate pruned RPC nodes only"),
        );
    } else if keep_recent == Some(0) {
        r.push(
            Severity::Blocker,
            "archive",
            "ss-keep-recent = 0 keeps every version: this is an archive node".into(),
            Some("migrate pruned RPC nodes only"),
        );
    }
}

fn predict_startup(home: &Path, app: &Table, r: &mut SplitReport) {
    let cosmos_dir = lookup(app, "state-store", "ss-db-directory")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|s| home.join(s))
        // The documented place of the Cosmos state store (the pebbledb backend's directory).
        .unwrap_or_else(|| home.join("data/pebbledb"));
    let cosmos = store_state(&cosmos_dir);
    // A node that has run (its block store exists) but has no Cosmos SS where the config says:
    // the store lives somewhere this check does not know, so whether it holds history is
    // unknown, not "no".
    let has_run = ["data/blockstore.db", "data/application.db", "data/state.db"]
        .iter()
        .any(|d| home.join(d).exists());
    let cosmos_unknown = cosmos == StoreState::Missing && has_run;
    let evm = store_state(&home.join("data/evm_ss"));
    let shown = home.display().to_string();
    let keep = super::backup_before_sync(&shown);
    let reset = super::reset_command(&shown);
    let sync_fix = format!(
        "set evm-ss-split = false, or state sync the node with evm-ss-split = true: {keep}, \
         reset with {reset}, then state sync"
    );
    let mut checks = vec![
        (
            1,
            "Cosmos SS has history and data/evm_ss/ is missing or empty",
        ),
        (2, "EVM SS databases are empty"),
        (3, "earliest versions of the Cosmos and EVM stores differ"),
    ]
    .into_iter()
    .map(|(n, name)| StartupCheck {
        number: n,
        name: name.into(),
        status: CheckStatus::Pass,
        detail: String::new(),
        fix: None,
    })
    .collect::<Vec<_>>();
    let has_history = cosmos == StoreState::HasData;
    let c = &mut checks[0];
    if cosmos_unknown {
        c.status = CheckStatus::Unknown;
        c.detail = format!(
            "the node has run but there is no Cosmos SS at {} (documented: data/pebbledb/): \
             whether it holds history cannot be read",
            cosmos_dir.display()
        );
        c.fix = Some("set state-store.ss-db-directory to where the node keeps it".into());
        // "ready" is said only when checked.
        r.push(
            Severity::Blocker,
            "cosmos-ss-not-found",
            format!(
                "no Cosmos state store at {}: the start-up checks cannot be predicted",
                cosmos_dir.display()
            ),
            Some("run the check against the node's real home, or set ss-db-directory"),
        );
    } else if has_history && matches!(evm, StoreState::Missing | StoreState::EmptyDir) {
        c.status = CheckStatus::Abort;
        c.detail = format!(
            "{} holds data and data/evm_ss/ is {}",
            cosmos_dir.display(),
            evm.describe()
        );
        c.fix = Some(sync_fix.clone());
    } else {
        c.detail = format!(
            "Cosmos SS {}, data/evm_ss/ {}",
            cosmos.describe(),
            evm.describe()
        );
    }
    let c = &mut checks[1];
    if has_history && evm == StoreState::EmptyDatabases {
        c.status = CheckStatus::Abort;
        c.detail = "data/evm_ss/ has databases but none holds data".into();
        c.fix = Some(format!("remove data/evm_ss/, then {sync_fix}"));
    } else {
        c.detail = format!("data/evm_ss/ {}", evm.describe());
    }
    let c = &mut checks[2];
    if has_history && evm == StoreState::HasData {
        c.status = CheckStatus::Unknown;
        c.detail = "both stores hold data; their earliest versions cannot be read offline, and the node aborts if they differ (typically a stale data/evm_ss/ left by an earlier split)".into();
        c.fix = Some(format!(
            "if data/evm_ss/ predates the current Cosmos SS: {keep}, remove data/evm_ss/, reset \
             with {reset} and state sync"
        ));
    } else {
        c.detail = "not both stores hold data: nothing to compare".into();
    }
    if !r.split_enabled {
        for c in &mut checks {
            c.status = CheckStatus::NotRun;
            c.fix = None;
        }
        if evm == StoreState::HasData {
            r.push(
                Severity::Warning,
                "stale-evm-ss",
                "data/evm_ss/ holds EVM data but the split is off: reverting the split leaves that data stale, it is no longer updated, and the node needs a state sync without the split".into(),
                Some(&format!("{keep}; reset with {reset} and state sync the node with evm-ss-split = false, and remove data/evm_ss/ before enabling the split again, or start-up check 3 aborts")),
            );
        }
    }
    for c in &checks {
        let (sev, word) = match c.status {
            CheckStatus::Abort => (Severity::Blocker, "would ABORT"),
            CheckStatus::Unknown => (Severity::Warning, "cannot be predicted"),
            CheckStatus::Pass => (Severity::Info, "passes"),
            CheckStatus::NotRun => (Severity::Info, "does not run (split off)"),
        };
        r.push(
            sev,
            &format!("startup-check-{}", c.number),
            format!(
                "start-up check {} ({}) {word}: {}",
                c.number, c.name, c.detail
            ),
            c.fix.as_deref(),
        );
    }
    r.startup_checks = checks;
}
