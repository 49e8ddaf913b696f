//! geth's other native tracers and its JavaScript tracers by name, wherever a tracer is
//! accepted, on the live anvil scenario: `serve` answers `cast rpc debug_traceTransaction`
//! with each exactly as `tx --json` prints it; a mined transaction's flat trace carries its
//! block and position; `block` and ranges carry them per transaction; `--out` in parquet
//! writes cryo's `traces` table, read back with DuckDB; anvil's own 4byteTracer agrees.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::serve_support::Serve;
use crate::{anvil, run};

fn tx_json(url: &str, hash: &str, tracer: &str, config: Option<&str>) -> (i32, String) {
    let mut args = vec!["tx", hash, "--rpc-url", url, "--json", "--tracer", tracer];
    if let Some(c) = config {
        args.extend(["--tracer-config", c]);
    }
    let r = run::cmd(&args).no_cache().run();
    (r.code, r.stdout)
}

/// (tracer, tracerConfig) pairs every test here runs.
const TRACERS: &[(&str, Option<&str>)] = &[
    ("flatCallTracer", None),
    (
        "flatCallTracer",
        Some(r#"{"convertParityErrors":true,"includePrecompiles":true}"#),
    ),
    ("4byteTracer", None),
    (
        "muxTracer",
        Some(
            r#"{"callTracer":{"withLog":true},"4byteTracer":{},"prestateTracer":{"diffMode":true}}"#,
        ),
    ),
    ("keccak256PreimageTracer", None),
    ("noopTracer", None),
    ("bigramTracer", None),
    ("opcountTracer", None),
];

#[test]
fn serve_answers_cast_with_every_tracer_as_tx_prints_it() {
    let s = anvil::scenario();
    let serve = Serve::start(&s.url, &[]);
    let cast = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/cast");
    assert!(
        cast.is_file(),
        "{} missing: run scripts/install-test-tools.sh",
        cast.display()
    );
    let mut compared = 0;
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        for (tracer, config) in TRACERS {
            let (code, stdout) = tx_json(&s.url, &hash, tracer, *config);
            assert!(code == 0 || code == 3, "{} {tracer}: exit {code}", t.label);
            let want: Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{} {tracer}: {e}: {stdout}", t.label));
            let mut opts = json!({"tracer": tracer});
            if let Some(c) = config {
                opts["tracerConfig"] = serde_json::from_str(c).unwrap();
            }
            let out = Command::new(&cast)
                .args([
                    "rpc",
                    "--rpc-url",
                    &serve.url,
                    "debug_traceTransaction",
                    &hash,
                ])
                .arg(opts.to_string())
                .env("FOUNDRY_DISABLE_NIGHTLY_WARNING", "1")
                .output()
                .expect("run cast");
            assert!(
                out.status.success(),
                "cast {tracer}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got: Value = serde_json::from_slice(&out.stdout).expect("cast prints JSON");
            assert_eq!(got, want, "cast rpc {tracer}, {}", t.label);
            compared += 1;
        }
    }
    eprintln!("tracers_live: {compared} serve answers equal to tx --json");
}

#[test]
fn a_mined_flat_trace_names_its_block_and_position() {
    let s = anvil::scenario();
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let receipt = s.anvil.receipt(t.hash);
        let (_, stdout) = tx_json(&s.url, &hash, "flatCallTracer", None);
        let v: Value = serde_json::from_str(&stdout).unwrap();
        for e in v.as_array().unwrap() {
            assert_eq!(e["blockHash"], receipt["blockHash"], "{}", t.label);
            assert_eq!(
                json!(format!("{:#x}", e["blockNumber"].as_u64().unwrap())),
                receipt["blockNumber"],
                "{}",
                t.label
            );
            assert_eq!(e["transactionHash"], json!(hash), "{}", t.label);
            assert_eq!(
                json!(format!("{:#x}", e["transactionPosition"].as_u64().unwrap())),
                receipt["transactionIndex"],
                "{}",
                t.label
            );
        }
        // Each entry's subtraces is the number of entries one level below it.
        let entries = v.as_array().unwrap();
        for e in entries {
            let addr = e["traceAddress"].as_array().unwrap();
            let children = entries
                .iter()
                .filter(|c| {
                    let a = c["traceAddress"].as_array().unwrap();
                    a.len() == addr.len() + 1 && a[..addr.len()] == addr[..]
                })
                .count();
            assert_eq!(e["subtraces"], json!(children), "{}", t.label);
        }
    }
}

/// A simulated call has no transaction and no block: geth's debug_traceCall traces it with an
/// empty `tracers.Context` (eth/tracers/api.go `TraceCall`: `new(Context)`), so `blockHash`
/// and `transactionHash` are null, `blockNumber` and `transactionPosition` 0.
#[test]
fn a_simulated_calls_flat_trace_has_no_transaction() {
    let s = anvil::scenario();
    let to = format!("{:?}", s.addresses["Logger"]);
    let r = run::cmd(&[
        "call",
        "--to",
        &to,
        "--data",
        "0x",
        "--rpc-url",
        &s.url,
        "--tracer",
        "flatCallTracer",
        "--json",
    ])
    .no_cache()
    .run();
    assert!(r.code == 0 || r.code == 3, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let top = &v[0];
    assert_eq!(top["transactionHash"], Value::Null);
    assert_eq!(top["transactionPosition"], json!(0));
    assert_eq!(top["traceAddress"], json!([]));
    assert_eq!(top["action"]["to"], json!(to.to_lowercase()));
    assert_eq!(top["blockNumber"], json!(0));
    assert_eq!(top["blockHash"], Value::Null);
}

/// Selector keys of the calls to precompiles in anvil's own callTracer frames.
fn precompile_keys(frame: &Value, out: &mut Vec<String>) {
    let to = frame["to"].as_str().unwrap_or("");
    let input = frame["input"].as_str().unwrap_or("0x");
    let precompile = to.len() == 42 && to[2..38].chars().all(|c| c == '0');
    if frame["type"] != "CREATE" && frame["type"] != "CREATE2" && precompile && input.len() >= 10 {
        out.push(format!("{}-{}", &input[..10], (input.len() - 10) / 2));
    }
    for c in frame["calls"].as_array().into_iter().flatten() {
        precompile_keys(c, out);
    }
}

/// anvil serves geth's 4byteTracer through revm-inspectors' FourByteInspector; on every
/// scenario transaction its counts equal ours, less one known anvil difference: it also
/// counts calls to precompiles, which geth's 4byte.go skips (`if t.isPrecompiled(to)
/// return` in `OnEnter`). Those calls are taken from anvil's own callTracer frames.
#[test]
fn four_byte_counts_equal_anvils() {
    let s = anvil::scenario();
    let mut nonempty = 0;
    for t in &s.txs {
        let hash = format!("{:?}", t.hash);
        let (_, stdout) = tx_json(&s.url, &hash, "4byteTracer", None);
        let ours: Value = serde_json::from_str(&stdout).unwrap();
        let mut theirs = s.anvil.trace(t.hash, json!({"tracer": "4byteTracer"}));
        let mut extra = Vec::new();
        precompile_keys(
            &s.anvil.trace(t.hash, json!({"tracer": "callTracer"})),
            &mut extra,
        );
        let m = theirs.as_object_mut().unwrap();
        for k in extra {
            let n = m[&k].as_u64().unwrap();
            if n == 1 {
                m.remove(&k);
            } else {
                m.insert(k, json!(n - 1));
            }
        }
        assert_eq!(ours, theirs, "{}", t.label);
        nonempty += ours.as_object().is_some_and(|m| !m.is_empty()) as usize;
    }
    assert!(
        nonempty >= 5,
        "only {nonempty} transactions called a selector"
    );
}

#[test]
#[cfg(feature = "parquet")]
fn ranges_carry_new_tracers_and_parquet_has_cryos_traces_table() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let range = format!("1..{last}");
    let stream = run::cmd(&[
        "block",
        &range,
        "--rpc-url",
        &s.url,
        "--json",
        "--tracer",
        "flatCallTracer",
    ])
    .no_cache()
    .run();
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    let mut entries = 0u64;
    let mut subtraces = 0u64;
    for line in stream.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for e in v["result"].as_array().unwrap() {
            assert_eq!(e["transactionHash"], v["txHash"]);
            assert_eq!(e["blockNumber"], v["block"]);
            entries += 1;
            subtraces += e["subtraces"].as_u64().unwrap();
        }
    }
    assert!(entries as usize > s.txs.len(), "{entries} entries");

    let dir = std::env::temp_dir().join(format!("chaintrace-flat-parquet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out = run::cmd(&[
        "block",
        &range,
        "--rpc-url",
        &s.url,
        "--tracer",
        "flatCallTracer",
        "--out",
        d,
        "--format",
        "parquet",
    ])
    .no_cache()
    .run();
    assert_eq!(out.code, 0, "{}", out.stderr);

    // DuckDB, from the pinned packages of examples/dask (installed into target/dask-venv).
    let venv = crate::dask_example::pinned_venv();
    let query = format!(
        "import duckdb, json\n\
         r = duckdb.sql(\"select count(*), sum(subtraces), count(distinct transaction_hash) \
         from read_parquet('{d}/**/*.parquet')\").fetchall()[0]\n\
         cols = [c[0] for c in duckdb.sql(\"describe select * from read_parquet('{d}/**/*.parquet')\").fetchall()]\n\
         print(json.dumps([int(r[0]), int(r[1]), int(r[2]), cols]))\n"
    );
    let q = Command::new(venv.join("bin/python"))
        .arg("-c")
        .arg(query.replace("transaction_hash", "tx_hash"))
        .output()
        .unwrap();
    assert!(
        q.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&q.stderr)
    );
    let v: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(v[0], json!(entries));
    assert_eq!(v[1], json!(subtraces));
    assert_eq!(v[2], json!(s.txs.len()));
    let cols: Vec<&str> = v[3]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "action_from",
        "action_to",
        "action_value",
        "action_gas",
        "action_input",
        "action_call_type",
        "result_gas_used",
        "result_output",
        "subtraces",
        "trace_address",
        "error",
        "tx_hash",
        "tx_index",
        "block",
    ] {
        assert!(cols.contains(&c), "no column {c} in {cols:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
