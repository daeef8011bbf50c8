//! NDJSON evaluation, streamed both ways: request lines are cut from the
//! body as it arrives ([`LineReader`]), evaluated a batch at a time on the
//! pool, and each batch's result lines are sent as soon as they are
//! ready. Memory stays bounded whatever the body's size: a batch, the
//! start of one line (at most `--max-line` bytes), and a few batches of
//! results waiting for the client.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use tokio::sync::mpsc;

use crate::app::{App, NoAnswer, count_decisions, on_pool};
use crate::body::{BodyError, BodyReader};
use crate::evaluate::{self, Batch, error_json};
use crate::respond::{Body, body_error, ndjson, unavailable};
use crate::rules::RuleSet;

/// NDJSON lines evaluated per job: enough to amortise the hand-off, few
/// enough that results stream.
const LINES_PER_JOB: usize = 64;

/// Request text per job: a batch of long lines is cut short.
const BYTES_PER_JOB: usize = 64 * 1024;

/// Result batches that may wait for the client to read them.
const RESULTS_WAITING: usize = 4;

/// Answers an NDJSON request. The first batch is evaluated before the
/// status is sent, so an overloaded server still says 503 and a body that
/// fails before any result gets its 408, 413 or 400; after that, a batch
/// that cannot run in time gets an `unavailable` line for each of its
/// lines, and a body that fails ends the stream with its error line.
pub async fn respond(app: &Arc<App>, set: Arc<RuleSet>, body: BodyReader) -> Response<Body> {
    let mut reader = LineReader::new(body, app.config.max_line);
    let (batch, failure) = reader.next_batch().await;
    if let Some(failure) = failure {
        return body_error(&failure);
    }
    let first = match evaluate_batch(app, &set, batch).await {
        Ok(out) => out,
        Err(why) => return unavailable(why),
    };
    if reader.finished() {
        return ndjson(Full::new(Bytes::from(first)).boxed());
    }
    let (sender, receiver) = mpsc::channel::<Bytes>(RESULTS_WAITING);
    tokio::spawn(stream_rest(app.clone(), set, reader, first, sender));
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), receiver))
    });
    ndjson(BodyExt::boxed(StreamBody::new(stream)))
}

/// Sends `first`, then reads, evaluates and sends batch after batch until
/// the body ends, fails, or the client goes away.
async fn stream_rest(
    app: Arc<App>,
    set: Arc<RuleSet>,
    mut reader: LineReader,
    first: Vec<u8>,
    sender: mpsc::Sender<Bytes>,
) {
    if !first.is_empty() && sender.send(Bytes::from(first)).await.is_err() {
        return;
    }
    loop {
        let (batch, failure) = reader.next_batch().await;
        if !batch.is_empty() {
            let lines = batch.len();
            let out =
                evaluate_batch(&app, &set, batch).await.unwrap_or_else(|why| unavailable_lines(&why, lines));
            if sender.send(Bytes::from(out)).await.is_err() {
                return;
            }
        }
        if let Some(failure) = failure {
            // The status is sent: the error ends the stream, and dropping
            // the unread body closes the connection.
            let _ = sender.send(Bytes::from([failure.to_json(), b"\n".to_vec()].concat())).await;
            return;
        }
        if reader.finished() {
            return;
        }
    }
}

/// Evaluates `batch` on the pool and counts its decisions.
async fn evaluate_batch(app: &App, set: &Arc<RuleSet>, batch: Batch) -> Result<Vec<u8>, NoAnswer> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let set = set.clone();
    let lines = on_pool(
        app,
        move |deadline| evaluate::lines(&set, &batch, deadline),
        |lines| lines.entries.withdraw(),
    )
    .await?;
    count_decisions(app, &lines.decisions);
    Ok(lines.out)
}

/// An `unavailable` error line for each of `lines` lines.
fn unavailable_lines(why: &NoAnswer, lines: usize) -> Vec<u8> {
    let message = match why {
        NoAnswer::Full => "the evaluation queue is full: this line was not evaluated",
        NoAnswer::TimedOut => "the evaluation did not finish in time: this line was not evaluated",
    };
    [error_json("unavailable", message), b"\n".to_vec()].concat().repeat(lines)
}

/// Request lines cut from a body as it arrives, a batch at a time.
///
/// A line is a request; blank lines are skipped, and the last line needs
/// no newline. A line over `max_line` bytes is not kept: its bytes are
/// dropped up to its newline, and it gets an error line in its place.
#[derive(Debug)]
pub struct LineReader {
    body: BodyReader,
    max_line: usize,
    /// What is left of the last chunk read.
    pending: Bytes,
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The current line is over the limit: it is being skipped.
    skipping: bool,
    /// The body has ended or failed.
    ended: bool,
}

impl LineReader {
    pub fn new(body: BodyReader, max_line: usize) -> LineReader {
        LineReader {
            body,
            max_line,
            pending: Bytes::new(),
            partial: Vec::new(),
            skipping: false,
            ended: false,
        }
    }

    /// Whether every line has been handed out.
    pub fn finished(&self) -> bool {
        self.ended && self.pending.is_empty()
    }

    /// The next batch: full, or as many lines as have arrived when the
    /// client has sent nothing more for now (waiting only while the batch
    /// is empty), or the last lines. With the batch, the error that ended
    /// the body, if one did. An empty batch without an error means the
    /// body is finished.
    pub async fn next_batch(&mut self) -> (Batch, Option<BodyError>) {
        let mut batch = Batch::default();
        loop {
            self.cut(&mut batch);
            if is_full(&batch) || self.ended {
                return (batch, None);
            }
            let chunk = if batch.is_empty() {
                self.body.next_chunk().await
            } else {
                match self.body.ready_chunk() {
                    Some(chunk) => chunk,
                    None => return (batch, None),
                }
            };
            match chunk {
                Ok(Some(bytes)) => self.pending = bytes,
                Ok(None) => {
                    self.ended = true;
                    if self.skipping || !self.partial.is_empty() {
                        self.end_line(&[], &mut batch);
                    }
                }
                Err(failure) => {
                    self.ended = true;
                    return (batch, Some(failure));
                }
            }
        }
    }

    /// Moves the lines of `pending` into `batch` until it is full, and
    /// keeps the start of an unfinished line.
    fn cut(&mut self, batch: &mut Batch) {
        while !is_full(batch) && !self.pending.is_empty() {
            match self.pending.iter().position(|&byte| byte == b'\n') {
                Some(newline) => {
                    let line = self.pending.split_to(newline + 1);
                    self.end_line(&line[..newline], batch);
                }
                None => {
                    let piece = std::mem::take(&mut self.pending);
                    self.extend_partial(&piece);
                }
            }
        }
    }

    /// Ends the current line with `tail`.
    fn end_line(&mut self, tail: &[u8], batch: &mut Batch) {
        if self.skipping || self.partial.len() + tail.len() > self.max_line {
            batch.push_too_long(self.max_line);
        } else {
            batch.push(&[&self.partial, tail]);
        }
        self.partial.clear();
        self.skipping = false;
    }

    /// Keeps `piece` as more of an unfinished line, unless the line is
    /// over the limit.
    fn extend_partial(&mut self, piece: &[u8]) {
        if self.skipping {
            return;
        }
        if self.partial.len() + piece.len() > self.max_line {
            self.skipping = true;
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(piece);
        }
    }
}

fn is_full(batch: &Batch) -> bool {
    batch.len() >= LINES_PER_JOB || batch.text_len() >= BYTES_PER_JOB
}
