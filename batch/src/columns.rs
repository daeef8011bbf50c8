//! Arrow record batches into a contract's input slots, a column at a
//! time, without going through JSON.
//!
//! The batch's schema is matched against the contract's input once per
//! stream ([`ColumnPlan::new`]): each input field finds its column by name
//! (unknown columns are ignored), and a column whose type cannot hold the
//! field's values, or a required field without a column, is an error
//! naming it. Then each batch is read column by column, in typed loops
//! that write slots; strings are borrowed from the batch's buffers.
//!
//! What a column holds is read as the JSON the same record would be: a
//! null is an absent field; a decimal keeps its digits (`Decimal128(18,
//! 2)` 1 is `1.00`); floats from any float column (a half or single float
//! widened exactly), so an embedding may be a `FixedSizeList`, `List` or
//! `LargeList` of `Float16`, `Float32` or `Float64`; ints and decimals
//! may come from any integer column, decimals, timestamps and durations
//! also from strings. A value that
//! would make the record invalid (a null in a required field, an enum
//! value outside the set, a decimal that does not fit) marks its row; a
//! marked row is written as the JSON record and validated by the request
//! reader, so its error is the NDJSON path's, byte for byte
//! ([`crate::json_rows`]).

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, OffsetSizeTrait, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema};
use ir::{TypeId, TypeKind, TypeTable};
use runtime::Contract;
use runtime::input::records::{Cells, Records};
use rust_decimal::Decimal;

/// How a batch's columns fill a contract's input.
#[derive(Debug)]
pub struct ColumnPlan {
    fields: Vec<FieldPlan>,
    /// The columns of the schema the plan was made for: a batch whose
    /// columns say otherwise is refused, never read.
    columns: Fields,
    /// The columns read in another encoding than their own (dictionaries
    /// of other than strings, run-end encoding, list views, dictionaries
    /// inside lists): each is decoded into the type given, once a batch,
    /// before it is read ([`ColumnPlan::decode`]).
    decoded: Vec<(usize, DataType)>,
}

/// One field of a record: where its column is and how it is read.
#[derive(Debug)]
struct FieldPlan {
    /// The column's index among its batch's or struct's columns.
    column: usize,
    /// The field's first slot within its record.
    offset: usize,
    optional: bool,
    /// Whether the contract reads the field: a field it never reads is
    /// validated, not laid out.
    used: bool,
    read: Read,
}

/// How one column's values become slots.
#[derive(Debug)]
enum Read {
    Bool,
    Int,
    Float,
    Decimal,
    /// A string; for an enum, its values.
    Str(Option<Arc<[String]>>),
    Timestamp,
    Duration,
    List {
        element: Box<FieldPlan>,
        stride: usize,
    },
    Record(Vec<FieldPlan>),
}

/// Where a column sits, which decides the encodings read as they are: a
/// dictionary of strings is read in place (each distinct text checked
/// once) except inside a list, where it is decoded first (a list's
/// elements are read a row at a time, and a dictionary's keys would be
/// normalised for every row).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    Record,
    List,
}

impl ColumnPlan {
    /// Matches `schema` against `contract`'s input.
    pub fn new(contract: &Contract, schema: &Schema) -> Result<ColumnPlan, String> {
        let program = contract.program();
        let types = &contract.ir().types;
        let input = contract.ir().input;
        let (fields, read_as) = record_plan(program, types, input, schema.fields(), "", Some(0))?;
        let decoded = read_as
            .iter()
            .zip(schema.fields())
            .enumerate()
            .filter(|(_, (read_as, column))| *read_as != column.data_type())
            .map(|(index, (read_as, _))| (index, read_as.clone()))
            .collect();
        Ok(ColumnPlan { fields, columns: schema.fields().clone(), decoded })
    }

    /// `batch` as the plan reads it: refused when its columns are not the
    /// schema's (a producer that lies about its batches), with the
    /// columns that need it decoded ([`ColumnPlan::decoded`]).
    pub fn decode<'b>(&self, batch: &'b RecordBatch) -> Result<Cow<'b, RecordBatch>, String> {
        let schema = batch.schema_ref();
        if let Some(why) = mismatch(&self.columns, schema.fields()) {
            return Err(format!("a record batch does not match its stream's schema: {why}"));
        }
        if self.decoded.is_empty() {
            return Ok(Cow::Borrowed(batch));
        }
        let mut columns = batch.columns().to_vec();
        let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
        for (index, read_as) in &self.decoded {
            columns[*index] = arrow_cast::cast(&columns[*index], read_as).map_err(|e| {
                format!("input column `{}` cannot be decoded as {read_as}: {e}", fields[*index].name())
            })?;
            fields[*index] = Arc::new(fields[*index].as_ref().clone().with_data_type(read_as.clone()));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
            .map(Cow::Owned)
            .map_err(|e| format!("input columns cannot be decoded: {e}"))
    }

    /// Reads rows `first .. first + count` of `batch` into rows `0 ..
    /// count` of `records`; rows whose
    /// values would be invalid are validated from their JSON form instead,
    /// which gives them their problem. `batch` is as [`ColumnPlan::decode`]
    /// gives it.
    pub fn fill<'r>(
        &self,
        contract: &Contract,
        batch: &'r RecordBatch,
        first: usize,
        count: usize,
        records: &mut Records<'r>,
    ) {
        let mut bad = vec![false; count];
        {
            let mut cells = records.cells();
            let rows = Rows { first, count };
            for field in &self.fields {
                fill(field, batch.column(field.column), rows, 0, 0, Some(&mut cells), &mut bad);
            }
        }
        for (k, _) in bad.iter().enumerate().filter(|(_, bad)| **bad) {
            let problem = crate::json_rows::row_problem(
                contract,
                batch.schema_ref().fields(),
                batch.columns(),
                first + k,
            );
            records.set_problem(k, problem);
        }
    }
}

/// How a batch's columns `got` differ from its schema's `expected` (in
/// count, name or type), if they do: a producer whose batches lie about
/// their schema is refused before anything reads them.
pub fn mismatch(expected: &Fields, got: &Fields) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!("it has {} columns where the schema has {}", got.len(), expected.len()));
    }
    let (got, expected) = got
        .iter()
        .zip(expected)
        .find(|(got, expected)| got.name() != expected.name() || got.data_type() != expected.data_type())?;
    Some(format!(
        "its column `{}` is {}, where the schema has `{}` as {}",
        got.name(),
        got.data_type(),
        expected.name(),
        expected.data_type()
    ))
}

/// The plans of a record type's fields, from the columns `columns`, and
/// the type each column is read as (its own, where it needs no decoding).
/// `base` is the record's first input slot, `None` inside list elements
/// (which are laid out whenever their list is).
fn record_plan(
    program: &runtime::program::Program,
    types: &TypeTable,
    ty: TypeId,
    columns: &Fields,
    path: &str,
    base: Option<usize>,
) -> Result<(Vec<FieldPlan>, Vec<DataType>), String> {
    let fields = types.record_fields(ty).unwrap_or(&[]);
    let mut plans = Vec::with_capacity(fields.len());
    let mut read_as: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
    for (index, field) in fields.iter().enumerate() {
        let name = if path.is_empty() { field.name.clone() } else { format!("{path}.{}", field.name) };
        let (inner, optional) = match types.kind(field.ty) {
            TypeKind::Optional(inner) => (*inner, true),
            _ => (field.ty, false),
        };
        if columns.iter().filter(|c| c.name() == &field.name).count() > 1 {
            // Which one holds the value? JSON keeps the last, a struct's
            // reader would take the first: neither is guessed.
            return Err(format!("the input has the column `{name}` more than once"));
        }
        let Some(column) = columns.iter().position(|c| c.name() == &field.name) else {
            if optional {
                continue;
            }
            return Err(format!(
                "the input has no column `{name}`, which the contract requires ({})",
                types.display(field.ty)
            ));
        };
        let offset = program.layouts.field_offset(ty, index as u32);
        let at = base.map(|base| base + offset);
        let used = at.is_none_or(|at| program.reads_input(at, program.layouts.width(field.ty)));
        let place = if base.is_some() { Place::Record } else { Place::List };
        let (read, data) = read_plan(program, types, inner, &columns[column], &name, at, place)?;
        read_as[column] = data;
        plans.push(FieldPlan { column, offset, optional, used, read });
    }
    Ok((plans, read_as))
}

/// How a column of `field`'s type reads values of `ty`, and the type it is
/// read as, or why it cannot be.
fn read_plan(
    program: &runtime::program::Program,
    types: &TypeTable,
    ty: TypeId,
    field: &Field,
    path: &str,
    at: Option<usize>,
    place: Place,
) -> Result<(Read, DataType), String> {
    let own = field.data_type();
    let data = decoded(own);
    let mismatch = || {
        format!(
            "input column `{path}` has Arrow type {own}, which cannot hold the contract's {}",
            types.display(ty)
        )
    };
    if *data == DataType::Null {
        return match types.kind(ty) {
            TypeKind::Record(_) | TypeKind::List(_) => Err(mismatch()),
            _ => Ok((Read::Bool, data.clone())),
        };
    }
    let read = match types.kind(ty) {
        TypeKind::Bool if *data == DataType::Boolean => Read::Bool,
        TypeKind::Int if is_integer(data) => Read::Int,
        TypeKind::Float
            if is_integer(data)
                || matches!(data, DataType::Float16 | DataType::Float32 | DataType::Float64) =>
        {
            Read::Float
        }
        TypeKind::Decimal
            if is_integer(data)
                || is_string(data)
                || matches!(data, DataType::Decimal128(..) | DataType::Decimal256(..)) =>
        {
            Read::Decimal
        }
        TypeKind::String | TypeKind::Enum(_) if is_string(data) => {
            let values = match types.kind(ty) {
                TypeKind::Enum(values) => Some(values.clone().into()),
                _ => None,
            };
            // A dictionary of strings is read in place, but in a list.
            let read_as = match own {
                DataType::Dictionary(_, values) if place == Place::Record && is_string(values) => own,
                _ => data,
            };
            return Ok((Read::Str(values), read_as.clone()));
        }
        TypeKind::Timestamp if is_string(data) || matches!(data, DataType::Timestamp(..)) => Read::Timestamp,
        TypeKind::Duration if is_string(data) || matches!(data, DataType::Duration(_)) => Read::Duration,
        TypeKind::List(element) => {
            return list_plan(program, types, *element, data, path).ok_or_else(mismatch)?;
        }
        TypeKind::Record(_) => match data {
            DataType::Struct(children) => {
                let (fields, read_as) = record_plan(program, types, ty, children, path, at)?;
                let children: Fields = children
                    .iter()
                    .zip(read_as)
                    .map(|(child, read_as)| Arc::new(child.as_ref().clone().with_data_type(read_as)))
                    .collect();
                return Ok((Read::Record(fields), DataType::Struct(children)));
            }
            _ => return Err(mismatch()),
        },
        _ => return Err(mismatch()),
    };
    Ok((read, data.clone()))
}

/// A list column of `data`'s type holding values of `element`: its plan
/// and the type it is read as (a list view as a list), `None` when `data`
/// is not a list.
fn list_plan(
    program: &runtime::program::Program,
    types: &TypeTable,
    element: TypeId,
    data: &DataType,
    path: &str,
) -> Option<Result<(Read, DataType), String>> {
    let (child, read_as): (&FieldRef, fn(FieldRef) -> DataType) = match data {
        DataType::List(child) | DataType::ListView(child) => (child, DataType::List),
        DataType::LargeList(child) | DataType::LargeListView(child) => (child, DataType::LargeList),
        DataType::FixedSizeList(child, size) => {
            let size = *size;
            return Some(
                list_elements(program, types, element, child, path)
                    .map(|(read, child)| (read, DataType::FixedSizeList(child, size))),
            );
        }
        _ => return None,
    };
    Some(list_elements(program, types, element, child, path).map(|(read, child)| (read, read_as(child))))
}

/// The plan of a list's elements, and their field as read.
fn list_elements(
    program: &runtime::program::Program,
    types: &TypeTable,
    element: TypeId,
    child: &FieldRef,
    path: &str,
) -> Result<(Read, FieldRef), String> {
    let (inner, optional) = match types.kind(element) {
        TypeKind::Optional(inner) => (*inner, true),
        _ => (element, false),
    };
    let (read, data) = read_plan(program, types, inner, child, &format!("{path}[]"), None, Place::List)?;
    let stride = program.layouts.width(element);
    let element = Box::new(FieldPlan { column: 0, offset: 0, optional, used: true, read });
    Ok((Read::List { element, stride }, Arc::new(child.as_ref().clone().with_data_type(data))))
}

/// The type a column's values have under its encoding: a dictionary's
/// values, a run-end encoding's values.
fn decoded(data: &DataType) -> &DataType {
    match data {
        DataType::Dictionary(_, values) => decoded(values),
        DataType::RunEndEncoded(_, values) => decoded(values.data_type()),
        _ => data,
    }
}

fn is_integer(data: &DataType) -> bool {
    data.is_integer()
}

/// A string type (not encoded: see [`decoded`]).
fn is_string(data: &DataType) -> bool {
    matches!(data, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The rows `first .. first + count` of a column.
#[derive(Clone, Copy, Debug)]
struct Rows {
    first: usize,
    count: usize,
}

/// Fills `field`'s slots (at `base + field.offset`) of items `item0 + k`
/// from rows `rows.first + k` of `array`, for every `k`; sets `bad[k]`
/// when that value makes its record invalid. Each kind of column is read
/// in its own loop, its array cast once.
///
/// `cells` is `None` for a field the contract never reads, and for
/// everything inside it: its values are checked, and there is nothing to
/// write them into (a list's elements are written only into the list's
/// own cells, which an unread list never has).
#[allow(clippy::too_many_arguments)]
fn fill<'r>(
    field: &FieldPlan,
    array: &'r ArrayRef,
    rows: Rows,
    item0: usize,
    base: usize,
    cells: Option<&mut Cells<'_, 'r>>,
    bad: &mut [bool],
) {
    let at = base + field.offset;
    let optional = field.optional;
    let mut cells = if field.used { cells } else { None };
    match (&field.read, array.data_type()) {
        (Read::Bool, DataType::Boolean) => {
            let a = array.as_boolean();
            each_row(array, rows, optional, bad, |k, row| {
                if let Some(cells) = cells.as_deref_mut() {
                    cells.set_bool(item0 + k, at, a.value(row));
                }
                true
            });
        }
        (Read::Int, DataType::Int64) => {
            let a = array.as_primitive::<Int64Type>();
            each_row(array, rows, optional, bad, |k, row| {
                if let Some(cells) = cells.as_deref_mut() {
                    cells.set_int(item0 + k, at, a.value(row));
                }
                true
            });
        }
        (Read::Int, _) => each_row(array, rows, optional, bad, |k, row| match int_value(array, row) {
            Some(v) => {
                if let Some(cells) = cells.as_deref_mut() {
                    cells.set_int(item0 + k, at, v);
                }
                true
            }
            None => false,
        }),
        (Read::Float, _) => {
            each_row(array, rows, optional, bad, |k, row| match float_value(array, row) {
                Some(v) if v.is_finite() => {
                    if let Some(cells) = cells.as_deref_mut() {
                        cells.set_float(item0 + k, at, v);
                    }
                    true
                }
                // Not a number, infinities: JSON has no such value, so
                // they read as null.
                Some(_) => optional,
                None => false,
            })
        }
        (Read::Decimal, DataType::Decimal128(_, scale)) => {
            let (a, scale) = (array.as_primitive::<Decimal128Type>(), *scale);
            each_row(array, rows, optional, bad, |k, row| match scaled(a.value(row), scale) {
                Some(v) => {
                    if let Some(cells) = cells.as_deref_mut() {
                        cells.set_decimal(item0 + k, at, v);
                    }
                    true
                }
                None => false,
            });
        }
        (Read::Decimal, _) => {
            each_row(array, rows, optional, bad, |k, row| match decimal_value(array, row) {
                Some(v) => {
                    if let Some(cells) = cells.as_deref_mut() {
                        cells.set_decimal(item0 + k, at, v);
                    }
                    true
                }
                None => false,
            })
        }
        (Read::Str(values), _) => {
            fill_strings(values.as_deref(), array, rows, item0, at, field.optional, cells, bad)
        }
        (Read::Timestamp, _) => {
            each_row(array, rows, optional, bad, |k, row| match timestamp_value(array, row) {
                Some(Some(nanos)) => {
                    if let Some(cells) = cells.as_deref_mut() {
                        cells.set_timestamp(item0 + k, at, nanos);
                    }
                    true
                }
                // Out of the nanosecond range: written as null in JSON.
                Some(None) => optional,
                None => false,
            })
        }
        (Read::Duration, _) => {
            each_row(array, rows, optional, bad, |k, row| match duration_value(array, row) {
                Some(nanos) => {
                    if let Some(cells) = cells.as_deref_mut() {
                        cells.set_duration(item0 + k, at, nanos);
                    }
                    true
                }
                None => false,
            })
        }
        (Read::List { element, stride }, _) => {
            let stride = *stride;
            each_row(array, rows, optional, bad, |k, row| {
                fill_list(element, stride, array, row, item0 + k, at, cells.as_deref_mut())
            })
        }
        (Read::Record(fields), DataType::Struct(_)) => {
            // A null record makes its row invalid (records are never
            // optional); its fields are read with the rest and ignored.
            each_row(array, rows, optional, bad, |_, _| true);
            let record = array.as_struct();
            for child in fields {
                fill(child, record.column(child.column), rows, item0, at, cells.as_deref_mut(), bad);
            }
        }
        // A `Null` column: every row is null.
        _ => each_row(array, rows, optional, bad, |_, _| false),
    }
}

/// Runs `value(k, row)` on every non-null row; a null is absent when
/// `optional`, else marks its row bad, as does `value` returning false.
fn each_row(
    array: &ArrayRef,
    rows: Rows,
    optional: bool,
    bad: &mut [bool],
    mut value: impl FnMut(usize, usize) -> bool,
) {
    let nulls = array.logical_nulls();
    for (k, bad) in bad.iter_mut().enumerate().take(rows.count) {
        let row = rows.first + k;
        let ok = match &nulls {
            Some(nulls) if nulls.is_null(row) => optional,
            _ => value(k, row),
        };
        if !ok {
            *bad = true;
        }
    }
}

/// Strings, borrowed from the column; for an enum, checked against its
/// values (a dictionary's values once, not every row's).
#[allow(clippy::too_many_arguments)]
fn fill_strings<'r>(
    values: Option<&[String]>,
    array: &'r ArrayRef,
    rows: Rows,
    item0: usize,
    at: usize,
    optional: bool,
    mut cells: Option<&mut Cells<'_, 'r>>,
    bad: &mut [bool],
) {
    let allowed = |text: &str| values.is_none_or(|v| v.iter().any(|v| v == text));
    // `checked`: the text is known to be allowed.
    let mut put = |k: usize, text: &'r str, checked: bool| {
        if checked || allowed(text) {
            if let Some(cells) = cells.as_deref_mut() {
                cells.set_str(item0 + k, at, text);
            }
            true
        } else {
            false
        }
    };
    match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            each_row(array, rows, optional, bad, |k, row| put(k, a.value(row), false));
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            each_row(array, rows, optional, bad, |k, row| put(k, a.value(row), false));
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            each_row(array, rows, optional, bad, |k, row| put(k, a.value(row), false));
        }
        DataType::Dictionary(..) => {
            let Some(dictionary) = array.as_any_dictionary_opt() else {
                each_row(array, rows, optional, bad, |_, _| false);
                return;
            };
            let keys = crate::json_rows::dictionary_keys(array.as_ref());
            let words = dictionary.values();
            let texts: Vec<Option<&'r str>> =
                (0..words.len()).map(|i| str_value(words, i).filter(|t| allowed(t))).collect();
            each_row(array, rows, optional, bad, &mut |k, row| match keys
                .get(row)
                .and_then(|key| texts.get(*key))
                .copied()
                .flatten()
            {
                Some(text) => put(k, text, true),
                None => false,
            });
        }
        _ => each_row(array, rows, optional, bad, |_, _| false),
    }
}

/// Fills a list value: its elements' slots in the store, then the list
/// slot. `false` when an element would make the record invalid.
#[allow(clippy::too_many_arguments)]
fn fill_list<'r>(
    element: &FieldPlan,
    stride: usize,
    array: &'r ArrayRef,
    row: usize,
    item: usize,
    at: usize,
    cells: Option<&mut Cells<'_, 'r>>,
) -> bool {
    let (values, start, len) = match array.data_type() {
        DataType::List(_) => list_range(array.as_list::<i32>(), row),
        DataType::LargeList(_) => list_range(array.as_list::<i64>(), row),
        DataType::FixedSizeList(_, size) => {
            let list = array.as_fixed_size_list();
            let size = *size as usize;
            (list.values(), row * size, size)
        }
        _ => return false,
    };
    let mut bad = vec![false; len];
    let elements = Rows { first: start, count: len };
    match cells {
        Some(cells) => cells.set_list(item, at, len, stride, |cells| {
            fill(element, values, elements, 0, 0, Some(cells), &mut bad)
        }),
        None => fill(element, values, elements, 0, 0, None, &mut bad),
    }
    !bad.contains(&true)
}

fn list_range<O: OffsetSizeTrait>(
    list: &arrow_array::GenericListArray<O>,
    row: usize,
) -> (&ArrayRef, usize, usize) {
    let offsets = list.value_offsets();
    let (start, end) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
    (list.values(), start, end - start)
}

/// An integer column's value as an `i64` (`None` past its range).
fn int_value(array: &ArrayRef, row: usize) -> Option<i64> {
    Some(match array.data_type() {
        DataType::Int8 => i64::from(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => i64::from(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => i64::from(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row),
        DataType::UInt8 => i64::from(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => i64::from(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => i64::from(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => i64::try_from(array.as_primitive::<UInt64Type>().value(row)).ok()?,
        _ => return None,
    })
}

fn float_value(array: &ArrayRef, row: usize) -> Option<f64> {
    match array.data_type() {
        DataType::Float64 => Some(array.as_primitive::<Float64Type>().value(row)),
        DataType::Float32 => Some(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float16 => Some(array.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::UInt64 => Some(array.as_primitive::<UInt64Type>().value(row) as f64),
        _ => int_value(array, row).map(|i| i as f64),
    }
}

/// A decimal, exactly: from a decimal column's mantissa and scale, an
/// integer, or a string's text. `None` when it does not fit.
fn decimal_value(array: &ArrayRef, row: usize) -> Option<Decimal> {
    match array.data_type() {
        DataType::Decimal128(_, scale) => scaled(array.as_primitive::<Decimal128Type>().value(row), *scale),
        DataType::Decimal256(_, scale) => {
            let value = array.as_primitive::<Decimal256Type>().value(row);
            scaled(value.to_i128()?, *scale)
        }
        data if data.is_integer() => match data {
            DataType::UInt64 => Some(Decimal::from(array.as_primitive::<UInt64Type>().value(row))),
            _ => int_value(array, row).map(Decimal::from),
        },
        _ => ir::value::parse_decimal(str_value(array, row)?).ok(),
    }
}

/// `mantissa * 10^-scale` as a decimal, when rust_decimal holds it.
fn scaled(mantissa: i128, scale: i8) -> Option<Decimal> {
    if scale >= 0 {
        return Decimal::try_from_i128_with_scale(mantissa, u32::try_from(scale).ok()?).ok();
    }
    let factor = 10i128.checked_pow(u32::from(scale.unsigned_abs()))?;
    Decimal::try_from_i128_with_scale(mantissa.checked_mul(factor)?, 0).ok()
}

/// A string column's value (dictionaries are decoded before: [`decoded`]).
fn str_value(array: &ArrayRef, row: usize) -> Option<&str> {
    Some(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row),
        DataType::Utf8View => array.as_string_view().value(row),
        _ => return None,
    })
}

/// A timestamp in nanoseconds: `Some(None)` when it is out of their range
/// (null in JSON), `None` when it does not read.
fn timestamp_value(array: &ArrayRef, row: usize) -> Option<Option<i64>> {
    let DataType::Timestamp(unit, _) = array.data_type() else {
        return Some(Some(ir::time::parse_timestamp(str_value(array, row)?).ok()?));
    };
    Some(crate::json_rows::timestamp_nanos(array, *unit, row))
}

/// A duration in nanoseconds, as its JSON text would read.
fn duration_value(array: &ArrayRef, row: usize) -> Option<i64> {
    let DataType::Duration(unit) = array.data_type() else {
        return ir::time::parse_duration(str_value(array, row)?).ok();
    };
    let text = crate::json_rows::duration_text(array, *unit, row);
    ir::time::parse_duration(&text).ok()
}
