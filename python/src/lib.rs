//! `rulec`'s Python package, the extension module `rulec._rulec`: a thin
//! PyO3 layer over the crates that do the work (the front end compiles,
//! the runtime validates and evaluates, the backend's JIT makes native
//! code, tract scores models). It re-implements no semantics: inputs are
//! validated by the runtime's one validator, results written by its one
//! writer, contracts loaded and routed by its one loader (docs/PYTHON.md).
//!
//! - [`contract`]: `Contract`, `compile`, `compile_text`, `load_bundle`;
//! - [`contract_set`]: `ContractSet`, routing by name;
//! - [`evaluate`]: one evaluation, the GIL released; [`arrow_batch`]:
//!   `evaluate_batch`, Arrow data through the batch crate's column path,
//!   streamed; [`arrow_source`]: another library's Arrow data, checked
//!   before it is read;
//! - [`input`]: a Python input to the request's JSON text;
//! - [`result`], [`output`]: `Result`, values back to Python;
//! - [`errors`]: the exceptions, panics contained;
//! - [`engine`], [`sources`], [`pytypes`], [`text`]: the engine by name,
//!   paths and files, the Python classes used, a `str`'s text borrowed.

mod arrow_batch;
mod arrow_source;
mod contract;
mod contract_set;
mod engine;
mod errors;
mod evaluate;
mod input;
mod output;
mod pytypes;
mod result;
mod sources;
mod text;

use pyo3::prelude::*;

/// The extension module: classes, functions, exceptions.
#[pymodule]
fn _rulec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<contract::Contract>()?;
    m.add_class::<contract_set::ContractSet>()?;
    m.add_class::<result::EvalResult>()?;
    m.add_function(wrap_pyfunction!(contract::compile, m)?)?;
    m.add_function(wrap_pyfunction!(contract::compile_text, m)?)?;
    m.add_function(wrap_pyfunction!(contract::load_bundle, m)?)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
