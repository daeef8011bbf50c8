//! Arrow IPC input: the file format (`ARROW1` magic) or the stream
//! format, told apart by the first bytes; record batches as chunks, cut
//! to at most [`CHUNK_ROWS`](super::CHUNK_ROWS) rows without copying.
//!
//! The IPC reader can panic on malformed files: every call into it is
//! [`contained`], so a damaged file is an error, never a crash.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use super::framed::Framed;
use super::{CHUNK_ROWS, Chunk, Source};
use runtime::contained::contained;

/// The first bytes of the IPC file format (the stream format has none).
const FILE_MAGIC: &[u8; 6] = b"ARROW1";

/// Record batches from a reader of any format.
pub(crate) type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// An Arrow IPC file or stream; or any reader of record batches (Parquet,
/// Avro), cut into chunks the same way.
pub struct ArrowFile {
    batches: Batches,
    schema: SchemaRef,
    /// A batch being cut into chunks, and its next row.
    current: Option<(RecordBatch, usize)>,
    name: String,
    /// The format, as errors name it (`Arrow IPC`, `Parquet`, `Avro`).
    format: &'static str,
    batches_read: usize,
}

impl std::fmt::Debug for ArrowFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArrowFile")
    }
}

impl ArrowFile {
    pub fn open(path: &Path) -> Result<ArrowFile, String> {
        let name = path.display().to_string();
        contained(&format!("{name}: not a readable Arrow IPC file"), || {
            let mut file = File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
            let mut magic = [0u8; 6];
            let is_file_format = file.read_exact(&mut magic).is_ok() && &magic == FILE_MAGIC;
            file.seek(SeekFrom::Start(0)).map_err(|e| format!("cannot read {name}: {e}"))?;
            ArrowFile::from_reader(file, is_file_format, name.clone())
        })
    }

    /// The stream format from any reader (an HTTP body), called `name`,
    /// whose messages may be at most `max_message` bytes (checked before
    /// the reader sizes its buffers: see [`Framed`]).
    pub fn stream(
        input: impl Read + Send + 'static,
        name: String,
        max_message: u64,
    ) -> Result<ArrowFile, String> {
        contained(&format!("{name}: not a readable Arrow IPC stream"), || {
            let input = Framed::new(input, max_message);
            let reader =
                arrow_ipc::reader::StreamReader::try_new(BufReader::with_capacity(1 << 20, input), None)
                    .map_err(|e| format!("{name} is not a readable Arrow IPC stream: {e}"))?;
            let schema = reader.schema();
            Ok(ArrowFile::from_batches(schema, Box::new(reader), name, "Arrow IPC"))
        })
    }

    /// The batches of any reader, all of `schema`, called `name`.
    pub(crate) fn from_batches(
        schema: SchemaRef,
        batches: Batches,
        name: String,
        format: &'static str,
    ) -> ArrowFile {
        ArrowFile { batches, schema, current: None, name, format, batches_read: 0 }
    }

    fn from_reader(file: File, is_file_format: bool, name: String) -> Result<ArrowFile, String> {
        let not_arrow = |e: ArrowError| format!("{name} is not a readable Arrow IPC file: {e}");
        let (schema, batches): (SchemaRef, Batches) = if is_file_format {
            let reader = super::ipc_file::IpcFile::open(file).map_err(not_arrow)?;
            (reader.schema(), Box::new(reader))
        } else {
            let reader =
                arrow_ipc::reader::StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None)
                    .map_err(not_arrow)?;
            (reader.schema(), Box::new(reader))
        };
        Ok(ArrowFile::from_batches(schema, batches, name, "Arrow IPC"))
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>, String> {
        let what = format!("{}, {} record batch {}", self.name, self.format, self.batches_read + 1);
        let batches = &mut self.batches;
        let next = contained(&what, || match batches.next() {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(batch)),
            Some(Err(e)) => Err(format!("{what}: {e}")),
        })?;
        if next.is_some() {
            self.batches_read += 1;
        }
        Ok(next)
    }
}

impl Source for ArrowFile {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, String> {
        loop {
            if let Some((batch, row)) = &mut self.current {
                let start = *row;
                let len = CHUNK_ROWS.min(batch.num_rows() - start);
                let chunk = batch.slice(start, len);
                *row += len;
                if *row >= batch.num_rows() {
                    self.current = None;
                }
                return Ok(Some(Chunk::Batch(chunk)));
            }
            match self.next_batch()? {
                None => return Ok(None),
                Some(batch) if batch.num_rows() == 0 => continue,
                Some(batch) => self.current = Some((batch, 0)),
            }
        }
    }

    fn schema(&self) -> Option<SchemaRef> {
        Some(self.schema.clone())
    }
}
