//! `node status`: sync state, peers and lag from the operator interface, sampled twice.
//!
//! `catching_up: false` alone does not prove a node is healthy: a halted node reports it too.
//! Reading `/status` twice, `interval` apart, tells a moving height from a stuck one.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::NodeError;
use crate::rpc::operator::{OperatorClient, OperatorError};

/// What the node reported.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    pub url: String,
    pub node_id: Option<String>,
    pub moniker: Option<String>,
    pub network: Option<String>,
    pub version: Option<String>,
    pub latest_block_height: u64,
    pub latest_block_time: Option<String>,
    pub latest_block_hash: Option<String>,
    pub earliest_block_height: Option<u64>,
    pub catching_up: bool,
    /// Number of connected peers (`/net_info` `result.peers`).
    pub peers: usize,
    /// `/lag_status` as the node returned it; `None` when the node does not serve it.
    pub lag_status: Option<Value>,
    /// The `lag` in blocks, when `/lag_status` gives one.
    pub lag: Option<i64>,
    /// Heights of the two `/status` samples.
    pub samples: [u64; 2],
    /// Time between the two samples, in milliseconds.
    pub interval_ms: u64,
    pub height_moving: bool,
}

/// A number that CometBFT may print as a string.
fn num(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str().map(String::from)
}

fn height(client: &OperatorClient, status: &Value) -> Result<u64, NodeError> {
    num(status.pointer("/sync_info/latest_block_height"))
        .and_then(|h| u64::try_from(h).ok())
        .ok_or_else(|| {
            NodeError::from(OperatorError::BadResponse {
                url: client.redacted_url().to_string(),
                path: "/status".into(),
                reason: "it has no result.sync_info.latest_block_height".into(),
            })
        })
}

/// Samples the node: `/status`, `/net_info`, `/lag_status`, then `/status` again `interval`
/// after the first sample.
pub fn node_status(client: &OperatorClient, interval: Duration) -> Result<NodeStatus, NodeError> {
    let started = Instant::now();
    let first = client.get("/status")?;
    let h1 = height(client, &first)?;
    let net = client.get("/net_info")?;
    let peers = match net.get("peers") {
        Some(Value::Array(p)) => p.len(),
        _ => num(net.get("n_peers")).unwrap_or(0).max(0) as usize,
    };
    let lag_status = client.get_optional("/lag_status")?;
    let lag = lag_status.as_ref().and_then(|l| num(l.get("lag")));
    if let Some(rest) = interval.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    let second = client.get("/status")?;
    let h2 = height(client, &second)?;
    let sync = second.get("sync_info").cloned().unwrap_or_default();
    Ok(NodeStatus {
        url: client.redacted_url().to_string(),
        node_id: text(&second, &["node_info", "id"]),
        moniker: text(&second, &["node_info", "moniker"]),
        network: text(&second, &["node_info", "network"]),
        version: text(&second, &["node_info", "version"]),
        latest_block_height: h2,
        latest_block_time: text(&sync, &["latest_block_time"]),
        latest_block_hash: text(&sync, &["latest_block_hash"]),
        earliest_block_height: num(sync.get("earliest_block_height")).map(|h| h.max(0) as u64),
        catching_up: sync
            .get("catching_up")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        peers,
        lag_status,
        lag,
        samples: [h1, h2],
        interval_ms: started.elapsed().as_millis() as u64,
        height_moving: h2 > h1,
    })
}

/// The status for people.
pub fn render_status(s: &NodeStatus, out: &mut impl Write) -> io::Result<()> {
    let version = s
        .version
        .as_deref()
        .map(|v| format!("v{v}"))
        .unwrap_or_default();
    let ident = [
        s.moniker.as_deref(),
        s.network.as_deref(),
        Some(version.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter(|t| !t.is_empty())
    .collect::<Vec<_>>()
    .join(", ");
    writeln!(out, "node         {} ({ident})", s.url)?;
    if let Some(id) = &s.node_id {
        writeln!(out, "node id      {id}")?;
    }
    let secs = s.interval_ms as f64 / 1000.0;
    let [h1, h2] = s.samples;
    let movement = if s.height_moving {
        format!("moving (+{} in {secs:.1} s)", h2 - h1)
    } else {
        format!("NOT MOVING: {h1} → {h2} in {secs:.1} s")
    };
    writeln!(out, "height       {h2} {movement}")?;
    if let Some(t) = &s.latest_block_time {
        writeln!(out, "block time   {t}")?;
    }
    if let Some(e) = s.earliest_block_height {
        writeln!(out, "earliest     {e}")?;
    }
    writeln!(
        out,
        "catching up  {}",
        if s.catching_up { "yes" } else { "no" }
    )?;
    let peer_note = if s.peers == 0 {
        " (no peers: check bootstrap-peers and inbound port 26656)"
    } else {
        ""
    };
    writeln!(out, "peers        {}{peer_note}", s.peers)?;
    match (&s.lag_status, s.lag) {
        (Some(_), Some(lag)) => writeln!(out, "lag          {lag} blocks")?,
        (Some(v), None) => writeln!(out, "lag status   {v}")?,
        (None, _) => writeln!(out, "lag status   not served by this node (/lag_status)")?,
    }
    if !s.height_moving {
        writeln!(
            out,
            "diagnosis    the height is stuck: check the log with `chaintrace node doctor`; \
             restart, then `chaind rollback`, then restore a snapshot"
        )?;
    }
    Ok(())
}
