//! Writes a YAML tree in `rulec fmt`'s layout: two spaces a level, lists
//! indented under their key, keys in the language's order, short
//! collections in flow style, scalars plain where YAML allows, multi-line
//! text kept line by line, and every comment where its author put it.

use super::comments::{Attached, Comment, Id, id};
use super::place::Place;
use super::scalar::{self, Context};
use crate::tree::{Node, NodeKind, Scalar, Style};

/// The widest line a collection is joined into.
pub const WIDTH: usize = 100;
/// Spaces a level.
const STEP: usize = 2;
/// The deepest collection written in flow style.
const FLOW_DEPTH: usize = 4;

pub struct Printer<'a> {
    text: &'a str,
    comments: &'a Attached,
    lines: Vec<String>,
    /// Lines that end in a comment already.
    commented: Vec<bool>,
}

impl<'a> Printer<'a> {
    pub fn new(text: &'a str, comments: &'a Attached) -> Self {
        Printer { text, comments, lines: Vec::new(), commented: Vec::new() }
    }

    /// The whole document, ending in one newline.
    pub fn document(mut self, root: &Node) -> String {
        let header = self.comments.header.clone();
        self.comment_lines(&header, 0);
        if !self.lines.is_empty() && self.comments.blank_above.contains(&first_entry(root)) {
            self.blank();
        }
        match &root.kind {
            NodeKind::Map(_) => self.map_block(root, 0, Place::Root),
            NodeKind::Seq(_) => self.seq_block(root, 0, Place::Other),
            NodeKind::Scalar(_) => self.scalar_value(String::new(), None, root, 0),
        }
        let mut out = self.lines.join("\n");
        out.push('\n');
        out
    }

    fn push(&mut self, line: String) {
        self.lines.push(line);
        self.commented.push(false);
    }

    /// A blank line, unless the output is empty or ends in one.
    fn blank(&mut self) {
        if self.lines.last().is_some_and(|l| !l.is_empty()) {
            self.push(String::new());
        }
    }

    fn comment_lines(&mut self, comments: &[Comment], indent: usize) {
        for comment in comments {
            if comment.blank_before {
                self.blank();
            }
            self.push(format!("{:indent$}{}", "", comment.text));
        }
    }

    /// The comments beside `node`, at the end of the last line: at the
    /// author's column when the line leaves room, else two spaces after
    /// it; on a line of their own when the line has a comment already.
    fn beside(&mut self, node: Id) {
        self.beside_at(node, true);
    }

    /// [`Self::beside`], at the author's column only when `keep_column`
    /// (the line they were written on is the line they are written on).
    fn beside_at(&mut self, node: Id, keep_column: bool) {
        let Some(comments) = self.comments.beside.get(&node) else { return };
        for comment in comments {
            let Some(last) = self.lines.len().checked_sub(1) else {
                self.push(comment.text.clone());
                continue;
            };
            if self.commented[last] {
                let indent = self.lines[last].len() - self.lines[last].trim_start().len();
                self.push(format!("{:indent$}{}", "", comment.text));
                self.commented[last + 1] = true;
                continue;
            }
            let line = &mut self.lines[last];
            let width = line.chars().count();
            let pad = if keep_column && comment.column > width { comment.column - width } else { STEP };
            line.push_str(&format!("{:pad$}{}", "", comment.text));
            self.commented[last] = true;
        }
    }

    /// Lines written by `f` into a printer of their own.
    fn apart(&self, f: impl FnOnce(&mut Printer<'a>)) -> (Vec<String>, Vec<bool>) {
        let mut sub = Printer::new(self.text, self.comments);
        f(&mut sub);
        (sub.lines, sub.commented)
    }

    /// Entries of a block collection: each with the comments above it,
    /// its blank line, and the comments that close it.
    fn entries<'n>(&mut self, entries: Vec<(Id, &'n Node, Option<&'n Node>)>, indent: usize, place: Place) {
        let mut previous_multi = false;
        for (i, (anchor, first, second)) in entries.into_iter().enumerate() {
            let (lines, commented) = self.apart(|p| match second {
                Some(value) => p.entry(first, value, indent, place),
                None => p.item(first, indent, place.child(None)),
            });
            let multi = lines.len() > 1;
            if i > 0 && place.spaced() && (multi || previous_multi) {
                self.blank();
            }
            let above = self.comments.above.get(&anchor).cloned().unwrap_or_default();
            self.comment_lines(&above, indent);
            if i > 0 && self.comments.blank_above.contains(&anchor) {
                self.blank();
            }
            self.lines.extend(lines);
            self.commented.extend(commented);
            let after = self.comments.after.get(&anchor).cloned().unwrap_or_default();
            self.comment_lines(&after, indent);
            previous_multi = multi;
        }
    }

    fn map_block(&mut self, node: &Node, indent: usize, place: Place) {
        let pairs = ordered(node.as_map().unwrap_or_default(), place);
        let entries = pairs.into_iter().map(|(k, v)| (id(k, true), k, Some(v))).collect();
        self.entries(entries, indent, place);
    }

    fn seq_block(&mut self, node: &Node, indent: usize, place: Place) {
        let items = node.as_seq().unwrap_or_default();
        let entries = items.iter().map(|item| (id(item, false), item, None)).collect();
        self.entries(entries, indent, place);
    }

    /// `key: value`, the value on the same line or in a block below.
    fn entry(&mut self, key: &Node, value: &Node, indent: usize, place: Place) {
        let key_text = match key.as_scalar() {
            Some(s) => scalar::single_line(s, self.source(key), Context::Block)
                .unwrap_or_else(|| self.source(key).to_string()),
            None => self.source(key).to_string(),
        };
        let head = format!("{:indent$}{key_text}:", "");
        let child = place.child(key.text());
        match &value.kind {
            NodeKind::Scalar(_) => self.scalar_value(head, Some(id(key, true)), value, indent),
            NodeKind::Map(_) | NodeKind::Seq(_) => {
                self.collection(head, Some(id(key, true)), value, indent, child)
            }
        }
    }

    /// Moves the comment lines (and blank lines) that open a list item's
    /// block `lines` out, above the item at `indent`: `- ` before a
    /// comment would make the comment the item's first line, which reads
    /// back as a comment above the item, not inside it.
    fn lift_comments(&mut self, lines: &mut Vec<String>, commented: &mut Vec<bool>, indent: usize) {
        let opening =
            lines.iter().take_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#')).count();
        let opening = opening.min(lines.len().saturating_sub(1));
        for line in lines.drain(..opening) {
            match line.trim_start() {
                "" => self.blank(),
                comment => self.push(format!("{:indent$}{comment}", "")),
            }
        }
        commented.drain(..opening);
    }

    /// A list item: `- value`, or `- ` before the first line of a block.
    fn item(&mut self, item: &Node, indent: usize, place: Place) {
        let head = format!("{:indent$}-", "");
        match &item.kind {
            NodeKind::Scalar(_) => self.scalar_value(head, None, item, indent),
            NodeKind::Map(_) | NodeKind::Seq(_) => self.collection(head, None, item, indent, place),
        }
    }

    /// A collection after `head` (`key:` or `-`): on the same line in flow
    /// style when it is short and holds no comment, else as a block.
    fn collection(&mut self, head: String, key: Option<Id>, node: &Node, indent: usize, place: Place) {
        let empty = node.as_map().is_some_and(<[_]>::is_empty) || node.as_seq().is_some_and(<[_]>::is_empty);
        let keyed_comment = key.is_some_and(|k| self.comments.beside.contains_key(&k));
        let flow = (empty || (place.flow_allowed() && !self.comments.inside(node) && !keyed_comment))
            .then(|| self.flow(node, place, 0))
            .flatten()
            .map(|flow| format!("{head} {flow}"))
            .filter(|line| empty || line.chars().count() <= WIDTH);
        if let Some(line) = flow {
            self.push(line);
            key.into_iter().for_each(|k| self.beside(k));
            self.beside(id(node, false));
            return;
        }
        let child_indent = indent + STEP;
        let (mut lines, mut commented) = self.apart(|p| match &node.kind {
            NodeKind::Map(_) => p.map_block(node, child_indent, place),
            _ => p.seq_block(node, child_indent, place),
        });
        // A comment written after the collection goes beside its key (a
        // list item's, after its last line), two spaces after: the
        // author's column was on a line that is gone.
        if key.is_none() && !lines.is_empty() {
            self.lift_comments(&mut lines, &mut commented, indent);
            // `- ` takes the place of the first line's indentation.
            lines[0] = format!("{head} {}", lines[0].trim_start_matches(' '));
            self.lines.extend(lines);
            self.commented.extend(commented);
            self.beside_at(id(node, false), false);
            return;
        }
        self.push(head);
        key.into_iter().for_each(|k| self.beside(k));
        self.beside_at(id(node, false), false);
        self.lines.extend(lines);
        self.commented.extend(commented);
    }

    /// A scalar after `head` (`key:`, `-`, or nothing for a document that
    /// is one scalar).
    fn scalar_value(&mut self, head: String, key: Option<Id>, node: &Node, indent: usize) {
        let Some(scalar) = node.as_scalar() else { return };
        let source = self.source(node);
        let child_indent = indent + STEP;
        let keyed_comment = key.is_some_and(|k| self.comments.beside.contains_key(&k));
        let join = |head: &str, text: &str| {
            if head.is_empty() { text.to_string() } else { format!("{head} {text}") }
        };
        if matches!(scalar.style, Style::Literal | Style::Folded) && !scalar.value.is_empty() {
            self.push(join(&head, &block_header(self.text, node, scalar)));
            key.into_iter().for_each(|k| self.beside(k));
            let keep = block_header(self.text, node, scalar).contains('+');
            let content = &self.text[block_content_start(self.text, node)..node.span.end as usize];
            for line in scalar::block_lines(content, &scalar.value, keep, child_indent) {
                self.push(line);
            }
            // Nothing can stand beside a block's last line (it would be
            // text): a comment there goes on a line of its own.
            let after = self.comments.beside.get(&id(node, false)).cloned().unwrap_or_default();
            self.comment_lines(&after, indent);
            return;
        }
        let block = matches!(scalar.style, Style::Literal | Style::Folded);
        // Plain text on several lines that would not read back plain.
        let odd = scalar.style == Style::Plain && !scalar::plain_shape(&scalar.value, Context::Block);
        let single = block || odd || !scalar::multi_line(scalar, source);
        let text = match scalar.style {
            Style::Literal | Style::Folded => "\"\"".to_string(),
            Style::Plain if odd && !scalar.value.is_empty() => scalar::double_quoted(&scalar.value),
            _ if single => {
                scalar::single_line(scalar, source, Context::Block).unwrap_or_else(|| source.to_string())
            }
            _ => String::new(),
        };
        if keyed_comment || (!single && head.is_empty()) {
            if !head.is_empty() {
                self.push(head.clone());
                key.into_iter().for_each(|k| self.beside(k));
            }
            let at = if head.is_empty() { indent } else { child_indent };
            if !(single && text.is_empty()) {
                self.value_lines(source, &text, single, at);
            }
        } else if single && text.is_empty() {
            self.push(head);
        } else if single {
            self.push(join(&head, &text));
        } else {
            let lines = scalar::flow_lines(source, child_indent);
            self.push(join(&head, &lines[0]));
            lines[1..].iter().for_each(|l| self.push(l.clone()));
        }
        self.beside(id(node, false));
    }

    /// A scalar on lines of its own at `indent`.
    fn value_lines(&mut self, source: &str, text: &str, single: bool, indent: usize) {
        if single {
            self.push(format!("{:indent$}{text}", ""));
            return;
        }
        let lines = scalar::flow_lines(source, indent);
        self.push(format!("{:indent$}{}", "", lines[0]));
        lines[1..].iter().for_each(|l| self.push(l.clone()));
    }

    /// A collection on one line, or `None` when something in it cannot be.
    fn flow(&self, node: &Node, place: Place, depth: usize) -> Option<String> {
        match &node.kind {
            NodeKind::Scalar(s) if s.style == Style::Plain && s.value.is_empty() => None,
            NodeKind::Scalar(s) if scalar::multi_line(s, self.source(node)) => None,
            NodeKind::Scalar(s) => scalar::single_line(s, self.source(node), Context::Flow),
            _ if depth >= FLOW_DEPTH => None,
            NodeKind::Seq(items) if items.is_empty() => Some("[]".into()),
            NodeKind::Map(pairs) if pairs.is_empty() => Some("{}".into()),
            NodeKind::Seq(items) => {
                let parts: Option<Vec<String>> =
                    items.iter().map(|item| self.flow(item, place.child(None), depth + 1)).collect();
                Some(format!("[{}]", parts?.join(", ")))
            }
            NodeKind::Map(pairs) => {
                let parts: Option<Vec<String>> = ordered(pairs, place)
                    .into_iter()
                    .map(|(k, v)| {
                        let key = self.flow(k, Place::Other, depth + 1)?;
                        Some(format!("{key}: {}", self.flow(v, place.child(k.text()), depth + 1)?))
                    })
                    .collect();
                Some(format!("{{ {} }}", parts?.join(", ")))
            }
        }
    }

    fn source(&self, node: &Node) -> &'a str {
        &self.text[node.span.range()]
    }
}

/// A mapping's entries in the order `place` gives its keys.
fn ordered(pairs: &[(Node, Node)], place: Place) -> Vec<&(Node, Node)> {
    let mut out: Vec<&(Node, Node)> = pairs.iter().collect();
    if let Some(keys) = place.keys() {
        out.sort_by_key(|(k, _)| keys.iter().position(|name| k.text() == Some(name)).unwrap_or(keys.len()));
    }
    out
}

/// The id of a collection's first entry, for the blank line after a
/// header comment.
fn first_entry(root: &Node) -> Id {
    match &root.kind {
        NodeKind::Map(pairs) if !pairs.is_empty() => id(&pairs[0].0, true),
        NodeKind::Seq(items) if !items.is_empty() => id(&items[0], false),
        _ => id(root, false),
    }
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |n| n + 1)
}

/// Where a block scalar's lines start: the line after its header (its
/// span starts at its first line with text; blank lines before it are
/// part of the value).
fn block_content_start(text: &str, node: &Node) -> usize {
    let content = line_start(text, node.span.start as usize);
    let header_end = text[..content.saturating_sub(1)].trim_end().len();
    text[header_end..].find('\n').map_or(content, |n| header_end + n + 1).min(content)
}

/// A block scalar's header as `rulec fmt` writes it: its indicator, an
/// indentation of 2 when the text starts with spaces, and its chomping.
fn block_header(text: &str, node: &Node, scalar: &Scalar) -> String {
    // The header is the last line before the content that is not blank.
    let content = line_start(text, node.span.start as usize);
    let before = text[..content.saturating_sub(1)].trim_end();
    let line = &before[line_start(before, before.len())..];
    let code = match line.find(" #") {
        Some(at) => &line[..at],
        None => line,
    };
    let written = code.trim_end().rsplit([' ', '\t']).next().unwrap_or_default();
    let chomp: String = written.chars().filter(|c| matches!(c, '-' | '+')).collect();
    let indicator = if scalar.style == Style::Literal { "|" } else { ">" };
    let first = scalar.value.lines().find(|l| !l.is_empty()).unwrap_or_default();
    let indentation = if first.starts_with(' ') { "2" } else { "" };
    format!("{indicator}{indentation}{chomp}")
}
