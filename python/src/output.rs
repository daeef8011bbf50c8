//! Values going back to Python: an effect's value ([`owned`]: decimals as
//! `decimal.Decimal` from their exact text, timestamps as UTC
//! `datetime`s, durations as `timedelta`s, records as dicts in
//! declaration order) and JSON documents ([`json`]: the diagnostics'
//! form).

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use runtime::Owned;

use crate::pytypes;

/// `value` as a Python object.
pub fn owned(py: Python<'_>, value: &Owned) -> PyResult<Py<PyAny>> {
    match value {
        Owned::Bool(b) => b.into_py_any(py),
        Owned::Int(i) => i.into_py_any(py),
        Owned::Float(f) => f.into_py_any(py),
        Owned::String(s) => s.into_py_any(py),
        Owned::Decimal(d) => {
            let mut text = String::new();
            runtime::value::write_decimal(*d, &mut text);
            Ok(pytypes::decimal(py)?.call1((text,))?.unbind())
        }
        Owned::Timestamp(nanos) => {
            let delta = micros_delta(py, *nanos)?;
            Ok(pytypes::epoch(py)?.add(delta)?.unbind())
        }
        Owned::Duration(nanos) => Ok(micros_delta(py, *nanos)?.unbind()),
        Owned::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(owned(py, item)?)?;
            }
            Ok(list.into_any().unbind())
        }
        Owned::Record(fields) => {
            let dict = PyDict::new(py);
            for (name, field) in fields {
                dict.set_item(name, owned(py, field)?)?;
            }
            Ok(dict.into_any().unbind())
        }
    }
}

/// `timedelta(microseconds=...)` of `nanos` (sub-microsecond digits
/// dropped, rounding toward negative infinity).
fn micros_delta(py: Python<'_>, nanos: i64) -> PyResult<Bound<'_, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("microseconds", nanos.div_euclid(1000))?;
    pytypes::timedelta(py)?.call((), Some(&kwargs))
}

/// A JSON document as Python objects (dicts, lists, str, int, float,
/// bool, None).
pub fn json(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_py_any(py),
            (None, Some(u)) => u.into_py_any(py),
            _ => n.as_f64().unwrap_or(f64::NAN).into_py_any(py),
        },
        Value::String(s) => s.into_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json(py, item)?)?;
            }
            Ok(list.into_any().unbind())
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (name, field) in fields {
                dict.set_item(name, json(py, field)?)?;
            }
            Ok(dict.into_any().unbind())
        }
    }
}

/// A list of JSON documents as a Python list.
pub fn json_list<'py>(py: Python<'py>, values: &[serde_json::Value]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for value in values {
        list.append(json(py, value)?)?;
    }
    Ok(list)
}
