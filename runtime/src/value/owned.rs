//! A value owned outside an evaluation: an effect's value in a result, a
//! host function's arguments and result. One type for both, with its JSON
//! form (decimals as strings, times in their text forms).

use rust_decimal::Decimal;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A value that outlives the evaluation it came from: an effect's value in
/// a result, and what a host function is given and returns (whose
/// signature has no records, so a host function never sees one).
#[derive(Clone, PartialEq, Debug)]
pub enum Owned {
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    String(String),
    Timestamp(i64),
    Duration(i64),
    List(Vec<Owned>),
    /// Field names and values, in declaration order.
    Record(Vec<(String, Owned)>),
}

impl Serialize for Owned {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Owned::Bool(b) => s.serialize_bool(*b),
            Owned::Int(i) => s.serialize_i64(*i),
            Owned::Float(f) => s.serialize_f64(*f),
            Owned::Decimal(d) => {
                let mut text = String::new();
                super::write_decimal(*d, &mut text);
                s.serialize_str(&text)
            }
            Owned::String(text) => s.serialize_str(text),
            Owned::Timestamp(t) => s.serialize_str(&ir::time::format_timestamp(*t)),
            Owned::Duration(d) => s.serialize_str(&ir::time::format_duration(*d)),
            Owned::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Owned::Record(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (name, value) in fields {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
        }
    }
}
