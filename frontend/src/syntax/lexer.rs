//! Tokens of the expression language.

use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::syntax::scalar::ScalarText;

#[derive(Clone, PartialEq, Debug)]
pub enum Tok {
    /// Digits with an optional fraction and exponent; classified by the
    /// parser (`42` int, `12.50` decimal, `1.5e3` float).
    Number,
    Str(String),
    Ident,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Question,
    Colon,
    QuestionQuestion,
    OrOr,
    AndAnd,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Arrow,
    Eof,
}

/// A token and its byte range in the scalar's value.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Splits `text.value[start..end]` into tokens, ending with `Eof`.
pub fn lex(text: &ScalarText<'_>, start: usize, end: usize) -> Result<Vec<Token>, Diagnostic> {
    let src = &text.value[..end];
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut i = start;
    while i < end {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let begin = i;
        let two = |a: u8, b: u8| c == a && bytes.get(i + 1) == Some(&b);
        let (tok, len) = if c.is_ascii_digit() {
            (Tok::Number, number_len(&bytes[i..]))
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let len = bytes[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            (Tok::Ident, len)
        } else if c == b'"' || c == b'\'' {
            let (value, len) = string(text, src, i)?;
            (Tok::Str(value), len)
        } else if two(b'?', b'?') {
            (Tok::QuestionQuestion, 2)
        } else if two(b'|', b'|') {
            (Tok::OrOr, 2)
        } else if two(b'&', b'&') {
            (Tok::AndAnd, 2)
        } else if two(b'=', b'=') {
            (Tok::EqEq, 2)
        } else if two(b'!', b'=') {
            (Tok::NotEq, 2)
        } else if two(b'<', b'=') {
            (Tok::Le, 2)
        } else if two(b'>', b'=') {
            (Tok::Ge, 2)
        } else if two(b'=', b'>') {
            (Tok::Arrow, 2)
        } else {
            let tok = match c {
                b'(' => Tok::LParen,
                b')' => Tok::RParen,
                b'[' => Tok::LBracket,
                b']' => Tok::RBracket,
                b',' => Tok::Comma,
                b'.' => Tok::Dot,
                b'?' => Tok::Question,
                b':' => Tok::Colon,
                b'<' => Tok::Lt,
                b'>' => Tok::Gt,
                b'+' => Tok::Plus,
                b'-' => Tok::Minus,
                b'*' => Tok::Star,
                b'/' => Tok::Slash,
                b'%' => Tok::Percent,
                b'!' => Tok::Bang,
                _ => {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    let span = text.file_span(i, i + ch.len_utf8());
                    let hint = match ch {
                        '=' => "comparison is `==`; there is no assignment",
                        '&' => "logical and is `&&`",
                        '|' => "logical or is `||`",
                        _ => "",
                    };
                    let mut d =
                        Diagnostic::error(codes::EXPR_SYNTAX, span, format!("unexpected character `{ch}`"))
                            .label("not part of the expression language");
                    if !hint.is_empty() {
                        d = d.with_help(hint);
                    }
                    return Err(d);
                }
            };
            (tok, 1)
        };
        i += len;
        tokens.push(Token { tok, start: begin, end: i });
    }
    tokens.push(Token { tok: Tok::Eof, start: end, end });
    Ok(tokens)
}

/// The length of a number: digits, `.digits`, `e[+-]digits`.
fn number_len(bytes: &[u8]) -> usize {
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut len = digits(0);
    if bytes.get(len) == Some(&b'.') && bytes.get(len + 1).is_some_and(u8::is_ascii_digit) {
        len += 1 + digits(len + 1);
    }
    if matches!(bytes.get(len), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(len + 1), Some(b'+' | b'-')));
        if bytes.get(len + 1 + sign).is_some_and(u8::is_ascii_digit) {
            len += 1 + sign + digits(len + 1 + sign);
        }
    }
    len
}

/// A quoted string starting at `start`: its value and source length.
fn string(text: &ScalarText<'_>, src: &str, start: usize) -> Result<(String, usize), Diagnostic> {
    let quote = src.as_bytes()[start] as char;
    let mut value = String::new();
    let mut chars = src[start + 1..].char_indices();
    while let Some((offset, ch)) = chars.next() {
        let at = start + 1 + offset;
        match ch {
            c if c == quote => return Ok((value, at + 1 - start)),
            '\\' => {
                let Some((_, escaped)) = chars.next() else { break };
                let decoded = match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\\' | '"' | '\'' => escaped,
                    other => {
                        let span = text.file_span(at, at + 1 + other.len_utf8());
                        return Err(Diagnostic::error(
                            codes::BAD_LITERAL,
                            span,
                            format!("unknown escape `\\{other}` in a string"),
                        )
                        .label("unknown escape")
                        .with_help("the escapes are \\n \\t \\r \\\\ \\\" and \\'"));
                    }
                };
                value.push(decoded);
            }
            c => value.push(c),
        }
    }
    let span = text.file_span(start, start + 1);
    Err(Diagnostic::error(codes::EXPR_SYNTAX, span, "unterminated string")
        .label(format!("this {quote} is never closed")))
}
