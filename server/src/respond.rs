//! Responses every handler builds: JSON, NDJSON and text bodies, the
//! answer to a body that could not be read, and the 503 of an evaluation
//! that gave no answer.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use crate::app::NoAnswer;
use crate::body::BodyError;
use crate::evaluate::error_json;

/// A response body: whole, or streamed (NDJSON).
pub type Body = BoxBody<Bytes, Infallible>;

/// The answer to a body that could not be read: 408, 413 or 400. The
/// connection closes after it, since the rest of the body is not read.
pub(crate) fn body_error(failure: &BodyError) -> Response<Body> {
    let mut response = json(failure.status(), failure.to_json());
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The 503 of an evaluation that gave no answer: the queue was full or
/// it did not finish in time; retry after a second.
pub(crate) fn unavailable(why: NoAnswer) -> Response<Body> {
    let (kind, message) = match why {
        NoAnswer::Full => ("overloaded", "the evaluation queue is full: retry shortly"),
        NoAnswer::TimedOut => ("timeout", "the evaluation did not finish in time"),
    };
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, error_json(kind, message));
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

pub(crate) fn json(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn ndjson(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    response
}

pub(crate) fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
