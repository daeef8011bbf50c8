//! Timestamps and durations: their text forms, shared by every stage.
//!
//! Both are `i64` nanoseconds: a timestamp counts from the Unix epoch (UTC),
//! so the representable range is 1677-09-21 to 2262-04-11. Timestamps are
//! read as strict RFC 3339 by rulec's own parser (every stage reads them
//! here: YAML literals, bundles, requests, conversions) and written as
//! RFC 3339 in UTC through `jiff`; durations use rulec's own
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

/// The earliest and latest timestamps (nanoseconds since the epoch in an
/// `i64`), as they are written.
pub const EARLIEST: &str = "1677-09-21T00:12:43.145224192Z";
pub const LATEST: &str = "2262-04-11T23:47:16.854775807Z";

/// Parses an RFC 3339 timestamp (section 5.6: `2026-01-02T03:04:05Z`,
/// `2026-01-02T03:04:05.5+01:00`) to nanoseconds since the Unix epoch.
///
/// Strict: a four-digit year, two-digit fields in range, `T` (or `t`)
/// between date and time (not a space), an optional fraction of up to
/// nine significant digits, and `Z` (or `z`) or `+HH:MM`/`-HH:MM` with
/// hours 00-23 and minutes 00-59; no leap second (`:60`), nothing after
/// the offset. The error says what is wrong, quoting the text.
pub fn parse_timestamp(text: &str) -> Result<i64, String> {
    Timestamp::parse(text.as_bytes()).map_err(|why| format!("timestamp {}: {why}", quote(text)))
}

/// The fields of an RFC 3339 timestamp, as read.
struct Timestamp {
    year: i64,
    month: i64,
    day: i64,
    seconds_of_day: i64,
    nanos: i64,
    offset_seconds: i64,
}

impl Timestamp {
    fn parse(text: &[u8]) -> Result<i64, String> {
        let mut cursor = Cursor { text, pos: 0 };
        let stamp = cursor.timestamp()?;
        stamp.epoch_nanos().ok_or_else(|| format!("outside the supported range, {EARLIEST} to {LATEST}"))
    }

    /// Nanoseconds since the epoch, if they fit an `i64`.
    fn epoch_nanos(&self) -> Option<i64> {
        let days = i128::from(days_from_civil(self.year, self.month, self.day));
        let seconds = days * 86_400 + i128::from(self.seconds_of_day) - i128::from(self.offset_seconds);
        i64::try_from(seconds * 1_000_000_000 + i128::from(self.nanos)).ok()
    }
}

/// Reads a timestamp's bytes left to right.
struct Cursor<'t> {
    text: &'t [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn timestamp(&mut self) -> Result<Timestamp, String> {
        let year = self.year()?;
        self.expect(b'-', "a `-` after the year")?;
        let month = self.field(2, "the month")?;
        if !(1..=12).contains(&month) {
            return Err(format!("the month {month:02} is out of range (01 to 12)"));
        }
        self.expect(b'-', "a `-` after the month")?;
        let day = self.field(2, "the day")?;
        let last = days_in_month(year, month);
        if !(1..=last).contains(&day) {
            return Err(format!("the day {day:02} is out of range for {year:04}-{month:02} (01 to {last})"));
        }
        self.separator()?;
        let hour = self.field(2, "the hour")?;
        self.expect(b':', "a `:` after the hour")?;
        let minute = self.field(2, "the minute")?;
        self.expect(b':', "a `:` and the seconds after the minute")?;
        let second = self.field(2, "the second")?;
        if hour > 23 {
            return Err(format!("the hour {hour:02} is out of range (00 to 23)"));
        }
        if minute > 59 {
            return Err(format!("the minute {minute:02} is out of range (00 to 59)"));
        }
        if second == 60 {
            return Err("a leap second (:60) cannot be represented".to_string());
        }
        if second > 59 {
            return Err(format!("the second {second:02} is out of range (00 to 59)"));
        }
        let nanos = self.fraction()?;
        let offset_seconds = self.offset()?;
        if self.pos < self.text.len() {
            return Err("unexpected text after the offset".to_string());
        }
        Ok(Timestamp {
            year,
            month,
            day,
            seconds_of_day: hour * 3600 + minute * 60 + second,
            nanos,
            offset_seconds,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected {what}"))
        }
    }

    /// Exactly `width` ASCII digits, not followed by another digit.
    fn field(&mut self, width: usize, what: &str) -> Result<i64, String> {
        let digits = self.text[self.pos..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits != width {
            let count = if width == 2 { "two" } else { "four" };
            return Err(format!("{what} must have {count} digits"));
        }
        let value = self.text[self.pos..self.pos + width].iter().fold(0, |n, d| n * 10 + i64::from(d - b'0'));
        self.pos += width;
        Ok(value)
    }

    fn year(&mut self) -> Result<i64, String> {
        if matches!(self.peek(), Some(b'+' | b'-')) {
            return Err("the year must have four digits, without a sign".to_string());
        }
        if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
            return Err("expected a date and time such as `2026-01-02T03:04:05Z`".to_string());
        }
        self.field(4, "the year")
    }

    /// `T` or `t` between the date and the time.
    fn separator(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'T' | b't') => {
                self.pos += 1;
                Ok(())
            }
            None => Err("the time is missing (write e.g. `2026-01-02T03:04:05Z`)".to_string()),
            Some(b' ') => Err("the date and the time are separated by `T`, not a space".to_string()),
            Some(_) => Err("expected `T` between the date and the time".to_string()),
        }
    }

    /// An optional `.` and digits, as nanoseconds; digits past the ninth
    /// must be zeros (finer than a nanosecond is refused, not rounded).
    fn fraction(&mut self) -> Result<i64, String> {
        if self.peek() != Some(b'.') {
            return Ok(0);
        }
        self.pos += 1;
        let digits: &[u8] = {
            let count = self.text[self.pos..].iter().take_while(|b| b.is_ascii_digit()).count();
            &self.text[self.pos..self.pos + count]
        };
        self.pos += digits.len();
        if digits.is_empty() {
            return Err("the `.` of the seconds must be followed by digits".to_string());
        }
        if digits.iter().skip(9).any(|d| *d != b'0') {
            return Err("fractions of a second finer than a nanosecond are not supported".to_string());
        }
        let mut nanos = 0;
        for i in 0..9 {
            nanos = nanos * 10 + digits.get(i).map_or(0, |d| i64::from(d - b'0'));
        }
        Ok(nanos)
    }

    /// `Z`, `z`, `+HH:MM` or `-HH:MM`, as seconds east of UTC.
    fn offset(&mut self) -> Result<i64, String> {
        let sign = match self.peek() {
            Some(b'Z' | b'z') => {
                self.pos += 1;
                return Ok(0);
            }
            Some(b'+') => 1,
            Some(b'-') => -1,
            None => return Err("the offset is missing (write `Z` for UTC, or e.g. `+01:00`)".to_string()),
            Some(_) => return Err("expected `Z` or an offset such as `+01:00` after the seconds".to_string()),
        };
        let start = self.pos;
        let shape = self.text.get(start..start + 6).is_some_and(|o| {
            o[1].is_ascii_digit()
                && o[2].is_ascii_digit()
                && o[3] == b':'
                && o[4].is_ascii_digit()
                && o[5].is_ascii_digit()
        }) && !self.text.get(start + 6).is_some_and(u8::is_ascii_digit);
        if !shape {
            return Err("the offset must be written `+HH:MM` or `-HH:MM` (or `Z`)".to_string());
        }
        let digit = |i: usize| i64::from(self.text[start + i] - b'0');
        let (hours, minutes) = (digit(1) * 10 + digit(2), digit(4) * 10 + digit(5));
        if hours > 23 || minutes > 59 {
            // The six bytes were checked to be ASCII.
            let shown = String::from_utf8_lossy(&self.text[start..start + 6]);
            return Err(format!("the offset {shown} is out of range (hours 00 to 23, minutes 00 to 59)"));
        }
        self.pos += 6;
        Ok(sign * (hours * 3600 + minutes * 60))
    }
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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
