//! Compile-time constants and their JSON form.
//!
//! A [`Const`] is a literal, a table row or a folded value. Its JSON form
//! depends on its type, which travels beside it: decimals are strings (their
//! scale kept), timestamps are RFC 3339 strings, durations are compact
//! duration strings, an absent optional is `null`.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value as Json;

use crate::ids::TypeId;
use crate::quote::{quote, short};
use crate::time;
use crate::types::{TypeKind, TypeTable};

/// A constant value of a known type.
#[derive(Clone, PartialEq, Debug)]
pub enum Const {
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    /// A `string` or an enum value.
    String(String),
    /// Nanoseconds since the Unix epoch.
    Timestamp(i64),
    /// Nanoseconds.
    Duration(i64),
    List(Vec<Const>),
    /// Field values in the record type's field order.
    Record(Vec<Const>),
    /// An optional without a value. A present optional is its value.
    Absent,
}

/// A table's key as a hashable value (keys are ints, strings or enum
/// values, which are strings), for finding repeated keys in linear time.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TableKey {
    Int(i64),
    Str(Box<str>),
}

impl Const {
    /// This constant as a table key, when it is an int or a string.
    pub fn table_key(&self) -> Option<TableKey> {
        match self {
            Const::Int(i) => Some(TableKey::Int(*i)),
            Const::String(s) => Some(TableKey::Str(s.as_str().into())),
            _ => None,
        }
    }

    /// Whether this constant is a value of `ty`.
    pub fn has_type(&self, types: &TypeTable, ty: TypeId) -> bool {
        let Some(kind) = types.get(ty) else { return false };
        match (self, kind) {
            (Const::Absent, TypeKind::Optional(_)) => true,
            (value, TypeKind::Optional(inner)) => value.has_type(types, *inner),
            (Const::Bool(_), TypeKind::Bool)
            | (Const::Int(_), TypeKind::Int)
            | (Const::Decimal(_), TypeKind::Decimal)
            | (Const::String(_), TypeKind::String)
            | (Const::Timestamp(_), TypeKind::Timestamp)
            | (Const::Duration(_), TypeKind::Duration) => true,
            (Const::Float(f), TypeKind::Float) => f.is_finite(),
            (Const::String(s), TypeKind::Enum(values)) => values.iter().any(|v| v == s),
            (Const::List(items), TypeKind::List(element)) => {
                items.iter().all(|item| item.has_type(types, *element))
            }
            (Const::Record(values), TypeKind::Record(fields)) => {
                values.len() == fields.len()
                    && values.iter().zip(fields).all(|(v, f)| v.has_type(types, f.ty))
            }
            _ => false,
        }
    }

    /// The JSON form of this constant, as a value of `ty`.
    pub fn to_json(&self, types: &TypeTable, ty: TypeId) -> Json {
        match self {
            Const::Bool(b) => Json::Bool(*b),
            Const::Int(i) => Json::from(*i),
            Const::Decimal(d) => Json::String(d.to_string()),
            Const::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Const::String(s) => Json::String(s.clone()),
            Const::Timestamp(t) => Json::String(time::format_timestamp(*t)),
            Const::Duration(d) => Json::String(time::format_duration(*d)),
            Const::Absent => Json::Null,
            Const::List(items) => {
                let element = element_type(types, ty);
                Json::Array(items.iter().map(|item| item.to_json(types, element)).collect())
            }
            Const::Record(values) => {
                let fields = record_fields(types, ty);
                let mut object = serde_json::Map::new();
                for (value, field) in values.iter().zip(fields) {
                    object.insert(field.name.clone(), value.to_json(types, field.ty));
                }
                Json::Object(object)
            }
        }
    }

    /// Reads the JSON form of a value of `ty`, strictly: decimals must be
    /// strings, records must have exactly their fields. The inverse of
    /// [`Const::to_json`]: every constant reads back exactly (floats are
    /// read as the nearest f64: serde_json's `float_roundtrip`).
    pub fn from_json(types: &TypeTable, ty: TypeId, json: &Json) -> Result<Const, String> {
        let kind = types.get(ty).ok_or_else(|| format!("unknown type #{}", ty.0))?;
        let mismatch = || format!("expected {}, got {}", types.display(ty), json_summary(json));
        match (kind, json) {
            (TypeKind::Optional(_), Json::Null) => Ok(Const::Absent),
            (TypeKind::Optional(inner), _) => Const::from_json(types, *inner, json),
            (TypeKind::Bool, Json::Bool(b)) => Ok(Const::Bool(*b)),
            (TypeKind::Int, Json::Number(n)) => n.as_i64().map(Const::Int).ok_or_else(mismatch),
            (TypeKind::Float, Json::Number(n)) => n.as_f64().map(Const::Float).ok_or_else(mismatch),
            (TypeKind::Decimal, Json::String(s)) => parse_decimal(s).map(|mut d| {
                // A negative zero (a folded `-0.00`) is written `-0.00`: read
                // it back with its sign, so the constant round-trips exactly.
                d.set_sign_negative(s.starts_with('-'));
                Const::Decimal(d)
            }),
            (TypeKind::String, Json::String(s)) => Ok(Const::String(s.clone())),
            (TypeKind::Enum(values), Json::String(s)) => {
                if values.contains(s) {
                    Ok(Const::String(s.clone()))
                } else {
                    Err(format!("{} is not one of {}", quote(s), values.join(", ")))
                }
            }
            (TypeKind::Timestamp, Json::String(s)) => time::parse_timestamp(s).map(Const::Timestamp),
            (TypeKind::Duration, Json::String(s)) => time::parse_duration(s).map(Const::Duration),
            (TypeKind::List(element), Json::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| Const::from_json(types, *element, item).map_err(|e| format!("[{i}]: {e}")))
                .collect::<Result<_, _>>()
                .map(Const::List),
            (TypeKind::Record(fields), Json::Object(object)) => {
                if let Some(extra) = object.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
                    return Err(format!("unexpected field `{extra}`"));
                }
                fields
                    .iter()
                    .map(|field| match object.get(&field.name) {
                        Some(value) => Const::from_json(types, field.ty, value)
                            .map_err(|e| format!(".{}: {e}", field.name)),
                        None => Err(format!("missing field `{}`", field.name)),
                    })
                    .collect::<Result<_, _>>()
                    .map(Const::Record)
            }
            _ => Err(mismatch()),
        }
    }
}

/// The most places a decimal holds (rust_decimal's largest scale).
const MAX_DECIMAL_PLACES: usize = 28;

/// The largest decimal mantissa, `2^96 - 1`: 29 digits.
const MAX_MANTISSA_DIGITS: usize = 29;

/// Parses a decimal from its text (`-`, digits, optionally `.` and digits)
/// exactly, keeping its scale; refuses text that would need rounding. (A
/// zero is read without a sign, as rust_decimal reads it.)
pub fn parse_decimal(text: &str) -> Result<Decimal, String> {
    let valid_syntax = {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && fraction.bytes().all(|b| b.is_ascii_digit())
            && !(digits.contains('.') && fraction.is_empty())
    };
    if !valid_syntax {
        return Err(format!("{} is not a decimal number", quote(text)));
    }
    Decimal::from_str_exact(text).map_err(|_| does_not_fit_decimal(text))
}

/// Why `text` cannot be a decimal: the limits, as rust_decimal has them.
fn does_not_fit_decimal(text: &str) -> String {
    format!(
        "{} does not fit a decimal exactly (at most {MAX_DECIMAL_PLACES} places, and at most \
         79228162514264337593543950335 without the point)",
        quote(text)
    )
}

/// Parses a JSON number's text (`-1.25`, `1.5e-2`, `1E+3`) as an exact
/// decimal. The exponent moves the point in the digits' text, then the
/// text is read as [`parse_decimal`] reads it: the scale is the places
/// left after the move (`1.50e1` is `15.0`, `1.5e-2` is `0.015`, `1e5` is
/// `100000`), and what does not fit is refused with the same message as
/// the plain form, naming the text as written. Never builds more text than
/// a decimal can hold, whatever the exponent.
pub fn parse_decimal_number(text: &str) -> Result<Decimal, String> {
    let Some(at) = text.find(['e', 'E']) else { return parse_decimal(text) };
    let (mantissa, exponent) = (&text[..at], &text[at + 1..]);
    let not_a_number = || format!("{} is not a decimal number", quote(text));
    let unsigned = mantissa.strip_prefix('-').unwrap_or(mantissa);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let valid = !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
        && !(unsigned.contains('.') && fraction.is_empty());
    let exponent = parse_exponent(exponent).filter(|_| valid).ok_or_else(not_a_number)?;
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0');
    // Places after the move: the fraction's, less the exponent. Digit
    // counts are bounded by the text's length, and the exponent is clamped
    // (see `parse_exponent`), so none of this overflows.
    let places = fraction.len() as i64 - exponent;
    if places > MAX_DECIMAL_PLACES as i64 {
        return Err(does_not_fit_decimal(text));
    }
    let places = places.max(0) as usize;
    // Digits before the point after the move, leading zeros dropped.
    let whole_digits = significant.len() as i64 - fraction.len() as i64 + exponent;
    if !significant.is_empty() && whole_digits > MAX_MANTISSA_DIGITS as i64 {
        return Err(does_not_fit_decimal(text));
    }
    let plain = shifted(mantissa.starts_with('-'), significant, places, whole_digits.max(0) as usize);
    parse_decimal(&plain).map_err(|_| does_not_fit_decimal(text))
}

/// An exponent's text (`5`, `+05`, `-12`) as a number, clamped to a
/// magnitude (a billion) past which every non-zero mantissa a request
/// can hold fits nothing; `None` if it is not digits.
fn parse_exponent(text: &str) -> Option<i64> {
    const CLAMP: i64 = 1_000_000_000;
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.bytes().try_fold(0i64, |n, b| {
        let n = n * 10 + i64::from(b - b'0');
        (n <= CLAMP).then_some(n)
    });
    let magnitude = magnitude.unwrap_or(CLAMP + 1);
    Some(if negative { -magnitude } else { magnitude })
}

/// The plain text of `significant` (digits without leading zeros) with
/// `places` of them, or of zeros added, after the point, and `whole`
/// digits before it (`significant` is padded with zeros to make up both).
fn shifted(negative: bool, significant: &str, places: usize, whole: usize) -> String {
    let mut out = String::with_capacity(whole + places + 3);
    if negative {
        out.push('-');
    }
    if significant.is_empty() {
        out.push('0');
        if places > 0 {
            out.push('.');
            out.extend(std::iter::repeat_n('0', places));
        }
        return out;
    }
    // `significant` spans the `whole` digits before the point and as many
    // after it as it has left; the rest of either side is zeros.
    let before = significant.len().min(whole);
    out.push_str(&significant[..before]);
    out.extend(std::iter::repeat_n('0', whole - before));
    if whole == 0 {
        out.push('0');
    }
    if places > 0 {
        let after = &significant[before..];
        out.push('.');
        out.extend(std::iter::repeat_n('0', places - after.len()));
        out.push_str(after);
    }
    out
}

/// Parses an `int` from its text: optional `-`, then digits.
pub fn parse_int(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{} is not an integer", quote(text)));
    }
    i64::from_str(text).map_err(|_| format!("{} does not fit an int (64-bit)", quote(text)))
}

fn element_type(types: &TypeTable, ty: TypeId) -> TypeId {
    match types.get(ty) {
        Some(TypeKind::List(element)) => *element,
        Some(TypeKind::Optional(inner)) => element_type(types, *inner),
        _ => ty,
    }
}

fn record_fields(types: &TypeTable, ty: TypeId) -> &[crate::types::FieldDef] {
    match types.get(ty) {
        Some(TypeKind::Record(fields)) => fields,
        Some(TypeKind::Optional(inner)) => record_fields(types, *inner),
        _ => &[],
    }
}

/// A short description of a JSON value for error messages.
pub fn json_summary(json: &Json) -> String {
    match json {
        Json::Null => "null".to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => short(&n.to_string()).into_owned(),
        Json::String(s) => quote(s),
        Json::Array(_) => "a list".to_string(),
        Json::Object(_) => "an object".to_string(),
    }
}

/// The IR printer's form of a constant: literals as a contract writes them.
impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Bool(b) => write!(f, "{b}"),
            Const::Int(i) => write!(f, "{i}"),
            Const::Decimal(d) => write!(f, "{d}"),
            Const::Float(x) => write!(f, "{x:?}f"),
            Const::String(s) => write!(f, "{s:?}"),
            Const::Timestamp(t) => write!(f, "timestamp({:?})", time::format_timestamp(*t)),
            Const::Duration(d) => write!(f, "duration({:?})", time::format_duration(*d)),
            Const::Absent => f.write_str("absent"),
            Const::List(items) | Const::Record(items) => {
                let (open, close) = if matches!(self, Const::List(_)) { ("[", "]") } else { ("{", "}") };
                f.write_str(open)?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(close)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a JSON number's text reads as: the decimal's text, or the
    /// start of the refusal.
    fn read(text: &str) -> String {
        match parse_decimal_number(text) {
            Ok(d) => d.to_string(),
            Err(e) => e.split(" (").next().unwrap_or_default().to_string(),
        }
    }

    #[test]
    fn exponents_move_the_point_exactly() {
        let cases = [
            ("1.50e1", "15.0"),
            ("1.5e-2", "0.015"),
            ("1e5", "100000"),
            ("1E+2", "100"),
            ("1e05", "100000"),
            ("-12.5e-1", "-1.25"),
            ("0.000000000000000000000000000000001e5", "0.0000000000000000000000000001"),
            ("0.000000000000000000000000000012345e5", "0.0000000000000000000000012345"),
            ("0.1e29", "10000000000000000000000000000"),
            ("7.9228162514264337593543950335e28", "79228162514264337593543950335"),
            ("0e-28", "0.0000000000000000000000000000"),
            ("0.00e2", "0"),
            ("0e999999999999999999999", "0"),
            ("120e-1", "12.0"),
            ("-0e0", "0"),
        ];
        for (text, want) in cases {
            assert_eq!(read(text), want, "{text}");
        }
    }

    #[test]
    fn what_does_not_fit_is_refused_like_the_plain_form() {
        for (text, plain) in [
            ("1.00000000000000000000000000005e0", "1.00000000000000000000000000005"),
            ("0.12345678901234567890123456789e0", "0.12345678901234567890123456789"),
            ("7.9228162514264337593543950336e28", "79228162514264337593543950336"),
            ("1e29", "100000000000000000000000000000"),
            ("1e-29", "0.00000000000000000000000000001"),
            ("0e-29", "0.00000000000000000000000000000"),
        ] {
            let refused = parse_decimal_number(text).expect_err(text);
            let plain_refused = parse_decimal(plain).expect_err(plain);
            assert_eq!(refused.replace(text, "X"), plain_refused.replace(plain, "X"), "{text}");
        }
        for text in ["1e999999999", "1e-999999999", "1e99999999999999999999999", "-5e-99999999999999"] {
            assert!(parse_decimal_number(text).unwrap_err().contains("does not fit"), "{text}");
        }
        for text in ["1e", "1e+", "e5", "1.e5", ".5e1", "1e5.0", "--1e1"] {
            assert!(parse_decimal_number(text).unwrap_err().contains("is not a decimal number"), "{text}");
        }
    }

    #[test]
    fn a_negative_zero_constant_reads_back_with_its_sign() {
        let types = TypeTable::new();
        let zero = -Decimal::new(0, 2);
        let json = Const::Decimal(zero).to_json(&types, TypeTable::DECIMAL);
        let Ok(Const::Decimal(back)) = Const::from_json(&types, TypeTable::DECIMAL, &json) else { panic!() };
        assert!(back.is_sign_negative() && back.to_string() == "-0.00");
    }
}
