//! The Arrow IPC file format read a record batch at a time into reused
//! buffers: each batch's bytes are read into a buffer from
//! [`crate::buffers`] that goes back there when the last array over it
//! is dropped, so a run touches the memory of the batches in flight and
//! no more (arrow-rs's `FileReader` allocates each batch afresh, and on
//! this path the kernel's zeroing of those fresh pages cost as much as
//! evaluating the records).
//!
//! The footer and every block are checked against the file's length
//! before anything is allocated for them.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::Block;
use arrow_ipc::reader::FileDecoder;
use arrow_schema::{ArrowError, SchemaRef};

/// The end of an IPC file: the footer's length and the magic.
const TRAILER: usize = 10;

/// An Arrow IPC file's record batches, in order.
pub struct IpcFile {
    file: File,
    length: u64,
    decoder: FileDecoder,
    schema: SchemaRef,
    blocks: std::vec::IntoIter<Block>,
}

impl IpcFile {
    /// Reads `file`'s footer (its schema, dictionaries and blocks).
    pub fn open(mut file: File) -> Result<IpcFile, ArrowError> {
        let length = file.seek(SeekFrom::End(0))?;
        if length < (TRAILER + 8) as u64 {
            return Err(ArrowError::ParseError("the file is too short to be an Arrow IPC file".into()));
        }
        let mut trailer = [0u8; TRAILER];
        read_at(&mut file, length - TRAILER as u64, &mut trailer)?;
        let footer_length = arrow_ipc::reader::read_footer_length(trailer)?;
        let footer_start = (length - TRAILER as u64).checked_sub(footer_length as u64).ok_or_else(|| {
            ArrowError::ParseError(format!("its footer ({footer_length} bytes) is longer than the file"))
        })?;
        let mut footer_bytes = vec![0; footer_length];
        read_at(&mut file, footer_start, &mut footer_bytes)?;
        let footer = arrow_ipc::root_as_footer(&footer_bytes)
            .map_err(|e| ArrowError::ParseError(format!("its footer is damaged: {e}")))?;
        let ipc_schema =
            footer.schema().ok_or_else(|| ArrowError::ParseError("its footer has no schema".into()))?;
        if !ipc_schema.endianness().equals_to_target_endianness() {
            return Err(ArrowError::IpcError("its byte order is not this machine's".into()));
        }
        let schema: SchemaRef = Arc::new(arrow_ipc::convert::fb_to_schema(ipc_schema));
        let decoder = FileDecoder::new(schema.clone(), footer.version());
        let blocks: Vec<Block> =
            footer.recordBatches().map(|b| b.iter().copied().collect()).unwrap_or_default();
        let dictionaries: Vec<Block> =
            footer.dictionaries().map(|b| b.iter().copied().collect()).unwrap_or_default();
        let mut ipc = IpcFile { file, length, decoder, schema, blocks: blocks.into_iter() };
        for block in &dictionaries {
            let bytes = ipc.read_block(block)?;
            ipc.decoder.read_dictionary(block, &bytes)?;
        }
        Ok(ipc)
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The bytes of `block` (its message and body), in a reused buffer.
    fn read_block(&mut self, block: &Block) -> Result<Buffer, ArrowError> {
        let past_end =
            || ArrowError::ParseError("a record batch's block goes past the end of the file".into());
        let offset = u64::try_from(block.offset()).map_err(|_| past_end())?;
        let metadata = u64::try_from(block.metaDataLength()).map_err(|_| past_end())?;
        let body = u64::try_from(block.bodyLength()).map_err(|_| past_end())?;
        let end = offset.checked_add(metadata).and_then(|n| n.checked_add(body)).ok_or_else(past_end)?;
        if end > self.length {
            return Err(past_end());
        }
        if metadata < 8 {
            return Err(ArrowError::ParseError(
                "a record batch's block is too short to hold its message".into(),
            ));
        }
        let size = (end - offset) as usize;
        let mut bytes = crate::buffers::take(size);
        bytes.resize(size, 0);
        read_at(&mut self.file, offset, &mut bytes)?;
        Ok(Buffer::from(bytes::Bytes::from_owner(Lent(bytes))))
    }
}

impl Iterator for IpcFile {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let block = self.blocks.next()?;
            let batch =
                self.read_block(&block).and_then(|bytes| self.decoder.read_record_batch(&block, &bytes));
            match batch {
                Ok(None) => continue,
                Ok(Some(batch)) => return Some(Ok(batch)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

fn read_at(file: &mut File, offset: u64, into: &mut [u8]) -> Result<(), ArrowError> {
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(into)?;
    Ok(())
}

/// A pooled buffer lent to the arrays read from it, given back when the
/// last of them is dropped.
struct Lent(Vec<u8>);

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        crate::buffers::give(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::types::Int8Type;
    use arrow_array::{ArrayRef, DictionaryArray, Int64Array, StringArray};

    use super::*;

    /// An IPC file of `batches` batches of three rows: an int column and a
    /// dictionary-coded string column.
    fn file(batches: usize) -> Vec<u8> {
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let names: ArrayRef = Arc::new(DictionaryArray::<Int8Type>::new(
            vec![0i8, 1, 0].into(),
            Arc::new(StringArray::from(vec!["EUR", "USD"])),
        ));
        let batch = RecordBatch::try_from_iter([("amount", ints), ("currency", names)]).expect("a batch");
        let mut out = Vec::new();
        let mut writer = arrow_ipc::writer::FileWriter::try_new(&mut out, &batch.schema()).expect("a writer");
        for _ in 0..batches {
            writer.write(&batch).expect("written");
        }
        writer.finish().expect("finished");
        drop(writer);
        out
    }

    fn read(bytes: &[u8]) -> Result<Vec<RecordBatch>, ArrowError> {
        let file = tempfile::NamedTempFile::new().expect("a file");
        std::fs::write(file.path(), bytes).expect("write");
        IpcFile::open(File::open(file.path()).expect("opened")).and_then(|file| file.collect())
    }

    #[test]
    fn it_reads_what_arrow_rs_reads() {
        let bytes = file(4);
        let expected: Vec<RecordBatch> =
            arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(&bytes), None)
                .expect("a reader")
                .collect::<Result<_, _>>()
                .expect("batches");
        assert_eq!(read(&bytes).expect("batches"), expected);
    }

    #[test]
    fn a_file_cut_anywhere_is_an_error() {
        let bytes = file(2);
        for cut in 0..bytes.len() {
            let got = read(&bytes[..cut]);
            assert!(got.is_err(), "cut at {cut} of {}: {got:?}", bytes.len());
        }
    }
}
