//! The steps of each diagnosis, from the chain's operator documentation, and the diagnosis
//! renderer for people.

use std::io::{self, Write};

use super::doctor::DoctorOptions;
use super::doctor::{Diagnosis, ErrorClass, Problem};

/// The ordered steps for a problem, with its facts filled in.
pub fn steps(p: &Problem, opts: &DoctorOptions) -> Vec<String> {
    let mut steps = steps_for(p, opts.home.as_deref().unwrap_or(super::UNKNOWN_HOME));
    if opts.home.is_none() && steps.iter().any(|s| s.contains(super::UNKNOWN_HOME)) {
        steps.push(super::WHERE_HOME.to_string());
    }
    steps
}

/// Capitalises the first letter of a fix that starts a step.
fn sentence(s: String) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn steps_for(p: &Problem, home: &str) -> Vec<String> {
    let backup = sentence(super::backup_before_sync(home)) + ".";
    let d = |k: &str, fallback: &str| {
        p.details
            .get(k)
            .cloned()
            .unwrap_or_else(|| fallback.to_string())
    };
    let height = d("height", "<height>");
    let s = |items: &[&str]| items.iter().map(|i| i.to_string()).collect::<Vec<_>>();
    match p.class {
        ErrorClass::DuplicateSignature => s(&[
            "Stop the node at once (e.g. `systemctl stop chaind`): a validator that double-signs is slashed and jailed.",
            "Check every other machine that could run the same validator key (backups, failover hosts, old servers) and stop the duplicates.",
            "Keep exactly one signer: move config/priv_validator_key.json off the other machines, and keep priv_validator_state.json with the key on the one that stays.",
            "Only then restart the single remaining node.",
        ]),
        ErrorClass::AppHashMismatch => vec![
            "Stop the node.".into(),
            format!(
                "Keep a state dump for the developers, with the node stopped: `chaind debug dump-iavl {height}` (legacy IAVL store) or `dump-iavl -d {home}/data/committer.db -o DIR` (new store)."
            ),
            "Roll back one block: `chaind rollback`.".into(),
            format!("If the rollback fails, {}; then reset the data with {} and restore a fresh snapshot (or state sync) with the node version the network runs now (`chaind version` on a synced peer or the network's announcement) and the network's current peer configuration (bootstrap-peers / persistent_peers).", super::backup_before_sync(home), super::reset_command(home)),
            "Restart the node and watch its height (`chaintrace node status --url http://HOST:26657`) and log.".into(),
        ],
        ErrorClass::DatabaseCorrupted => vec![
            backup,
            format!("Reset the data: {}, or restore a backup instead. The reset keeps priv_validator_key.json and genesis.json but sets priv_validator_state.json back to height 0: put the backed-up {home}/data/priv_validator_state.json back before a validator signs again, or it may sign twice and be slashed.", super::reset_command(home)),
            "Resync from a snapshot or state sync, then restart.".into(),
        ],
        ErrorClass::DatabaseLocked => s(&[
            "The node is still running and holds the database lock: stop it (e.g. `systemctl stop chaind`), or kill the process if it does not stop (`pkill -9 chaind`), and check none remains (`pgrep -a chaind`); if the lock outlives the process, restart the machine.",
            "Run the rollback again with the node stopped.",
        ]),
        ErrorClass::PrivValidatorMissing => vec![
            format!(
                "Restore {home}/config/priv_validator_key.json from your backup (or the path set by priv_validator_key_file in config.toml)."
            ),
            "Fix its permissions so the user running chaind can read it (owner read/write, e.g. `chmod 600`).".into(),
            "Restart the node.".into(),
        ],
        ErrorClass::ConsensusHalt => vec![
            format!(
                "Check whether the chain halted for an upgrade at height {height}: `chaind status` and the network's upgrade announcements."
            ),
            "If an upgrade is due, install the required binary version and restart; otherwise wait for the network to resume and watch the height.".into(),
        ],
        ErrorClass::StuckHeight => vec![
            format!("Restart the node (the height stays at {height})."),
            "If it is still stuck, stop it and roll back one block: `chaind rollback`, then start it.".into(),
            format!("If that fails, {}; then reset the data with {} and restore a fresh snapshot (or state sync) with the node version the network runs now and the network's current peer configuration (bootstrap-peers / persistent_peers).", super::backup_before_sync(home), super::reset_command(home)),
        ],
        ErrorClass::Crash => vec![
            "Collect a crash report with the stack trace: `chaintrace node doctor --log FILE --crash-report DIR`.".into(),
            format!("Restart the node; if it crashes again at the same height, treat it as a stuck height: `chaind rollback`; if that fails, {}, then reset with {} and restore a fresh snapshot.", super::backup_before_sync(home), super::reset_command(home)),
            "Send the crash report to the developers with the output of `chaind version --long`.".into(),
        ],
        ErrorClass::PeerIdMismatch => {
            let want = d("expectedPeerId", "X");
            let got = d("gotPeerId", "Y");
            let host = p
                .details
                .get("peer")
                .and_then(|p| p.split_once('@'))
                .map(|(_, h)| h.to_string())
                .unwrap_or_else(|| "<host>:26656".into());
            // The id that answered proves only that some node answered there: pinning it would
            // trust whoever holds the address now.
            vec![
                format!(
                    "A peer entry pairs id {want} with {host}, where a node with id {got} answered: the entry is stale or wrong, and an id seen in the log is no proof of whom you reached."
                ),
                format!(
                    "Take this peer's <node_id>@<host>:26656 pair from the network's published peer list (its documentation or announcements) and put that in bootstrap-peers / persistent_peers (config.toml), or remove the entry; do not pin {got} because it answered. Then restart."
                ),
            ]
        }
        ErrorClass::NoPeers => s(&[
            "Check bootstrap-peers / persistent_peers in config.toml: entries must be `<node_id>@<host>:26656`.",
            "Check that inbound TCP 26656 is open (firewall, security group) and that external_address is set if the node is behind NAT.",
            "Restart the node and watch the peer count (`chaintrace node status`).",
        ]),
        ErrorClass::PeerConnectivity => {
            let addr = p
                .details
                .get("address")
                .map(|a| format!(" (last seen: {a})"))
                .unwrap_or_default();
            vec![
                format!("Peers refuse or drop connections{addr}: check the firewall and that TCP 26656 is reachable both ways."),
                "Remove peers that stay unreachable from bootstrap-peers / persistent_peers.".into(),
            ]
        }
    }
}

/// Diagnoses a log given as lines: its problems, each with its steps, and what the node home
/// shows when `opts.home` is given.
pub fn diagnose(lines: &[&str], opts: &DoctorOptions) -> Diagnosis {
    let mut d = super::doctor::find_problems(lines);
    for p in &mut d.problems {
        p.steps = steps(p, opts);
    }
    if let Some(home) = &opts.home {
        d.home_checks = super::doctor_home::home_checks(std::path::Path::new(home));
    }
    d
}

fn render_home(d: &Diagnosis, out: &mut impl Write) -> io::Result<()> {
    if d.home_checks.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "node home:")?;
    for c in &d.home_checks {
        let status = match c.status {
            super::doctor_home::HomeStatus::Ok => "ok",
            super::doctor_home::HomeStatus::Warn => "WARN",
            super::doctor_home::HomeStatus::NotChecked => "NOT CHECKED",
        };
        writeln!(out, "  {:<10} {status}: {}", c.item, c.detail)?;
    }
    Ok(())
}

/// The diagnosis for people: each problem with its facts, symptoms and numbered steps.
pub fn render_diagnosis(d: &Diagnosis, out: &mut impl Write) -> io::Result<()> {
    if d.problems.is_empty() {
        writeln!(
            out,
            "{} lines read: no known error class found",
            d.lines_read
        )?;
        return render_home(d, out);
    }
    writeln!(
        out,
        "{} lines read: {} problem(s), most urgent first",
        d.lines_read,
        d.problems.len()
    )?;
    for (n, p) in d.problems.iter().enumerate() {
        let primary = if p.class == ErrorClass::AppHashMismatch {
            " (primary)"
        } else {
            ""
        };
        writeln!(out)?;
        writeln!(
            out,
            "{}. {}{primary}: {} line(s), lines {}–{}",
            n + 1,
            p.title,
            p.lines,
            p.first_line,
            p.last_line
        )?;
        for (k, v) in &p.details {
            writeln!(out, "   {k}: {v}")?;
        }
        writeln!(out, "   e.g. {}", p.example)?;
        if !p.symptoms.is_empty() {
            let list: Vec<String> = p
                .symptoms
                .iter()
                .map(|s| format!("{} ({} line(s))", s.title, s.lines))
                .collect();
            writeln!(
                out,
                "   symptoms of this problem, no separate fix: {}",
                list.join(", ")
            )?;
        }
        writeln!(out, "   steps:")?;
        for (i, s) in p.steps.iter().enumerate() {
            writeln!(out, "     {}. {s}", i + 1)?;
        }
    }
    render_home(d, out)
}
