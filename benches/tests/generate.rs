//! Generated contracts compile, and generated requests are valid for them
//! and evaluate without errors, from 0 to 100 line items; sizes range from
//! about 300 bytes to 10 KB.

#[test]
fn generated_requests_fit_generated_contracts() {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    for rules in [6, 24] {
        let bundle =
            frontend::compile(&benches::generate::contract(rules)).expect("a generated contract compiles");
        let contract = engine.load(bundle).expect("it loads");
        for (seed, items) in [(1, 0), (2, 1), (3, 10), (4, 100)] {
            let line = benches::generate::request(seed, items);
            let mut out = Vec::new();
            contract.evaluate_json(&line, &mut out);
            let text = String::from_utf8_lossy(&out);
            assert!(text.ends_with(r#""errors":[]}"#), "{rules} rules, {items} items: {text}\n{line}");
        }
    }
    let sizes: Vec<usize> =
        [0, 160].iter().map(|items| benches::generate::request(9, *items).len()).collect();
    assert!(sizes[0] < 400 && sizes[1] > 9_000, "payload sizes {sizes:?}");
}
