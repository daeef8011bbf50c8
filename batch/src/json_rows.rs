//! Arrow rows as the JSON records NDJSON holds: how a row whose values
//! would be invalid gets exactly the NDJSON path's error (the request
//! reader validates its JSON form), and how kept columns are written into
//! NDJSON results.
//!
//! A null is an absent field in results (kept columns, `rulec sql`'s
//! NDJSON) and `null` in the text a problem is found from, so a null cell
//! of a required field reads "expected T, got null" as NDJSON's `null`
//! does; structs are objects, lists arrays;
//! decimals keep their digits (as strings); timestamps are RFC 3339 (a
//! column without a time zone is UTC); durations keep their unit; NaN,
//! infinities and timestamps past the nanosecond range have no JSON form
//! and are `null`.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, DecimalType, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_schema::{DataType, TimeUnit};
use runtime::{Contract, InvalidInput};

/// Why row `row` of `columns` (named by `fields`) is invalid for
/// `contract`: its JSON form, nulls written, as the request reader finds
/// it.
pub fn row_problem(
    contract: &Contract,
    fields: &arrow_schema::Fields,
    columns: &[arrow_array::ArrayRef],
    row: usize,
) -> InvalidInput {
    let mut text = Vec::with_capacity(256);
    write_object(fields, columns, row, Nulls::Written, &mut text);
    problem(contract, &String::from_utf8_lossy(&text))
}

/// Why the record `text` (an input's JSON) is invalid for `contract`.
fn problem(contract: &Contract, text: &str) -> InvalidInput {
    match runtime::input::request::Input::parse(contract.program(), text) {
        Err(problem) => problem,
        // The column reader refused what the JSON reader takes: a bug of
        // the column reader, said as such rather than evaluated wrongly.
        Ok(_) => InvalidInput::one(
            "input",
            "internal: the Arrow reader refused a record the JSON reader accepts (please report it)",
        ),
    }
}

/// A duration column's value as duration text (`90s`, `1500ms`).
pub fn duration_text(array: &dyn Array, unit: TimeUnit, row: usize) -> String {
    let (value, suffix) = match unit {
        TimeUnit::Second => (array.as_primitive::<DurationSecondType>().value(row), "s"),
        TimeUnit::Millisecond => (array.as_primitive::<DurationMillisecondType>().value(row), "ms"),
        TimeUnit::Microsecond => (array.as_primitive::<DurationMicrosecondType>().value(row), "us"),
        TimeUnit::Nanosecond => (array.as_primitive::<DurationNanosecondType>().value(row), "ns"),
    };
    format!("{value}{suffix}")
}

/// Row `row` of a batch's named `columns` as a JSON object.
pub fn record_json(fields: &arrow_schema::Fields, columns: &[arrow_array::ArrayRef], row: usize) -> String {
    let mut out = Vec::with_capacity(256);
    write_object(fields, columns, row, Nulls::Omitted, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`record_json`], appended to `out` (for many rows into one buffer).
pub fn write_record(
    fields: &arrow_schema::Fields,
    columns: &[arrow_array::ArrayRef],
    row: usize,
    out: &mut Vec<u8>,
) {
    write_object(fields, columns, row, Nulls::Omitted, out);
}

/// What a null field of an object becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nulls {
    /// Left out: an absent field.
    Omitted,
    /// `"name":null`.
    Written,
}

/// Row `row` of named `columns` as a JSON object, its null fields as
/// `nulls` says.
fn write_object(
    fields: &arrow_schema::Fields,
    columns: &[arrow_array::ArrayRef],
    row: usize,
    nulls: Nulls,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    let mut first = true;
    for (field, column) in fields.iter().zip(columns) {
        if nulls == Nulls::Omitted && is_null(column.as_ref(), row) {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        runtime::value::write_json_str(field.name(), out);
        out.push(b':');
        write_element(column.as_ref(), row, nulls, out);
    }
    out.push(b'}');
}

/// Element `row` of `array` as JSON (its objects' nulls left out).
pub fn write_value(array: &dyn Array, row: usize, out: &mut Vec<u8>) {
    write_element(array, row, Nulls::Omitted, out)
}

/// Element `row` of `array` as JSON, its objects' null fields as `nulls`
/// says.
fn write_element(array: &dyn Array, row: usize, nulls: Nulls, out: &mut Vec<u8>) {
    if is_null(array, row) {
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
        DataType::Float16 => float(out, array.as_primitive::<Float16Type>().value(row).to_f64()),
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
        DataType::Duration(unit) => text(out, &duration_text(array, *unit, row)),
        DataType::Struct(_) => {
            let record = array.as_struct();
            write_object(record.fields(), record.columns(), row, nulls, out);
        }
        // The items by their offsets, not as a slice (a slice of a list
        // of structs allocates each child's slice, row by row).
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let range = list.value_offsets()[row] as usize..list.value_offsets()[row + 1] as usize;
            write_list(list.values().as_ref(), range, nulls, out)
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let range = list.value_offsets()[row] as usize..list.value_offsets()[row + 1] as usize;
            write_list(list.values().as_ref(), range, nulls, out)
        }
        DataType::FixedSizeList(..) => {
            let list = array.as_fixed_size_list();
            let start = list.value_offset(row) as usize;
            write_list(list.values().as_ref(), start..start + list.value_length() as usize, nulls, out)
        }
        DataType::Dictionary(key, _) => {
            match (array.as_any_dictionary_opt(), dictionary_key(array, key, row)) {
                (Some(dictionary), Some(key)) => write_element(dictionary.values().as_ref(), key, nulls, out),
                _ => out.extend_from_slice(b"null"),
            }
        }
        _ => out.extend_from_slice(b"null"),
    }
}

/// Whether element `row` of `array` is null: its own null, or a
/// dictionary's null value.
pub fn is_null(array: &dyn Array, row: usize) -> bool {
    if array.is_null(row) {
        return true;
    }
    match array.data_type() {
        DataType::Dictionary(key, _) => {
            match (array.as_any_dictionary_opt(), dictionary_key(array, key, row)) {
                (Some(dictionary), Some(key)) => is_null(dictionary.values().as_ref(), key),
                _ => true,
            }
        }
        _ => false,
    }
}

/// Every key of a dictionary array, as an index into its values (a key
/// past them, or negative, as `usize::MAX`: no value). Empty for another
/// array.
pub(crate) fn dictionary_keys(array: &dyn Array) -> Vec<usize> {
    fn of<K: arrow_array::types::ArrowDictionaryKeyType>(array: &dyn Array) -> Vec<usize> {
        let Some(dictionary) = array.as_dictionary_opt::<K>() else { return Vec::new() };
        let values = dictionary.values().len();
        let index = |key: &K::Native| arrow_buffer::ArrowNativeType::to_usize(*key).filter(|k| *k < values);
        dictionary.keys().values().iter().map(|key| index(key).unwrap_or(usize::MAX)).collect()
    }
    match array.data_type() {
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => of::<Int8Type>(array),
            DataType::Int16 => of::<Int16Type>(array),
            DataType::Int32 => of::<Int32Type>(array),
            DataType::Int64 => of::<Int64Type>(array),
            DataType::UInt8 => of::<UInt8Type>(array),
            DataType::UInt16 => of::<UInt16Type>(array),
            DataType::UInt32 => of::<UInt32Type>(array),
            DataType::UInt64 => of::<UInt64Type>(array),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The key of row `row` of a dictionary array whose keys are of type
/// `key`, as an index into its values (one row's key: normalizing every
/// key of the array for each row would make a batch's rows quadratic).
fn dictionary_key(array: &dyn Array, key: &DataType, row: usize) -> Option<usize> {
    fn of<K: arrow_array::types::ArrowDictionaryKeyType>(array: &dyn Array, row: usize) -> Option<usize> {
        arrow_buffer::ArrowNativeType::to_usize(array.as_dictionary_opt::<K>()?.keys().value(row))
    }
    match key {
        DataType::Int8 => of::<Int8Type>(array, row),
        DataType::Int16 => of::<Int16Type>(array, row),
        DataType::Int32 => of::<Int32Type>(array, row),
        DataType::Int64 => of::<Int64Type>(array, row),
        DataType::UInt8 => of::<UInt8Type>(array, row),
        DataType::UInt16 => of::<UInt16Type>(array, row),
        DataType::UInt32 => of::<UInt32Type>(array, row),
        DataType::UInt64 => of::<UInt64Type>(array, row),
        _ => None,
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

/// An Arrow timestamp of `unit` in nanoseconds; `None` past their range.
/// The one conversion of both paths (columns into slots, rows as JSON).
pub(crate) fn timestamp_nanos(array: &dyn Array, unit: TimeUnit, row: usize) -> Option<i64> {
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

/// The items `range` of `items`, as a JSON array.
fn write_list(items: &dyn Array, range: std::ops::Range<usize>, nulls: Nulls, out: &mut Vec<u8>) {
    out.push(b'[');
    let start = range.start;
    for i in range {
        if i > start {
            out.push(b',');
        }
        write_element(items, i, nulls, out);
    }
    out.push(b']');
}
