//! One SQL query in process, as `rulec sql` runs it (INTERFACES.md): a
//! session whose tables are files named by their quoted path (`FROM
//! 'transfers.parquet'`: Parquet, Arrow IPC file or stream, CSV, NDJSON),
//! the contracts' functions registered, and the results written as a
//! table, NDJSON, CSV or Arrow IPC.
//!
//! A file's format is DataFusion's reading of its extension, which this
//! session extends with the names rulec's batch path takes: `.ndjson`
//! and `.jsonl` are NDJSON (DataFusion's `json`), `.arrows` is Arrow.
//! NDJSON results are rulec's JSON of each row
//! ([`batch::json_rows::record_json`]: nulls left out, decimals as their
//! exact text, timestamps in RFC 3339), as `rulec eval --input` writes
//! kept fields, each output partition rendering its own rows; rows
//! stream out as the query makes them, except for a table, which needs
//! every row to size its columns.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use batch::OutputFormat;
use batch::output::{Output, Writer};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::{GetExt, Result};
use datafusion::datasource::file_format::arrow::ArrowFormatFactory;
use datafusion::datasource::file_format::json::JsonFormatFactory;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use futures_util::StreamExt;
use runtime::ContractSet;

/// How `rulec sql` writes its results.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    /// An aligned text table (every row read first).
    Table,
    Ndjson,
    Csv,
    /// Arrow IPC: the file format for a `.arrow` file, else the stream
    /// format.
    Arrow,
}

impl Format {
    pub fn named(name: &str) -> Option<Format> {
        match name {
            "table" => Some(Format::Table),
            "ndjson" => Some(Format::Ndjson),
            "csv" => Some(Format::Csv),
            "arrow" => Some(Format::Arrow),
            _ => None,
        }
    }
}

/// A session of `partitions` target partitions whose tables are files
/// named by their path, with `contracts`' functions and rulec's file
/// extensions: what `rulec sql` runs a query in.
pub fn session(contracts: &Arc<ContractSet>, partitions: usize) -> Result<SessionContext> {
    let config = SessionConfig::new().with_target_partitions(partitions);
    Ok(context(session_state(contracts, config)?))
}

/// A session state of DataFusion's defaults on `config`, [`extend`]ed.
pub fn session_state(contracts: &Arc<ContractSet>, config: SessionConfig) -> Result<SessionState> {
    extend(SessionStateBuilder::new().with_config(config).with_default_features().build(), contracts)
}

/// DataFusion's optimizer rules that move a struct's field access
/// (`r['decision']`) towards the scan. Through `rulec(...) AS r` they
/// put the call itself in every field access, so the contract ran once
/// per field read (and, over a plan decoded on a cluster with common
/// subexpressions, failed to plan); rulec's sessions run without them
/// (docs/decisions.md).
const LEAF_RULES: [&str; 2] = ["extract_leaf_expressions", "push_down_leaf_projections"];

/// `state` with `contracts`' functions, rulec's file extensions and the
/// depth limit first among its analyzer rules (for a session of its own,
/// or for a state built elsewhere).
pub fn extend(state: SessionState, contracts: &Arc<ContractSet>) -> Result<SessionState> {
    let rules =
        state.optimizers().iter().filter(|rule| !LEAF_RULES.contains(&rule.name())).cloned().collect();
    let state = first_analyzer(state, Arc::new(crate::depth::DepthLimit));
    let builder = SessionStateBuilder::new_from_existing(state).with_optimizer_rules(rules);
    let mut state = crate::with_functions(builder, contracts).build();
    // An NDJSON table's types come from every line, not DataFusion's first
    // 1,000: a field first seen later was dropped from its struct, and an
    // int column holding `500.5` further on was cut to 500.
    state.table_options_mut().json.schema_infer_max_rec = Some(usize::MAX);
    for (ext, inner) in extensions() {
        state.register_file_format(Arc::new(Extension { ext, inner }), true)?;
    }
    Ok(state)
}

/// `state` with `rule` run before its other analyzer rules (a check that
/// must see the plan before anything walks it).
pub fn first_analyzer(state: SessionState, rule: Arc<dyn AnalyzerRule + Send + Sync>) -> SessionState {
    let rules = std::iter::once(rule).chain(state.analyzer().rules.iter().cloned()).collect();
    SessionStateBuilder::new_from_existing(state).with_analyzer_rules(rules).build()
}

/// A context over `state` whose tables are files named by their path
/// (checked first: [`crate::files`]).
pub fn context(state: SessionState) -> SessionContext {
    crate::files::context(state)
}

/// The extensions rulec reads beyond DataFusion's, each with the format
/// it names.
fn extensions() -> [(&'static str, Arc<dyn FileFormatFactory>); 3] {
    [
        ("ndjson", Arc::new(JsonFormatFactory::new())),
        ("jsonl", Arc::new(JsonFormatFactory::new())),
        ("arrows", Arc::new(ArrowFormatFactory::new())),
    ]
}

/// A file format under another extension.
#[derive(Debug)]
struct Extension {
    ext: &'static str,
    inner: Arc<dyn FileFormatFactory>,
}

impl GetExt for Extension {
    fn get_ext(&self) -> String {
        self.ext.to_string()
    }
}

impl FileFormatFactory for Extension {
    fn create(&self, state: &dyn Session, options: &HashMap<String, String>) -> Result<Arc<dyn FileFormat>> {
        self.inner.create(state, options)
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        self.inner.default()
    }
}

/// Why a query gave no results, or not all of them.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum QueryFailure {
    /// The query is wrong: it does not parse or plan, or a file it names
    /// does not read (DataFusion's message).
    Query(String),
    /// The results could not be written.
    Output(String),
}

/// Runs `query` in `ctx`, writing its results to `output` (stdout when
/// `None`) in `format`; the number of rows written.
///
/// A file is written beside `output` and moved over it once every row is
/// written: a query that fails leaves `output` as it was, and a query
/// whose output is one of its inputs reads the input whole.
pub async fn run(
    ctx: &SessionContext,
    query: &str,
    format: Format,
    output: Option<&Path>,
) -> Result<u64, QueryFailure> {
    let Some(output) = output else { return write(ctx, query, format, None).await };
    let staged = batch::output::Staged::beside(output).map_err(QueryFailure::Output)?;
    let rows = write(ctx, query, format, Some(staged.path())).await?;
    staged.commit().map_err(QueryFailure::Output)?;
    Ok(rows)
}

/// [`run`]'s query, written to `output` as it is.
async fn write(
    ctx: &SessionContext,
    query: &str,
    format: Format,
    output: Option<&Path>,
) -> Result<u64, QueryFailure> {
    let failed = |e: datafusion::error::DataFusionError| QueryFailure::Query(e.to_string());
    let frame = ctx.sql(query).await.map_err(failed)?;
    if format == Format::Ndjson {
        let out = Sink::open(output).map_err(QueryFailure::Output)?;
        return ndjson(frame, out).await;
    }
    let mut stream = frame.execute_stream().await.map_err(failed)?;
    let schema: SchemaRef = stream.schema();
    let mut sink = Sink::create(format, output, &schema).map_err(QueryFailure::Output)?;
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(failed)?;
        rows += batch.num_rows() as u64;
        sink.write(batch).map_err(QueryFailure::Output)?;
    }
    sink.finish().map_err(QueryFailure::Output)?;
    Ok(rows)
}

/// The results as NDJSON into `out`: each of the plan's output partitions
/// renders its own batches (rendering is what writing NDJSON costs), and
/// the pieces are written as they come, so rows come in no set order
/// across partitions, as DataFusion's own merge of them gives (a query
/// with `ORDER BY` has one output partition, in order).
async fn ndjson(frame: DataFrame, mut out: Box<dyn Write + Send>) -> Result<u64, QueryFailure> {
    let failed = |e: datafusion::error::DataFusionError| QueryFailure::Query(e.to_string());
    let streams = frame.execute_stream_partitioned().await.map_err(failed)?;
    let (pieces, mut written) = tokio::sync::mpsc::channel(streams.len().max(1) * 2);
    for mut stream in streams {
        let pieces = pieces.clone();
        tokio::spawn(async move {
            while let Some(batch) = stream.next().await {
                let piece = batch.map(|batch| (ndjson_lines(&batch), batch.num_rows() as u64));
                if pieces.send(piece).await.is_err() {
                    return;
                }
            }
        });
    }
    drop(pieces);
    let mut rows = 0;
    while let Some(piece) = written.recv().await {
        let (lines, count) = piece.map_err(failed)?;
        out.write_all(&lines).map_err(|e| QueryFailure::Output(write_error(e)))?;
        rows += count;
    }
    out.flush().map_err(|e| QueryFailure::Output(write_error(e)))?;
    Ok(rows)
}

/// `batch`'s rows as NDJSON lines.
fn ndjson_lines(batch: &RecordBatch) -> Vec<u8> {
    let mut lines = Vec::with_capacity(batch.num_rows() * 128);
    for row in 0..batch.num_rows() {
        batch::json_rows::write_record(batch.schema_ref().fields(), batch.columns(), row, &mut lines);
        lines.push(b'\n');
    }
    lines
}

/// Where the results go, in their format.
enum Sink {
    Table { out: Box<dyn Write + Send>, batches: Vec<RecordBatch>, schema: SchemaRef },
    Csv { writer: datafusion::arrow::csv::Writer<Box<dyn Write + Send>>, schema: SchemaRef, rows: bool },
    Arrow(Writer),
}

impl Sink {
    /// The sink of `format` (NDJSON is written by partition: [`ndjson`]).
    fn create(format: Format, path: Option<&Path>, schema: &SchemaRef) -> Result<Sink, String> {
        Ok(match format {
            Format::Arrow => Sink::Arrow(Writer::create(path, OutputFormat::Arrow, schema)?),
            Format::Table => {
                Sink::Table { out: Sink::open(path)?, batches: Vec::new(), schema: schema.clone() }
            }
            Format::Csv => {
                refuse_nested_for_csv(schema)?;
                let writer = datafusion::arrow::csv::Writer::new(Sink::open(path)?);
                Sink::Csv { writer, schema: schema.clone(), rows: false }
            }
            Format::Ndjson => return Err("internal: NDJSON is written by partition".to_string()),
        })
    }

    /// The file at `path`, or stdout, buffered.
    fn open(path: Option<&Path>) -> Result<Box<dyn Write + Send>, String> {
        Ok(match path {
            Some(path) => Box::new(std::io::BufWriter::new(
                std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?,
            )),
            None => Box::new(std::io::BufWriter::new(std::io::stdout())),
        })
    }

    fn write(&mut self, batch: RecordBatch) -> Result<(), String> {
        match self {
            Sink::Table { batches, .. } => batches.push(batch),
            Sink::Csv { writer, rows, .. } => {
                writer.write(&batch).map_err(|e| e.to_string())?;
                *rows = true;
            }
            Sink::Arrow(writer) => writer.write(Output::Batch(batch))?,
        }
        Ok(())
    }

    fn finish(self) -> Result<(), String> {
        match self {
            // No rows still has its header.
            Sink::Table { mut out, mut batches, schema } => {
                if batches.is_empty() {
                    batches.push(RecordBatch::new_empty(schema));
                }
                let table = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                    .map_err(|e| e.to_string())?;
                writeln!(out, "{table}").and_then(|()| out.flush()).map_err(write_error)
            }
            Sink::Csv { mut writer, schema, rows } => {
                if !rows {
                    writer.write(&RecordBatch::new_empty(schema)).map_err(|e| e.to_string())?;
                }
                writer.into_inner().flush().map_err(write_error)
            }
            Sink::Arrow(writer) => writer.finish(),
        }
    }
}

/// Refuses results CSV cannot hold (a struct, list or map column),
/// before anything is written, naming the column.
fn refuse_nested_for_csv(schema: &SchemaRef) -> Result<(), String> {
    match schema.fields().iter().find(|f| f.data_type().is_nested()) {
        Some(field) => Err(format!(
            "column `{}` is a {}, which CSV cannot hold: select its fields (`{}['decision']`), or use \
             --format ndjson, arrow or table",
            field.name(),
            match field.data_type() {
                datafusion::arrow::datatypes::DataType::Struct(_) => "struct",
                datafusion::arrow::datatypes::DataType::Map(..) => "map",
                _ => "list",
            },
            field.name()
        )),
        None => Ok(()),
    }
}

fn write_error(e: std::io::Error) -> String {
    format!("cannot write the results: {e}")
}
