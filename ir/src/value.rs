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
                    Err(format!("`{s}` is not one of {}", values.join(", ")))
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

/// Parses a decimal from its text exactly; refuses text that would need
/// rounding to fit 28 significant digits.
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
        return Err(format!("`{text}` is not a decimal number"));
    }
    Decimal::from_str_exact(text)
        .map_err(|_| format!("`{text}` does not fit a decimal exactly (at most 28 significant digits)"))
}

/// Parses an `int` from its text: optional `-`, then digits.
pub fn parse_int(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{text}` is not an integer"));
    }
    i64::from_str(text).map_err(|_| format!("`{text}` does not fit an int (64-bit)"))
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
        Json::Number(n) => n.to_string(),
        Json::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Json::String(_) => "a string".to_string(),
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

    #[test]
    fn a_negative_zero_constant_reads_back_with_its_sign() {
        let types = TypeTable::new();
        let zero = -Decimal::new(0, 2);
        let json = Const::Decimal(zero).to_json(&types, TypeTable::DECIMAL);
        let Ok(Const::Decimal(back)) = Const::from_json(&types, TypeTable::DECIMAL, &json) else { panic!() };
        assert!(back.is_sign_negative() && back.to_string() == "-0.00");
    }
}
