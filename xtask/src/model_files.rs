//! `cargo xtask write-models`: writes the model files the conformance
//! cases and examples score, from `models::testing::committed`.

use std::path::Path;
use std::process::ExitCode;

pub fn write() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    for (path, bytes) in models::testing::committed() {
        let file = root.join(path);
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&file, &bytes));
        if let Err(e) = written {
            eprintln!("xtask write-models: {path}: {e}");
            return ExitCode::FAILURE;
        }
        println!("{path}: {} bytes", bytes.len());
    }
    ExitCode::SUCCESS
}
