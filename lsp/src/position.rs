//! Byte offsets and LSP positions: a line and a column counted in UTF-16
//! code units (the protocol's default encoding, which every client
//! speaks). Positions a client sends past a line's end or the text's end
//! are clamped, never trusted.

use lsp_types::{Position, Range};

/// Where each line of a text starts.
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped to the text, moved back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let column: usize = self.text[self.starts[line]..offset].chars().map(char::len_utf16).sum();
        Position::new(to_u32(line), to_u32(column))
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of `position`: a column past the line's end is the
    /// line's end, a line past the last is the text's end, a column inside
    /// a surrogate pair is the character's start.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else { return self.text.len() };
        let end = self.starts.get(position.line as usize + 1).map_or(self.text.len(), |next| next - 1);
        let mut units = 0;
        for (at, c) in self.text[start..end].char_indices() {
            units += c.len_utf16();
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

    #[test]
    fn columns_count_utf16_units_and_clamp() {
        let text = "a: 1\nb: \u{1F600}x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(x), Position::new(1, 5));
        assert_eq!(index.offset(Position::new(1, 5)), x);
        assert_eq!(index.offset(Position::new(1, 4)), x - 4, "inside the pair: the character's start");
        assert_eq!(index.offset(Position::new(1, 99)), text.len() - 1);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(x - 2), Position::new(1, 3));
    }
}
