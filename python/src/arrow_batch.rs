//! `Contract.evaluate_batch`: records from anything that speaks the Arrow
//! PyCapsule interface (`__arrow_c_stream__`: pyarrow tables and record
//! batch readers, polars frames, DuckDB results; `__arrow_c_array__`: a
//! record batch), imported without a copy, evaluated by the batch crate's
//! [`Job`] (the column path of `rulec eval --input`: the schema matched
//! once, columns straight into input slots) on every core with the GIL
//! released, records entering windows in input order
//! ([`batch::turns`]); the results a `pyarrow.Table` with the columns of
//! `rulec eval --output-format arrow`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, Table};
use arrow_schema::SchemaRef;
use batch::output::Output;
use batch::source::Chunk;
use batch::turns::{Turn, Turns};
use batch::{Job, OutputFormat, Settings};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use runtime::result::Parts;

use crate::errors::{InputError, RulecError, contained};

/// Rows a worker evaluates at once.
const CHUNK_ROWS: usize = 8192;

/// Why a batch gave no results.
enum Failure {
    /// The records do not fit the contract, or the channel is wrong.
    Refused(String),
    /// A chunk failed to evaluate (a bug).
    Failed(String),
}

/// Evaluates every record of `data` on `channel`, keeping the result
/// `parts`.
pub fn evaluate_batch<'py>(
    py: Python<'py>,
    contract: &Arc<runtime::Contract>,
    data: &Bound<'py, PyAny>,
    channel: Option<&str>,
    parts: Parts,
) -> PyResult<Bound<'py, PyAny>> {
    let settings = Settings {
        channel: channel.map(str::to_string),
        parts,
        keep: Vec::new(),
        output: OutputFormat::Arrow,
        limit: None,
    };
    let (schema, batches) = read(data)?;
    let evaluated =
        py.detach(|| contained(|| Ok::<_, PyErr>(run(contract, &schema, &batches, &settings))))?;
    let (schema, results) = match evaluated {
        Ok(done) => done,
        Err(Failure::Refused(message)) => return Err(InputError::new_err(message)),
        Err(Failure::Failed(message)) => return Err(RulecError::new_err(message)),
    };
    let table = Table::try_new(results, schema).map_err(|e| RulecError::new_err(e.to_string()))?;
    table.into_pyarrow(py)
}

/// The parts `fields` names: a comma-separated `str` or a list of names
/// (`decision`, `reasons`, `findings`, `effects`, `errors`).
pub fn parts(fields: Option<&Bound<'_, PyAny>>) -> PyResult<Parts> {
    let Some(fields) = fields else { return Ok(Parts::ALL) };
    let list = match fields.cast::<PyString>() {
        Ok(text) => text.to_cow()?.into_owned(),
        Err(_) => fields.extract::<Vec<String>>()?.join(","),
    };
    batch::result_parts(&list).map_err(PyValueError::new_err)
}

/// The schema and the record batches of `data`, imported through the
/// Arrow C interfaces (the buffers are shared, not copied).
fn read(data: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    if data.hasattr("__arrow_c_stream__")? {
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(data)?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| InputError::new_err(format!("cannot read the Arrow stream: {e}")))?;
        return Ok((schema, batches));
    }
    if data.hasattr("__arrow_c_array__")? {
        let batch = RecordBatch::from_pyarrow_bound(data)?;
        return Ok((batch.schema(), vec![batch]));
    }
    let type_name = data.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(PyTypeError::new_err(format!(
        "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__: a pyarrow Table, \
         RecordBatch or RecordBatchReader, a polars DataFrame, a DuckDB result), got {type_name}"
    )))
}

/// The batch job over `batches`, in chunks of [`CHUNK_ROWS`] on every
/// core; the results in input order.
fn run(
    contract: &Arc<runtime::Contract>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    settings: &Settings,
) -> Result<(SchemaRef, Vec<RecordBatch>), Failure> {
    let job = Job::new(Arc::clone(contract), settings, Some(schema)).map_err(Failure::Refused)?;
    let chunks: Vec<RecordBatch> = batches.iter().flat_map(slices).collect();
    let results: Vec<Mutex<Vec<RecordBatch>>> = chunks.iter().map(|_| Mutex::new(Vec::new())).collect();
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let turns = Turns::default();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(chunks.len()).max(1);
    let work = Work {
        job: &job,
        chunks: &chunks,
        results: &results,
        failures: &failures,
        next: &next,
        turns: &turns,
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| work.run());
        }
    });
    if let Some(failure) = failures.into_inner().unwrap_or_default().into_iter().next() {
        return Err(Failure::Failed(failure));
    }
    let results = results.into_iter().flat_map(|r| r.into_inner().unwrap_or_default()).collect();
    Ok((job.result_schema().clone(), results))
}

/// `batch` cut into slices of at most [`CHUNK_ROWS`] rows (no copy).
fn slices(batch: &RecordBatch) -> Vec<RecordBatch> {
    (0..batch.num_rows())
        .step_by(CHUNK_ROWS)
        .map(|start| batch.slice(start, CHUNK_ROWS.min(batch.num_rows() - start)))
        .collect()
}

/// What the workers share: the chunks, where their results go, the next
/// chunk to take, and the chunks' turns at the windows.
#[derive(Clone, Copy)]
struct Work<'w> {
    job: &'w Job,
    chunks: &'w [RecordBatch],
    results: &'w [Mutex<Vec<RecordBatch>>],
    failures: &'w Mutex<Vec<String>>,
    next: &'w AtomicUsize,
    turns: &'w Turns,
}

impl Work<'_> {
    /// Takes chunks in input order until none is left.
    fn run(self) {
        loop {
            let number = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(batch) = self.chunks.get(number) else { return };
            let evaluated = catch_unwind(AssertUnwindSafe(|| self.evaluate(number, batch)))
                .unwrap_or_else(|_| Err("internal error in rulec: evaluating a chunk panicked".into()));
            // A chunk that failed holds up none after it.
            self.turns.finish(number as u64);
            match evaluated {
                Ok(batches) => *lock(&self.results[number]) = batches,
                Err(message) => lock(self.failures).push(message),
            }
        }
    }

    /// One chunk's result batches.
    fn evaluate(&self, number: usize, batch: &RecordBatch) -> Result<Vec<RecordBatch>, String> {
        let mut out = Vec::new();
        let turn = Turn { turns: self.turns, chunk: number as u64 };
        self.job.evaluate_in_pieces(&Chunk::Batch(batch.clone()), usize::MAX, Some(turn), &mut |piece| {
            match piece.output {
                Output::Batch(results) => out.push(results),
                Output::Lines(_) => return Err("internal error in rulec: NDJSON results for Arrow".into()),
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// A lock, whatever a panic elsewhere left: the data is replaced whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
