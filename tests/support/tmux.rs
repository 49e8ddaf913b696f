//! A terminal for the debugger's tests: the binary run inside Debian's tmux (installed by
//! scripts/install-test-tools.sh) on a server of its own, keys sent with `send-keys`, the
//! screen read with `capture-pane -e` (text and attributes).

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// One tmux server running `chaintrace ARGS` in a 200×50 window.
pub struct Tmux {
    socket: String,
}

/// One screen row: its text, and for each character whether it is drawn reversed.
pub struct Row {
    pub text: String,
    pub reversed: Vec<bool>,
}

impl Row {
    /// Whether `needle` is on this row with every character of it reversed (highlighted).
    pub fn highlights(&self, needle: &str) -> bool {
        let chars: Vec<char> = self.text.chars().collect();
        let n: Vec<char> = needle.chars().collect();
        (0..chars.len().saturating_sub(n.len() - 1)).any(|i| {
            chars[i..i + n.len()] == n[..] && self.reversed[i..i + n.len()].iter().all(|&r| r)
        })
    }
}

fn tmux() -> &'static str {
    let bin = "/usr/bin/tmux";
    assert!(
        Path::new(bin).is_file(),
        "tmux is not installed: run scripts/install-test-tools.sh"
    );
    bin
}

impl Tmux {
    /// Starts `chaintrace ARGS` in `dir` (with `env`); the pane stays after the program ends,
    /// with its exit code printed.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Tmux {
        Tmux::start_sized(dir, args, env, (200, 50))
    }

    /// [`Tmux::start`] on a terminal of `(columns, rows)`.
    pub fn start_sized(
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        (columns, rows): (u16, u16),
    ) -> Tmux {
        let socket = format!(
            "chaintrace-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let mut line = String::new();
        for (k, v) in env {
            line.push_str(&format!("{k}={} ", quote(v)));
        }
        line.push_str(&quote(env!("CARGO_BIN_EXE_chaintrace")));
        for a in args {
            line.push(' ');
            line.push_str(&quote(a));
        }
        line.push_str("; echo \"[exited $?]\"; sleep 600");
        let ok = Command::new(tmux())
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &columns.to_string(), "-y", &rows.to_string(), "-c"])
            .arg(dir)
            .args(["sh", "-c", &line])
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux starts");
        assert!(ok.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// Sends keys as `tmux send-keys` names them (`r`, `Enter`, `Escape`), one at a time.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let ok = Command::new(tmux())
                .args(["-L", &self.socket, "send-keys", "-t", "0"])
                .arg(k)
                .status()
                .expect("tmux send-keys");
            assert!(ok.success());
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// The screen: each row's text and which characters are reversed.
    pub fn screen(&self) -> Vec<Row> {
        let out = Command::new(tmux())
            .args(["-L", &self.socket, "capture-pane", "-p", "-e", "-t", "0"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(parse_row)
            .collect()
    }

    /// The screen's text.
    pub fn text(&self) -> String {
        let rows: Vec<String> = self.screen().into_iter().map(|r| r.text).collect();
        rows.join("\n")
    }

    /// Waits until the screen shows `needle` (and the text after `after` keys, if any), up to
    /// `secs` seconds; panics with the screen otherwise.
    pub fn wait_for(&self, needle: &str, secs: u64) -> String {
        let start = Instant::now();
        loop {
            let t = self.text();
            if t.contains(needle) {
                return t;
            }
            if start.elapsed() > Duration::from_secs(secs) {
                panic!("the screen never showed {needle:?}:\n{t}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new(tmux())
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// A captured row: SGR sequences read for reverse video (7 on; 27, 0 or none off), every other
/// escape sequence dropped.
fn parse_row(raw: &str) -> Row {
    let mut text = String::new();
    let mut reversed = Vec::new();
    let mut on = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            text.push(c);
            reversed.push(on);
            continue;
        }
        if chars.peek() != Some(&'[') {
            chars.next();
            continue;
        }
        chars.next();
        let mut params = String::new();
        let mut end = ' ';
        for d in chars.by_ref() {
            if d.is_ascii_alphabetic() {
                end = d;
                break;
            }
            params.push(d);
        }
        if end != 'm' {
            continue;
        }
        if params.is_empty() {
            on = false;
        }
        // 38;5;N and 48;2;R;G;B carry numbers that are not attributes.
        let ps: Vec<&str> = params.split(';').collect();
        let mut k = 0;
        while k < ps.len() {
            match ps[k] {
                "38" | "48" | "58" => {
                    k += if ps.get(k + 1) == Some(&"5") { 3 } else { 5 };
                    continue;
                }
                "0" | "" => on = false,
                "7" => on = true,
                "27" => on = false,
                _ => {}
            }
            k += 1;
        }
    }
    Row { text, reversed }
}
