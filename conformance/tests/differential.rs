//! A bounded differential run: random contracts and requests, the same
//! bytes from the interpreter and from native code, and for contracts with
//! windows the same bytes from every path of window state over a stream;
//! contracts with models among both.
//! (Long runs: `cargo xtask differential --executions 1000000`, or the
//! `differential` fuzz target.)

#[test]
fn interpreter_and_native_code_agree() {
    let tally = conformance::differential::run(1, 150, 20);
    eprintln!("{tally:?}");
    assert!(tally.mismatched == 0, "{} mismatches:\n{}", tally.mismatched, tally.mismatches.join("\n"));
    assert!(
        tally.refused * 20 <= tally.contracts + tally.refused,
        "the generator made too many invalid contracts: {tally:?}"
    );
    assert!(tally.native > 0, "native code never ran: {tally:?}");
    assert!(tally.windowed >= 10, "too few contracts with windows: {tally:?}");
    assert!(tally.late > 0, "no record read a window it was late for: {tally:?}");
    assert!(tally.bounded > 0 && tally.full > 0, "no record read a window as its key's bound: {tally:?}");
    assert!(tally.modelled >= 10, "too few contracts with models: {tally:?}");
}
