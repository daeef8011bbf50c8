//! Fuzz target: the bundle loader never panics on any bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let _ = ir::Bundle::from_json(bytes);
});
