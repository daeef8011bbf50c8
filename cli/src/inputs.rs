//! Command-line inputs: the contract files of the paths given (through
//! the runtime's one folder walker), files read with errors that name
//! them, and request lines (a file or stdin).

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use runtime::contract_set::walk::{self, FileKind};

use crate::Failure;

/// The contract files (`.yaml`, `.yml`) under `paths`, folders walked as
/// every command walks them (`runtime::contract_set::walk`).
pub fn contract_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let found = walk::find(paths, &[FileKind::Contract]).map_err(Failure::Usage)?;
    Ok(found.into_iter().map(|file| file.path).collect())
}

/// Whether `path` is named as a bundle (`.bundle.json`).
pub fn is_bundle(path: &Path) -> bool {
    FileKind::of(path) == Some(FileKind::Bundle)
}

/// Reads a whole file as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))
}

/// Reads a contract as text; a file that is not UTF-8 is reported.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        anstream::eprintln!(
            "{}: error: the file is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        );
        Failure::Reported
    })
}

/// Request lines, as bytes (a line that is not UTF-8 gets its error line,
/// as any invalid request does).
pub type Lines = Box<dyn Iterator<Item = std::io::Result<Vec<u8>>>>;

/// Requests, one line each: a file holding one JSON request (even
/// pretty-printed: its text is passed on as it is, so numbers keep their
/// digits) or NDJSON, or NDJSON streamed from stdin.
///
/// A file is streamed as stdin is, a line at a time, when its first line
/// that is not blank is a JSON value of its own (NDJSON); only a file
/// whose first line is not (one pretty-printed request) is read whole.
pub fn request_lines(file: Option<&PathBuf>) -> Result<Lines, Failure> {
    let Some(path) = file else {
        return Ok(Box::new(std::io::stdin().lock().split(b'\n').map(|line| line.map(without_cr))));
    };
    let failed = |e: std::io::Error| Failure::Usage(format!("cannot read {}: {e}", path.display()));
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(failed)?);
    let mut first = Vec::new();
    let mut blank = 0;
    while reader.read_until(b'\n', &mut first).map_err(failed)? > 0 && is_blank(&first) {
        first.clear();
        blank += 1;
    }
    let head = std::iter::repeat_n(Vec::new(), blank);
    if first.is_empty() || serde_json::from_slice::<&serde_json::value::RawValue>(&first).is_ok() {
        let first = (!first.is_empty()).then(|| without_cr(without_newline(first)));
        let rest = reader.split(b'\n').map(|line| line.map(without_cr));
        return Ok(Box::new(head.chain(first).map(Ok).chain(rest)));
    }
    let mut bytes = first;
    reader.read_to_end(&mut bytes).map_err(failed)?;
    if let Some(request) = single_object(&bytes) {
        return Ok(Box::new(std::iter::once(Ok(request.as_bytes().to_vec()))));
    }
    let lines: Vec<std::io::Result<Vec<u8>>> =
        bytes.split(|&b| b == b'\n').map(|line| Ok(without_cr(line.to_vec()))).collect();
    Ok(Box::new(head.map(Ok).chain(lines)))
}

fn without_newline(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    line
}

fn without_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Whether a request line holds nothing but white space.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The text of the one JSON object `bytes` hold, untouched (never through
/// `serde_json::Value`, which would read numbers as `f64`); `None` when
/// they hold anything else, such as NDJSON.
fn single_object(bytes: &[u8]) -> Option<&str> {
    let raw = serde_json::from_slice::<&serde_json::value::RawValue>(bytes).ok()?;
    Some(raw.get()).filter(|object| object.starts_with('{'))
}
