//! The batch matrix's contracts and records: every contract of every
//! family compiles for every shape its records fit, the records are valid
//! for it and evaluate without errors, and each shape's records have the
//! size it promises.

use benches::matrix::{ContractChoice, Family, Shape};

/// The range of a shape's record sizes, as JSON bytes.
fn sizes(shape: Shape) -> std::ops::Range<usize> {
    match shape {
        Shape::Flat => 100..300,
        Shape::Nested => 200..500,
        Shape::ArrayHeavy => 1_500..3_000,
        Shape::Wide => 8_000..14_000,
    }
}

#[test]
fn every_shape_has_valid_records_of_its_size() {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    for contract in [ContractChoice::Reference, ContractChoice::Generated(6), ContractChoice::Generated(24)] {
        let family = contract.family();
        for shape in Shape::ALL {
            if family.unfit(shape).is_some() {
                assert_eq!((family, shape), (Family::Reference, Shape::Flat));
                continue;
            }
            let bundle = frontend::compile(&contract.source(shape))
                .unwrap_or_else(|d| panic!("{contract:?} {shape:?}: {}", d.render(false)));
            let loaded = engine.load(bundle).expect("it loads");
            let mut total = 0;
            for seed in 1..=50 {
                let record = family.record(shape, seed).to_string();
                total += record.len();
                let request = format!(r#"{{"channel":"{}","input":{record}}}"#, family.channel());
                let mut out = Vec::new();
                loaded.evaluate_json(&request, &mut out);
                let text = String::from_utf8_lossy(&out);
                assert!(text.ends_with(r#""errors":[]}"#), "{contract:?} {shape:?}: {text}\n{record}");
            }
            let average = total / 50;
            assert!(sizes(shape).contains(&average), "{contract:?} {shape:?}: {average} bytes a record");
        }
    }
}

#[test]
fn generated_records_reach_both_decisions() {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let contract = ContractChoice::Generated(24);
    for shape in Shape::ALL {
        let loaded =
            engine.load(frontend::compile(&contract.source(shape)).expect("compiles")).expect("loads");
        let mut decisions = std::collections::BTreeSet::new();
        for seed in 1..=200 {
            let request = format!(r#"{{"channel":"app","input":{}}}"#, Family::Generated.record(shape, seed));
            let mut out = Vec::new();
            loaded.evaluate_json(&request, &mut out);
            let text = String::from_utf8_lossy(&out).to_string();
            decisions.insert(if text.contains(r#""decision":"deny""#) { "deny" } else { "allow" });
        }
        assert_eq!(decisions.len(), 2, "{shape:?}: {decisions:?}");
    }
}
