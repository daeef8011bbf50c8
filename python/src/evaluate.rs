//! One evaluation from Python: the input written as JSON with the GIL
//! held ([`crate::input`]), then, with the GIL released, the context
//! resolved, the input validated and the request evaluated by the
//! runtime, as `rulec eval` does for the request `{"channel": ...,
//! "component": ..., "now": ..., "input": ...}`; or a list of inputs,
//! every one validated before any is evaluated. A panic is contained.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use runtime::input::request::Input;
use runtime::{EvaluateError, InvalidInput, Request};

use crate::errors::{RulecError, contained, input_error, record_error};
use crate::input::{Unwritable, input_json, timestamp_text};
use crate::result::EvalResult;

/// A request's envelope besides its input.
#[derive(Debug, Default)]
pub struct Envelope<'a> {
    pub channel: Option<&'a str>,
    pub component: Option<&'a str>,
    pub now: Option<&'a Bound<'a, PyAny>>,
}

/// Why an evaluation gave no result.
enum Refusal {
    Invalid(InvalidInput),
    Failed(EvaluateError),
}

/// Why a list of inputs gave no results: the record at an index does not
/// fit, or evaluating one failed.
enum BatchRefusal {
    Invalid(usize, InvalidInput),
    Failed(EvaluateError),
}

/// Evaluates `input` against `contract`.
pub fn evaluate(
    py: Python<'_>,
    contract: &Arc<runtime::Contract>,
    input: &Bound<'_, PyAny>,
    envelope: &Envelope<'_>,
) -> PyResult<EvalResult> {
    let written = contained(|| {
        let text = input_json(input)?;
        let now = envelope.now.map(|now| timestamp_text(now, "now")).transpose()?;
        Ok::<_, Unwritable>((text, now))
    });
    let (text, now) = match written {
        Ok(written) => written,
        Err(Unwritable::Invalid(invalid)) => return Err(input_error(py, &invalid)),
        Err(Unwritable::Python(err)) => return Err(err),
    };
    let (channel, component) = (envelope.channel, envelope.component);
    let evaluated =
        py.detach(|| contained(|| Ok::<_, PyErr>(run(contract, &text, channel, component, now.as_deref()))))?;
    match evaluated {
        Ok(result) => Ok(result),
        Err(Refusal::Invalid(invalid)) => Err(input_error(py, &invalid)),
        Err(Refusal::Failed(failed)) => Err(RulecError::new_err(failed.to_string())),
    }
}

/// The runtime's part, without the GIL: the request validated, then
/// evaluated.
fn run(
    contract: &runtime::Contract,
    text: &str,
    channel: Option<&str>,
    component: Option<&str>,
    now: Option<&str>,
) -> Result<EvalResult, Refusal> {
    let context = contract.context(channel, component, now).map_err(Refusal::Invalid)?;
    let input = Input::parse(contract.program(), text).map_err(Refusal::Invalid)?;
    let request = Request::new(contract, context, input);
    let evaluation = contract.evaluate(&request).map_err(Refusal::Failed)?;
    Ok(EvalResult::new(&evaluation))
}

/// Evaluates `records` (a list of input dicts) on `channel`, in order
/// (windows see them so). Every record is written and validated first: a
/// record that does not fit raises `InputError` naming its index before
/// any is evaluated, so the windows are untouched by a refused batch.
pub fn evaluate_records(
    py: Python<'_>,
    contract: &Arc<runtime::Contract>,
    records: &Bound<'_, PyList>,
    channel: Option<&str>,
) -> PyResult<Vec<EvalResult>> {
    // The channel is checked before the records (an empty list on an
    // unknown channel is refused too).
    contract.context(channel, None, None).map_err(|invalid| input_error(py, &invalid))?;
    let length = records.len();
    let mut texts = Vec::with_capacity(length);
    for (index, record) in records.iter().enumerate() {
        match contained(|| input_json(&record)) {
            Ok(text) => texts.push(text),
            Err(Unwritable::Invalid(invalid)) => return Err(record_error(py, &invalid, index)),
            Err(Unwritable::Python(err)) => return Err(err),
        }
    }
    if texts.len() != length || records.len() != length {
        let changed = "the list changed while it was read (a value's method added or removed items)";
        return Err(input_error(py, &InvalidInput::one("records", changed)));
    }
    let evaluated = py.detach(|| contained(|| Ok::<_, PyErr>(run_all(contract, &texts, channel))))?;
    match evaluated {
        Ok(results) => Ok(results),
        Err(BatchRefusal::Invalid(index, invalid)) => Err(record_error(py, &invalid, index)),
        Err(BatchRefusal::Failed(failed)) => Err(RulecError::new_err(failed.to_string())),
    }
}

/// The runtime's part of a list, without the GIL: every request
/// validated, then every one evaluated.
fn run_all(
    contract: &runtime::Contract,
    texts: &[String],
    channel: Option<&str>,
) -> Result<Vec<EvalResult>, BatchRefusal> {
    let mut requests = Vec::with_capacity(texts.len());
    for (index, text) in texts.iter().enumerate() {
        let request = contract.request_from_input(text, channel);
        requests.push(request.map_err(|invalid| BatchRefusal::Invalid(index, invalid))?);
    }
    let evaluate = |request: &Request<'_>| contract.evaluate(request).map_err(BatchRefusal::Failed);
    requests.iter().map(|request| evaluate(request).map(|evaluation| EvalResult::new(&evaluation))).collect()
}
