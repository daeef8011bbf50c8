//! Fuzz target: the expression parser never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = frontend::syntax::expr::parse(&frontend::syntax::scalar::ScalarText::detached(text));
});
