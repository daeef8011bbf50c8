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
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode, Version};
use subtle::ConstantTimeEq;

use crate::app::{App, Logged, on_pool};
use crate::body::{BodyError, BodyReader};
use crate::evaluate::{self, Answer, error_json};
use crate::metrics::{Snapshot, WindowGauges};
use crate::respond::{Body, body_error, json, text, unavailable};
use crate::rules::RuleSet;

/// The header naming the rule set revision that answered.
pub const REVISION_HEADER: &str = "x-rulec-revision";

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
        revision = logged.revision.as_deref().unwrap_or(""),
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
        Endpoint::Ready if app.pool.stuck(app.config.evaluation_timeout) => {
            text(StatusCode::SERVICE_UNAVAILABLE, "every evaluation worker is busy past the timeout\n")
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

/// `POST /evaluations`: JSON, NDJSON requests streamed both ways, or a
/// batch of bare records ([`crate::evaluations`]).
async fn evaluations(app: &Arc<App>, request: Request<Incoming>, logged: &mut Logged) -> Response<Body> {
    if let Some(input) = crate::evaluations::input_format(&request) {
        let set = app.rules.current();
        logged.revision = Some(set.revision.clone());
        let response = crate::evaluations::respond(app, &set, request, input, logged).await;
        return with_revision(response, &set);
    }
    let ndjson = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/x-ndjson"));
    let body = match body_reader(app, request) {
        Ok(body) => body,
        Err(failure) => return body_error(&failure),
    };
    let set = app.rules.current();
    logged.revision = Some(set.revision.clone());
    let response = if ndjson {
        crate::ndjson::respond(app, set.clone(), body).await
    } else {
        match body.collect().await {
            Ok(body) => evaluate_one(app, set.clone(), body, logged).await,
            Err(failure) => return body_error(&failure),
        }
    };
    with_revision(response, &set)
}

/// `response` with the header naming the revision that answered.
fn with_revision(mut response: Response<Body>, set: &RuleSet) -> Response<Body> {
    if let Ok(revision) = HeaderValue::from_str(&set.revision) {
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

async fn evaluate_one(app: &Arc<App>, set: Arc<RuleSet>, body: Bytes, logged: &mut Logged) -> Response<Body> {
    let evaluated = on_pool(
        app,
        move |deadline| evaluate::one(&set, &body, deadline),
        |answer| answer.entries.withdraw(),
    );
    match evaluated.await {
        Ok(Answer { status, body, contract, decision, .. }) => {
            if let (Some(contract), Some(decision)) = (&contract, decision) {
                app.metrics.decision(contract, decision);
            }
            logged.contract = contract;
            logged.decision = decision;
            let mut response = json(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), body);
            if status == 503 {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            response
        }
        Err(why) => unavailable(why),
    }
}

/// `GET /contracts`.
fn contracts(app: &App) -> Response<Body> {
    let set = app.rules.current();
    let contracts: Vec<serde_json::Value> = set
        .contracts
        .contracts()
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
        "revision": &*set.revision,
        "generation": set.generation,
        "loaded_at": rfc3339(set.loaded_at),
        "contracts": contracts,
        "last_reload_error": failure,
    });
    with_revision(json(StatusCode::OK, serde_json::to_vec_pretty(&body).unwrap_or_default()), &set)
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
        revision: &set.revision,
        generation: set.generation,
        reloads: app.rules.reloads.load(Ordering::Relaxed),
        failed_reloads: app.rules.failed_reloads.load(Ordering::Relaxed),
        queue_depth: app.pool.queue_depth(),
        workers_busy: app.pool.busy(),
        batches_running: app.batches.load(Ordering::Relaxed),
        engines: set.contracts.contracts().iter().map(|c| (c.name(), engine_of(c))).collect(),
        windows: set
            .contracts
            .contracts()
            .iter()
            .filter_map(|c| {
                c.window_state().map(|w| WindowGauges {
                    contract: c.name(),
                    keys: w.keys(),
                    bytes: w.records_bytes(),
                    evicted: w.evicted(),
                    full: w.full(),
                })
            })
            .collect(),
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
