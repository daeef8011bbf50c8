//! `rulec schema`: its output is `docs/contract.schema.json` byte for byte,
//! and a real validator (Python's `jsonschema`, reading YAML as 1.2 does)
//! accepts every example, conformance and fixture contract and flags each
//! broken one in `tests/schema/broken/` where its first line says.

mod support;

use support::{python_can_import, root, rulec};

#[test]
fn the_docs_copy_is_the_output() {
    let out = rulec().arg("schema").output().expect("rulec runs");
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    let copy = std::fs::read_to_string(root().join("docs/contract.schema.json")).unwrap();
    assert!(
        printed == copy,
        "docs/contract.schema.json is not `rulec schema`'s output: run `rulec schema > docs/contract.schema.json`"
    );
}

#[test]
fn contracts_validate_and_broken_ones_are_flagged() {
    if !python_can_import("jsonschema, yaml") {
        return;
    }
    let out = std::process::Command::new("python3")
        .args(["cli/tests/schema/check.py", "docs/contract.schema.json", "."])
        .current_dir(root())
        .output()
        .expect("python3 runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}{}", String::from_utf8_lossy(&out.stderr));
    assert!(shown.contains("broken ones flagged, 0 failures"), "{shown}");
}
