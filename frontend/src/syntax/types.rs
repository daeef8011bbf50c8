//! Type syntax inside a scalar: `decimal`, `string?`, `list<string>`,
//! `list<{ sku: string, qty: int }>`. (The mapping forms `{ enum: [...] }`,
//! `{ list: T }` and nested records are read from YAML in
//! [`crate::syntax::contract`].)
//!
//! ```text
//! type    := primary '?'?
//! primary := name | name '<' type '>' | '{' (field (',' field)*)? '}'
//! field   := name ':' type
//! ```

use crate::ast::{FieldDecl, TypeExpr, TypeExprKind};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Spanned;
use crate::syntax::scalar::ScalarText;

/// The deepest nesting a written type may have.
pub const MAX_TYPE_NESTING: usize = 32;

/// Parses `text.value[start..end]` as a type.
pub fn parse(text: &ScalarText<'_>, start: usize, end: usize) -> Result<TypeExpr, Diagnostic> {
    let mut p = Parser { text, pos: start, end, depth: 0 };
    let ty = p.ty()?;
    p.skip_space();
    if p.pos < p.end {
        return Err(p.error("expected the end of the type"));
    }
    Ok(ty)
}

struct Parser<'t, 's> {
    text: &'t ScalarText<'s>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Parser<'_, '_> {
    fn bytes(&self) -> &[u8] {
        &self.text.value.as_bytes()[..self.end]
    }

    fn skip_space(&mut self) {
        while self.pos < self.end && self.bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error(&self, message: &str) -> Diagnostic {
        let at = self.pos.min(self.end);
        let next = self.text.value[at..self.end].chars().next().map_or(0, char::len_utf8);
        let found =
            if next == 0 { "the end".to_string() } else { format!("`{}`", &self.text.value[at..at + next]) };
        Diagnostic::error(
            codes::BAD_TYPE,
            self.text.file_span(at, at + next),
            format!("malformed type: {message}, found {found}"),
        )
        .label(message.to_string())
        .with_help("types are written `decimal`, `string?`, `list<T>` or `{ field: T, ... }`")
    }

    fn name(&mut self) -> Result<Spanned<String>, Diagnostic> {
        self.skip_space();
        let start = self.pos;
        while self.pos < self.end
            && (self.bytes()[self.pos].is_ascii_alphanumeric() || self.bytes()[self.pos] == b'_')
        {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error("expected a name"));
        }
        Ok(Spanned::new(self.text.value[start..self.pos].to_string(), self.text.file_span(start, self.pos)))
    }

    fn ty(&mut self) -> Result<TypeExpr, Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_TYPE_NESTING {
            return Err(self.error(&format!("types nest at most {MAX_TYPE_NESTING} deep")));
        }
        self.skip_space();
        let start = self.pos;
        let mut ty = self.primary()?;
        if self.eat(b'?') {
            let span = self.text.file_span(start, self.pos);
            ty = TypeExpr { span, kind: TypeExprKind::Optional(Box::new(ty)) };
        }
        self.depth -= 1;
        Ok(ty)
    }

    fn primary(&mut self) -> Result<TypeExpr, Diagnostic> {
        let start = self.pos;
        if self.eat(b'{') {
            let mut fields = Vec::new();
            if !self.eat(b'}') {
                loop {
                    let name = self.name()?;
                    if !self.eat(b':') {
                        return Err(self.error("expected `:` after a field name"));
                    }
                    fields.push(FieldDecl { name, ty: self.ty()? });
                    if self.eat(b'}') {
                        break;
                    }
                    if !self.eat(b',') {
                        return Err(self.error("expected `,` or `}`"));
                    }
                }
            }
            let span = self.text.file_span(start, self.pos);
            return Ok(TypeExpr { span, kind: TypeExprKind::Record(fields) });
        }
        let name = self.name()?;
        if name.value == "list" && self.eat(b'<') {
            let element = self.ty()?;
            if !self.eat(b'>') {
                return Err(self.error("expected `>` to close `list<`"));
            }
            let span = self.text.file_span(start, self.pos);
            return Ok(TypeExpr { span, kind: TypeExprKind::List(Box::new(element)) });
        }
        Ok(TypeExpr { span: name.span, kind: TypeExprKind::Named(name.value) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str) -> String {
        match parse(&ScalarText::detached(input), 0, input.len()) {
            Ok(ty) => crate::ast_print::type_text(&ty),
            Err(d) => format!("{}: {} at {:?}", d.code.id(), d.message, d.span()),
        }
    }

    #[test]
    fn types_parse() {
        assert_eq!(check("decimal"), "decimal");
        assert_eq!(check(" string? "), "string?");
        assert_eq!(check("list<list<int>>?"), "list<list<int>>?");
        assert_eq!(
            check("list<{ sku: string, qty: int?, tags: list<string> }>"),
            "list<{ sku: string, qty: int?, tags: list<string> }>"
        );
        assert_eq!(check("{}"), "{  }");
    }

    #[test]
    fn malformed_types_are_located() {
        assert_eq!(
            check("list<int"),
            "E0200: malformed type: expected `>` to close `list<`, found the end at 8..8"
        );
        assert_eq!(
            check("{ a int }"),
            "E0200: malformed type: expected `:` after a field name, found `i` at 4..5"
        );
        assert_eq!(
            check("int int"),
            "E0200: malformed type: expected the end of the type, found `i` at 4..5"
        );
        assert!(
            check(&format!("{}int{}", "list<".repeat(100_000), ">".repeat(100_000))).starts_with("E0200")
        );
    }
}
