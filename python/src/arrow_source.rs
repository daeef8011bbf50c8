//! Arrow data handed over by another library, a batch at a time, checked
//! before any of it is read: what `evaluate_batch` evaluates.
//!
//! The C data interface carries no buffer sizes: a consumer computes them
//! from the type it was told, so a producer whose batch disagrees with
//! its stream's schema (an `int8` column under an `int64` schema) would
//! have rulec read past its buffers. So:
//!
//! - a pyarrow `RecordBatchReader` is read through Python
//!   (`read_next_batch`), each batch exported with its own schema, and a
//!   batch whose columns differ from the reader's schema is refused (as
//!   pyarrow's own `read_all` refuses it); an exception the reader raises
//!   (`KeyboardInterrupt` among them) passes through unchanged;
//! - any other stream (a pyarrow Table, a polars frame, a DuckDB result)
//!   is read through its C stream, and a batch whose import fails or
//!   panics (a column count that is not the schema's) is refused;
//! - every batch is then validated whole (`ArrayData::validate_full`:
//!   offsets inside their buffers, dictionary keys inside their values,
//!   strings UTF-8) before the batch engine reads it. A batch of fewer
//!   rows than a chunk is first copied to buffers of its own (after the
//!   cheap checks that keep the copy inside the buffers it reads):
//!   `validate_full` checks every string of a buffer, and one-row slices
//!   of one large array (`Table.to_batches(max_chunksize=1)`) share its
//!   buffers, so validating each slice as it is cost the whole array per
//!   row. Such batches are gathered into a chunk, a copy, anyway.
//!
//! A refusal is `rulec.InputError` naming the batch and what is wrong.

use std::panic::{AssertUnwindSafe, catch_unwind};

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_data::ArrayData;
use arrow_data::transform::MutableArrayData;
use arrow_pyarrow::FromPyArrow;
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;

use crate::errors::InputError;

/// Where the batches come from.
pub enum Source {
    /// A pyarrow `RecordBatchReader`, read through Python.
    Reader(Py<PyAny>),
    /// A C stream.
    Stream(Box<ArrowArrayStreamReader>),
    /// One record batch (`__arrow_c_array__`), until it is taken.
    One(Option<RecordBatch>),
}

/// Arrow data's batches, checked (module doc).
pub struct Batches {
    source: Source,
    schema: SchemaRef,
    /// The number of the next batch (for messages).
    number: usize,
}

impl Batches {
    /// The batches of `data`: an object with `__arrow_c_stream__` or
    /// `__arrow_c_array__`.
    pub fn open(data: &Bound<'_, PyAny>) -> PyResult<Batches> {
        if data.hasattr("read_next_batch")? && data.hasattr("__arrow_c_stream__")? {
            let schema = imported("the stream's schema", || {
                arrow_schema::Schema::from_pyarrow_bound(&data.getattr("schema")?)
            })?;
            return Ok(Batches {
                source: Source::Reader(data.clone().unbind()),
                schema: schema.into(),
                number: 0,
            });
        }
        if data.hasattr("__arrow_c_stream__")? {
            let reader = imported("the Arrow stream", || ArrowArrayStreamReader::from_pyarrow_bound(data))?;
            let schema = reader.schema();
            return Ok(Batches { source: Source::Stream(Box::new(reader)), schema, number: 0 });
        }
        if data.hasattr("__arrow_c_array__")? {
            let batch = imported("the record batch", || RecordBatch::from_pyarrow_bound(data))?;
            validated(&batch, 0)?;
            return Ok(Batches { schema: batch.schema(), source: Source::One(Some(batch)), number: 0 });
        }
        let type_name = data.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        Err(PyTypeError::new_err(format!(
            "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__: a pyarrow Table, \
             RecordBatch or RecordBatchReader, a polars DataFrame, a DuckDB result), got {type_name}"
        )))
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The next batch, checked; `None` after the last.
    pub fn next(&mut self, py: Python<'_>) -> PyResult<Option<RecordBatch>> {
        let number = self.number;
        let batch = match &mut self.source {
            Source::One(batch) => batch.take(),
            Source::Reader(reader) => match reader.bind(py).call_method0("read_next_batch") {
                Ok(batch) => {
                    let batch = imported(&format!("batch {number} of the stream"), || {
                        RecordBatch::from_pyarrow_bound(&batch)
                    })?;
                    same_columns(&batch, &self.schema, number)?;
                    Some(validated(&batch, number)?)
                }
                Err(e) if e.is_instance_of::<PyStopIteration>(py) => None,
                Err(e) => return Err(e),
            },
            Source::Stream(reader) => {
                let read = catch_unwind(AssertUnwindSafe(|| reader.next()));
                match read {
                    Ok(None) => None,
                    Ok(Some(Ok(batch))) => Some(validated(&batch, number)?),
                    Ok(Some(Err(e))) => {
                        return Err(InputError::new_err(format!(
                            "cannot read batch {number} of the Arrow stream: {e}"
                        )));
                    }
                    Err(_) => {
                        return Err(InputError::new_err(format!(
                            "batch {number} of the Arrow stream does not match the stream's schema"
                        )));
                    }
                }
            }
        };
        self.number += usize::from(batch.is_some());
        Ok(batch)
    }
}

/// What `import` gives, an import that panics being refused as `what`.
fn imported<T>(what: &str, import: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(import)) {
        Ok(imported) => imported,
        Err(_) => Err(InputError::new_err(format!("{what} is not valid Arrow data"))),
    }
}

/// Refuses a batch whose columns are not `schema`'s
/// ([`batch::columns::mismatch`], the batch path's own check).
fn same_columns(batch: &RecordBatch, schema: &SchemaRef, number: usize) -> PyResult<()> {
    match batch::columns::mismatch(schema.fields(), batch.schema_ref().fields()) {
        None => Ok(()),
        Some(why) => Err(InputError::new_err(format!(
            "batch {number} of the stream does not match the stream's schema: {why}"
        ))),
    }
}

/// `batch`, once its data is known to be whole (module doc): a batch of
/// fewer than [`COPIED_BELOW`] rows as a copy.
fn validated(batch: &RecordBatch, number: usize) -> PyResult<RecordBatch> {
    let invalid =
        |e: ArrowError| InputError::new_err(format!("batch {number} of the Arrow data is not valid: {e}"));
    let data = StructArray::from(batch.clone()).into_data();
    if batch.num_rows() >= COPIED_BELOW {
        data.validate_full().map_err(invalid)?;
        return Ok(batch.clone());
    }
    // The cheap checks (buffer sizes, first and last offsets, children)
    // keep the copy inside the buffers it reads; the copy is then
    // validated whole, at the cost of its own rows.
    data.validate().map_err(invalid)?;
    let copy = catch_unwind(AssertUnwindSafe(|| compact(&data)))
        .unwrap_or_else(|_| Err(ArrowError::InvalidArgumentError("its offsets are not in order".into())))
        .map_err(invalid)?;
    copy.validate_full().map_err(invalid)?;
    Ok(RecordBatch::from(StructArray::from(copy)))
}

/// Rows below which a batch is copied before it is validated.
const COPIED_BELOW: usize = 8192;

/// `data`'s rows in buffers of their own.
fn compact(data: &ArrayData) -> Result<ArrayData, ArrowError> {
    let mut copy = MutableArrayData::new(vec![data], false, data.len());
    copy.try_extend(0, 0, data.len())?;
    Ok(copy.freeze())
}
