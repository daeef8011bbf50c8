//! The word codec: a value as the two 64-bit words native code keeps it
//! in, and back (`Slot`'s `a` and `b` words, with the tag from the type).

use ir::TypeId;
use rust_decimal::Decimal;

use crate::program::Program;
use crate::value::Value;
use crate::value::data::{RecordRef, Slot, pack_decimal};
use crate::value::layout::Shape;

use super::arena::Arena;

/// A value of type `ty` from the two words native code keeps it in.
pub(super) fn word_value<'a>(program: &'a Program, ty: TypeId, a: u64, b: u64) -> Value<'a> {
    match &program.layouts.of(ty).shape {
        Shape::Record { .. } => {
            let width = program.layouts.width(ty);
            // SAFETY: native code keeps a record as a pointer to its slots,
            // in the input or the program's constants, alive for `'a`.
            let slots = unsafe { std::slice::from_raw_parts(a as *const Slot, width) };
            // SAFETY: as above.
            Value::Record(unsafe { RecordRef::new(slots) })
        }
        shape => {
            // SAFETY: the words come from slots of the input or constants
            // (strings and lists point into them), alive for `'a`.
            unsafe {
                let slot = Slot::from_words(shape_tag(shape), a, b);
                crate::value::read_detached(&program.layouts, ty, slot)
            }
        }
    }
}

fn shape_tag(shape: &Shape) -> crate::value::data::Tag {
    use crate::value::data::Tag;
    match shape {
        Shape::Bool => Tag::Bool,
        Shape::Int => Tag::Int,
        Shape::Decimal => Tag::Decimal,
        Shape::Float => Tag::Float,
        Shape::Str => Tag::Str,
        Shape::Timestamp => Tag::Timestamp,
        Shape::Duration => Tag::Duration,
        Shape::List { .. } => Tag::List,
        Shape::Optional { .. } | Shape::Record { .. } => Tag::Absent,
    }
}

/// A value as the two words native code keeps it in; computed strings and
/// lists are copied into `arena`.
pub(super) fn value_words(program: &Program, ty: TypeId, value: &Value<'_>, arena: &mut Arena) -> (u64, u64) {
    match value {
        Value::Absent => (0, 0),
        Value::Bool(b) => (u64::from(*b), 0),
        Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => (*i as u64, 0),
        Value::Float(f) => (f.to_bits(), 0),
        Value::Decimal(d) => pack_decimal(*d),
        Value::Str(s) => (s.as_ptr() as u64, s.len() as u64),
        Value::Text(t) => arena.string(t),
        Value::Record(record) => (record.slots().as_ptr() as u64, 0),
        Value::List(list) => list.words(),
        Value::Items(items) => {
            let element = program.contract.types.list_element(ty).unwrap_or(ty);
            let tag = shape_tag(&program.layouts.of(element).shape);
            let slots = arena.slots(items.len());
            for (i, item) in items.iter().enumerate() {
                let (a, b) = value_words(program, element, item, arena);
                // SAFETY: `slots` has `items.len()` slots; the words are
                // the item's own (its text and elements live in `arena`
                // or in what `items` borrows).
                unsafe { *slots.add(i) = Slot::from_words(tag, a, b) };
            }
            (slots as u64, items.len() as u64)
        }
    }
}

/// A decimal's two words, for building constants in generated code.
pub fn decimal_words(d: Decimal) -> (u64, u64) {
    pack_decimal(d)
}

/// The slot tag of a scalar type (not a record, list or optional), for
/// list literals native code builds.
pub fn scalar_tag(program: &Program, ty: TypeId) -> Option<u64> {
    match &program.layouts.of(ty).shape {
        Shape::Record { .. } | Shape::List { .. } | Shape::Optional { .. } => None,
        shape => Some(shape_tag(shape) as u64),
    }
}

/// Whether a value of type `ty` is read as a record view (native code
/// keeps a pointer to its slots).
pub fn is_record(program: &Program, ty: TypeId) -> bool {
    matches!(program.layouts.of(ty).shape, Shape::Record { .. })
}

/// A string from its two words.
///
/// # Safety
/// `ptr..ptr+len` is a live UTF-8 string.
pub(super) unsafe fn text<'a>(ptr: *const u8, len: u64) -> &'a str {
    if len == 0 {
        return "";
    }
    // SAFETY: the caller passes a string slot's pointer and length.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len as usize)) }
}
