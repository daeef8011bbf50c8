//! Batch evaluation of the conformance requests: records laid out
//! together (`runtime::records::Records`) and evaluated in one call
//! (`Contract::evaluate_records`, native code's batch entry on the JIT)
//! give, record by record, the bytes of evaluating each request alone.

#[test]
fn records_evaluated_together_give_each_requests_bytes() {
    let (mut compared, mut native) = (0, 0);
    for name in conformance::ENGINES {
        let engine = conformance::engine(name);
        for case in conformance::cases() {
            let contract = conformance::load(&case, &engine).expect("the case loads");
            let text = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
            let lines: Vec<String> =
                text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect();
            let together = conformance::evaluate_together(&contract, &lines);
            for (line, got) in lines.iter().zip(&together) {
                let mut alone = Vec::new();
                contract.evaluate_json(line, &mut alone);
                assert_eq!(
                    String::from_utf8_lossy(got),
                    String::from_utf8_lossy(&alone),
                    "{name}: {}: {line}",
                    case.display()
                );
                compared += 1;
            }
            if name == "jit" {
                native += contract.native_counts().0;
            }
        }
    }
    assert!(compared > 200, "only {compared} records compared");
    // Every request ran twice on the JIT (together, then alone); native
    // code finished most of them.
    assert!(native > 200, "native code finished only {native} evaluations");
}
