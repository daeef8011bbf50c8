//! The semantics of every operator and built-in on plain values: checked
//! int and decimal arithmetic, finite floats, rounding, conversions,
//! strings, time and vectors.
//!
//! These functions are the single definition both engines use: the
//! interpreter calls them directly, the JIT reaches them through its helper
//! table, so the two cannot drift. None of them panics.

use std::cmp::Ordering;

use rust_decimal::Decimal;

use crate::value::decimal::{self, Midpoint};

use crate::semantics::error::{EvalError, EvalResult};

const NANOS_PER_DAY: i64 = 86_400_000_000_000;
const NANOS_PER_HOUR: i64 = 3_600_000_000_000;

/// The overflow of an operation on `kind`, made only when it happens: an
/// error made eagerly (`ok_or`) is dropped on every operation that fits.
#[cold]
fn overflow(kind: &'static str) -> EvalError {
    EvalError::Overflow(kind)
}

// ----- int -----

pub fn int_add(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_add(b).ok_or_else(|| overflow("int"))
}

pub fn int_sub(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("int"))
}

pub fn int_mul(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_mul(b).ok_or_else(|| overflow("int"))
}

/// Truncates toward zero, as Rust does.
pub fn int_div(a: i64, b: i64) -> EvalResult<i64> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    a.checked_div(b).ok_or_else(|| overflow("int"))
}

/// The remainder of truncating division; its sign follows `a`.
pub fn int_rem(a: i64, b: i64) -> EvalResult<i64> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    a.checked_rem(b).ok_or_else(|| overflow("int"))
}

pub fn int_neg(a: i64) -> EvalResult<i64> {
    a.checked_neg().ok_or_else(|| overflow("int"))
}

pub fn int_abs(a: i64) -> EvalResult<i64> {
    a.checked_abs().ok_or_else(|| overflow("int"))
}

// ----- decimal -----

pub fn dec_add(a: Decimal, b: Decimal) -> EvalResult<Decimal> {
    decimal::add(a, b).ok_or_else(|| overflow("decimal"))
}

pub fn dec_sub(a: Decimal, b: Decimal) -> EvalResult<Decimal> {
    decimal::sub(a, b).ok_or_else(|| overflow("decimal"))
}

pub fn dec_mul(a: Decimal, b: Decimal) -> EvalResult<Decimal> {
    decimal::mul(a, b).ok_or_else(|| overflow("decimal"))
}

pub fn dec_div(a: Decimal, b: Decimal) -> EvalResult<Decimal> {
    if b.is_zero() {
        return Err(EvalError::DivisionByZero);
    }
    a.checked_div(b).ok_or_else(|| overflow("decimal"))
}

pub fn dec_rem(a: Decimal, b: Decimal) -> EvalResult<Decimal> {
    if b.is_zero() {
        return Err(EvalError::DivisionByZero);
    }
    a.checked_rem(b).ok_or_else(|| overflow("decimal"))
}

pub fn dec_neg(a: Decimal) -> Decimal {
    -a
}

/// Rounds to `places` (0 to 28) and gives exactly that scale: `round(5, 2)`
/// is `5.00`, as money is shown.
pub fn dec_round(a: Decimal, places: i64, midpoint: Midpoint) -> EvalResult<Decimal> {
    Ok(decimal::round(a, round_places(places)?, midpoint))
}

fn round_places(places: i64) -> EvalResult<u32> {
    u32::try_from(places)
        .ok()
        .filter(|p| *p <= 28)
        .ok_or_else(|| EvalError::Argument(format!("cannot round to {places} places (0 to 28)")))
}

// ----- float -----

fn finite(value: f64, what: &'static str) -> EvalResult<f64> {
    if value.is_finite() { Ok(value) } else { Err(EvalError::NotFinite(what)) }
}

pub fn float_add(a: f64, b: f64) -> EvalResult<f64> {
    finite(a + b, "float sum")
}

pub fn float_sub(a: f64, b: f64) -> EvalResult<f64> {
    finite(a - b, "float difference")
}

pub fn float_mul(a: f64, b: f64) -> EvalResult<f64> {
    finite(a * b, "float product")
}

pub fn float_div(a: f64, b: f64) -> EvalResult<f64> {
    if b == 0.0 {
        return Err(EvalError::DivisionByZero);
    }
    finite(a / b, "float quotient")
}

pub fn float_rem(a: f64, b: f64) -> EvalResult<f64> {
    if b == 0.0 {
        return Err(EvalError::DivisionByZero);
    }
    finite(a % b, "float remainder")
}

/// Rounds a float to `places` decimal places, half away from zero (or
/// half to even).
pub fn float_round(a: f64, places: i64, midpoint: Midpoint) -> EvalResult<f64> {
    let places = round_places(places)?;
    let factor = 10f64.powi(places as i32);
    let scaled = a * factor;
    let rounded = match midpoint {
        Midpoint::AwayFromZero => scaled.round(),
        Midpoint::ToEven => scaled.round_ties_even(),
        Midpoint::TowardZero if (scaled - scaled.trunc()).abs() == 0.5 => scaled.trunc(),
        Midpoint::TowardZero => scaled.round(),
    };
    finite(rounded / factor, "rounded float")
}

/// Orders two finite floats (the language never makes a NaN).
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

// ----- conversions -----

pub fn int_from_decimal(a: Decimal) -> EvalResult<i64> {
    let truncated = a.trunc();
    i64::try_from(truncated).map_err(|_| EvalError::Conversion(format!("{a} does not fit an int")))
}

pub fn int_from_float(a: f64) -> EvalResult<i64> {
    let truncated = a.trunc();
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&truncated) {
        Ok(truncated as i64)
    } else {
        Err(EvalError::Conversion(format!("{a:?} does not fit an int")))
    }
}

pub fn int_from_str(text: &str) -> EvalResult<i64> {
    ir::value::parse_int(text).map_err(EvalError::Conversion)
}

pub fn decimal_from_int(a: i64) -> Decimal {
    Decimal::from(a)
}

/// The decimal a float's shortest form spells: `decimal(0.1)` is `0.1`.
pub fn decimal_from_float(a: f64) -> EvalResult<Decimal> {
    let text = format!("{a:?}");
    ir::value::parse_decimal_number(&text)
        .map_err(|_| EvalError::Conversion(format!("{text} does not fit a decimal")))
}

pub fn decimal_from_str(text: &str) -> EvalResult<Decimal> {
    ir::value::parse_decimal(text).map_err(EvalError::Conversion)
}

/// The float nearest to a decimal (correctly rounded through its text).
pub fn float_from_decimal(a: Decimal) -> f64 {
    a.to_string().parse().unwrap_or(0.0)
}

pub fn float_from_str(text: &str) -> EvalResult<f64> {
    let numeric = text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    match text.parse::<f64>() {
        Ok(value) if numeric && value.is_finite() => Ok(value),
        _ => Err(EvalError::Conversion(format!("{} is not a float", ir::quote::quote(text)))),
    }
}

// ----- strings -----

/// The length in characters.
pub fn str_len(text: &str) -> i64 {
    text.chars().count() as i64
}

pub fn compare_str(a: &str, b: &str) -> Ordering {
    a.cmp(b)
}

// ----- time -----

pub fn timestamp_add(t: i64, d: i64) -> EvalResult<i64> {
    t.checked_add(d).ok_or_else(|| overflow("timestamp"))
}

pub fn timestamp_sub(t: i64, d: i64) -> EvalResult<i64> {
    t.checked_sub(d).ok_or_else(|| overflow("timestamp"))
}

pub fn timestamp_diff(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("duration"))
}

pub fn duration_add(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_add(b).ok_or_else(|| overflow("duration"))
}

pub fn duration_sub(a: i64, b: i64) -> EvalResult<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("duration"))
}

pub fn duration_neg(a: i64) -> EvalResult<i64> {
    a.checked_neg().ok_or_else(|| overflow("duration"))
}

pub fn duration_abs(a: i64) -> EvalResult<i64> {
    a.checked_abs().ok_or_else(|| overflow("duration"))
}

/// Whole days, truncated toward zero.
pub fn days(d: i64) -> i64 {
    d / NANOS_PER_DAY
}

/// Whole hours, truncated toward zero.
pub fn hours(d: i64) -> i64 {
    d / NANOS_PER_HOUR
}

pub fn timestamp_from_str(text: &str) -> EvalResult<i64> {
    ir::time::parse_timestamp(text).map_err(EvalError::Conversion)
}

pub fn duration_from_str(text: &str) -> EvalResult<i64> {
    ir::time::parse_duration(text).map_err(EvalError::Conversion)
}

/// The current time in nanoseconds since the epoch.
pub fn clock_now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
}

// ----- vectors -----

fn same_length(a: usize, b: usize, what: &str) -> EvalResult<()> {
    if a == b {
        Ok(())
    } else {
        Err(EvalError::Argument(format!("`{what}` needs vectors of one length, got {a} and {b}")))
    }
}

/// The sum of `terms` from `+0.0`: `Iterator::sum` of floats starts from
/// `-0.0`, which made `dot([], [])` and `l2([], [])` `-0`.
fn sum(terms: impl Iterator<Item = f64>) -> f64 {
    terms.fold(0.0, |total, term| total + term)
}

/// The dot product.
pub fn dot(a: &[f64], b: &[f64]) -> EvalResult<f64> {
    same_length(a.len(), b.len(), "dot")?;
    finite(sum(a.iter().zip(b).map(|(x, y)| x * y)), "dot product")
}

/// The cosine similarity; a zero vector has none. The denominator is
/// `sqrt(|a|² · |b|²)`, one rounding, so that `cosine(x, x)` is exactly 1
/// (`x · x` is `|x|²` summed in the same order, and `sqrt(s · s)` is `s`
/// for every `s` whose square neither overflows nor underflows; past
/// those, `|a| · |b|`). Rounding can still take a quotient a unit past ±1,
/// so it is clamped to [-1, 1].
pub fn cosine(a: &[f64], b: &[f64]) -> EvalResult<f64> {
    same_length(a.len(), b.len(), "cosine")?;
    let square = |v: &[f64]| sum(v.iter().map(|x| x * x));
    let (sa, sb) = (square(a), square(b));
    if sa == 0.0 || sb == 0.0 {
        return Err(EvalError::Argument("`cosine` of a zero vector".into()));
    }
    let product = sa * sb;
    let norms = if product.is_normal() { product.sqrt() } else { sa.sqrt() * sb.sqrt() };
    finite(dot(a, b)? / norms, "cosine").map(|c| c.clamp(-1.0, 1.0))
}

/// The Euclidean distance.
pub fn l2(a: &[f64], b: &[f64]) -> EvalResult<f64> {
    same_length(a.len(), b.len(), "l2")?;
    finite(sum(a.iter().zip(b).map(|(x, y)| (x - y) * (x - y))).sqrt(), "l2 distance")
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    #[test]
    fn decimal_semantics() {
        assert_eq!(dec_add(d("1.50"), d("1")).unwrap().to_string(), "2.50");
        assert_eq!(dec_mul(d("1.50"), d("2.0")).unwrap().to_string(), "3.000");
        assert_eq!(dec_div(d("1"), d("3")).unwrap().to_string(), "0.3333333333333333333333333333");
        assert_eq!(dec_round(d("5"), 2, Midpoint::AwayFromZero).unwrap().to_string(), "5.00");
        assert_eq!(dec_round(d("2.345"), 2, Midpoint::AwayFromZero).unwrap().to_string(), "2.35");
        assert_eq!(dec_round(d("2.345"), 2, Midpoint::ToEven).unwrap().to_string(), "2.34");
        assert_eq!(dec_round(d("-2.5"), 0, Midpoint::AwayFromZero).unwrap().to_string(), "-3");
        assert_eq!(dec_round(d("2.345"), 2, Midpoint::TowardZero).unwrap().to_string(), "2.34");
        assert_eq!(dec_round(d("-2.345"), 2, Midpoint::TowardZero).unwrap().to_string(), "-2.34");
        assert_eq!(dec_round(d("2.3451"), 2, Midpoint::TowardZero).unwrap().to_string(), "2.35");
        assert_eq!(dec_div(d("1"), d("0")), Err(EvalError::DivisionByZero));
        assert_eq!(dec_mul(Decimal::MAX, d("2")), Err(EvalError::Overflow("decimal")));
        assert!(
            dec_round(d("1"), 29, Midpoint::AwayFromZero).is_err()
                && dec_round(d("1"), -1, Midpoint::AwayFromZero).is_err()
        );
    }

    #[test]
    fn int_and_float_semantics() {
        assert_eq!(int_div(-7, 2), Ok(-3));
        assert_eq!(int_rem(-7, 2), Ok(-1));
        assert_eq!(int_div(i64::MIN, -1), Err(EvalError::Overflow("int")));
        assert_eq!(int_add(i64::MAX, 1), Err(EvalError::Overflow("int")));
        assert_eq!(float_div(1.0, 0.0), Err(EvalError::DivisionByZero));
        assert!(float_mul(1e300, 1e300).is_err());
        assert_eq!(float_round(2.5, 0, Midpoint::AwayFromZero), Ok(3.0));
        assert_eq!(float_round(2.5, 0, Midpoint::ToEven), Ok(2.0));
        assert_eq!(float_round(2.5, 0, Midpoint::TowardZero), Ok(2.0));
        assert_eq!(float_round(-2.5, 0, Midpoint::TowardZero), Ok(-2.0));
        assert_eq!(float_round(2.51, 0, Midpoint::TowardZero), Ok(3.0));
        assert_eq!(int_from_float(-2.9), Ok(-2));
        assert!(int_from_float(1e30).is_err());
        assert_eq!(decimal_from_float(0.1).unwrap().to_string(), "0.1");
        assert_eq!(int_from_decimal(d("-7.9")), Ok(-7));
        assert!(int_from_str("x").is_err() && float_from_str("inf").is_err());
    }

    #[test]
    fn strings_time_and_vectors() {
        assert_eq!(str_len("Bäckerei"), 8);
        assert_eq!(days(-NANOS_PER_DAY - 1), -1);
        assert_eq!(hours(90 * 60 * 1_000_000_000), 1);
        assert_eq!(dot(&[1.0, 2.0], &[3.0, 4.0]), Ok(11.0));
        assert_eq!(l2(&[0.0, 0.0], &[3.0, 4.0]), Ok(5.0));
        assert!(cosine(&[0.0], &[1.0]).is_err() && dot(&[1.0], &[]).is_err());
    }

    /// Empty vectors: a sum of nothing is `+0`, never `-0`.
    #[test]
    fn empty_vectors_give_positive_zero() {
        for value in [dot(&[], &[]), l2(&[], &[])] {
            let value = value.unwrap();
            assert!(value == 0.0 && value.is_sign_positive(), "{value:?}");
        }
    }

    /// Vectors whose cosine with themselves rounded past 1 unclamped
    /// (`1.0000000000000002`) or below it (`[1, 2]`: `0.9999999999999998`
    /// with `|a| · |b|` as the denominator).
    #[test]
    fn cosine_of_a_vector_with_itself_is_one() {
        let vectors = [vec![0.1, 0.7], vec![1.0, 1.0, 1.0], vec![0.1, 0.7, 3.0, 1e-3], vec![0.7, 0.7, 0.7]];
        for x in vectors.into_iter().chain([vec![1.0, 2.0], vec![1e150, 1e150]]) {
            let negated: Vec<f64> = x.iter().map(|v| -v).collect();
            assert_eq!(cosine(&x, &x), Ok(1.0), "{x:?}");
            assert_eq!(cosine(&x, &negated), Ok(-1.0), "{x:?}");
        }
    }

    proptest::proptest! {
        /// Rounding never takes a cosine out of [-1, 1], of any vectors
        /// and of a vector with itself or a multiple of it.
        #[test]
        fn cosine_stays_within_one(
            pairs in proptest::collection::vec((-1e6f64..1e6, -1e6f64..1e6), 1..24),
            scale in -1e3f64..1e3,
        ) {
            let (a, b): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            if a.iter().any(|x| *x != 0.0) {
                proptest::prop_assert_eq!(cosine(&a, &a), Ok(1.0), "{:?}", a);
            }
            let scaled: Vec<f64> = a.iter().map(|x| x * scale).collect();
            for (x, y) in [(&a, &b), (&a, &a), (&a, &scaled)] {
                if let Ok(c) = cosine(x, y) {
                    proptest::prop_assert!((-1.0..=1.0).contains(&c), "{c} for {x:?} and {y:?}");
                }
            }
        }
    }
}
