//! Where each type's values sit in slots: widths and field offsets,
//! computed once per contract at load.
//!
//! Scalars, optionals and lists take one slot; a record takes the sum of
//! its fields' widths, fields in declaration order.

use ir::{TypeId, TypeKind, TypeTable};

/// How a value of one type is read from slots.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Bool,
    Int,
    Decimal,
    Float,
    /// A string or an enum value.
    Str,
    Timestamp,
    Duration,
    /// One slot pointing at elements of `element`, each `stride` wide.
    List {
        element: TypeId,
        stride: u32,
    },
    /// One slot that may be absent; present, it is read as `inner`.
    Optional {
        inner: TypeId,
    },
    /// Fields inline: `offsets[i]` is field `i`'s first slot.
    Record {
        offsets: Vec<u32>,
    },
}

/// A type's shape and width in slots.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: u32,
    pub shape: Shape,
}

/// Layouts of every type of a contract, by `TypeId`.
#[derive(Clone, Debug)]
pub struct Layouts {
    by_type: Vec<Layout>,
}

impl Layouts {
    /// Computes every layout. Types refer only to earlier ids (a verifier
    /// invariant), so one forward pass suffices.
    pub fn new(types: &TypeTable) -> Layouts {
        let mut by_type: Vec<Layout> = Vec::with_capacity(types.len());
        for (_, kind) in types.iter() {
            let scalar = |shape| Layout { width: 1, shape };
            let layout = match kind {
                TypeKind::Bool => scalar(Shape::Bool),
                TypeKind::Int => scalar(Shape::Int),
                TypeKind::Decimal => scalar(Shape::Decimal),
                TypeKind::Float => scalar(Shape::Float),
                TypeKind::String | TypeKind::Enum(_) => scalar(Shape::Str),
                TypeKind::Timestamp => scalar(Shape::Timestamp),
                TypeKind::Duration => scalar(Shape::Duration),
                TypeKind::List(element) => {
                    scalar(Shape::List { element: *element, stride: by_type[element.index()].width.max(1) })
                }
                TypeKind::Optional(inner) => scalar(Shape::Optional { inner: *inner }),
                TypeKind::Record(fields) => {
                    let mut offsets = Vec::with_capacity(fields.len());
                    let mut width = 0;
                    for field in fields {
                        offsets.push(width);
                        width += by_type[field.ty.index()].width;
                    }
                    Layout { width, shape: Shape::Record { offsets } }
                }
            };
            by_type.push(layout);
        }
        Layouts { by_type }
    }

    pub fn of(&self, ty: TypeId) -> &Layout {
        &self.by_type[ty.index()]
    }

    pub fn width(&self, ty: TypeId) -> usize {
        self.by_type[ty.index()].width as usize
    }

    /// The offset of field `index` within a record of type `ty`.
    pub fn field_offset(&self, ty: TypeId, index: u32) -> usize {
        match &self.by_type[ty.index()].shape {
            Shape::Record { offsets } => offsets[index as usize] as usize,
            _ => 0,
        }
    }
}
