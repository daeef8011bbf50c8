//! Tests of the generator itself: which contracts declare windows and
//! models, that they compile and read their windows and score their
//! models, and the shape of a stream (event time mostly in order, late
//! records, several keys, invalid records).

use super::{ModelFolder, Rng, contract, modelled, stream, windowed};

/// The seeds these tests look at.
const SEEDS: std::ops::Range<u64> = 0..400;

#[test]
fn about_one_contract_in_five_declares_windows() {
    let windowed = SEEDS.filter(|s| windowed(*s)).count();
    assert!((50..=110).contains(&windowed), "{windowed} of {} contracts with windows", SEEDS.end);
    for seed in SEEDS {
        assert_eq!(contract(seed).contains("\nwindows:\n"), super::windowed(seed), "seed {seed}");
    }
}

#[test]
fn contracts_with_windows_compile_and_read_them() {
    let folder = ModelFolder::new(u64::MAX - 1).expect("the model files");
    let mut reads = 0;
    for seed in SEEDS.filter(|s| windowed(*s)) {
        let text = contract(seed);
        let bundle = compiles(seed, &text, &folder);
        assert!(!bundle.contract().windows.is_empty(), "seed {seed}");
        reads += usize::from(text.contains("windows.w"));
    }
    let windowed = SEEDS.filter(|s| windowed(*s)).count();
    assert!(reads * 10 >= windowed * 9, "{reads} of {windowed} contracts read a window");
}

#[test]
fn about_one_contract_in_five_declares_models_and_most_score_them() {
    let modelled = SEEDS.filter(|s| modelled(*s)).count();
    assert!((50..=110).contains(&modelled), "{modelled} of {} contracts with models", SEEDS.end);
    let folder = ModelFolder::new(u64::MAX).expect("the model files");
    let (mut scored, mut both) = (0, 0);
    for seed in SEEDS {
        let text = contract(seed);
        assert_eq!(text.contains("\nmodels:\n"), super::modelled(seed), "seed {seed}");
        if !super::modelled(seed) {
            continue;
        }
        let bundle = compiles(seed, &text, &folder);
        assert!(!bundle.contract().models.is_empty(), "seed {seed}");
        scored += usize::from(text.contains("score(m"));
        both += usize::from(windowed(seed));
    }
    assert!(scored * 10 >= modelled * 7, "{scored} of {modelled} contracts score a model");
    assert!(both > 0, "no contract has both windows and models");
}

/// The bundle of contract `text` (of `seed`), which must compile, its
/// model files read from `folder`.
fn compiles(seed: u64, text: &str, folder: &ModelFolder) -> ir::Bundle {
    let compiled = frontend::compile_in(folder.path(), "gen.yaml", text);
    compiled.bundle.unwrap_or_else(|| panic!("seed {seed}:\n{text}\n{}", compiled.diagnostics.render(false)))
}

/// Each line's `at`, its `s` (the commonest key) and whether its `b` is a
/// bool (the record is valid).
fn fields(line: &str) -> (i64, String, bool) {
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let input = &value["input"];
    let at = ir::time::parse_timestamp(input["at"].as_str().expect("a time")).expect("a timestamp");
    (at, input["s"].to_string(), input["b"].is_boolean())
}

#[test]
fn a_stream_is_mostly_in_event_time_order_with_late_records_and_several_keys() {
    // Records past 2200 are far in the future: they do not move the
    // stream's clock.
    let far = ir::time::parse_timestamp("2200-01-01T00:00:00Z").expect("a timestamp");
    let (mut records, mut late, mut invalid, mut far_future) = (0, 0, 0, 0);
    let mut keys = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let lines = stream(&mut Rng::new(seed), 50);
        assert_eq!(lines.len(), 50);
        let mut latest = i64::MIN;
        for line in &lines {
            let (at, key, valid) = fields(line);
            records += 1;
            if at > far {
                far_future += 1;
                continue;
            }
            late += usize::from(at < latest);
            latest = latest.max(at);
            invalid += usize::from(!valid);
            keys.insert(key);
        }
    }
    assert!(late * 20 >= records && late * 4 <= records, "{late} of {records} records before the latest");
    assert!(invalid > 0 && invalid * 10 <= records, "{invalid} of {records} records invalid");
    assert!(
        far_future > 0 && far_future * 20 <= records,
        "{far_future} of {records} records far in the future"
    );
    assert!(keys.len() >= 3, "keys {keys:?}");
}
