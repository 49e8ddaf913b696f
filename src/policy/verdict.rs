//! One pre-flight decision from the body check, the policy and the simulation, and its renderers.

use std::io::{self, Write};

use serde::Serialize;

use super::engine::Evaluation;
use super::request::RequestIssue;
use super::simulate::{NotSimulated, Simulation};

/// The overall outcome, worst first: a body the provider refuses is never evaluated further by
/// it; a policy denial means nothing is signed; a revert means gas is spent for nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    InvalidRequest,
    Denied,
    WouldRevert,
    Sign,
}

/// The pre-flight verdict, as `--json` prints it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub verdict: VerdictKind,
    /// The policy engine's decision.
    pub allowed: bool,
    pub matched_rules: Vec<String>,
    pub policy_reason: String,
    /// `None` when the transaction could not be simulated (see `simulationError`).
    pub would_revert: Option<bool>,
    pub revert_reason: Option<String>,
    pub gas_used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulation_error: Option<String>,
    /// The block whose state the simulation ran on.
    pub block: Option<u64>,
    /// The node's chain; for a message (no node is asked), the body's `caip2` if it has one.
    pub chain_id: Option<u64>,
    pub caip2: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_name: Option<String>,
    pub request_errors: Vec<RequestIssue>,
    /// Accepted, but unsafe (a chain id as a JSON integer).
    pub request_warnings: Vec<RequestIssue>,
    /// The RFC 8785 form of the body the provider signs (secret members redacted).
    pub canonical_body: String,
    pub policy: Evaluation,
}

impl Verdict {
    /// Folds the three answers into one verdict.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        chain_id: Option<u64>,
        chain_name: Option<String>,
        canonical_body: String,
        request_errors: Vec<RequestIssue>,
        request_warnings: Vec<RequestIssue>,
        policy: Evaluation,
        simulation: Option<Result<Simulation, NotSimulated>>,
    ) -> Verdict {
        // `None`: a message request, with no transaction to simulate.
        let needs_simulation = simulation.is_some();
        let (sim, simulation_error) = match simulation {
            Some(Ok(s)) => (Some(s), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, Some(NotSimulated::Message.to_string())),
        };
        let would_revert = sim.as_ref().map(|s| s.would_revert);
        let verdict = if !request_errors.is_empty() {
            VerdictKind::InvalidRequest
        } else if !policy.allowed {
            VerdictKind::Denied
        } else if needs_simulation && would_revert != Some(false) {
            VerdictKind::WouldRevert
        } else {
            VerdictKind::Sign
        };
        Verdict {
            verdict,
            allowed: policy.allowed,
            matched_rules: policy.matched_rules.clone(),
            policy_reason: policy.reason.clone(),
            would_revert,
            revert_reason: sim.as_ref().and_then(|s| s.revert_reason.clone()),
            gas_used: sim.as_ref().map(|s| s.gas_used),
            simulation_error,
            block: sim.as_ref().map(|s| s.block),
            chain_id,
            caip2: chain_id.map(|id| format!("eip155:{id}")),
            chain_name,
            request_errors,
            request_warnings,
            canonical_body,
            policy,
        }
    }
}

/// The verdict for people: the canonical body, each check with its reasons, then the decision.
pub fn render_verdict(v: &Verdict, out: &mut impl Write) -> io::Result<()> {
    let chain = match (v.chain_id, &v.chain_name) {
        (Some(id), Some(n)) => format!("eip155:{id} ({n}, chain {id})"),
        (Some(id), None) => format!("eip155:{id} (chain {id})"),
        (None, _) => "none: a message is signed without a chain or a node".into(),
    };
    writeln!(out, "chain      {chain}")?;
    writeln!(out, "canonical  {}", v.canonical_body)?;
    if v.request_errors.is_empty() {
        writeln!(
            out,
            "body       ok: the provider will sign exactly these bytes"
        )?;
    } else {
        writeln!(out, "body       {} problem(s):", v.request_errors.len())?;
        for i in &v.request_errors {
            writeln!(out, "             {}: {}", i.path, i.problem)?;
        }
    }
    for w in &v.request_warnings {
        writeln!(out, "warning    {}: {}", w.path, w.problem)?;
    }
    let decision = if v.allowed { "ALLOWED" } else { "DENIED" };
    writeln!(out, "policy     {decision}: {}", v.policy_reason)?;
    render_rules(&v.policy, "             ", out)?;
    match (v.would_revert, &v.simulation_error) {
        (Some(true), _) => writeln!(
            out,
            "simulation would REVERT at block {}: {} (gas used {})",
            v.block.unwrap_or_default(),
            v.revert_reason.as_deref().unwrap_or("no reason given"),
            v.gas_used.unwrap_or_default()
        )?,
        (Some(false), _) => writeln!(
            out,
            "simulation would succeed at block {}, gas used {}",
            v.block.unwrap_or_default(),
            v.gas_used.unwrap_or_default()
        )?,
        (None, e) => writeln!(
            out,
            "simulation not run: {}",
            e.as_deref().unwrap_or("unknown reason")
        )?,
    }
    let text = match v.verdict {
        VerdictKind::Sign if v.would_revert.is_none() => {
            "SIGN: the body is valid and the policy allows it (a message: nothing is executed)"
        }
        VerdictKind::Sign => "SIGN: the body is valid, the policy allows it and it would succeed",
        VerdictKind::WouldRevert => "DO NOT SEND: allowed, but the transaction would revert",
        VerdictKind::Denied => "DENIED: the provider's policy would refuse to sign",
        VerdictKind::InvalidRequest => "INVALID REQUEST: fix the body before sending it",
    };
    writeln!(out, "verdict    {text}")
}

/// Each rule with whether it matched and why, indented by `indent`.
pub fn render_rules(e: &Evaluation, indent: &str, out: &mut impl Write) -> io::Result<()> {
    for r in &e.rules {
        let mark = if r.matched { "matched" } else { "no match" };
        let action = match r.action {
            super::Action::Allow => "ALLOW",
            super::Action::Deny => "DENY",
        };
        writeln!(out, "{indent}{action} {:?}: {mark}", r.name)?;
        for line in &r.explanation {
            writeln!(out, "{indent}  {line}")?;
        }
    }
    Ok(())
}
