//! Where contracts come from: an argument that is a path (an
//! `os.PathLike`, or a `str` without a newline) or the text itself, files
//! read with their path in the error, and diagnostics in their JSON form
//! (`rulec check --format json`'s objects).

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The path `value` names: an `os.PathLike`, or a `str` without a newline
/// (a `str` with one is a contract's text: `None`).
pub fn source_path(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_cow()?;
        return Ok((!text.contains('\n')).then(|| text.to_string()));
    }
    let os = value.py().import("os")?;
    let path = os.call_method1("fspath", (value,))?;
    Ok(Some(path.cast::<PyString>()?.to_cow()?.to_string()))
}

/// A file's text; `OSError` (its subclass for the kind) naming the path.
pub fn read_text(path: &str) -> PyResult<String> {
    std::fs::read_to_string(path).map_err(|e| cannot_read(path, e))
}

/// A file's bytes; `OSError` naming the path.
pub fn read_bytes(path: &str) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| cannot_read(path, e))
}

fn cannot_read(path: &str, e: std::io::Error) -> PyErr {
    PyErr::from(std::io::Error::new(e.kind(), format!("cannot read {path}: {e}")))
}

/// Every diagnostic of a file as its JSON object.
pub fn diagnostics_json(diagnostics: &frontend::Diagnostics) -> Vec<serde_json::Value> {
    diagnostics.items.iter().map(|d| d.to_json(&diagnostics.file)).collect()
}
