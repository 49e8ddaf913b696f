//! ARCHITECTURE.md's promise, checked: data flows one way, and a top-level module of the
//! library uses only those to its left in this order. Every path into another top-level module
//! counts: `crate::x`, each member of a group `crate::{x, y::z}`, and `super::` chains that climb
//! out of a top-level module to the crate root (`super::x` in `src/a/mod.rs`, `super::super::x`
//! in `src/a/b.rs`). A top-level module ORDER does not place, a file outside every module, or a
//! path to a root item that is not a module, fails here: nothing is silently skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Left to right: leaves first, the CLI last (it is the binary, outside this list).
const ORDER: &[&str] = &[
    "alloc", "geth", "redact", "rpc", "chain", "source", "trace", "replay", "render", "names",
    "policy", "wallet", "node", "serve",
];

/// The binary's side of `src/`: it may use every library module.
const BINARY: &[&str] = &["main.rs", "cli"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first segment of each path a group `{a, b::c, d::{e, f}}` names (`s` starts after `{`).
fn group_members(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut at_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_start = true,
            c if at_start && !c.is_whitespace() => {
                at_start = false;
                if depth == 0 {
                    out.push(ident(&s[i..]));
                }
            }
            _ => {}
        }
    }
    out
}

/// The module path of a file below `src/`: `a/mod.rs` → [a], `a/b.rs` → [a, b].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// The crate-root names a file's paths reach: after `crate::` (groups included) and after a
/// `super::` chain that climbs to the root. Comments count too: a doc link to the right is a
/// dependency of the reader's understanding.
fn mentions(text: &str, module: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |after: &str| {
        if let Some(g) = after.strip_prefix('{') {
            out.extend(group_members(g));
        } else {
            out.insert(ident(after));
        }
    };
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        add(rest);
    }
    // `super` climbs one module per step; a chain that reaches the root names a root item.
    let mut rest = text;
    while let Some(i) = rest.find("super::") {
        let preceded = rest[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        rest = &rest[i..];
        if preceded {
            rest = &rest["super::".len()..];
            continue;
        }
        let mut steps = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            steps += 1;
            rest = r;
        }
        if steps == module.len() {
            add(rest);
        }
    }
    out.remove("");
    out
}

#[test]
fn every_module_uses_only_those_to_its_left() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen_modules = BTreeSet::new();
    let mut violations = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if first == "lib.rs" || BINARY.contains(&first.as_ref()) {
            continue;
        }
        let module = module_path(rel);
        let top = module.first().cloned().unwrap_or_default();
        let Some(me) = ORDER.iter().position(|m| *m == top) else {
            violations.push(format!(
                "{}: module `{top}` is not placed in ORDER (nor in ARCHITECTURE.md's flow)",
                rel.display()
            ));
            continue;
        };
        seen_modules.insert(top.clone());
        let text = std::fs::read_to_string(file).unwrap();
        for dep in mentions(&text, &module) {
            match ORDER.iter().position(|m| *m == dep) {
                Some(pos) if pos > me => {
                    violations.push(format!("{} uses crate::{dep}", rel.display()))
                }
                Some(_) => {}
                None => violations.push(format!(
                    "{} reaches crate::{dep}, which is not a module ORDER knows",
                    rel.display()
                )),
            }
        }
    }
    assert_eq!(
        seen_modules.len(),
        ORDER.len(),
        "a module in ORDER has no files: {seen_modules:?}"
    );
    assert!(
        violations.is_empty(),
        "imports against the flow:\n{}",
        violations.join("\n")
    );
}

/// lib.rs declares exactly the modules ORDER places.
#[test]
fn lib_declares_the_modules_in_order() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    let ordered: BTreeSet<String> = ORDER.iter().map(|m| m.to_string()).collect();
    assert_eq!(declared, ordered);
}

#[test]
fn the_reader_sees_groups_and_super_escapes() {
    let text = "use crate::{geth::hex, rpc::{RpcClient, RpcError}, serve};\n\
                use super::super::names::x; use super::y; // crate::trace\n";
    let in_nested = mentions(text, &["replay".into(), "mined".into()]);
    let want: BTreeSet<String> = ["geth", "rpc", "serve", "names", "trace"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(in_nested, want);
    // In src/replay/mod.rs one `super::` is already the root.
    let in_mod = mentions("use super::names::Names;", &["replay".into()]);
    assert!(in_mod.contains("names"), "{in_mod:?}");
    // Within a module, `super::` stays inside it.
    let inside = mentions("use super::y;", &["replay".into(), "mined".into()]);
    assert!(inside.is_empty(), "{inside:?}");
}
