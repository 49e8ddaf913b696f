//! chaintrace: replay EVM transactions locally and explain them with geth-exact traces.
//!
//! Data flows one way; a module uses only those to its left (ARCHITECTURE.md, checked by
//! tests/offline/architecture.rs):
//!
//! [`alloc`], [`geth`], [`redact`] → [`rpc`] → [`chain`] → [`source`] (where state and
//! transactions come from) → `js` (the JavaScript host, feature `js`) → [`trace`] (tracers
//! shaped like geth's) → [`replay`] (revm environment and execution) → [`render`] (trees, JSON,
//! tables) → [`names`], [`policy`], [`wallet`], [`node`], [`index`] (the address index), [`serve`] → [`debug`] (the step
//! debugger) → the binary's `cli`.

pub mod alloc;
pub mod chain;
pub mod debug;
pub mod geth;
pub mod index;
#[cfg(feature = "js")]
pub mod js;
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
