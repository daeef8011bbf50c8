//! Command-line inputs: the contract files of the paths given (through
//! the runtime's one folder walker), and files read with errors that name
//! them.

use std::path::{Path, PathBuf};

use runtime::contract_set::walk::{self, FileKind};

use crate::Failure;

/// The contract files (`.yaml`, `.yml`) under `paths`, folders walked as
/// every command walks them (`runtime::contract_set::walk`).
pub fn contract_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let found = walk::find(paths, &[FileKind::Contract]).map_err(Failure::Usage)?;
    Ok(found.into_iter().map(|file| file.path).collect())
}

/// Whether `path` is named as a bundle (`.bundle.json`).
pub fn is_bundle(path: &Path) -> bool {
    FileKind::of(path) == Some(FileKind::Bundle)
}

/// Reads a whole file as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))
}

/// Reads a contract as text; a file that is not UTF-8 is reported.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        anstream::eprintln!(
            "{}: error: the file is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        );
        Failure::Reported
    })
}
