//! The Python classes the conversions test for and build, imported once
//! per interpreter: `decimal.Decimal`, `datetime.datetime`,
//! `datetime.date`, `datetime.timedelta`, `datetime.timezone.utc`, and the
//! Unix epoch in UTC.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UTC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

pub fn decimal(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DECIMAL.import(py, "decimal", "Decimal")
}

pub fn datetime(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATETIME.import(py, "datetime", "datetime")
}

pub fn date(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATE.import(py, "datetime", "date")
}

pub fn timedelta(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TIMEDELTA.import(py, "datetime", "timedelta")
}

/// `datetime.timezone.utc`.
pub fn utc(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    let utc = UTC.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("datetime")?.getattr("timezone")?.getattr("utc")?.unbind())
    })?;
    Ok(utc.bind(py))
}

/// `datetime(1970, 1, 1, tzinfo=timezone.utc)`.
pub fn epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    let epoch = EPOCH.get_or_try_init(py, || {
        let utc = utc(py)?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("tzinfo", utc)?;
        Ok::<_, PyErr>(datetime(py)?.call((1970, 1, 1), Some(&kwargs))?.unbind())
    })?;
    Ok(epoch.bind(py))
}
