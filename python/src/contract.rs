//! `rulec.Contract` (one loaded contract: evaluate inputs, its windows'
//! state kept across calls) and the functions that make one:
//! `rulec.compile` (a YAML file's path) and `rulec.compile_text` (the YAML
//! itself), compiled by the front end as `rulec check` compiles it, and
//! `rulec.load_bundle` (a bundle's bytes or its path, told apart by type),
//! decoded and verified by `ir`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};
use runtime::engine::NativeStatus;

use crate::errors::{BundleError, compile_error, contained};
use crate::evaluate::{Envelope, evaluate};
use crate::output;
use crate::result::EvalResult;
use crate::sources::{diagnostics_json, path_of, read_bytes, read_text, rendered};
use crate::text::{argument, request_bytes};

/// A compiled contract, loaded into an engine. Thread-safe: share one
/// across threads; evaluation releases the GIL. Its windows keep their
/// state for as long as the object lives, across calls.
#[pyclass(frozen, module = "rulec")]
#[derive(Debug)]
pub struct Contract {
    pub(crate) inner: Arc<runtime::Contract>,
    /// The set of this one contract, which routes `evaluate_json`'s
    /// requests as `rulec eval CONTRACT` does; made once, at load.
    alone: runtime::ContractSet,
    /// The compiler's warnings, as diagnostic dicts' JSON.
    pub(crate) warnings: Vec<serde_json::Value>,
}

impl Contract {
    pub(crate) fn new(inner: Arc<runtime::Contract>, warnings: Vec<serde_json::Value>) -> Contract {
        let alone = runtime::ContractSet::new(vec![Arc::clone(&inner)]).expect("one contract is a set");
        Contract { inner, alone, warnings }
    }
}

#[pymethods]
impl Contract {
    /// The contract's name (`acme.payments.transfer`).
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The contract's version.
    #[getter]
    fn version(&self) -> &str {
        self.inner.version()
    }

    /// The bundle's content hash (`sha256:...`).
    #[getter]
    fn hash(&self) -> &str {
        self.inner.hash()
    }

    /// What runs it now: `"interpreted"`, `"compiling"`, `"native"`, or
    /// `"failed: <why>"` (native code failed; the interpreter runs it).
    #[getter]
    fn engine(&self) -> String {
        match self.inner.native_status() {
            NativeStatus::Interpreted => "interpreted".into(),
            NativeStatus::Compiling => "compiling".into(),
            NativeStatus::Native => "native".into(),
            NativeStatus::Failed(why) => format!("failed: {why}"),
        }
    }

    /// The compiler's warnings: diagnostic dicts (code, severity,
    /// message, file, line, column, ...), empty for a bundle.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        output::json_list(py, &self.warnings)
    }

    /// Evaluates one input (a dict) on `channel`; `component` and `now`
    /// (a str or a timezone-aware datetime) as a request's. Raises
    /// `InputError` when the input does not fit the contract.
    #[pyo3(signature = (input, channel = None, *, component = None, now = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        channel: Option<&Bound<'_, PyString>>,
        component: Option<&Bound<'_, PyString>>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<EvalResult> {
        let channel = argument(channel, "channel")?;
        let component = argument(component, "component")?;
        evaluate(py, &self.inner, input, &Envelope { channel, component, now })
    }

    /// Evaluates every record of `data`, Arrow data through the PyCapsule
    /// interface (a pyarrow Table, RecordBatch or RecordBatchReader, a
    /// polars DataFrame, a DuckDB result), on `channel`, keeping the parts
    /// `fields` names (`"decision,effects"` or a list; all by default):
    /// a `pyarrow.Table` with the columns of `rulec eval --output-format
    /// arrow`, one row per record, in order. Runs on every core without
    /// the GIL; windows see the records in order.
    ///
    /// `data` may also be a list of input dicts (for small batches): the
    /// results are then a list of dicts (`Result.to_dict()`'s, with the
    /// parts `fields` names), every record validated before any is
    /// evaluated (`InputError` names the record's index).
    #[pyo3(signature = (data, channel = None, fields = None))]
    fn evaluate_batch<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        channel: Option<&Bound<'py, PyString>>,
        fields: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let channel = argument(channel, "channel")?;
        let parts = crate::arrow_batch::parts(fields)?;
        let Ok(records) = data.cast::<PyList>() else {
            return crate::arrow_batch::evaluate_batch(py, &self.inner, data, channel, parts);
        };
        let results = crate::evaluate::evaluate_records(py, &self.inner, records, channel)?;
        let dicts = PyList::empty(py);
        for result in &results {
            dicts.append(result.dict(py, parts)?)?;
        }
        Ok(dicts.into_any())
    }

    /// A request's JSON text (LANGUAGE.md's request: `input`, `channel`,
    /// ...) to the result line `rulec eval` prints for it, an error line
    /// included: routed as `rulec eval CONTRACT` routes it, in a set of
    /// this one contract (a request naming another is `unknown_contract`).
    fn evaluate_json(&self, py: Python<'_>, request: &Bound<'_, PyString>) -> PyResult<String> {
        let request = request_bytes(request)?;
        py.detach(|| {
            contained(|| {
                let mut out = Vec::with_capacity(256);
                self.alone.evaluate_line(&request, None, &mut out);
                Ok::<_, PyErr>(crate::text::written(out))
            })
        })
    }

    /// The contract's bundle, the bytes `rulec compile` writes (for
    /// `load_bundle`, here or in any rulec runtime).
    fn to_bundle<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let ir = self.inner.ir().clone();
        let bundle = py.detach(|| contained(|| Ok::<_, PyErr>(ir::Bundle::new(ir))))?;
        let bytes = bundle.map_err(|e| BundleError::new_err(e.to_string()))?.to_json();
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        format!("<rulec.Contract {} {}>", self.inner.name(), self.inner.version())
    }
}

/// Compiles the contract in the YAML file at `path` (a `str` or an
/// `os.PathLike`), as `rulec check` compiles it. Raises `CompileError`
/// with every diagnostic when it does not compile, `OSError` when the file
/// cannot be read.
#[pyfunction]
#[pyo3(signature = (path, engine = "auto"))]
pub fn compile(py: Python<'_>, path: &Bound<'_, PyAny>, engine: &str) -> PyResult<Contract> {
    let path = path_of(path, "give a contract's text to rulec.compile_text")?;
    let text = read_text(&path)?;
    compiled(py, &path.display().to_string(), &text, engine)
}

/// Compiles the contract whose YAML is `text` (diagnostics name it
/// `<contract>`).
#[pyfunction]
#[pyo3(signature = (text, engine = "auto"))]
pub fn compile_text(py: Python<'_>, text: &Bound<'_, PyString>, engine: &str) -> PyResult<Contract> {
    let text = text.to_cow()?;
    compiled(py, "<contract>", &text, engine)
}

/// The contract `text` (named `name`) compiles to, loaded into `engine`.
fn compiled(py: Python<'_>, name: &str, text: &str, engine: &str) -> PyResult<Contract> {
    let engine = crate::engine::engine(engine)?;
    let compiled = py.detach(|| contained(|| Ok::<_, PyErr>(frontend::compile_file(name, text))))?;
    let diagnostics = diagnostics_json(&compiled.diagnostics);
    let Some(bundle) = compiled.bundle else {
        return Err(compile_error(py, rendered(&compiled.diagnostics), output::json_list(py, &diagnostics)?));
    };
    let inner = load(py, &engine, bundle, "")?;
    Ok(Contract::new(inner, diagnostics))
}

/// Loads a bundle (`rulec compile`'s output): `path_or_bytes` is its
/// bytes (`bytes`, `bytearray`), or its path (a `str` or an
/// `os.PathLike`): the type says which. Raises `BundleError` when it is
/// damaged, truncated or of another format version.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, engine = "auto"))]
pub fn load_bundle(py: Python<'_>, path_or_bytes: &Bound<'_, PyAny>, engine: &str) -> PyResult<Contract> {
    let (bytes, at) = if let Ok(bytes) = path_or_bytes.cast::<PyBytes>() {
        (bytes.as_bytes().to_vec(), String::new())
    } else if let Ok(bytes) = path_or_bytes.cast::<PyByteArray>() {
        (bytes.to_vec(), String::new())
    } else {
        let path = path_or_bytes.extract::<std::path::PathBuf>()?;
        (read_bytes(&path)?, format!("{}: ", path.display()))
    };
    let engine = crate::engine::engine(engine)?;
    let bundle = py
        .detach(|| contained(|| Ok::<_, PyErr>(ir::Bundle::from_json(&bytes))))?
        .map_err(|e| BundleError::new_err(format!("{at}{e}")))?;
    let inner = load(py, &engine, bundle, &at)?;
    Ok(Contract::new(inner, Vec::new()))
}

/// Loads `bundle` into `engine` (native code compiled now under
/// `engine="jit"`), without the GIL.
fn load(
    py: Python<'_>,
    engine: &runtime::Engine,
    bundle: ir::Bundle,
    at: &str,
) -> PyResult<Arc<runtime::Contract>> {
    py.detach(|| contained(|| Ok::<_, PyErr>(engine.load(bundle))))?
        .map_err(|e| BundleError::new_err(format!("{at}{e}")))
}
