//! JSON-RPC client.
//!
//! Everything chaintrace knows about a chain comes from a node over JSON-RPC, so this module owns
//! the three things that make that talk cheap and safe:
//!
//! * **Few round trips.** [`RpcClient::batch`] sends many calls in one HTTP request and matches the
//!   answers back by `id`, because replaying one transaction can need hundreds of state reads and
//!   a round trip each would dominate the run time.
//! * **Resilience.** Rate limits (HTTP 429), gateway hiccups (5xx), timeouts and dropped
//!   connections are retried with a short exponential backoff inside a bounded time budget.
//! * **No leaked secrets.** Hosted RPC URLs carry API keys in their path or query; every error
//!   message and `Debug` output goes through [`redact_url`].

pub mod client;
mod error;
pub mod operator;
pub mod transport;
mod url;

pub use client::{RpcClient, RpcStats};
pub use error::RpcError;
pub use url::redact_url;
