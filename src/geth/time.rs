//! Go's time formats where chain data carries them: RFC 3339 with nanoseconds, as CometBFT
//! prints a block header's `time` (`2024-05-01T12:34:56.123456789Z`), and Go durations
//! (`time.ParseDuration`), as geth's trace config `timeout` takes them.

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 UTC time (`Z` or `+00:00`; up to nine fraction digits) as Unix seconds and
/// nanoseconds. Other offsets are refused: consensus times are UTC.
pub fn parse_rfc3339_utc(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let num = |at: usize, n: usize| -> Option<i64> {
        let t = s.get(at..at + n)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())
            .flatten()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
        || b.get(13) != Some(&b':')
        || b.get(16) != Some(&b':')
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
        || h > 23
        || mi > 59
        || sec > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return None;
        }
        nanos = frac[..n].parse::<u32>().ok()? * 10u32.pow(9 - n as u32);
        rest = &frac[n..];
    }
    if !matches!(rest, "Z" | "z" | "+00:00") {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86_400 + h * 3600 + mi * 60 + sec, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cometbft_header_times() {
        assert_eq!(parse_rfc3339_utc("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(
            parse_rfc3339_utc("2024-05-01T12:34:56.123456789Z"),
            Some((1_714_566_896, 123_456_789))
        );
        assert_eq!(
            parse_rfc3339_utc("2024-05-01T12:34:56.5Z"),
            Some((1_714_566_896, 500_000_000))
        );
        assert_eq!(parse_rfc3339_utc("2024-05-01T12:34:56+02:00"), None);
        assert_eq!(parse_rfc3339_utc("2024-05-01T12:34:56.1234567891Z"), None);
        assert_eq!(parse_rfc3339_utc("garbage"), None);
    }
}

/// A Go duration that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not Go's syntax: a number and a unit, repeated.
    #[error("invalid duration {0:?} (Go syntax, e.g. 5s, 1m30s, 500ms)")]
    Syntax(String),
    /// Longer than Go's `time.Duration` holds (about 292 years).
    #[error("invalid duration {0:?} (Go syntax, e.g. 5s, 1m30s, 500ms) (out of range)")]
    OutOfRange(String),
}

/// Parses a Go duration (`5s`, `1m30s`, `500ms`, `1.5h`, `300us`, `250µs`, `10ns`).
pub fn parse_go_duration(s: &str) -> Result<std::time::Duration, DurationError> {
    let bad = || DurationError::Syntax(s.to_string());
    let t = s.trim();
    if t == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    if t.is_empty() || t.starts_with('-') {
        return Err(bad());
    }
    let mut rest = t.strip_prefix('+').unwrap_or(t);
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if num_len == 0 {
            return Err(bad());
        }
        let n: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += n * scale;
        rest = &rest[unit_len..];
    }
    // Go's time.Duration is an int64 of nanoseconds: about 292 years at most.
    if !total.is_finite() || total > i64::MAX as f64 / 1e9 {
        return Err(DurationError::OutOfRange(s.to_string()));
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod duration_tests {
    use super::parse_go_duration;
    use std::time::Duration;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_go_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_go_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(
            parse_go_duration("500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_go_duration("1.5h").unwrap(),
            Duration::from_secs(5400)
        );
        assert_eq!(
            parse_go_duration("250µs").unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(parse_go_duration("0").unwrap(), Duration::ZERO);
        assert!(parse_go_duration("5").is_err());
        assert!(parse_go_duration("-1s").is_err());
        assert!(parse_go_duration("5 parsecs").is_err());
    }
}
