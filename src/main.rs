//! The `chaintrace` binary: parse arguments, run the library, map errors to exit codes.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    // A write past RLIMIT_FSIZE (`ulimit -f`) must fail with EFBIG and be reported, like a
    // full disk, not kill the process with SIGXFSZ and leave a shortened output behind.
    // SAFETY: setting a signal's disposition to SIG_IGN at start-up, before any thread exists.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // glibc gives each thread that allocates its own arena, up to 8 per core, and keeps what
    // they free: a range's 8 workers on 2 cores held 72 MiB for 4,000 blocks (55 MiB with one
    // arena per core), for no speed (scripts/bench-range.sh).
    // SAFETY: a malloc tunable set at start-up, before any thread exists.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        libc::mallopt(libc::M_ARENA_MAX, cores.min(i32::MAX as usize) as i32);
    }
    // `--color` is read ahead so that clap's own help and errors follow it as well.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let color = cli::output::scan_color_flag(&args).unwrap_or_default();
    let parsed = cli::Cli::command()
        .color(color.clap())
        .try_get_matches_from(&args)
        .and_then(|mut m| cli::Cli::from_arg_matches_mut(&mut m));
    let mut cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                cli::common::exit::BAD_INPUT
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if !e.message.is_empty() {
                eprintln!("error: {}", capped(&e.message));
            }
            ExitCode::from(e.code)
        }
    }
}

/// The longest error message printed: a node or a script can put megabytes into one (a JSON-RPC
/// error text, a thrown string), which would drown the terminal and logs.
const MAX_MESSAGE_CHARS: usize = 2_000;

fn capped(m: &str) -> String {
    match m.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => format!("{}… ({} bytes in all)", &m[..i], m.len()),
        None => m.to_string(),
    }
}
