//! The IR of SIGNALS.md: windows (per-key aggregates over event time) and
//! models (ONNX scoring).
//!
//! A window's key, time and aggregate arguments are root expressions of
//! the contract's arena, like a let's value; `windows.<w>.<a>` reads an
//! aggregate ([`crate::ExprKind::Window`]). A model carries its file's
//! bytes and their sha256, so a bundle is all a runtime needs.

use std::sync::Arc;

use crate::ids::{ExprId, TypeId};
use crate::types::{TypeKind, TypeTable};

/// `windows: <name>: { key, time, span, grace, aggregates }`.
#[derive(Clone, PartialEq, Debug)]
pub struct Window {
    pub name: String,
    /// A string, int or enum expression over the input.
    pub key: ExprId,
    /// A timestamp expression over the input: the record's event time.
    pub time: ExprId,
    /// The trailing span, in nanoseconds (positive).
    pub span: i64,
    /// How late a record may be, in nanoseconds (zero or more).
    pub grace: i64,
    pub aggregates: Vec<Aggregate>,
}

/// One aggregate of a window: `total: sum(amount)`.
#[derive(Clone, PartialEq, Debug)]
pub struct Aggregate {
    pub name: String,
    pub kind: AggregateKind,
    /// The argument (`None` for `count()`).
    pub arg: Option<ExprId>,
    /// The aggregate's type: `int` for `count` and `distinct`, the
    /// argument's for `sum`, `max` and `min`.
    pub ty: TypeId,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AggregateKind {
    Count,
    Sum,
    Distinct,
    Max,
    Min,
}

impl AggregateKind {
    pub const ALL: [AggregateKind; 5] = [
        AggregateKind::Count,
        AggregateKind::Sum,
        AggregateKind::Distinct,
        AggregateKind::Max,
        AggregateKind::Min,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AggregateKind::Count => "count",
            AggregateKind::Sum => "sum",
            AggregateKind::Distinct => "distinct",
            AggregateKind::Max => "max",
            AggregateKind::Min => "min",
        }
    }

    pub fn named(name: &str) -> Option<AggregateKind> {
        AggregateKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// `models: <name>: { onnx, features, output }`.
#[derive(Clone, PartialEq, Debug)]
pub struct Model {
    pub name: String,
    /// The width of the one float input tensor, `[n, features]`.
    pub features: u32,
    pub output: ModelOutput,
    /// `sha256:<hex>` of `bytes` ([`crate::digest::sha256_of`]).
    pub sha256: String,
    /// The ONNX file's bytes (shared: contracts are cloned).
    pub bytes: Arc<[u8]>,
}

/// What a model's output is read as.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ModelOutput {
    /// The probability of class 1: from a `[n, 2]` or `[n]` output.
    Probability,
    /// A value: from a `[n, 1]` or `[n]` output.
    Value,
}

impl ModelOutput {
    pub const ALL: [ModelOutput; 2] = [ModelOutput::Probability, ModelOutput::Value];

    pub fn name(self) -> &'static str {
        match self {
            ModelOutput::Probability => "probability",
            ModelOutput::Value => "value",
        }
    }

    pub fn named(name: &str) -> Option<ModelOutput> {
        ModelOutput::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl Window {
    /// The root expressions of the window: its key, its time and its
    /// aggregates' arguments.
    pub fn roots(&self) -> impl Iterator<Item = ExprId> + '_ {
        [self.key, self.time].into_iter().chain(self.aggregates.iter().filter_map(|a| a.arg))
    }
}

impl AggregateKind {
    /// The type of an aggregate of this kind over an argument of type `arg`
    /// (`None` for `count()`), when the kind takes such an argument: the
    /// checker and the verifier share this rule.
    pub fn result_type(self, types: &TypeTable, arg: Option<TypeId>) -> Option<TypeId> {
        let kind_of = |ty: TypeId| types.get(ty);
        match (self, arg) {
            (AggregateKind::Count, None) => Some(TypeTable::INT),
            (AggregateKind::Sum, Some(ty))
                if matches!(ty, TypeTable::INT | TypeTable::DECIMAL | TypeTable::FLOAT) =>
            {
                Some(ty)
            }
            (AggregateKind::Max | AggregateKind::Min, Some(ty))
                if matches!(
                    ty,
                    TypeTable::INT
                        | TypeTable::DECIMAL
                        | TypeTable::FLOAT
                        | TypeTable::TIMESTAMP
                        | TypeTable::DURATION
                ) =>
            {
                Some(ty)
            }
            (AggregateKind::Distinct, Some(ty))
                if matches!(
                    kind_of(ty),
                    Some(TypeKind::String | TypeKind::Int | TypeKind::Bool | TypeKind::Enum(_))
                ) =>
            {
                Some(TypeTable::INT)
            }
            _ => None,
        }
    }
}
