//! The package's exceptions and how the runtime's and the front end's
//! errors become them: `InputError` (the CLI's invalid-input message,
//! every detail with its path), `CompileError` (every diagnostic, the
//! rendered text as its `str`), `BundleError`, `UnknownContractError`,
//! all under `RulecError`; and [`contained`], which turns a panic inside
//! Rust into a `RulecError` instead of unwinding into Python.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use runtime::InvalidInput;

pyo3::create_exception!(rulec, RulecError, PyException, "The base of every error rulec raises.");
pyo3::create_exception!(
    rulec,
    InputError,
    RulecError,
    "An input that does not fit the contract: the message is `rulec eval`'s, each problem with its path \
     (`.details`: a list of {\"path\", \"message\"} dicts; `.json`: the error line the CLI prints; \
     `.record`: the index of the record in a list given to `evaluate_batch`, else None)."
);
pyo3::create_exception!(
    rulec,
    CompileError,
    RulecError,
    "A contract that does not compile: `str()` is the rustc-style text `rulec check` prints, \
     `.diagnostics` a list of dicts (code, severity, message, file, line, column, ...)."
);
pyo3::create_exception!(
    rulec,
    BundleError,
    RulecError,
    "A bundle that cannot be loaded: damaged, truncated, of another version, or needing what the engine lacks."
);
pyo3::create_exception!(
    rulec,
    UnknownContractError,
    RulecError,
    "A request names a contract the set does not hold (the message names the closest loaded one)."
);

/// `InputError` for `invalid`: its message, its details and its JSON line.
pub fn input_error(py: Python<'_>, invalid: &InvalidInput) -> PyErr {
    described(py, invalid, invalid.to_string(), None)
}

/// `InputError` for `invalid` in the record at `index` of a batch: the
/// message starts `record N: `, and `.record` is `index`.
pub fn record_error(py: Python<'_>, invalid: &InvalidInput, index: usize) -> PyErr {
    described(py, invalid, format!("record {index}: {invalid}"), Some(index))
}

/// `InputError` with `message`, `invalid`'s details and JSON line, and
/// the index of the record in a batch (`None` for one input) attached.
fn described(py: Python<'_>, invalid: &InvalidInput, message: String, record: Option<usize>) -> PyErr {
    let err = InputError::new_err(message);
    let attached = (|| -> PyResult<()> {
        let details = PyList::empty(py);
        for detail in &invalid.details {
            let entry = PyDict::new(py);
            entry.set_item("path", &detail.path)?;
            entry.set_item("message", &detail.message)?;
            details.append(entry)?;
        }
        let value = err.value(py);
        value.setattr("details", details)?;
        value.setattr("record", record)?;
        value.setattr("json", String::from_utf8_lossy(&invalid.to_json()).into_owned())
    })();
    attached.err().unwrap_or(err)
}

/// `CompileError` with `text` as its message and `diagnostics` (already
/// Python objects) attached.
pub fn compile_error(py: Python<'_>, text: String, diagnostics: Bound<'_, PyList>) -> PyErr {
    let err = CompileError::new_err(text);
    match err.value(py).setattr("diagnostics", diagnostics) {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// Runs `work`, turning a panic into a `RulecError` that says it is a
/// bug: nothing unwinds across the boundary into the interpreter.
pub fn contained<T, E: From<PyErr>>(work: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(RulecError::new_err(format!("internal error in rulec (please report it): {why}")).into())
        }
    }
}

/// Registers the exceptions in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RulecError", py.get_type::<RulecError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("BundleError", py.get_type::<BundleError>())?;
    m.add("UnknownContractError", py.get_type::<UnknownContractError>())?;
    Ok(())
}
