//! Byte offsets and LSP positions: a line and a column counted in the
//! encoding client and server agreed on at `initialize` (UTF-8 bytes or
//! UTF-32 characters when the client offers them, else UTF-16 code units,
//! the protocol's default). Positions a client sends past a line's end or
//! the text's end are clamped, never trusted.

use lsp_types::{Position, PositionEncodingKind, Range};

/// How a line's columns are counted (LSP 3.17's `positionEncoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8.
    Utf8,
    /// Code units of UTF-16.
    #[default]
    Utf16,
    /// Characters.
    Utf32,
}

impl Encoding {
    /// UTF-8 when the client offers it (spans are bytes already), else
    /// UTF-32, else UTF-16, which every client speaks.
    pub fn negotiate<'a>(offered: impl IntoIterator<Item = &'a str>) -> Self {
        let offered: Vec<Encoding> = offered.into_iter().filter_map(Encoding::named).collect();
        [Encoding::Utf8, Encoding::Utf32].into_iter().find(|e| offered.contains(e)).unwrap_or_default()
    }

    fn named(name: &str) -> Option<Self> {
        [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32].into_iter().find(|e| e.kind().as_str() == name)
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// The columns character `c` takes.
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// Where each line of a text starts.
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
    encoding: Encoding,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str, encoding: Encoding) -> Self {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { text, starts, encoding }
    }

    /// The position of byte `offset` (clamped to the text, moved back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let column: usize =
            self.text[self.starts[line]..offset].chars().map(|c| self.encoding.units(c)).sum();
        Position::new(to_u32(line), to_u32(column))
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of `position`: a column past the line's end is the
    /// line's end, a line past the last is the text's end, a column inside
    /// a character (a surrogate pair, a UTF-8 sequence) is its start.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else { return self.text.len() };
        let end = self.starts.get(position.line as usize + 1).map_or(self.text.len(), |next| next - 1);
        let mut units = 0;
        for (at, c) in self.text[start..end].char_indices() {
            units += self.encoding.units(c);
            if units > position.character as usize {
                return start + at;
            }
        }
        end
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `b: 😀é x`: each encoding's column of `x`, and of a place inside
    /// the emoji (which is the emoji's start).
    #[test]
    fn columns_count_each_encodings_units_and_clamp() {
        let text = "a: 1\nb: \u{1F600}\u{e9}x\n";
        let x = text.find('x').unwrap();
        let emoji = text.find('\u{1F600}').unwrap();
        for (encoding, column, inside) in
            [(Encoding::Utf8, 9, 5), (Encoding::Utf16, 6, 4), (Encoding::Utf32, 5, 3)]
        {
            let index = LineIndex::new(text, encoding);
            assert_eq!(index.position(x), Position::new(1, column), "{encoding:?}");
            assert_eq!(index.offset(Position::new(1, column)), x, "{encoding:?}");
            assert_eq!(index.offset(Position::new(1, inside)), emoji, "{encoding:?}: inside the emoji");
            assert_eq!(index.offset(Position::new(1, 99)), text.len() - 1, "{encoding:?}");
            assert_eq!(index.offset(Position::new(9, 0)), text.len(), "{encoding:?}");
            assert_eq!(
                index.position(emoji + 2),
                Position::new(1, 3),
                "{encoding:?}: moved back to a boundary"
            );
        }
    }

    #[test]
    fn utf8_is_preferred_then_utf32() {
        assert_eq!(Encoding::negotiate([]), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(["utf-8", "utf-16"]), Encoding::Utf8);
        assert_eq!(Encoding::negotiate(["utf-16", "utf-32", "utf-8"]), Encoding::Utf8);
        assert_eq!(Encoding::negotiate(["utf-16", "utf-32"]), Encoding::Utf32);
        assert_eq!(Encoding::negotiate(["ebcdic", "utf-32"]), Encoding::Utf32);
        assert_eq!(Encoding::negotiate(["ebcdic"]), Encoding::Utf16);
    }
}
