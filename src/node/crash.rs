//! Crash reports: the log before a crash and the full stack trace, written to a directory.
//!
//! The context is the larger of two windows ending at the crash: the last 1,000 lines, or the
//! last 15 minutes (by the lines' timestamps), because a quiet node writes 1,000 lines in hours
//! and a busy one in seconds. The stack trace is the `panic:` line and the goroutine dump Go
//! prints after it, up to the next timestamped log line (a restart) or the end of the log.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::doctor::Diagnosis;
use super::logtime::{line_times, parse_line};
use super::NodeError;

/// Lines of context always kept before a crash.
pub const CONTEXT_LINES: usize = 1_000;
/// Seconds of context always kept before a crash.
pub const CONTEXT_SECS: i64 = 15 * 60;

/// Where the crash is and what was collected (line numbers are 1-based, ranges inclusive).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CrashReport {
    /// The `panic:` (or `fatal error:`, or consensus failure) line; `None` when the log shows no
    /// crash, and the report covers the end of the log instead.
    pub crash_line: Option<usize>,
    pub reason: Option<String>,
    pub context_first: usize,
    pub context_last: usize,
    /// Which window was larger: `"1000 lines"` or `"15 minutes"`.
    pub window: String,
    pub stack_first: Option<usize>,
    pub stack_last: Option<usize>,
    pub files: Vec<String>,
}

fn is_crash_start(line: &str) -> bool {
    line.starts_with("panic:") || line.starts_with("fatal error:")
}

/// Finds the last crash and the windows to collect.
pub fn locate(lines: &[&str]) -> CrashReport {
    let crash = lines.iter().rposition(|l| is_crash_start(l)).or_else(|| {
        lines
            .iter()
            .rposition(|l| l.to_ascii_lowercase().contains("consensus failure"))
    });
    let end = crash.unwrap_or(lines.len());
    let by_lines = end.saturating_sub(CONTEXT_LINES);
    let times = line_times(lines);
    // The crash line itself (a panic) has no stamp: its time is the last one before it.
    let crash_time = if end == 0 { None } else { times[end - 1] };
    let by_time = crash_time
        .map(|t| {
            (0..end)
                .find(|&i| times[i].is_some_and(|ti| ti >= t - CONTEXT_SECS))
                .unwrap_or(end)
        })
        .unwrap_or(end);
    let (first, window) = if by_time < by_lines {
        (by_time, "15 minutes")
    } else {
        (by_lines, "1000 lines")
    };
    let (stack_first, stack_last) = match crash {
        Some(c) => {
            let mut last = c;
            for (i, l) in lines.iter().enumerate().skip(c + 1) {
                if parse_line(l).is_some() {
                    break;
                }
                last = i;
            }
            // Trailing blank lines are not part of the trace.
            while last > c && lines[last].trim().is_empty() {
                last -= 1;
            }
            (Some(c + 1), Some(last + 1))
        }
        None => (None, None),
    };
    CrashReport {
        crash_line: crash.map(|c| c + 1),
        reason: crash.map(|c| lines[c].trim().to_string()),
        context_first: first + 1,
        context_last: end.max(first + 1).min(lines.len()),
        window: window.into(),
        stack_first,
        stack_last,
        files: Vec::new(),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, NodeError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| NodeError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(path)
}

fn join(lines: &[&str], first: usize, last: usize) -> String {
    let mut s = String::new();
    if first >= 1 && first <= last {
        for l in &lines[first - 1..last.min(lines.len())] {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// Writes `context.log` (the window before the crash), `stack.txt` (the trace) and
/// `report.json` (this report and the diagnosis) into `dir`, creating it.
pub fn write_report(
    dir: &Path,
    lines: &[&str],
    diagnosis: &Diagnosis,
) -> Result<CrashReport, NodeError> {
    std::fs::create_dir_all(dir).map_err(|source| NodeError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let mut report = locate(lines);
    let context = if report.crash_line.is_some() || !lines.is_empty() {
        join(lines, report.context_first, report.context_last)
    } else {
        String::new()
    };
    let mut files = vec![write(dir, "context.log", &context)?];
    if let (Some(a), Some(b)) = (report.stack_first, report.stack_last) {
        files.push(write(dir, "stack.txt", &join(lines, a, b))?);
    }
    let report_path = dir.join("report.json");
    files.push(report_path.clone());
    report.files = files.iter().map(|p| p.display().to_string()).collect();
    let json = serde_json::json!({ "crash": report, "diagnosis": diagnosis });
    let text = serde_json::to_string_pretty(&json).expect("report is serialisable");
    write(dir, "report.json", &(text + "\n"))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: usize, secs_per_line: usize) -> Vec<String> {
        let mut v: Vec<String> = (0..n)
            .map(|i| {
                let t = i * secs_per_line;
                format!(
                    "2024-05-01T{:02}:{:02}:{:02}Z INF committed state height={i}",
                    t / 3600,
                    (t / 60) % 60,
                    t % 60
                )
            })
            .collect();
        v.push("panic: boom".into());
        v.push(String::new());
        v.push("goroutine 1 [running]:".into());
        v.push("main.main()".into());
        v.push("\t/src/main.go:10 +0x1d".into());
        v.push(String::new());
        v.push("2024-05-01T09:00:00Z INF starting node".into());
        v
    }

    #[test]
    fn quiet_log_keeps_a_thousand_lines() {
        let owned = log(3000, 60);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let r = locate(&lines);
        assert_eq!(r.crash_line, Some(3001));
        assert_eq!((r.context_first, r.context_last), (2001, 3000));
        assert_eq!(r.window, "1000 lines");
        assert_eq!((r.stack_first, r.stack_last), (Some(3001), Some(3005)));
    }

    #[test]
    fn busy_log_keeps_fifteen_minutes() {
        let owned = log(3000, 1);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let r = locate(&lines);
        // The crash is at t = 2999 s; 15 minutes reach back to line 2100 only.
        assert_eq!((r.context_first, r.context_last), (2001, 3000));
        assert_eq!(r.window, "1000 lines");
        let owned = log(3000, 0);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let r = locate(&lines);
        assert_eq!((r.context_first, r.window.as_str()), (1, "15 minutes"));
    }
}
