//! A bounded differential run: random contracts and requests, the same
//! bytes from the interpreter and from native code. (Long runs:
//! `cargo xtask differential --executions 1000000`, or the `differential`
//! fuzz target.)

#[test]
fn interpreter_and_native_code_agree() {
    let tally = conformance::differential::run(1, 150, 20);
    eprintln!("{tally:?}");
    assert!(
        tally.mismatches.is_empty(),
        "{} mismatches:\n{}",
        tally.mismatches.len(),
        tally.mismatches.join("\n")
    );
    assert!(
        tally.refused * 20 <= tally.contracts + tally.refused,
        "the generator made too many invalid contracts: {tally:?}"
    );
    assert!(tally.native > 0, "native code never ran: {tally:?}");
}
