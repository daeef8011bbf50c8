//! The HTTP API: the route table (`ROUTES`: each path, its methods,
//! whether it needs the token), the `Host` check, the bearer token, and
//! each endpoint. Statuses follow INTERFACES.md: 400 for a malformed or
//! invalid request (the body says where) and for an HTTP/1.1 request
//! without exactly one valid `Host`, 401 without the right token, 404 for
//! an unknown contract or endpoint, 405 with `Allow` for a wrong method,
//! 408 for a body that arrives too slowly and 413 for one over
//! `--max-body` (see [`crate::body`]), 503 with `Retry-After` when the
//! queue is full or an evaluation timed out. Nothing a client sends makes
//! a 500.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode, Version};
use subtle::ConstantTimeEq;
use tokio::sync::{mpsc, oneshot};

use crate::body::{BodyError, BodyReader};
use crate::config::Config;
use crate::evaluate::{self, Answer, error_json};
use crate::metrics::{Metrics, Snapshot};
use crate::pool::{Pool, Refused};
use crate::rules::{RuleSet, Rules};

/// A response body: whole, or streamed (NDJSON).
pub type Body = BoxBody<Bytes, Infallible>;

/// The header naming the rule set revision that answered.
pub const REVISION_HEADER: &str = "x-rulec-revision";

/// NDJSON lines evaluated per job: enough to amortise the hand-off, few
/// enough that results stream.
const LINES_PER_JOB: usize = 64;

/// An endpoint of the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Health,
    Ready,
    Contracts,
    Metrics,
    Evaluations,
}

/// A path, the methods it takes (its `Allow`), and whether it needs the
/// token.
struct Route {
    path: &'static str,
    methods: &'static [&'static str],
    public: bool,
    endpoint: Endpoint,
}

/// Every route of the API: the one place that says which path takes
/// which methods.
const ROUTES: &[Route] = &[
    Route { path: "/healthz", methods: &["GET", "HEAD"], public: true, endpoint: Endpoint::Health },
    Route { path: "/readyz", methods: &["GET", "HEAD"], public: false, endpoint: Endpoint::Ready },
    Route { path: "/contracts", methods: &["GET", "HEAD"], public: false, endpoint: Endpoint::Contracts },
    Route { path: "/metrics", methods: &["GET", "HEAD"], public: false, endpoint: Endpoint::Metrics },
    Route { path: "/evaluations", methods: &["POST"], public: false, endpoint: Endpoint::Evaluations },
];

/// Everything a request handler needs.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub rules: Arc<Rules>,
    pub pool: Pool,
    pub metrics: Metrics,
    /// Set when shutdown begins: `/readyz` answers 503.
    pub draining: AtomicBool,
}

/// What the access log records about a request.
#[derive(Debug, Default)]
struct Logged {
    contract: Option<String>,
    revision: Option<u64>,
    decision: Option<&'static str>,
}

/// Handles one request, logging and counting it.
pub async fn handle(app: Arc<App>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let started = Instant::now();
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let mut logged = Logged::default();
    let response = route(&app, request, &mut logged).await;
    let latency = started.elapsed();
    let status = response.status().as_u16();
    app.metrics.request(status, latency);
    tracing::info!(
        target: "rulec::request",
        method = %method,
        path = %path,
        status,
        contract = logged.contract.as_deref().unwrap_or(""),
        revision = logged.revision.unwrap_or(0),
        decision = logged.decision.unwrap_or(""),
        latency_us = latency.as_micros() as u64,
    );
    Ok(response)
}

async fn route(app: &Arc<App>, request: Request<Incoming>, logged: &mut Logged) -> Response<Body> {
    if !names_its_host(&request) {
        return json(
            StatusCode::BAD_REQUEST,
            error_json("bad_host", "an HTTP/1.1 request needs exactly one valid `Host` header"),
        );
    }
    let path = request.uri().path();
    let route = ROUTES.iter().find(|route| route.path == path);
    if !route.is_some_and(|route| route.public) && !authorized(app, &request) {
        let mut response =
            json(StatusCode::UNAUTHORIZED, error_json("unauthorized", "a valid bearer token is required"));
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let Some(route) = route else {
        return json(StatusCode::NOT_FOUND, error_json("not_found", &format!("no endpoint `{path}`")));
    };
    if !route.methods.contains(&request.method().as_str()) {
        let allow = route.methods.join(", ");
        let mut response = json(
            StatusCode::METHOD_NOT_ALLOWED,
            error_json("method_not_allowed", &format!("`{path}` takes {allow}")),
        );
        if let Ok(allow) = HeaderValue::from_str(&allow) {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        return response;
    }
    match route.endpoint {
        Endpoint::Health => text(StatusCode::OK, "ok\n"),
        Endpoint::Evaluations => evaluations(app, request, logged).await,
        Endpoint::Contracts => contracts(app),
        Endpoint::Ready if app.draining.load(Ordering::Relaxed) => {
            text(StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        }
        Endpoint::Ready => text(StatusCode::OK, "ready\n"),
        Endpoint::Metrics => metrics(app),
    }
}

/// Whether the request names its host as RFC 9112 section 3.2 requires:
/// one `Host` line with a valid value (empty is valid), which HTTP/1.1
/// may not leave out and HTTP/1.0 may.
fn names_its_host(request: &Request<Incoming>) -> bool {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (None, _) => matches!(request.version(), Version::HTTP_09 | Version::HTTP_10),
        (Some(host), None) => {
            host.is_empty() || hyper::http::uri::Authority::try_from(host.as_bytes()).is_ok()
        }
        (Some(_), Some(_)) => false,
    }
}

/// Whether the request carries the bearer token (compared in constant
/// time), or no token is configured (`--no-auth`).
fn authorized(app: &App, request: &Request<Incoming>) -> bool {
    let Some(token) = &app.config.token else { return true };
    let Some(given) = request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes) else {
        return false;
    };
    let Some(given) = given.strip_prefix(b"Bearer ") else { return false };
    given.len() == token.len() && bool::from(given.ct_eq(token.as_bytes()))
}

/// `POST /evaluations`: JSON, or NDJSON streamed back.
async fn evaluations(app: &Arc<App>, request: Request<Incoming>, logged: &mut Logged) -> Response<Body> {
    let ndjson = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/x-ndjson"));
    let body = match body_reader(app, request) {
        Ok(body) => body.collect().await,
        Err(failure) => Err(failure),
    };
    let body = match body {
        Ok(body) => body,
        Err(failure) => return body_error(&failure),
    };
    let set = app.rules.current();
    logged.revision = Some(set.revision);
    let mut response = if ndjson {
        evaluate_lines(app, set.clone(), body).await
    } else {
        evaluate_one(app, set.clone(), body, logged).await
    };
    if let Ok(revision) = HeaderValue::from_str(&set.revision.to_string()) {
        response.headers_mut().insert(REVISION_HEADER, revision);
    }
    response
}

/// A reader of the request's body within the limit and the pace, or the
/// 413 when its announced length is over the limit already.
fn body_reader(app: &App, request: Request<Incoming>) -> Result<BodyReader, BodyError> {
    let limit = app.config.max_body;
    let announced =
        request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { limit });
    }
    Ok(BodyReader::new(request.into_body(), limit, app.config.body_pace))
}

/// The answer to a body that could not be read: 408, 413 or 400. The
/// connection closes after it, since the rest of the body is not read.
fn body_error(failure: &BodyError) -> Response<Body> {
    let mut response = json(failure.status(), failure.to_json());
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Why a job gave no answer.
enum NoAnswer {
    Full,
    TimedOut,
}

/// Runs `work` on the pool and waits for it, at most the evaluation
/// timeout (queueing included).
async fn on_pool<T: Send + 'static>(
    app: &App,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, NoAnswer> {
    let deadline = Instant::now() + app.config.evaluation_timeout;
    let (sender, receiver) = oneshot::channel();
    let job = move || {
        let _ = sender.send(work());
    };
    match app.pool.submit(deadline, job) {
        Ok(()) => {}
        Err(Refused::Full | Refused::Closed) => return Err(NoAnswer::Full),
    }
    match tokio::time::timeout_at(deadline.into(), receiver).await {
        Ok(Ok(value)) => Ok(value),
        // Dropped unrun (past its deadline) or timed out.
        Ok(Err(_)) | Err(_) => Err(NoAnswer::TimedOut),
    }
}

fn unavailable(why: NoAnswer) -> Response<Body> {
    let (kind, message) = match why {
        NoAnswer::Full => ("overloaded", "the evaluation queue is full: retry shortly"),
        NoAnswer::TimedOut => ("timeout", "the evaluation did not finish in time"),
    };
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, error_json(kind, message));
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

async fn evaluate_one(app: &Arc<App>, set: Arc<RuleSet>, body: Bytes, logged: &mut Logged) -> Response<Body> {
    match on_pool(app, move || evaluate::one(&set, &body)).await {
        Ok(Answer { status, body, contract, decision }) => {
            if let (Some(contract), Some(decision)) = (&contract, decision) {
                app.metrics.decision(contract, decision);
            }
            logged.contract = contract;
            logged.decision = decision;
            json(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), body)
        }
        Err(why) => unavailable(why),
    }
}

/// NDJSON: the lines are evaluated in order, a job at a time, and each
/// job's result lines are sent as soon as they are ready. The first job is
/// awaited before answering, so an overloaded server still says 503; once
/// streaming, a job that cannot run in time ends the stream with an error
/// line for each line left.
async fn evaluate_lines(app: &Arc<App>, set: Arc<RuleSet>, body: Bytes) -> Response<Body> {
    let ranges = line_ranges(&body);
    let chunks: Vec<Vec<(usize, usize)>> = ranges.chunks(LINES_PER_JOB).map(<[_]>::to_vec).collect();
    let run = |app: Arc<App>, set: Arc<RuleSet>, body: Bytes, chunk: Vec<(usize, usize)>| async move {
        on_pool(&app, move || {
            let lines: Vec<&[u8]> = chunk.iter().map(|(a, b)| &body[*a..*b]).collect();
            evaluate::lines(&set, &lines)
        })
        .await
    };
    let mut chunks = chunks.into_iter();
    let first = match chunks.next() {
        None => return ndjson(Full::new(Bytes::new()).boxed()),
        Some(chunk) => match run(app.clone(), set.clone(), body.clone(), chunk).await {
            Ok((out, decisions)) => {
                count_decisions(app, &decisions);
                Bytes::from(out)
            }
            Err(why) => return unavailable(why),
        },
    };
    let rest: Vec<Vec<(usize, usize)>> = chunks.collect();
    if rest.is_empty() {
        return ndjson(Full::new(first).boxed());
    }
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let app = app.clone();
    tokio::spawn(async move {
        if sender.send(first).await.is_err() {
            return;
        }
        let mut left: usize = rest.iter().map(Vec::len).sum();
        for chunk in rest {
            let n = chunk.len();
            let out = match run(app.clone(), set.clone(), body.clone(), chunk).await {
                Ok((out, decisions)) => {
                    count_decisions(&app, &decisions);
                    out
                }
                Err(why) => {
                    let message = match why {
                        NoAnswer::Full => "the evaluation queue is full: this line was not evaluated",
                        NoAnswer::TimedOut => {
                            "the evaluation did not finish in time: this line was not evaluated"
                        }
                    };
                    let line = [error_json("unavailable", message), b"\n".to_vec()].concat();
                    let _ = sender.send(Bytes::from(line.repeat(left))).await;
                    return;
                }
            };
            left -= n;
            if sender.send(Bytes::from(out)).await.is_err() {
                return;
            }
        }
    });
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), receiver))
    });
    ndjson(BodyExt::boxed(StreamBody::new(stream)))
}

fn count_decisions(app: &App, decisions: &[(String, &'static str)]) {
    for (contract, decision) in decisions {
        app.metrics.decision(contract, decision);
    }
}

/// The byte ranges of the non-blank lines of `body`.
fn line_ranges(body: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, byte) in body.iter().enumerate() {
        if *byte == b'\n' {
            ranges.push((start, i));
            start = i + 1;
        }
    }
    ranges.push((start, body.len()));
    ranges.retain(|(a, b)| body[*a..*b].iter().any(|c| !c.is_ascii_whitespace()));
    ranges
}

/// `GET /contracts`.
fn contracts(app: &App) -> Response<Body> {
    let set = app.rules.current();
    let contracts: Vec<serde_json::Value> = set
        .contracts
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name(),
                "version": c.version(),
                "hash": c.hash(),
                "engine": engine_of(c),
                "loaded_at": rfc3339(set.loaded_at),
            })
        })
        .collect();
    let failure =
        app.rules.last_failure().map(|f| serde_json::json!({ "at": rfc3339(f.at), "message": f.message }));
    let body = serde_json::json!({
        "revision": set.revision,
        "loaded_at": rfc3339(set.loaded_at),
        "contracts": contracts,
        "last_reload_error": failure,
    });
    let mut response = json(StatusCode::OK, serde_json::to_vec_pretty(&body).unwrap_or_default());
    if let Ok(revision) = HeaderValue::from_str(&set.revision.to_string()) {
        response.headers_mut().insert(REVISION_HEADER, revision);
    }
    response
}

/// `native` once a contract runs as machine code, else `interp`.
fn engine_of(contract: &runtime::Contract) -> &'static str {
    match contract.native_status() {
        runtime::engine::NativeStatus::Native => "native",
        _ => "interp",
    }
}

/// `GET /metrics`.
fn metrics(app: &App) -> Response<Body> {
    let set = app.rules.current();
    let snapshot = Snapshot {
        revision: set.revision,
        reloads: app.rules.reloads.load(Ordering::Relaxed),
        failed_reloads: app.rules.failed_reloads.load(Ordering::Relaxed),
        queue_depth: app.pool.queue_depth(),
        workers_busy: app.pool.busy(),
        engines: set.contracts.iter().map(|c| (c.name(), engine_of(c))).collect(),
    };
    let mut response = Response::new(Full::new(Bytes::from(app.metrics.render(&snapshot))).boxed());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

/// A time as RFC 3339 (UTC, seconds).
fn rfc3339(at: SystemTime) -> String {
    let nanos = at.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO).as_nanos();
    let nanos = i64::try_from(nanos / 1_000_000_000 * 1_000_000_000).unwrap_or(0);
    ir::time::format_timestamp(nanos)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn ndjson(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    response
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

#[cfg(test)]
mod tests {
    use super::line_ranges;

    #[test]
    fn blank_lines_are_skipped_and_the_last_line_needs_no_newline() {
        let body = b"{\"a\":1}\n\n  \n{\"b\":2}";
        let lines: Vec<&[u8]> = line_ranges(body).iter().map(|(a, b)| &body[*a..*b]).collect();
        assert_eq!(lines, vec![&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);
    }
}
