//! The engine a contract is loaded into, chosen by name as `rulec eval
//! --engine` chooses it: `interp` (the interpreter), `jit` (native code
//! from the Cranelift JIT, compiled at load) or `auto` (interpreted until
//! hot, then native); models are scored with tract, as in the CLI.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use runtime::{Engine, Jit};

/// The engine named `choice`; an unknown name is a `ValueError`.
pub fn engine(choice: &str) -> PyResult<Engine> {
    let jit = match choice {
        "interp" => Jit::Off,
        "jit" => Jit::On,
        "auto" => Jit::Auto,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown engine {other:?}: expected \"auto\", \"jit\" or \"interp\""
            )));
        }
    };
    Ok(Engine::builder()
        .jit(jit)
        .native(Arc::new(backend::Jit::new()))
        .models(Arc::new(models::Tract::new()))
        .build())
}
