//! Timestamps of node log lines, in the formats operators meet.
//!
//! * RFC 3339 at the start of a line or in a zerolog JSON `"time"` member
//!   (`2024-05-01T12:34:56.789Z`, `2024-05-01 12:34:56`), or `"time"` as Unix seconds;
//! * Tendermint/CometBFT plain: `I[2024-05-01|12:34:56.789] …`;
//! * zerolog console (the Cosmos SDK default): `3:04PM INF …`, time of day only;
//! * journald/syslog: `May 01 12:34:56 host chaind[42]: …`, no year.
//!
//! Values are seconds on one line's own scale; formats without a date are made monotonic by
//! [`LogClock`], which adds a day whenever the time of day jumps back by more than 12 hours.
//! Only differences between lines of one log are ever used.

/// Seconds in a day.
const DAY: i64 = 86_400;

use crate::geth::time::days_from_civil;

fn digits(s: &str, at: usize, n: usize) -> Option<i64> {
    let t = s.get(at..at + n)?;
    t.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| t.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD?HH:MM:SS` at the start of `s`, where `?` is any one separator.
fn date_time(s: &str) -> Option<i64> {
    let (y, mo, d) = (digits(s, 0, 4)?, digits(s, 5, 2)?, digits(s, 8, 2)?);
    let b = s.as_bytes();
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let secs = clock(s.get(11..)?)?;
    let mut t = days_from_civil(y, mo, d) * DAY + secs;
    // A numeric offset after the seconds (and fraction): local time = UTC + offset.
    let rest = &s[19.min(s.len())..];
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if let Some(sign) = rest.chars().next().filter(|c| *c == '+' || *c == '-') {
        if let (Some(h), Some(m)) = (digits(rest, 1, 2), digits(rest, 4, 2)) {
            let off = h * 3600 + m * 60;
            t -= if sign == '+' { off } else { -off };
        }
    }
    Some(t)
}

/// `HH:MM:SS` at the start of `s`.
fn clock(s: &str) -> Option<i64> {
    let (h, m, sec) = (digits(s, 0, 2)?, digits(s, 3, 2)?, digits(s, 6, 2)?);
    (s.as_bytes().get(2) == Some(&b':') && s.as_bytes().get(5) == Some(&b':'))
        .then_some(h * 3600 + m * 60 + sec)
}

/// zerolog's kitchen time `3:04PM` at the start of `s`: seconds into the day.
fn kitchen(s: &str) -> Option<i64> {
    let colon = s.find(':').filter(|c| *c == 1 || *c == 2)?;
    let h = digits(s, 0, colon)?;
    let m = digits(s, colon + 1, 2)?;
    let ampm = s.get(colon + 3..colon + 5)?;
    let h = match ampm {
        "AM" if h == 12 => 0,
        "AM" => h,
        "PM" if h == 12 => 12,
        "PM" => h + 12,
        _ => return None,
    };
    (h < 24 && m < 60).then_some(h * 3600 + m * 60)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// syslog `Mon DD HH:MM:SS`, placed in a leap year so that Feb 29 exists.
fn syslog(s: &str) -> Option<i64> {
    let m = MONTHS.iter().position(|m| s.starts_with(m))? as i64 + 1;
    let day = s.get(4..6)?.trim().parse::<i64>().ok()?;
    let secs = clock(s.get(7..)?)?;
    Some(days_from_civil(2000, m, day) * DAY + secs)
}

/// A timestamp read from one line, with whether it carries a date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// Seconds since the Unix epoch (or a fixed year for syslog).
    Dated(i64),
    /// Seconds into an unknown day.
    TimeOfDay(i64),
}

/// The timestamp of `line`, if it has one in a known format.
pub fn parse_line(line: &str) -> Option<Stamp> {
    let t = line.trim_start();
    if let Some(v) = date_time(t) {
        return Some(Stamp::Dated(v));
    }
    // I[2024-05-01|12:34:56.789]
    if t.len() > 2 && t.as_bytes()[1] == b'[' && t.as_bytes()[0].is_ascii_alphabetic() {
        if let Some(v) = date_time(&t[2..]) {
            return Some(Stamp::Dated(v));
        }
    }
    if let Some(v) = kitchen(t) {
        return Some(Stamp::TimeOfDay(v));
    }
    if let Some(v) = syslog(t) {
        return Some(Stamp::Dated(v));
    }
    if t.starts_with('{') {
        if let Some(i) = t.find("\"time\":") {
            let rest = t[i + 7..].trim_start();
            if let Some(s) = rest.strip_prefix('"') {
                return date_time(s).map(Stamp::Dated);
            }
            let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            // zerolog's TimeFieldFormat may be Unix seconds or milliseconds.
            return n
                .parse::<i64>()
                .ok()
                .map(|v| Stamp::Dated(if v > 100_000_000_000 { v / 1000 } else { v }));
        }
    }
    None
}

/// Turns per-line stamps into one monotonic scale across a log.
#[derive(Clone, Debug, Default)]
pub struct LogClock {
    last_time_of_day: Option<i64>,
    days: i64,
}

impl LogClock {
    /// The time of `line` on the log's scale, if it has a timestamp.
    pub fn read(&mut self, line: &str) -> Option<i64> {
        match parse_line(line)? {
            Stamp::Dated(v) => Some(v),
            Stamp::TimeOfDay(v) => {
                if let Some(last) = self.last_time_of_day {
                    if v + DAY / 2 < last {
                        self.days += 1;
                    }
                }
                self.last_time_of_day = Some(v);
                Some(self.days * DAY + v)
            }
        }
    }
}

/// The time of every line: its own stamp, or the last one before it (continuation lines and
/// stack traces carry none).
pub fn line_times(lines: &[&str]) -> Vec<Option<i64>> {
    let mut clock = LogClock::default();
    let mut last = None;
    lines
        .iter()
        .map(|l| {
            if let Some(t) = clock.read(l) {
                last = Some(t);
            }
            last
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_format_is_read() {
        let base = days_from_civil(2024, 5, 1) * DAY + 12 * 3600 + 34 * 60 + 56;
        let dated = [
            "2024-05-01T12:34:56.789Z INF committed state height=5",
            "2024-05-01 12:34:56 ERR x",
            "2024-05-01T14:34:56+02:00 INF y",
            "I[2024-05-01|12:34:56.789] Executed block module=state height=5",
            r#"{"level":"error","time":"2024-05-01T12:34:56Z","message":"x"}"#,
            &format!(r#"{{"level":"info","time":{base},"message":"x"}}"#),
        ];
        for l in dated {
            assert_eq!(parse_line(l), Some(Stamp::Dated(base)), "{l}");
        }
        assert_eq!(
            parse_line("3:04PM INF starting node"),
            Some(Stamp::TimeOfDay(15 * 3600 + 4 * 60))
        );
        assert_eq!(parse_line("12:01AM ERR x"), Some(Stamp::TimeOfDay(60)));
        assert_eq!(
            parse_line("May 01 12:34:56 host chaind[42]: x").map(|_| ()),
            Some(())
        );
        assert_eq!(parse_line("goroutine 1 [running]:"), None);
        assert_eq!(parse_line("\t/go/src/x.go:12 +0x1d"), None);
        assert_eq!(parse_line("panic: runtime error"), None);
    }

    #[test]
    fn time_of_day_rolls_over_midnight() {
        let lines = ["11:58PM INF a", "goroutine 1", "12:03AM INF b"];
        let t = line_times(&lines);
        assert_eq!(t[1], t[0]);
        assert_eq!(t[2].unwrap() - t[0].unwrap(), 5 * 60);
    }
}
