//! A guard in front of arrow-rs's IPC stream reader for input that is not
//! trusted (an HTTP body): the reader sizes its buffers from each
//! message's announced lengths before reading it, zero-filling the
//! metadata's length at once, so a 24-byte body announcing 2 GB of
//! metadata cost seconds and gigabytes, and a body length past what can
//! be allocated aborts the process. [`Framed`] reads each message's
//! framing (`0xFFFFFFFF`, the metadata's length, the metadata, whose
//! `bodyLength` it reads) before passing the bytes on, and refuses a
//! message longer than its limit with an error naming the sizes.

use std::io::{ErrorKind, Read};

/// The longest metadata of one message: a schema or a batch's buffer
/// list, kilobytes even for thousands of columns.
const MAX_METADATA: usize = 16 << 20;

const CONTINUATION: [u8; 4] = [0xff; 4];

/// An IPC stream whose messages are checked before they are read.
#[derive(Debug)]
pub struct Framed<R> {
    inner: R,
    /// Checked bytes (a message's framing and metadata) not passed on yet.
    out: Vec<u8>,
    at: usize,
    /// Body bytes of the current message still to pass on unread.
    body_left: u64,
    /// The end-of-stream marker (or a framing arrow-rs will refuse) was
    /// passed on: the rest goes through as it is.
    done: bool,
    max_body: u64,
}

impl<R: Read> Framed<R> {
    /// `inner`, whose messages' bodies may be at most `max_body` bytes.
    pub fn new(inner: R, max_body: u64) -> Framed<R> {
        Framed { inner, out: Vec::new(), at: 0, body_left: 0, done: false, max_body }
    }

    /// Reads the next message's framing and metadata into `out`, checked.
    fn next_message(&mut self) -> std::io::Result<()> {
        self.out.clear();
        self.at = 0;
        let Some(mut length) = self.word()? else { return Ok(()) };
        if length == CONTINUATION {
            let Some(next) = self.word()? else { return Ok(()) };
            length = next;
        }
        let length = i32::from_le_bytes(length);
        if length <= 0 {
            // The end of the stream, or a length arrow-rs refuses itself.
            self.done = true;
            return Ok(());
        }
        let length = length as usize;
        if length > MAX_METADATA {
            return Err(too_long("metadata", length as u64, MAX_METADATA as u64));
        }
        let start = self.out.len();
        if self.fill(length)? < length {
            return Ok(());
        }
        match arrow_ipc::root_as_message(&self.out[start..]) {
            Ok(message) => {
                let body = message.bodyLength();
                if body < 0 || body as u64 > self.max_body {
                    return Err(too_long("body", body as u64, self.max_body));
                }
                self.body_left = body as u64;
            }
            // Not a message: arrow-rs says why.
            Err(_) => self.done = true,
        }
        Ok(())
    }

    /// Four more bytes into `out`; `None` when the input ends first
    /// (what there was is passed on, for arrow-rs to judge).
    fn word(&mut self) -> std::io::Result<Option<[u8; 4]>> {
        let start = self.out.len();
        if self.fill(4)? < 4 {
            self.done = true;
            return Ok(None);
        }
        let mut word = [0; 4];
        word.copy_from_slice(&self.out[start..]);
        Ok(Some(word))
    }

    /// Reads up to `n` more bytes into `out`; how many came.
    fn fill(&mut self, n: usize) -> std::io::Result<usize> {
        let start = self.out.len();
        self.out.resize(start + n, 0);
        let mut read = 0;
        while read < n {
            match self.inner.read(&mut self.out[start + read..]) {
                Ok(0) => break,
                Ok(k) => read += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.out.truncate(start + read);
        Ok(read)
    }
}

fn too_long(part: &str, length: u64, limit: u64) -> std::io::Error {
    std::io::Error::new(
        ErrorKind::InvalidData,
        format!("a message announces a {part} of {length} bytes, over the limit of {limit}"),
    )
}

impl<R: Read> Read for Framed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.at < self.out.len() {
                let n = buf.len().min(self.out.len() - self.at);
                buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.done {
                return self.inner.read(buf);
            }
            if self.body_left > 0 {
                let n = buf.len().min(usize::try_from(self.body_left).unwrap_or(usize::MAX));
                let read = self.inner.read(&mut buf[..n])?;
                self.body_left -= read as u64;
                return Ok(read);
            }
            self.next_message()?;
            if self.out.is_empty() && !self.done {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::Framed;

    fn stream() -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        let batch = RecordBatch::try_new(schema.clone(), vec![column]).expect("a batch");
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("a writer");
        writer.write(&batch).expect("written");
        writer.write(&batch).expect("written");
        writer.into_inner().expect("finished")
    }

    fn through(bytes: &[u8], max_body: u64) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Framed::new(bytes, max_body).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn a_stream_passes_unchanged() {
        let bytes = stream();
        assert_eq!(through(&bytes, 1 << 20).expect("read"), bytes);
        // Cut anywhere: what there is passes on, for the reader to judge.
        for cut in [3, 9, 100, bytes.len() - 5] {
            assert_eq!(through(&bytes[..cut], 1 << 20).expect("read"), &bytes[..cut]);
        }
    }

    #[test]
    fn announced_lengths_over_the_limit_are_refused_before_reading() {
        let error = through(b"this is not Arrow at all", 1 << 20).expect_err("2 GB of metadata");
        assert_eq!(
            error.to_string(),
            "a message announces a metadata of 1936287860 bytes, over the limit of 16777216"
        );
        let error = through(&stream(), 100).expect_err("8000-byte bodies");
        assert!(error.to_string().starts_with("a message announces a body of 8000 bytes"), "{error}");
    }
}
