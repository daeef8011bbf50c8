//! Parquet input: the file's row groups read as Arrow record batches of
//! about [`CHUNK_ROWS`](super::CHUNK_ROWS) rows, a row group at a time
//! (the footer first, then each column chunk's pages), and passed on as
//! Arrow chunks: the Arrow path reads them from there. The Arrow schema
//! is the one the writer embedded (pyarrow, Polars, DuckDB do), else
//! the Parquet schema's own mapping (decimals, timestamps, strings).
//!
//! Every call into the Parquet reader is [`contained`]: a damaged file is
//! an error, never a crash.

use std::fs::File;
use std::path::Path;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::{ArrowFile, CHUNK_ROWS};
use crate::contained::contained;

/// Opens the Parquet file at `path`: its footer is read here, its rows
/// as chunks are asked for.
pub fn open(path: &Path) -> Result<ArrowFile, String> {
    let name = path.display().to_string();
    contained(&format!("{name}: not a readable Parquet file"), || {
        let file = File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
        let not_parquet =
            |e: parquet::errors::ParquetError| format!("{name} is not a readable Parquet file: {e}");
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(not_parquet)?
            .with_batch_size(CHUNK_ROWS)
            .build()
            .map_err(not_parquet)?;
        let schema = arrow_array::RecordBatchReader::schema(&reader);
        Ok(ArrowFile::from_batches(schema, Box::new(reader), name.clone(), "Parquet"))
    })
}
