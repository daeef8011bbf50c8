//! User text echoed in messages. An error that names a bad value shows a
//! short prefix of it, so a request with a 900 KB bad value gets a short
//! error, not the 900 KB back. Every message that repeats what a user
//! sent (a request's fields, a value that does not parse, serde_json's
//! own text) goes through here.

use std::borrow::Cow;

/// The most characters of a user's value a message repeats.
pub const MAX_ECHO_CHARS: usize = 40;

/// `text` quoted as a JSON string would be (`"EUR"`), cut to
/// [`MAX_ECHO_CHARS`] with `...` when longer.
pub fn quote(text: &str) -> String {
    format!("{:?}", short(text))
}

/// `text` unquoted (a number, a raw JSON value), cut to
/// [`MAX_ECHO_CHARS`] with `...` when longer.
pub fn short(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let end = text.char_indices().nth(MAX_ECHO_CHARS - 3).map_or(text.len(), |(i, _)| i);
            Cow::Owned(format!("{}...", &text[..end]))
        }
    }
}

/// A serde_json error as text, with any string it quotes (`invalid
/// type: string "..."`) cut like [`quote`]; the position is kept.
pub fn json_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let location = if error.line() > 0 {
        format!(" at line {} column {}", error.line(), error.column())
    } else {
        String::new()
    };
    let message = text.strip_suffix(&location).unwrap_or(&text);
    format!("{}{location}", cut_quoted(message))
}

/// `message` with each double-quoted run (as Rust's `{:?}` writes
/// strings, backslash escapes included) cut to [`MAX_ECHO_CHARS`].
fn cut_quoted(message: &str) -> Cow<'_, str> {
    if message.chars().count() <= 2 * MAX_ECHO_CHARS {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(2 * MAX_ECHO_CHARS);
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        let mut inner = String::new();
        let mut kept = 0;
        let mut escaped = false;
        for c in chars.by_ref() {
            if !escaped && c == '"' {
                break;
            }
            escaped = !escaped && c == '\\';
            if kept < MAX_ECHO_CHARS {
                inner.push(c);
            }
            kept += 1;
        }
        if kept > MAX_ECHO_CHARS {
            let cut: String = inner.chars().take(MAX_ECHO_CHARS - 3).collect();
            out.push_str(cut.trim_end_matches('\\'));
            out.push_str("...");
        } else {
            out.push_str(&inner);
        }
        out.push('"');
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_to_a_prefix() {
        assert_eq!(quote("EUR"), "\"EUR\"");
        assert_eq!(quote(&"x".repeat(40)), format!("\"{}\"", "x".repeat(40)));
        assert_eq!(quote(&"x".repeat(41)), format!("\"{}...\"", "x".repeat(37)));
        assert_eq!(short(&"é".repeat(1000)), format!("{}...", "é".repeat(37)));
        assert_eq!(quote("a\"b"), r#""a\"b""#);
    }

    #[test]
    fn serde_json_errors_keep_their_position_and_lose_the_value() {
        let long = format!("\"{}\\\"{}\"", "x".repeat(100), "y".repeat(100_000));
        let error = serde_json::from_str::<Vec<u8>>(&long).expect_err("not a list");
        let shown = json_error(&error);
        assert!(shown.len() < 150, "{shown}");
        assert!(shown.starts_with(&format!("invalid type: string \"{}...\"", "x".repeat(37))), "{shown}");
        assert!(shown.ends_with("at line 1 column 100104"), "{shown}");
        let error = serde_json::from_str::<Vec<u8>>("[1,").expect_err("cut");
        assert_eq!(json_error(&error), error.to_string());
    }
}
