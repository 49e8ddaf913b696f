//! What users expect of a CLI in this field (cast, ripgrep, reth): shell completions and a man
//! page, `--color`, `-q`.

use crate::run;
use run::{chaintrace, cmd};

const FIXTURE: &str = "fixtures/reverted-nested.json";

#[test]
fn completions_for_every_shell() {
    let r = chaintrace(&["completions", "bash"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    for word in [
        "chaintrace",
        "tx",
        "block",
        "serve",
        "completions",
        "--rpc-url",
    ] {
        assert!(r.stdout.contains(word), "{word} not in the bash script");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let r = chaintrace(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains("chaintrace"), "{shell}");
    }
    let bad = chaintrace(&["completions", "tcsh"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
}

#[test]
fn man_page_is_roff() {
    let r = chaintrace(&["man"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.starts_with(".TH"),
        "{}",
        &r.stdout[..80.min(r.stdout.len())]
    );
    assert!(r.stdout.contains("chaintrace"));
    assert!(r.stdout.contains("completions"));
}

/// `--color never` prints no escape and ASCII tables; `--color always` colours and draws boxes
/// even piped and under NO_COLOR (which the test environment sets).
#[test]
fn color_flag_drives_colour_and_table_style() {
    let never = chaintrace(&["tx", "--fixture", FIXTURE, "--color", "never"]);
    assert_eq!(never.code, 3, "stderr: {}", never.stderr);
    assert!(never.stdout.contains("reverted"), "{}", never.stdout);
    assert!(!never.stdout.contains('\u{1b}'), "{}", never.stdout);
    assert!(!never.stderr.contains('\u{1b}'), "{}", never.stderr);
    let always = cmd(&["--color=always", "tx", "--fixture", FIXTURE])
        .env("NO_COLOR", "1")
        .run();
    assert_eq!(always.code, 3, "stderr: {}", always.stderr);
    assert!(always.stdout.contains('\u{1b}'), "{}", always.stdout);

    let gas = |when: &str| chaintrace(&["gas", "--fixture", FIXTURE, "--color", when]).stdout;
    // The rules of the tables (the cells may hold a non-ASCII mark such as a failed frame's ✗).
    let (never, always) = (gas("never"), gas("always"));
    assert!(never.contains("+-") && !never.contains('│'), "{never}");
    assert!(always.contains('│') && !always.contains("+-"), "{always}");
    let bad = chaintrace(&["tx", "--fixture", FIXTURE, "--color", "sometimes"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
}

/// `-q` drops the notes (here the passing self-check) and keeps the result and the errors.
#[test]
fn quiet_silences_notes_not_errors() {
    let loud = chaintrace(&["tx", "--fixture", FIXTURE]);
    let note = "self-check: replay matches the receipt";
    assert!(loud.stderr.contains(note), "{}", loud.stderr);
    for args in [
        &["-q", "tx", "--fixture", FIXTURE][..],
        &["tx", "--fixture", FIXTURE, "--quiet"][..],
    ] {
        let quiet = chaintrace(args);
        assert_eq!(quiet.code, loud.code, "{}", quiet.stderr);
        assert_eq!(quiet.stdout, loud.stdout);
        assert!(!quiet.stderr.contains(note), "{}", quiet.stderr);
    }
    let error = chaintrace(&["-q", "tx", "--fixture", "does/not/exist.json"]);
    assert_eq!(error.code, 1);
    assert!(error.stderr.contains("cannot read"), "{}", error.stderr);
}
