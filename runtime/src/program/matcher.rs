//! `matches(s, "pattern")`: the `regex` crate's semantics, answered by a
//! fully built DFA when the pattern's is small.
//!
//! Contract patterns are mostly short and anchored (IBANs, codes, ids).
//! For those a dense DFA, built once at load, decides a match in one pass
//! over the bytes with none of the meta engine's per-call set-up (a cache
//! from a pool, strategy selection), which costs more than the search on
//! such short subjects. A pattern whose DFA would be large, or that needs
//! what a DFA cannot do (Unicode word boundaries), keeps the `regex`
//! crate's engine; so does any search the DFA gives up on. Both parse the
//! pattern with the same syntax and defaults, so they agree by
//! construction, and `tests` checks it on random subjects.

use regex_automata::dfa::{Automaton, dense};
use regex_automata::{Input, nfa::thompson, util::syntax};

/// The most memory one pattern's DFA may take, in bytes.
const DFA_SIZE_LIMIT: usize = 1 << 20;

/// A compiled `matches` pattern.
#[derive(Clone, Debug)]
pub struct Matcher {
    regex: regex::Regex,
    dfa: Option<dense::DFA<Vec<u32>>>,
}

impl Matcher {
    /// Wraps a regex built by `ir::pattern::compile`, adding a DFA when
    /// one fits.
    pub fn new(regex: regex::Regex) -> Matcher {
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                    .determinize_size_limit(Some(DFA_SIZE_LIMIT)),
            )
            .syntax(syntax::Config::new().nest_limit(ir::pattern::MAX_NESTING))
            .thompson(thompson::Config::new())
            .build(regex.as_str())
            .ok();
        Matcher { regex, dfa }
    }

    /// Whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        if let Some(dfa) = &self.dfa
            && let Ok(found) = dfa.try_search_fwd(&Input::new(text).earliest(true))
        {
            return found.is_some();
        }
        self.regex.is_match(text)
    }

    /// Whether the DFA answers (for tests and `inspect`).
    pub fn has_dfa(&self) -> bool {
        self.dfa.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PATTERNS: &[&str] = &[
        "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$",
        "^(a|Z)\\w*$",
        "ab+c",
        "^$",
        "(?i)straße",
        "[[:digit:]]{3}-\\d+",
        "\\bword\\b",
        "é.ü",
        "^\\p{Greek}+$",
        "x*",
    ];

    fn matcher(pattern: &str) -> Matcher {
        Matcher::new(ir::pattern::compile(pattern).expect("a valid test pattern"))
    }

    #[test]
    fn small_patterns_get_a_dfa_and_unicode_word_boundaries_do_not() {
        assert!(matcher("^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$").has_dfa());
        assert!(!matcher("\\bword\\b").has_dfa());
    }

    proptest! {
        #[test]
        fn the_dfa_agrees_with_the_regex_crate(
            pattern in proptest::sample::select(PATTERNS),
            text in "[a-cA-Z0-9 é\\-üßΑβ_]{0,40}|DE[0-9]{2}[A-Z0-9]{8,34}",
        ) {
            let m = matcher(pattern);
            prop_assert_eq!(m.is_match(&text), m.regex.is_match(&text), "pattern {} on {:?}", pattern, text);
        }
    }
}
