//! How the binary writes for people, decided once per run: colour and box-drawing tables
//! (`--color`, `NO_COLOR`) and the notes and progress bars on stderr (`-q`/`--quiet`).
//!
//! Everything that colours output or picks a table style asks [`use_color`]; every note on
//! stderr goes through the `note!` macro (cli/mod.rs), which [`quiet`] silences. Errors and
//! warnings are never silenced.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// `--color WHEN`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour and box drawing only when stdout is a terminal and NO_COLOR is unset or empty.
    #[default]
    Auto,
    /// Always, NO_COLOR or not, piped or not.
    Always,
    /// Never: plain text and ASCII tables.
    Never,
}

impl ColorChoice {
    /// The same choice for clap's own help and error messages.
    pub fn clap(self) -> clap::ColorChoice {
        match self {
            ColorChoice::Auto => clap::ColorChoice::Auto,
            ColorChoice::Always => clap::ColorChoice::Always,
            ColorChoice::Never => clap::ColorChoice::Never,
        }
    }
}

static COLOR: AtomicU8 = AtomicU8::new(0);
static QUIET: AtomicBool = AtomicBool::new(false);
static VERBOSE: AtomicBool = AtomicBool::new(false);
/// Notes that matter only when something is in doubt, held for a failed self-check.
static HELD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// A note that only explains a doubt (the fork a block without a schedule was replayed
/// under): printed now with `-v`, else held and printed by [`release_held`] when the replay
/// does not match the chain. Quiet when nothing is in doubt.
pub fn doubt(note: String) {
    if VERBOSE.load(Ordering::Relaxed) {
        eprintln!("note: {note}");
    } else if let Ok(mut h) = HELD.lock() {
        if !h.contains(&note) {
            h.push(note);
        }
    }
}

/// The held notes, printed: the replay did not match, and they may say why.
pub fn release_held() {
    let held = HELD
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default();
    for n in held {
        eprintln!("note: {n}");
    }
}

/// Records the run's global flags; called once, before the subcommand runs.
pub fn init(color: ColorChoice, quiet: bool, verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
    let c = match color {
        ColorChoice::Auto => 0,
        ColorChoice::Always => 1,
        ColorChoice::Never => 2,
    };
    COLOR.store(c, Ordering::Relaxed);
    QUIET.store(quiet, Ordering::Relaxed);
}

fn choice() -> ColorChoice {
    match COLOR.load(Ordering::Relaxed) {
        1 => ColorChoice::Always,
        2 => ColorChoice::Never,
        _ => ColorChoice::Auto,
    }
}

/// Whether `-q` was given: no notes, no progress bars.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// The decision itself, with what it depends on passed in (so it can be tested).
pub fn decide(choice: ColorChoice, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// Whether to colour human output on stdout and draw its tables with box characters (ASCII
/// otherwise): `--color`, else a terminal without NO_COLOR.
pub fn use_color() -> bool {
    decide(
        choice(),
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// The `--color` value given on a command line, read before clap parses it so that clap's own
/// help and errors follow it too. The last one wins, as clap takes it; nothing after `--`.
pub fn scan_color_flag(args: &[std::ffi::OsString]) -> Option<ColorChoice> {
    let parse = |v: &str| match v {
        "auto" => Some(ColorChoice::Auto),
        "always" => Some(ColorChoice::Always),
        "never" => Some(ColorChoice::Never),
        _ => None,
    };
    let mut found = None;
    let mut it = args.iter().skip(1).map(|a| a.to_str().unwrap_or(""));
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if let Some(v) = a.strip_prefix("--color=") {
            found = parse(v).or(found);
        } else if a == "--color" {
            found = it.next().and_then(parse).or(found);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{OsStr, OsString};

    #[test]
    fn no_color_yields_only_to_always() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(decide(ColorChoice::Auto, true, None));
        assert!(
            decide(ColorChoice::Auto, true, empty),
            "NO_COLOR empty is unset"
        );
        assert!(!decide(ColorChoice::Auto, true, set));
        assert!(!decide(ColorChoice::Auto, false, None), "piped");
        assert!(decide(ColorChoice::Always, false, set));
        assert!(!decide(ColorChoice::Never, true, None));
    }

    #[test]
    fn the_color_flag_is_read_before_parsing() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            scan_color_flag(&args(&["ct", "tx", "--color", "never"])),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            scan_color_flag(&args(&["ct", "--color=always", "tx"])),
            Some(ColorChoice::Always)
        );
        assert_eq!(
            scan_color_flag(&args(&["ct", "--color=always", "--color", "never"])),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            scan_color_flag(&args(&["ct", "--", "--color", "never"])),
            None
        );
        assert_eq!(scan_color_flag(&args(&["ct", "--color", "bogus"])), None);
    }
}
