//! `node doctor`: classify node log lines by the operator documentation's error table and turn
//! them into a diagnosis with ordered steps.
//!
//! Two rules shape the diagnosis. An app hash mismatch is the primary problem whenever it is
//! present: a node whose state diverged is dropped by its peers, so peer errors are reported as
//! its symptoms, not as separate problems with their own fixes (a halted consensus and a stuck
//! height keep their own steps). And a stuck height is fixed by escalation: restart,
//! then rollback, then a snapshot.

use std::collections::BTreeMap;

use serde::Serialize;

use super::logtime::line_times;

/// The documented error classes, in the order a diagnosis lists them (most urgent first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorClass {
    DuplicateSignature,
    AppHashMismatch,
    DatabaseCorrupted,
    DatabaseLocked,
    PrivValidatorMissing,
    ConsensusHalt,
    StuckHeight,
    Crash,
    PeerIdMismatch,
    NoPeers,
    PeerConnectivity,
}

impl ErrorClass {
    pub fn title(self) -> &'static str {
        match self {
            ErrorClass::DuplicateSignature => "duplicate signature (double signing)",
            ErrorClass::AppHashMismatch => "app hash mismatch",
            ErrorClass::DatabaseCorrupted => "database corrupted",
            ErrorClass::DatabaseLocked => "database locked: the node is still running",
            ErrorClass::PrivValidatorMissing => "private validator file not found",
            ErrorClass::ConsensusHalt => "consensus failure: height halted",
            ErrorClass::StuckHeight => "stuck height",
            ErrorClass::Crash => "crash (panic)",
            ErrorClass::PeerIdMismatch => "peer id/address mismatch",
            ErrorClass::NoPeers => "no peers",
            ErrorClass::PeerConnectivity => "peer connectivity",
        }
    }

    /// Classes that an app hash mismatch causes: its peers drop the node. A halted consensus and
    /// a stuck height keep their own steps (the documentation treats them on their own).
    fn is_app_hash_symptom(self) -> bool {
        matches!(
            self,
            ErrorClass::PeerIdMismatch | ErrorClass::NoPeers | ErrorClass::PeerConnectivity
        )
    }
}

/// The class of one log line, by the documented messages (case-insensitive).
pub fn classify(line: &str) -> Option<ErrorClass> {
    let l = line.to_ascii_lowercase();
    let has = |s: &str| l.contains(s);
    Some(if has("wrong block.header.apphash") {
        ErrorClass::AppHashMismatch
    } else if has("duplicate signature") {
        ErrorClass::DuplicateSignature
    } else if has("database is corrupted") {
        ErrorClass::DatabaseCorrupted
    } else if has("failed to initialize database") && has("resource temporarily unavailable") {
        ErrorClass::DatabaseLocked
    } else if has("private validator file not found") {
        ErrorClass::PrivValidatorMissing
    } else if has("consensus failure") {
        ErrorClass::ConsensusHalt
    } else if has("expected to connect with peer") || has("failed to handshake with peer") {
        ErrorClass::PeerIdMismatch
    } else if has("failed to send request for peers") || has("no available peers to send a pex") {
        ErrorClass::NoPeers
    } else if (has("peer handshake failed") && has("eof"))
        || (has("dial tcp") && has("connection refused"))
    {
        ErrorClass::PeerConnectivity
    } else if line.starts_with("panic:") || line.starts_with("fatal error:") {
        ErrorClass::Crash
    } else {
        return None;
    })
}

/// A `key=value` or JSON `"key":value` field of a log line.
pub fn field(line: &str, key: &str) -> Option<String> {
    for pat in [format!("{key}="), format!("\"{key}\":")] {
        let mut from = 0;
        while let Some(i) = line[from..].find(&pat) {
            let at = from + i;
            from = at + pat.len();
            // Whole keys only: `height=` must not match `max_height=`.
            let prev = line[..at].chars().next_back();
            if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let rest = line[from..].trim_start();
            let v: String = if let Some(q) = rest.strip_prefix('"') {
                q.chars().take_while(|c| *c != '"').collect()
            } else {
                rest.chars()
                    .take_while(|c| !c.is_whitespace() && *c != ',' && *c != '}')
                    .collect()
            };
            if !v.is_empty() {
                return Some(v);
            }
        }
    }
    None
}

/// The first run of at least 40 hex digits after `from` in `s`.
fn hex_after(s: &str, from: usize) -> Option<String> {
    let rest = s.get(from..)?;
    rest.split(|c: char| !c.is_ascii_hexdigit())
        .find(|t| t.len() >= 40)
        .map(String::from)
}

fn word_after(line: &str, marker: &str) -> Option<String> {
    let l = line.to_ascii_lowercase();
    let i = l.find(&marker.to_ascii_lowercase())? + marker.len();
    let v: String = line[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '@' | ':' | '.' | '-' | '_'))
        .collect();
    let v = v.trim_end_matches(['.', ':']).to_string();
    (!v.is_empty()).then_some(v)
}

/// Facts a class's line carries (heights, hashes, peers).
fn details(class: ErrorClass, line: &str) -> BTreeMap<String, String> {
    let mut d = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            d.insert(k.to_string(), v);
        }
    };
    match class {
        ErrorClass::AppHashMismatch => {
            put("expectedAppHash", word_after(line, "Expected"));
            let l = line.to_ascii_lowercase();
            let after_expected = l.find("expected").map(|i| &line[i..]).unwrap_or(line);
            put("gotAppHash", word_after(after_expected, ", got"));
            put("height", field(line, "height"));
            let commit = [
                "block_id",
                "blockid",
                "commit_hash",
                "commit hash",
                "block_hash",
            ]
            .iter()
            .find_map(|k| l.find(k).and_then(|i| hex_after(line, i)));
            put("commitHash", commit);
        }
        ErrorClass::PeerIdMismatch => {
            put(
                "expectedPeerId",
                word_after(line, "expected to connect with peer"),
            );
            put("gotPeerId", word_after(line, ", got"));
            put("peer", field(line, "peer").or_else(|| field(line, "addr")));
        }
        ErrorClass::PeerConnectivity => {
            // `dial tcp HOST:PORT: …`; without an address there (`Dial tcp connection refused`)
            // the peer field, never the next word.
            let lower = line.to_ascii_lowercase();
            let dialed = lower
                .find("dial tcp")
                .and_then(|i| word_after(&line[i..], &line[i..i + 8]))
                .filter(|w| w.contains(':') && w.chars().any(|c| c.is_ascii_digit()));
            put(
                "address",
                dialed
                    .or_else(|| field(line, "peer"))
                    .or_else(|| field(line, "addr")),
            );
        }
        ErrorClass::ConsensusHalt | ErrorClass::DuplicateSignature => {
            put("height", field(line, "height"));
        }
        _ => {}
    }
    d
}

/// One problem found in the log.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub class: ErrorClass,
    pub title: String,
    /// Lines of this class.
    pub lines: usize,
    /// 1-based line numbers of the first and last occurrence.
    pub first_line: usize,
    pub last_line: usize,
    pub example: String,
    /// Facts from the lines, the latest occurrence winning (app hashes, height, peers).
    pub details: BTreeMap<String, String>,
    /// What to do, in order.
    pub steps: Vec<String>,
    /// Other classes seen in the log that this problem causes.
    pub symptoms: Vec<Symptom>,
}

/// A class reported as a consequence of a primary problem.
#[derive(Clone, Debug, Serialize)]
pub struct Symptom {
    pub class: ErrorClass,
    pub title: String,
    pub lines: usize,
}

/// The diagnosis of a whole log.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub lines_read: usize,
    pub problems: Vec<Problem>,
    /// What `--home` shows (`log_level`, `data/snapshots/`); empty without a home.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub home_checks: Vec<super::doctor_home::HomeCheck>,
}

/// Options that fill in the steps.
#[derive(Clone, Debug, Default)]
pub struct DoctorOptions {
    /// The node's home directory, when known (`<node_home>` in steps otherwise, with a step
    /// saying where to find it).
    pub home: Option<String>,
}

/// The problems of a log given as lines, without their steps (`doctor_steps::diagnose` adds
/// them).
pub fn find_problems(lines: &[&str]) -> Diagnosis {
    let mut found: BTreeMap<ErrorClass, Problem> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(class) = classify(line) else {
            continue;
        };
        let p = found.entry(class).or_insert_with(|| Problem {
            class,
            title: class.title().into(),
            lines: 0,
            first_line: i + 1,
            last_line: i + 1,
            example: line.trim().to_string(),
            details: BTreeMap::new(),
            steps: Vec::new(),
            symptoms: Vec::new(),
        });
        p.lines += 1;
        p.last_line = i + 1;
        p.details.extend(details(class, line));
    }
    if let Some(stuck) = stuck_height(lines) {
        found.insert(ErrorClass::StuckHeight, stuck);
    }
    let app_hash = found.contains_key(&ErrorClass::AppHashMismatch);
    let mut problems = Vec::new();
    let mut symptoms = Vec::new();
    for (class, p) in found {
        if app_hash && class.is_app_hash_symptom() {
            symptoms.push(Symptom {
                class,
                title: p.title,
                lines: p.lines,
            });
        } else {
            problems.push(p);
        }
    }
    for p in &mut problems {
        if p.class == ErrorClass::AppHashMismatch {
            p.symptoms = std::mem::take(&mut symptoms);
        }
    }
    Diagnosis {
        lines_read: lines.len(),
        problems,
        home_checks: Vec::new(),
    }
}

/// Consecutive height-bearing lines at one height, at the end of the log, that make it stuck.
const STUCK_MIN_LINES: usize = 20;
/// Consensus rounds at one height that make it stuck.
const STUCK_MIN_ROUND: u64 = 3;
/// Seconds at one height that make it stuck (blocks take well under a second or two).
const STUCK_MIN_SECS: i64 = 60;

/// A stuck height: the log ends with many lines at one height, and either consensus went
/// through several rounds there or a minute passed.
fn stuck_height(lines: &[&str]) -> Option<Problem> {
    let heights: Vec<(usize, u64)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, field(l, "height")?.parse().ok()?)))
        .collect();
    let &(_, last) = heights.last()?;
    let at_last: Vec<usize> = heights
        .iter()
        .rev()
        .take_while(|(_, h)| *h == last)
        .map(|(i, _)| *i)
        .collect();
    if at_last.len() < STUCK_MIN_LINES {
        return None;
    }
    let (first, end) = (*at_last.last()?, at_last[0]);
    let max_round = at_last
        .iter()
        .filter_map(|i| field(lines[*i], "round")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let times = line_times(lines);
    let secs = match (times[first], times[end]) {
        (Some(a), Some(b)) => b - a,
        _ => 0,
    };
    if max_round < STUCK_MIN_ROUND && secs < STUCK_MIN_SECS {
        return None;
    }
    let mut details = BTreeMap::new();
    details.insert("height".into(), last.to_string());
    details.insert("maxRound".into(), max_round.to_string());
    details.insert("seconds".into(), secs.to_string());
    Some(Problem {
        class: ErrorClass::StuckHeight,
        title: ErrorClass::StuckHeight.title().into(),
        lines: at_last.len(),
        first_line: first + 1,
        last_line: end + 1,
        example: lines[end].trim().to_string(),
        details,
        steps: Vec::new(),
        symptoms: Vec::new(),
    })
}
