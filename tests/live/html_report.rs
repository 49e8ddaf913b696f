//! `--html FILE`: the self-contained report.
//!
//! * offline, on the bundled fixture: every section, the revert's location and stack with the
//!   source lines, the command line, no reference to anything outside the file;
//! * `call --html` on anvil: text from the chain (a revert reason made of HTML) is escaped;
//! * the 1M-gas workload of scripts/bench-opcode.py (an arithmetic loop, ~1.04M gas) gives a
//!   report under 2 MiB;
//! * in a real browser (Debian's chromium driven by playwright-core, both installed by
//!   scripts/install-test-tools.sh): a reverting scenario transaction's report shows the
//!   reason and location, a collapsed frame opens on click, the flamegraph is there and zooms,
//!   and the page makes no request but for its own file. The screenshot and PDF are left in
//!   target/html-report/ (not committed). A browser that cannot start fails the test.

use crate::{anvil, run};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use alloy_primitives::{Address, U256};
use serde_json::{json, Value};

fn chaintrace(args: &[&str]) -> run::Run {
    run::cmd(args).no_cache().run()
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("html-report")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What in `html` (and in the flamegraph frame's `srcdoc`, unescaped) could load something from
/// elsewhere: elements that fetch (`<script src`, `<img`, `<link`, `<iframe src`, …), `@import`,
/// `fetch(`, `XMLHttpRequest`, an `href` or `url(` that is not an in-page `#` reference. The
/// browser test is the real check; this one runs everywhere.
fn outside_references(html: &str) -> Vec<String> {
    let mut docs = vec![html.to_string()];
    if let Some(i) = html.find("srcdoc=\"") {
        let rest = &html[i + 8..];
        let inner = &rest[..rest.find('"').unwrap()];
        docs.push(
            inner
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&"),
        );
    }
    let mut found = Vec::new();
    for doc in &docs {
        for needle in [
            "<script src",
            "<img",
            "<link",
            "<iframe src",
            "<object",
            "<embed",
            "<video",
            "<audio",
            "<source",
            "@import",
            "fetch(",
            "XMLHttpRequest",
            "new WebSocket",
            "navigator.sendBeacon",
        ] {
            if doc.contains(needle) {
                found.push(needle.to_string());
            }
        }
        for key in ["href=", "url("] {
            for (i, _) in doc.match_indices(key) {
                let rest = doc[i + key.len()..].trim_start_matches(['"', '\'']);
                if !rest.starts_with('#') {
                    found.push(doc[i..].chars().take(50).collect());
                }
            }
        }
    }
    found
}

#[test]
fn the_fixtures_report_has_every_section_offline() {
    let dir = out_dir("fixture");
    let html = dir.join("report.html");
    let r = chaintrace(&[
        "tx",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("report: "), "{}", r.stderr);
    let text = read(&html);
    for id in [
        "ct-check",
        "ct-revert",
        "ct-reason",
        "ct-location",
        "ct-stack",
        "ct-calls",
        "ct-assets",
        "ct-diff",
        "ct-gas",
        "ct-flame",
        "ct-cmd",
    ] {
        assert!(text.contains(&format!("id=\"{id}\"")), "no {id}");
    }
    // The reason, the location and its source line, the stack (the README's first example).
    assert!(text.contains("Custom(code: 48879"), "reason");
    assert!(text.contains("at <code>Helpers.sol:65:16</code>"));
    assert!(text.contains(
        "65 | </span>revert <mark>Custom(code, msg.sender, &quot;custom error&quot;)</mark>;"
    ));
    assert!(text.contains("Hub.failNested(code: 48879) (Hub.sol:179:9)"));
    // What was checked: the receipt of the fixture, and the native changes against the diff.
    assert!(text.contains("✓ checked</span>: the replay matches the chain&#39;s receipt"));
    assert!(text.contains("native changes (value transfers and fees) against the balances"));
    assert!(!text.contains("✗ FAILED"));
    // The command line that made it.
    assert!(text.contains("tx --fixture fixtures/reverted-nested.json --html"));
    assert_eq!(outside_references(&text), Vec::<String>::new());
    assert!(text.contains("default-src 'none'"));
    // `gas --html` writes the same report beside its tables.
    let gas_html = dir.join("gas.html");
    let r = chaintrace(&[
        "gas",
        "--fixture",
        "fixtures/reverted-nested.json",
        "--html",
        gas_html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stdout.contains("by opcode"), "{}", r.stdout);
    let gas_text = read(&gas_html);
    assert!(gas_text.contains("id=\"ct-gas-ops\"") && gas_text.contains("id=\"ct-flame\""));
    assert!(gas_text.contains("at <code>Helpers.sol:65:16</code>"));
}

/// Runtime code that reverts with `Error(reason)`.
fn reverting_code(reason: &str) -> String {
    let mut data = vec![0x08, 0xc3, 0x79, 0xa0];
    data.extend(U256::from(32).to_be_bytes::<32>());
    data.extend(U256::from(reason.len()).to_be_bytes::<32>());
    let mut r = reason.as_bytes().to_vec();
    r.resize(reason.len().div_ceil(32) * 32, 0);
    data.extend(r);
    let mut code = Vec::new();
    for (i, chunk) in data.chunks(32).enumerate() {
        let mut word = chunk.to_vec();
        word.resize(32, 0);
        code.push(0x7f); // PUSH32
        code.extend(word);
        code.push(0x61); // PUSH2 offset
        code.extend(((i * 32) as u16).to_be_bytes());
        code.push(0x52); // MSTORE
    }
    code.push(0x61); // PUSH2 length
    code.extend((data.len() as u16).to_be_bytes());
    code.extend([0x5f, 0xfd]); // PUSH0 REVERT
    format!("0x{}", alloy_primitives::hex::encode(code))
}

#[test]
fn text_from_the_chain_is_escaped() {
    let a = anvil::Anvil::start();
    let target = Address::repeat_byte(0x42);
    let evil = r#"<img src=x onerror=alert(1)><script>alert("x")</script>&"#;
    let overrides = json!({ format!("{target:?}"): {"code": reverting_code(evil)} }).to_string();
    let dir = out_dir("escape");
    let html = dir.join("report.html");
    let r = chaintrace(&[
        "call",
        "--to",
        &format!("{target:?}"),
        "--rpc-url",
        &a.url,
        "--state-override",
        &overrides,
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let text = read(&html);
    assert!(!text.contains("<img"), "unescaped HTML from the chain");
    assert!(
        !text.contains("<script>alert"),
        "unescaped HTML from the chain"
    );
    // The reason as the tree prints it (`Error("…")`, quotes escaped), then HTML-escaped.
    assert!(text.contains(
        r#"reverted: Error(&quot;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(\&quot;x\&quot;)&lt;/script&gt;&amp;&quot;)"#
    ));
    // A simulated call has no receipt: said, not claimed.
    assert!(text.contains("not checked</span>: against a receipt: a simulated call has no receipt"));
    assert_eq!(outside_references(&text), Vec::<String>::new());
}

#[test]
fn the_one_million_gas_workload_gives_a_report_under_two_mib() {
    // scripts/bench-opcode.py's workload A: 40,000 iterations of an arithmetic loop.
    let a = anvil::Anvil::start();
    let target = "0x000000000000000000000000000000000000c0de";
    let code = format!("0x62{:06x}5b600190038060045700", 40_000);
    a.rpc("anvil_setCode", json!([target, code]));
    let (hash, receipt) = a.send_and_wait(json!({"to": target, "gas": anvil::qty(2_000_000)}));
    let used = anvil::parse_u64(&receipt["gasUsed"]);
    assert!(used > 1_000_000, "gas used {used}");
    let dir = out_dir("1m-gas");
    let html = dir.join("report.html");
    let r = chaintrace(&[
        "tx",
        &format!("{hash:?}"),
        "--rpc-url",
        &a.url,
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let size = std::fs::metadata(&html).unwrap().len();
    eprintln!("report of the {used}-gas workload: {size} bytes");
    std::fs::write(dir.join("size.txt"), format!("{used} gas: {size} bytes\n")).unwrap();
    assert!(size < 2 * 1024 * 1024, "{size} bytes");
    let text = read(&html);
    assert!(text.contains("id=\"ct-gas-ops\""));
    assert!(text.contains("JUMPI"));
}

#[test]
fn a_reverting_report_reads_right_in_chromium() {
    let s = anvil::scenario();
    let tx = s.tx("revert custom error (nested, bubbled)");
    let dir = out_dir("browser");
    let html = dir.join("report.html");
    let r = chaintrace(&[
        "tx",
        &format!("{:?}", tx.hash),
        "--rpc-url",
        &s.url,
        "--abi",
        "fixtures/reverted-nested.build-info.json",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let started = Instant::now();
    let out = Command::new("node")
        .arg("tests/browser/check_report.js")
        .arg(&html)
        .arg(&dir)
        .arg("Helpers.sol:65:16")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("node runs (scripts/install-test-tools.sh installs what it needs)");
    let wall = started.elapsed();
    eprintln!("browser test wall time: {:.2} s", wall.as_secs_f64());
    std::fs::write(
        dir.join("wall-time.txt"),
        format!("{:.3} s\n", wall.as_secs_f64()),
    )
    .unwrap();
    assert!(
        out.status.success(),
        "the browser check failed (chromium must start: scripts/install-test-tools.sh):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    let c = &v["checks"];
    let yes = |k: &str| assert_eq!(c[k], json!(true), "{k}: {v}");
    yes("reasonVisible");
    assert!(
        c["reason"].as_str().unwrap().contains("Custom(code: 48879"),
        "{v}"
    );
    yes("locationVisible");
    yes("locationMatches");
    assert_eq!(c["stackEntries"], json!(3), "{v}");
    assert!(c["collapsedFrames"].as_u64().unwrap() >= 1, "{v}");
    yes("bodyHiddenBefore");
    yes("openAfterClick");
    yes("bodyVisibleAfter");
    assert!(c["flameFrames"].as_u64().unwrap() >= 3, "{v}");
    yes("unzoomHiddenBefore");
    yes("unzoomShownAfterClick");
    for id in [
        "ct-check",
        "ct-calls",
        "ct-assets",
        "ct-diff",
        "ct-gas",
        "ct-cmd",
    ] {
        yes(&format!("section_{id}"));
    }
    assert!(c["pdfBytes"].as_u64().unwrap() > 10_000, "{v}");
    // Printing opened every frame and the reader's view came back.
    assert!(c["collapsedBeforePrint"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(c["collapsedWhilePrinting"], json!(0), "{v}");
    assert_eq!(c["collapsedAfterPrint"], c["collapsedBeforePrint"], "{v}");
    // No request but the report's own file; no error, no refused load.
    assert_eq!(v["requests"], json!([v["url"]]), "{v}");
    assert_eq!(v["errors"], json!([]), "{v}");
    assert!(dir.join("report.png").is_file());
}
