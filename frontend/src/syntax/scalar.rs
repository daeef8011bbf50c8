//! Maps positions inside a scalar's decoded text back to the file.
//!
//! An expression is parsed from the scalar's *value*, which differs from
//! its source text by quotes, escapes and line folding. [`ScalarText`]
//! aligns the two once so every span inside the value lands on the right
//! `line:col`: exactly for plain and quoted scalars, and for block scalars
//! wherever the characters can be matched (else at the scalar's start).

use crate::source::{SourceFile, Span};
use crate::tree::{Node, NodeKind, Style};

/// A scalar's decoded text with a map back to file offsets.
#[derive(Clone, Debug)]
pub struct ScalarText<'a> {
    pub value: &'a str,
    map: OffsetMap,
    span: Span,
}

#[derive(Clone, Debug)]
enum OffsetMap {
    /// The value is the source text at this offset, byte for byte.
    Shifted(u32),
    /// The file offset of each value byte, plus one past the end.
    Table(Vec<u32>),
}

impl<'a> ScalarText<'a> {
    /// The text of a scalar node, or `None` for a mapping or list.
    pub fn of(file: &SourceFile, node: &'a Node) -> Option<ScalarText<'a>> {
        let NodeKind::Scalar(scalar) = &node.kind else { return None };
        let value = scalar.value.as_str();
        let source = &file.text()[file.clamp(node.span).range()];
        let map = if source.starts_with(value) && scalar.style == Style::Plain {
            OffsetMap::Shifted(node.span.start)
        } else {
            OffsetMap::Table(align(source, node.span.start, value, scalar.style))
        };
        Some(ScalarText { value, map, span: node.span })
    }

    /// A text that is not from a file position (used in tests).
    pub fn detached(value: &'a str) -> ScalarText<'a> {
        ScalarText { value, map: OffsetMap::Shifted(0), span: Span::new(0, value.len()) }
    }

    /// The whole scalar's span in the file.
    pub fn span(&self) -> Span {
        self.span
    }

    /// The file span of the value's byte range `start..end`.
    pub fn file_span(&self, start: usize, end: usize) -> Span {
        let offset = |i: usize| -> usize {
            match &self.map {
                OffsetMap::Shifted(base) => *base as usize + i.min(self.value.len()),
                OffsetMap::Table(table) => {
                    table.get(i).or(table.last()).map_or(self.span.start as usize, |&o| o as usize)
                }
            }
        };
        let file_start = offset(start);
        let file_end = if end > start {
            offset(end - 1)
                + self.value[..end.min(self.value.len())].chars().next_back().map_or(1, char::len_utf8)
        } else {
            file_start
        };
        Span::new(file_start, file_end.max(file_start))
    }
}

/// Aligns each byte of `value` with a byte of `source` (the scalar's
/// source text starting at file offset `base`).
fn align(source: &str, base: u32, value: &str, style: Style) -> Vec<u32> {
    let base = base as usize;
    let bytes = source.as_bytes();
    let mut table = Vec::with_capacity(value.len() + 1);
    let mut pos = match style {
        Style::SingleQuoted | Style::DoubleQuoted if source.starts_with(['\'', '"']) => 1,
        _ => 0,
    };
    let mut lost = false;
    for ch in value.chars() {
        let at = if lost { None } else { find_char(source, &mut pos, ch, style) };
        let file_offset = match at {
            Some(offset) => base + offset,
            None => {
                lost = true;
                base
            }
        };
        for _ in 0..ch.len_utf8() {
            table.push(u32::try_from(file_offset).unwrap_or(u32::MAX));
        }
    }
    let end = if lost { base } else { base + pos.min(bytes.len()) };
    table.push(u32::try_from(end).unwrap_or(u32::MAX));
    table
}

/// Advances `pos` past the source text that produced `ch`; returns where
/// that text starts, or `None` when it cannot be found.
fn find_char(source: &str, pos: &mut usize, ch: char, style: Style) -> Option<usize> {
    while let Some(s) = source.get(*pos..).and_then(|rest| rest.chars().next()) {
        let here = *pos;
        if style == Style::DoubleQuoted && s == '\\' {
            let escaped = source[here + 1..].chars().next()?;
            let length = match escaped {
                'x' => 4,
                'u' => 6,
                'U' => 10,
                '\n' => {
                    // A line continuation produces no character, nor does
                    // the next line's indentation.
                    *pos = here + 2;
                    while source[*pos..].starts_with([' ', '\t']) {
                        *pos += 1;
                    }
                    continue;
                }
                other => 1 + other.len_utf8(),
            };
            *pos = (here + length).min(source.len());
            return Some(here);
        }
        if style == Style::SingleQuoted && s == '\'' && ch == '\'' && source[here + 1..].starts_with('\'') {
            *pos = here + 2;
            return Some(here);
        }
        *pos = here + s.len_utf8();
        if s == ch
            || (s == '\n'
                && ch == ' '
                && matches!(style, Style::Folded | Style::Plain | Style::SingleQuoted | Style::DoubleQuoted))
        {
            return Some(here);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::yaml;

    /// Parses `text` as `k: <scalar>` and returns what the value's byte
    /// range `needle` maps to in the file.
    fn located(text: &str, needle: &str) -> String {
        let file = SourceFile::new("t.yaml", text);
        let (root, errors) = yaml::parse(&file);
        assert!(errors.is_empty(), "{errors:?}");
        let root = root.unwrap();
        let node = &root.as_map().unwrap()[0].1;
        let scalar = ScalarText::of(&file, node).unwrap();
        let start = scalar.value.find(needle).unwrap();
        let span = scalar.file_span(start, start + needle.len());
        text[span.range()].to_string()
    }

    #[test]
    fn plain_and_quoted_scalars_map_exactly() {
        assert_eq!(located("k: amount > 5\n", "amount"), "amount");
        assert_eq!(located("k: '!matches(x, \"a\")'\n", "x"), "x");
        assert_eq!(located("k: 'it''s x'\n", "x"), "x");
        assert_eq!(located("k: \"a\\tb + cé\"\n", "cé"), "cé");
        assert_eq!(located("k: \"\\\"q\\\" + zz\"\n", "zz"), "zz");
    }

    #[test]
    fn folded_scalars_map_where_characters_match() {
        let text = "k: >-\n  Transfer of {amount_eur} EUR exceeds\n  {limit.single} EUR.\n";
        assert_eq!(located(text, "limit.single"), "limit.single");
        assert_eq!(located(text, "amount_eur"), "amount_eur");
        let plain_multiline = "k: a &&\n  bb\n";
        assert_eq!(located(plain_multiline, "bb"), "bb");
    }
}
