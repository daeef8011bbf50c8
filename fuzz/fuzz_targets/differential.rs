//! Fuzz target: the differential generator driven by the fuzzer's bytes.
//! The first eight bytes are a seed of `conformance::differential`, which
//! picks a contract and its requests; the interpreter and native code must
//! print the same bytes for every request. A long run:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run differential`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    let n = data.len().min(8);
    seed[..n].copy_from_slice(&data[..n]);
    let tally = conformance::differential::run(u64::from_le_bytes(seed), 1, 8);
    assert!(tally.mismatches.is_empty(), "{}", tally.mismatches.join("\n"));
});
