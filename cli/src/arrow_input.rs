//! Arrow IPC input for batch evaluation (`rulec eval --input x.arrow`).
//!
//! Record batches (the IPC file format, or the stream format) are read one
//! at a time, and each row becomes the JSON record the NDJSON path reads:
//! both formats go through the same validation, so they give the same
//! results and the same errors, with the same paths. Columns map to input
//! fields by name; a null is an absent field; nested structs and lists map
//! to records and lists. Decimals keep their exact digits, timestamps are
//! instants (a column without a time zone is read as UTC), durations keep
//! their unit. A type with no counterpart in contracts (binary, dates,
//! intervals, maps, unions) is refused when the file is opened, naming the
//! column.
//!
//! The Arrow reader can panic on malformed files (an offset past a
//! buffer's end); every call into it runs under [`contained`], so a
//! damaged file is an error message, never a crash.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, DecimalType, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, TimeUnit};

/// The first bytes of the IPC file format (the stream format has none).
const FILE_MAGIC: &[u8; 6] = b"ARROW1";

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;

/// The rows of an Arrow IPC file, as JSON records, a chunk at a time.
pub struct ArrowRecords {
    batches: Batches,
    /// The batch being read, and its next row.
    current: Option<(RecordBatch, usize)>,
    /// The file and the batches read so far, for error messages.
    path: String,
    batch_number: usize,
}

impl ArrowRecords {
    /// Opens `path` (IPC file or stream format, told apart by its first
    /// bytes) and checks that every column has a type contracts can read.
    pub fn open(path: &Path) -> Result<ArrowRecords, String> {
        contained(&path.display().to_string(), || ArrowRecords::open_file(path))
    }

    fn open_file(path: &Path) -> Result<ArrowRecords, String> {
        let shown = path.display();
        let mut file = File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let mut magic = [0u8; 6];
        let is_file_format = file.read_exact(&mut magic).is_ok() && &magic == FILE_MAGIC;
        file.seek(SeekFrom::Start(0)).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let not_arrow = |e: ArrowError| format!("{shown} is not a readable Arrow IPC file: {e}");
        let (schema, batches): (_, Batches) = if is_file_format {
            let reader = arrow_ipc::reader::FileReader::try_new_buffered(file, None).map_err(not_arrow)?;
            (reader.schema(), Box::new(reader))
        } else {
            let reader =
                arrow_ipc::reader::StreamReader::try_new(BufReader::new(file), None).map_err(not_arrow)?;
            (reader.schema(), Box::new(reader))
        };
        check_schema(&schema).map_err(|e| format!("{shown}: {e}"))?;
        Ok(ArrowRecords { batches, current: None, path: shown.to_string(), batch_number: 0 })
    }

    /// Replaces `lines` with up to `max` records, one JSON object each;
    /// empty at the end of the file.
    pub fn next_chunk(&mut self, lines: &mut Vec<String>, max: usize) -> Result<(), String> {
        let batch = format!("{}, record batch {}", self.path, self.batch_number + 1);
        contained(&batch, || self.read_chunk(lines, max))
    }

    fn read_chunk(&mut self, lines: &mut Vec<String>, max: usize) -> Result<(), String> {
        lines.clear();
        while lines.len() < max {
            let Some((batch, row)) = &mut self.current else {
                match self.batches.next() {
                    None => break,
                    Some(Ok(batch)) => {
                        self.batch_number += 1;
                        self.current = Some((batch, 0));
                        continue;
                    }
                    Some(Err(e)) => {
                        return Err(format!("{}, record batch {}: {e}", self.path, self.batch_number + 1));
                    }
                }
            };
            let end = batch.num_rows().min(*row + (max - lines.len()));
            let (fields, columns) = (batch.schema_ref().fields(), batch.columns());
            lines.extend((*row..end).map(|r| record_json(fields, columns, r)));
            *row = end;
            if end == batch.num_rows() {
                self.current = None;
            }
        }
        Ok(())
    }
}

/// Runs `f`, turning a panic inside the Arrow reader into an error about
/// `what`; the panic message is not printed.
fn contained<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    result.unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("malformed data");
        Err(format!("{what}: not a readable Arrow IPC file: {reason}"))
    })
}

/// Refuses a schema with a column of a type contracts cannot read.
fn check_schema(schema: &Schema) -> Result<(), String> {
    schema.fields().iter().try_for_each(|field| check_field(field.name(), field))
}

fn check_field(path: &str, field: &Field) -> Result<(), String> {
    match field.data_type() {
        DataType::Struct(fields) => {
            fields.iter().try_for_each(|child| check_field(&format!("{path}.{}", child.name()), child))
        }
        DataType::List(element) | DataType::LargeList(element) | DataType::FixedSizeList(element, _) => {
            check_field(&format!("{path}[]"), element)
        }
        DataType::Dictionary(_, values) => match values.as_ref() {
            DataType::Utf8 | DataType::LargeUtf8 => Ok(()),
            other => Err(unsupported(path, other)),
        },
        ty if scalar_supported(ty) => Ok(()),
        other => Err(unsupported(path, other)),
    }
}

fn scalar_supported(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Null
            | DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
            | DataType::Timestamp(..)
            | DataType::Duration(_)
    )
}

fn unsupported(path: &str, ty: &DataType) -> String {
    format!("column `{path}` has Arrow type {ty}, which no contract type reads")
}

/// Row `row` of a batch's named `columns` as a JSON object.
fn record_json(fields: &arrow_schema::Fields, columns: &[arrow_array::ArrayRef], row: usize) -> String {
    let mut out = Vec::with_capacity(256);
    write_object(fields, columns, row, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Row `row` of named `columns` as a JSON object; nulls are left out (an
/// absent field).
fn write_object(
    fields: &arrow_schema::Fields,
    columns: &[arrow_array::ArrayRef],
    row: usize,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    let mut first = true;
    for (field, column) in fields.iter().zip(columns) {
        if column.is_null(row) {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        runtime::value::write_json_str(field.name(), out);
        out.push(b':');
        write_value(column.as_ref(), row, out);
    }
    out.push(b'}');
}

/// Element `row` of `array` as JSON.
fn write_value(array: &dyn Array, row: usize, out: &mut Vec<u8>) {
    if array.is_null(row) {
        out.extend_from_slice(b"null");
        return;
    }
    let text = |out: &mut Vec<u8>, s: &str| runtime::value::write_json_str(s, out);
    match array.data_type() {
        DataType::Boolean => {
            out.extend_from_slice(if array.as_boolean().value(row) { b"true" } else { b"false" })
        }
        DataType::Int8 => number(out, array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => number(out, array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => number(out, array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => number(out, array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => number(out, array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => number(out, array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => number(out, array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => number(out, array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => float(out, f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => float(out, array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => text(out, array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => text(out, array.as_string::<i64>().value(row)),
        DataType::Utf8View => text(out, array.as_string_view().value(row)),
        DataType::Decimal128(precision, scale) => {
            let value = array.as_primitive::<Decimal128Type>().value(row);
            text(out, &Decimal128Type::format_decimal(value, *precision, *scale));
        }
        DataType::Decimal256(precision, scale) => {
            let value = array.as_primitive::<Decimal256Type>().value(row);
            text(out, &Decimal256Type::format_decimal(value, *precision, *scale));
        }
        // Out of the nanosecond range: `null`, which validation reports.
        DataType::Timestamp(unit, _) => match timestamp_nanos(array, *unit, row) {
            Some(nanos) => text(out, &ir::time::format_timestamp(nanos)),
            None => out.extend_from_slice(b"null"),
        },
        DataType::Duration(unit) => {
            let (value, suffix) = match unit {
                TimeUnit::Second => (array.as_primitive::<DurationSecondType>().value(row), "s"),
                TimeUnit::Millisecond => (array.as_primitive::<DurationMillisecondType>().value(row), "ms"),
                TimeUnit::Microsecond => (array.as_primitive::<DurationMicrosecondType>().value(row), "us"),
                TimeUnit::Nanosecond => (array.as_primitive::<DurationNanosecondType>().value(row), "ns"),
            };
            text(out, &format!("{value}{suffix}"));
        }
        DataType::Struct(_) => {
            let record = array.as_struct();
            write_object(record.fields(), record.columns(), row, out);
        }
        DataType::List(_) => write_list(array.as_list::<i32>().value(row).as_ref(), out),
        DataType::LargeList(_) => write_list(array.as_list::<i64>().value(row).as_ref(), out),
        DataType::FixedSizeList(..) => write_list(array.as_fixed_size_list().value(row).as_ref(), out),
        DataType::Dictionary(..) => match array.as_any_dictionary_opt() {
            Some(dictionary) => {
                let key = dictionary.normalized_keys()[row];
                write_value(dictionary.values().as_ref(), key, out);
            }
            None => out.extend_from_slice(b"null"),
        },
        _ => out.extend_from_slice(b"null"),
    }
}

fn number(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A float as JSON; not-a-number and infinities have none, so they become
/// `null`, which validation reports.
fn float(out: &mut Vec<u8>, f: f64) {
    if f.is_finite() {
        out.extend_from_slice(format!("{f:?}").as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

fn timestamp_nanos(array: &dyn Array, unit: TimeUnit, row: usize) -> Option<i64> {
    match unit {
        TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row).checked_mul(1_000_000_000),
        TimeUnit::Millisecond => {
            array.as_primitive::<TimestampMillisecondType>().value(row).checked_mul(1_000_000)
        }
        TimeUnit::Microsecond => {
            array.as_primitive::<TimestampMicrosecondType>().value(row).checked_mul(1_000)
        }
        TimeUnit::Nanosecond => Some(array.as_primitive::<TimestampNanosecondType>().value(row)),
    }
}

fn write_list(items: &dyn Array, out: &mut Vec<u8>) {
    out.push(b'[');
    for i in 0..items.len() {
        if i > 0 {
            out.push(b',');
        }
        write_value(items, i, out);
    }
    out.push(b']');
}
