//! Source files and byte spans, with line and column lookup.

use std::fmt;

/// A byte range `start..end` in one source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span { start: clamp(start), end: clamp(end.max(start)) }
    }

    /// An empty span at `offset`.
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A value with the span it came from.
#[derive(Clone, PartialEq, Debug)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// A line and column, both 1-based; the column counts characters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// One contract's text and name, with an index of line starts.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { name: name.into(), text, line_starts }
    }

    /// The name diagnostics show: the path as the user gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = self.floor_char_boundary(offset.min(self.text.len()));
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        LineCol { line: line + 1, column: self.text[start..offset].chars().count() + 1 }
    }

    /// The byte range of line `line` (1-based), without its newline.
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.line_starts[line - 1];
        let end = self.line_starts.get(line).map_or(self.text.len(), |next| next - 1);
        start..end.max(start)
    }

    /// `offset` moved back to the nearest character boundary.
    pub fn floor_char_boundary(&self, mut offset: usize) -> usize {
        offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// `offset` moved forward to the nearest character boundary.
    pub fn ceil_char_boundary(&self, mut offset: usize) -> usize {
        offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset += 1;
        }
        offset
    }

    /// `span` clamped to the text and snapped to character boundaries.
    pub fn clamp(&self, span: Span) -> Span {
        let start = self.floor_char_boundary(span.start as usize);
        let end = self.ceil_char_boundary((span.end as usize).max(start));
        Span::new(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let file = SourceFile::new("t.yaml", "a: 1\nname: Bäcker €x\n");
        assert_eq!(file.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(file.line_col(5), LineCol { line: 2, column: 1 });
        let euro = file.text().find('€').unwrap();
        assert_eq!(file.line_col(euro), LineCol { line: 2, column: 14 });
        assert_eq!(file.line_col(euro + 1), LineCol { line: 2, column: 14 });
        assert_eq!(file.line_range(2), 5..23);
        assert_eq!(file.line_col(10_000).line, 3);
    }
}
