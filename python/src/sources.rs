//! Where contracts come from: a path (a `str` or an `os.PathLike`, never
//! guessed from the text), files read with their path in the error, and
//! what a compile error says: diagnostics in their JSON form (`rulec
//! check --format json`'s objects) and as text, which quotes the source
//! only when it is a contract.

use std::path::{Path, PathBuf};

use ir::quote::short;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

/// The path `value` names: a `str` or an `os.PathLike` (read as `open`
/// reads it). `bytes` is refused: to the functions that take a path it
/// is a contract's or a bundle's content, which has its own entry.
pub fn path_of(value: &Bound<'_, PyAny>, content: &str) -> PyResult<PathBuf> {
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err(PyTypeError::new_err(format!(
            "expected a path (a str or an os.PathLike), got bytes: {content}"
        )));
    }
    value.extract::<PathBuf>()
}

/// A contract file's text; `OSError` (its subclass for the kind) naming
/// the path, with a hint when the "path" is a contract's text.
pub fn read_text(path: &Path) -> PyResult<String> {
    std::fs::read_to_string(path).map_err(|e| {
        let hint = if path.as_os_str().as_encoded_bytes().contains(&b'\n') {
            " (this looks like a contract's text: compile it with rulec.compile_text)"
        } else {
            ""
        };
        cannot_read(path, e, hint)
    })
}

/// A file's bytes; `OSError` naming the path.
pub fn read_bytes(path: &Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| cannot_read(path, e, ""))
}

fn cannot_read(path: &Path, e: std::io::Error, hint: &str) -> PyErr {
    let path = path.display().to_string();
    PyErr::from(std::io::Error::new(e.kind(), format!("cannot read {}: {e}{hint}", short(&path))))
}

/// Every diagnostic of a file as its JSON object.
pub fn diagnostics_json(diagnostics: &frontend::Diagnostics) -> Vec<serde_json::Value> {
    diagnostics.items.iter().map(|d| d.to_json(&diagnostics.file)).collect()
}

/// The text of a `CompileError`: what `rulec check` prints, except for a
/// source that is not a contract (not YAML, or not a mapping with a
/// `contract` key at its top: `/etc/passwd`), whose lines are not quoted:
/// each diagnostic's first line (file, line, column, code, message).
pub fn rendered(diagnostics: &frontend::Diagnostics) -> String {
    if is_a_contract(&diagnostics.file) {
        return diagnostics.render(false).trim_end().to_string();
    }
    let file = &diagnostics.file;
    let headers: Vec<String> = diagnostics
        .items
        .iter()
        .filter_map(|d| d.render(file, false).lines().next().map(str::to_string))
        .collect();
    headers.join("\n")
}

/// Whether `file` reads as a contract: a YAML mapping whose keys include
/// `contract`, or, when it is not YAML (a contract with a syntax error),
/// a line that starts `contract:`. A file past the size limit is not read.
fn is_a_contract(file: &frontend::SourceFile) -> bool {
    if file.text().len() > frontend::MAX_FILE_BYTES {
        return false;
    }
    let (root, _) = frontend::syntax::yaml::parse(file);
    match root.as_ref().and_then(|root| root.as_map()) {
        Some(keys) => keys.iter().any(|(key, _)| key.text() == Some("contract")),
        None if root.is_some() => false,
        None => file.text().lines().any(|line| line.starts_with("contract:")),
    }
}
