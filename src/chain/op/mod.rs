//! OP-stack chains: hard forks ([`fork`]).

pub mod fork;

pub use fork::{OpFork, OpRules, OpSchedule};
