//! Values during evaluation, and how they are shown: in messages and in
//! the result's JSON.
//!
//! A [`Value`] borrows from the input and the contract's constants
//! (strings, records and lists are views, never copies); only computed
//! strings and lists own their data. Rendering rules (LANGUAGE.md,
//! Messages): decimals keep their scale, ints are digits, floats use Rust's
//! shortest round-trip form, lists are `[a, b]`.

pub mod data;
pub mod decimal;
pub mod layout;
mod owned;

pub use owned::Owned;

use std::fmt::Write as _;
use std::rc::Rc;

use ir::{TypeId, TypeKind, TypeTable};
use rust_decimal::Decimal;

use crate::value::data::{ListRef, RecordRef, Slot};
use crate::value::layout::{Layouts, Shape};

/// A value being computed. The tag is a whole word, so every payload is
/// word-aligned and a move is three aligned words (with a byte tag, the
/// compiler copies the padding after it in odd pieces, which stalls store
/// forwarding on the interpreter's hot path).
#[derive(Clone, Debug)]
#[repr(u64)]
pub enum Value<'a> {
    /// An optional without a value.
    Absent,
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    /// Nanoseconds since the Unix epoch.
    Timestamp(i64),
    /// Nanoseconds.
    Duration(i64),
    /// A string (or enum value) from the input or the contract.
    Str(&'a str),
    /// A computed string.
    Text(Rc<str>),
    /// A record laid out in slots.
    Record(RecordRef<'a>),
    /// A list laid out in slots; its element type is the reader's to know.
    List(ListRef<'a>),
    /// A computed list.
    Items(Rc<[Value<'a>]>),
}

impl<'a> Value<'a> {
    /// The string of a `Str` or `Text` value.
    pub fn as_str(&self) -> &str {
        match self {
            Value::Str(s) => s,
            Value::Text(s) => s,
            _ => "",
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Value::Absent)
    }

    /// The number of elements of a list value.
    pub fn list_len(&self) -> usize {
        match self {
            Value::List(list) => list.len(),
            Value::Items(items) => items.len(),
            _ => 0,
        }
    }

    /// Element `i` of a list value whose elements have type `element`.
    pub fn list_get(&self, layouts: &Layouts, element: TypeId, i: usize) -> Value<'a> {
        match self {
            Value::List(list) => read_element(layouts, *list, element, i),
            Value::Items(items) => items[i].clone(),
            _ => Value::Absent,
        }
    }
}

/// What decoding and rendering need: the types and their layouts.
#[derive(Clone, Copy, Debug)]
pub struct Schema<'s> {
    pub types: &'s TypeTable,
    pub layouts: &'s Layouts,
}

/// Reads a value of type `ty` laid out at `offset` of `record`.
pub fn read<'a>(layouts: &Layouts, record: RecordRef<'a>, offset: usize, ty: TypeId) -> Value<'a> {
    let layout = layouts.of(ty);
    match &layout.shape {
        Shape::Record { .. } => Value::Record(record.record(offset, layout.width as usize)),
        Shape::Str => Value::Str(record.str(offset)),
        Shape::List { stride, .. } => Value::List(record.list(offset, *stride as usize)),
        shape => read_scalar(
            layouts,
            shape,
            record.slot(offset),
            || record.str(offset),
            |s| record.list(offset, s),
        ),
    }
}

/// Reads a scalar, string, list or optional value from a slot that is not
/// inside a view (native code keeps values as slot words).
///
/// # Safety
/// Strings and list elements the slot points at must stay valid for `'a`.
pub unsafe fn read_detached<'a>(layouts: &Layouts, ty: TypeId, slot: Slot) -> Value<'a> {
    let shape = &layouts.of(ty).shape;
    match shape {
        // SAFETY: the caller vouches for the pointers.
        Shape::Str => Value::Str(unsafe { crate::value::data::detached_str(slot) }),
        Shape::List { stride, .. } => {
            // SAFETY: the caller vouches for the pointers.
            Value::List(unsafe { crate::value::data::detached_list(slot, *stride as usize) })
        }
        Shape::Optional { inner } if slot.is_absent() => {
            let _ = inner;
            Value::Absent
        }
        // SAFETY: the caller vouches for the pointers, as for the slot's.
        Shape::Optional { inner } => unsafe { read_detached(layouts, *inner, slot) },
        Shape::Record { .. } => Value::Absent,
        primitive => read_primitive(primitive, &slot).unwrap_or(Value::Absent),
    }
}

/// A slot of a primitive shape (bool, int, decimal, float, timestamp,
/// duration) as a value; `None` for the other shapes.
fn read_primitive(shape: &Shape, slot: &Slot) -> Option<Value<'static>> {
    Some(match shape {
        Shape::Bool => Value::Bool(slot.as_bool()),
        Shape::Int => Value::Int(slot.as_int()),
        Shape::Decimal => Value::Decimal(slot.as_decimal()),
        Shape::Float => Value::Float(slot.as_float()),
        Shape::Timestamp => Value::Timestamp(slot.as_int()),
        Shape::Duration => Value::Duration(slot.as_int()),
        _ => return None,
    })
}

/// Reads element `i` of a slot list whose elements have type `element`.
pub fn read_element<'a>(layouts: &Layouts, list: ListRef<'a>, element: TypeId, i: usize) -> Value<'a> {
    let layout = layouts.of(element);
    match &layout.shape {
        Shape::Record { .. } => Value::Record(list.record(i)),
        Shape::Str => Value::Str(list.str(i)),
        Shape::List { stride, .. } => Value::List(list.list(i, *stride as usize)),
        shape => read_scalar(layouts, shape, list.slot(i), || list.str(i), |s| list.list(i, s)),
    }
}

/// A scalar or optional slot as a value.
fn read_scalar<'a>(
    layouts: &Layouts,
    shape: &Shape,
    slot: &'a Slot,
    text: impl Fn() -> &'a str,
    list: impl Fn(usize) -> ListRef<'a>,
) -> Value<'a> {
    match shape {
        Shape::Str => Value::Str(text()),
        Shape::Optional { inner } => {
            if slot.is_absent() {
                return Value::Absent;
            }
            match &layouts.of(*inner).shape {
                Shape::List { stride, .. } => Value::List(list(*stride as usize)),
                inner_shape => read_scalar(layouts, inner_shape, slot, text, list),
            }
        }
        // Records and lists are handled by the callers.
        Shape::List { .. } | Shape::Record { .. } => Value::Absent,
        primitive => read_primitive(primitive, slot).unwrap_or(Value::Absent),
    }
}

/// Appends a value of type `ty` as a message shows it.
pub fn render(schema: &Schema<'_>, ty: TypeId, value: &Value<'_>, out: &mut String) {
    match value {
        Value::Absent => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Decimal(d) => write_decimal(*d, out),
        Value::Float(f) => {
            let _ = write!(out, "{f}");
        }
        Value::Timestamp(t) => out.push_str(&ir::time::format_timestamp(*t)),
        Value::Duration(d) => out.push_str(&ir::time::format_duration(*d)),
        Value::Str(s) => out.push_str(s),
        Value::Text(s) => out.push_str(s),
        Value::Record(record) => {
            // Only `--explain` shows records: messages cannot.
            out.push('{');
            for (i, field) in schema.types.record_fields(ty).unwrap_or(&[]).iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&field.name);
                out.push_str(": ");
                let offset = schema.layouts.field_offset(ty, i as u32);
                render(schema, field.ty, &read(schema.layouts, *record, offset, field.ty), out);
            }
            out.push('}');
        }
        Value::List(..) | Value::Items(_) => {
            let element = list_element(schema, ty);
            out.push('[');
            for i in 0..value.list_len() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(schema, element, &value.list_get(schema.layouts, element, i), out);
            }
            out.push(']');
        }
    }
}

/// Writes a decimal with its scale; a zero is never shown negative.
pub fn write_decimal(d: Decimal, out: &mut String) {
    crate::value::decimal::write(d, out);
}

/// Appends a value's JSON form, as a value of type `ty`: decimals,
/// timestamps and durations as strings, records as objects.
pub fn write_json(schema: &Schema<'_>, ty: TypeId, value: &Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::Absent => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => {
            let _ = std::io::Write::write_fmt(out, format_args!("{i}"));
        }
        Value::Float(f) => {
            let _ = serde_json::to_writer(&mut *out, f);
        }
        Value::Decimal(_) | Value::Timestamp(_) | Value::Duration(_) => {
            let mut text = String::new();
            render(schema, ty, value, &mut text);
            write_json_str(&text, out);
        }
        Value::Str(s) => write_json_str(s, out),
        Value::Text(s) => write_json_str(s, out),
        Value::Record(record) => {
            let fields = schema.types.record_fields(ty).unwrap_or(&[]);
            out.push(b'{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(&field.name, out);
                out.push(b':');
                let offset = schema.layouts.field_offset(ty, i as u32);
                write_json(schema, field.ty, &read(schema.layouts, *record, offset, field.ty), out);
            }
            out.push(b'}');
        }
        Value::List(..) | Value::Items(_) => {
            let element = list_element(schema, ty);
            out.push(b'[');
            for i in 0..value.list_len() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(schema, element, &value.list_get(schema.layouts, element, i), out);
            }
            out.push(b']');
        }
    }
}

/// The element type of a list type (seen through an optional).
pub fn list_element(schema: &Schema<'_>, ty: TypeId) -> TypeId {
    match schema.types.kind(ty) {
        TypeKind::List(element) => *element,
        TypeKind::Optional(inner) => schema.types.list_element(*inner).unwrap_or(*inner),
        _ => ty,
    }
}

/// Renders a message template: its text, with each interpolated
/// expression appended by `value`. Both engines render through here; only
/// where a value comes from differs.
#[inline(always)]
pub fn render_template<E>(
    template: &ir::Template,
    value: impl FnMut(ir::ExprId, &mut String) -> Result<(), E>,
) -> Result<String, E> {
    let mut out = String::with_capacity(template.capacity_hint());
    render_template_into(template, &mut out, value)?;
    Ok(out)
}

/// [`render_template`], appending to `out`.
#[inline(always)]
pub fn render_template_into<E>(
    template: &ir::Template,
    out: &mut String,
    mut value: impl FnMut(ir::ExprId, &mut String) -> Result<(), E>,
) -> Result<(), E> {
    for part in &template.parts {
        match part {
            ir::TemplatePart::Text(text) => out.push_str(text),
            ir::TemplatePart::Expr(id) => value(*id, out)?,
        }
    }
    Ok(())
}

/// Appends a JSON string literal, as serde_json writes it: most texts
/// (rule names, codes, messages) need no escape and are copied whole.
pub fn write_json_str(text: &str, out: &mut Vec<u8>) {
    if needs_escape(text.as_bytes()) {
        let _ = serde_json::to_writer(&mut *out, text);
    } else {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

/// Whether some byte of `bytes` is a control character, `"` or `\\`,
/// looked for eight bytes at a time (the bytes under 0x20 of a word, and
/// its bytes equal to a quote or a backslash, found by borrows into each
/// byte's top bit; a false alarm would only take the slow path).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOPS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w & TOPS;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let w = u64::from_le_bytes(eight);
        let control = w.wrapping_sub(ONES * 0x20) & !w & TOPS;
        if control | zero_byte(w ^ (ONES * u64::from(b'"'))) | zero_byte(w ^ (ONES * u64::from(b'\\'))) != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    /// Every byte value that can start or sit in a string, alone and
    /// among plain text, is written as serde_json writes it.
    #[test]
    fn json_strings_are_written_as_serde_json_writes_them() {
        let mut texts: Vec<String> = (0u32..0x80).filter_map(char::from_u32).map(String::from).collect();
        texts.extend(
            ["", "plain text", "a \"quote\"", "back\\slash", "tab\there", "é ü 日本 🦀", "\u{7f}\u{2028}"]
                .map(String::from),
        );
        // Each at every place of an eight-byte word, and past it.
        let mixed: Vec<String> = texts
            .iter()
            .flat_map(|t| (0..18).map(move |at| format!("{}{t}{}", "a".repeat(at), "b".repeat(at % 5))))
            .collect();
        for text in texts.iter().chain(&mixed) {
            let mut out = Vec::new();
            super::write_json_str(text, &mut out);
            assert_eq!(String::from_utf8(out).ok(), serde_json::to_string(text).ok(), "{text:?}");
        }
    }
}
