//! Batch evaluation of the conformance requests: records laid out
//! together (`runtime::records::Records`) and evaluated in one call
//! (`Contract::evaluate_records`, native code's batch entry on the JIT)
//! give, record by record, the bytes of evaluating each request alone.

use batch::output::ndjson::NdjsonRows;
use runtime::records::Records;
use runtime::result::Parts;

#[test]
fn records_evaluated_together_give_each_requests_bytes() {
    let (mut compared, mut native) = (0, 0);
    for name in conformance::ENGINES {
        let engine = conformance::engine(name);
        for case in conformance::cases() {
            let contract = conformance::load(&case, &engine).expect("the case loads");
            contract.compile_for_batch();
            let text = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
            // Consecutive requests with the same context go in one batch.
            let mut groups: Vec<(runtime::interp::Context, Vec<(String, Vec<u8>)>)> = Vec::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(envelope) = runtime::Envelope::parse(line) else { continue };
                let Some(input) = envelope.input else { continue };
                let Ok(context) = contract.context(
                    envelope.channel.as_deref(),
                    envelope.component.as_deref(),
                    envelope.now.as_deref(),
                ) else {
                    continue;
                };
                let mut alone = Vec::new();
                contract.evaluate_json(line, &mut alone);
                alone.push(b'\n');
                let same = groups.last().is_some_and(|(c, _)| format!("{c:?}") == format!("{context:?}"));
                if !same {
                    groups.push((context, Vec::new()));
                }
                groups.last_mut().expect("a group").1.push((input.get().to_string(), alone));
            }
            for (context, lines) in &groups {
                let mut records = Records::new(&contract, lines.len());
                for (row, (input, _)) in lines.iter().enumerate() {
                    records.parse_row(&contract, row, input);
                }
                let mut out = NdjsonRows::new(Parts::ALL, lines.len());
                out.window(lines.len(), None);
                contract.evaluate_records(&records, context, &mut out);
                let expected: Vec<u8> = lines.iter().flat_map(|(_, alone)| alone.clone()).collect();
                assert_eq!(
                    String::from_utf8_lossy(&out.out),
                    String::from_utf8_lossy(&expected),
                    "{name}: {}",
                    case.display()
                );
                compared += lines.len();
            }
            if name == "jit" {
                native += contract.native_counts().0;
            }
        }
    }
    assert!(compared > 200, "only {compared} records compared");
    // Every request ran twice on the JIT (alone, then batched); native
    // code finished most of them.
    assert!(native > 200, "native code finished only {native} evaluations");
}
