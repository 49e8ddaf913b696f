//! ARCHITECTURE.md's promise, checked: data flows one way, and a top-level module of the
//! library uses only those to its left in this order. Every path into another top-level module
//! counts: `crate::x`, each member of a group `crate::{x, y::z}`, and `super::` chains that climb
//! out of a top-level module to the crate root (`super::x` in `src/a/mod.rs`, `super::super::x`
//! in `src/a/b.rs`). A top-level module ORDER does not place, a file outside every module, or a
//! path to a root item that is not a module, fails here: nothing is silently skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Left to right: leaves first, the CLI last (it is the binary, outside this list).
const ORDER: &[&str] = &[
    "alloc", "geth", "redact", "rpc", "chain", "source", "js", "trace", "replay", "render",
    "names", "policy", "wallet", "node", "index", "serve", "debug",
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

// ---- No import cycle between the files of one module ----------------------------------------
//
// Inside a module, its files (and submodule directories) form a graph: `a -> b` when code in
// `a` names `b` through `super::b`, `crate::module::b` or a group holding either. That graph
// must have no cycle, so each file can be read knowing only those it uses. Code counts, not
// comments (a doc link back explains, it does not depend), and not test code (`#[cfg(test)]`
// items and the files they declare): a test may reach anything its module has.

/// `text` without comments (string and character literals kept whole, so `"http://"` stays).
fn without_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut kept = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[kept..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                kept = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[kept..i]);
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
                kept = i;
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string: r"…", r#"…"#.
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                i += 2 + hashes;
                match text[i..].find(&close) {
                    Some(end) => i += end + close.len(),
                    None => i = b.len(),
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            // A character literal ('"', '\''), not a lifetime ('a).
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 3,
            _ => i += 1,
        }
    }
    out.push_str(&text[kept.min(text.len())..]);
    out
}

/// `code` without its `#[cfg(test)]` items, and the files those items declare (`mod x;`, with
/// or without `#[path]`), relative to `src/`.
fn without_tests(code: &str, rel: &Path) -> (String, Vec<PathBuf>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut test_files = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        // The item ends at its first `;` outside braces, or at the brace closing its body.
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        let head = &item[..end];
        if head.ends_with(';') {
            if let Some(m) = head.find("mod ") {
                let name = ident(&head[m + 4..]);
                let dir = rel.parent().unwrap_or(Path::new(""));
                let stem = rel.file_stem().unwrap().to_string_lossy();
                let base = match stem.as_ref() {
                    "mod" | "lib" | "main" => dir.to_path_buf(),
                    s => dir.join(s),
                };
                match head.split_once("#[path = \"") {
                    Some((_, p)) => test_files.push(dir.join(&p[..p.find('"').unwrap()])),
                    None => {
                        test_files.push(base.join(format!("{name}.rs")));
                        test_files.push(base.join(&name));
                    }
                }
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_files)
}

/// Each path a use tree names from `s` on: `a::b::{c, d::e}` → [a b c], [a b d e].
fn use_paths(s: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = s;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut out = Vec::new();
            let (mut depth, mut start) = (0usize, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return out
                .into_iter()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .flat_map(use_paths)
                .map(|p| segs.iter().cloned().chain(p).collect())
                .collect();
        }
        let id = ident(rest);
        if id.is_empty() {
            return vec![segs];
        }
        rest = &rest[id.len()..];
        segs.push(id);
        match rest.strip_prefix("::") {
            Some(r) => rest = r.trim_start(),
            None => return vec![segs],
        }
    }
}

/// The module paths `code` (of the file whose module path is `me`) names through `crate::` and
/// `super::` paths, each cut to its longest prefix that is a module of `modules`.
fn module_refs(
    code: &str,
    me: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for start in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(i) = rest.find(start) {
            let preceded = rest[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
            rest = &rest[i..];
            if preceded {
                rest = &rest[start.len()..];
                continue;
            }
            let mut base: Vec<String> = Vec::new();
            if start == "crate::" {
                rest = &rest[start.len()..];
            } else {
                base = me.to_vec();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            for p in use_paths(rest) {
                let mut full: Vec<String> = base.iter().cloned().chain(p).collect();
                while !full.is_empty() && !modules.contains(&full) {
                    full.pop();
                }
                out.insert(full);
            }
        }
    }
    out
}

/// A cycle of `graph`, as the nodes along it (the first one repeated at the end).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut cycle = path[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

/// For each module with files of its own: `child -> child` edges, each with the files behind it.
type ModuleGraphs = BTreeMap<Vec<String>, BTreeMap<(String, String), BTreeSet<String>>>;

/// The edges between the children of each module, from the files' code.
fn file_graphs(files: &[(PathBuf, String)]) -> ModuleGraphs {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(rel, _)| module_path(rel)).collect();
    let mut test_files = Vec::new();
    let mut code = Vec::new();
    for (rel, text) in files {
        let (c, t) = without_tests(&without_comments(text), rel);
        test_files.extend(t);
        code.push((rel, c));
    }
    let mut graphs = ModuleGraphs::new();
    for (rel, c) in code {
        if test_files.iter().any(|t| rel.starts_with(t)) {
            continue;
        }
        let me = module_path(rel);
        for target in module_refs(&c, &me, &modules) {
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == 0 || common >= me.len() || common >= target.len() {
                continue; // the crate root's modules (checked above), or a parent or child
            }
            graphs
                .entry(me[..common].to_vec())
                .or_default()
                .entry((me[common].clone(), target[common].clone()))
                .or_default()
                .insert(rel.display().to_string());
        }
    }
    graphs
}

/// Each module's cycle, named with the files that make each step.
fn cycles(graphs: &ModuleGraphs) -> Vec<String> {
    let mut found = Vec::new();
    for (module, edges) in graphs {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges.keys() {
            graph.entry(a.clone()).or_default().insert(b.clone());
        }
        if let Some(cycle) = find_cycle(&graph) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    let by = &edges[&(w[0].clone(), w[1].clone())];
                    let by: Vec<&str> = by.iter().map(String::as_str).collect();
                    format!("  {} -> {} ({})", w[0], w[1], by.join(", "))
                })
                .collect();
            found.push(format!(
                "module {}: {}\n{}",
                module.join("::"),
                cycle.join(" -> "),
                steps.join("\n")
            ));
        }
    }
    found
}

#[test]
fn no_import_cycle_between_the_files_of_a_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<(PathBuf, String)> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_path_buf();
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let found = cycles(&file_graphs(&files));
    assert!(
        found.is_empty(),
        "import cycles between the files of a module:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cycle_check_reads_code_only_and_names_the_cycle() {
    let file = |p: &str, t: &str| (PathBuf::from(p), t.to_string());
    let files = vec![
        file("m/mod.rs", "pub mod a; pub mod b; pub mod c;\n#[cfg(test)]\nmod t;"),
        file("m/a.rs", "use super::{b::X, c};\nlet u = \"http://x\"; use crate::m::c::Y;"),
        // Back to `a` only in a comment, a test module and a test file: no cycle.
        file(
            "m/b.rs",
            "// super::a\n/* crate::m::a */ fn f() {}\n#[cfg(test)]\nmod tests { use super::super::a; }",
        ),
        file("m/t.rs", "use super::a;"),
        file("m/c.rs", "use super::super::m::b::Z;"),
    ];
    let graphs = file_graphs(&files);
    let edges: Vec<_> = graphs[&vec!["m".to_string()]].keys().cloned().collect();
    let want = [("a", "b"), ("a", "c"), ("c", "b")];
    let want: Vec<_> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(edges, want);
    assert!(cycles(&graphs).is_empty());
    // `b` back to `c` closes a cycle, named step by step with its files.
    let mut files = files;
    files[2].1.push_str("\nfn g() { crate::m::c::h() }");
    let found = cycles(&file_graphs(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("module m: b -> c -> b\n  b -> c (m/b.rs)\n  c -> b (m/c.rs)"),
        "{}",
        found[0]
    );
}
