//! Records as an Avro object container file: the record batches of
//! [`super::arrow`] (one record → columns path for every typed format)
//! written by arrow-avro's `AvroWriter`, uncompressed, as Arrow IPC and
//! Parquet are. Its Avro schema comes from the Arrow schema: `Int64`
//! is `long`, `Float64` `double`, `Utf8` `string`, `Decimal128(18, 2)`
//! the `decimal` logical type (18, 2) over `bytes`, a struct a `record`,
//! a list an `array`, and a nullable column a union with `null`: the
//! types the batch crate's Avro source reads back as the same columns.

use std::fs::File;
use std::io::BufWriter;

use arrow_array::RecordBatch;
use arrow_avro::writer::AvroWriter;
use arrow_schema::SchemaRef;

use super::arrow::BatchFile;

/// Opens an Avro object container file of batches of `schema` on `out`
/// (an [`super::arrow::Opener`]).
pub fn open(out: BufWriter<File>, schema: &SchemaRef) -> Result<Box<dyn BatchFile>, String> {
    let writer = AvroWriter::new(out, schema.as_ref().clone()).map_err(|e| e.to_string())?;
    Ok(Box::new(Avro(writer)))
}

struct Avro(AvroWriter<BufWriter<File>>);

impl BatchFile for Avro {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.write(batch).map_err(|e| e.to_string())
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.0.finish().map_err(|e| e.to_string())?;
        let mut out = self.0.into_inner();
        std::io::Write::flush(&mut out).map_err(|e| e.to_string())
    }
}
