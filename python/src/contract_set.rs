//! `rulec.ContractSet`: the contracts of a folder (or one file), read,
//! compiled and loaded by the runtime's one loader as `rulec eval DIR`
//! loads them; a request routed by contract name as the CLI routes it
//! (the one it names, or the only one).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use runtime::contract_set::{self, LoadFailure, RouteError};

use crate::contract::Contract;
use crate::errors::{BundleError, UnknownContractError, compile_error, contained, input_error};
use crate::evaluate::{Envelope, evaluate};
use crate::output;
use crate::result::EvalResult;
use crate::sources::{diagnostics_json, path_of, rendered};
use crate::text::{argument, request_bytes};

/// The contracts and bundles under a folder (at any depth, names starting
/// with `.` skipped) or in one file, each name once, loaded into one
/// engine. Requests are routed by contract name.
#[pyclass(frozen, module = "rulec")]
#[derive(Debug)]
pub struct ContractSet {
    set: runtime::ContractSet,
    warnings: Vec<serde_json::Value>,
}

/// What compiling the set's YAML files said.
#[derive(Default)]
struct Compiled {
    warnings: Vec<serde_json::Value>,
    errors: Vec<serde_json::Value>,
}

#[pymethods]
impl ContractSet {
    /// Reads, compiles and loads every contract under `folder` (a folder,
    /// a contract or a bundle). Raises `CompileError` (every problem of
    /// every file) or `BundleError`, or `OSError` when it cannot be read.
    #[new]
    #[pyo3(signature = (folder, engine = "auto"))]
    fn new(py: Python<'_>, folder: &Bound<'_, PyAny>, engine: &str) -> PyResult<ContractSet> {
        let path = path_of(folder, "a ContractSet reads a folder or a file")?;
        let engine = crate::engine::engine(engine)?;
        let mut compiled = Compiled::default();
        let loaded =
            py.detach(|| contained(|| Ok::<_, PyErr>(read_and_load(&engine, path, &mut compiled))))?;
        match loaded {
            Ok(set) => Ok(ContractSet { set, warnings: compiled.warnings }),
            Err(LoadFailure::Io(message)) => Err(PyErr::from(std::io::Error::other(message))),
            Err(LoadFailure::Contracts(problems)) if !compiled.errors.is_empty() => {
                Err(compile_error(py, problems.join("\n"), output::json_list(py, &compiled.errors)?))
            }
            Err(LoadFailure::Contracts(problems)) => Err(BundleError::new_err(problems.join("\n"))),
        }
    }

    /// Evaluates one input against the contract named `contract` (may be
    /// left out when the set holds one). Raises `UnknownContractError` for
    /// a name the set does not hold, `InputError` for an input that does
    /// not fit.
    #[pyo3(signature = (input, contract = None, channel = None, *, component = None, now = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        contract: Option<&Bound<'_, PyString>>,
        channel: Option<&Bound<'_, PyString>>,
        component: Option<&Bound<'_, PyString>>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<EvalResult> {
        let contract = argument(contract, "contract")?;
        let channel = argument(channel, "channel")?;
        let component = argument(component, "component")?;
        let routed = match self.set.route(contract) {
            Ok(routed) => routed,
            Err(RouteError::Unknown { message }) => return Err(UnknownContractError::new_err(message)),
            Err(RouteError::Missing { message }) => {
                return Err(input_error(py, &runtime::InvalidInput::one("contract", message)));
            }
        };
        evaluate(py, routed, input, &Envelope { channel, component, now })
    }

    /// A request line (JSON, naming its contract when the set holds
    /// several) to the result line `rulec eval DIR` prints for it, an
    /// error line included.
    fn evaluate_line(&self, py: Python<'_>, line: &Bound<'_, PyString>) -> PyResult<String> {
        let line = request_bytes(line)?;
        let set = &self.set;
        py.detach(|| {
            contained(|| {
                let mut out = Vec::with_capacity(256);
                set.evaluate_line(&line, None, &mut out);
                Ok::<_, PyErr>(crate::text::written(out))
            })
        })
    }

    /// The contracts' names, sorted.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.set.names().map(str::to_string).collect()
    }

    /// The set's revision, named by its content (`sha256:...`), as `rulec
    /// serve` reports it.
    #[getter]
    fn revision(&self) -> String {
        self.set.revision()
    }

    /// The compiler's warnings for every YAML file: diagnostic dicts.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        output::json_list(py, &self.warnings)
    }

    /// The contract called `name` (a `Contract` sharing this set's state).
    fn __getitem__(&self, name: &str) -> PyResult<Contract> {
        match self.set.route(Some(name)) {
            Ok(inner) => Ok(Contract::new(Arc::clone(inner), Vec::new())),
            Err(e) => Err(PyKeyError::new_err(e.message().to_string())),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.set.get(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.set.len()
    }

    fn __repr__(&self) -> String {
        format!("<rulec.ContractSet {} contracts {}>", self.set.len(), self.set.revision())
    }
}

/// Reads and loads the set under `path` (the CLI's `targets::read` and
/// `load`), YAML compiled by the front end with its diagnostics kept.
fn read_and_load(
    engine: &runtime::Engine,
    path: PathBuf,
    compiled: &mut Compiled,
) -> Result<runtime::ContractSet, LoadFailure> {
    let mut compile = |path: &Path, text: &str| -> Result<ir::Bundle, String> {
        let result = frontend::compile_file(&path.display().to_string(), text);
        let diagnostics = diagnostics_json(&result.diagnostics);
        match result.bundle {
            Some(bundle) => {
                compiled.warnings.extend(diagnostics);
                Ok(bundle)
            }
            None => {
                compiled.errors.extend(diagnostics);
                Err(rendered(&result.diagnostics))
            }
        }
    };
    let sources = contract_set::load::read(&[path], &mut compile)?;
    contract_set::load::load(engine, &sources)
}
