//! Fixture tests: every contract in `fixtures/ok/` compiles, verifies and
//! round-trips through a bundle file, and its IR text is snapshotted;
//! every contract in `fixtures/err/` is refused, and its rendered
//! diagnostics are snapshotted. Every diagnostic code has an err fixture.

use std::collections::BTreeSet;
use std::path::Path;

/// Compiles one fixture; the snapshot holds what a user would see.
fn check(path: &Path) -> (String, frontend::Compiled) {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let name = format!(
        "fixtures/{}/{}",
        path.parent().unwrap().file_name().unwrap().to_str().unwrap(),
        path.file_name().unwrap().to_str().unwrap()
    );
    let compiled = frontend::compile_file(&name, &text);
    let mut shown = compiled.diagnostics.render(false);
    if let Some(bundle) = &compiled.bundle {
        shown.push_str(&ir::print::print(bundle.contract()));
    }
    (shown, compiled)
}

#[test]
fn ok_fixtures_compile_and_round_trip() {
    insta::glob!("fixtures/ok/*.yaml", |path| {
        let (shown, compiled) = check(path);
        let bundle =
            compiled.bundle.unwrap_or_else(|| panic!("{} did not compile:\n{shown}", path.display()));
        assert!(!compiled.diagnostics.has_errors());
        let bytes = bundle.to_json();
        let loaded = ir::Bundle::from_json(&bytes).expect("the bundle loads");
        assert_eq!(
            ir::print::print(loaded.contract()),
            ir::print::print(bundle.contract()),
            "same IR after a round trip"
        );
        assert_eq!(loaded.to_json(), bytes, "same bytes after a round trip");
        let again = frontend::compile_file("again", &std::fs::read_to_string(path).unwrap());
        assert_eq!(again.bundle.unwrap().to_json(), bytes, "compiling twice gives the same bytes");
        insta::assert_snapshot!(shown);
    });
}

#[test]
fn err_fixtures_are_refused_with_located_diagnostics() {
    insta::glob!("fixtures/err/*.yaml", |path| {
        let (shown, compiled) = check(path);
        assert!(
            compiled.bundle.is_none() || !compiled.diagnostics.items.is_empty(),
            "{} should report something",
            path.display()
        );
        insta::assert_snapshot!(shown);
    });
}

/// Codes that no fixture can produce: an internal error is a bug by
/// definition, and a 64 MiB fixture is tested in `limits.rs` instead.
const NOT_FROM_FIXTURES: [&str; 2] = ["E0900", "E0008"];

#[test]
fn every_code_has_an_err_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/err");
    let mut seen = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let (_, compiled) = check(&path);
        seen.extend(compiled.diagnostics.items.iter().map(|d| d.code.id()));
    }
    let missing: Vec<&str> = frontend::codes::ALL
        .iter()
        .map(|c| c.id)
        .filter(|id| !seen.contains(id) && !NOT_FROM_FIXTURES.contains(id))
        .collect();
    assert!(missing.is_empty(), "codes without an err fixture: {missing:?}");
}

#[test]
fn docs_errors_md_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md");
    let expected = frontend::codes::errors_markdown();
    if std::env::var_os("RULEC_BLESS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/errors.md is stale: run `RULEC_BLESS=1 cargo test -p frontend --test fixtures`"
    );
}
