//! The native code of a few conformance cases, as snapshots: the Cranelift
//! IR, the x86-64 and the aarch64 machine code (cross-compiled, whatever
//! the host). Cranelift is pinned to one exact version, so these change
//! only when code generation does; a change is reviewed like any other.

use std::path::Path;

use backend::inspect::{self, Emit};

/// Small cases that between them show ints and overflow checks, channel
/// masks, first-match, lambdas over lists and inline table lookups.
const CASES: [&str; 5] =
    ["channels", "first_match", "int_overflow_and_division", "empty_lists_and_lambdas", "tables_and_sets"];

fn check(case: &str) {
    let dir = conformance::cases_dir().join(case);
    let engine = conformance::engine("interp");
    let contract = conformance::load(Path::new(&dir), &engine).unwrap_or_else(|e| panic!("{case}: {e}"));
    for (name, target, emit) in
        [("clif", "x86_64", Emit::Clif), ("x86_64", "x86_64", Emit::Asm), ("aarch64", "aarch64", Emit::Asm)]
    {
        let text = inspect::emit(contract.program(), target, emit).unwrap_or_else(|e| panic!("{case}: {e}"));
        insta::assert_snapshot!(format!("{case}.{name}"), text);
    }
}

#[test]
fn native_code_of_selected_cases() {
    for case in CASES {
        check(case);
    }
}
