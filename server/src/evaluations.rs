//! Batch over HTTP (INTERFACES.md): `POST /evaluations?contract=NAME`
//! with a body of bare input records of one contract, an Arrow IPC
//! stream or NDJSON, answered with their results in input order, an Arrow
//! IPC stream or NDJSON (`Accept`), streamed both ways.
//!
//! The `batch` crate does the work: its sources read the body, its
//! [`Job`] evaluates each chunk (here on the server's pool, a few chunks
//! in flight), its writer writes the answer. This module is the plumbing
//! around it:
//!
//! - on the async side, [`respond`] checks the query and the limits,
//!   starts [`pump`] (body → bounded channel) and a blocking thread
//!   ([`drive`]), and waits for its [`Head`]: the status;
//! - the thread opens the source, matches its schema, and evaluates chunk
//!   after chunk; the status is decided when the first results are ready
//!   (or the run fails first: 400, 404, 408, 413, 503), and after that a
//!   failure ends the results with one error line or row
//!   ([`Job::stopped`]).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::time::Instant;

use batch::job::Evaluated;
use batch::output::Writer;
use batch::source::{ArrowFile, Chunk, NdjsonReader, Source};
use batch::{InputFormat, Job, OutputFormat};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use runtime::Contract;
use runtime::contract_set::RouteError;
use tokio::sync::{mpsc, oneshot};

use crate::app::{App, Logged};
use crate::body::BodyReader;
use crate::evaluate::error_json;
use crate::pipe::{ANSWER_WAITING, AnswerWrite, BODY_WAITING, BodyRead, Failure, pump};
use crate::respond::{Body, json};
use crate::rules::RuleSet;

/// The media type of an Arrow IPC stream.
pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";
const NDJSON: &str = "application/x-ndjson";

/// Chunks of one batch evaluated at once, at most (and at most one per
/// worker): what a batch holds is about this many chunks in and out.
const IN_FLIGHT: usize = 4;

/// Whether `request` is a batch of bare records, and in which format: an
/// Arrow stream, or NDJSON with a `contract` in the query (NDJSON
/// without one is NDJSON requests, each naming its contract).
pub fn input_format(request: &Request<Incoming>) -> Option<InputFormat> {
    let media = media_type(request.headers().get(header::CONTENT_TYPE));
    if media.eq_ignore_ascii_case(ARROW_STREAM) {
        return Some(InputFormat::Arrow);
    }
    let names_contract = request
        .uri()
        .query()
        .is_some_and(|q| form_urlencoded::parse(q.as_bytes()).any(|(key, _)| key == "contract"));
    (media.eq_ignore_ascii_case(NDJSON) && names_contract).then_some(InputFormat::Ndjson)
}

/// Answers a batch: the status once the first results are ready (or the
/// error that came first), then the results as they are ready.
pub(crate) async fn respond(
    app: &Arc<App>,
    set: &RuleSet,
    request: Request<Incoming>,
    input: InputFormat,
    logged: &mut Logged,
) -> Response<Body> {
    let planned = plan(app, set, &request, input).and_then(|(contract, settings)| {
        logged.contract = Some(contract.name().to_string());
        let slot = Slot::take(app).ok_or_else(|| {
            Stop::unavailable("overloaded", "as many batches as the server takes are running: retry shortly")
        })?;
        Ok((contract, settings, slot))
    });
    let body = BodyReader::new(request.into_body(), app.config.max_batch_body, app.config.body_pace);
    let (contract, settings, slot) = match planned {
        Ok(planned) => planned,
        Err(stop) => {
            tokio::spawn(crate::pipe::linger(body));
            return stop.response();
        }
    };
    let (chunks, received) = mpsc::channel(BODY_WAITING);
    let failure = Failure::default();
    tokio::spawn(pump(body, chunks, failure.clone()));
    let (head, headed) = oneshot::channel();
    let run =
        Run { app: app.clone(), contract, settings, input, body: BodyRead::new(received, failure.clone()) };
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        drive(run, failure, head);
    });
    match headed.await {
        Ok(Head::Results(frames, format)) => results(frames, format),
        Ok(Head::Refused(stop)) => stop.response(),
        Err(_) => Stop {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            kind: "internal",
            message: "the batch failed".into(),
        }
        .response(),
    }
}

/// The contract and the job's settings from the query, or why not.
fn plan(
    app: &App,
    set: &RuleSet,
    request: &Request<Incoming>,
    input: InputFormat,
) -> Result<(Arc<Contract>, batch::Settings), Stop> {
    let query = Query::parse(request.uri().query().unwrap_or(""))?;
    let contract = set
        .contracts
        .route(query.contract.as_deref())
        .map_err(|e| match e {
            RouteError::Unknown { message } => {
                Stop { status: StatusCode::NOT_FOUND, kind: "unknown_contract", message }
            }
            RouteError::Missing { message } => Stop::bad_query(message),
        })?
        .clone();
    let parts = match &query.fields {
        Some(fields) => batch::result_parts(fields).map_err(|e| Stop::bad_query(format!("`fields`: {e}")))?,
        None => runtime::result::Parts::ALL,
    };
    batch::job::channel_context(&contract, query.channel.as_deref(), "`channel`").map_err(Stop::bad_query)?;
    let announced =
        request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > app.config.max_batch_body as u64) {
        let failure = crate::body::BodyError::TooLarge { limit: app.config.max_batch_body };
        return Err(Stop::body(&failure));
    }
    let settings = batch::Settings {
        channel: query.channel,
        parts,
        keep: query.keep.as_deref().map(list).unwrap_or_default(),
        output: output_format(request, input),
        // Each record, as each request, within the evaluation timeout.
        limit: Some(runtime::semantics::budget::Limit::After(app.config.evaluation_timeout)),
    };
    Ok((contract, settings))
}

/// The answer's format: the one `Accept` names, else the body's.
fn output_format(request: &Request<Incoming>, input: InputFormat) -> OutputFormat {
    let accept = request.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    let accept = accept.to_ascii_lowercase();
    match (accept.find(NDJSON), accept.find(ARROW_STREAM)) {
        (Some(n), Some(a)) if a < n => OutputFormat::Arrow,
        (Some(_), _) => OutputFormat::Ndjson,
        (None, Some(_)) => OutputFormat::Arrow,
        (None, None) => match input {
            InputFormat::Arrow => OutputFormat::Arrow,
            _ => OutputFormat::Ndjson,
        },
    }
}

/// The media type of a `Content-Type`, without its parameters.
fn media_type(value: Option<&HeaderValue>) -> &str {
    let value = value.and_then(|v| v.to_str().ok()).unwrap_or("");
    value.split(';').next().unwrap_or("").trim()
}

/// A message of the `batch` crate, which names the command line's flags,
/// said with the query's names.
fn as_query(message: &str) -> String {
    message.replacen("--channel", "`channel`", 1).replacen("--keep", "`keep`", 1)
}

fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// A batch's query parameters.
#[derive(Debug, Default)]
struct Query {
    contract: Option<String>,
    channel: Option<String>,
    fields: Option<String>,
    keep: Option<String>,
}

impl Query {
    /// Every parameter once at most, and none other (a misspelt one would
    /// otherwise be ignored).
    fn parse(text: &str) -> Result<Query, Stop> {
        let mut query = Query::default();
        for (key, value) in form_urlencoded::parse(text.as_bytes()) {
            let slot = match key.as_ref() {
                "contract" => &mut query.contract,
                "channel" => &mut query.channel,
                "fields" => &mut query.fields,
                "keep" => &mut query.keep,
                other => {
                    return Err(Stop::bad_query(format!(
                        "unknown query parameter {} (a batch takes contract, channel, fields and keep)",
                        ir::quote::quote(other)
                    )));
                }
            };
            if slot.is_some() {
                return Err(Stop::bad_query(format!("the query names `{key}` twice")));
            }
            *slot = Some(value.into_owned());
        }
        Ok(query)
    }
}

/// A batch running: counted against `--max-batches` until dropped.
struct Slot {
    app: Arc<App>,
}

impl Slot {
    fn take(app: &Arc<App>) -> Option<Slot> {
        let limit = app.config.max_batches.max(1);
        app.batches
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1))
            .ok()
            .map(|_| Slot { app: app.clone() })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.app.batches.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why a batch stopped: its status before the first byte of the answer,
/// and its error (`kind`, `message`) either way.
#[derive(Debug)]
struct Stop {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl Stop {
    fn bad_query(message: String) -> Stop {
        Stop { status: StatusCode::BAD_REQUEST, kind: "invalid_query", message }
    }

    fn unavailable(kind: &'static str, message: &str) -> Stop {
        Stop { status: StatusCode::SERVICE_UNAVAILABLE, kind, message: message.into() }
    }

    fn body(failure: &crate::body::BodyError) -> Stop {
        Stop { status: failure.status(), kind: failure.kind(), message: failure.message() }
    }

    /// A source that failed: the body's own failure if it had one, else a
    /// damaged Arrow stream.
    fn reading(message: String, failure: &Failure) -> Stop {
        match failure.get() {
            Some(failure) => Stop::body(failure),
            None => Stop { status: StatusCode::BAD_REQUEST, kind: "bad_arrow", message },
        }
    }

    /// The answer before its first byte. The body is not read to its end,
    /// so the connection closes after it.
    fn response(self) -> Response<Body> {
        let mut response = json(self.status, error_json(self.kind, &self.message));
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    }
}

/// What the batch's thread tells the async side first.
enum Head {
    /// 200: the results follow as frames.
    Results(mpsc::Receiver<Bytes>, OutputFormat),
    /// No results: the error that came first.
    Refused(Stop),
}

/// The 200 answer, streamed from `frames`.
fn results(frames: mpsc::Receiver<Bytes>, format: OutputFormat) -> Response<Body> {
    let stream = futures_util::stream::unfold(frames, |mut frames| async move {
        frames.recv().await.map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), frames))
    });
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let media = match format {
        OutputFormat::Arrow => ARROW_STREAM,
        OutputFormat::Ndjson => NDJSON,
    };
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    response
}

/// What the batch's thread is given.
struct Run {
    app: Arc<App>,
    contract: Arc<Contract>,
    settings: batch::Settings,
    input: InputFormat,
    body: BodyRead,
}

/// The batch's thread: opens the source, evaluates its chunks, writes
/// their results, and ends the answer.
fn drive(run: Run, failure: Failure, head: oneshot::Sender<Head>) {
    let started = Instant::now();
    let Run { app, contract, settings, input, body } = run;
    let name = "the body".to_string();
    let source: Result<Box<dyn Source>, String> = match input {
        InputFormat::Arrow => ArrowFile::stream(body, name, app.config.max_batch_body as u64)
            .map(|s| Box::new(s) as Box<dyn Source>),
        InputFormat::Ndjson => Ok(Box::new(NdjsonReader::new(Box::new(body), name))),
        // The media types the route takes are Arrow streams and NDJSON.
        other => Err(format!("{} bodies are not taken over HTTP", other.name())),
    };
    let mut source = match source {
        Ok(source) => source,
        Err(message) => {
            let _ = head.send(Head::Refused(Stop::reading(message, &failure)));
            return;
        }
    };
    let job = match Job::new(contract, &settings, source.schema().as_ref()) {
        Ok(job) => Arc::new(job),
        Err(message) => {
            let stop = Stop {
                status: StatusCode::BAD_REQUEST,
                kind: "schema_mismatch",
                message: as_query(&message),
            };
            let _ = head.send(Head::Refused(stop));
            return;
        }
    };
    let mut answer = Answer { head: Some(head), writer: None, records: 0 };
    let ended = evaluate(&app, &job, source.as_mut(), &failure, &mut answer);
    drop(source);
    match ended {
        Ok(()) => answer.finish(&job),
        Err(stop) => answer.stop(&job, stop),
    }
    app.metrics.batch_time(started.elapsed());
}

/// Reads and evaluates every chunk, a few in flight on the pool, and
/// writes their results in input order; a failure (reading, a refused
/// chunk) comes after the results of the chunks before it.
fn evaluate(
    app: &App,
    job: &Arc<Job>,
    source: &mut dyn Source,
    failure: &Failure,
    answer: &mut Answer,
) -> Result<(), Stop> {
    // A record's window values depend on every record before it: a
    // contract with windows has one chunk in flight, so its chunks are
    // evaluated in input order.
    let limit =
        if job.contract().window_state().is_some() { 1 } else { app.pool.workers().clamp(1, IN_FLIGHT) };
    let mut in_flight: VecDeque<Pending> = VecDeque::new();
    // How the reading ended: the source's end, or a failure.
    let mut ending: Option<Result<(), Stop>> = None;
    loop {
        while let Some(front) = in_flight.front()
            && let Some(evaluated) = front.ready()
        {
            in_flight.pop_front();
            answer.write(app, job, evaluated?)?;
        }
        if ending.is_none() && in_flight.len() < limit {
            match source.next_chunk() {
                Ok(Some(chunk)) => match submit(app, job, chunk) {
                    Ok(pending) => in_flight.push_back(pending),
                    Err(stop) => ending = Some(Err(stop)),
                },
                Ok(None) => ending = Some(Ok(())),
                Err(message) => ending = Some(Err(Stop::reading(message, failure))),
            }
            continue;
        }
        match in_flight.pop_front() {
            Some(pending) => answer.write(app, job, pending.wait()?)?,
            None => break,
        }
    }
    ending.unwrap_or(Ok(()))
}

/// A chunk on the pool: its results to come.
struct Pending {
    results: Receiver<Result<Evaluated, String>>,
}

impl Pending {
    /// The results if they are ready.
    fn ready(&self) -> Option<Result<Evaluated, Stop>> {
        match self.results.try_recv() {
            Ok(evaluated) => Some(evaluated.map_err(failed)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(late())),
        }
    }

    fn wait(self) -> Result<Evaluated, Stop> {
        match self.results.recv() {
            Ok(evaluated) => evaluated.map_err(failed),
            Err(_) => Err(late()),
        }
    }
}

/// A chunk whose evaluation failed: only damaged Arrow data does that.
fn failed(message: String) -> Stop {
    Stop { status: StatusCode::BAD_REQUEST, kind: "bad_arrow", message }
}

/// A chunk the pool dropped unrun: it waited past the evaluation timeout.
fn late() -> Stop {
    Stop::unavailable("timeout", "the records waited past the evaluation timeout for a worker: retry shortly")
}

/// Queues `chunk` on the pool; it must start within the evaluation
/// timeout (its records then run within it each).
fn submit(app: &App, job: &Arc<Job>, chunk: Chunk) -> Result<Pending, Stop> {
    let deadline = Instant::now() + app.config.evaluation_timeout;
    let (sender, results) = sync_channel(1);
    let job = job.clone();
    let work = move || {
        let evaluated = job.evaluate(&chunk);
        if let Chunk::Lines(bytes) = chunk {
            batch::buffers::give(bytes);
        }
        let _ = sender.send(evaluated);
    };
    app.pool
        .submit(deadline, work)
        .map_err(|_| Stop::unavailable("overloaded", "the evaluation queue is full: retry shortly"))?;
    Ok(Pending { results })
}

/// The answer: waiting for its first results (the status not sent yet),
/// then open.
struct Answer {
    head: Option<oneshot::Sender<Head>>,
    writer: Option<Writer>,
    /// Records answered so far.
    records: usize,
}

impl Answer {
    /// Sends the status (200) and opens the results.
    fn open(&mut self, job: &Job) -> Result<&mut Writer, Stop> {
        if self.writer.is_none() {
            let gone = || Stop::unavailable("gone", "the client went away");
            let head = self.head.take().ok_or_else(gone)?;
            let (frames, received) = mpsc::channel(ANSWER_WAITING);
            let format = job.output_format();
            head.send(Head::Results(received, format)).map_err(|_| gone())?;
            let writer =
                Writer::new(Box::new(AnswerWrite::new(frames)), format, false, job.result_schema()).map_err(
                    |message| Stop { status: StatusCode::INTERNAL_SERVER_ERROR, kind: "internal", message },
                )?;
            self.writer = Some(writer);
        }
        self.writer.as_mut().ok_or_else(|| Stop::unavailable("gone", "the client went away"))
    }

    /// Writes one chunk's results and passes them on.
    fn write(&mut self, app: &App, job: &Job, evaluated: Evaluated) -> Result<(), Stop> {
        app.metrics.batch_records(evaluated.records, evaluated.failed);
        self.records += evaluated.records;
        let writer = self.open(job)?;
        let gone = |message| Stop { status: StatusCode::OK, kind: "gone", message };
        writer.write(evaluated.output).map_err(gone)?;
        writer.flush().map_err(gone)
    }

    /// Ends the results (an empty body has none: its answer is empty).
    fn finish(mut self, job: &Job) {
        if self.open(job).is_ok()
            && let Some(writer) = self.writer.take()
        {
            let _ = writer.finish();
        }
    }

    /// Answers `stop`: as the status when nothing is sent yet, else as
    /// the last result, saying how many records were answered before it.
    fn stop(mut self, job: &Job, stop: Stop) {
        if let Some(head) = self.head.take() {
            let _ = head.send(Head::Refused(stop));
            return;
        }
        let Some(mut writer) = self.writer.take() else { return };
        let message = format!("{} (the results stop after {} records)", stop.message, self.records);
        if let Ok(output) = job.stopped(stop.kind, &message) {
            let _ = writer.write(output);
        }
        let _ = writer.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::Query;

    #[test]
    fn a_query_names_each_parameter_once_and_no_other() {
        let query = Query::parse("contract=shop.orders.check&channel=w%20b&keep=id,sku").expect("parsed");
        assert_eq!(query.contract.as_deref(), Some("shop.orders.check"));
        assert_eq!(query.channel.as_deref(), Some("w b"));
        assert_eq!(query.keep.as_deref(), Some("id,sku"));
        let twice = Query::parse("contract=a&contract=b").expect_err("twice");
        assert_eq!(twice.message, "the query names `contract` twice");
        let unknown = Query::parse("contract=a&chanel=web").expect_err("misspelt");
        assert!(unknown.message.starts_with("unknown query parameter \"chanel\""), "{}", unknown.message);
    }
}
