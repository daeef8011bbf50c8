//! Fuzz target: the whole compiler never panics, and what it accepts
//! round-trips through a bundle.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let compiled = frontend::compile_file("fuzz.yaml", text);
    let _ = compiled.diagnostics.render(false);
    if let Some(bundle) = compiled.bundle {
        let bytes = bundle.to_json();
        let loaded = ir::Bundle::from_json(&bytes).expect("a compiled bundle loads");
        assert_eq!(loaded.to_json(), bytes);
    }
});
