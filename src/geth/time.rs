//! Go's time formats where chain data carries them: RFC 3339 with nanoseconds, as CometBFT
//! prints a block header's `time` (`2024-05-01T12:34:56.123456789Z`).

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
