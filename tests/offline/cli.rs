//! End-to-end CLI behaviour: exit codes and one-line messages for bad input, geth JSON on stdout.

use crate::run;
use run::{chaintrace, Run};
use std::process::Command;

fn assert_one_line_error(r: &Run, code: i32, needle: &str) {
    assert_eq!(r.code, code, "stderr: {}", r.stderr);
    assert!(
        r.stdout.is_empty(),
        "stdout must stay empty on error: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains(needle),
        "stderr {:?} lacks {needle:?}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "panic: {}", r.stderr);
}

#[test]
fn malformed_hash_is_bad_input() {
    let r = chaintrace(&["tx", "0x1234", "--rpc-url", "http://127.0.0.1:1"]);
    assert_one_line_error(&r, 1, "malformed transaction hash");
}

#[test]
fn missing_fixture_file_is_bad_input() {
    let r = chaintrace(&["tx", "--fixture", "does/not/exist.json"]);
    assert_one_line_error(&r, 1, "cannot read does/not/exist.json");
}

#[test]
fn fixture_that_is_not_json_is_bad_input() {
    let r = chaintrace(&["tx", "--fixture", "Cargo.toml"]);
    assert_one_line_error(&r, 1, "is not valid JSON");
}

#[test]
fn unknown_tracer_lists_the_known_ones() {
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer",
        "fooTracer",
    ]);
    assert_one_line_error(
        &r,
        1,
        "known tracers: callTracer, flatCallTracer, prestateTracer",
    );
}

#[test]
fn bad_tracer_config_is_bad_input() {
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer-config",
        "{nope",
    ]);
    assert_one_line_error(&r, 1, "--tracer-config is not valid JSON");
}

#[test]
fn malformed_block_ref_is_bad_input() {
    let r = chaintrace(&["block", "12abc", "--rpc-url", "http://127.0.0.1:1"]);
    assert_one_line_error(&r, 1, "malformed block");
}

#[test]
fn missing_node_url_is_bad_input() {
    let r = chaintrace(&[
        "tx",
        "0x0000000000000000000000000000000000000000000000000000000000000001",
    ]);
    assert_one_line_error(&r, 1, "--rpc-url");
}

#[test]
fn unreachable_node_names_method_and_hides_credentials() {
    // Port 1 on loopback refuses connections at once.
    let r = chaintrace(&[
        "tx",
        "0x0000000000000000000000000000000000000000000000000000000000000001",
        "--rpc-url",
        "http://user:secretpw@127.0.0.1:1/v2/abcDEF123456789xyz?apikey=hunter2",
        "--rpc-timeout",
        "2",
    ]);
    assert_one_line_error(&r, 2, "eth_chainId");
    for secret in ["secretpw", "abcDEF123456789xyz", "hunter2"] {
        assert!(
            !r.stderr.contains(secret),
            "credential {secret} leaked: {}",
            r.stderr
        );
    }
}

#[test]
fn bundled_fixture_reverts_with_exit_3_and_geth_json() {
    let r = chaintrace(&["tx", "--fixture", "fixtures/reverted-nested.json", "--json"]);
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).expect("stdout is exactly one JSON value");
    assert!(v["error"].is_string(), "top frame failed: {v}");
    assert!(
        r.stderr.contains("self-check: replay matches the receipt"),
        "{}",
        r.stderr
    );
}

#[test]
fn bundled_fixture_tree_names_the_reason() {
    let r = chaintrace(&["tx", "--fixture", "fixtures/reverted-nested.json"]);
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("reverted"), "{}", r.stdout);
    assert!(
        !r.stdout.contains('\u{1b}'),
        "no colour when not a terminal"
    );
    // The fixture's contracts travel beside it (fixtures/reverted-nested.build-info.json, built
    // by scripts/build-fixture-sources.sh): the demo names the calls and the error, and says
    // where it failed. Expected places come from the .sol text.
    let at = |file: &str, needle: &str| {
        let text = std::fs::read_to_string(format!("tests/contracts/{file}")).unwrap();
        let offset = text.find(needle).unwrap();
        let line = text[..offset].matches('\n').count() + 1;
        let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
        (format!("{file}:{line}:{column}"), line)
    };
    let (revert, revert_line) = at("Helpers.sol", "Custom(code, msg.sender");
    let (inner, _) = at("Hub.sol", "reverter.failCustom(code)");
    let (outer, _) = at("Hub.sol", "this.failInner(code)");
    for want in [
        "Hub failNested(code: 48879)",
        "Reverter failCustom(code: 48879)",
        "Custom(code: 48879, who: 0xa513E6E4b8f2a923D98304ec87F64353C4D5C853, why: \"custom error\")",
        &format!("at {revert}"),
        &format!("{revert_line} | revert Custom(code, msg.sender, \"custom error\");"),
        "Solidity stack trace:",
        // The argument, read from the stack at each function's entry: the fixture's call data.
        &format!("  at Reverter.failCustom(code: 48879) ({revert}), reached by CALL"),
        &format!("  at Hub.failInner(code: 48879) ({inner}), reached by CALL"),
        &format!("  at Hub.failNested(code: 48879) ({outer})"),
    ] {
        assert!(r.stdout.contains(want), "{want:?} not in:\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("0x1d65a307"), "{}", r.stdout);
    // --no-project looks nowhere but the flags: bare selectors again.
    let bare = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--no-project",
    ]);
    assert!(
        bare.stdout.contains("custom error 0x1d65a307"),
        "{}",
        bare.stdout
    );
}

#[test]
fn divergence_from_the_receipt_exits_4_and_names_the_fields() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reverted-nested.json"
    ))
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["receipt"]["gasUsed"] = serde_json::json!("0x1");
    v["receipt"]["status"] = serde_json::json!("0x1");
    let dir = std::env::temp_dir().join(format!("chaintrace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tampered.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let r = chaintrace(&["tx", "--fixture", path.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 4, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("self-check FAILED"), "{}", r.stderr);
    assert!(
        r.stderr.contains("status: replay 0x0 but receipt 0x1"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("gasUsed: replay 52696 but receipt 1"),
        "{}",
        r.stderr
    );
    // The trace itself is still printed: a divergence is reported, never hidden.
    assert!(serde_json::from_str::<serde_json::Value>(&r.stdout).is_ok());
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn unknown_hardfork_is_bad_input() {
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--hardfork",
        "atlantis",
    ]);
    assert_one_line_error(&r, 1, "unknown hardfork \"atlantis\"");
}

#[test]
fn prestate_tracer_on_the_bundle_is_json() {
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--json",
        "--tracer",
        "prestateTracer",
        "--tracer-config",
        r#"{"diffMode":true}"#,
    ]);
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["pre"].is_object() && v["post"].is_object(), "{v}");
}

#[test]
fn tracer_config_must_be_an_object() {
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer-config",
        "[1]",
    ]);
    assert_one_line_error(
        &r,
        1,
        "invalid tracerConfig for callTracer: expected a JSON object, got [1]",
    );
}

#[test]
fn out_of_range_timeouts_are_bad_input_not_panics() {
    let script = "{result: function() { return 1; }, fault: function() {}}";
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--tracer",
        script,
        "--timeout",
        "99999999999999999999s",
    ]);
    assert_one_line_error(&r, 1, "--timeout: invalid duration");
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--rpc-timeout",
        "18446744073709551615",
    ]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("not in 1..=3600"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// `chaintrace … | head`: the reader goes away; the writer exits 0 without a panic.
#[test]
fn a_closed_stdout_pipe_exits_zero() {
    for args in [
        &["tx", "--fixture", "fixtures/reverted-nested.json"][..],
        &[
            "tx",
            "--fixture",
            "fixtures/reverted-nested.json",
            "--json",
            "--tracer",
            "opcodeTracer",
            "--tracer-config",
            r#"{"enableMemory":true}"#,
        ][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chaintrace"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("ETH_RPC_URL")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A receipt the self-check cannot read is never "matches": each unreadable field is named and
/// the exit is 2 (a source failure), the trace still printed.
#[test]
fn an_unreadable_receipt_is_not_a_passing_self_check() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reverted-nested.json"
    ))
    .unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = std::env::temp_dir().join(format!("chaintrace-receipt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, serde_json::Value, &str); 5] = [
        (
            "string",
            serde_json::json!("ok"),
            "the receipt is not a JSON object",
        ),
        (
            "empty",
            serde_json::json!({}),
            "status missing; gasUsed missing; logs missing",
        ),
        (
            "gas",
            {
                let mut r = base["receipt"].clone();
                r["gasUsed"] = serde_json::json!("lots");
                r
            },
            "gasUsed unreadable: \"lots\"",
        ),
        (
            "logs",
            {
                let mut r = base["receipt"].clone();
                r["logs"] = serde_json::json!([{"address": 7}]);
                r
            },
            "logs unreadable",
        ),
        (
            "huge",
            {
                let mut r = base["receipt"].clone();
                r["status"] = serde_json::json!("x".repeat(100_000));
                r
            },
            "status unreadable",
        ),
    ];
    for (name, receipt, needle) in cases {
        let mut v = base.clone();
        v["receipt"] = receipt;
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        let r = chaintrace(&["tx", "--fixture", path.to_str().unwrap(), "--json"]);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(!r.stderr.contains("matches"), "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains("self-check NOT DONE"),
            "{name}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(needle), "{name}: {}", r.stderr);
        assert!(
            r.stderr.len() < 2_000,
            "{name}: the message quotes too much"
        );
        assert!(serde_json::from_str::<serde_json::Value>(&r.stdout).is_ok());
    }
    std::fs::remove_dir_all(dir).ok();
}

/// Like geth: bytes after the signed transaction, or a transaction signed for another chain than
/// the fixture's, are bad input (exit 1), not replayed.
#[test]
fn lenient_fixture_inputs_are_refused() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reverted-nested.json"
    ))
    .unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = std::env::temp_dir().join(format!("chaintrace-lenient-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut trailing = base.clone();
    trailing["input"] = serde_json::json!(format!("{}00", base["input"].as_str().unwrap()));
    let mut other_chain = base.clone();
    other_chain["genesis"]["config"]["chainId"] = serde_json::json!(5);
    for (name, v, needle) in [
        ("trailing", trailing, "1 bytes follow its"),
        (
            "chain",
            other_chain,
            "signed for chain 31337, the fixture's chain is 5",
        ),
    ] {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        let r = chaintrace(&["tx", "--fixture", path.to_str().unwrap(), "--json"]);
        assert_one_line_error(&r, 1, needle);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn an_oversized_fixture_is_refused_after_reading_the_cap() {
    let dir = std::env::temp_dir().join(format!("chaintrace-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.json");
    // Sparse: 257 MiB of zeros that take no disk space.
    std::fs::File::create(&path)
        .unwrap()
        .set_len(257 << 20)
        .unwrap();
    let r = chaintrace(&["tx", "--fixture", path.to_str().unwrap()]);
    assert_one_line_error(&r, 1, "larger than 256 MiB: not a fixture or bundle");
    std::fs::remove_dir_all(dir).ok();
}

/// A fixture whose transaction loops (JUMPDEST PUSH1 0 JUMP) until its 1,000,000 gas run out:
/// about 245,000 struct-log entries, some 17 MB of JSON, past the spool's 8 MiB in memory.
fn looping_fixture() -> std::path::PathBuf {
    use alloy_consensus::{SignableTransaction, TxEnvelope, TxLegacy};
    use alloy_eips::eip2718::Encodable2718;
    use alloy_primitives::{address, TxKind, U256};
    use alloy_signer::SignerSync;
    let key = alloy_signer_local::PrivateKeySigner::from_slice(&[7u8; 32]).unwrap();
    let looper = address!("00000000000000000000000000000000000c0de0");
    let tx = TxLegacy {
        chain_id: Some(1),
        nonce: 0,
        gas_price: 10,
        gas_limit: 1_000_000,
        to: TxKind::Call(looper),
        value: U256::ZERO,
        input: Default::default(),
    };
    let sig = key.sign_hash_sync(&tx.signature_hash()).unwrap();
    let raw = TxEnvelope::from(tx.into_signed(sig)).encoded_2718();
    let fixture = serde_json::json!({
        "genesis": {
            "config": {"chainId": 1, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
                       "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0,
                       "petersburgBlock": 0, "istanbulBlock": 0, "berlinBlock": 0,
                       "londonBlock": 0},
            "alloc": {
                format!("{:?}", key.address()): {"balance": "0xde0b6b3a7640000"},
                format!("{looper:?}"): {"balance": "0x0", "code": "0x5b600056"}
            }
        },
        "context": {"number": "1", "timestamp": "1", "gasLimit": "30000000",
                    "difficulty": "1", "miner": "0x0000000000000000000000000000000000000000",
                    "baseFeePerGas": "1"},
        "input": format!("0x{}", alloy_primitives::hex::encode(raw)),
    });
    let path = std::env::temp_dir().join(format!("chaintrace-looper-{}.json", std::process::id()));
    std::fs::write(&path, fixture.to_string()).unwrap();
    path
}

/// A struct log whose temporary file cannot be written (here `ulimit -f` of 4 MiB, as a full
/// disk would) fails the command with exit 2 and the reason; it never prints a shortened log.
/// Without the limit the same trace is whole.
#[test]
fn a_struct_log_that_cannot_be_spooled_fails_the_command() {
    let fixture = looping_fixture();
    let args = [
        "tx",
        "--fixture",
        fixture.to_str().unwrap(),
        "--tracer",
        "opcodeTracer",
        "--json",
    ];
    let whole = chaintrace(&args);
    assert_eq!(whole.code, 3, "{}", whole.stderr);
    let v: serde_json::Value = serde_json::from_str(&whole.stdout).unwrap();
    let logs = v["structLogs"].as_array().unwrap();
    assert!(logs.len() > 200_000, "{}", logs.len());
    assert_eq!(logs.last().unwrap()["error"], "out of gas");

    let limited = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4096 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_chaintrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&limited.stderr);
    assert_eq!(limited.status.code(), Some(2), "{stderr}");
    assert!(limited.stdout.is_empty(), "{} bytes", limited.stdout.len());
    assert!(
        stderr
            .contains("the struct log could not be written to its temporary file: File too large"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(fixture);
}

/// Gas tables read like a modern CLI's: condensed (no rule between rows), ASCII when piped, the
/// top 10 opcodes by gas and one "others" row whose count and gas are the rest's sum (checked
/// against the --json report), numbers right-aligned; `--all` lists every opcode.
#[test]
fn gas_tables_show_the_top_rows_and_one_others_row() {
    let fx = "fixtures/reverted-nested.json";
    let json = chaintrace(&["gas", "--fixture", fx, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let ops = report["opcodes"].as_array().unwrap();
    assert!(ops.len() > 11, "{} opcodes", ops.len());
    let gas_of = |o: &serde_json::Value| o["gas"].as_u64().unwrap();
    let rest_gas: u64 = ops[10..].iter().map(gas_of).sum();
    let with_commas = |n: u64| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };

    // The opcode table of a run's output.
    let opcode_table = |stdout: &str| -> String {
        let after = stdout.split("by opcode (execution gas)\n").nth(1).unwrap();
        after.split("\n\n").next().unwrap().to_string()
    };
    let r = chaintrace(&["gas", "--fixture", fx]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let section = opcode_table(&r.stdout);
    assert!(section.is_ascii(), "piped output is ASCII:\n{section}");
    // Header, 10 opcodes, "others": 12 rows between rules, none between the body rows.
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 12, "{section}");
    assert_eq!(
        section.lines().filter(|l| l.starts_with('+')).count(),
        3,
        "{section}"
    );
    let others = rows[11];
    assert!(
        others.contains(&format!("others ({}; --all)", ops.len() - 10)),
        "{others}"
    );
    assert!(
        others.contains(&format!(" {} |", with_commas(rest_gas))),
        "{others} lacks {rest_gas}"
    );
    // The first row is the dearest opcode, its gas right-aligned against the column's rule.
    let first = &ops[0];
    assert!(
        rows[1].contains(first["op"].as_str().unwrap()),
        "{}",
        rows[1]
    );
    assert!(
        rows[1].contains(&format!(" {} |", with_commas(gas_of(first)))),
        "{}",
        rows[1]
    );

    let all = chaintrace(&["gas", "--fixture", fx, "--all"]);
    let section = opcode_table(&all.stdout);
    let rows = section.lines().filter(|l| l.starts_with('|')).count();
    assert_eq!(rows, ops.len() + 1, "{section}");
    assert!(!section.contains("others"), "{section}");
}

/// Gas by line charges only lines that ran: the bundled fixture's transaction runs
/// `Hub.failNested`, `Hub.failInner` and `Reverter.failCustom` (its call tree), so every row
/// with a line lies inside one of those functions' text or outside every function (contract-
/// level code). The optimizer shares code between functions and the map gives it one of their
/// locations (`require(x > 100, …)` of a function never called, other functions' declarations);
/// such gas is the running function's. The functions' spans are read from the sources the
/// build info carries.
#[test]
fn gas_by_line_charges_only_lines_that_ran() {
    let r = chaintrace(&[
        "gas",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--by-line",
        "--json",
    ]);
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let build: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("fixtures/reverted-nested.build-info.json").unwrap(),
    )
    .unwrap();
    let ran = ["failNested", "failInner", "failCustom"];
    // (first line, last line, name) of each function declared in `text`, by its braces.
    let functions = |text: &str| -> Vec<(usize, usize, String)> {
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            let Some(rest) = t.strip_prefix("function ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let mut depth = 0i32;
            let mut opened = false;
            for (j, m) in lines.iter().enumerate().skip(i) {
                for c in m.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth == 0) || (!opened && m.contains(';')) {
                    out.push((i + 1, j + 1, name.clone()));
                    break;
                }
            }
        }
        out
    };
    let mut checked = 0;
    for row in v["byLine"].as_array().unwrap() {
        let Some(file) = row["file"].as_str() else {
            continue;
        };
        let line = row["line"].as_u64().unwrap() as usize;
        let text = build["input"]["sources"][file]["content"].as_str().unwrap();
        let inside: Vec<String> = functions(text)
            .into_iter()
            .filter(|(a, b, _)| *a <= line && line <= *b)
            .map(|(_, _, n)| n)
            .collect();
        assert!(
            inside.is_empty() || inside.iter().any(|n| ran.contains(&n.as_str())),
            "{file}:{line} ({}) is in {inside:?}, which did not run",
            row["source"]
        );
        checked += 1;
    }
    assert!(checked >= 8, "{}", r.stdout);
}

/// `--help` shows which variable a flag reads, never the value of one that may carry a secret
/// (a provider's or a signature database's URL with user info or a key).
#[test]
fn help_never_shows_secret_carrying_env_values() {
    for (args, var) in [
        (&["tx", "--help"][..], "CHAINTRACE_SIGNATURE_DB_URL"),
        (&["wallet", "create", "--help"][..], "WALLET_API_URL"),
        (&["wallet", "rpc", "--help"][..], "WALLET_API_URL"),
    ] {
        let r = run::cmd(args)
            .env(
                var,
                "https://user:sekrit-4d4d4d@host.example/v2/key0123456789abcdef",
            )
            .run();
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains(&format!("[env: {var}]")), "{}", r.stdout);
        for s in ["sekrit", "user:", "key0123456789abcdef"] {
            assert!(!r.stdout.contains(s), "{args:?} shows {s}: {}", r.stdout);
        }
    }
}
