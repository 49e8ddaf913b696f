//! Test helper, not a product: writes big cache entries forever, until killed. tests/live/remote.rs
//! starts it and kills it with SIGKILL mid-write to check that the cache stays readable.
//! Usage: cache_writer DIR

use std::path::PathBuf;

use chaintrace::source::cache::{Cache, Kind};
use serde_json::json;

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: cache_writer DIR");
        std::process::exit(2);
    };
    let c = Cache::new(PathBuf::from(dir));
    c.select_chain(1, Default::default());
    let big = json!({"data": "ab".repeat(2 << 20)});
    for i in 0u64.. {
        c.put(Kind::Tx, &format!("k{}", i % 7), &big);
    }
}
