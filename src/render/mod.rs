//! Renderers: pure functions from a trace to text, written to whatever `io::Write` the caller
//! passes (the CLI passes stdout, `serve` a response buffer). The library never writes to stdout
//! itself: only `src/cli/` does.

pub mod abi;
pub mod assets;
#[cfg(feature = "parquet")]
pub mod columnar;
pub mod decoded;
pub mod decoder;
pub mod erc7562;
pub mod gas;
pub mod gas_source;
pub mod html;
pub mod json;
/// geth's `UnpackRevert` (moved to the leaf module `crate::geth`).
pub use crate::geth::revert;
pub mod selectors;
pub mod signatures;
pub mod source;
pub mod state_changes;
pub mod steps;
pub mod style;
pub mod table;
pub mod tree;
pub mod values;
