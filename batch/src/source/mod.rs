//! Where records come from: a [`Source`] yields [`Chunk`]s, blocks of
//! records small enough to keep memory flat and large enough to keep a
//! core busy (thousands of records): NDJSON lines and JSON arrays as
//! [`Chunk::Lines`] (Protobuf messages too, written as JSON records),
//! Arrow IPC, Parquet and Avro as [`Chunk::Batch`].

use std::io::Read;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::format::InputFormat;

mod arrow;
mod avro;
pub mod framed;
mod ipc_file;
pub mod json;
pub mod ndjson;
mod parquet;
pub mod protobuf;

pub use arrow::ArrowFile;
pub use json::JsonArrayReader;
pub use ndjson::NdjsonReader;
pub use protobuf::ProtobufReader;

/// Rows per Arrow chunk: larger batches are cut (without copying).
pub const CHUNK_ROWS: usize = 4 * 1024;

/// A block of records.
#[derive(Debug)]
pub enum Chunk {
    /// Whole NDJSON lines, each one record (blank lines are skipped).
    Lines(Vec<u8>),
    /// Records as an Arrow record batch, one row each.
    Batch(RecordBatch),
    /// Length-delimited Protobuf messages, each one record (decoded into
    /// NDJSON lines by the worker).
    Messages(protobuf::Messages),
}

/// Records in order, a chunk at a time.
pub trait Source: Send {
    /// The next chunk, `None` at the end; an error ends the run.
    fn next_chunk(&mut self) -> Result<Option<Chunk>, String>;

    /// The schema every batch has, for sources of Arrow batches (matched
    /// against the contract once, before the first record).
    fn schema(&self) -> Option<SchemaRef> {
        None
    }
}

/// Appends up to `limit` bytes of `input` to `buffer` (fewer only at the
/// input's end) and says how many; 0 at the end. Each read asks for all
/// that is left of the block: `read_to_end`'s small, growing reads cost
/// the NDJSON reader eight times the copying they did.
pub(crate) fn read_block(input: &mut dyn Read, buffer: &mut Vec<u8>, limit: usize) -> std::io::Result<usize> {
    let start = buffer.len();
    buffer.resize(start + limit, 0);
    let mut end = start;
    while end < buffer.len() {
        match input.read(&mut buffer[end..]) {
            Ok(0) => break,
            Ok(n) => end += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                buffer.truncate(start);
                return Err(e);
            }
        }
    }
    buffer.truncate(end);
    Ok(end - start)
}

/// Opens `path` as `format` (Protobuf, which needs a schema, is opened
/// with [`ProtobufReader::open`]).
pub fn open(path: &Path, format: InputFormat) -> Result<Box<dyn Source>, String> {
    Ok(match format {
        InputFormat::Ndjson => Box::new(NdjsonReader::open(path)?),
        InputFormat::Arrow => Box::new(ArrowFile::open(path)?),
        InputFormat::Protobuf => {
            return Err(format!("{}: Protobuf input needs its schema (--proto FILE)", path.display()));
        }
        InputFormat::Json => Box::new(JsonArrayReader::open(path)?),
        InputFormat::Avro => Box::new(avro::open(path)?),
        InputFormat::Parquet => Box::new(parquet::open(path)?),
    })
}
