//! Avro object container files: the header's writer schema mapped to an
//! Arrow schema once, then the data blocks decoded (and decompressed:
//! deflate, snappy, zstd) to Arrow record batches of about
//! [`CHUNK_ROWS`](super::CHUNK_ROWS) rows, a block at a time, and passed
//! on as Arrow chunks: the Arrow path reads them from there.
//!
//! arrow-avro maps `string` to `Utf8`, `long`/`int` to `Int64`/`Int32`,
//! `double` to `Float64`, a `decimal` (bytes or fixed) to
//! `Decimal128(precision, scale)`, `timestamp-millis`/`-micros` to
//! `Timestamp(unit, "+00:00")`, an `enum` to a dictionary of strings, a
//! `["null", T]` union to a nullable `T`, records to structs and arrays
//! to lists.
//!
//! Every call into the Avro reader is [`contained`], and the file's
//! framing is followed as it is read ([`Framing`]): a damaged file is an
//! error, never a crash, and a file cut short is an error, not fewer
//! records.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::{ArrowFile, CHUNK_ROWS};
use runtime::contained::contained;

/// Opens the Avro file at `path`: its header is read here, its blocks as
/// chunks are asked for.
pub fn open(path: &Path) -> Result<ArrowFile, String> {
    let name = path.display().to_string();
    contained(&format!("{name}: not a readable Avro file"), || {
        let file = File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
        let reader = arrow_avro::reader::ReaderBuilder::new()
            .with_batch_size(CHUNK_ROWS)
            .build(BufReader::with_capacity(1 << 20, Framing::new(file)))
            .map_err(|e| format!("{name} is not a readable Avro object container file: {e}"))?;
        let schema = reader.schema();
        Ok(ArrowFile::from_batches(schema, Box::new(reader), name.clone(), "Avro"))
    })
}

/// The largest Avro block read: a block is decoded whole, so this bounds
/// memory (writers cut blocks of tens of kilobytes to a few megabytes).
const MAX_BLOCK: u64 = 256 << 20;

/// A reader that follows an object container file's framing as its bytes
/// pass (the header's magic, metadata and sync marker; each block's count,
/// size, data and sync marker), so that a file cut short or damaged in
/// its framing is an error: arrow-avro's reader takes an end inside a
/// block for the end of the file.
struct Framing<R> {
    inner: R,
    state: Frame,
    /// A variable-length integer being read: its bits so far, and their
    /// count.
    varint: (u64, u32),
    /// Entries left in the header's current map block.
    entries: u64,
    sync: [u8; 16],
    blocks: u64,
    offset: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Magic(usize),
    MapCount,
    /// A map block's size in bytes (after a negative count): ignored.
    MapBytes,
    KeyLength,
    ValueLength,
    Skip(u64, After),
    HeaderSync(usize),
    BlockCount,
    BlockSize,
    BlockSync(usize),
}

/// What comes after skipped bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum After {
    Value,
    Entry,
    BlockSync,
}

const MAGIC: &[u8; 4] = b"Obj\x01";

impl<R: Read> Framing<R> {
    fn new(inner: R) -> Framing<R> {
        Framing {
            inner,
            state: Frame::Magic(0),
            varint: (0, 0),
            entries: 0,
            sync: [0; 16],
            blocks: 0,
            offset: 0,
        }
    }

    fn damaged(&self, what: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, what)
    }

    /// Follows the framing through `bytes`.
    fn follow(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut i = 0;
        while i < bytes.len() {
            if let Frame::Skip(left, after) = self.state {
                let n = left.min((bytes.len() - i) as u64);
                i += n as usize;
                self.state = match (left - n, after) {
                    (0, After::Value) => Frame::ValueLength,
                    (0, After::Entry) => self.next_entry(),
                    (0, After::BlockSync) => Frame::BlockSync(0),
                    (left, after) => Frame::Skip(left, after),
                };
                continue;
            }
            let b = bytes[i];
            let at = self.offset + i as u64;
            i += 1;
            self.state = match self.state {
                Frame::Magic(k) if b == MAGIC[k] => {
                    if k == 3 {
                        Frame::MapCount
                    } else {
                        Frame::Magic(k + 1)
                    }
                }
                Frame::Magic(_) => {
                    return Err(
                        self.damaged("not an Avro object container file (no `Obj\\x01` magic)".into())
                    );
                }
                Frame::HeaderSync(k) => {
                    self.sync[k] = b;
                    if k == 15 { Frame::BlockCount } else { Frame::HeaderSync(k + 1) }
                }
                Frame::BlockSync(k) if b != self.sync[k] => {
                    return Err(self.damaged(format!(
                        "block {} does not end with the file's sync marker (byte {at}): the file is damaged",
                        self.blocks + 1
                    )));
                }
                Frame::BlockSync(15) => {
                    self.blocks += 1;
                    Frame::BlockCount
                }
                Frame::BlockSync(k) => Frame::BlockSync(k + 1),
                state => match self.varint_byte(b, at)? {
                    None => state,
                    Some(value) => self.after_varint(state, value, at)?,
                },
            };
        }
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Adds a byte to the integer being read; its value (zigzag-decoded)
    /// once complete.
    fn varint_byte(&mut self, b: u8, at: u64) -> std::io::Result<Option<i64>> {
        let (bits, shift) = self.varint;
        if shift >= 64 {
            return Err(self.damaged(format!("a malformed integer at byte {at}: the file is damaged")));
        }
        let bits = bits | (u64::from(b & 0x7f) << shift);
        if b & 0x80 != 0 {
            self.varint = (bits, shift + 7);
            return Ok(None);
        }
        self.varint = (0, 0);
        Ok(Some((bits >> 1) as i64 ^ -((bits & 1) as i64)))
    }

    fn after_varint(&mut self, state: Frame, value: i64, at: u64) -> std::io::Result<Frame> {
        let length = |what: &str| {
            u64::try_from(value).map_err(|_| {
                self.damaged(format!("a negative {what} ({value}) at byte {at}: the file is damaged"))
            })
        };
        Ok(match state {
            Frame::MapCount if value == 0 => Frame::HeaderSync(0),
            Frame::MapCount => {
                self.entries = value.unsigned_abs();
                if value < 0 { Frame::MapBytes } else { Frame::KeyLength }
            }
            Frame::MapBytes => Frame::KeyLength,
            Frame::KeyLength => Frame::Skip(length("key length")?, After::Value),
            Frame::ValueLength => match length("value length")? {
                0 => self.next_entry(),
                n => Frame::Skip(n, After::Entry),
            },
            Frame::BlockCount => {
                length("record count")?;
                Frame::BlockSize
            }
            Frame::BlockSize => match length("block size")? {
                n if n > MAX_BLOCK => {
                    return Err(self.damaged(format!(
                        "block {} holds {n} bytes, over the {} MiB a block may hold",
                        self.blocks + 1,
                        MAX_BLOCK >> 20
                    )));
                }
                0 => Frame::BlockSync(0),
                n => Frame::Skip(n, After::BlockSync),
            },
            state => state,
        })
    }

    fn next_entry(&mut self) -> Frame {
        self.entries -= 1;
        if self.entries == 0 { Frame::MapCount } else { Frame::KeyLength }
    }
}

impl<R: Read> Read for Framing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && buf.is_empty() {
            return Ok(0);
        }
        if n == 0 {
            if self.state != Frame::BlockCount || self.varint != (0, 0) {
                let at = self.offset;
                let inside = match self.state {
                    Frame::Magic(_)
                    | Frame::MapCount
                    | Frame::MapBytes
                    | Frame::KeyLength
                    | Frame::ValueLength
                    | Frame::HeaderSync(_) => "the header".to_string(),
                    Frame::Skip(_, After::Value | After::Entry) => "the header".to_string(),
                    _ => format!("block {}", self.blocks + 1),
                };
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file is cut short inside {inside} (at byte {at})"),
                ));
            }
            return Ok(0);
        }
        self.follow(&buf[..n])?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::source::{Chunk, Source};

    /// An Avro file of `rows` records in blocks of `per_block`, written by
    /// arrow-avro.
    fn file(rows: i64, per_block: usize) -> Vec<u8> {
        let schema =
            Schema::new(vec![Field::new("n", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]);
        let mut writer = arrow_avro::writer::AvroWriter::new(Vec::new(), schema.clone()).expect("writer");
        let all: Vec<i64> = (0..rows).collect();
        for part in all.chunks(per_block) {
            let n: ArrayRef = Arc::new(Int64Array::from(part.to_vec()));
            let s: ArrayRef =
                Arc::new(StringArray::from_iter(part.iter().map(|i| (i % 3 > 0).then(|| format!("s{i}")))));
            let batch = RecordBatch::try_new(Arc::new(schema.clone()), vec![n, s]).expect("batch");
            writer.write(&batch).expect("write");
        }
        writer.finish().expect("finish");
        writer.into_inner()
    }

    /// The rows `bytes` read as, or the error.
    fn read(bytes: &[u8]) -> Result<usize, String> {
        let file = tempfile::NamedTempFile::new().expect("a file");
        std::fs::write(file.path(), bytes).expect("write");
        let source = open(file.path());
        let mut source = source?;
        let mut rows = 0;
        while let Some(Chunk::Batch(batch)) = source.next_chunk()? {
            rows += batch.num_rows();
        }
        Ok(rows)
    }

    #[test]
    fn every_block_is_read() {
        assert_eq!(read(&file(100, 7)), Ok(100));
        assert_eq!(read(&file(0, 1)), Ok(0));
    }

    /// Anywhere but right after a sync marker (where a shorter file would
    /// end too).
    #[test]
    fn a_file_cut_anywhere_is_an_error() {
        let bytes = file(20, 3);
        let sync = &bytes[bytes.len() - 16..];
        for cut in 0..bytes.len() {
            let got = read(&bytes[..cut]);
            let boundary = cut >= 16 && &bytes[cut - 16..cut] == sync;
            assert_eq!(got.is_err(), !boundary, "cut at {cut} of {}: {got:?}", bytes.len());
        }
    }

    #[test]
    fn a_damaged_sync_marker_is_named() {
        let mut bytes = file(20, 3);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let error = read(&bytes).expect_err("damaged");
        assert!(error.contains("does not end with the file's sync marker"), "{error}");
    }
}
