//! [`JsonResult`]: the one writer of a result's JSON line, as
//! LANGUAGE.md shows it (keys in their fixed order, the lists present when
//! empty), for the parts asked for.

use ir::Verdict;

use super::{Parts, ResultSink};
use crate::value::Owned;
use crate::value::write_json_str;

/// The sections of a result after its decision, in their order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
enum Section {
    #[default]
    Decision,
    Reasons,
    Findings,
    Effects,
    Errors,
    Closed,
}

const SECTIONS: [(Section, Parts, &[u8], &[u8]); 4] = [
    (Section::Reasons, Parts::REASONS, b",\"reasons\":[", b"]"),
    (Section::Findings, Parts::FINDINGS, b",\"findings\":[", b"]"),
    (Section::Effects, Parts::EFFECTS, b",\"effects\":{", b"}"),
    (Section::Errors, Parts::ERRORS, b",\"errors\":[", b"]"),
];

/// Writes one result's JSON (no trailing newline) into `out`. A sink
/// for one result: make a new one for the next.
#[derive(Debug)]
pub struct JsonResult<'o> {
    out: &'o mut Vec<u8>,
    parts: Parts,
    /// `"key":value` pairs written first (kept input fields).
    prefix: &'o [u8],
    section: Section,
    /// Whether the open section has an entry yet (a comma is due).
    entries: bool,
}

/// Where a result's JSON stands between two of its parts, for a writer
/// that keeps its buffer between calls ([`JsonResult::resume`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct JsonState {
    section: Section,
    entries: bool,
}

impl<'o> JsonResult<'o> {
    pub fn new(out: &'o mut Vec<u8>, parts: Parts) -> JsonResult<'o> {
        JsonResult::after(out, parts, b"")
    }

    /// Goes on writing a result where `state` left it.
    pub fn resume(out: &'o mut Vec<u8>, parts: Parts, prefix: &'o [u8], state: JsonState) -> JsonResult<'o> {
        JsonResult { out, parts, prefix, section: state.section, entries: state.entries }
    }

    /// Where the result stands, to [`JsonResult::resume`] it.
    pub fn state(&self) -> JsonState {
        JsonState { section: self.section, entries: self.entries }
    }

    /// A result whose object starts with `prefix`: `"key":value` pairs,
    /// comma-separated (the batch path's kept fields), or nothing.
    pub fn after(out: &'o mut Vec<u8>, parts: Parts, prefix: &'o [u8]) -> JsonResult<'o> {
        JsonResult { out, parts, prefix, section: Section::Decision, entries: false }
    }

    /// Starts an entry of section `next`: after a comma in the open
    /// section, or else after closing it, writing the asked-for sections
    /// in between as empty ones, and opening `next`.
    fn enter(&mut self, next: Section) {
        if self.section == next {
            if self.entries {
                self.out.push(b',');
            }
            self.entries = true;
            return;
        }
        for (section, part, open, close) in SECTIONS {
            if section == self.section {
                self.out.extend_from_slice(close);
            } else if section > self.section && section < next && self.parts.has(part) {
                self.out.extend_from_slice(open);
                self.out.extend_from_slice(close);
            } else if section == next {
                self.out.extend_from_slice(open);
            }
        }
        self.section = next;
        self.entries = true;
    }

    fn field(&mut self, key: &[u8], value: &str) {
        self.out.extend_from_slice(key);
        write_json_str(value, self.out);
    }
}

impl<'p> ResultSink<'p> for JsonResult<'_> {
    fn parts(&self) -> Parts {
        self.parts
    }

    fn decision(&mut self, contract: &'p str, version: &'p str, decision: Verdict) {
        self.out.push(b'{');
        if !self.prefix.is_empty() {
            self.out.extend_from_slice(self.prefix);
            self.out.push(b',');
        }
        self.field(b"\"contract\":", contract);
        self.field(b",\"version\":", version);
        self.field(b",\"decision\":", decision.name());
    }

    fn reason(&mut self, rule: &'p str, outcome: Verdict, message: &str) {
        self.enter(Section::Reasons);
        self.field(b"{\"rule\":", rule);
        self.field(b",\"outcome\":", outcome.name());
        self.field(b",\"message\":", message);
        self.out.push(b'}');
    }

    fn finding(&mut self, rule: &'p str, code: &'p str, severity: &'p str, message: &str) {
        self.enter(Section::Findings);
        self.field(b"{\"rule\":", rule);
        self.field(b",\"code\":", code);
        self.field(b",\"severity\":", severity);
        self.field(b",\"message\":", message);
        self.out.push(b'}');
    }

    fn effect(&mut self, name: &'p str, value: &Owned) {
        self.enter(Section::Effects);
        write_json_str(name, self.out);
        self.out.push(b':');
        let _ = serde_json::to_writer(&mut *self.out, value);
    }

    fn error(&mut self, rule: &'p str, message: &str) {
        self.enter(Section::Errors);
        self.field(b"{\"rule\":", rule);
        self.field(b",\"message\":", message);
        self.out.push(b'}');
    }

    fn end(&mut self) {
        self.enter(Section::Closed);
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(parts: Parts, events: impl FnOnce(&mut JsonResult<'_>)) -> String {
        let mut out = Vec::new();
        let mut sink = JsonResult::new(&mut out, parts);
        sink.decision("c", "1.0.0", Verdict::Deny);
        events(&mut sink);
        sink.end();
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn empty_parts_are_written_as_empty_lists() {
        assert_eq!(
            written(Parts::ALL, |_| {}),
            r#"{"contract":"c","version":"1.0.0","decision":"deny","reasons":[],"findings":[],"effects":{},"errors":[]}"#
        );
    }

    #[test]
    fn entries_are_separated_and_sections_skipped() {
        let all = written(Parts::ALL, |s| {
            s.reason("a", Verdict::Deny, "x \"y\"");
            s.reason("b", Verdict::Deny, "z");
            s.effect("fee", &Owned::Int(3));
            s.effect("hold", &Owned::Bool(true));
        });
        assert_eq!(
            all,
            r#"{"contract":"c","version":"1.0.0","decision":"deny","reasons":[{"rule":"a","outcome":"deny","message":"x \"y\""},{"rule":"b","outcome":"deny","message":"z"}],"findings":[],"effects":{"fee":3,"hold":true},"errors":[]}"#
        );
        let some = written(Parts::FINDINGS.with(Parts::ERRORS), |s| s.error("e", "boom"));
        assert_eq!(
            some,
            r#"{"contract":"c","version":"1.0.0","decision":"deny","findings":[],"errors":[{"rule":"e","message":"boom"}]}"#
        );
        assert_eq!(written(Parts::NONE, |_| {}), r#"{"contract":"c","version":"1.0.0","decision":"deny"}"#);
    }
}
