//! Requests: the JSON envelope (`contract`, `channel`, `component`, `now`,
//! `input`) and the input, validated against the contract's schema while it
//! is parsed, straight into slots.
//!
//! Every problem is reported with its path (`input.source.kyc_level:
//! expected int, got "2"`), not just the first. Unknown fields are
//! ignored. Numbers are read from their JSON text: decimals exactly,
//! whether a string, a number or a number with an exponent, never through
//! `f64`; ints from their digits; floats as the nearest `f64`. Strings
//! without escapes are borrowed from the request bytes, so a typical
//! request costs one allocation.

use std::borrow::Cow;
use std::fmt;

use ir::quote::{quote, short};
use ir::{TypeId, TypeKind};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::program::Program;
use crate::value::data::{RecordRef, Slot, Store};
use crate::value::layout::Shape;

/// The most problems one request reports.
const MAX_DETAILS: usize = 64;

/// A request's envelope, before its input is read.
#[derive(Deserialize, Debug)]
pub struct Envelope<'r> {
    #[serde(borrow, default)]
    pub contract: Option<Cow<'r, str>>,
    #[serde(borrow, default)]
    pub channel: Option<Cow<'r, str>>,
    #[serde(borrow, default)]
    pub component: Option<Cow<'r, str>>,
    #[serde(borrow, default)]
    pub now: Option<Cow<'r, str>>,
    #[serde(borrow, default)]
    pub input: Option<&'r RawValue>,
}

impl<'r> Envelope<'r> {
    /// Parses the envelope of a request's JSON text.
    pub fn parse(text: &'r str) -> Result<Envelope<'r>, InvalidInput> {
        serde_json::from_str(text)
            .map_err(|e| InvalidInput::one("", format!("not a valid request: {}", ir::quote::json_error(&e))))
    }
}

/// One problem with a request.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Detail {
    /// `input.source.kyc_level`, `channel`, or empty for the whole request.
    pub path: String,
    pub message: String,
}

/// Why a request was refused before evaluation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InvalidInput {
    pub details: Vec<Detail>,
}

impl InvalidInput {
    pub fn one(path: &str, message: impl Into<String>) -> InvalidInput {
        InvalidInput { details: vec![Detail { path: path.to_string(), message: message.into() }] }
    }

    /// `{"error":{"kind":"invalid_input","details":[...]}}`.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = b"{\"error\":{\"kind\":\"invalid_input\",\"details\":[".to_vec();
        for (i, detail) in self.details.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"path\":");
            crate::value::write_json_str(&detail.path, &mut out);
            out.extend_from_slice(b",\"message\":");
            crate::value::write_json_str(&detail.message, &mut out);
            out.push(b'}');
        }
        out.extend_from_slice(b"]}}");
        out
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.details.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            if d.path.is_empty() {
                write!(f, "{}", d.message)?;
            } else {
                write!(f, "{}: {}", d.path, d.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for InvalidInput {}

/// A validated input, laid out in slots. Borrows strings from the request
/// text (`'r`).
#[derive(Debug)]
pub struct Input<'r> {
    slots: Vec<Slot>,
    store: Store<'r>,
}

impl<'r> Input<'r> {
    /// Reads and validates an input object against the program's schema.
    pub fn parse(program: &Program, text: &'r str) -> Result<Input<'r>, InvalidInput> {
        let mut slots = vec![Slot::ABSENT; program.input_width()];
        let mut store = Store::new();
        Input::parse_into(program, text, &mut slots, &mut store)?;
        Ok(Input { slots, store })
    }

    /// Reads and validates an input object into `slots` (the input's
    /// width, all absent), keeping what they point at in `store`: many
    /// records share one store and one slot buffer in batch evaluation.
    pub(crate) fn parse_into(
        program: &Program,
        text: &'r str,
        slots: &mut [Slot],
        store: &mut Store<'r>,
    ) -> Result<(), InvalidInput> {
        let mut reader = Reader {
            program,
            store: std::mem::take(store),
            details: Vec::new(),
            path: vec![Segment::Name("input")],
        };
        let mut json = serde_json::Deserializer::from_str(text);
        let seed = Seed { reader: &mut reader, ty: program.contract.input, out: slots };
        let parsed = seed.deserialize(&mut json).and_then(|()| json.end());
        *store = reader.store;
        if let Err(e) = parsed {
            return Err(InvalidInput::one("input", format!("not valid JSON: {}", ir::quote::json_error(&e))));
        }
        if !reader.details.is_empty() {
            return Err(InvalidInput { details: reader.details });
        }
        Ok(())
    }

    /// Builds an input from already laid-out slots (used by tests and the
    /// benches' pre-validated inputs).
    pub fn record(&self) -> RecordRef<'_> {
        // SAFETY: the slots point into `self.store` or into text borrowed
        // for `'r`, both of which outlive this borrow of `self`.
        unsafe { RecordRef::new(&self.slots) }
    }

    /// The input's slots, for generated code.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The store behind the slots (kept alive with them).
    pub fn store(&self) -> &Store<'r> {
        &self.store
    }
}

/// A path segment.
#[derive(Clone, Copy)]
enum Segment<'p> {
    Name(&'p str),
    Index(usize),
}

/// Parsing state shared by the seeds.
struct Reader<'p, 'r> {
    program: &'p Program,
    store: Store<'r>,
    details: Vec<Detail>,
    path: Vec<Segment<'p>>,
}

impl Reader<'_, '_> {
    fn path(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                Segment::Name(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn problem(&mut self, message: String) {
        if self.details.len() < MAX_DETAILS {
            self.details.push(Detail { path: self.path(), message });
        }
    }

    fn type_name(&self, ty: TypeId) -> String {
        self.program.contract.types.display(ty).to_string()
    }
}

/// Reads one value of type `ty` into `out` (exactly its width in slots).
struct Seed<'s, 'p, 'r> {
    reader: &'s mut Reader<'p, 'r>,
    ty: TypeId,
    out: &'s mut [Slot],
}

impl<'de: 'r, 'r> DeserializeSeed<'de> for Seed<'_, '_, 'r> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let types = &self.reader.program.contract.types;
        let (ty, optional) = match types.kind(self.ty) {
            TypeKind::Optional(inner) => (*inner, true),
            _ => (self.ty, false),
        };
        let kind = types.kind(ty);
        if matches!(kind, TypeKind::Decimal | TypeKind::Int | TypeKind::Float) {
            let raw = <&'de RawValue>::deserialize(deserializer)?;
            number(self.reader, kind, raw.get(), optional, &mut self.out[0]);
            return Ok(());
        }
        deserializer.deserialize_any(ValueVisitor { reader: self.reader, ty, optional, out: self.out })
    }
}

/// Reads a decimal, an int or a float from its raw JSON text, so that a
/// number means what its text says (never a trip through `f64` for
/// decimals and ints) and a refusal shows the text as sent.
fn number(reader: &mut Reader<'_, '_>, kind: &TypeKind, raw: &str, optional: bool, out: &mut Slot) {
    if raw == "null" && optional {
        *out = Slot::ABSENT;
        return;
    }
    let parsed = match kind {
        TypeKind::Decimal => decimal(raw).map(Slot::decimal),
        TypeKind::Int => int(raw).map(Slot::int),
        _ => float(raw).map(Slot::float),
    };
    match parsed {
        Ok(slot) => *out = slot,
        Err(message) => reader.problem(message),
    }
}

/// Whether raw JSON text is a number (JSON numbers start with `-` or a
/// digit; the text is valid JSON).
fn is_number(raw: &str) -> bool {
    raw.starts_with(|c: char| c == '-' || c.is_ascii_digit())
}

/// A decimal from a JSON string or number, exactly (an exponent moves the
/// point: `1.50e1` is `15.0`); what would need rounding is refused.
fn decimal(raw: &str) -> Result<rust_decimal::Decimal, String> {
    if raw.starts_with('"') {
        let text = unquote(raw);
        return ir::value::parse_decimal(&text).map_err(|e| {
            if e.contains("fit") { e } else { format!("expected decimal, got {}", quote(&text)) }
        });
    }
    if !is_number(raw) {
        return Err(format!("expected decimal, got {}", describe_raw(raw)));
    }
    ir::value::parse_decimal_number(raw)
}

/// An int from a JSON number's digits (`-0` is 0); a fraction or an
/// exponent is refused, even when the value is whole.
fn int(raw: &str) -> Result<i64, String> {
    if !is_number(raw) {
        return Err(format!("expected int, got {}", describe_raw(raw)));
    }
    if raw.contains(['.', 'e', 'E']) {
        return Err(format!(
            "expected int, got {} (an int is written without a fraction or an exponent)",
            short(raw)
        ));
    }
    raw.parse().map_err(|_| format!("{} does not fit an int (64-bit)", short(raw)))
}

/// A float: the nearest `f64` to the number's text.
fn float(raw: &str) -> Result<f64, String> {
    if !is_number(raw) {
        return Err(format!("expected float, got {}", describe_raw(raw)));
    }
    match raw.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(format!("{} is beyond the range of a float (64-bit)", short(raw))),
    }
}

/// The text of a raw JSON string, escapes decoded.
fn unquote(raw: &str) -> Cow<'_, str> {
    if raw.contains('\\') {
        serde_json::from_str::<String>(raw).map(Cow::Owned).unwrap_or(Cow::Borrowed(""))
    } else {
        let quoted = &raw[1..];
        Cow::Borrowed(quoted.strip_suffix('"').unwrap_or(quoted))
    }
}

fn describe_raw(raw: &str) -> String {
    match raw.as_bytes().first() {
        Some(b'[') => "a list".into(),
        Some(b'{') => "an object".into(),
        Some(b'"') => quote(&unquote(raw)),
        _ => short(raw).into_owned(),
    }
}

struct ValueVisitor<'s, 'p, 'r> {
    reader: &'s mut Reader<'p, 'r>,
    /// The type without its optional wrapper.
    ty: TypeId,
    optional: bool,
    out: &'s mut [Slot],
}

impl<'s, 'p, 'r> ValueVisitor<'s, 'p, 'r> {
    fn shape(&self) -> &'p Shape {
        &self.reader.program.layouts.of(self.ty).shape
    }

    fn mismatch(self, got: String) {
        let expected = self.reader.type_name(self.ty);
        self.reader.problem(format!("expected {expected}, got {got}"));
    }

    fn set(self, slot: Slot) {
        self.out[0] = slot;
    }
}

impl<'de: 'r, 'r> Visitor<'de> for ValueVisitor<'_, '_, 'r> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a value of type {}", self.reader.program.contract.types.display(self.ty))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.optional {
            self.set(Slot::ABSENT);
        } else {
            self.mismatch("null".into());
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        match self.shape() {
            Shape::Bool => self.set(Slot::bool(value)),
            _ => self.mismatch(value.to_string()),
        }
        Ok(())
    }

    // Ints, floats and decimals are read from their text by [`number`];
    // a number reaching the visitor is for another type.
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.mismatch(value.to_string());
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.mismatch(value.to_string());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.mismatch(format!("{value:?}"));
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<(), E> {
        self.string(Cow::Borrowed(value));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<(), E> {
        self.string(Cow::Owned(value.to_string()));
        Ok(())
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<(), E> {
        self.string(Cow::Owned(value));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Shape::List { element, stride } = *self.shape() else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            self.mismatch("a list".into());
            return Ok(());
        };
        let stride = stride as usize;
        let mut elements: Vec<Slot> = Vec::new();
        let mut count = 0;
        loop {
            let start = elements.len();
            elements.resize(start + stride, Slot::ABSENT);
            self.reader.path.push(Segment::Index(count));
            let seed = Seed { reader: self.reader, ty: element, out: &mut elements[start..] };
            let more = seq.next_element_seed(seed);
            self.reader.path.pop();
            if more?.is_none() {
                elements.truncate(start);
                break;
            }
            count += 1;
        }
        let slot = self.reader.store.list(elements, count);
        self.out[0] = slot;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let types = &self.reader.program.contract.types;
        let Some(fields) = types.record_fields(self.ty) else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            self.mismatch("an object".into());
            return Ok(());
        };
        let layouts = &self.reader.program.layouts;
        let mut seen = vec![false; fields.len()];
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let Some(index) = self.reader.program.field_index(self.ty, &key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            seen[index] = true;
            let field = &fields[index];
            let offset = layouts.field_offset(self.ty, index as u32);
            let width = layouts.width(field.ty);
            self.reader.path.push(Segment::Name(&field.name));
            let result = map.next_value_seed(Seed {
                reader: self.reader,
                ty: field.ty,
                out: &mut self.out[offset..offset + width],
            });
            self.reader.path.pop();
            result?;
        }
        for (index, field) in fields.iter().enumerate() {
            if !seen[index] && types.optional_inner(field.ty).is_none() {
                self.reader.path.push(Segment::Name(&field.name));
                let expected = self.reader.type_name(field.ty);
                self.reader.problem(format!("missing: expected {expected}"));
                self.reader.path.pop();
            }
        }
        Ok(())
    }
}

/// An object key, borrowed from the request text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'r> ValueVisitor<'_, '_, 'r> {
    fn string(self, value: Cow<'r, str>) {
        let parsed = match (self.shape(), self.reader.program.contract.types.kind(self.ty)) {
            (Shape::Str, TypeKind::Enum(values)) if !values.iter().any(|v| *v == *value) => {
                Err(format!("{} is not one of {}", quote(&value), values.join(", ")))
            }
            (Shape::Str, _) => {
                let slot = match value {
                    Cow::Borrowed(text) => self.reader.store.borrowed_str(text),
                    Cow::Owned(text) => self.reader.store.owned_str(text),
                };
                Ok(slot)
            }
            (Shape::Timestamp, _) => ir::time::parse_timestamp(&value).map(Slot::timestamp),
            (Shape::Duration, _) => ir::time::parse_duration(&value).map(Slot::duration),
            _ => {
                let got = quote(&value);
                return self.mismatch(got);
            }
        };
        match parsed {
            Ok(slot) => self.set(slot),
            Err(message) => self.reader.problem(message),
        }
    }
}
