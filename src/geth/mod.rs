//! geth's encodings, a leaf every other module may use: quantity and hex parsing (`hex`), JSON
//! exactly as Go's `encoding/json` writes it (`json`), opcode names (`opcode`), `UnpackRevert`'s
//! revert reasons (`revert`), and Go's RFC 3339 times as CometBFT prints them (`time`).
//! Nothing here knows about replays, tracers or renderers.

pub mod hex;
pub mod json;
pub mod opcode;
pub mod revert;
pub mod time;
