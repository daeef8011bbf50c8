//! Fixture tests: every contract in `fixtures/ok/` compiles, verifies and
//! round-trips through a bundle file, and its IR text is snapshotted;
//! every contract in `fixtures/err/` is refused (no bundle, at least one
//! error), every one in `fixtures/warn/` compiles with at least one
//! warning; their rendered diagnostics are snapshotted, each located in
//! the file. An err or warn fixture is named `<CODE>_<what>.yaml` after
//! its first diagnostic's code. Every error code has an err fixture,
//! every warning code a warn fixture.

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
    let compiled = frontend::compile_in(path.parent().unwrap(), &name, &text);
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
        let again =
            frontend::compile_in(path.parent().unwrap(), "again", &std::fs::read_to_string(path).unwrap());
        assert_eq!(again.bundle.unwrap().to_json(), bytes, "compiling twice gives the same bytes");
        insta::assert_snapshot!(shown);
    });
}

#[test]
fn err_fixtures_are_refused_with_located_diagnostics() {
    insta::glob!("fixtures/err/*.yaml", |path| {
        let (shown, compiled) = check(path);
        assert!(compiled.bundle.is_none(), "{} compiled:\n{shown}", path.display());
        assert!(compiled.diagnostics.has_errors(), "{} reports no error:\n{shown}", path.display());
        assert_located_and_named(path, &compiled.diagnostics);
        insta::assert_snapshot!(shown);
    });
}

#[test]
fn warn_fixtures_compile_with_located_warnings() {
    insta::glob!("fixtures/warn/*.yaml", |path| {
        let (shown, compiled) = check(path);
        assert!(compiled.bundle.is_some(), "{} did not compile:\n{shown}", path.display());
        let diagnostics = &compiled.diagnostics;
        assert!(!diagnostics.has_errors(), "{} reports an error:\n{shown}", path.display());
        assert!(!diagnostics.items.is_empty(), "{} reports no warning", path.display());
        assert_located_and_named(path, diagnostics);
        insta::assert_snapshot!(diagnostics.render(false));
    });
}

/// Every diagnostic points into the file (a primary label whose span lies
/// within the text, on character boundaries), and the fixture's name
/// starts with the code of its first diagnostic, `E0400_unknown_name.yaml`,
/// so a fixture cannot drift from its name.
fn assert_located_and_named(path: &Path, diagnostics: &frontend::Diagnostics) {
    for d in &diagnostics.items {
        assert!(!d.labels.is_empty(), "{}: {} has no label", path.display(), d.code.id());
        for label in &d.labels {
            assert_eq!(
                diagnostics.file.clamp(label.span),
                label.span,
                "{}: a label of {} is outside the file",
                path.display(),
                d.code.id()
            );
        }
    }
    let name = path.file_name().unwrap().to_str().unwrap();
    let (prefix, _) = name.split_once('_').unwrap_or_else(|| panic!("{name} has no `CODE_` prefix"));
    assert_eq!(prefix, diagnostics.items[0].code.id(), "{name} is not named after its first code");
}

/// Codes that no fixture can produce: an internal error is a bug by
/// definition, a 64 MiB fixture is tested in `limits.rs` instead, and a
/// bundle over 256 MiB in `frontend/src/lib.rs` with a small limit.
const NOT_FROM_FIXTURES: [&str; 3] = ["E0900", "E0008", "E0009"];

/// Every error code is reported by a fixture of `err/`, every warning
/// code by one of `warn/`.
#[test]
fn every_code_has_a_fixture() {
    let codes_in = |folder: &str| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder);
        let mut seen = BTreeSet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // The fixtures' model files live in a folder beside them.
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let (_, compiled) = check(&path);
            seen.extend(compiled.diagnostics.items.iter().map(|d| d.code.id()));
        }
        seen
    };
    let (errors, warnings) = (codes_in("err"), codes_in("warn"));
    let missing: Vec<&str> = frontend::codes::ALL
        .iter()
        .map(|c| c.id)
        .filter(|id| {
            let seen = if id.starts_with('W') { &warnings } else { &errors };
            !seen.contains(id) && !NOT_FROM_FIXTURES.contains(id)
        })
        .collect();
    assert!(missing.is_empty(), "codes without a fixture (errors in err/, warnings in warn/): {missing:?}");
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
