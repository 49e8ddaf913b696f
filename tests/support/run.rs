//! Test support: running the chaintrace binary, the one way every test does it. The
//! environment is cleared of what would make a run depend on the machine (a node URL, a cache
//! directory, explorer and wallet credentials), colour is off, and the working directory is
//! the crate root unless a test says otherwise.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a run left: exit code (-1 when killed by a signal), stdout and stderr as text.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A chaintrace invocation being set up.
pub struct Cmd {
    cmd: Command,
    stdin: Option<Vec<u8>>,
}

/// `chaintrace ARGS` with the test environment (see the module docs).
pub fn cmd(args: &[&str]) -> Cmd {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chaintrace"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    for k in MACHINE_ENV {
        cmd.env_remove(k);
    }
    Cmd { cmd, stdin: None }
}

/// The variables a test run does without: each would make a run depend on the machine.
pub const MACHINE_ENV: &[&str] = &[
    "ETH_RPC_URL",
    "CHAINTRACE_CACHE_DIR",
    "CHAINTRACE_NO_CACHE",
    "ETHERSCAN_API_KEY",
    "APP_ID",
    "APP_SECRET",
    "WALLET_AUTHORIZATION_KEY",
    "AUTHORIZATION_PRIVATE_KEY",
    "WALLET_API_URL",
    "PRIVATE_KEY",
    "CHAINTRACE_AUTH_TOKEN",
    "CHAINTRACE_LOOKUP_SIGNATURES",
    "CHAINTRACE_SIGNATURE_DB_URL",
];

/// `chaintrace ARGS`, run.
pub fn chaintrace(args: &[&str]) -> Run {
    cmd(args).run()
}

impl Cmd {
    pub fn env(mut self, key: &str, value: &str) -> Cmd {
        self.cmd.env(key, value);
        self
    }

    pub fn envs(mut self, vars: &[(&str, &str)]) -> Cmd {
        for (k, v) in vars {
            self.cmd.env(k, v);
        }
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Cmd {
        self.cmd.env_remove(key);
        self
    }

    /// The command itself, for a test that drives the process (reads part of its stdout).
    pub fn into_command(self) -> Command {
        self.cmd
    }

    /// Runs to completion, for callers that want the raw bytes (`std::process::Output`).
    pub fn output(mut self) -> std::io::Result<std::process::Output> {
        self.cmd.stdin(Stdio::null()).output()
    }

    /// Neither read nor write the on-disk cache.
    pub fn no_cache(self) -> Cmd {
        self.env("CHAINTRACE_NO_CACHE", "1")
    }

    pub fn dir(mut self, dir: &Path) -> Cmd {
        self.cmd.current_dir(dir);
        self
    }

    /// Feeds `bytes` on stdin (otherwise stdin is closed at once).
    pub fn stdin(mut self, bytes: &[u8]) -> Cmd {
        self.stdin = Some(bytes.to_vec());
        self
    }

    pub fn run(mut self) -> Run {
        let mut child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run chaintrace");
        let mut pipe = child.stdin.take().expect("stdin is piped");
        if let Some(bytes) = &self.stdin {
            // A command that exits without reading all of it closes the pipe: not our failure.
            let _ = pipe.write_all(bytes);
        }
        drop(pipe);
        let out = child.wait_with_output().expect("wait for chaintrace");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The address a spawned server (`rpc_proxy`, `chaintrace serve`) prints as its first stdout
/// line, `listening http://IP:PORT`; panics naming `what` otherwise.
pub fn listening_url(child: &mut std::process::Child, what: &str) -> String {
    use std::io::{BufRead, BufReader};
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("{what} prints its address: {e}"));
    line.trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected {what} banner {line:?}"))
        .to_string()
}
