//! What users expect of a CLI in this field (cast, ripgrep, reth): `--color`, `-q`.

use crate::run;
use run::{chaintrace, cmd};

const FIXTURE: &str = "fixtures/reverted-nested.json";

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
