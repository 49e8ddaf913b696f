//! Tests against a live node: the pinned anvil (scripts/install-test-tools.sh), with loopback proxies and mock services where a test plays one.
//!
//! One test binary with a module per suite (cargo's layout for large suites: each
//! `tests/*.rs` used to be linked against the whole crate on its own).

#[path = "../support/anvil.rs"]
mod anvil;
#[path = "../support/dap.rs"]
mod dap_client;
#[path = "../support/http.rs"]
mod http;
#[path = "../support/offline.rs"]
mod offline;
#[path = "../support/proxy.rs"]
mod proxy;
#[path = "../support/run.rs"]
mod run;
#[path = "../support/serve.rs"]
mod serve_support;
#[path = "../support/tmux.rs"]
mod tmux;

mod assets;
mod ast_layouts;
mod call_inputs;
mod chain_live;
mod columnar;
mod ctor_sources;
mod dap_live;
mod dask_example;
mod edr_cases;
mod edr_suite;
mod faults;
mod forge_world;
mod gas_source_live;
mod html_report;
mod index;
mod live;
mod names_live;
mod op_anvil;
mod opcode_live;
mod ots_search;
mod ots_serve;
mod oz_sources;
mod oz_world;
mod parity_live;
mod parity_serve;
mod policy;
mod range;
mod remote;
mod serve;
mod simulate;
mod sources_live;
mod state_changes;
mod state_outputs;
mod state_spans;
mod struct_log_stream;
mod support_smoke;
mod trace_filter;
mod tracers_live;
mod uniswap_sources;
mod wallet;
mod whatif;
