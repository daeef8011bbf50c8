//! Results with only some parts (`--fields`): for every case's requests
//! and every set of parts, each engine gives the full result's JSON with
//! the other parts left out, and native code (which renders only the
//! messages it reports) gives the interpreter's bytes. Cases with windows
//! are left out: a record enters its windows each time it is evaluated,
//! so evaluating it again for each set of parts would change its result
//! (the parts of their results are built by the same sinks).

use runtime::result::{JsonResult, Parts};

const PARTS: [(&str, Parts); 4] = [
    ("reasons", Parts::REASONS),
    ("findings", Parts::FINDINGS),
    ("effects", Parts::EFFECTS),
    ("errors", Parts::ERRORS),
];

/// Every subset of the optional parts.
fn subsets() -> impl Iterator<Item = Parts> {
    (0..16u8).map(|bits| {
        PARTS
            .iter()
            .enumerate()
            .filter(|(k, _)| bits & (1 << k) != 0)
            .fold(Parts::NONE, |p, (_, (_, q))| p.with(*q))
    })
}

/// The full result's JSON without the parts `parts` leaves out.
fn projected(full: &[u8], parts: Parts) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_slice(full).expect("a result is JSON");
    if let Some(object) = value.as_object_mut() {
        for (name, part) in PARTS {
            if !parts.has(part) {
                object.remove(name);
            }
        }
    }
    value
}

#[test]
fn every_set_of_parts_is_the_full_result_projected() {
    let engines: Vec<_> =
        conformance::ENGINES.iter().map(|name| (*name, conformance::engine(name))).collect();
    let mut compared = 0;
    for case in conformance::cases() {
        let requests = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
        let contracts: Vec<_> = engines
            .iter()
            .map(|(name, engine)| (*name, conformance::load(&case, engine).expect("the case loads")))
            .collect();
        if contracts[0].1.window_state().is_some() {
            continue;
        }
        for line in requests.lines().filter(|l| !l.trim().is_empty()) {
            let (_, interp) = &contracts[0];
            let Ok(request) = interp.request(line) else { continue };
            let Ok(full) = interp.evaluate(&request).map(|r| r.to_json()) else { continue };
            for parts in subsets() {
                let mut bytes = Vec::new();
                for (name, contract) in &contracts {
                    let request = contract.request(line).expect("valid for every engine");
                    let mut out = Vec::new();
                    contract
                        .evaluate_into(&request, &mut JsonResult::new(&mut out, parts))
                        .expect("evaluates");
                    assert_eq!(
                        serde_json::from_slice::<serde_json::Value>(&out).expect("JSON"),
                        projected(&full, parts),
                        "{}: {name}: {line}",
                        case.display()
                    );
                    bytes.push(out);
                }
                assert!(
                    bytes.windows(2).all(|w| w[0] == w[1]),
                    "{}: engines differ on {line}",
                    case.display()
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 1000, "only {compared} results compared");
}
