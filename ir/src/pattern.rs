//! Regex patterns of `matches`: the one builder every stage uses, so a
//! pattern the compiler accepts is a pattern every engine can run.
//!
//! Patterns use the `regex` crate's syntax (linear-time matching, no
//! backreferences or look-around) with bounds on their length, nesting and
//! compiled size. The verifier checks the syntax only (cheap); the
//! compiler and the engines build the full regex with [`compile`].

/// The longest pattern, in bytes.
pub const MAX_PATTERN_LEN: usize = 4096;
/// The deepest nesting of groups and repetitions.
pub const MAX_NESTING: u32 = 64;
/// The largest compiled program, in bytes. Matching costs up to the
/// program's size per byte of the subject (the lazy DFA gives way to the
/// PikeVM on patterns like `a{20000}`), so this bounds the worst match:
/// at 256 KiB, `a{5000}` (the largest such repetition that compiles) takes
/// about 0.2 s on a 100 KB subject, where the `regex` crate's default of
/// 10 MiB let `a{100000}` take 42 s. Real patterns (IBANs, codes, ids)
/// compile to a few KiB.
pub const SIZE_LIMIT: usize = 256 << 10;

/// Checks a pattern's length and syntax without compiling it.
pub fn check_syntax(pattern: &str) -> Result<(), String> {
    check_length(pattern)?;
    regex_syntax::ParserBuilder::new()
        .nest_limit(MAX_NESTING)
        .build()
        .parse(pattern)
        .map(|_| ())
        .map_err(|e| explanation(&e.to_string()))
}

/// Builds the regex with rulec's limits.
pub fn compile(pattern: &str) -> Result<regex::Regex, String> {
    check_length(pattern)?;
    regex::RegexBuilder::new(pattern).nest_limit(MAX_NESTING).size_limit(SIZE_LIMIT).build().map_err(|e| match e {
        regex::Error::CompiledTooBig(limit) => format!(
            "the compiled pattern is larger than {} KiB; large repetitions (`a{{5000}}`), and Unicode classes such \
             as `\\w` repeated, grow fast: bound the repetition, or try `[A-Za-z0-9_]` or `(?-u:\\w)`",
            limit >> 10
        ),
        other => explanation(&other.to_string()),
    })
}

fn check_length(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!("the pattern is {} bytes long; the limit is {MAX_PATTERN_LEN}", pattern.len()));
    }
    Ok(())
}

/// The explanation line of a regex error (they draw the pattern over
/// several lines and end with `error: ...`).
fn explanation(text: &str) -> String {
    text.lines().rev().find(|l| l.starts_with("error:")).map_or_else(
        || text.lines().next().unwrap_or(text).to_string(),
        |l| l.trim_start_matches("error: ").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_apply() {
        assert!(compile("^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$").is_ok());
        assert_eq!(check_syntax("a(b").unwrap_err(), "unclosed group");
        assert!(
            compile(r"^[\w.+-]{1,64}@[\w-]{1,255}\.\w{2,63}$").unwrap_err().contains("larger than 256 KiB")
        );
        assert!(check_syntax(r"^[\w.+-]{1,64}@[\w-]{1,255}\.\w{2,63}$").is_ok());
        // Repetitions whose matching is slow on long subjects.
        for slow in ["a{100000}", "a{20000}", "(a|b){5000}"] {
            assert!(compile(slow).unwrap_err().contains("larger than 256 KiB"), "{slow}");
        }
        assert!(compile("a{1000}").is_ok());
        assert!(check_syntax(&"(".repeat(100)).is_err());
        assert!(check_syntax(&"a".repeat(MAX_PATTERN_LEN + 1)).is_err());
    }
}
