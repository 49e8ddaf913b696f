//! What users expect of a CLI in this field (cast, ripgrep, reth): `--rpc-url ALIAS` through
//! foundry.toml's `[rpc_endpoints]`, shell completions and a man page, `--color`, `-q`. Nothing
//! here reaches beyond 127.0.0.1.

use crate::run;
use run::{chaintrace, cmd, Run};

const HASH: &str = "0x0000000000000000000000000000000000000000000000000000000000000001";
const FIXTURE: &str = "fixtures/reverted-nested.json";

/// A loopback port nothing listens on (bound, then released).
fn unused_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A project directory with a foundry.toml, used as the working directory and as HOME (so
/// that no ~/.foundry/foundry.toml of the machine is read).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("foundry.toml"),
        r#"[profile.default]
src = "src"

[rpc_endpoints]
local = "http://127.0.0.1:${PORT_VAR}/x"
keyed = { endpoint = "http://127.0.0.1:${PORT_VAR}/v2/${SECRET_KEY}", retries = 2 }
remote = "https://rpc.example.invalid/v2/abcDEF123456789xyz"
"#,
    )
    .unwrap();
    dir
}

fn in_project(dir: &tempfile::TempDir, args: &[&str]) -> run::Cmd {
    cmd(args)
        .dir(dir.path())
        .env("HOME", dir.path().to_str().unwrap())
        .env_remove("FOUNDRY_CONFIG")
        .env_remove("FOUNDRY_PROFILE")
        .no_cache()
}

fn assert_no_panic(r: &Run) {
    assert!(!r.stderr.contains("panicked"), "panic: {}", r.stderr);
}

/// The alias resolved (placeholders and all): the error names the endpoint it tried, which
/// nothing but foundry.toml could have given.
#[test]
fn rpc_alias_resolves_through_foundry_toml() {
    let dir = project();
    let port = unused_port().to_string();
    let want = format!("cannot reach http://127.0.0.1:{port}/x");
    let by_flag = in_project(
        &dir,
        &["tx", HASH, "--rpc-url", "local", "--rpc-timeout", "2"],
    )
    .env("PORT_VAR", &port)
    .run();
    assert_eq!(by_flag.code, 2, "stderr: {}", by_flag.stderr);
    assert!(by_flag.stderr.contains(&want), "{}", by_flag.stderr);
    let by_env = in_project(&dir, &["tx", HASH, "--rpc-timeout", "2"])
        .env("PORT_VAR", &port)
        .env("ETH_RPC_URL", "local")
        .run();
    assert_eq!(by_env.code, 2, "stderr: {}", by_env.stderr);
    assert!(by_env.stderr.contains(&want), "{}", by_env.stderr);
    assert_no_panic(&by_env);
}

/// FOUNDRY_CONFIG names the file to read, from anywhere.
#[test]
fn foundry_config_overrides_where_the_file_is() {
    let dir = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let port = unused_port().to_string();
    let config = dir.path().join("foundry.toml");
    let r = in_project(
        &dir,
        &["tx", HASH, "--rpc-url", "local", "--rpc-timeout", "2"],
    )
    .dir(elsewhere.path())
    .env("HOME", elsewhere.path().to_str().unwrap())
    .env("FOUNDRY_CONFIG", config.to_str().unwrap())
    .env("PORT_VAR", &port)
    .run();
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("cannot reach http://127.0.0.1:{port}/x")),
        "{}",
        r.stderr
    );
}

/// A key from the environment put into the URL is never printed.
#[test]
fn a_resolved_alias_is_shown_redacted() {
    let dir = project();
    let port = unused_port().to_string();
    let r = in_project(
        &dir,
        &["tx", HASH, "--rpc-url", "keyed", "--rpc-timeout", "2"],
    )
    .env("PORT_VAR", &port)
    .env("SECRET_KEY", "sEcReT0123456789abcdef")
    .run();
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("cannot reach http://127.0.0.1:{port}/v2/***")),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("sEcReT"), "key leaked: {}", r.stderr);
}

#[test]
fn an_unset_variable_in_the_alias_is_bad_input_naming_it() {
    let dir = project();
    let r = in_project(&dir, &["tx", HASH, "--rpc-url", "local"])
        .env_remove("PORT_VAR")
        .run();
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr.contains("PORT_VAR") && r.stderr.contains("not set"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("[rpc_endpoints] local"), "{}", r.stderr);
    // Never tried with the placeholder left empty.
    assert!(!r.stderr.contains("127.0.0.1:/x"), "{}", r.stderr);
    assert_no_panic(&r);
}

#[test]
fn an_unknown_alias_is_bad_input_listing_the_configured_ones() {
    let dir = project();
    let r = in_project(&dir, &["tx", HASH, "--rpc-url", "mainnet"]).run();
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr.contains("configured: keyed, local, remote"),
        "{}",
        r.stderr
    );
    // Names only: no configured URL, no key.
    for secret in ["rpc.example.invalid", "abcDEF123456789xyz", "PORT_VAR"] {
        assert!(!r.stderr.contains(secret), "{secret} in {}", r.stderr);
    }
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // Outside any project, the same value says no foundry.toml was found.
    let bare = tempfile::tempdir().unwrap();
    let r = cmd(&["tx", HASH, "--rpc-url", "mainnet"])
        .dir(bare.path())
        .env("HOME", bare.path().to_str().unwrap())
        .env_remove("FOUNDRY_CONFIG")
        .run();
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("no foundry.toml"), "{}", r.stderr);
}

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
