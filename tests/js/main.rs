//! JavaScript tracers: geth's JS tracer API in boa (run twice by scripts/test.sh: with and without the native evaluator).
//!
//! One test binary with a module per suite (cargo's layout for large suites: each
//! `tests/*.rs` used to be linked against the whole crate on its own).

#[path = "../support/offline.rs"]
mod offline;
#[path = "../support/run.rs"]
mod run;

mod geth_named;
mod js_conformance;
mod js_tracers;
