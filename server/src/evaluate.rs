//! What a worker does with a request body or a batch of NDJSON lines:
//! the runtime's line path (parse, route, validate, evaluate, serialise:
//! `runtime::contract_set::line`), each line's outcome as a status.
//! Everything here runs on the evaluation pool, never on the async
//! runtime, and nothing here can fail with a 5xx: a body the client got
//! wrong is a 4xx [`Answer`] saying where.

use std::sync::Arc;
use std::time::Instant;

use runtime::Contract;
use runtime::contract_set::{Line, LineOutcome};
use runtime::semantics::budget::Limit;
use runtime::signals::Entered;

use crate::rules::RuleSet;

/// The answer to one JSON request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// The contract that answered, when one did.
    pub contract: Option<String>,
    /// The decision, when there was an evaluation.
    pub decision: Option<&'static str>,
    /// Where its record entered windows.
    pub entries: Entries,
}

impl Answer {
    fn error(status: u16, kind: &str, message: &str) -> Answer {
        let body = error_json(kind, message);
        Answer { status, body, contract: None, decision: None, entries: Entries::default() }
    }
}

/// The records a job entered into windows, each with its contract: if the
/// job's answer is never delivered (the client got 503 first), they are
/// withdrawn, so that the request leaves no trace in window state and a
/// client's retry is counted once (SIGNALS.md).
#[derive(Debug, Default)]
pub struct Entries(Vec<(Arc<Contract>, Entered)>);

impl Entries {
    fn add(&mut self, line: &Line<'_>) {
        if let Some(contract) = line.contract
            && !line.entered.is_empty()
        {
            self.0.push((contract.clone(), line.entered.clone()));
        }
    }

    /// Withdraws every record: the answer was not delivered.
    pub fn withdraw(&self) {
        for (contract, entered) in &self.0 {
            contract.withdraw(entered);
        }
    }
}

/// `{"error":{"kind":...,"message":...}}`.
pub fn error_json(kind: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": { "kind": kind, "message": message } }))
        .unwrap_or_else(|_| b"{\"error\":{\"kind\":\"internal\"}}".to_vec())
}

/// Evaluates one JSON request against `set`, stopping it at `deadline`
/// (answered 503): the runtime's line path, as `rulec eval` runs it, with
/// the status its outcome calls for.
pub fn one(set: &RuleSet, body: &[u8], deadline: Instant) -> Answer {
    let mut out = Vec::with_capacity(256);
    let line = set.contracts.evaluate_line(body, Some(Limit::At(deadline)), &mut out);
    let (status, decision) = match line.outcome {
        LineOutcome::Evaluated(decision) => (200, Some(decision.name())),
        LineOutcome::Invalid => (400, None),
        LineOutcome::UnknownContract => (404, None),
        LineOutcome::OutOfTime => (503, None),
    };
    let mut entries = Entries::default();
    entries.add(&line);
    let contract = line.contract.map(|c| c.name().to_string());
    Answer { status, body: out, contract, decision, entries }
}

/// NDJSON request lines evaluated as one job: their text back to back,
/// and where each line is. Blank lines are left out; a line over the line
/// limit is kept as a marker, so its error line comes in its place.
#[derive(Debug, Default)]
pub struct Batch {
    text: Vec<u8>,
    lines: Vec<BatchLine>,
}

#[derive(Debug)]
enum BatchLine {
    Request(std::ops::Range<usize>),
    TooLong { limit: usize },
}

impl Batch {
    /// Adds the line made of `parts` (a line may arrive in two pieces),
    /// unless it is blank.
    pub fn push(&mut self, parts: &[&[u8]]) {
        if parts.iter().all(|part| part.iter().all(u8::is_ascii_whitespace)) {
            return;
        }
        let start = self.text.len();
        for part in parts {
            self.text.extend_from_slice(part);
        }
        self.lines.push(BatchLine::Request(start..self.text.len()));
    }

    /// Adds a line that was over `limit` bytes (and was not kept).
    pub fn push_too_long(&mut self, limit: usize) {
        self.lines.push(BatchLine::TooLong { limit });
    }

    /// Lines in the batch.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Bytes of request text held.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }
}

/// The answer to a batch of NDJSON request lines.
#[derive(Debug)]
pub struct Lines {
    /// The result lines, each ending in `\n`.
    pub out: Vec<u8>,
    /// Each line's `(contract, decision)`, for the metrics.
    pub decisions: Vec<(String, &'static str)>,
    /// Where the lines' records entered windows.
    pub entries: Entries,
}

/// The result lines of a batch of NDJSON request lines.
pub fn lines(set: &Arc<RuleSet>, batch: &Batch, deadline: Instant) -> Lines {
    let mut out = Vec::with_capacity(batch.len() * 256);
    let mut decisions = Vec::new();
    let mut entries = Entries::default();
    for line in &batch.lines {
        let answer = match line {
            BatchLine::Request(range) => one(set, &batch.text[range.clone()], deadline),
            BatchLine::TooLong { limit } => Answer::error(
                413,
                "payload_too_large",
                &format!("the line is over the limit of {limit} bytes"),
            ),
        };
        out.extend_from_slice(&answer.body);
        out.push(b'\n');
        entries.0.extend(answer.entries.0);
        if let (Some(contract), Some(decision)) = (answer.contract, answer.decision) {
            decisions.push((contract, decision));
        }
    }
    Lines { out, decisions, entries }
}

#[cfg(test)]
mod tests {
    use super::Batch;

    #[test]
    fn blank_lines_are_left_out_and_pieces_are_joined() {
        let mut batch = Batch::default();
        batch.push(&[b"{\"a\"", b":1}"]);
        batch.push(&[b"  \r", b""]);
        batch.push_too_long(10);
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.text, b"{\"a\":1}");
    }
}
