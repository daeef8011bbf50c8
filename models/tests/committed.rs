//! The committed model files are the bytes `models::testing::committed`
//! builds (`cargo xtask write-models` writes them), so a model a case or
//! an example scores is always the one its comments describe.

use std::path::Path;

#[test]
fn committed_model_files_are_what_the_builders_make() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    for (path, bytes) in models::testing::committed() {
        let on_disk = std::fs::read(root.join(path))
            .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask write-models`)"));
        assert!(
            on_disk == bytes,
            "{path} differs from what it is built from: run `cargo xtask write-models`"
        );
    }
}
