//! Renderers: pure functions from a trace to text. Only these write to stdout.

pub mod abi;
#[cfg(feature = "parquet")]
pub mod columnar;
pub mod decoded;
pub mod decoder;
pub mod gas;
pub mod json;
/// geth's `UnpackRevert` (moved to the leaf module `crate::geth`).
pub use crate::geth::revert;
pub mod signatures;
pub mod steps;
pub mod tree;
pub mod values;
