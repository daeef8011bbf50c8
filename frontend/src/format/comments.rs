//! The comments of a YAML file, found in the text between its scalars
//! (saphyr-parser drops them) and attached to what they describe: a
//! comment beside a value stays beside it, a comment on its own line stays
//! above the entry that follows it, or after the block it closes when it is
//! indented deeper than what follows.

use std::collections::{HashMap, HashSet};

use crate::tree::{Node, NodeKind};

/// One comment: its text from `#` (trailing spaces dropped), the column it
/// started at (in characters) and whether a blank line came before it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Comment {
    pub text: String,
    pub column: usize,
    pub blank_before: bool,
    start: usize,
    own_line: bool,
}

/// A node of the tree, as `(start, end, is_key, kind)`: a key and its
/// mapping can share a start, and a list and its one item (written
/// without indentation) their whole span, never a whole identity.
pub type Id = (u32, u32, bool, u8);

pub fn id(node: &Node, is_key: bool) -> Id {
    let kind = match node.kind {
        NodeKind::Scalar(_) => 0,
        NodeKind::Seq(_) => 1,
        NodeKind::Map(_) => 2,
    };
    (node.span.start, node.span.end, is_key, kind)
}

/// Where each comment goes; an entry is named by its key's id in a
/// mapping and its item's id in a list.
#[derive(Default, Debug)]
pub struct Attached {
    /// Before the document's first entry.
    pub header: Vec<Comment>,
    /// On their own lines above an entry.
    pub above: HashMap<Id, Vec<Comment>>,
    /// At the end of the line where a node ends.
    pub beside: HashMap<Id, Vec<Comment>>,
    /// On their own lines after an entry's whole content, at its indentation.
    pub after: HashMap<Id, Vec<Comment>>,
    /// Entries with a blank line right above them (or above their comments).
    pub blank_above: HashSet<Id>,
    /// Every comment's target, to tell whether a collection holds comments.
    targets: Vec<Id>,
}

impl Attached {
    /// Whether a comment belongs to something strictly inside `node`.
    pub fn inside(&self, node: &Node) -> bool {
        let own = id(node, false);
        let (start, end) = (node.span.start, node.span.end);
        self.targets.iter().any(|&t| t != own && t.0 >= start && t.1 <= end)
    }
}

/// Every comment in `text`, whose tree is `root`, in file order.
pub fn scan(text: &str, root: &Node) -> Vec<Comment> {
    let mut spans = Vec::new();
    scalar_spans(root, &mut spans);
    spans.sort_unstable();
    let mut comments = Vec::new();
    let mut at = 0;
    for (start, end) in spans.into_iter().chain([(text.len(), text.len())]) {
        if start > at {
            comments_in(text, at, start, &mut comments);
        }
        at = at.max(end);
    }
    comments
}

fn scalar_spans(node: &Node, out: &mut Vec<(usize, usize)>) {
    match &node.kind {
        NodeKind::Scalar(_) => out.push((node.span.start as usize, node.span.end as usize)),
        NodeKind::Seq(items) => items.iter().for_each(|item| scalar_spans(item, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|(k, v)| {
            scalar_spans(k, out);
            scalar_spans(v, out);
        }),
    }
}

/// The comments in `text[from..to]`, which holds no scalar.
fn comments_in(text: &str, from: usize, to: usize, out: &mut Vec<Comment>) {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < to {
        let starts = bytes[i] == b'#' && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r'));
        if !starts {
            i += 1;
            continue;
        }
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let line_end = text[i..].find(['\n', '\r']).map_or(text.len(), |n| i + n);
        out.push(Comment {
            text: text[i..line_end].trim_end().to_string(),
            column: text[line_start..i].chars().count(),
            blank_before: blank_line_above(text, line_start),
            start: i,
            own_line: text[line_start..i].trim().is_empty(),
        });
        i = line_end;
    }
}

/// Whether the line before the one starting at `line_start` is blank.
pub fn blank_line_above(text: &str, line_start: usize) -> bool {
    let Some(previous_end) = line_start.checked_sub(1) else { return false };
    let previous_start = text[..previous_end].rfind('\n').map_or(0, |n| n + 1);
    text[previous_start..previous_end].trim().is_empty()
}

/// An entry of a block or flow collection, for attaching comments.
struct Entry {
    id: Id,
    start: usize,
    end: usize,
    column: usize,
}

/// Attaches each comment of `text` to the node or entry it describes.
pub fn attach(text: &str, root: &Node) -> Attached {
    let mut entries = Vec::new();
    let mut nodes = Vec::new();
    walk(text, root, false, &mut entries, &mut nodes);
    let mut attached = Attached::default();
    for entry in &entries {
        let line_start = text[..entry.start].rfind('\n').map_or(0, |n| n + 1);
        if blank_line_above(text, line_start) {
            attached.blank_above.insert(entry.id);
        }
    }
    for comment in scan(text, root) {
        place(text, root, comment, &entries, &nodes, &mut attached);
    }
    attached
}

fn place(
    text: &str,
    root: &Node,
    comment: Comment,
    entries: &[Entry],
    nodes: &[(Id, usize, usize)],
    to: &mut Attached,
) {
    let line_start = text[..comment.start].rfind('\n').map_or(0, |n| n + 1);
    if !comment.own_line {
        // The node that ends last before the comment on its line; of
        // several ending there, the innermost.
        let beside = nodes
            .iter()
            .filter(|(_, start, end)| *end <= comment.start && *end > line_start && end > start)
            .max_by_key(|(_, start, end)| (*end, *start));
        if let Some((id, _, _)) = beside {
            to.targets.push(*id);
            to.beside.entry(*id).or_default().push(comment);
            return;
        }
    }
    if comment.start < root.span.start as usize || entries.is_empty() {
        to.header.push(comment);
        return;
    }
    let next = entries.iter().find(|e| e.start > comment.start);
    // Only an entry of the block the comment is in can be closed by it: a
    // comment right under `input:` is above its first field, not after
    // what came before `input`.
    let open =
        entries.iter().filter(|e| e.start < comment.start && e.end > comment.start).map(|e| e.start).max();
    let closed = entries
        .iter()
        .filter(|e| e.end <= comment.start && e.column <= comment.column && open.is_none_or(|o| e.start > o))
        .max_by_key(|e| (e.end, e.column));
    let above = next.filter(|next| {
        comment.column <= next.column && !(closed.is_some() && ends_block(text, &comment, next))
    });
    if let Some(next) = above {
        to.targets.push(next.id);
        to.above.entry(next.id).or_default().push(comment);
        return;
    }
    match closed.or(next) {
        Some(entry) => {
            to.targets.push(entry.id);
            let list = if closed.is_some() { &mut to.after } else { &mut to.above };
            list.entry(entry.id).or_default().push(comment);
        }
        None => to.header.push(comment),
    }
}

/// Whether `comment`, on its own line, ends the block above it rather than
/// opening `next`: nothing but comments between it and what it follows,
/// and a blank line between it and `next`. This is how an "after" comment
/// is written back (at the closed entry's indentation, a blank line
/// before what follows), so it reads back the same way.
fn ends_block(text: &str, comment: &Comment, next: &Entry) -> bool {
    let next_line = text[..next.start].rfind('\n').map_or(0, |n| n + 1);
    // The whole lines after the comment's own, up to `next`'s.
    let between = text.get(comment.start..next_line).unwrap_or("");
    let mut lines = between.split('\n').skip(1).collect::<Vec<_>>();
    lines.pop();
    !comment.blank_before && lines.iter().any(|line| line.trim().is_empty())
}

/// Lists every entry (a list's item before the mapping it holds) and every
/// node, in file order.
fn walk(
    text: &str,
    node: &Node,
    is_key: bool,
    entries: &mut Vec<Entry>,
    nodes: &mut Vec<(Id, usize, usize)>,
) {
    nodes.push((id(node, is_key), node.span.start as usize, node.span.end as usize));
    match &node.kind {
        NodeKind::Scalar(_) => {}
        NodeKind::Seq(items) => {
            for item in items {
                let start = dash_before(text, item.span.start as usize);
                entries.push(Entry {
                    id: id(item, false),
                    start,
                    end: item.span.end as usize,
                    column: column(text, start),
                });
                walk(text, item, false, entries, nodes);
            }
        }
        NodeKind::Map(pairs) => {
            for (key, value) in pairs {
                let start = key.span.start as usize;
                entries.push(Entry {
                    id: id(key, true),
                    start,
                    end: value.span.end.max(key.span.end) as usize,
                    column: column(text, start),
                });
                walk(text, key, true, entries, nodes);
                walk(text, value, false, entries, nodes);
            }
        }
    }
}

/// Where a block list's item starts: its `-`, when one comes right before
/// it on its line.
fn dash_before(text: &str, start: usize) -> usize {
    let before = text[..start].trim_end_matches([' ', '\t']);
    if before.ends_with('-') { before.len() - 1 } else { start }
}

/// The column of `offset`, in characters.
pub fn column(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..offset].chars().count()
}
