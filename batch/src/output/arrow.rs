//! Results as Arrow columns, one row per record (INTERFACES.md, Batch):
//! a [`ResultSink`] that appends each part straight into column buffers,
//! so no result is built as a value first.
//!
//! The columns, each present when its part is asked for (`decision` and
//! `error` always):
//!
//! | column | type |
//! | --- | --- |
//! | `decision` | `Dictionary<Int8, Utf8>`: `allow`, `deny`; null for a record not evaluated |
//! | `reasons` | `List<Struct<rule, outcome, message: Utf8>>` |
//! | `findings` | `List<Struct<rule, code, severity, message: Utf8>>` |
//! | `effects` | `Struct` of one field per declared effect, typed as below; null fields for effects no rule set |
//! | `errors` | `List<Struct<rule, message: Utf8>>` |
//! | `error` | `Struct<kind: Utf8, message: Utf8, details: List<Struct<path, message: Utf8>>>`: null for an evaluated record |
//!
//! Effect types: `bool` Boolean, `int` Int64, `float` Float64, `decimal`
//! Utf8 (its exact text, as in NDJSON: an Arrow decimal has one scale per
//! column, a rule's values do not), `string` and enums Utf8, `timestamp`
//! `Timestamp(ns, UTC)`, `duration` `Duration(ns)`, lists `List`, records
//! `Struct`.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, DurationNanosecondBuilder, Float64Builder, Int64Builder, StringBuilder,
    TimestampNanosecondBuilder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, DictionaryArray, Int8Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use ir::{TypeId, TypeKind, TypeTable, Verdict};
use runtime::result::{Parts, ResultSink, RowSink};
use runtime::value::Owned;
use runtime::{EvaluateError, InvalidInput};

/// The schema of the result columns for `contract` and `parts`, after
/// the `kept` columns.
pub fn result_schema(contract: &ir::Contract, parts: Parts, kept: &[Field]) -> SchemaRef {
    let mut fields: Vec<Field> = kept.to_vec();
    fields.push(Field::new("decision", decision_type(), true));
    if parts.has(Parts::REASONS) {
        fields.push(Field::new("reasons", entries_type(&["rule", "outcome", "message"]), true));
    }
    if parts.has(Parts::FINDINGS) {
        fields.push(Field::new("findings", entries_type(&["rule", "code", "severity", "message"]), true));
    }
    if parts.has(Parts::EFFECTS) {
        let effects: Fields = contract
            .effects
            .iter()
            .map(|e| Field::new(&e.name, arrow_type(&contract.types, e.ty), true))
            .collect();
        fields.push(Field::new("effects", DataType::Struct(effects), true));
    }
    if parts.has(Parts::ERRORS) {
        fields.push(Field::new("errors", entries_type(&["rule", "message"]), true));
    }
    fields.push(Field::new("error", error_type(), true));
    Arc::new(Schema::new(fields))
}

fn decision_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

fn text_fields(names: &[&str]) -> Fields {
    names.iter().map(|n| Field::new(*n, DataType::Utf8, false)).collect()
}

fn entries_type(names: &[&str]) -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(text_fields(names)), false)))
}

fn error_type() -> DataType {
    DataType::Struct(error_fields())
}

fn error_fields() -> Fields {
    Fields::from(vec![
        Field::new("kind", DataType::Utf8, false),
        Field::new("message", DataType::Utf8, true),
        Field::new("details", entries_type(&["path", "message"]), true),
    ])
}

/// The Arrow type of a contract type's values.
pub fn arrow_type(types: &TypeTable, ty: TypeId) -> DataType {
    match types.kind(ty) {
        TypeKind::Bool => DataType::Boolean,
        TypeKind::Int => DataType::Int64,
        TypeKind::Float => DataType::Float64,
        TypeKind::Decimal | TypeKind::String | TypeKind::Enum(_) => DataType::Utf8,
        TypeKind::Timestamp => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        TypeKind::Duration => DataType::Duration(TimeUnit::Nanosecond),
        TypeKind::Optional(inner) => arrow_type(types, *inner),
        TypeKind::List(element) => {
            DataType::List(Arc::new(Field::new("item", arrow_type(types, *element), true)))
        }
        TypeKind::Record(fields) => DataType::Struct(
            fields.iter().map(|f| Field::new(&f.name, arrow_type(types, f.ty), true)).collect(),
        ),
    }
}

/// A list of entries whose fields are all text.
#[derive(Debug)]
struct Entries {
    names: Fields,
    offsets: Vec<i32>,
    columns: Vec<StringBuilder>,
    nulls: NullBufferBuilder,
}

impl Entries {
    fn new(names: &[&str], rows: usize) -> Entries {
        Entries {
            names: text_fields(names),
            offsets: {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                offsets
            },
            columns: names.iter().map(|_| StringBuilder::with_capacity(rows, rows * 16)).collect(),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    fn push(&mut self, values: &[&str]) {
        for (column, value) in self.columns.iter_mut().zip(values) {
            column.append_value(value);
        }
    }

    /// Ends the current row's list (`present`: not null).
    fn end_row(&mut self, present: bool) {
        let len = self.columns.first().map_or(0, |c| c.len()) as i32;
        self.offsets.push(len);
        self.nulls.append(present);
    }

    fn finish(&mut self) -> ArrayRef {
        let columns: Vec<ArrayRef> =
            self.columns.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef).collect();
        let values = StructArray::new(self.names.clone(), columns, None);
        let field = Arc::new(Field::new("item", DataType::Struct(self.names.clone()), false));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut self.offsets)));
        Arc::new(ListArray::new(field, offsets, Arc::new(values), self.nulls.finish()))
    }
}

/// A column of values of one contract type.
#[derive(Debug)]
enum Column {
    Bool(BooleanBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
    Text(StringBuilder),
    Timestamp(TimestampNanosecondBuilder),
    Duration(DurationNanosecondBuilder),
    List { field: Arc<Field>, offsets: Vec<i32>, len: i32, nulls: NullBufferBuilder, items: Box<Column> },
    Record { fields: Fields, children: Vec<Column>, nulls: NullBufferBuilder },
}

impl Column {
    fn new(types: &TypeTable, ty: TypeId) -> Column {
        match types.kind(ty) {
            TypeKind::Bool => Column::Bool(BooleanBuilder::new()),
            TypeKind::Int => Column::Int(Int64Builder::new()),
            TypeKind::Float => Column::Float(Float64Builder::new()),
            TypeKind::Decimal | TypeKind::String | TypeKind::Enum(_) => Column::Text(StringBuilder::new()),
            TypeKind::Timestamp => Column::Timestamp(TimestampNanosecondBuilder::new().with_timezone("UTC")),
            TypeKind::Duration => Column::Duration(DurationNanosecondBuilder::new()),
            TypeKind::Optional(inner) => Column::new(types, *inner),
            TypeKind::List(element) => Column::List {
                field: Arc::new(Field::new("item", arrow_type(types, *element), true)),
                offsets: vec![0],
                len: 0,
                nulls: NullBufferBuilder::new(0),
                items: Box::new(Column::new(types, *element)),
            },
            TypeKind::Record(fields) => Column::Record {
                fields: fields.iter().map(|f| Field::new(&f.name, arrow_type(types, f.ty), true)).collect(),
                children: fields.iter().map(|f| Column::new(types, f.ty)).collect(),
                nulls: NullBufferBuilder::new(0),
            },
        }
    }

    fn append(&mut self, value: Option<&Owned>) {
        match (self, value) {
            (Column::Bool(b), Some(Owned::Bool(v))) => b.append_value(*v),
            (Column::Int(b), Some(Owned::Int(v))) => b.append_value(*v),
            (Column::Float(b), Some(Owned::Float(v))) => b.append_value(*v),
            (Column::Text(b), Some(Owned::String(v))) => b.append_value(v),
            (Column::Text(b), Some(Owned::Decimal(v))) => {
                let mut text = String::new();
                runtime::value::write_decimal(*v, &mut text);
                b.append_value(text);
            }
            (Column::Timestamp(b), Some(Owned::Timestamp(v))) => b.append_value(*v),
            (Column::Duration(b), Some(Owned::Duration(v))) => b.append_value(*v),
            (Column::List { offsets, len, nulls, items, .. }, value) => {
                let elements = match value {
                    Some(Owned::List(elements)) => Some(elements),
                    _ => None,
                };
                for element in elements.into_iter().flatten() {
                    items.append(Some(element));
                    *len += 1;
                }
                offsets.push(*len);
                nulls.append(elements.is_some());
            }
            (Column::Record { children, nulls, .. }, value) => {
                let values = match value {
                    Some(Owned::Record(values)) => Some(values),
                    _ => None,
                };
                for (k, child) in children.iter_mut().enumerate() {
                    child.append(values.and_then(|v| v.get(k)).map(|(_, v)| v));
                }
                nulls.append(values.is_some());
            }
            (column, _) => column.append_null(),
        }
    }

    fn append_null(&mut self) {
        match self {
            Column::Bool(b) => b.append_null(),
            Column::Int(b) => b.append_null(),
            Column::Float(b) => b.append_null(),
            Column::Text(b) => b.append_null(),
            Column::Timestamp(b) => b.append_null(),
            Column::Duration(b) => b.append_null(),
            Column::List { .. } | Column::Record { .. } => self.append(None),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(b) => Arc::new(b.finish()),
            Column::Int(b) => Arc::new(b.finish()),
            Column::Float(b) => Arc::new(b.finish()),
            Column::Text(b) => Arc::new(b.finish()),
            Column::Timestamp(b) => Arc::new(b.finish()),
            Column::Duration(b) => Arc::new(b.finish()),
            Column::List { field, offsets, len, nulls, items } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                *len = 0;
                Arc::new(ListArray::new(field.clone(), offsets, items.finish(), nulls.finish()))
            }
            Column::Record { fields, children, nulls } => {
                let columns = children.iter_mut().map(Column::finish).collect();
                Arc::new(StructArray::new(fields.clone(), columns, nulls.finish()))
            }
        }
    }
}

/// The result columns of one chunk, filled row by row.
#[derive(Debug)]
pub struct ArrowRows<'p> {
    contract: &'p ir::Contract,
    parts: Parts,
    decisions: Vec<Option<i8>>,
    reasons: Entries,
    findings: Entries,
    effect_names: Vec<&'p str>,
    effects: Vec<Column>,
    /// The row's next effect column (effects come in declaration order).
    next_effect: usize,
    effect_nulls: NullBufferBuilder,
    errors: Entries,
    error_kind: StringBuilder,
    error_message: StringBuilder,
    error_details: Entries,
    error_nulls: NullBufferBuilder,
}

impl<'p> ArrowRows<'p> {
    pub fn new(contract: &'p ir::Contract, parts: Parts, rows: usize) -> ArrowRows<'p> {
        ArrowRows {
            contract,
            parts,
            decisions: Vec::with_capacity(rows),
            reasons: Entries::new(&["rule", "outcome", "message"], rows),
            findings: Entries::new(&["rule", "code", "severity", "message"], rows),
            effect_names: contract.effects.iter().map(|e| e.name.as_str()).collect(),
            effects: contract.effects.iter().map(|e| Column::new(&contract.types, e.ty)).collect(),
            next_effect: 0,
            effect_nulls: NullBufferBuilder::new(rows),
            errors: Entries::new(&["rule", "message"], rows),
            error_kind: StringBuilder::new(),
            error_message: StringBuilder::new(),
            error_details: Entries::new(&["path", "message"], rows),
            error_nulls: NullBufferBuilder::new(rows),
        }
    }

    fn not_evaluated(&mut self, kind: &str, message: Option<&str>, details: bool) {
        self.decisions.push(None);
        self.end_parts(false);
        self.error_kind.append_value(kind);
        self.error_message.append_option(message);
        self.error_details.end_row(details);
        self.error_nulls.append(true);
    }

    /// A row that says why the results stop there (see
    /// [`Job::stopped`](crate::Job::stopped)).
    pub fn stopped(&mut self, kind: &str, message: &str) {
        self.not_evaluated(kind, Some(message), false);
    }

    /// Ends the row's result parts (`present`: the record was evaluated).
    fn end_parts(&mut self, present: bool) {
        if self.parts.has(Parts::REASONS) {
            self.reasons.end_row(present);
        }
        if self.parts.has(Parts::FINDINGS) {
            self.findings.end_row(present);
        }
        if self.parts.has(Parts::EFFECTS) {
            for column in &mut self.effects[self.next_effect..] {
                column.append_null();
            }
            self.next_effect = 0;
            self.effect_nulls.append(present);
        }
        if self.parts.has(Parts::ERRORS) {
            self.errors.end_row(present);
        }
    }

    /// About how many bytes the results so far take: their text (what
    /// grows with the rules that fire) and a word a row.
    pub fn bytes(&self) -> usize {
        let text = |entries: &Entries| entries.columns.iter().map(|c| c.values_slice().len()).sum::<usize>();
        self.decisions.len() * 8 + text(&self.reasons) + text(&self.findings) + text(&self.errors)
    }

    /// The chunk's batch: `kept` columns first, then the results.
    pub fn finish(mut self, schema: &SchemaRef, kept: Vec<ArrayRef>) -> Result<RecordBatch, String> {
        let mut columns = kept;
        let rows = self.decisions.len();
        let keys = Int8Array::from(std::mem::take(&mut self.decisions));
        let values = StringArray::from(vec![Verdict::Allow.name(), Verdict::Deny.name()]);
        let decision =
            DictionaryArray::<Int8Type>::try_new(keys, Arc::new(values)).map_err(|e| e.to_string())?;
        columns.push(Arc::new(decision));
        if self.parts.has(Parts::REASONS) {
            columns.push(self.reasons.finish());
        }
        if self.parts.has(Parts::FINDINGS) {
            columns.push(self.findings.finish());
        }
        if self.parts.has(Parts::EFFECTS) {
            let fields: Fields = self
                .contract
                .effects
                .iter()
                .map(|e| Field::new(&e.name, arrow_type(&self.contract.types, e.ty), true))
                .collect();
            let children = self.effects.iter_mut().map(Column::finish).collect();
            // With the length given: a contract may declare no effects.
            let effects =
                StructArray::try_new_with_length(fields, children, self.effect_nulls.finish(), rows)
                    .map_err(|e| format!("internal: effect columns: {e}"))?;
            columns.push(Arc::new(effects));
        }
        if self.parts.has(Parts::ERRORS) {
            columns.push(self.errors.finish());
        }
        let error_columns: Vec<ArrayRef> = vec![
            Arc::new(self.error_kind.finish()),
            Arc::new(self.error_message.finish()),
            self.error_details.finish(),
        ];
        columns.push(Arc::new(StructArray::new(error_fields(), error_columns, self.error_nulls.finish())));
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| format!("internal: result columns: {e}"))
    }
}

impl<'p> ResultSink<'p> for ArrowRows<'p> {
    fn parts(&self) -> Parts {
        self.parts
    }

    fn decision(&mut self, _contract: &'p str, _version: &'p str, decision: Verdict) {
        self.decisions.push(Some(match decision {
            Verdict::Allow => 0,
            Verdict::Deny => 1,
        }));
    }

    fn reason(&mut self, rule: &'p str, outcome: Verdict, message: &str) {
        self.reasons.push(&[rule, outcome.name(), message]);
    }

    fn finding(&mut self, rule: &'p str, code: &'p str, severity: &'p str, message: &str) {
        self.findings.push(&[rule, code, severity, message]);
    }

    fn effect(&mut self, name: &'p str, value: &Owned) {
        // Effects come in declaration order: the ones skipped are unset.
        let Some(k) = self.effect_names[self.next_effect..].iter().position(|n| *n == name) else { return };
        for column in &mut self.effects[self.next_effect..self.next_effect + k] {
            column.append_null();
        }
        self.effects[self.next_effect + k].append(Some(value));
        self.next_effect += k + 1;
    }

    fn error(&mut self, rule: &'p str, message: &str) {
        self.errors.push(&[rule, message]);
    }

    fn end(&mut self) {
        self.end_parts(true);
        // The error columns of an evaluated record: null.
        self.error_kind.append_value("");
        self.error_message.append_null();
        self.error_details.end_row(false);
        self.error_nulls.append(false);
    }
}

impl<'p> RowSink<'p> for ArrowRows<'p> {
    /// A record that was not evaluated: invalid input.
    fn invalid(&mut self, problem: &InvalidInput) {
        for detail in &problem.details {
            self.error_details.push(&[&detail.path, &detail.message]);
        }
        self.not_evaluated("invalid_input", None, true);
    }

    /// A record whose evaluation stopped (it ran out of time).
    fn failed(&mut self, error: &EvaluateError) {
        let kind = match error {
            EvaluateError::OutOfTime { .. } => "timeout",
            EvaluateError::WrongContract { .. } => "internal",
        };
        self.not_evaluated(kind, Some(&error.to_string()), false);
    }
}
