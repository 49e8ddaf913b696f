//! Wallet policy engine and agent pre-flight.
//!
//! Agents sign transactions through a wallet provider that checks each `/rpc` request against a
//! policy and signs the RFC 8785 canonical form of its body. This module answers, before the
//! request is sent, the three questions that decide its fate: is the body what the provider
//! will accept and sign ([`request`], [`jcs`]), does the policy allow it ([`engine`]), and
//! would the transaction revert on chain ([`simulate`]). [`verdict`] folds the answers into
//! one decision.

pub mod engine;
pub mod jcs;
pub mod request;
pub mod simulate;
pub mod verdict;

pub use engine::{Action, Evaluation, Policy, TxFields};
pub use verdict::{Verdict, VerdictKind};

/// Errors reading policies and requests.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A file is not JSON.
    #[error("{path} is not valid JSON: {reason}")]
    Json { path: String, reason: String },
    /// An object repeats a member name: a body a provider would refuse (or read differently).
    #[error("{path}: {reason}")]
    DuplicateName { path: String, reason: String },
    /// The policy breaks the engine's rules; `at` names the rule and condition.
    #[error("invalid policy: {at}: {reason}")]
    InvalidPolicy { at: String, reason: String },
    /// The request cannot be evaluated at all.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

/// Reads a JSON file, numbers parsed exactly as ECMAScript would (see [`jcs::parse_exact`]).
pub fn read_json(path: &str) -> Result<serde_json::Value, PolicyError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io {
        path: path.to_string(),
        source,
    })?;
    jcs::parse_exact(&text).map_err(|e| {
        let reason = e.to_string();
        if reason.starts_with("duplicate member name") {
            PolicyError::DuplicateName {
                path: path.to_string(),
                reason,
            }
        } else {
            PolicyError::Json {
                path: path.to_string(),
                reason,
            }
        }
    })
}
