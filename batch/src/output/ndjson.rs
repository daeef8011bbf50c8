//! Results as NDJSON lines: each record's result line as `rulec eval`
//! prints it (the parts asked for), its kept fields first, or its error
//! line. A [`RowSink`]: the results of a step of records (`crate::job`) arrive in
//! order, each written by `runtime::result::JsonResult`.

use ir::Verdict;
use runtime::result::{JsonResult, JsonState, Parts, ResultSink, RowSink};
use runtime::value::Owned;
use runtime::{EvaluateError, InvalidInput};

/// Writes a record's kept fields (`"key":value` pairs) after the record's
/// index in its step.
pub type KeptFields<'k> = &'k dyn Fn(usize, &mut Vec<u8>);

/// The result lines of one chunk.
#[derive(Debug)]
pub struct NdjsonRows {
    pub out: Vec<u8>,
    parts: Parts,
    /// The step's kept fields, row after row, as `"key":value` pairs,
    /// comma-separated; `kept_ends[i]` ends row `i`'s.
    kept: Vec<u8>,
    kept_ends: Vec<usize>,
    /// The step's row being written.
    row: usize,
    state: JsonState,
}

impl NdjsonRows {
    pub fn new(parts: Parts, rows: usize) -> NdjsonRows {
        NdjsonRows {
            out: crate::buffers::take(rows * 200),
            parts,
            kept: Vec::new(),
            kept_ends: Vec::new(),
            row: 0,
            state: JsonState::default(),
        }
    }

    /// Starts a step of `rows` records whose kept fields `kept(row,
    /// out)` writes (nothing when no field is kept).
    pub fn step(&mut self, rows: usize, kept: Option<KeptFields<'_>>) {
        self.kept.clear();
        self.kept_ends.clear();
        self.row = 0;
        if let Some(kept) = kept {
            let mut one = Vec::new();
            for row in 0..rows {
                one.clear();
                kept(row, &mut one);
                self.kept.extend_from_slice(&one);
                self.kept_ends.push(self.kept.len());
            }
        }
    }

    /// Where the current row's kept fields are in `kept`.
    fn prefix(&self) -> std::ops::Range<usize> {
        match self.kept_ends.get(self.row) {
            Some(end) => self.row.checked_sub(1).map_or(0, |before| self.kept_ends[before])..*end,
            None => 0..0,
        }
    }

    /// Writes through a `JsonResult` resumed where the row stands.
    fn json(&mut self, write: impl FnOnce(&mut JsonResult<'_>)) {
        let prefix = &self.kept[self.prefix()];
        let mut json = JsonResult::resume(&mut self.out, self.parts, prefix, self.state);
        write(&mut json);
        self.state = json.state();
    }

    /// The line of a record that was not evaluated.
    fn error(&mut self, line: &[u8]) {
        let prefix = self.kept[self.prefix()].to_vec();
        if prefix.is_empty() {
            self.out.extend_from_slice(line);
        } else {
            // `{"error":...}` after the kept fields.
            self.out.push(b'{');
            self.out.extend_from_slice(&prefix);
            self.out.push(b',');
            self.out.extend_from_slice(&line[1..]);
        }
        self.out.push(b'\n');
        self.row += 1;
    }
}

impl<'p> ResultSink<'p> for NdjsonRows {
    fn parts(&self) -> Parts {
        self.parts
    }

    fn decision(&mut self, contract: &'p str, version: &'p str, decision: Verdict) {
        self.state = JsonState::default();
        self.json(|j| j.decision(contract, version, decision));
    }

    fn reason(&mut self, rule: &'p str, outcome: Verdict, message: &str) {
        self.json(|j| j.reason(rule, outcome, message));
    }

    fn finding(&mut self, rule: &'p str, code: &'p str, severity: &'p str, message: &str) {
        self.json(|j| j.finding(rule, code, severity, message));
    }

    fn effect(&mut self, name: &'p str, value: &Owned) {
        self.json(|j| j.effect(name, value));
    }

    fn error(&mut self, rule: &'p str, message: &str) {
        self.json(|j| ResultSink::error(j, rule, message));
    }

    fn end(&mut self) {
        self.json(|j| j.end());
        self.out.push(b'\n');
        self.row += 1;
    }
}

impl<'p> RowSink<'p> for NdjsonRows {
    fn invalid(&mut self, problem: &InvalidInput) {
        NdjsonRows::error(self, &problem.to_json());
    }

    fn failed(&mut self, error: &EvaluateError) {
        NdjsonRows::error(self, &error.to_json());
    }
}
