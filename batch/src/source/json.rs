//! JSON arrays: one top-level array of records (`[{...}, {...}]`),
//! streamed: the reader scans the array's structure a read at a time and
//! passes each element's raw text on as one line of a [`Chunk::Lines`]
//! block, so the workers parse and validate it exactly as an NDJSON line
//! (the results are the NDJSON path's, byte for byte).
//!
//! An element may span lines: a newline between its tokens becomes a
//! space (JSON whitespace either way); a raw newline inside a string
//! (invalid JSON) becomes another control character, which the record's
//! parser refuses as it would the newline. As with NDJSON, an element
//! longer than [`MAX_LINE`] is not held: a marker line stands for it.
//!
//! Damage to the array itself (no array, garbage between elements, an
//! array cut short) ends the run with an error naming the byte and the
//! record; the records before it are passed on first.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::ndjson::{MAX_LINE, TOO_LONG};
use super::{Chunk, Source};

/// Bytes per read, and about per chunk.
const BLOCK: usize = 4 << 20;
/// What a raw newline inside a string becomes: a control character too,
/// so the record stays invalid, and of the same length.
const STRING_NEWLINE: u8 = 0x1f;

/// Records of one JSON array from any reader.
pub struct JsonArrayReader {
    input: Box<dyn Read + Send>,
    name: String,
    /// The last read, and the next byte to scan in it.
    buffer: Vec<u8>,
    pos: usize,
    /// Input bytes before `buffer`.
    offset: u64,
    state: State,
    /// Elements begun so far.
    records: u64,
    /// Where the current element begins: in the block being built, and
    /// in the input.
    element_start: usize,
    element_offset: u64,
    /// Inside an over-long element, skipping to its end.
    skipping: bool,
    /// An error found after records still to be passed on.
    failed: Option<String>,
    done: bool,
}

impl std::fmt::Debug for JsonArrayReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsonArrayReader")
    }
}

/// Where the scanner is in the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    Start,
    /// After `[`: an element or `]`.
    First,
    /// After `,`: an element.
    Next,
    In(Element),
    /// After an element: `,` or `]`.
    After,
    /// After the closing `]`: only whitespace.
    End,
}

/// Inside an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Element {
    /// Open `{`/`[` (a container element ends when it is back to 0).
    depth: u32,
    string: bool,
    escape: bool,
    /// A number or a literal, which ends at whitespace, `,` or `]`.
    scalar: bool,
}

impl JsonArrayReader {
    pub fn open(path: &Path) -> Result<JsonArrayReader, String> {
        let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(JsonArrayReader::new(Box::new(file), path.display().to_string()))
    }

    /// The array in `input`, called `name` in errors.
    pub fn new(input: Box<dyn Read + Send>, name: String) -> JsonArrayReader {
        JsonArrayReader {
            input,
            name,
            buffer: Vec::new(),
            pos: 0,
            offset: 0,
            state: State::Start,
            records: 0,
            element_start: 0,
            element_offset: 0,
            skipping: false,
            failed: None,
            done: false,
        }
    }

    /// Reads the next block of input; `false` at its end.
    fn fill(&mut self) -> Result<bool, String> {
        self.offset += self.buffer.len() as u64;
        self.buffer.clear();
        self.pos = 0;
        let read = super::read_block(&mut self.input, &mut self.buffer, BLOCK)
            .map_err(|e| format!("cannot read {}: {e}", self.name))?;
        Ok(read > 0)
    }

    /// Scans the rest of the buffer, or up to a record's end, appending
    /// records to `block`.
    fn step(&mut self, block: &mut Vec<u8>) -> Result<(), String> {
        match self.state {
            State::In(mut element) => {
                let bytes = &mut self.buffer[self.pos..];
                let (used, ended) = scan(&mut element, bytes);
                if !self.skipping {
                    block.extend_from_slice(&bytes[..used]);
                }
                self.pos += used;
                if ended {
                    self.end_element(block);
                } else {
                    self.state = State::In(element);
                    if !self.skipping && block.len() - self.element_start > MAX_LINE {
                        block.truncate(self.element_start);
                        self.skipping = true;
                    }
                }
                Ok(())
            }
            _ => self.between(block),
        }
    }

    /// Scans whitespace and punctuation up to the next element's start
    /// (or the buffer's end).
    fn between(&mut self, block: &mut Vec<u8>) -> Result<(), String> {
        while let Some(&b) = self.buffer.get(self.pos) {
            let at = self.offset + self.pos as u64;
            if b.is_ascii_whitespace()
                || (self.state == State::Start && at < 3 && b"\xef\xbb\xbf"[at as usize] == b)
            {
                self.pos += 1;
                continue;
            }
            let found =
                |expected: &str| format!("{}: byte {at}: expected {expected}, found {}", self.name, shown(b));
            match (self.state, b) {
                (State::Start, b'[') => self.state = State::First,
                (State::Start, _) => {
                    let hint =
                        if b == b'{' { " (for one record per line, use --input-format ndjson)" } else { "" };
                    return Err(format!(
                        "{} is not a JSON array: byte {at} is {}{hint}",
                        self.name,
                        shown(b)
                    ));
                }
                (State::First | State::After, b']') => self.state = State::End,
                (State::After, b',') => self.state = State::Next,
                (State::After, _) => {
                    return Err(found(&format!("`,` or `]` after record {}", self.records)));
                }
                (State::First | State::Next, b',' | b']') => {
                    return Err(found(&format!("record {}", self.records + 1)));
                }
                (State::First | State::Next, _) => {
                    self.begin_element(b, at, block);
                    return Ok(());
                }
                (State::End, _) => return Err(found("nothing after the array's closing `]`")),
                (State::In(_), _) => return Ok(()),
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// Starts an element at `first` (byte `at` of the input).
    fn begin_element(&mut self, first: u8, at: u64, block: &mut Vec<u8>) {
        self.records += 1;
        self.element_offset = at;
        self.element_start = block.len();
        let mut element = Element { depth: 0, string: false, escape: false, scalar: false };
        match first {
            b'{' | b'[' => element.depth = 1,
            b'"' => element.string = true,
            _ => element.scalar = true,
        }
        // A scalar's first byte is scanned with the rest; a container's
        // or a string's opens it.
        if !element.scalar {
            block.push(first);
            self.pos += 1;
        }
        self.state = State::In(element);
    }

    fn end_element(&mut self, block: &mut Vec<u8>) {
        if self.skipping {
            block.extend_from_slice(TOO_LONG);
            self.skipping = false;
        }
        block.push(b'\n');
        self.state = State::After;
    }

    /// The error for an input that ends in state `self.state`, if any.
    fn at_end(&self) -> Option<String> {
        let end = self.offset + self.buffer.len() as u64;
        match self.state {
            State::End => None,
            State::Start => Some(format!("{} is not a JSON array: it holds no `[`", self.name)),
            State::In(_) => Some(format!(
                "{}: the array is cut short: record {} (from byte {}) has no end",
                self.name, self.records, self.element_offset
            )),
            _ => Some(format!(
                "{}: the array is cut short: no closing `]` after record {} (byte {end})",
                self.name, self.records
            )),
        }
    }
}

impl Source for JsonArrayReader {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, String> {
        if let Some(message) = self.failed.take() {
            self.done = true;
            return Err(message);
        }
        if self.done {
            return Ok(None);
        }
        // A chunk ends between elements (or at the end).
        let mut block = crate::buffers::take(BLOCK + 4096);
        loop {
            if self.pos == self.buffer.len() && !self.fill()? {
                self.done = true;
                self.failed = self.at_end();
                if matches!(self.state, State::In(_)) {
                    // A record cut short is not passed on.
                    block.truncate(self.element_start);
                }
                break;
            }
            if let Err(message) = self.step(&mut block) {
                self.done = true;
                self.failed = Some(message);
                break;
            }
            if self.state == State::After && block.len() >= BLOCK {
                return Ok(Some(Chunk::Lines(block)));
            }
        }
        if block.is_empty() {
            return match self.failed.take() {
                Some(message) => Err(message),
                None => Ok(None),
            };
        }
        Ok(Some(Chunk::Lines(block)))
    }
}

/// Scans an element's bytes: how many belong to it, and whether it ends
/// there. Newlines are rewritten in place (a space between tokens, a
/// control character inside a string).
fn scan(element: &mut Element, bytes: &mut [u8]) -> (usize, bool) {
    let mut i = 0;
    while i < bytes.len() {
        if element.string {
            if element.escape {
                element.escape = false;
                if bytes[i] == b'\n' {
                    bytes[i] = STRING_NEWLINE;
                }
                i += 1;
                continue;
            }
            match bytes[i..].iter().position(|b| matches!(b, b'"' | b'\\' | b'\n')) {
                None => return (bytes.len(), false),
                Some(k) => i += k,
            }
            match bytes[i] {
                b'\\' => element.escape = true,
                b'\n' => bytes[i] = STRING_NEWLINE,
                _ => {
                    element.string = false;
                    if element.depth == 0 {
                        return (i + 1, true);
                    }
                }
            }
            i += 1;
            continue;
        }
        let b = bytes[i];
        if element.scalar {
            if b.is_ascii_whitespace() || b == b',' || b == b']' {
                return (i, true);
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => element.string = true,
            b'{' | b'[' => element.depth += 1,
            b'}' | b']' => {
                element.depth -= 1;
                if element.depth == 0 {
                    return (i + 1, true);
                }
            }
            b'\n' => bytes[i] = b' ',
            _ => {}
        }
        i += 1;
    }
    (bytes.len(), false)
}

/// A byte as an error names it.
fn shown(b: u8) -> String {
    if b.is_ascii_graphic() { format!("`{}`", b as char) } else { format!("byte 0x{b:02x}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `input` gives, read `piece` bytes at a time, and the
    /// error that ends them.
    fn lines(input: &[u8], piece: usize) -> (Vec<u8>, Option<String>) {
        struct Pieces(Vec<u8>, usize, usize);
        impl Read for Pieces {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len() - self.2);
                buf[..n].copy_from_slice(&self.0[self.2..self.2 + n]);
                self.2 += n;
                Ok(n)
            }
        }
        let mut reader = JsonArrayReader::new(Box::new(Pieces(input.to_vec(), piece, 0)), "test".into());
        let mut out = Vec::new();
        loop {
            match reader.next_chunk() {
                Ok(Some(Chunk::Lines(bytes))) => out.extend(bytes),
                Ok(_) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn elements_become_lines_whatever_the_reads() {
        let input = b"\xef\xbb\xbf [ {\"a\": [1, {\"b\": \"]}\\\"\"}],\n \"c\": \"x\\\\\"},\n\t\"s\" ,12.50, true,null ,[[]]]\n ";
        let expected =
            b"{\"a\": [1, {\"b\": \"]}\\\"\"}],  \"c\": \"x\\\\\"}\n\"s\"\n12.50\ntrue\nnull\n[[]]\n";
        for piece in [1, 2, 3, 7, 1000] {
            let (got, error) = lines(input, piece);
            assert_eq!(error, None, "reads of {piece}");
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(expected), "reads of {piece}");
        }
    }

    #[test]
    fn a_raw_newline_in_a_string_stays_invalid() {
        let (got, error) = lines(b"[{\"a\": \"x\ny\"}]", 4);
        assert_eq!(error, None);
        assert_eq!(got, b"{\"a\": \"x\x1fy\"}\n");
    }

    #[test]
    fn empty_arrays_give_nothing() {
        assert_eq!(lines(b"[]", 1), (Vec::new(), None));
        assert_eq!(lines(b" [ \n ] \n", 1), (Vec::new(), None));
    }

    #[test]
    fn damage_is_named_by_byte_and_record() {
        let cases: [(&[u8], &str, &str); 9] = [
            (b"", "", "test is not a JSON array: it holds no `[`"),
            (b"{\"a\":1}\n{\"a\":2}", "", "test is not a JSON array: byte 0 is `{` (for one record per line"),
            (
                b"[{\"a\":1}",
                "{\"a\":1}\n",
                "test: the array is cut short: no closing `]` after record 1 (byte 8)",
            ),
            (
                b"[{\"a\":1},{\"a\"",
                "{\"a\":1}\n",
                "test: the array is cut short: record 2 (from byte 9) has no end",
            ),
            (
                b"[{\"a\":1} x {}]",
                "{\"a\":1}\n",
                "test: byte 9: expected `,` or `]` after record 1, found `x`",
            ),
            (b"[{\"a\":1},,{}]", "{\"a\":1}\n", "test: byte 9: expected record 2, found `,`"),
            (b"[{\"a\":1},]", "{\"a\":1}\n", "test: byte 9: expected record 2, found `]`"),
            (b"[1] [2]", "1\n", "test: byte 4: expected nothing after the array's closing `]`, found `[`"),
            (b"[\"abc", "", "test: the array is cut short: record 1 (from byte 1) has no end"),
        ];
        for (input, lines_before, message) in cases {
            let (got, error) = lines(input, 3);
            assert_eq!(String::from_utf8_lossy(&got), lines_before, "{}", String::from_utf8_lossy(input));
            let error = error.expect("an error");
            assert!(error.starts_with(message), "{}: {error}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn chunks_end_between_elements_and_lose_nothing() {
        let mut input = b"[".to_vec();
        let mut expected = Vec::new();
        for i in 0..300_000 {
            let record = format!("{{\"n\": {i},\n  \"s\": \"{}\"}}", "x".repeat(i % 40));
            input.extend_from_slice(record.as_bytes());
            input.extend_from_slice(if i + 1 < 300_000 { b",\n" } else { b"]" });
            expected.extend_from_slice(record.replace('\n', " ").as_bytes());
            expected.push(b'\n');
        }
        let mut reader = JsonArrayReader::new(Box::new(std::io::Cursor::new(input)), "test".into());
        let mut chunks = Vec::new();
        while let Some(Chunk::Lines(bytes)) = reader.next_chunk().expect("reads") {
            chunks.push(bytes);
        }
        assert!(chunks.len() > 1, "several chunks");
        assert!(chunks.iter().all(|c| c.ends_with(b"\n")));
        assert!(chunks.concat() == expected);
    }

    #[test]
    fn an_over_long_element_is_a_marker() {
        let mut input = b"[{\"a\":1},\"".to_vec();
        input.extend(std::iter::repeat_n(b'x', 2 * MAX_LINE));
        input.extend_from_slice(b"\",\n{\"a\":2}]");
        let (got, error) = lines(&input, usize::MAX);
        assert_eq!(error, None);
        let expected = [&b"{\"a\":1}\n"[..], TOO_LONG, b"\n{\"a\":2}\n"].concat();
        assert!(got == expected, "{}", String::from_utf8_lossy(&got[..got.len().min(200)]));
    }
}
