//! Message templates: text with `{expression}` holes; `{{` and `}}` are
//! literal braces.

use crate::ast::{Template, TemplatePart};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::syntax::expr;
use crate::syntax::scalar::ScalarText;

/// Parses a whole scalar as a template, reporting every bad hole.
pub fn parse(text: &ScalarText<'_>, diagnostics: &mut Vec<Diagnostic>) -> Option<Template> {
    let value = text.value;
    let bytes = value.as_bytes();
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut ok = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                literal.push('{');
                i += 2;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                literal.push('}');
                i += 2;
            }
            b'{' => {
                let Some(close) = closing_brace(value, i + 1) else {
                    diagnostics.push(
                        Diagnostic::error(
                            codes::BAD_TEMPLATE,
                            text.file_span(i, i + 1),
                            "`{` opens an expression that is never closed",
                        )
                        .label("unclosed")
                        .with_help("write `{{` for a literal brace"),
                    );
                    return None;
                };
                if !literal.is_empty() {
                    parts.push(TemplatePart::Text(std::mem::take(&mut literal)));
                }
                match expr::parse_range(text, i + 1, close) {
                    Ok(e) => parts.push(TemplatePart::Expr(e)),
                    Err(d) => {
                        diagnostics.push(d);
                        ok = false;
                    }
                }
                i = close + 1;
            }
            b'}' => {
                diagnostics.push(
                    Diagnostic::error(
                        codes::BAD_TEMPLATE,
                        text.file_span(i, i + 1),
                        "`}` without a matching `{`",
                    )
                    .label("unmatched")
                    .with_help("write `}}` for a literal brace"),
                );
                return None;
            }
            _ => {
                let ch = value[i..].chars().next().unwrap_or(' ');
                literal.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    if !literal.is_empty() {
        parts.push(TemplatePart::Text(literal));
    }
    ok.then(|| Template { span: text.span(), parts })
}

/// The `}` closing a hole that starts at `from`, skipping string literals.
fn closing_brace(value: &str, from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    let bytes = value.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'}' => return Some(i),
            None if b == b'{' => return None,
            None => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str) -> String {
        let text = ScalarText::detached(input);
        let mut diagnostics = Vec::new();
        match parse(&text, &mut diagnostics) {
            Some(t) => t
                .parts
                .iter()
                .map(|p| match p {
                    TemplatePart::Text(s) => format!("{s:?}"),
                    TemplatePart::Expr(e) => format!("{{{}}}", e.to_sexp()),
                })
                .collect::<Vec<_>>()
                .join(" "),
            None => diagnostics
                .iter()
                .map(|d| format!("{}: {} at {:?}", d.code.id(), d.message, d.span()))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    #[test]
    fn holes_and_escapes() {
        assert_eq!(check("Transfer of {amount} EUR."), "\"Transfer of \" {amount} \" EUR.\"");
        assert_eq!(check("{{literal}} {a + 1}"), "\"{literal} \" {(a + 1)}");
        assert_eq!(check("{lower(\"}\")}!"), "{lower(\"}\")} \"!\"");
        assert_eq!(check("no holes"), "\"no holes\"");
    }

    #[test]
    fn bad_templates_are_located() {
        assert_eq!(check("a {b"), "E0303: `{` opens an expression that is never closed at 2..3");
        assert_eq!(check("a } b"), "E0303: `}` without a matching `{` at 2..3");
        assert_eq!(
            check("x {a <} y {} z"),
            "E0300: expected an expression, found the end at 6..6; E0300: expected an expression, found nothing at 11..11"
        );
    }
}
