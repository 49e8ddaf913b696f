//! chaintrace: replay EVM transactions locally and explain them with geth-exact traces.
//!
//! The flow runs one way: [`source`] (where state and transactions come from) → [`replay`]
//! (revm environment and execution) → [`trace`] (tracers shaped like geth's) → [`render`]
//! (trees, JSON). [`rpc`] and [`chain`] serve the source and the replay plan.

pub mod alloc;
pub mod chain;
pub mod geth;
pub mod names;
pub mod node;
pub mod policy;
pub mod redact;
pub mod render;
pub mod replay;
pub mod rpc;
pub mod serve;
pub mod source;
pub mod trace;
pub mod wallet;
