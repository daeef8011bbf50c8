//! Batch evaluation of the conformance requests: records laid out
//! together (`runtime::input::records::Records`) and evaluated in one call
//! (`Contract::evaluate_records`, native code's batch entry on the JIT)
//! give, record by record, the bytes of evaluating each request alone.
//! Each way runs on a contract loaded for it, so a case with windows
//! starts from empty window state each time and compares the batch's
//! results with those of the records evaluated one at a time, in order.

#[test]
fn records_evaluated_together_give_each_requests_bytes() {
    let (mut compared, mut native) = (0, 0);
    for name in conformance::ENGINES {
        let engine = conformance::engine(name);
        for case in conformance::cases() {
            let load = || conformance::load(&case, &engine).expect("the case loads");
            let (contract, batched) = (load(), load());
            let text = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
            let lines: Vec<String> =
                text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect();
            let together = conformance::evaluate_together(&batched, &lines);
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
                native += contract.native_counts().0 + batched.native_counts().0;
            }
        }
    }
    assert!(compared > 200, "only {compared} records compared");
    // Every request ran twice on the JIT (together, then alone); native
    // code finished most of them.
    assert!(native > 200, "native code finished only {native} evaluations");
}

/// The conformance requests' inputs (those that name at most a channel),
/// a channel at a time, as one JSON array: the batch engine gives the
/// lines it gives for the same inputs as NDJSON, byte for byte.
#[test]
fn json_arrays_give_the_ndjson_lines() {
    let engine = conformance::engine("interp");
    let mut compared = 0;
    for case in conformance::cases() {
        let text = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
        let mut by_channel: Vec<(Option<String>, Vec<String>)> = Vec::new();
        for line in text.lines() {
            let Ok(envelope) = runtime::Envelope::parse(line) else { continue };
            let (Some(input), None, None) = (envelope.input, &envelope.component, &envelope.now) else {
                continue;
            };
            let channel = envelope.channel.as_deref().map(String::from);
            match by_channel.iter_mut().find(|(c, _)| *c == channel) {
                Some((_, inputs)) => inputs.push(input.get().to_string()),
                None => by_channel.push((channel, vec![input.get().to_string()])),
            }
        }
        for (channel, inputs) in by_channel {
            let settings = batch::Settings {
                channel: channel.clone(),
                parts: runtime::result::Parts::ALL,
                keep: Vec::new(),
                output: batch::OutputFormat::Ndjson,
                limit: None,
            };
            // A job each, on a contract each: fresh window state.
            let job = || {
                let contract = conformance::load(&case, &engine).expect("the case loads");
                batch::Job::new(contract, &settings, None).ok()
            };
            let (Some(ndjson_job), Some(array_job)) = (job(), job()) else { continue };
            let ndjson = inputs.join("\n");
            let array = format!("[\n{}\n]\n", inputs.join(",\n"));
            let from_ndjson =
                results(&ndjson_job, batch::source::NdjsonReader::new(reader(ndjson), "ndjson".into()));
            let from_array =
                results(&array_job, batch::source::JsonArrayReader::new(reader(array), "json".into()));
            assert_eq!(from_array, from_ndjson, "{}: channel {channel:?}", case.display());
            compared += inputs.len();
        }
    }
    assert!(compared > 150, "only {compared} records compared");
}

fn reader(text: String) -> Box<dyn std::io::Read + Send> {
    Box::new(std::io::Cursor::new(text.into_bytes()))
}

/// The result lines `job` gives for every chunk of `source`.
fn results(job: &batch::Job, mut source: impl batch::source::Source) -> String {
    let mut out = Vec::new();
    while let Some(chunk) = source.next_chunk().expect("reads") {
        match job.evaluate(&chunk).expect("evaluates").output {
            batch::output::Output::Lines(lines) => out.extend(lines),
            batch::output::Output::Batch(_) => panic!("NDJSON results asked for"),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
