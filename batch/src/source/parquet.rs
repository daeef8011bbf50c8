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
use runtime::contained::contained;

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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Decimal128Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;

    use super::*;
    use crate::source::{Chunk, Source};

    /// A Parquet file of `rows` rows in row groups of `per_group`,
    /// snappy-compressed, written by arrow-rs.
    fn file(rows: i64, per_group: usize) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Decimal128(18, 2), true),
        ]));
        let n: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        let s: ArrayRef =
            Arc::new(StringArray::from_iter((0..rows).map(|i| (i % 3 > 0).then(|| format!("s{i}")))));
        let d: ArrayRef = Arc::new(
            Decimal128Array::from_iter_values((0..rows).map(i128::from))
                .with_precision_and_scale(18, 2)
                .expect("decimal"),
        );
        let batch = RecordBatch::try_new(schema.clone(), vec![n, s, d]).expect("batch");
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(per_group))
            .build();
        let mut writer = ArrowWriter::try_new(Vec::new(), schema, Some(properties)).expect("writer");
        writer.write(&batch).expect("write");
        writer.into_inner().expect("finish")
    }

    /// The rows of each chunk `bytes` reads as, or the error.
    fn read(bytes: &[u8]) -> Result<Vec<usize>, String> {
        let file = tempfile::NamedTempFile::new().expect("a file");
        std::fs::write(file.path(), bytes).expect("write");
        let source = open(file.path());
        let mut source = source?;
        assert_eq!(source.schema().expect("a schema").fields().len(), 3);
        let mut chunks = Vec::new();
        while let Some(Chunk::Batch(batch)) = source.next_chunk()? {
            chunks.push(batch.num_rows());
        }
        Ok(chunks)
    }

    #[test]
    fn row_groups_are_read_in_chunks() {
        let chunks = read(&file(40_000, 30_000)).expect("reads");
        assert_eq!(chunks.iter().sum::<usize>(), 40_000);
        assert!(chunks.iter().all(|rows| *rows <= CHUNK_ROWS), "{chunks:?}");
    }

    #[test]
    fn a_file_cut_anywhere_is_an_error() {
        let bytes = file(50, 7);
        for cut in 0..bytes.len() {
            let got = read(&bytes[..cut]);
            assert!(got.is_err(), "cut at {cut} of {}: {got:?}", bytes.len());
        }
    }
}
