//! `Contract.evaluate_batch`: records from anything that speaks the Arrow
//! PyCapsule interface (`__arrow_c_stream__`: pyarrow tables and record
//! batch readers, polars frames, DuckDB results; `__arrow_c_array__`: a
//! record batch), imported without a copy and checked
//! ([`crate::arrow_source`]), evaluated by the batch crate's [`Job`] (the
//! column path of `rulec eval --input`: the schema matched once, columns
//! straight into input slots) on every core with the GIL released,
//! records entering windows in input order ([`batch::turns`]); the results
//! a `pyarrow.Table` with the columns of `rulec eval --output-format
//! arrow`.
//!
//! The data is streamed as the CLI streams a file: this thread reads a
//! batch at a time (taking the GIL for the read only), cuts it into chunks
//! of [`CHUNK_ROWS`] (small batches gathered into one), and hands them to
//! the workers through a queue of a few chunks, so the input in memory is
//! a few chunks whatever its size. Between chunks it checks for signals:
//! Ctrl-C stops the evaluation and raises `KeyboardInterrupt`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_pyarrow::{IntoPyArrow, Table};
use batch::output::Output;
use batch::source::Chunk;
use batch::turns::{Turn, Turns};
use batch::{Job, OutputFormat, Settings};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use runtime::result::Parts;

use crate::arrow_source::Batches;
use crate::errors::{InputError, RulecError, contained};

/// Rows a worker evaluates at once; smaller batches are gathered into
/// chunks of about this size.
const CHUNK_ROWS: usize = 8192;

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
    // Checked first, for a message naming the parameter (the job's names
    // the CLI's flag).
    batch::job::channel_context(contract, channel, "channel=").map_err(InputError::new_err)?;
    let mut batches = Batches::open(data)?;
    let job =
        Job::new(Arc::clone(contract), &settings, Some(batches.schema())).map_err(InputError::new_err)?;
    let results = py.detach(|| contained(|| run(&job, &mut batches)))?;
    let table = Table::try_new(results, job.result_schema().clone())
        .map_err(|e| RulecError::new_err(e.to_string()))?;
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

/// Evaluates `batches` on every core (module doc); the results in input
/// order.
fn run(job: &Job, batches: &mut Batches) -> PyResult<Vec<RecordBatch>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (send, receive) = sync_channel(2 * threads);
    let work = Work {
        job,
        chunks: Mutex::new(receive),
        results: Mutex::new(Vec::new()),
        failures: Mutex::new(Vec::new()),
        turns: Turns::default(),
    };
    let fed = std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| work.run());
        }
        // Dropping the sender (on return) ends the workers.
        feed(batches, send)
    });
    fed?;
    if let Some(failure) = work.failures.into_inner().unwrap_or_default().into_iter().next() {
        return Err(RulecError::new_err(failure));
    }
    Ok(work.results.into_inner().unwrap_or_default().into_iter().flatten().collect())
}

/// Reads the batches and sends them as numbered chunks, gathering small
/// batches; stops at the first error or signal.
fn feed(batches: &mut Batches, send: SyncSender<(usize, RecordBatch)>) -> PyResult<()> {
    let schema = batches.schema().clone();
    let mut gathered: Vec<RecordBatch> = Vec::new();
    let mut number = 0;
    let mut send_chunk = |chunk: RecordBatch| {
        // A closed queue means every worker is gone: nothing to do.
        let _ = send.send((number, chunk));
        number += 1;
    };
    // The rows gathered, kept as they are gathered (summing them at each
    // batch made a chunk of one-row batches quadratic).
    let mut rows = 0;
    let gather = |gathered: &mut Vec<RecordBatch>, rows: &mut usize| -> PyResult<Option<RecordBatch>> {
        if gathered.is_empty() {
            return Ok(None);
        }
        let chunk = arrow_select::concat::concat_batches(&schema, gathered.iter())
            .map_err(|e| RulecError::new_err(format!("internal error in rulec: gathering batches: {e}")))?;
        gathered.clear();
        *rows = 0;
        Ok(Some(chunk))
    };
    while let Some(batch) = Python::attach(|py| {
        py.check_signals()?;
        batches.next(py)
    })? {
        for start in (0..batch.num_rows()).step_by(CHUNK_ROWS) {
            let slice = batch.slice(start, CHUNK_ROWS.min(batch.num_rows() - start));
            if slice.num_rows() == CHUNK_ROWS {
                Python::attach(|py| py.check_signals())?;
                send_chunk(slice);
                continue;
            }
            rows += slice.num_rows();
            gathered.push(slice);
            if rows >= CHUNK_ROWS {
                gather(&mut gathered, &mut rows)?.into_iter().for_each(&mut send_chunk);
            }
        }
    }
    gather(&mut gathered, &mut rows)?.into_iter().for_each(&mut send_chunk);
    Ok(())
}

/// What the workers share: the queue of chunks, where their results go,
/// and the chunks' turns at the windows.
struct Work<'w> {
    job: &'w Job,
    chunks: Mutex<Receiver<(usize, RecordBatch)>>,
    /// Each chunk's result batches, by the chunk's number.
    results: Mutex<Vec<Vec<RecordBatch>>>,
    failures: Mutex<Vec<String>>,
    turns: Turns,
}

impl Work<'_> {
    /// Takes chunks until the queue is closed and empty.
    fn run(&self) {
        loop {
            let Ok((number, batch)) = lock(&self.chunks).recv() else { return };
            let evaluated = catch_unwind(AssertUnwindSafe(|| self.evaluate(number, batch)))
                .unwrap_or_else(|_| Err("internal error in rulec: evaluating a chunk panicked".into()));
            // A chunk that failed holds up none after it.
            self.turns.finish(number as u64);
            match evaluated {
                Ok(batches) => {
                    let mut results = lock(&self.results);
                    if results.len() <= number {
                        results.resize_with(number + 1, Vec::new);
                    }
                    results[number] = batches;
                }
                Err(message) => lock(&self.failures).push(message),
            }
        }
    }

    /// One chunk's result batches.
    fn evaluate(&self, number: usize, batch: RecordBatch) -> Result<Vec<RecordBatch>, String> {
        let mut out = Vec::new();
        let turn = Turn { turns: &self.turns, chunk: number as u64 };
        self.job.evaluate_in_pieces(&Chunk::Batch(batch), usize::MAX, Some(turn), &mut |piece| {
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
