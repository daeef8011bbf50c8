//! The type table: every type of a contract, interned once.
//!
//! Types are structural and hash-consed, so two `TypeId`s are equal exactly
//! when the types are. The seven primitive types have fixed ids
//! ([`TypeTable::BOOL`] ... [`TypeTable::DURATION`]) in every table.

use std::collections::HashMap;
use std::fmt;

use crate::ids::TypeId;

/// What a type is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    Bool,
    Int,
    Decimal,
    Float,
    String,
    Timestamp,
    Duration,
    List(TypeId),
    Optional(TypeId),
    Record(Vec<FieldDef>),
    /// A string whose values are known; the order is the declaration order.
    Enum(Vec<String>),
}

/// A named field of a record type.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDef {
    pub name: String,
    pub ty: TypeId,
}

/// The interned types of one contract.
#[derive(Clone, Debug)]
pub struct TypeTable {
    kinds: Vec<TypeKind>,
    index: HashMap<TypeKind, TypeId>,
}

/// The largest number of distinct types a contract may have.
pub const MAX_TYPES: usize = 1 << 16;

impl TypeTable {
    pub const BOOL: TypeId = TypeId(0);
    pub const INT: TypeId = TypeId(1);
    pub const DECIMAL: TypeId = TypeId(2);
    pub const FLOAT: TypeId = TypeId(3);
    pub const STRING: TypeId = TypeId(4);
    pub const TIMESTAMP: TypeId = TypeId(5);
    pub const DURATION: TypeId = TypeId(6);

    /// A table holding only the primitive types, at their fixed ids.
    pub fn new() -> Self {
        let mut table = TypeTable { kinds: Vec::new(), index: HashMap::new() };
        for kind in [
            TypeKind::Bool,
            TypeKind::Int,
            TypeKind::Decimal,
            TypeKind::Float,
            TypeKind::String,
            TypeKind::Timestamp,
            TypeKind::Duration,
        ] {
            table.intern(kind);
        }
        table
    }

    /// The id of `kind`, adding it when it is new.
    pub fn intern(&mut self, kind: TypeKind) -> TypeId {
        if let Some(&id) = self.index.get(&kind) {
            return id;
        }
        let id = TypeId::from_index(self.kinds.len());
        self.kinds.push(kind.clone());
        self.index.insert(kind, id);
        id
    }

    /// The id of `kind` if it is already interned.
    pub fn lookup(&self, kind: &TypeKind) -> Option<TypeId> {
        self.index.get(kind).copied()
    }

    pub fn list_of(&mut self, element: TypeId) -> TypeId {
        self.intern(TypeKind::List(element))
    }

    pub fn optional_of(&mut self, inner: TypeId) -> TypeId {
        self.intern(TypeKind::Optional(inner))
    }

    /// The kind of `id`.
    ///
    /// # Panics
    /// When `id` is not from this table: ids are checked by the verifier.
    pub fn kind(&self, id: TypeId) -> &TypeKind {
        &self.kinds[id.index()]
    }

    /// The kind of `id`, or `None` when the id is out of range.
    pub fn get(&self, id: TypeId) -> Option<&TypeKind> {
        self.kinds.get(id.index())
    }

    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Every type, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (TypeId, &TypeKind)> {
        self.kinds.iter().enumerate().map(|(i, k)| (TypeId::from_index(i), k))
    }

    /// The element type when `id` is a list.
    pub fn list_element(&self, id: TypeId) -> Option<TypeId> {
        match self.kind(id) {
            TypeKind::List(element) => Some(*element),
            _ => None,
        }
    }

    /// The inner type when `id` is optional.
    pub fn optional_inner(&self, id: TypeId) -> Option<TypeId> {
        match self.kind(id) {
            TypeKind::Optional(inner) => Some(*inner),
            _ => None,
        }
    }

    /// The fields when `id` is a record.
    pub fn record_fields(&self, id: TypeId) -> Option<&[FieldDef]> {
        match self.kind(id) {
            TypeKind::Record(fields) => Some(fields),
            _ => None,
        }
    }

    /// Whether values of `id` are strings: `string` or an enum.
    pub fn is_stringy(&self, id: TypeId) -> bool {
        matches!(self.kind(id), TypeKind::String | TypeKind::Enum(_))
    }

    /// Whether `id` is an int, decimal or float.
    pub fn is_numeric(&self, id: TypeId) -> bool {
        matches!(self.kind(id), TypeKind::Int | TypeKind::Decimal | TypeKind::Float)
    }

    /// Whether values of `id` have an order (`<`, `min`, `max`).
    pub fn is_ordered(&self, id: TypeId) -> bool {
        matches!(
            self.kind(id),
            TypeKind::Int
                | TypeKind::Decimal
                | TypeKind::Float
                | TypeKind::String
                | TypeKind::Enum(_)
                | TypeKind::Timestamp
                | TypeKind::Duration
        )
    }

    /// A printable form of `id`, as a contract author writes it.
    pub fn display(&self, id: TypeId) -> TypeDisplay<'_> {
        TypeDisplay { table: self, id }
    }
}

impl Default for TypeTable {
    fn default() -> Self {
        Self::new()
    }
}

/// Prints a type the way the contract language spells it.
#[derive(Debug)]
pub struct TypeDisplay<'a> {
    table: &'a TypeTable,
    id: TypeId,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(kind) = self.table.get(self.id) else {
            return write!(f, "<type #{}>", self.id.0);
        };
        match kind {
            TypeKind::Bool => f.write_str("bool"),
            TypeKind::Int => f.write_str("int"),
            TypeKind::Decimal => f.write_str("decimal"),
            TypeKind::Float => f.write_str("float"),
            TypeKind::String => f.write_str("string"),
            TypeKind::Timestamp => f.write_str("timestamp"),
            TypeKind::Duration => f.write_str("duration"),
            TypeKind::List(element) => write!(f, "list<{}>", self.table.display(*element)),
            TypeKind::Optional(inner) => write!(f, "{}?", self.table.display(*inner)),
            TypeKind::Record(fields) => {
                f.write_str("{ ")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", field.name, self.table.display(field.ty))?;
                }
                f.write_str(" }")
            }
            TypeKind::Enum(values) => write!(f, "enum [{}]", values.join(", ")),
        }
    }
}
