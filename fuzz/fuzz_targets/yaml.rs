//! Fuzz target: the YAML reader never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = frontend::syntax::yaml::parse(&frontend::SourceFile::new("fuzz.yaml", text));
});
