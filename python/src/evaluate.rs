//! One evaluation from Python: the input written as JSON with the GIL
//! held ([`crate::input`]), then, with the GIL released, the context
//! resolved, the input validated and the request evaluated by the
//! runtime, as `rulec eval` does for the request `{"channel": ...,
//! "component": ..., "now": ..., "input": ...}`. A panic is contained.

use std::sync::Arc;

use pyo3::prelude::*;
use runtime::input::request::Input;
use runtime::{EvaluateError, InvalidInput, Request};

use crate::errors::{RulecError, contained, input_error};
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
