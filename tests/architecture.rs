//! ARCHITECTURE.md's promise, checked: data flows one way, and a top-level module of the
//! library uses only those to its left in this order (read from every `crate::` path in
//! `src/`). A new import to the right fails here with the file that makes it.

use std::collections::BTreeSet;
use std::path::Path;

/// Left to right: leaves first, the CLI last (it is the binary, outside this list).
const ORDER: &[&str] = &[
    "alloc", "geth", "redact", "rpc", "chain", "source", "trace", "replay", "render", "names",
    "policy", "wallet", "node", "serve",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The `crate::<module>` names a source file mentions (comments included: a doc link to the
/// right is a dependency of the reader's understanding too).
fn mentions(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.insert(name);
    }
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
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let Some(me) = ORDER.iter().position(|m| *m == top) else {
            continue; // lib.rs, main.rs, cli/: the binary's side
        };
        seen_modules.insert(top.clone());
        let text = std::fs::read_to_string(file).unwrap();
        for dep in mentions(&text) {
            if let Some(pos) = ORDER.iter().position(|m| *m == dep) {
                if pos > me {
                    violations.push(format!("{} uses crate::{dep}", rel.display()));
                }
            }
        }
    }
    assert_eq!(
        seen_modules.len(),
        ORDER.len(),
        "a module in ORDER has no files, or src/ has a module ORDER does not place: {seen_modules:?}"
    );
    assert!(
        violations.is_empty(),
        "imports against the flow:\n{}",
        violations.join("\n")
    );
}
