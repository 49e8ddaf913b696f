//! What `node split-check` reports: findings with their severity, the start-up checks and the
//! report itself (shared by the checks in `split.rs` and the settings/log/trace checks and the
//! renderer in `split_settings.rs`), and the config lookup both use.

use serde::Serialize;
use toml::{Table, Value};

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Blocker,
}

/// One observation, with the fix when there is one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable identifier for scripts, e.g. `sc-enable`.
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The predicted outcome of one start-up check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    Pass,
    Abort,
    /// Depends on database contents that cannot be read offline.
    Unknown,
    /// The split is off, so the check does not run.
    NotRun,
}

/// One of the three start-up checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StartupCheck {
    pub number: u8,
    pub name: String,
    pub status: CheckStatus,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The whole pre-flight.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SplitReport {
    pub home: String,
    pub split_enabled: bool,
    pub startup_checks: Vec<StartupCheck>,
    pub findings: Vec<Finding>,
    pub blockers: usize,
    pub warnings: usize,
    /// The state-store backend the home configures (`ss-backend`, else the default
    /// `pebbledb`): what the start-up log's `backend=` must say.
    #[serde(skip)]
    pub ss_backend: String,
    /// The home's EVM state store (`data/evm_ss`): what the start-up log's `dir=` must name.
    #[serde(skip)]
    pub evm_ss_dir: std::path::PathBuf,
}

impl SplitReport {
    /// Adds a finding and keeps the counts right.
    pub fn push(&mut self, severity: Severity, code: &str, message: String, fix: Option<&str>) {
        match severity {
            Severity::Blocker => self.blockers += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => {}
        }
        self.findings.push(Finding {
            severity,
            code: code.into(),
            message,
            fix: fix.map(String::from),
        });
    }
}

/// A key looked up in `section` first, then anywhere; `-` and `_` spellings are the same key.
pub fn lookup<'a>(t: &'a Table, section: &str, key: &str) -> Option<&'a Value> {
    let alt = key.replace('-', "_");
    let get = |t: &'a Table| t.get(key).or_else(|| t.get(&alt));
    if let Some(v) = t.get(section).and_then(Value::as_table).and_then(get) {
        return Some(v);
    }
    get(t).or_else(|| t.values().filter_map(Value::as_table).find_map(get))
}
