//! A YAML document as rulec's own spanned tree: every node carries its byte
//! span; scalars keep their text and style and are never typed here (a
//! scalar is typed later by the declared type it must have).
//! `syntax::yaml` builds it; the syntax tree keeps parts of it raw (table
//! rows, test inputs), which the checker types.

use crate::source::Span;

/// A YAML node with its span.
#[derive(Clone, PartialEq, Debug)]
pub struct Node {
    pub span: Span,
    pub kind: NodeKind,
}

#[derive(Clone, PartialEq, Debug)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Entries in document order; keys are scalars.
    Map(Vec<(Node, Node)>),
}

/// A scalar's text as YAML decoded it, and how it was written.
#[derive(Clone, PartialEq, Debug)]
pub struct Scalar {
    pub value: String,
    pub style: Style,
}

/// How a scalar was written; spans inside it map back to the file by it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

impl Node {
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.kind {
            NodeKind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The scalar's text, when this is a scalar.
    pub fn text(&self) -> Option<&str> {
        self.as_scalar().map(|s| s.value.as_str())
    }

    /// Whether this is YAML's null: an empty plain scalar, `~` or `null`.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar(s) if s.style == Style::Plain && is_null_text(&s.value))
    }

    /// What kind of node this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(_) if self.is_null() => "nothing",
            NodeKind::Scalar(_) => "a single value",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }
}

/// Whether a plain scalar with this text is YAML's null.
pub fn is_null_text(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}
