//! Records as Arrow record batches, in columns typed by the contract's
//! input, written by a [`BatchFile`]: Arrow IPC (file or stream format)
//! and Parquet here, Avro in [`super::avro`]. The columns: ints `Int64`, decimals `Decimal128(18, 2)` (the records'
//! decimals have two places, so a column holds exactly their text),
//! floats `Float64`, strings and enums `Utf8`, records `Struct`, lists
//! `List`, optional fields nullable. Top-level fields the contract does
//! not declare (the reference contract's wide records) are `Utf8` columns
//! too, found in the first record.

use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int64Array, ListArray, RecordBatch, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use ir::{TypeId, TypeKind, TypeTable};
use serde_json::Value;

use super::sink::RecordSink;

/// Rows per record batch written.
const BATCH_ROWS: usize = 8192;

/// The scale of every decimal column.
const SCALE: u32 = 2;

/// A file of record batches being written.
pub trait BatchFile {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String>;

    /// Completes the file.
    fn finish(self: Box<Self>) -> Result<(), String>;
}

/// Opens a [`BatchFile`] of batches of `schema` on `out` (when the first
/// batch is written: the schema is known then).
pub type Opener = fn(out: BufWriter<File>, schema: &SchemaRef) -> Result<Box<dyn BatchFile>, String>;

/// Arrow IPC, file format.
pub fn ipc_file(out: BufWriter<File>, schema: &SchemaRef) -> Result<Box<dyn BatchFile>, String> {
    Ok(Box::new(FileWriter::try_new(out, schema).map_err(|e| e.to_string())?))
}

/// Arrow IPC, stream format (what the HTTP batch endpoint takes).
pub fn ipc_stream(out: BufWriter<File>, schema: &SchemaRef) -> Result<Box<dyn BatchFile>, String> {
    Ok(Box::new(StreamWriter::try_new(out, schema).map_err(|e| e.to_string())?))
}

/// Rows in a Parquet row group: DuckDB's default. arrow-rs's (1Mi rows)
/// would make a 1M-record file one row group, which a query engine reads
/// as one partition, on one core (and one executor of a cluster).
const PARQUET_ROW_GROUP_ROWS: usize = 122_880;

/// Parquet (arrow-rs's writer, its default properties but for row groups
/// of [`PARQUET_ROW_GROUP_ROWS`]).
pub fn parquet(out: BufWriter<File>, schema: &SchemaRef) -> Result<Box<dyn BatchFile>, String> {
    let properties = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP_ROWS))
        .build();
    let file = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(properties))
        .map_err(|e| e.to_string())?;
    Ok(Box::new(file))
}

impl BatchFile for FileWriter<BufWriter<File>> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        FileWriter::write(self, batch).map_err(|e| e.to_string())
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        FileWriter::finish(&mut self).map_err(|e| e.to_string())
    }
}

impl BatchFile for StreamWriter<BufWriter<File>> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        StreamWriter::write(self, batch).map_err(|e| e.to_string())
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        StreamWriter::finish(&mut self).map_err(|e| e.to_string())
    }
}

impl BatchFile for parquet::arrow::ArrowWriter<BufWriter<File>> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        parquet::arrow::ArrowWriter::write(self, batch).map_err(|e| e.to_string())
    }

    fn finish(self: Box<Self>) -> Result<(), String> {
        self.close().map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Writes records to a [`BatchFile`], a batch at a time.
pub struct ArrowWriter {
    path: String,
    open: Opener,
    out: Option<BufWriter<File>>,
    file: Option<Box<dyn BatchFile>>,
    fields: Vec<Slot>,
    /// Whether the undeclared fields were looked for (in the first record).
    extras_found: bool,
    rows: usize,
}

impl std::fmt::Debug for ArrowWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrowWriter")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// A field: its name, whether it may be null, and its values.
#[derive(Debug)]
struct Slot {
    name: String,
    nullable: bool,
    column: Column,
}

/// The values of one column so far.
#[derive(Debug)]
enum Column {
    Bool(Vec<Option<bool>>),
    Int(Vec<Option<i64>>),
    Decimal(Vec<Option<i128>>),
    Float(Vec<Option<f64>>),
    Str(StringBuilder),
    List { element: Box<Slot>, offsets: Vec<i32>, valid: Vec<bool> },
    Record { fields: Vec<Slot>, valid: Vec<bool> },
}

impl ArrowWriter {
    /// A writer of records of `contract`'s input to `path`, in the file
    /// `open` opens.
    pub fn create(
        path: &std::path::Path,
        contract: &ir::Contract,
        open: Opener,
    ) -> Result<ArrowWriter, String> {
        let TypeKind::Record(fields) = contract.types.kind(contract.input) else {
            return Err("the contract's input is not a record".into());
        };
        let fields = fields.iter().map(|f| slot(&contract.types, &f.name, f.ty)).collect::<Result<_, _>>()?;
        let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(ArrowWriter {
            path: path.display().to_string(),
            open,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            file: None,
            fields,
            extras_found: false,
            rows: 0,
        })
    }

    /// Writes the rows so far as one batch (the file's schema comes with
    /// the first).
    fn flush(&mut self) -> Result<(), String> {
        let columns: Vec<ArrayRef> = self.fields.iter_mut().map(|s| s.column.finish()).collect();
        let schema = Arc::new(Schema::new(self.fields.iter().map(Slot::field).collect::<Vec<_>>()));
        let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| format!("internal: {e}"))?;
        if self.file.is_none() {
            let out = self.out.take().ok_or("internal: the Arrow file is gone")?;
            self.file = Some((self.open)(out, &schema).map_err(|e| self.failed(e))?);
        }
        let file = self.file.as_mut().ok_or("internal: the Arrow file is gone")?;
        file.write(&batch).map_err(|e| format!("cannot write {}: {e}", self.path))?;
        self.rows = 0;
        Ok(())
    }

    fn failed(&self, e: impl std::fmt::Display) -> String {
        format!("cannot write {}: {e}", self.path)
    }

    /// Adds a `Utf8` column for each top-level string field of `record`
    /// that the contract does not declare.
    fn find_extras(&mut self, record: &serde_json::Map<String, Value>) -> Result<(), String> {
        self.extras_found = true;
        for (name, value) in record {
            if self.fields.iter().any(|s| &s.name == name) {
                continue;
            }
            if !value.is_string() {
                return Err(format!("the undeclared field `{name}` is not a string: it has no Arrow column"));
            }
            self.fields.push(Slot {
                name: name.clone(),
                nullable: true,
                column: Column::Str(StringBuilder::new()),
            });
        }
        Ok(())
    }
}

impl RecordSink for ArrowWriter {
    fn write(&mut self, record: &Value) -> Result<(), String> {
        let Value::Object(fields) = record else { return Err("a record is not a JSON object".into()) };
        if !self.extras_found {
            self.find_extras(fields)?;
        }
        for slot in &mut self.fields {
            slot.push(fields.get(&slot.name), "")?;
        }
        self.rows += 1;
        if self.rows == BATCH_ROWS { self.flush() } else { Ok(()) }
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        if self.rows > 0 || self.file.is_none() {
            self.flush()?;
        }
        let file = self.file.take().ok_or("internal: the Arrow file is gone")?;
        file.finish().map_err(|e| self.failed(e))
    }
}

/// The slot of a field of type `ty`.
fn slot(types: &TypeTable, name: &str, ty: TypeId) -> Result<Slot, String> {
    let (nullable, ty) = match types.kind(ty) {
        TypeKind::Optional(inner) => (true, *inner),
        _ => (false, ty),
    };
    let column = match types.kind(ty) {
        TypeKind::Bool => Column::Bool(Vec::new()),
        TypeKind::Int => Column::Int(Vec::new()),
        TypeKind::Decimal => Column::Decimal(Vec::new()),
        TypeKind::Float => Column::Float(Vec::new()),
        TypeKind::String | TypeKind::Enum(_) | TypeKind::Timestamp | TypeKind::Duration => {
            Column::Str(StringBuilder::new())
        }
        TypeKind::List(element) => Column::List {
            element: Box::new(slot(types, "item", *element)?),
            offsets: vec![0],
            valid: Vec::new(),
        },
        TypeKind::Record(fields) => Column::Record {
            fields: fields.iter().map(|f| slot(types, &f.name, f.ty)).collect::<Result<_, _>>()?,
            valid: Vec::new(),
        },
        TypeKind::Optional(_) => return Err(format!("`{name}` is an optional of an optional")),
    };
    Ok(Slot { name: name.to_string(), nullable, column })
}

impl Slot {
    fn field(&self) -> Field {
        Field::new(&self.name, self.column.data_type(), self.nullable)
    }

    /// Appends `value` (`None` or null: a null), or says why it does not
    /// fit, naming its path (`parent`, the record's path, then the name).
    fn push(&mut self, value: Option<&Value>, parent: &str) -> Result<(), String> {
        let Slot { name, column, .. } = self;
        let value = value.filter(|v| !v.is_null());
        let path = || if parent.is_empty() { name.clone() } else { format!("{parent}.{name}") };
        let unfit = || format!("`{}` does not hold {value:?}", path());
        match column {
            Column::Bool(values) => values.push(value.map(|v| v.as_bool().ok_or_else(unfit)).transpose()?),
            Column::Int(values) => values.push(value.map(|v| v.as_i64().ok_or_else(unfit)).transpose()?),
            Column::Float(values) => values.push(value.map(|v| v.as_f64().ok_or_else(unfit)).transpose()?),
            Column::Decimal(values) => values.push(value.map(|v| mantissa(v).ok_or_else(unfit)).transpose()?),
            Column::Str(builder) => {
                builder.append_option(value.map(|v| v.as_str().ok_or_else(unfit)).transpose()?)
            }
            Column::List { element, offsets, valid } => {
                let items = value.map(|v| v.as_array().ok_or_else(unfit)).transpose()?;
                if let Some(items) = items.filter(|items| !items.is_empty()) {
                    let here = path();
                    for item in items {
                        element.push(Some(item), &here)?;
                    }
                }
                let end = i32::try_from(element.column.len())
                    .map_err(|_| format!("`{}`: too many list elements for one batch", path()))?;
                offsets.push(end);
                valid.push(items.is_some());
            }
            Column::Record { fields, valid } => {
                let record = value.map(|v| v.as_object().ok_or_else(unfit)).transpose()?;
                let here = path();
                for field in fields.iter_mut() {
                    field.push(record.and_then(|r| r.get(&field.name)), &here)?;
                }
                valid.push(record.is_some());
            }
        }
        Ok(())
    }
}

impl Column {
    fn data_type(&self) -> DataType {
        match self {
            Column::Bool(_) => DataType::Boolean,
            Column::Int(_) => DataType::Int64,
            Column::Decimal(_) => DataType::Decimal128(18, SCALE as i8),
            Column::Float(_) => DataType::Float64,
            Column::Str(_) => DataType::Utf8,
            Column::List { element, .. } => DataType::List(Arc::new(element.field())),
            Column::Record { fields, .. } => DataType::Struct(record_fields(fields)),
        }
    }

    /// Values so far (the element count of a list's child).
    fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::Int(v) => v.len(),
            Column::Decimal(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Str(b) => b.len(),
            Column::List { valid, .. } | Column::Record { valid, .. } => valid.len(),
        }
    }

    /// The values so far as an array; the column is empty again.
    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(v) => Arc::new(BooleanArray::from(std::mem::take(v))),
            Column::Int(v) => Arc::new(Int64Array::from(std::mem::take(v))),
            Column::Float(v) => Arc::new(Float64Array::from(std::mem::take(v))),
            Column::Decimal(v) => Arc::new(
                Decimal128Array::from(std::mem::take(v))
                    .with_precision_and_scale(18, SCALE as i8)
                    .unwrap_or_else(|_| Decimal128Array::from(Vec::<i128>::new())),
            ),
            Column::Str(b) => Arc::new(b.finish()),
            Column::List { element, offsets, valid } => {
                let field = Arc::new(element.field());
                let values = element.column.finish();
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let nulls = NullBuffer::from(std::mem::take(valid));
                Arc::new(ListArray::new(field, offsets, values, Some(nulls)))
            }
            Column::Record { fields, valid } => {
                let arrays = fields.iter_mut().map(|f| f.column.finish()).collect();
                let nulls = NullBuffer::from(std::mem::take(valid));
                Arc::new(StructArray::new(record_fields(fields), arrays, Some(nulls)))
            }
        }
    }
}

fn record_fields(fields: &[Slot]) -> Fields {
    fields.iter().map(Slot::field).collect()
}

/// A decimal's mantissa at [`SCALE`] from its JSON text (a string or a
/// number), or `None` when it has more places or is not a decimal.
fn mantissa(value: &Value) -> Option<i128> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (whole, places) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty()
        || places.len() > SCALE as usize
        || !(whole.bytes().chain(places.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut mantissa: i128 = format!("{whole}{places:0<width$}", width = SCALE as usize).parse().ok()?;
    if negative {
        mantissa = -mantissa;
    }
    Some(mantissa)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_keep_their_text_at_two_places() {
        let cases =
            [("12.34", Some(1234)), ("-5", Some(-500)), ("0.5", Some(50)), ("1.234", None), ("x", None)];
        for (text, expected) in cases {
            assert_eq!(mantissa(&Value::String(text.into())), expected, "{text}");
        }
    }
}
