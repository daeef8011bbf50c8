//! Timestamps and durations: their text forms, shared by every stage.
//!
//! Both are `i64` nanoseconds: a timestamp counts from the Unix epoch (UTC),
//! so the representable range is 1677-09-21 to 2262-04-11. Timestamps are
//! read and written as RFC 3339 through `jiff`; durations use rulec's own
//! compact form, a sequence of `<number><unit>` with units `d h m s ms us ns`
//! (`24h`, `1h30m`, `1.5s`, `-90m`) and are written back in the same form,
//! largest unit first (`1d2h`, `1h30m`, `1.5s`, `0s`).

use crate::quote::quote;

/// Nanoseconds in each duration unit, largest first.
const UNITS: [(&str, i64); 7] = [
    ("d", 86_400_000_000_000),
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// Parses an RFC 3339 timestamp (`2026-01-02T03:04:05Z`, any offset) to
/// nanoseconds since the Unix epoch.
pub fn parse_timestamp(text: &str) -> Result<i64, String> {
    let timestamp: jiff::Timestamp =
        text.parse().map_err(|e| format!("{} is not an RFC 3339 timestamp: {e}", quote(text)))?;
    i64::try_from(timestamp.as_nanosecond())
        .map_err(|_| format!("{} is outside the supported range (1677 to 2262)", quote(text)))
}

/// Writes a timestamp as RFC 3339 in UTC, with fractional seconds only
/// when they are not zero.
pub fn format_timestamp(nanos: i64) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(nanos)) {
        Ok(timestamp) => timestamp.to_string(),
        // Unreachable for i64 input: jiff's range is wider than i64 nanos.
        Err(_) => format!("{nanos}ns"),
    }
}

/// Parses a duration such as `24h`, `1h30m`, `1.5s` or `-15m`.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let error = || format!("{} is not a duration (write it as e.g. `24h`, `1h30m` or `1.5s`)", quote(text));
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if rest.is_empty() {
        return Err(error());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(error)?;
        let (number, tail) = rest.split_at(number_len);
        let unit_len = tail.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale = UNITS.iter().find(|(name, _)| *name == unit).map(|(_, n)| *n).ok_or_else(error)?;
        total += scaled(number, scale).ok_or_else(error)?;
        if total > i128::from(i64::MAX) {
            return Err(format!("{} is too long a duration (the limit is about 292 years)", quote(text)));
        }
        rest = tail;
    }
    let total = if negative { -total } else { total };
    i64::try_from(total).map_err(|_| error())
}

/// `number` (digits with an optional fraction) times `scale`, exactly.
fn scaled(number: &str, scale: i64) -> Option<i128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let whole: i128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut value = whole.checked_mul(i128::from(scale))?;
    let mut unit = i128::from(scale);
    for digit in fraction.bytes() {
        if !digit.is_ascii_digit() {
            return None;
        }
        unit /= 10;
        if unit == 0 {
            // Finer than a nanosecond: refuse rather than round.
            if digit != b'0' {
                return None;
            }
            continue;
        }
        value += i128::from(digit - b'0') * unit;
    }
    Some(value)
}

/// Writes a duration in the compact form [`parse_duration`] reads.
pub fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    if nanos < 0 {
        out.push('-');
    }
    let mut rest = nanos.unsigned_abs();
    for (name, size) in &UNITS[..3] {
        let size = *size as u64;
        if rest >= size {
            out.push_str(&format!("{}{name}", rest / size));
            rest %= size;
        }
    }
    if rest > 0 {
        let seconds = rest / 1_000_000_000;
        let fraction = rest % 1_000_000_000;
        if fraction == 0 {
            out.push_str(&format!("{seconds}s"));
        } else if seconds == 0 && fraction.is_multiple_of(1_000_000) {
            out.push_str(&format!("{}ms", fraction / 1_000_000));
        } else {
            let digits = format!("{fraction:09}");
            out.push_str(&format!("{seconds}.{}s", digits.trim_end_matches('0')));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_trip() {
        for (text, nanos, back) in [
            ("24h", 86_400_000_000_000, "1d"),
            ("1h30m", 5_400_000_000_000, "1h30m"),
            ("1.5s", 1_500_000_000, "1.5s"),
            ("250ms", 250_000_000, "250ms"),
            ("-90m", -5_400_000_000_000, "-1h30m"),
            ("0s", 0, "0s"),
            ("2d3h", 183_600_000_000_000, "2d3h"),
            ("1m0.000000001s", 60_000_000_001, "1m0.000000001s"),
        ] {
            assert_eq!(parse_duration(text), Ok(nanos), "{text}");
            assert_eq!(format_duration(nanos), back, "{text}");
            assert_eq!(parse_duration(back), Ok(nanos), "{back}");
        }
    }

    #[test]
    fn bad_durations_are_refused() {
        for text in ["", "-", "h", "3", "1x", "1.0000000001s", "1..5s", "99999999999d"] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        assert_eq!(format_duration(i64::MIN).chars().next(), Some('-'));
    }

    #[test]
    fn timestamps_round_trip() {
        let nanos = parse_timestamp("2026-01-02T03:04:05.5+01:00").unwrap();
        assert_eq!(format_timestamp(nanos), "2026-01-02T02:04:05.5Z");
        assert!(parse_timestamp("2026-01-02").is_err());
        assert!(parse_timestamp("9999-01-02T00:00:00Z").is_err());
    }
}
