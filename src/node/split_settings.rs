//! The parts of the split pre-flight beyond the state settings: recommended network and mempool
//! settings, confirmation from a start-up log, the tracing API over JSON-RPC, and the renderer.

use std::io::{self, Write};

use serde_json::json;
use toml::{Table, Value};

use super::doctor::field;
use super::split_report::{lookup, CheckStatus, Severity, SplitReport};
use crate::rpc::RpcClient;

/// Settings the operator documentation recommends: large blocks need big packets, and the
/// mempool settings keep invalid transactions from being re-gossiped.
pub fn recommended(config: &Table, r: &mut SplitReport) {
    let payload = lookup(config, "p2p", "max-packet-msg-payload-size").and_then(Value::as_integer);
    if payload.is_none_or(|p| p < 1_024_000) {
        r.push(
            Severity::Warning,
            "max-packet-msg-payload-size",
            format!(
                "[p2p] max-packet-msg-payload-size is {}; large blocks need 1024000",
                payload.map(|p| p.to_string()).unwrap_or("not set".into())
            ),
            Some("set `max-packet-msg-payload-size = 1024000` under [p2p] in config/config.toml"),
        );
    }
    let checks: [(&str, Value, &str); 3] = [
        ("keep-invalid-txs-in-cache", Value::Boolean(true), "true"),
        ("ttl-duration", Value::String("5s".into()), "\"5s\""),
        ("ttl-num-blocks", Value::Integer(5), "5"),
    ];
    for (key, want, shown) in checks {
        let got = lookup(config, "mempool", key);
        if got != Some(&want) {
            r.push(
                Severity::Warning,
                key,
                format!(
                    "[mempool] {key} is {}; recommended {shown}",
                    got.map(shown_toml).unwrap_or("not set".into())
                ),
                Some(&format!(
                    "set `{key} = {shown}` under [mempool] in config/config.toml"
                )),
            );
        }
    }
}

/// The message of a log line: with `log_format = "json"` the node writes one JSON object a line
/// (zerolog: `{"level":"info","module":"main","backend":"pebbledb","time":…,"message":"…"}`),
/// whose `message` is what the plain format prints after the level; a plain line is itself.
fn message(line: &str) -> std::borrow::Cow<'_, str> {
    let t = line.trim();
    if t.starts_with('{') {
        if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(t) {
            for k in ["message", "msg", "_msg"] {
                if let Some(serde_json::Value::String(m)) = o.get(k) {
                    return std::borrow::Cow::Owned(m.clone());
                }
            }
        }
    }
    std::borrow::Cow::Borrowed(line)
}

/// Whether `line` (plain, or a JSON log object) holds `text`, where a leading `<engine> ` in
/// `text` stands for the storage engine's name as the node prints it (`PebbleDB`, `RocksDB`,
/// …): one word before the rest.
fn has_line(line: &str, text: &str) -> bool {
    let line = message(line);
    let line = line.as_ref();
    let Some(rest) = text.strip_prefix("<engine> ") else {
        return line.contains(text);
    };
    line.match_indices(rest).any(|(i, _)| {
        let before = line[..i].strip_suffix(' ').unwrap_or("");
        before
            .rsplit(' ')
            .next()
            .is_some_and(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric()))
    })
}

/// Looks for the three start-up lines a node with the split writes. A line is compared with
/// this home by the labels that name it (`backend=`, `dir=`) where it carries them; one that
/// should carry them and does not cannot be matched to this home and is said not judged, and
/// the line that names nothing of a home (the optimization line) counts only when the two that
/// do were this home's. A log that shows the split on (`separateDBs=true`) against a home
/// whose config has it off is of another configuration.
pub fn confirm_log(log: &str, r: &mut SplitReport) {
    // (pattern, code, labels shown, labels that name the home)
    let lines = [
        (
            "<engine> SS is enabled",
            "log-ss-enabled",
            &["backend"][..],
            &["backend"][..],
        ),
        (
            "<engine> EVM StateStore optimization is enabled",
            "log-evm-ss-optimization",
            &["separateDBs"][..],
            &[][..],
        ),
        (
            "EVM state store enabled",
            "log-evm-ss-enabled",
            &["dir", "separateDBs"][..],
            &["dir"][..],
        ),
    ];
    let mut confirmed = 0;
    // Lines that name the home and were found to be this home's.
    let mut homes_matched = 0;
    let mut unnamed_confirmations = Vec::new();
    for (pattern, code, fields, naming) in lines {
        let text = pattern.replace("<engine> ", "");
        let text = text.as_str();
        // The last start of the node is the one that counts.
        let found = log.lines().rev().find(|l| has_line(l, pattern));
        match found {
            Some(line) => {
                let facts: Vec<String> = fields
                    .iter()
                    .map(|f| format!("{f}={}", field(line, f).unwrap_or("?".into())))
                    .collect();
                let separate = field(line, "separateDBs");
                // A line confirms this home only if its labels are this home's: a log of
                // another node or another configuration confirms nothing here.
                let other = differs_from_home(line, r);
                let unlabelled =
                    !naming.is_empty() && naming.iter().all(|f| field(line, f).is_none());
                let split_on = separate.as_deref() == Some("true");
                if let Some(why) = &other {
                    r.push(
                        Severity::Blocker,
                        code,
                        format!("log: {text:?} {why}: the log is of another node or another configuration, so it confirms nothing about this home"),
                        Some("check the start-up log of the node that runs on this home, with this config/app.toml"),
                    );
                } else if !r.split_enabled && split_on {
                    r.push(
                        Severity::Blocker,
                        code,
                        format!("log: {text:?} says separateDBs=true, but this home's app.toml has evm-ss-split = false: the log is of another configuration (or of a start before the split was turned off), so it confirms nothing about this home"),
                        Some("check the start-up log of the node's last start with this config/app.toml"),
                    );
                } else if unlabelled {
                    let labels: Vec<String> = naming.iter().map(|f| format!("{f}=")).collect();
                    r.push(
                        Severity::Warning,
                        code,
                        format!("log: {text:?} carries no {} label, so it cannot be matched to this home: not judged", labels.join(" or ")),
                        Some("check the start-up log of the node that runs on this home (a log that carries the labels, e.g. with the node's default log format)"),
                    );
                } else if r.split_enabled && separate.as_deref() == Some("false") {
                    r.push(
                        Severity::Warning,
                        code,
                        format!("log: {text:?} says separateDBs=false although evm-ss-split = true: the running binary did not apply the split"),
                        Some("upgrade chaind to 6.5 or later and restart"),
                    );
                } else {
                    // A line that names no home is judged once the lines that do have been.
                    match naming.is_empty() {
                        true => unnamed_confirmations.push(r.findings.len()),
                        false => homes_matched += 1,
                    }
                    r.push(
                        Severity::Info,
                        code,
                        format!("log confirms {text:?} ({})", facts.join(", ")),
                        None,
                    );
                }
                let judged = other.is_none() && !unlabelled && (r.split_enabled || !split_on);
                if judged && separate.as_deref() != Some("false") {
                    confirmed += 1;
                }
            }
            None => r.push(
                Severity::Warning,
                code,
                format!("log has no {text:?} line"),
                Some("restart the node with the new settings and check its start-up log"),
            ),
        }
    }
    // A line that names no home confirms it only beside lines of the same log that do.
    if homes_matched < 2 {
        for i in unnamed_confirmations {
            let f = &mut r.findings[i];
            f.severity = Severity::Warning;
            f.message = format!(
                "{}: but the line names no home, and the lines that do were not found to be this \
                 home's, so it is not judged",
                f.message.replacen("log confirms", "log: says", 1)
            );
            f.fix = Some("check the start-up log of the node that runs on this home".into());
            r.warnings += 1;
            confirmed -= 1;
        }
    }
    // A start with the split that went on to commit blocks has passed all three checks.
    let committed = log.contains("committed state") || log.contains("finalizing commit");
    if r.split_enabled && confirmed == 3 && committed {
        for c in &mut r.startup_checks {
            c.status = CheckStatus::Pass;
            c.fix = None;
        }
        for f in &mut r.findings {
            if f.code.starts_with("startup-check-") && f.severity != Severity::Info {
                if f.severity == Severity::Blocker {
                    r.blockers -= 1;
                } else {
                    r.warnings -= 1;
                }
                f.severity = Severity::Info;
                f.message = format!("{} (passed on the logged start: the node started with the split and committed blocks)", f.message);
                f.fix = None;
            }
        }
    }
}

/// How a start-up line's labels differ from the home's, if they do: `backend=` against the
/// home's `ss-backend`, `dir=` against its `data/evm_ss` (both paths resolved, so a relative
/// `--home` and the node's absolute path compare equal).
fn differs_from_home(line: &str, r: &SplitReport) -> Option<String> {
    let mut why = Vec::new();
    if let Some(b) = field(line, "backend") {
        if !b.eq_ignore_ascii_case(&r.ss_backend) {
            why.push(format!(
                "says backend={b}, but this home's ss-backend is {:?}",
                r.ss_backend
            ));
        }
    }
    if let Some(d) = field(line, "dir") {
        let resolve = |p: &std::path::Path| {
            std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.to_path_buf())
        };
        if resolve(std::path::Path::new(&d)) != resolve(&r.evm_ss_dir) {
            why.push(format!(
                "says dir={d}, but this home's EVM state store is {}",
                r.evm_ss_dir.display()
            ));
        }
    }
    (!why.is_empty()).then(|| why.join(", and "))
}

/// `debug_traceBlockByNumber ["latest", {}]` must return a result: RPC nodes serve traces.
pub fn check_tracing(client: &RpcClient, r: &mut SplitReport) {
    match client.call("debug_traceBlockByNumber", json!(["latest", {}])) {
        Ok(v) if !v.is_null() => r.push(
            Severity::Info,
            "rpc-trace",
            format!("debug_traceBlockByNumber on latest returned a result ({})", kind(&v)),
            None,
        ),
        Ok(_) => r.push(
            Severity::Blocker,
            "rpc-trace",
            "debug_traceBlockByNumber on latest returned null".into(),
            Some("check the EVM state store is readable: the node's log at start-up"),
        ),
        Err(e) => r.push(
            Severity::Blocker,
            "rpc-trace",
            format!("debug_traceBlockByNumber on latest failed: {e}"),
            Some("the EVM state store must serve traces after the split: check the start-up log and the [evm] RPC settings"),
        ),
    }
}

/// A TOML value as written in a config file.
fn shown_toml(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

fn kind(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(a) => format!("{} transaction trace(s)", a.len()),
        _ => "an object".into(),
    }
}

/// The report for people: start-up checks, then findings grouped worst first.
pub fn render_split(r: &SplitReport, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "split pre-flight of {} (evm-ss-split {})",
        r.home,
        if r.split_enabled { "on" } else { "off" }
    )?;
    for sev in [Severity::Blocker, Severity::Warning, Severity::Info] {
        for f in r.findings.iter().filter(|f| f.severity == sev) {
            let tag = match sev {
                Severity::Blocker => "BLOCKER",
                Severity::Warning => "warning",
                Severity::Info => "info   ",
            };
            writeln!(out, "{tag}  {}", f.message)?;
            if let Some(fix) = &f.fix {
                writeln!(out, "         fix: {fix}")?;
            }
        }
    }
    let verdict = if r.blockers > 0 {
        format!(
            "NOT READY: {} blocker(s), {} warning(s)",
            r.blockers, r.warnings
        )
    } else {
        format!("ready: no blocker, {} warning(s)", r.warnings)
    };
    writeln!(out, "{verdict}")
}

#[cfg(test)]
mod tests {
    use super::has_line;

    #[test]
    fn start_up_lines_match_any_storage_engine_name() {
        for engine in ["PebbleDB", "RocksDB", "ChainDB"] {
            let line = format!("3:00PM INF {engine} SS is enabled backend=x module=main");
            assert!(has_line(&line, "<engine> SS is enabled"), "{line}");
        }
        assert!(!has_line(
            "3:00PM INF PebbleDB SS is disabled",
            "<engine> SS is enabled"
        ));
        assert!(has_line(
            "x EVM state store enabled dir=y",
            "EVM state store enabled"
        ));
    }
}
