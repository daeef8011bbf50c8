//! NDJSON: blocks of whole lines, read in large reads and cut at the last
//! newline, so a worker splits and parses them (the reader only looks for
//! one newline per block).
//!
//! A line is not held beyond [`MAX_LINE`] (and a block): past it, the
//! reader skips to its end and passes a marker line in its place; the
//! worker answers the marker, and any line longer than [`MAX_LINE`] that
//! came whole, with an invalid-input result. So memory stays flat
//! whatever the input.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::{Chunk, Source};

/// Bytes per read, and about per chunk.
const BLOCK: usize = 1 << 20;
/// The longest record a line may hold.
pub const MAX_LINE: usize = 64 << 20;
/// What stands for an over-long line in a chunk (no JSON starts with it).
pub const TOO_LONG: &[u8] = b"\x00too long";

/// NDJSON records from any reader.
pub struct NdjsonReader {
    input: Box<dyn Read + Send>,
    /// Read but not yet passed on: the start of an unfinished line.
    rest: Vec<u8>,
    /// Inside an over-long line, skipping to its end.
    skipping: bool,
    done: bool,
    name: String,
}

impl std::fmt::Debug for NdjsonReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NdjsonReader")
    }
}

impl NdjsonReader {
    pub fn open(path: &Path) -> Result<NdjsonReader, String> {
        let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(NdjsonReader::new(Box::new(file), path.display().to_string()))
    }

    /// Records from `input`, called `name` in errors.
    pub fn new(input: Box<dyn Read + Send>, name: String) -> NdjsonReader {
        NdjsonReader { input, rest: Vec::new(), skipping: false, done: false, name }
    }

    /// Reads up to a block more into `buffer` (after what it holds); 0
    /// at the end.
    fn fill(&mut self, buffer: &mut Vec<u8>) -> Result<usize, String> {
        super::read_block(&mut self.input, buffer, BLOCK)
            .map_err(|e| format!("cannot read {}: {e}", self.name))
    }
}

impl Source for NdjsonReader {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, String> {
        if self.done {
            return Ok(None);
        }
        let mut block = crate::buffers::take(BLOCK + self.rest.len());
        block.extend_from_slice(&self.rest);
        self.rest.clear();
        loop {
            if self.fill(&mut block)? == 0 {
                self.done = true;
                if self.skipping {
                    block = TOO_LONG.to_vec();
                }
                return Ok((!block.is_empty()).then_some(Chunk::Lines(block)));
            }
            if self.skipping {
                // Drop the over-long line up to its newline; a marker
                // stands for it.
                let Some(end) = memchr(&block) else {
                    block.clear();
                    continue;
                };
                block.splice(..end, TOO_LONG.iter().copied());
                self.skipping = false;
            }
            if block.len() < BLOCK {
                continue;
            }
            if let Some(last) = memrchr(&block) {
                self.rest.extend_from_slice(&block[last + 1..]);
                block.truncate(last + 1);
                return Ok(Some(Chunk::Lines(block)));
            }
            if block.len() > MAX_LINE {
                self.skipping = true;
                block.clear();
            }
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

fn memrchr(bytes: &[u8]) -> Option<usize> {
    memchr::memrchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(input: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = NdjsonReader::new(Box::new(std::io::Cursor::new(input.to_vec())), "test".into());
        let mut out = Vec::new();
        while let Some(Chunk::Lines(bytes)) = reader.next_chunk().expect("reads") {
            out.push(bytes);
        }
        out
    }

    #[test]
    fn chunks_end_at_line_ends_and_lose_nothing() {
        let input: Vec<u8> = (0..1_000_000).flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes()).collect();
        let got = chunks(&input);
        assert!(got.len() > 1, "several chunks");
        assert!(got.iter().all(|c| c.ends_with(b"\n")));
        assert_eq!(got.concat(), input);
    }

    #[test]
    fn an_over_long_line_is_a_marker() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 2 * MAX_LINE));
        input.extend_from_slice(b"\n{\"a\":2}\n");
        let all = chunks(&input).concat();
        // Compared by length first: a failure must not print 128 MiB.
        let expected = [&b"{\"a\":1}\n"[..], TOO_LONG, b"\n{\"a\":2}\n"].concat();
        assert_eq!(all.len(), expected.len());
        assert!(all == expected);
    }

    #[test]
    fn a_last_line_without_newline_is_kept() {
        assert_eq!(chunks(b"{\"a\":1}\n{\"a\":2}").concat(), b"{\"a\":1}\n{\"a\":2}");
    }
}
