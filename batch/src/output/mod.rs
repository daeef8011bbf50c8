//! Where results go: each evaluated chunk's [`Output`] is written in
//! input order by a [`Writer`]: NDJSON lines, or Arrow IPC (the file
//! format for a `.arrow` file, the stream format otherwise); a file
//! replaced whole ([`Staged`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

pub mod arrow;
pub mod ndjson;
pub mod staged;

pub use staged::Staged;

use crate::format::OutputFormat;

/// One chunk's results.
#[derive(Debug)]
pub enum Output {
    /// NDJSON result lines, each ending in a newline.
    Lines(Vec<u8>),
    /// An Arrow batch, one row per record.
    Batch(RecordBatch),
}

/// Writes chunks' results in order.
pub struct Writer {
    kind: Kind,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writer")
    }
}

enum Kind {
    Lines(Box<dyn Write + Send>),
    ArrowFile(arrow_ipc::writer::FileWriter<Box<dyn Write + Send>>),
    ArrowStream(arrow_ipc::writer::StreamWriter<Box<dyn Write + Send>>),
}

impl Writer {
    /// A writer to `path` (stdout when `None`) in `format`; Arrow results
    /// have `schema`.
    pub fn create(path: Option<&Path>, format: OutputFormat, schema: &SchemaRef) -> Result<Writer, String> {
        let stream: Box<dyn Write + Send> = match path {
            Some(path) => Box::new(BufWriter::with_capacity(
                1 << 20,
                File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?,
            )),
            None => Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout())),
        };
        let file_format =
            path.is_some_and(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("arrow")));
        Writer::new(stream, format, file_format, schema)
    }

    /// A writer to `stream`; Arrow as the IPC file format when
    /// `file_format` (it needs a footer, so only for files), else the
    /// stream format.
    pub fn new(
        stream: Box<dyn Write + Send>,
        format: OutputFormat,
        file_format: bool,
        schema: &SchemaRef,
    ) -> Result<Writer, String> {
        let error = |e: arrow_schema::ArrowError| format!("cannot write results: {e}");
        let kind = match format {
            OutputFormat::Ndjson => Kind::Lines(stream),
            OutputFormat::Arrow if file_format => {
                Kind::ArrowFile(arrow_ipc::writer::FileWriter::try_new(stream, schema).map_err(error)?)
            }
            OutputFormat::Arrow => {
                Kind::ArrowStream(arrow_ipc::writer::StreamWriter::try_new(stream, schema).map_err(error)?)
            }
        };
        Ok(Writer { kind })
    }

    pub fn write(&mut self, output: Output) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot write results: {e}");
        let arrow = |e: arrow_schema::ArrowError| format!("cannot write results: {e}");
        match (&mut self.kind, output) {
            (Kind::Lines(stream), Output::Lines(bytes)) => {
                let written = stream.write_all(&bytes).map_err(io);
                crate::buffers::give(bytes);
                written
            }
            (Kind::ArrowFile(writer), Output::Batch(batch)) => writer.write(&batch).map_err(arrow),
            (Kind::ArrowStream(writer), Output::Batch(batch)) => writer.write(&batch).map_err(arrow),
            _ => Err("internal: a chunk's results are not in the output's format".into()),
        }
    }

    /// Passes on what has been written so far (a stream read as it is
    /// written: results sent over HTTP chunk by chunk).
    pub fn flush(&mut self) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot write results: {e}");
        let arrow = |e: arrow_schema::ArrowError| format!("cannot write results: {e}");
        match &mut self.kind {
            Kind::Lines(stream) => stream.flush().map_err(io),
            Kind::ArrowFile(writer) => writer.flush().map_err(arrow),
            Kind::ArrowStream(writer) => writer.flush().map_err(arrow),
        }
    }

    /// Flushes everything (and writes the Arrow file's footer).
    pub fn finish(self) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot write results: {e}");
        let arrow = |e: arrow_schema::ArrowError| format!("cannot write results: {e}");
        match self.kind {
            Kind::Lines(mut stream) => stream.flush().map_err(io),
            Kind::ArrowFile(mut writer) => {
                writer.finish().map_err(arrow)?;
                writer.into_inner().map_err(arrow)?.flush().map_err(io)
            }
            Kind::ArrowStream(mut writer) => {
                writer.finish().map_err(arrow)?;
                writer.into_inner().map_err(arrow)?.flush().map_err(io)
            }
        }
    }
}
