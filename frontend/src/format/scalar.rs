//! How `rulec fmt` writes a scalar: plain where YAML reads the plain text
//! back as the same string, the author's quotes where it needs them, and
//! multi-line scalars line by line at their new indentation.

use crate::tree::{Scalar, Style, is_null_text};

/// What YAML 1.2's core schema makes of a scalar: quoted ones are strings,
/// plain ones may be null, a boolean or a number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reading {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

/// How `scalar` reads: [`Reading::Str`] unless it is plain and looks like
/// something else.
pub fn reading(scalar: &Scalar) -> Reading {
    if scalar.style != Style::Plain {
        return Reading::Str;
    }
    plain_reading(&scalar.value)
}

/// What a plain scalar with this text reads as. YAML 1.1's `yes`, `no`,
/// `on`, `off` count as booleans: other YAML tools still read them so.
fn plain_reading(text: &str) -> Reading {
    if is_null_text(text) {
        return Reading::Null;
    }
    match text {
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return Reading::Bool,
        _ => {}
    }
    if matches!(text.to_ascii_lowercase().as_str(), "yes" | "no" | "on" | "off" | "y" | "n") {
        return Reading::Bool;
    }
    if is_int(text) {
        return Reading::Int;
    }
    if is_float(text) { Reading::Float } else { Reading::Str }
}

fn is_int(text: &str) -> bool {
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits(unsigned, 10)
        || text.strip_prefix("0o").is_some_and(|s| digits(s, 8))
        || text.strip_prefix("0x").is_some_and(|s| digits(s, 16))
}

fn is_float(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// Where a scalar is written: in a block collection or inside `[ ]`/`{ }`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Context {
    Block,
    Flow,
}

/// Whether `text` can be written plain in `context` and read back as the
/// same string: no quoting needed.
pub fn plain_safe(text: &str, context: Context) -> bool {
    plain_shape(text, context) && plain_reading(text) == Reading::Str && !yaml11_typed(text)
}

/// Whether `text` written plain in `context` reads back as one plain
/// scalar with this text (whatever type YAML then gives it).
/// saphyr-parser reads some text plain that YAML does not allow so (a
/// `|2` inside `{ }`); such text is written quoted.
pub fn plain_shape(text: &str, context: Context) -> bool {
    let Some(first) = text.chars().next() else { return false };
    let printable = text.chars().all(|c| c == ' ' || (!c.is_control() && !c.is_whitespace()));
    let flow_indicator = |c: char| matches!(c, ',' | '[' | ']' | '{' | '}');
    let second = text[first.len_utf8()..].chars().next();
    let leading_ok = match first {
        ' ' => false,
        '-' | '?' | ':' => second.is_some_and(|c| c != ' ' && !flow_indicator(c)),
        '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' | ',' | '[' | ']' | '{' | '}' => {
            false
        }
        _ => true,
    };
    printable
        && leading_ok
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.starts_with("---")
        && !text.starts_with("...")
        && (context == Context::Block || !text.chars().any(flow_indicator))
}

/// Whether YAML 1.1 tools (PyYAML, older editors) would read this plain
/// text as something other than a string: a timestamp (`2026-03-02...`),
/// a number with `_` or in base 60 (`1:20`), a binary `0b101`. rulec reads
/// it by its declared type, but a file is read by other tools too.
fn yaml11_typed(text: &str) -> bool {
    let bytes = text.as_bytes();
    let date = bytes.len() >= 8 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-';
    let numeric = text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
        && text.chars().all(|c| c.is_ascii_digit() || matches!(c, '_' | ':' | '.' | '-' | '+'));
    let binary = text.strip_prefix("0b").is_some_and(|b| b.chars().all(|c| matches!(c, '0' | '1' | '_')));
    date || numeric || binary
}

/// A single-line scalar as `rulec fmt` writes it in `context`, or `None`
/// when it cannot be written there (plain text that needs the block
/// context). `source` is the scalar's text in the file.
pub fn single_line(scalar: &Scalar, source: &str, context: Context) -> Option<String> {
    match scalar.style {
        Style::Plain if context == Context::Flow && scalar.value.chars().any(|c| ",[]{}".contains(c)) => None,
        // A plain scalar on one line is its text (saphyr's span of an
        // empty one can cover the bracket after it).
        Style::Plain if scalar.value.is_empty() || plain_shape(&scalar.value, context) => {
            Some(scalar.value.clone())
        }
        Style::Plain => Some(double_quoted(&scalar.value)),
        Style::SingleQuoted | Style::DoubleQuoted if plain_safe(&scalar.value, context) => {
            Some(scalar.value.clone())
        }
        Style::SingleQuoted | Style::DoubleQuoted => Some(source.to_string()),
        Style::Literal | Style::Folded => None,
    }
}

/// `text` as a double-quoted YAML string (JSON's escapes are YAML's).
pub fn double_quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string is JSON")
}

/// Whether the scalar's text spans several lines of the file (block
/// scalars always do).
pub fn multi_line(scalar: &Scalar, source: &str) -> bool {
    matches!(scalar.style, Style::Literal | Style::Folded) || source.contains('\n')
}

/// The continuation lines of a multi-line plain or quoted scalar, each
/// re-indented to `indent` (their leading spaces are not part of the
/// value); blank lines stay blank.
pub fn flow_lines(source: &str, indent: usize) -> Vec<String> {
    let mut lines = source.lines();
    let mut out = vec![lines.next().unwrap_or_default().trim_end().to_string()];
    for line in lines {
        let text = line.trim();
        out.push(if text.is_empty() { String::new() } else { format!("{:indent$}{text}", "") });
    }
    out
}

/// A block scalar's content lines (`source`, from the start of its first
/// line) moved to `indent`, keeping each line's indentation relative to
/// the content's (which is part of the value); `value` is the decoded
/// text, whose first line tells the content's indentation in the file.
pub fn block_lines(source: &str, value: &str, keep_trailing: bool, indent: usize) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let width = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let first = lines.iter().find(|l| !l.trim().is_empty());
    let value_first = value.lines().find(|l| !l.trim().is_empty());
    let base = match (first, value_first) {
        (Some(line), Some(decoded)) => width(line).saturating_sub(width(decoded)),
        _ => 0,
    };
    let mut out: Vec<String> = lines
        .iter()
        .map(|line| {
            let spaces = width(line);
            let text = line.trim_start_matches(' ');
            if text.is_empty() && spaces <= base {
                String::new()
            } else {
                format!("{:width$}{text}", "", width = indent + spaces.saturating_sub(base))
            }
        })
        .collect();
    if !keep_trailing {
        while out.last().is_some_and(String::is_empty) {
            out.pop();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_that_yaml_reads_otherwise_keeps_its_quotes() {
        for text in [
            "true", "no", "12", "0.5", "1e3", ".inf", "~", "", " 7", "- x", "a: b", "a #b", "x:", "{x}",
            "'q", "@x",
        ] {
            assert!(!plain_safe(text, Context::Block), "{text}");
        }
        for text in ["2026-03-02T10:00:00Z", "1_000", "1:20", "0b11", "1.0.0"] {
            assert!(!plain_safe(text, Context::Block), "{text}: YAML 1.1 reads it otherwise");
        }
        for text in ["EUR", "v1.0.0", "Transfer of {amount} EUR.", "a:b", "a#b", "-1x", "10m", "24h"] {
            assert!(plain_safe(text, Context::Block), "{text}");
        }
        assert!(!plain_safe("a, b", Context::Flow));
        assert!(plain_safe("a, b", Context::Block));
    }

    #[test]
    fn readings_follow_the_core_schema() {
        let plain = |s: &str| plain_reading(s);
        assert_eq!(plain("0x1F"), Reading::Int);
        assert_eq!(plain("-3"), Reading::Int);
        assert_eq!(plain("3."), Reading::Float);
        assert_eq!(plain(".5e-3"), Reading::Float);
        assert_eq!(plain("1.0.0"), Reading::Str);
        assert_eq!(plain("e3"), Reading::Str);
        assert_eq!(plain("."), Reading::Str);
    }
}
