//! The documentation's examples, run, so that README.md and docs/ cannot drift from what the
//! tool prints. docs/README.md ("Examples that run") states the rules for writers; in short:
//!
//! - A ```` ```console ```` block of README.md or docs/*.md holds one or more commands, each a
//!   line `$ chaintrace …` (a line ending in `\` continues on the next), followed by the exact
//!   stdout it prints and, when it does not exit 0, a last line `# exit N`.
//! - Each command runs from the crate root under `sh -c`, the built binary first on `PATH`,
//!   `NO_COLOR=1`, stdin closed, stdout a pipe (so no colour, ASCII tables), and without the
//!   machine's node URL, cache and credentials (`run::MACHINE_ENV`). `2>&1` at the end of a
//!   command shows stderr too, in the order the tool wrote it.
//! - `[..]` in an expected line stands for any text within that line (a temporary path, a
//!   timing); a line may not be `[..]` alone.
//! - A block of any other kind that shows a `$ ` command (an example that needs a node) must
//!   begin with a `# needs: …` line saying what it needs.
//!
//! A console block without a command, a command that is not `chaintrace …`, or a `$ ` command
//! outside a console block without `# needs:` fails here: nothing is silently skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::run;

/// One command of a console block and what it must print.
#[derive(Debug)]
struct Example {
    /// `file:line` of the `$ ` line.
    at: String,
    /// The command as written after `$ `, continuation lines included.
    command: String,
    /// The stdout lines, `[..]` placeholders included.
    expected: Vec<String>,
    code: i32,
}

/// The examples of one Markdown text, or what breaks the rules (every problem, with its line).
fn examples(file: &str, text: &str) -> (Vec<Example>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - trimmed.len();
        let info = info.trim().to_string();
        let open = i + 1; // 1-based line of the opening fence
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            // Inside a list item the block is indented like its fence.
            let l = lines[i];
            let cut = l.len() - l.trim_start().len();
            body.push((i + 1, &l[cut.min(indent)..]));
            i += 1;
        }
        if i == lines.len() {
            errors.push(format!("{file}:{open}: code block never closed"));
        }
        i += 1;
        if info == "console" {
            console_block(file, open, &body, &mut out, &mut errors);
        } else if body.iter().any(|(_, l)| l.starts_with("$ ")) {
            let first = body.first().map_or("", |(_, l)| *l);
            if !first.starts_with("# needs: ") {
                errors.push(format!(
                    "{file}:{open}: a ```{info} block shows a `$ ` command but is not run: make \
                     it ```console, or begin it with `# needs: …` (what it needs that the tests lack)"
                ));
            }
        }
    }
    (out, errors)
}

fn console_block(
    file: &str,
    open: usize,
    body: &[(usize, &str)],
    out: &mut Vec<Example>,
    errors: &mut Vec<String>,
) {
    if !body.iter().any(|(_, l)| l.starts_with("$ ")) {
        errors.push(format!(
            "{file}:{open}: a ```console block without a `$ ` command"
        ));
        return;
    }
    let mut k = 0;
    while k < body.len() {
        let (n, line) = body[k];
        let Some(first) = line.strip_prefix("$ ") else {
            errors.push(format!(
                "{file}:{n}: text before the first `$ ` command of a ```console block"
            ));
            return;
        };
        if !first.starts_with("chaintrace ") {
            errors.push(format!(
                "{file}:{n}: a console command must start with `chaintrace `: {first}"
            ));
        }
        let mut command = first.to_string();
        k += 1;
        while command.ends_with('\\') && k < body.len() {
            command.push('\n');
            command.push_str(body[k].1);
            k += 1;
        }
        let mut expected = Vec::new();
        while k < body.len() && !body[k].1.starts_with("$ ") {
            expected.push(body[k].1.to_string());
            k += 1;
        }
        let mut code = 0;
        if let Some(last) = expected.last() {
            if let Some(c) = last.strip_prefix("# exit ") {
                match c.trim().parse() {
                    Ok(c) if c != 0 => code = c,
                    _ => errors.push(format!(
                        "{file}:{n}: `{last}`: write `# exit N` with N a non-zero exit code"
                    )),
                }
                expected.pop();
            }
        }
        for l in &expected {
            if l.trim() == "[..]" {
                errors.push(format!(
                    "{file}:{n}: an expected line that is `[..]` alone hides what is printed"
                ));
            }
        }
        out.push(Example {
            at: format!("{file}:{n}"),
            command,
            expected,
            code,
        });
    }
}

/// `actual` is `expected`, each `[..]` standing for any text within the line.
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

fn output_matches(expected: &[String], actual: &str) -> bool {
    let actual: Vec<&str> = if actual.is_empty() {
        Vec::new()
    } else {
        actual
            .strip_suffix('\n')
            .unwrap_or(actual)
            .split('\n')
            .collect()
    };
    expected.len() == actual.len()
        && expected
            .iter()
            .zip(&actual)
            .all(|(e, a)| line_matches(e, a))
}

/// README.md and every page of docs/, in a fixed order.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut all = vec![root.join("README.md")];
    all.extend(pages);
    all
}

fn run_example(e: &Example) -> Result<(), String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_chaintrace"));
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&e.command)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for k in run::MACHINE_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().map_err(|err| format!("{}: sh: {err}", e.at))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code().unwrap_or(-1);
    if code == e.code && output_matches(&e.expected, &stdout) {
        return Ok(());
    }
    let mut actual = stdout.trim_end_matches('\n').to_string();
    if code != 0 {
        actual.push_str(&format!("\n# exit {code}"));
    }
    Err(format!(
        "{}: `$ {}` printed something else.\n--- expected (exit {}):\n{}\n--- printed (paste-ready):\n{}\n--- stderr:\n{}",
        e.at,
        e.command,
        e.code,
        e.expected.join("\n"),
        actual,
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[test]
fn every_console_example_prints_what_the_docs_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    let mut errors = Vec::new();
    for doc in documents() {
        let name = doc.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&doc).unwrap();
        let (found, errs) = examples(&name, &text);
        errors.extend(errs);
        all.extend(found);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // The README promises a first run and five examples, all of them real.
    let in_readme = all
        .iter()
        .filter(|e| e.at.starts_with("README.md:"))
        .count();
    assert!(in_readme >= 6, "README.md has {in_readme} run examples");
    let failures: Vec<String> = all.iter().filter_map(|e| run_example(e).err()).collect();
    eprintln!("doc examples: {} run, {} failed", all.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_rules_leave_nothing_silently_unrun() {
    let (ex, errors) = examples(
        "t.md",
        "```console\n$ chaintrace tx --fixture f.json \\\n  --json\n{}\n# exit 3\n$ chaintrace gas\nok\n```\n\
         - a list item:\n\n  ```console\n  $ chaintrace node doctor\n  line [..] here\n  ```\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(ex.len(), 3);
    assert_eq!(ex[0].command, "chaintrace tx --fixture f.json \\\n  --json");
    assert_eq!(
        (ex[0].expected.clone(), ex[0].code),
        (vec!["{}".to_string()], 3)
    );
    assert_eq!(
        (ex[1].expected.clone(), ex[1].code),
        (vec!["ok".to_string()], 0)
    );
    assert_eq!(ex[2].at, "t.md:12");
    assert_eq!(ex[2].expected, ["line [..] here"]);

    for (text, why) in [
        ("```console\nno command\n```\n", "without a `$ ` command"),
        (
            "```console\nfirst\n$ chaintrace tx\n```\n",
            "text before the first",
        ),
        ("```console\n$ ls\n```\n", "must start with `chaintrace `"),
        (
            "```console\n$ chaintrace tx\n# exit 0\n```\n",
            "non-zero exit code",
        ),
        ("```console\n$ chaintrace tx\n[..]\n```\n", "`[..]` alone"),
        (
            "```text\n$ chaintrace tx 0x5c50\nout\n```\n",
            "begin it with `# needs:",
        ),
        (
            "```sh\n$ chaintrace tx 0x5c50\n```\n",
            "begin it with `# needs:",
        ),
        ("```console\n$ chaintrace tx\n", "never closed"),
    ] {
        let (_, errors) = examples("t.md", text);
        assert!(
            errors.iter().any(|e| e.contains(why)),
            "{text:?}: {errors:?}"
        );
    }
    let (ex, errors) = examples(
        "t.md",
        "```text\n# needs: a node\n$ chaintrace tx 0x5c50\nout\n```\n",
    );
    assert!(ex.is_empty() && errors.is_empty(), "{errors:?}");
}

#[test]
fn placeholders_stand_for_text_within_one_line() {
    assert!(line_matches(
        "wrote /tmp/[..]/report.html",
        "wrote /tmp/.tmpAbC/report.html"
    ));
    assert!(line_matches("[..] ms", "12 ms"));
    assert!(line_matches("a [..] b [..] c", "a x b y c"));
    assert!(!line_matches("a [..] c", "a x d"));
    assert!(!line_matches("exact", "exact "));
    assert!(
        !line_matches("ab[..]ba", "aba"),
        "prefix and suffix may not overlap"
    );
    assert!(output_matches(&["x".into(), "".into()], "x\n\n"));
    assert!(!output_matches(&["x".into()], "x\ny\n"));
    assert!(output_matches(&[], ""));
}
