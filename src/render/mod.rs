//! Renderers: pure functions from a trace to text. Only these write to stdout.

pub mod abi;
#[cfg(feature = "parquet")]
pub mod columnar;
pub mod decoded;
pub mod decoder;
pub mod gas;
pub mod json;
pub mod revert;
pub mod signatures;
pub mod steps;
pub mod tree;
pub mod values;
