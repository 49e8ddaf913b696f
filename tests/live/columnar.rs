//! `block A..B --out DIR`: partitions against the NDJSON stream of the same range on the anvil
//! scenario. ndjson partitions hold the stream's lines; parquet `calls`/`logs` rows equal the
//! callTracer JSON of the same transactions (flattened here, independently of the writer) and
//! the receipts; `--resume` rewrites only a missing partition; a killed run leaves no visible
//! half-written file; `--shard 0/2` + `--shard 1/2` is the whole set. Live anvil.

#![cfg(feature = "parquet")]

use crate::{anvil, proxy};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use alloy_primitives::U256;
use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use proxy::{chaintrace, Run};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chaintrace-columnar-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn run(url: &str, range: &str, extra: &[&str]) -> Run {
    let mut args = vec!["block", range, "--rpc-url", url];
    args.extend_from_slice(extra);
    chaintrace(&args)
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).expect("manifest.json"))
        .expect("manifest is JSON")
}

/// The files of every partition, in manifest (chain) order.
fn files(dir: &Path, table: &str) -> Vec<PathBuf> {
    manifest(dir)["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap().clone())
        .filter(|f| f["table"] == table)
        .map(|f| dir.join(f["file"].as_str().unwrap()))
        .collect()
}

/// Equal texts, or the first differing line (cut) in the message.
#[track_caller]
fn assert_same(got: &str, want: &str) {
    if got == want {
        return;
    }
    let cut = |l: Option<&str>| l.map(|l| l.chars().take(300).collect::<String>());
    let (g, w): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
    let i = (0..g.len().max(w.len()))
        .find(|&i| g.get(i) != w.get(i))
        .unwrap_or(0);
    panic!(
        "line {i} of {} / {} differs:\n got {:?}\nwant {:?}",
        g.len(),
        w.len(),
        cut(g.get(i).copied()),
        cut(w.get(i).copied())
    );
}

fn concat(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| fs::read_to_string(p).unwrap())
        .collect()
}

/// Every visible file under `dir` (not dot-prefixed), relative.
fn visible(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                stack.push(e.path());
            } else if !name.starts_with('.') {
                out.insert(
                    e.path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out
}

fn mtimes(dir: &Path) -> BTreeMap<String, SystemTime> {
    visible(dir)
        .into_iter()
        .filter(|f| f != "manifest.json")
        .map(|f| {
            let t = fs::metadata(dir.join(&f)).unwrap().modified().unwrap();
            (f, t)
        })
        .collect()
}

/// Every visible part file is listed in the manifest with its checksum.
fn assert_parts_whole(dir: &Path) {
    let unlisted = parts_listed_but(dir);
    assert!(
        unlisted.is_empty(),
        "visible but not in the manifest: {unlisted:?}"
    );
}

/// Checks every visible part file the manifest lists against its checksum, and returns the
/// visible files it does not list, with their sha256: after a kill, at most the files of the
/// one partition renamed into place and not yet recorded (the manifest is written after the
/// rename: data, then index).
fn parts_listed_but(dir: &Path) -> BTreeMap<String, String> {
    let m = manifest(dir);
    let listed: BTreeMap<String, String> = m["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap().clone())
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut unlisted = BTreeMap::new();
    for f in visible(dir) {
        if f == "manifest.json" {
            continue;
        }
        let h = format!("{:x}", Sha256::digest(fs::read(dir.join(&f)).unwrap()));
        match listed.get(&f) {
            Some(sha) => assert_eq!(&h, sha, "{f} is not the file the manifest records"),
            None => {
                unlisted.insert(f, h);
            }
        }
    }
    unlisted
}

#[test]
fn ndjson_partitions_are_the_stream_and_resume_rewrites_one() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    // Without --json the stream's callTracer records logs, as partitions always do.
    let stream = run(&s.url, &all, &[]);
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    let dir = tmp("ndjson");
    let d = dir.to_str().unwrap();
    let args = ["--out", d, "--format", "ndjson", "--partition-size", "4"];
    let out = run(&s.url, &all, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "", "--out keeps stdout empty");
    assert!(out.stderr.contains("partitions"), "{}", out.stderr);
    let parts = files(&dir, "traces");
    assert_eq!(parts.len() as u64, last / 4 + 1);
    assert_same(&concat(&parts), &stream.stdout);
    let chain = s.anvil.chain_id();
    assert!(dir
        .join(format!(
            "chain={chain}/blocks=000000000-000000003/part.ndjson"
        ))
        .is_file());
    let rows: u64 = manifest(&dir)["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap().clone())
        .map(|f| f["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(rows as usize, stream.stdout.lines().count());
    assert_parts_whole(&dir);

    // --resume with everything in place writes nothing.
    let before = mtimes(&dir);
    std::thread::sleep(Duration::from_millis(20));
    let again = run(&s.url, &all, &[&args[..], &["--resume"]].concat());
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(mtimes(&dir), before);

    // One partition deleted: only it is written again, to the same bytes.
    let victim = parts[1].clone();
    let old = fs::read(&victim).unwrap();
    fs::remove_file(&victim).unwrap();
    let again = run(&s.url, &all, &[&args[..], &["--resume"]].concat());
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("wrote 1 of 1 partitions"),
        "{}",
        again.stderr
    );
    let after = mtimes(&dir);
    let changed: Vec<_> = after
        .iter()
        .filter(|(f, t)| before.get(*f) != Some(*t))
        .map(|(f, _)| dir.join(f))
        .collect();
    assert_eq!(changed, vec![victim.clone()]);
    assert_eq!(fs::read(&victim).unwrap(), old);
    assert_parts_whole(&dir);

    // A range that grows: the partition 4..5 of a first run is replaced by 4..7.
    let grown = tmp("grown");
    let g = grown.to_str().unwrap();
    let gargs = ["--out", g, "--format", "ndjson", "--partition-size", "4"];
    assert_eq!(run(&s.url, "0..5", &gargs).code, 0);
    assert!(grown
        .join(format!("chain={chain}/blocks=000000004-000000005"))
        .is_dir());
    let r = run(&s.url, &all, &[&gargs[..], &["--resume"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("1 already finished"), "{}", r.stderr);
    assert_eq!(visible(&grown), visible(&dir));
    assert_same(&concat(&files(&grown, "traces")), &stream.stdout);
    assert!(!grown
        .join(format!("chain={chain}/blocks=000000004-000000005"))
        .exists());
    let _ = fs::remove_dir_all(&grown);

    // Another tracer in the same directory is refused.
    let other = run(
        &s.url,
        &all,
        &[
            "--out",
            d,
            "--format",
            "ndjson",
            "--partition-size",
            "4",
            "--tracer",
            "prestateTracer",
        ],
    );
    assert_eq!(other.code, 1, "{}", other.stderr);
    assert!(other.stderr.contains("another output"), "{}", other.stderr);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn shards_make_the_whole_set_and_bad_flags_are_refused() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    let whole = tmp("whole");
    let sharded = tmp("sharded");
    let args = |d: &Path| {
        vec![
            "--out".to_string(),
            d.to_str().unwrap().to_string(),
            "--format".into(),
            "ndjson".into(),
            "--partition-size".into(),
            "3".into(),
        ]
    };
    let w: Vec<String> = args(&whole);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    assert_eq!(run(&s.url, &all, &w).code, 0);
    // Both shards at once, into one directory: the manifest lock merges their entries.
    let spawn = |k: &str| {
        let mut a = vec![
            "block".to_string(),
            all.clone(),
            "--rpc-url".into(),
            s.url.clone(),
            "--shard".into(),
            k.into(),
        ];
        a.extend(args(&sharded));
        Command::new(env!("CARGO_BIN_EXE_chaintrace"))
            .args(&a)
            .env_remove("ETH_RPC_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn("0/2"), spawn("1/2"));
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    let shard0 = tmp("shard0");
    let s0: Vec<String> = args(&shard0);
    let mut s0: Vec<&str> = s0.iter().map(String::as_str).collect();
    s0.extend(["--shard", "0/2"]);
    assert_eq!(run(&s.url, &all, &s0).code, 0);
    let n0 = manifest(&shard0)["partitions"].as_array().unwrap().len();
    let n = manifest(&whole)["partitions"].as_array().unwrap().len();
    assert_eq!(n0, n.div_ceil(2), "shard 0/2 holds the even partitions");
    assert_eq!(visible(&whole), visible(&sharded));
    assert_eq!(
        manifest(&whole)["partitions"],
        manifest(&sharded)["partitions"]
    );
    assert_same(
        &concat(&files(&sharded, "traces")),
        &concat(&files(&whole, "traces")),
    );

    for (extra, needle) in [
        (vec!["--shard", "2/2"], "--shard"),
        (vec!["--shard", "x"], "--shard"),
        (vec!["--partition-size", "0"], "partition-size"),
    ] {
        let mut a = w.clone();
        a.extend(extra);
        let r = run(&s.url, &all, &a);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains(needle), "{}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    let r = chaintrace(&["block", "3", "--rpc-url", &s.url, "--out", w[1]]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("A..B"), "{}", r.stderr);
    let r = run(&s.url, &all, &["--shard", "0/2"]);
    assert_eq!(r.code, 1, "--shard needs --out: {}", r.stderr);
    // A file where the directory should be.
    let file = tmp("file");
    fs::write(&file, "x").unwrap();
    let r = run(&s.url, &all, &["--out", file.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(file.to_str().unwrap()), "{}", r.stderr);
    for d in [whole, sharded, shard0, file] {
        let _ = fs::remove_dir_all(&d);
        let _ = fs::remove_file(&d);
    }
}

#[test]
fn killed_run_leaves_no_visible_half_written_file() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    let stream = run(&s.url, &all, &[]);
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    let slow = proxy::Proxy::start(&s.url, &["--delay-ms", "40"]);
    let dir = tmp("killed");
    let d = dir.to_str().unwrap();
    let args = ["--out", d, "--format", "ndjson", "--partition-size", "2"];
    let mut child = Command::new(env!("CARGO_BIN_EXE_chaintrace"))
        .args(["block", &all, "--rpc-url", &slow.url])
        .args(args)
        .env("CHAINTRACE_JOBS", "1")
        .env_remove("ETH_RPC_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once a partition is written, while later ones are in flight.
    let t = std::time::Instant::now();
    while t.elapsed() < Duration::from_secs(30)
        && !manifest_has_partitions(&dir)
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(150));
    let finished = child.try_wait().unwrap().is_some();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!finished, "the run ended before it could be killed");
    // Whole files only: those listed match their checksums; those not yet listed (killed
    // between a partition's rename and its manifest entry) are one partition's, and are the
    // very files the resumed run records.
    let unlisted = parts_listed_but(&dir);
    let dirs: BTreeSet<&str> = unlisted
        .keys()
        .filter_map(|f| f.rsplit_once('/'))
        .map(|(d, _)| d)
        .collect();
    assert!(
        dirs.len() <= 1,
        "unlisted files in several partitions: {unlisted:?}"
    );
    let listed = files(&dir, "traces").len() as u64;
    assert!(listed < last / 2 + 1, "killed before the end");
    let again = run(&s.url, &all, &[&args[..], &["--resume"]].concat());
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_same(&concat(&files(&dir, "traces")), &stream.stdout);
    assert_parts_whole(&dir);
    let m = manifest(&dir);
    for (f, sha) in &unlisted {
        let recorded = m["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["files"].as_array().unwrap().clone())
            .find(|e| e["file"] == json!(f))
            .unwrap_or_else(|| panic!("{f} not recorded after --resume"));
        assert_eq!(
            recorded["sha256"],
            json!(sha),
            "{f} was not whole when killed"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

fn manifest_has_partitions(dir: &Path) -> bool {
    fs::read(dir.join("manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|m| m["partitions"].as_array().is_some_and(|p| !p.is_empty()))
}

fn batches(paths: &[PathBuf]) -> Vec<RecordBatch> {
    paths
        .iter()
        .flat_map(|p| {
            ParquetRecordBatchReaderBuilder::try_new(fs::File::open(p).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn col_names(b: &RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// A row as text: `None` for null.
fn cell(b: &RecordBatch, name: &str, i: usize) -> Option<String> {
    let c = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    if c.is_null(i) {
        return None;
    }
    Some(match c.data_type() {
        arrow_schema::DataType::Utf8 => c.as_string::<i32>().value(i).to_string(),
        arrow_schema::DataType::UInt64 => c.as_primitive::<UInt64Type>().value(i).to_string(),
        arrow_schema::DataType::UInt32 => c.as_primitive::<UInt32Type>().value(i).to_string(),
        t => panic!("unexpected type {t}"),
    })
}

fn rows(batches: &[RecordBatch], cols: &[&str]) -> Vec<Vec<Option<String>>> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| cols.iter().map(|c| cell(b, c, i)).collect()))
        .collect()
}

fn hex_u64(v: &Value) -> String {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16)
        .unwrap()
        .to_string()
}

fn s(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// callTracer JSON → the `calls` and `logs` rows the schema of docs/ranges.md promises.
fn flatten(
    (block, tx, hash): (u64, usize, &str),
    f: &Value,
    path: String,
    depth: u32,
    calls: &mut Vec<Vec<Option<String>>>,
    logs: &mut Vec<Vec<Option<String>>>,
) {
    let kind = f["type"].as_str().unwrap();
    let input = f["input"].as_str().unwrap_or("0x");
    calls.push(vec![
        Some(block.to_string()),
        Some(tx.to_string()),
        Some(hash.to_string()),
        Some(path.clone()),
        Some(kind.to_string()),
        s(&f["from"]),
        s(&f["to"]),
        f["value"]
            .as_str()
            .map(|v| U256::from_str(v).unwrap().to_string()),
        Some(hex_u64(&f["gas"])),
        Some(hex_u64(&f["gasUsed"])),
        (!kind.starts_with("CREATE") && input.len() >= 10).then(|| input[..10].to_string()),
        s(&f["error"]),
        s(&f["revertReason"]),
        Some(depth.to_string()),
    ]);
    for l in f["logs"].as_array().into_iter().flatten() {
        let t = l["topics"].as_array().unwrap();
        logs.push(vec![
            Some(block.to_string()),
            Some(tx.to_string()),
            Some(path.clone()),
            s(&l["address"]),
            t.first().and_then(s),
            t.get(1).and_then(s),
            t.get(2).and_then(s),
            t.get(3).and_then(s),
            s(&l["data"]),
            Some(hex_u64(&l["index"])),
        ]);
    }
    for (i, c) in f["calls"].as_array().into_iter().flatten().enumerate() {
        flatten(
            (block, tx, hash),
            c,
            format!("{path}.{i}"),
            depth + 1,
            calls,
            logs,
        );
    }
}

#[test]
fn parquet_rows_are_the_call_tracer_json() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    let cfg = ["--tracer-config", r#"{"withLog":true}"#];
    let stream = run(&s.url, &all, &[&["--json"], &cfg[..]].concat());
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    let dir = tmp("parquet");
    let d = dir.to_str().unwrap();
    let out = run(
        &s.url,
        &all,
        &[&["--out", d, "--partition-size", "5"], &cfg[..]].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert_parts_whole(&dir);

    // Expected rows from the JSON of the same transactions.
    let (mut calls, mut logs) = (Vec::new(), Vec::new());
    let mut per_block: BTreeMap<u64, usize> = BTreeMap::new();
    let mut tops = Vec::new();
    for line in stream.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let block = v["block"].as_u64().unwrap();
        let i = per_block.entry(block).or_default();
        let hash = v["txHash"].as_str().unwrap();
        flatten(
            (block, *i, hash),
            &v["result"],
            "0".into(),
            0,
            &mut calls,
            &mut logs,
        );
        tops.push((hash.to_string(), hex_u64(&v["result"]["gasUsed"])));
        *i += 1;
    }
    assert!(calls.len() > tops.len(), "the scenario has nested frames");
    assert!(!logs.is_empty(), "the scenario emits logs");

    let cb = batches(&files(&dir, "calls"));
    let call_cols = [
        "block",
        "tx_index",
        "tx_hash",
        "path",
        "type",
        "from",
        "to",
        "value",
        "gas",
        "gas_used",
        "selector",
        "error",
        "revert_reason",
        "depth",
    ];
    assert_eq!(col_names(&cb[0]), call_cols);
    assert_eq!(rows(&cb, &call_cols), calls);
    let lb = batches(&files(&dir, "logs"));
    let log_cols = [
        "block",
        "tx_index",
        "path",
        "address",
        "topic0",
        "topic1",
        "topic2",
        "topic3",
        "data",
        "log_index",
    ];
    assert_eq!(rows(&lb, &log_cols), logs);
    assert!(col_names(&lb[0]).contains(&"tx_hash".to_string()));

    // Independently of any trace: each top frame's gasUsed is its receipt's, and a reverted
    // scenario transaction has an error on its top frame.
    let top: BTreeMap<String, (String, Option<String>)> =
        rows(&cb, &["tx_hash", "path", "gas_used", "error"])
            .into_iter()
            .filter(|r| r[1].as_deref() == Some("0"))
            .map(|r| (r[0].clone().unwrap(), (r[2].clone().unwrap(), r[3].clone())))
            .collect();
    assert_eq!(top.len(), tops.len());
    for t in &s.txs {
        let hash = format!("{:#x}", t.hash);
        let receipt = s.anvil.receipt(t.hash);
        let (gas_used, error) = &top[&hash];
        assert_eq!(
            gas_used,
            &anvil::parse_u64(&receipt["gasUsed"]).to_string(),
            "{}",
            t.label
        );
        assert_eq!(error.is_none(), t.expect_success, "{}", t.label);
    }
    let rows_in_manifest: u64 = manifest(&dir)["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap().clone())
        .filter(|f| f["table"] == "calls")
        .map(|f| f["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(rows_in_manifest as usize, calls.len());

    #[cfg(feature = "js")]
    {
        // JavaScript tracers: one row per transaction, the result as JSON text.
        let js = tmp("js");
        let tracer = "{n: 0, step: function() { this.n++ }, fault: function() {}, result: function() { return {steps: this.n} }}";
        let out = run(
            &s.url,
            &all,
            &["--out", js.to_str().unwrap(), "--tracer", tracer],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let rb = batches(&files(&js, "results"));
        let results = rows(&rb, &["tx_hash", "result"]);
        assert_eq!(results.len(), tops.len());
        for r in &results {
            let v: Value = serde_json::from_str(r[1].as_deref().unwrap()).unwrap();
            assert!(v["steps"].as_u64().is_some(), "{v}");
        }
        let _ = fs::remove_dir_all(&js);
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn parquet_state_and_ops_rows_are_the_tracers_json() {
    let s = anvil::scenario();
    let last = s.anvil.block_number();
    let all = format!("0..{last}");
    let parquet = |name: &str, extra: &[&str]| {
        let dir = tmp(name);
        let mut a = vec!["--out", dir.to_str().unwrap()];
        a.extend_from_slice(extra);
        let out = run(&s.url, &all, &a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout, "");
        assert_parts_whole(&dir);
        dir
    };
    let lines = |extra: &[&str]| -> Vec<Value> {
        let mut a = vec!["--json"];
        a.extend_from_slice(extra);
        let r = run(&s.url, &all, &a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };

    // structLogger: per transaction and opcode, the steps and their summed gasCost.
    let mut want: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    let struct_logs = lines(&["--tracer", "structLogger"]);
    let n_txs = struct_logs.len();
    for v in struct_logs {
        let hash = v["txHash"].as_str().unwrap().to_string();
        for step in v["result"]["structLogs"].as_array().unwrap() {
            let e = want
                .entry((hash.clone(), step["op"].as_str().unwrap().to_string()))
                .or_default();
            e.0 += 1;
            e.1 += step["gasCost"].as_u64().unwrap();
        }
    }
    assert!(!want.is_empty());
    let dir = parquet("ops", &["--tracer", "structLogger"]);
    let ob = batches(&files(&dir, "ops"));
    assert_eq!(
        col_names(&ob[0]),
        ["block", "tx_index", "tx_hash", "op", "count", "gas"]
    );
    let got: BTreeMap<(String, String), (u64, u64)> = rows(&ob, &["tx_hash", "op", "count", "gas"])
        .into_iter()
        .map(|r| {
            let n = |i: usize| r[i].as_deref().unwrap().parse::<u64>().unwrap();
            ((r[0].clone().unwrap(), r[1].clone().unwrap()), (n(2), n(3)))
        })
        .collect();
    assert_eq!(got, want);
    let _ = fs::remove_dir_all(&dir);

    // prestateTracer: a row per account (balance, nonce) and per storage slot.
    let mut want = BTreeSet::new();
    for v in lines(&["--tracer", "prestateTracer"]) {
        let hash = v["txHash"].as_str().unwrap().to_string();
        for (a, st) in v["result"].as_object().unwrap() {
            let balance = st["balance"]
                .as_str()
                .map(|b| U256::from_str(b).unwrap().to_string());
            let nonce = st["nonce"].as_u64().unwrap_or(0).to_string();
            want.insert(vec![
                Some(hash.clone()),
                Some(a.clone()),
                balance,
                Some(nonce),
                None,
                None,
            ]);
            for (k, val) in st["storage"].as_object().into_iter().flatten() {
                want.insert(vec![
                    Some(hash.clone()),
                    Some(a.clone()),
                    None,
                    None,
                    Some(k.clone()),
                    val.as_str().map(str::to_string),
                ]);
            }
        }
    }
    let dir = parquet("state", &["--tracer", "prestateTracer"]);
    let sb = batches(&files(&dir, "state"));
    let got: BTreeSet<_> = rows(
        &sb,
        &["tx_hash", "address", "balance", "nonce", "slot", "value"],
    )
    .into_iter()
    .collect();
    assert!(
        want.iter().any(|r| r[4].is_some()),
        "the scenario touches storage"
    );
    assert_eq!(got, want);
    assert!(rows(&sb, &["side"])
        .iter()
        .all(|r| r[0].as_deref() == Some("pre")));
    let _ = fs::remove_dir_all(&dir);

    // --gas-report: ops and contracts tables, every transaction present.
    let dir = parquet("gas", &["--gas-report"]);
    let ob = batches(&files(&dir, "ops"));
    let cb = batches(&files(&dir, "contracts"));
    let txs: BTreeSet<_> = rows(&ob, &["tx_hash"]).into_iter().collect();
    let ctxs: BTreeSet<_> = rows(&cb, &["tx_hash"]).into_iter().collect();
    // Every transaction has its top frame in `contracts`; plain transfers run no opcode.
    assert_eq!(ctxs.len(), n_txs);
    assert!(txs.is_subset(&ctxs) && txs.len() > n_txs / 2);
    assert_eq!(
        col_names(&cb[0]),
        [
            "block",
            "tx_index",
            "tx_hash",
            "address",
            "frames",
            "self_gas",
            "inclusive_gas"
        ]
    );
    let _ = fs::remove_dir_all(&dir);
}
