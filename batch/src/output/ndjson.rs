//! Results as NDJSON lines: each record's result line as `rulec eval`
//! prints it (the parts asked for), its kept fields first, or its error
//! line.

use runtime::result::{JsonResult, Parts, ResultSink};
use runtime::{EvaluateError, InvalidInput};

/// The result lines of one chunk.
#[derive(Debug)]
pub struct NdjsonRows {
    pub out: Vec<u8>,
    parts: Parts,
    /// The row's kept fields as `"key":value` pairs, comma-separated.
    kept: Vec<u8>,
}

impl NdjsonRows {
    pub fn new(parts: Parts, rows: usize) -> NdjsonRows {
        NdjsonRows { out: Vec::with_capacity(rows * 200), parts, kept: Vec::new() }
    }

    /// The buffer the next row's kept fields go in (emptied).
    pub fn kept(&mut self) -> &mut Vec<u8> {
        self.kept.clear();
        &mut self.kept
    }

    /// A line from a result: `f` gives it to the sink.
    pub fn result<'c>(
        &mut self,
        f: impl FnOnce(&mut dyn ResultSink<'c>) -> Result<(), EvaluateError>,
    ) -> Result<(), EvaluateError> {
        let start = self.out.len();
        let outcome = {
            let mut sink = JsonResult::after(&mut self.out, self.parts, &self.kept);
            f(&mut sink)
        };
        if outcome.is_err() {
            self.out.truncate(start);
        } else {
            self.out.push(b'\n');
        }
        outcome
    }

    /// The line of a record that was not evaluated.
    pub fn error(&mut self, line: &[u8]) {
        if self.kept.is_empty() {
            self.out.extend_from_slice(line);
        } else {
            // `{"error":...}` after the kept fields.
            self.out.push(b'{');
            self.out.extend_from_slice(&self.kept);
            self.out.push(b',');
            self.out.extend_from_slice(&line[1..]);
        }
        self.out.push(b'\n');
    }

    pub fn invalid(&mut self, problem: &InvalidInput) {
        self.error(&problem.to_json());
    }

    pub fn failed(&mut self, error: &EvaluateError) {
        self.error(&error.to_json());
    }
}
