//! YAML to a small spanned tree, from saphyr-parser's event stream.
//!
//! The tree is rulec's own: every node carries its byte span; scalars keep
//! their text and style and are never typed here (a scalar is typed later
//! by the declared type it must have). The reader is iterative, never
//! recursive, and refuses what the language leaves out: anchors, aliases,
//! tags, duplicate keys, non-scalar keys, several documents and nesting
//! deeper than [`MAX_DEPTH`].

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::tree::{Node, NodeKind, Scalar, Style};

/// The deepest nesting of mappings and lists a contract may have.
pub const MAX_DEPTH: usize = 64;

/// Reads the single document of `file`. Parsing does not stop at the first
/// problem where it can go on; the tree is `None` when nothing usable was
/// read.
pub fn parse(file: &SourceFile) -> (Option<Node>, Vec<Diagnostic>) {
    let mut reader = Reader::new(file);
    let root = reader.run();
    (root, reader.diagnostics)
}

/// A container being built.
enum Frame {
    Seq { start: usize, items: Vec<Node> },
    Map { start: usize, entries: Vec<(Node, Node)>, key: Option<Node>, seen: HashMap<String, Span> },
}

struct Reader<'f> {
    file: &'f SourceFile,
    offsets: CharOffsets<'f>,
    diagnostics: Vec<Diagnostic>,
    stack: Vec<Frame>,
    documents: usize,
    root: Option<Node>,
}

impl<'f> Reader<'f> {
    fn new(file: &'f SourceFile) -> Self {
        Reader {
            file,
            offsets: CharOffsets::new(file.text()),
            diagnostics: Vec::new(),
            stack: Vec::new(),
            documents: 0,
            root: None,
        }
    }

    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn run(&mut self) -> Option<Node> {
        if let Some(d) = unprintable_character(self.file.text()) {
            self.error(d);
            return None;
        }
        let mut parser = Parser::new_from_str(self.file.text());
        while let Some(next) = parser.next_event() {
            let (event, span) = match next {
                Ok(event) => event,
                Err(e) => {
                    let at = self.offsets.byte(e.marker().index());
                    let message = format!("invalid YAML: {}", e.info());
                    let mut d = Diagnostic::error(codes::YAML_SYNTAX, Span::at(at), message);
                    if e.info().contains("tag") {
                        d = d.with_help("an expression that starts with `!` must be quoted: `when: '!matches(x, \"...\")'`");
                    } else if e.info().contains("mapping values are not allowed") {
                        d = d.with_help(
                            "an expression or message with `: ` in it must be quoted: `when: 'a ? b : c'`",
                        );
                    }
                    self.error(d);
                    return None;
                }
            };
            let start = self.offsets.byte(span.start.index());
            let end = self.offsets.byte(span.end.index());
            let keep_going = self.event(event, Span::new(start, end));
            if !keep_going {
                return None;
            }
        }
        if self.documents == 0 {
            let end = self.file.text().len();
            self.error(
                Diagnostic::error(codes::YAML_DOCUMENTS, Span::at(end), "the file holds no YAML document")
                    .label("expected a contract here"),
            );
        }
        self.root.take()
    }

    /// Handles one event; returns false when reading must stop.
    fn event(&mut self, event: Event<'_>, span: Span) -> bool {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => true,
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    self.error(
                        Diagnostic::error(
                            codes::YAML_DOCUMENTS,
                            span,
                            "a contract file holds exactly one YAML document",
                        )
                        .label("a second document starts here"),
                    );
                    return false;
                }
                true
            }
            Event::Alias(_) => {
                self.error(
                    Diagnostic::error(
                        codes::YAML_ANCHOR,
                        span,
                        "aliases are not part of the contract language",
                    )
                    .label("alias")
                    .with_help("write the value out where it is used"),
                );
                self.push_node(Node {
                    span,
                    kind: NodeKind::Scalar(Scalar { value: String::new(), style: Style::Plain }),
                })
            }
            Event::Scalar(value, style, anchor, tag) => {
                let bang = tag.as_ref().is_some_and(|t| t.handle == "!");
                self.refuse_anchor_and_tag(anchor, tag.is_some(), bang, span);
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let span = match style {
                    Style::SingleQuoted | Style::DoubleQuoted => self.quoted(span, style),
                    Style::Literal | Style::Folded => self.block(span),
                    Style::Plain => span,
                };
                let node = Node { span, kind: NodeKind::Scalar(Scalar { value: value.into_owned(), style }) };
                self.push_node(node)
            }
            Event::SequenceStart(anchor, tag) => {
                self.refuse_anchor_and_tag(anchor, tag.is_some(), false, span);
                self.open(Frame::Seq { start: span.start as usize, items: Vec::new() }, span)
            }
            Event::MappingStart(anchor, tag) => {
                self.refuse_anchor_and_tag(anchor, tag.is_some(), false, span);
                let frame = Frame::Map {
                    start: span.start as usize,
                    entries: Vec::new(),
                    key: None,
                    seen: HashMap::new(),
                };
                self.open(frame, span)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = self.stack.pop() else { return true };
                let node = match frame {
                    Frame::Seq { start, items } => {
                        let last = items.last().map(|n| n.span.end as usize);
                        Node { span: self.collection(start, last, span), kind: NodeKind::Seq(items) }
                    }
                    Frame::Map { start, entries, .. } => {
                        let last = entries.last().map(|(_, v)| v.span.end as usize);
                        Node { span: self.collection(start, last, span), kind: NodeKind::Map(entries) }
                    }
                };
                self.push_node(node)
            }
        }
    }

    /// A quoted scalar's span ends at its closing quote (saphyr's runs on
    /// over the spaces and comment after it).
    fn quoted(&self, span: Span, style: Style) -> Span {
        let text = self.file.text();
        let start = span.start as usize;
        let mut chars = text[start..span.end as usize].char_indices().skip(1);
        while let Some((at, c)) = chars.next() {
            match (style, c) {
                (Style::DoubleQuoted, '\\') => {
                    chars.next();
                }
                (Style::DoubleQuoted, '"') => return Span::new(start, start + at + 1),
                (Style::SingleQuoted, '\'') if text[start + at + 1..].starts_with('\'') => {
                    chars.next();
                }
                (Style::SingleQuoted, '\'') => return Span::new(start, start + at + 1),
                _ => {}
            }
        }
        span
    }

    /// A block scalar's span ends with its last line (saphyr's runs on
    /// over the next line's indentation).
    fn block(&self, span: Span) -> Span {
        let text = &self.file.text()[span.range()];
        let kept = text.trim_end_matches([' ', '\t']);
        if kept.ends_with('\n') || kept.is_empty() {
            return Span::new(span.start as usize, span.start as usize + kept.len());
        }
        span
    }

    /// A collection's span: a flow collection's ends at its closing
    /// bracket, a block collection's at its last entry (not at the
    /// comments and blank lines after it); `end` is the end event's span.
    fn collection(&self, start: usize, last: Option<usize>, end: Span) -> Span {
        let closing = self.file.text().as_bytes().get(end.start as usize);
        if matches!(closing, Some(b']' | b'}')) {
            return Span::new(start, end.start as usize + 1);
        }
        Span::new(start, last.unwrap_or(end.end as usize))
    }

    /// Reports an anchor or a tag; `bang` is a `!name` tag, most likely an
    /// unquoted expression.
    fn refuse_anchor_and_tag(&mut self, anchor: usize, tagged: bool, bang: bool, span: Span) {
        if anchor != 0 {
            self.error(
                Diagnostic::error(codes::YAML_ANCHOR, span, "anchors are not part of the contract language")
                    .label("this value has an anchor")
                    .with_help("remove the `&name` and write the value out where it is used"),
            );
        }
        if tagged {
            let d =
                Diagnostic::error(codes::YAML_TAG, span, "YAML tags are not part of the contract language");
            self.error(if bang {
                d.label("YAML reads a leading `!` as a tag")
                    .with_help("an expression that starts with `!` must be quoted: `when: '!x'`")
            } else {
                d.label("this value has a tag")
                    .with_help("remove the tag: a value's type comes from its declaration")
            });
        }
    }

    fn open(&mut self, frame: Frame, span: Span) -> bool {
        if self.stack.len() >= MAX_DEPTH {
            self.error(
                Diagnostic::error(
                    codes::TOO_DEEP,
                    span,
                    format!("the document nests deeper than {MAX_DEPTH} levels"),
                )
                .label("too deep"),
            );
            return false;
        }
        self.stack.push(frame);
        true
    }

    /// Attaches a finished node to the container being built, or makes it
    /// the root.
    fn push_node(&mut self, node: Node) -> bool {
        let mut duplicate = None;
        let mut complex = None;
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, seen, .. }) => match key.take() {
                None => {
                    if let NodeKind::Scalar(scalar) = &node.kind {
                        if let Some(first) = seen.insert(scalar.value.clone(), node.span) {
                            duplicate = Some((scalar.value.clone(), node.span, first));
                        }
                    } else {
                        complex = Some(node.span);
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
        if let Some((name, span, first)) = duplicate {
            self.error(
                Diagnostic::error(
                    codes::DUPLICATE_KEY,
                    span,
                    format!("the key `{name}` appears twice in this mapping"),
                )
                .label("second definition")
                .with_label(first, "first defined here"),
            );
        }
        if let Some(span) = complex {
            self.error(
                Diagnostic::error(codes::COMPLEX_KEY, span, "a mapping key must be a single value")
                    .label("this key is not a plain value"),
            );
        }
        true
    }
}

/// The first character YAML 1.2 does not allow in a stream (only
/// printable characters, tab, line feed and carriage return; section
/// 5.1), reported where it is. saphyr-parser lets some through (a BEL in
/// a plain scalar) and misreports others (a NUL in a quoted scalar reads
/// as the end of the stream), so the text is checked before it parses.
fn unprintable_character(text: &str) -> Option<Diagnostic> {
    let (at, c) = text.char_indices().find(|(_, c)| !is_yaml_printable(*c))?;
    let what = match c {
        '\0' => "a NUL character (U+0000)".to_string(),
        '\u{fffe}' | '\u{ffff}' => format!("the non-character U+{:04X}", u32::from(c)),
        _ => format!("the control character U+{:04X}", u32::from(c)),
    };
    let span = Span::new(at, at + c.len_utf8());
    Some(
        Diagnostic::error(codes::YAML_SYNTAX, span, format!("{what} is not allowed in YAML"))
            .label("here")
            .with_help(
                "YAML allows printable characters, tab, line feed and carriage return; remove it, or write it as an escape in a double-quoted string (`\"\\0\"`, `\"\\x07\"`)",
            ),
    )
}

/// YAML 1.2's `c-printable` (a Rust `char` is never a surrogate).
fn is_yaml_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{fffd}' | '\u{10000}'..)
}

/// Converts saphyr's character indices to byte offsets. ASCII text maps
/// one to one; otherwise a checkpoint every 64 characters bounds the scan.
struct CharOffsets<'t> {
    text: &'t str,
    /// Byte offset of character `64 * i`; empty when the text is ASCII.
    checkpoints: Vec<usize>,
}

impl<'t> CharOffsets<'t> {
    const STRIDE: usize = 64;

    fn new(text: &'t str) -> Self {
        let checkpoints = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().step_by(Self::STRIDE).map(|(byte, _)| byte).collect()
        };
        CharOffsets { text, checkpoints }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.checkpoints.is_empty() {
            return char_index.min(self.text.len());
        }
        let Some(&base) = self.checkpoints.get(char_index / Self::STRIDE) else {
            return self.text.len();
        };
        let skip = char_index % Self::STRIDE;
        self.text[base..].char_indices().nth(skip).map_or(self.text.len(), |(offset, _)| base + offset)
    }
}

#[cfg(test)]
mod tests;
