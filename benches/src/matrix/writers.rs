//! Input files of the batch matrix: generated records written in each
//! input format.
//!
//! Writers are found by the format's name ([`batch::InputFormat::name`]),
//! so a format the batch crate gains finds its writer here, if it has one,
//! with no other edit; a format without one is reported "skipped: not
//! built". NDJSON and a JSON array are written here; Arrow IPC, Parquet
//! and Avro from record batches ([`super::arrow`], [`super::avro`]);
//! Protobuf in [`super::protobuf`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::Value;

use super::arrow::{self, ArrowWriter, Opener};
use super::sink::{FormatWriter, RecordSink};

/// The writer of the format named `format`, if there is one.
pub fn writer(format: &str) -> Option<Box<dyn FormatWriter>> {
    match format {
        "ndjson" => Some(Box::new(Lines { array: false })),
        "json" => Some(Box::new(Lines { array: true })),
        "arrow" => Some(Box::new(ArrowFormat { extension: "arrow", open: arrow::ipc_file })),
        "parquet" => Some(Box::new(ArrowFormat { extension: "parquet", open: arrow::parquet })),
        "avro" => Some(Box::new(ArrowFormat { extension: "avro", open: super::avro::open })),
        "protobuf" => Some(Box::new(super::protobuf::ProtobufFormat)),
        _ => None,
    }
}

/// NDJSON (one record a line), or one JSON array of records (a record a
/// line between its brackets).
#[derive(Debug)]
struct Lines {
    array: bool,
}

impl FormatWriter for Lines {
    fn extension(&self) -> &'static str {
        if self.array { "json" } else { "ndjson" }
    }

    fn create(&self, path: &Path, _: &ir::Contract) -> Result<Box<dyn RecordSink>, String> {
        let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        if self.array {
            out.write_all(b"[").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(Box::new(LineSink { out, array: self.array, first: true, path: path.display().to_string() }))
    }
}

#[derive(Debug)]
struct LineSink {
    out: BufWriter<File>,
    array: bool,
    first: bool,
    path: String,
}

impl LineSink {
    fn failed(&self, e: impl std::fmt::Display) -> String {
        format!("cannot write {}: {e}", self.path)
    }
}

impl RecordSink for LineSink {
    fn write(&mut self, record: &Value) -> Result<(), String> {
        if self.array && !self.first {
            self.out.write_all(b",").map_err(|e| self.failed(e))?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, record).map_err(|e| self.failed(e))?;
        self.out.write_all(b"\n").map_err(|e| self.failed(e))
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        if self.array {
            self.out.write_all(b"]\n").map_err(|e| self.failed(e))?;
        }
        self.out.flush().map_err(|e| self.failed(e))
    }
}

/// Typed columns, as record batches written to a file of batches (Arrow
/// IPC, Parquet, Avro).
#[derive(Debug)]
pub struct ArrowFormat {
    pub extension: &'static str,
    pub open: Opener,
}

impl FormatWriter for ArrowFormat {
    fn extension(&self) -> &'static str {
        self.extension
    }

    fn create(&self, path: &Path, contract: &ir::Contract) -> Result<Box<dyn RecordSink>, String> {
        Ok(Box::new(ArrowWriter::create(path, contract, self.open)?))
    }
}
