//! A batch [`Job`]: one contract, the channel every record comes from,
//! the parts of each result and the kept fields, and what evaluating one
//! [`Chunk`] gives ([`Job::evaluate`]): its records laid out as slots
//! (parsed from NDJSON lines, Protobuf messages decoded into such lines,
//! or read from Arrow columns), each valid one evaluated, and its results
//! (or its error) in input order.
//!
//! A job is `Sync`: worker threads share one and call `evaluate` on
//! chunks in any order; the pipeline puts the outputs back in order.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, SchemaRef};
use runtime::Context;
use runtime::input::records::Records;
use runtime::result::{Parts, RowSink};
use runtime::{Contract, InvalidInput};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::columns::ColumnPlan;
use crate::format::OutputFormat;
use crate::output::Output;
use crate::output::arrow::{ArrowRows, result_schema};
use crate::output::ndjson::{KeptFields, NdjsonRows};
use crate::source::Chunk;
use crate::source::ndjson::{MAX_LINE, TOO_LONG};
use crate::turns::Turn;

/// What a job is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The channel of every record (`None` for a contract without).
    pub channel: Option<String>,
    pub parts: Parts,
    /// Input fields copied into each result (top-level, by name).
    pub keep: Vec<String>,
    pub output: OutputFormat,
    /// How long each record's evaluation may run (`None`: the engine's
    /// limit, if it has one). A record past it gets its `timeout` error
    /// and the run goes on. With a limit, native code runs record by
    /// record rather than a step per call.
    pub limit: Option<runtime::semantics::budget::Limit>,
}

/// One contract's batch evaluation, shared by the workers.
#[derive(Debug)]
pub struct Job {
    contract: Arc<Contract>,
    context: Context,
    parts: Parts,
    keep: Vec<String>,
    output: OutputFormat,
    /// How Arrow batches fill the input (for a source of batches).
    plan: Option<ColumnPlan>,
    /// The kept columns' indexes in the input batches.
    kept_columns: Vec<usize>,
    schema: SchemaRef,
    /// The step length the last step's results asked for (shared by
    /// the workers: records of one input have results of similar size).
    step: AtomicUsize,
}

/// One chunk's results and counts.
#[derive(Debug)]
pub struct Evaluated {
    pub output: Output,
    pub records: usize,
    /// Records that were not evaluated (invalid input, out of time).
    pub failed: usize,
}

impl Job {
    /// A job for `contract`; `input` is the schema of the source's
    /// batches (`None` for NDJSON), matched against the contract here.
    pub fn new(
        contract: Arc<Contract>,
        settings: &Settings,
        input: Option<&SchemaRef>,
    ) -> Result<Job, String> {
        let mut context = channel_context(&contract, settings.channel.as_deref(), "--channel")?;
        if settings.limit.is_some() {
            context.limit = settings.limit;
        }
        let plan = input.map(|schema| ColumnPlan::new(&contract, schema)).transpose()?;
        let mut kept_fields = Vec::new();
        let mut kept_columns = Vec::new();
        for name in &settings.keep {
            if RESULT_KEYS.contains(&name.as_str()) {
                return Err(format!("--keep {name}: the results have a field of that name"));
            }
            match input {
                Some(schema) => {
                    let (index, field) = schema
                        .column_with_name(name)
                        .ok_or_else(|| format!("--keep {name}: the input has no column `{name}`"))?;
                    kept_columns.push(index);
                    kept_fields.push(field.clone().with_nullable(true));
                }
                None => kept_fields.push(Field::new(name, DataType::Utf8, true)),
            }
        }
        let schema = result_schema(contract.ir(), settings.parts, &kept_fields);
        // A batch is hot from its first record.
        contract.compile_for_batch();
        Ok(Job {
            contract,
            context,
            parts: settings.parts,
            keep: settings.keep.clone(),
            output: settings.output,
            plan,
            kept_columns,
            schema,
            step: AtomicUsize::new(FIRST_STEP),
        })
    }

    /// The schema of Arrow results.
    pub fn result_schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The format of the results.
    pub fn output_format(&self) -> OutputFormat {
        self.output
    }

    pub fn contract(&self) -> &Arc<Contract> {
        &self.contract
    }

    /// The results of a run that stopped before its end (a damaged input,
    /// a body cut off): one NDJSON line `{"error":{"kind":...,"message":...}}`,
    /// or one Arrow row whose `error` says it (every other column null),
    /// so a reader of the results sees why they end there.
    pub fn stopped(&self, kind: &str, message: &str) -> Result<Output, String> {
        match self.output {
            OutputFormat::Ndjson => {
                let line = serde_json::json!({ "error": { "kind": kind, "message": message } });
                let mut out = serde_json::to_vec(&line).map_err(|e| e.to_string())?;
                out.push(b'\n');
                Ok(Output::Lines(out))
            }
            OutputFormat::Arrow => {
                let mut rows = ArrowRows::new(self.contract.ir(), self.parts, 1);
                rows.stopped(kind, message);
                let kept = self.schema.fields()[..self.keep.len()]
                    .iter()
                    .map(|field| arrow_array::new_null_array(field.data_type(), 1))
                    .collect();
                Ok(Output::Batch(rows.finish(&self.schema, kept)?))
            }
        }
    }

    /// Evaluates one chunk into one output.
    pub fn evaluate(&self, chunk: &Chunk) -> Result<Evaluated, String> {
        let mut whole = None;
        self.evaluate_in_pieces(chunk, usize::MAX, None, &mut |piece| {
            whole = Some(piece);
            Ok(())
        })?;
        whole.ok_or_else(|| "internal: a chunk gave no results".into())
    }

    /// Evaluates one chunk, handing its results to `emit` in order, in
    /// pieces of about `piece_bytes` or more (the last may be smaller):
    /// records whose results are large (hundreds of rules firing) are
    /// written a few at a time instead of a chunk at a time, so the
    /// results in flight stay as small as the records are. A chunk gives
    /// at least one piece. An error from `emit` stops the chunk.
    ///
    /// A contract's windows see the chunks in the order of their turns
    /// (`turn`, [`crate::turns`]); without one, in the order of the calls.
    pub fn evaluate_in_pieces(
        &self,
        chunk: &Chunk,
        piece_bytes: usize,
        turn: Option<Turn<'_>>,
        emit: &mut dyn FnMut(Evaluated) -> Result<(), String>,
    ) -> Result<(), String> {
        let pieces = Pieces { bytes: piece_bytes, emit, turn };
        match chunk {
            Chunk::Lines(bytes) => self.lines(bytes, pieces),
            Chunk::Batch(batch) => self.batch(batch, pieces),
            Chunk::Messages(messages) => {
                let mut lines = crate::buffers::take(4 * messages.len());
                let evaluated = messages.write_lines(&mut lines).and_then(|()| self.lines(&lines, pieces));
                crate::buffers::give(lines);
                evaluated
            }
        }
    }

    fn lines<'b>(&self, bytes: &'b [u8], pieces: Pieces<'_>) -> Result<(), String> {
        let lines: Vec<&[u8]> =
            split_lines(bytes).filter(|l| l.iter().any(|b| !b.is_ascii_whitespace())).collect();
        let too_long = || InvalidInput::one("", format!("the record is longer than {} MiB", MAX_LINE >> 20));
        let read = |records: &mut Records<'b>, start: usize, len: usize| {
            for (row, line) in lines[start..start + len].iter().enumerate() {
                if *line == TOO_LONG || line.len() > MAX_LINE {
                    records.set_problem(row, too_long());
                    continue;
                }
                match std::str::from_utf8(line) {
                    Ok(text) => records.parse_row(self.contract.program(), row, text.trim_end()),
                    Err(e) => records
                        .set_problem(row, InvalidInput::one("", format!("the record is not UTF-8: {e}"))),
                }
            }
        };
        let kept: Vec<Vec<Option<&str>>> = if self.keep.is_empty() {
            Vec::new()
        } else {
            lines
                .iter()
                .map(|line| kept_values(std::str::from_utf8(line).unwrap_or(""), &self.keep))
                .collect()
        };
        let kept_pairs = |row: usize, out: &mut Vec<u8>| {
            for (name, value) in self.keep.iter().zip(&kept[row]) {
                if let Some(raw) = value {
                    pair(out, name, |out| out.extend_from_slice(raw.as_bytes()));
                }
            }
        };
        let kept_columns = |start: usize, len: usize| -> Vec<ArrayRef> {
            (0..self.keep.len())
                .map(|k| {
                    let values: StringArray =
                        kept[start..start + len].iter().map(|row| row[k].map(unquoted)).collect();
                    Arc::new(values) as ArrayRef
                })
                .collect()
        };
        self.rows(lines.len(), read, KeptOutput { pairs: kept_pairs, columns: kept_columns }, pieces)
    }

    fn batch(&self, batch: &RecordBatch, pieces: Pieces<'_>) -> Result<(), String> {
        let plan = self.plan.as_ref().ok_or("internal: Arrow records without a column plan")?;
        let decoded = plan.decode(batch)?;
        self.decoded_batch(plan, &decoded, batch, pieces)
    }

    /// [`Job::batch`] of `batch` as the plan reads it (`decoded`); kept
    /// columns come from `batch` as it is.
    fn decoded_batch<'b>(
        &self,
        plan: &ColumnPlan,
        decoded: &'b RecordBatch,
        batch: &RecordBatch,
        pieces: Pieces<'_>,
    ) -> Result<(), String> {
        let read = |records: &mut Records<'b>, start: usize, len: usize| {
            plan.fill(&self.contract, decoded, start, len, records);
        };
        let kept_pairs = |row: usize, out: &mut Vec<u8>| {
            for (name, index) in self.keep.iter().zip(&self.kept_columns) {
                let column = batch.column(*index);
                if !crate::json_rows::is_null(column.as_ref(), row) {
                    pair(out, name, |out| crate::json_rows::write_value(column.as_ref(), row, out));
                }
            }
        };
        let kept_columns = |start: usize, len: usize| {
            self.kept_columns.iter().map(|i| batch.column(*i).slice(start, len)).collect()
        };
        runtime::contained::contained("reading a record batch", || {
            self.rows(batch.num_rows(), read, KeptOutput { pairs: kept_pairs, columns: kept_columns }, pieces)
        })
    }

    /// Evaluates `count` records into the output format, a step at a
    /// time: `read(records, start, len)` lays out the records from
    /// `start` on as rows `0 .. len`. A contract with signals has the
    /// whole chunk laid out at once and its signals computed first
    /// ([`Job::signalled_rows`]); any other, a step at a time in one
    /// buffer reused for every step (small enough to stay in the
    /// core's cache).
    fn rows<'r>(
        &self,
        count: usize,
        read: impl Fn(&mut Records<'r>, usize, usize),
        kept: KeptOutput<impl Fn(usize, &mut Vec<u8>), impl Fn(usize, usize) -> Vec<ArrayRef>>,
        pieces: Pieces<'_>,
    ) -> Result<(), String> {
        if self.contract.has_signals() {
            return self.signalled_rows(count, read, kept, pieces);
        }
        let mut records = Records::new(self.contract.program(), STEP.min(count));
        self.steps(count, kept, pieces, &mut |start, len, sink| {
            records.reset(len);
            read(&mut records, start, len);
            self.contract.evaluate_records(&records, &self.context, sink)
        })
    }

    /// [`Job::rows`] for a contract with windows or scores: the chunk's
    /// records enter the windows in the chunk's turn (after every chunk
    /// before it, [`Turn`]), then are scored once per model and evaluated
    /// a step at a time, in parallel with other chunks.
    fn signalled_rows<'r>(
        &self,
        count: usize,
        read: impl Fn(&mut Records<'r>, usize, usize),
        kept: KeptOutput<impl Fn(usize, &mut Vec<u8>), impl Fn(usize, usize) -> Vec<ArrayRef>>,
        pieces: Pieces<'_>,
    ) -> Result<(), String> {
        let mut records = Records::new(self.contract.program(), count);
        read(&mut records, 0, count);
        let signals = self.contract.chunk_signals(&records, &self.context, |enter| match pieces.turn {
            Some(turn) => turn.run(enter),
            None => enter(),
        });
        self.steps(count, kept, pieces, &mut |start, len, sink| {
            self.contract.evaluate_signalled(&records, start..start + len, &self.context, &signals, sink)
        })
    }

    /// Evaluates `count` records a step (a run of records laid out and evaluated together) at a time (`evaluate(start,
    /// len, sink)` gives the results of records `start .. start + len`),
    /// handing them on in pieces. A step is at most [`STEP`] records,
    /// fewer when their results are large (a step's results are at
    /// most half a piece).
    fn steps<'s>(
        &'s self,
        count: usize,
        kept: KeptOutput<impl Fn(usize, &mut Vec<u8>), impl Fn(usize, usize) -> Vec<ArrayRef>>,
        pieces: Pieces<'_>,
        evaluate: &mut dyn FnMut(usize, usize, &mut dyn RowSink<'s>) -> usize,
    ) -> Result<(), String> {
        let mut out = self.results(count.min(STEP * 4));
        let (mut piece_start, mut failed, mut start) = (0, 0, 0);
        let mut step = self.step.load(Ordering::Relaxed);
        loop {
            let len = step.min(count - start);
            let before = out.bytes();
            let sink: &mut dyn RowSink<'_> = match &mut out {
                Rows::Ndjson(out) => {
                    let pairs = |row: usize, pairs: &mut Vec<u8>| (kept.pairs)(start + row, pairs);
                    out.step(len, (!self.keep.is_empty()).then_some(&pairs as KeptFields<'_>));
                    out
                }
                Rows::Arrow(out) => out,
            };
            failed += evaluate(start, len, sink);
            start += len;
            step = next_step(len, out.bytes() - before, pieces.bytes);
            self.step.store(step, Ordering::Relaxed);
            if start == count || out.bytes() >= pieces.bytes {
                let rest = (count - start).min(STEP * 4);
                let piece = std::mem::replace(&mut out, self.results(rest));
                let output = match piece {
                    Rows::Ndjson(out) => Output::Lines(out.out),
                    Rows::Arrow(out) => Output::Batch(
                        out.finish(&self.schema, (kept.columns)(piece_start, start - piece_start))?,
                    ),
                };
                (pieces.emit)(Evaluated { output, records: start - piece_start, failed })?;
                (piece_start, failed) = (start, 0);
            }
            if start == count {
                return Ok(());
            }
        }
    }

    /// An empty output for about `rows` records.
    fn results(&self, rows: usize) -> Rows<'_> {
        match self.output {
            OutputFormat::Ndjson => Rows::Ndjson(NdjsonRows::new(self.parts, rows)),
            OutputFormat::Arrow => Rows::Arrow(ArrowRows::new(self.contract.ir(), self.parts, rows)),
        }
    }
}

/// Where a chunk's results go, how large a piece is, and the chunk's
/// turn to enter its records into the contract's windows (`None`: the
/// caller gives chunks one at a time, in order).
struct Pieces<'e> {
    bytes: usize,
    emit: &'e mut dyn FnMut(Evaluated) -> Result<(), String>,
    turn: Option<Turn<'e>>,
}

/// The kept fields of a chunk's rows: `pairs(row, out)` writes row
/// `row`'s as JSON pairs, `columns(start, len)` gives rows `start ..
/// start + len`'s as Arrow columns.
struct KeptOutput<P, C> {
    pairs: P,
    columns: C,
}

/// The next step's length after one of `len` records whose results
/// took `bytes`: as many records as give half a piece, by that step's
/// bytes per record, between 1 and [`STEP`].
fn next_step(len: usize, bytes: usize, piece_bytes: usize) -> usize {
    let per_record = (bytes / len.max(1)).max(1);
    (piece_bytes / 2 / per_record).clamp(1, STEP)
}

/// Records laid out per step: a few hundred kilobytes of slots.
const STEP: usize = 1024;

/// The first step of a run, before the size of its results is known.
const FIRST_STEP: usize = 64;

/// A chunk's results as they are written.
enum Rows<'p> {
    Ndjson(NdjsonRows),
    Arrow(ArrowRows<'p>),
}

impl Rows<'_> {
    fn bytes(&self) -> usize {
        match self {
            Rows::Ndjson(out) => out.out.len(),
            Rows::Arrow(out) => out.bytes(),
        }
    }
}

/// The keys of a result line, which kept fields may not take.
const RESULT_KEYS: [&str; 8] =
    ["contract", "version", "decision", "reasons", "findings", "effects", "errors", "error"];

/// The context of every record: the channel, checked once (before any
/// input is read: a caller may check it before opening the input).
/// `setting` is the channel's name where the caller takes it (`--channel`,
/// the server's `` `channel` ``, Python's `channel=`), for the messages.
pub fn channel_context(contract: &Contract, channel: Option<&str>, setting: &str) -> Result<Context, String> {
    let c = contract.ir();
    if channel.is_none() && !c.channels.is_empty() {
        return Err(format!(
            "{setting} is required: the contract declares channels ({})",
            c.channels.join(", ")
        ));
    }
    contract.context(channel, None, None).map_err(|e| {
        let messages: Vec<String> = e.details.iter().map(|d| d.message.clone()).collect();
        format!("{setting}: {}", messages.join("; "))
    })
}

/// Appends `"name":value` (after a comma unless first).
fn pair(out: &mut Vec<u8>, name: &str, value: impl FnOnce(&mut Vec<u8>)) {
    if !out.is_empty() {
        out.push(b',');
    }
    runtime::value::write_json_str(name, out);
    out.push(b':');
    value(out);
}

/// A raw JSON value as a kept Arrow string: a string's text, any other
/// value's JSON.
fn unquoted(raw: &str) -> Cow<'_, str> {
    if raw.starts_with('"') {
        serde_json::from_str::<Cow<'_, str>>(raw).unwrap_or(Cow::Borrowed(raw))
    } else {
        Cow::Borrowed(raw)
    }
}

/// The raw JSON text of each of the `keys` at the top of the record
/// `text` (`None` when absent, or when the record is not an object).
fn kept_values<'t>(text: &'t str, keys: &[String]) -> Vec<Option<&'t str>> {
    let mut found = vec![None; keys.len()];
    let mut json = serde_json::Deserializer::from_str(text);
    let _ = Kept { keys, found: &mut found }.deserialize(&mut json);
    found
}

struct Kept<'k, 't> {
    keys: &'k [String],
    found: &'k mut [Option<&'t str>],
}

impl<'de> DeserializeSeed<'de> for Kept<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Kept<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.keys.iter().position(|k| *k == key) {
                Some(k) => self.found[k] = Some(map.next_value::<&'de RawValue>()?.get()),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The lines of a block, cut at each `\n` (found a word at a time).
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', bytes);
    std::iter::from_fn(move || {
        if start > bytes.len() {
            return None;
        }
        let end = ends.next().unwrap_or(bytes.len());
        let line = &bytes[start..end];
        start = end + 1;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_EFFECTS: &str = "contract: t.no_effects\nversion: 1.0.0\ninput:\n  amount: int\nrules:\n  - id: big\n    when: amount > 10\n    deny: \"big\"\n";

    fn job(output: OutputFormat) -> Job {
        let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
        let contract = engine.load(frontend::compile(NO_EFFECTS).expect("compiles")).expect("loads");
        let settings = Settings { channel: None, parts: Parts::ALL, keep: Vec::new(), output, limit: None };
        Job::new(contract, &settings, None).expect("a job")
    }

    #[test]
    fn a_contract_without_effects_has_arrow_results() {
        let evaluated =
            job(OutputFormat::Arrow).evaluate(&Chunk::Lines(b"{\"amount\":1}\n{\"amount\":20}\n".to_vec()));
        let Ok(Evaluated { output: Output::Batch(batch), records: 2, failed: 0 }) = evaluated else {
            panic!("two results: {evaluated:?}");
        };
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column_by_name("effects").map(|c| c.len()), Some(2));
    }

    /// Each result row as JSON, from lines or a batch.
    fn rows(output: Output) -> Vec<String> {
        match output {
            Output::Lines(lines) => {
                String::from_utf8(lines).expect("UTF-8").lines().map(String::from).collect()
            }
            Output::Batch(batch) => (0..batch.num_rows())
                .map(|row| crate::json_rows::record_json(batch.schema().fields(), batch.columns(), row))
                .collect(),
        }
    }

    #[test]
    fn the_pieces_of_a_chunk_are_its_results_in_order() {
        let lines: String = (0..3000).map(|i| format!("{{\"amount\":{}}}\n", i % 40)).collect();
        let chunk = Chunk::Lines(lines.into_bytes());
        for output in [OutputFormat::Ndjson, OutputFormat::Arrow] {
            let job = job(output);
            let whole = rows(job.evaluate(&chunk).expect("results").output);
            let mut pieces = Vec::new();
            job.evaluate_in_pieces(&chunk, 4096, None, &mut |piece| {
                pieces.push(piece);
                Ok(())
            })
            .expect("results");
            assert!(pieces.len() > 4, "{output:?}: {} pieces", pieces.len());
            assert_eq!(pieces.iter().map(|p| p.records).sum::<usize>(), 3000);
            let joined: Vec<String> = pieces.into_iter().flat_map(|p| rows(p.output)).collect();
            assert_eq!(joined, whole, "{output:?}");
        }
    }

    #[test]
    fn a_stopped_run_ends_with_one_error() {
        let Ok(Output::Lines(line)) = job(OutputFormat::Ndjson).stopped("bad_body", "cut off") else {
            panic!("a line");
        };
        assert_eq!(line, b"{\"error\":{\"kind\":\"bad_body\",\"message\":\"cut off\"}}\n");
        let Ok(Output::Batch(batch)) = job(OutputFormat::Arrow).stopped("bad_body", "cut off") else {
            panic!("a row");
        };
        assert_eq!(batch.num_rows(), 1);
        let row = crate::json_rows::record_json(batch.schema().fields(), batch.columns(), 0);
        assert_eq!(row, r#"{"error":{"kind":"bad_body","message":"cut off"}}"#);
    }
}
