//! Diagnostics: one type for every error and warning the compiler reports,
//! rendered rustc-style for people and as JSON for tools.
//!
//! Human form: a `file:line:col: error[CODE]: message` header, then the
//! source lines underlined by annotate-snippets, then help lines. The
//! renderer always emits styles; printing through `anstream` strips them
//! when the output is not a terminal or `NO_COLOR` is set.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;

use crate::codes::Code;
use crate::source::{SourceFile, Span};

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled span; the first label of a diagnostic is its primary one.
#[derive(Clone, PartialEq, Debug)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in a contract.
#[derive(Clone, PartialEq, Debug)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// The first label is where the problem is; others give context.
    pub labels: Vec<Label>,
    pub help: Vec<String>,
    /// The fix a "did you mean" help proposes: the name written (at the
    /// primary span, when that span is the name) and the one meant. For
    /// editors' quick fixes; not part of the JSON `check` prints.
    pub fix: Option<Box<Fix>>,
}

/// A name to write in place of another.
#[derive(Clone, PartialEq, Debug)]
pub struct Fix {
    pub written: String,
    pub meant: String,
}

impl Diagnostic {
    /// An error at `span`, labelled with `label` (may be empty).
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        let severity = if code.is_warning() { Severity::Warning } else { Severity::Error };
        Diagnostic {
            code,
            severity,
            message: message.into(),
            labels: vec![Label { span, message: String::new() }],
            help: Vec::new(),
            fix: None,
        }
    }

    /// Sets the primary label's text.
    pub fn label(mut self, text: impl Into<String>) -> Diagnostic {
        self.labels[0].message = text.into();
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, message: text.into() });
        self
    }

    pub fn with_help(mut self, text: impl Into<String>) -> Diagnostic {
        self.help.push(text.into());
        self
    }

    /// Adds "did you mean" help when a candidate is close to `name`.
    pub fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Diagnostic {
        match closest(name, candidates) {
            Some(best) => {
                let fix = Fix { written: name.to_string(), meant: best.to_string() };
                Diagnostic { fix: Some(Box::new(fix)), ..self.with_help(format!("did you mean `{best}`?")) }
            }
            None => self,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn span(&self) -> Span {
        self.labels[0].span
    }

    /// The rustc-style rendering; `styled` adds terminal colours.
    pub fn render(&self, file: &SourceFile, styled: bool) -> String {
        let primary = file.clamp(self.span());
        let at = file.line_col(primary.start as usize);
        let (level, word) = match self.severity {
            Severity::Error => (Level::ERROR, "error"),
            Severity::Warning => (Level::WARNING, "warning"),
        };
        let header = format!("{}[{}]", word, self.code.id());
        let mut out = if styled {
            let colour = match self.severity {
                Severity::Error => anstyle::AnsiColor::BrightRed,
                Severity::Warning => anstyle::AnsiColor::BrightYellow,
            };
            let bold = anstyle::Style::new().bold();
            let tag = bold.fg_color(Some(colour.into()));
            format!(
                "{bold}{}:{}:{}:{bold:#} {tag}{header}{tag:#}{bold}: {}{bold:#}\n",
                file.name(),
                at.line,
                at.column,
                self.message
            )
        } else {
            format!("{}:{}:{}: {header}: {}\n", file.name(), at.line, at.column, self.message)
        };
        let (excerpt, first_line, offset) = excerpt(file, &self.labels);
        // A `\r` of a CRLF file would show as a control picture; a space
        // keeps every offset.
        let excerpt = excerpt.replace('\r', " ");
        let mut snippet = Snippet::source(&excerpt).line_start(first_line);
        for (i, label) in self.labels.iter().enumerate() {
            let span = file.clamp(label.span);
            let range = (span.start as usize - offset)..(span.end as usize - offset);
            let kind = if i == 0 { AnnotationKind::Primary } else { AnnotationKind::Context };
            snippet = snippet.annotation(kind.span(range).label(label.message.as_str()));
        }
        let mut group = Group::with_level(level).element(snippet);
        for help in &self.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        let renderer = if styled { Renderer::styled() } else { Renderer::plain() };
        out.push_str(&renderer.render(&[group]));
        out.push('\n');
        out
    }

    /// The JSON form: one object per diagnostic, for editors and CI.
    pub fn to_json(&self, file: &SourceFile) -> serde_json::Value {
        let primary = Location::of(file, self.span());
        let json = JsonDiagnostic {
            file: file.name(),
            line: primary.line,
            column: primary.column,
            end_line: primary.end_line,
            end_column: primary.end_column,
            byte_start: primary.byte_start,
            byte_end: primary.byte_end,
            severity: self.severity,
            code: self.code.id(),
            message: &self.message,
            labels: self
                .labels
                .iter()
                .map(|label| JsonLabel { at: Location::of(file, label.span), message: &label.message })
                .collect(),
            help: &self.help,
        };
        serde_json::to_value(json).unwrap_or_default()
    }
}

/// A diagnostic's JSON shape, fields in the order tools read them.
#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    byte_start: u32,
    byte_end: u32,
    severity: Severity,
    code: &'static str,
    message: &'a str,
    labels: Vec<JsonLabel<'a>>,
    help: &'a [String],
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    #[serde(flatten)]
    at: Location,
    message: &'a str,
}

/// Where a span is, in every unit a tool may want.
#[derive(Serialize)]
struct Location {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    byte_start: u32,
    byte_end: u32,
}

impl Location {
    fn of(file: &SourceFile, span: Span) -> Location {
        let span = file.clamp(span);
        let start = file.line_col(span.start as usize);
        let end = file.line_col(span.end as usize);
        Location {
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
            byte_start: span.start,
            byte_end: span.end,
        }
    }
}

/// The source lines covering every label, the first line's number and the
/// byte offset of the excerpt in the file.
fn excerpt<'f>(file: &'f SourceFile, labels: &[Label]) -> (&'f str, usize, usize) {
    let spans: Vec<Span> = labels.iter().map(|l| file.clamp(l.span)).collect();
    let first = spans.iter().map(|s| s.start).min().unwrap_or(0) as usize;
    let last = spans.iter().map(|s| s.end).max().unwrap_or(0) as usize;
    let first_line = file.line_col(first).line;
    let last_line = file.line_col(last).line;
    let start = file.line_range(first_line).start;
    let end = file.line_range(last_line).end.max(last);
    (&file.text()[start..end], first_line, start)
}

/// The candidate closest to `name`, if it is close enough to be a typo
/// (the rule is `ir`'s, shared with the runtime's messages).
pub use ir::names::closest;

/// The diagnostics of one file, with the file to render them against.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub file: SourceFile,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    /// Every diagnostic rendered for people.
    pub fn render(&self, styled: bool) -> String {
        self.items.iter().map(|d| d.render(&self.file, styled)).collect()
    }

    /// One JSON line per diagnostic.
    pub fn to_json_lines(&self) -> String {
        self.items.iter().map(|d| format!("{}\n", d.to_json(&self.file))).collect()
    }
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for Diagnostics {}
