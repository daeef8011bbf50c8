//! Reading a request body: its size limit (`--max-body`) and its pace
//! ([`BodyPace`]: `--body-timeout`, `--min-body-rate`). Everything that
//! reads a body goes through [`BodyReader`], so a client that sends too
//! much, too slowly, or breaks off gets a 413, a 408 or a 400, whichever
//! endpoint it sent to.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use hyper::StatusCode;
use hyper::body::Incoming;

use crate::config::BodyPace;
use crate::evaluate::error_json;

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The body fell behind its pace (408).
    TooSlow(BodyPace),
    /// The body went over `--max-body` (413).
    TooLarge { limit: usize },
    /// The client broke off or mangled the framing (400).
    Broken(String),
}

impl BodyError {
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::TooSlow(_) => StatusCode::REQUEST_TIMEOUT,
            BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Broken(_) => StatusCode::BAD_REQUEST,
        }
    }

    /// `{"error":{"kind":...,"message":...}}` saying what went wrong.
    pub fn to_json(&self) -> Vec<u8> {
        error_json(self.kind(), &self.message())
    }

    /// The error's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            BodyError::TooSlow(_) => "body_timeout",
            BodyError::TooLarge { .. } => "payload_too_large",
            BodyError::Broken(_) => "bad_body",
        }
    }

    /// What went wrong, for people.
    pub fn message(&self) -> String {
        match self {
            BodyError::TooSlow(pace) => format!(
                "the body arrived too slowly: at least {} bytes are needed every {} ms",
                pace.bytes_per_window(),
                pace.window.as_millis()
            ),
            BodyError::TooLarge { limit } => format!("the body is over the limit of {limit} bytes"),
            BodyError::Broken(why) => format!("the body could not be read: {why}"),
        }
    }
}

/// A request body read chunk by chunk, within its limit and its pace.
///
/// Only the time spent waiting for the client counts against the pace:
/// while the server evaluates or waits for the client to take results,
/// no clock runs.
#[derive(Debug)]
pub struct BodyReader {
    body: Incoming,
    pace: BodyPace,
    limit: usize,
    /// Bytes read so far.
    read: usize,
    /// Waiting time in the current window, and the bytes it brought.
    window_waited: Duration,
    window_bytes: u64,
    ended: bool,
}

impl BodyReader {
    pub fn new(body: Incoming, limit: usize, pace: BodyPace) -> BodyReader {
        BodyReader {
            body,
            pace,
            limit,
            read: 0,
            window_waited: Duration::ZERO,
            window_bytes: 0,
            ended: false,
        }
    }

    /// The next chunk of data, `None` at the end of the body.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        loop {
            if self.ended {
                return Ok(None);
            }
            let started = Instant::now();
            let frame = tokio::time::timeout(self.wait_allowed(), self.body.frame()).await;
            let waited = started.elapsed();
            let Ok(frame) = frame else { return Err(BodyError::TooSlow(self.pace)) };
            if let Some(chunk) = self.take(frame, waited)? {
                return Ok(Some(chunk));
            }
        }
    }

    /// The next chunk if one is there already, without waiting: `None`
    /// when the client has sent nothing more yet.
    pub fn ready_chunk(&mut self) -> Option<Result<Option<Bytes>, BodyError>> {
        if self.ended {
            return Some(Ok(None));
        }
        let frame = self.body.frame().now_or_never()?;
        match self.take(frame, Duration::ZERO) {
            // A frame without data (trailers) is no data yet.
            Ok(None) if !self.ended => None,
            taken => Some(taken),
        }
    }

    /// The whole body (JSON requests).
    pub async fn collect(mut self) -> Result<Bytes, BodyError> {
        let mut whole = BytesMut::new();
        while let Some(chunk) = self.next_chunk().await? {
            whole.extend_from_slice(&chunk);
        }
        Ok(whole.freeze())
    }

    /// How long this wait may last: no more than a window without any
    /// data, and no further than the end of the first window that would
    /// fall short of the rate.
    fn wait_allowed(&self) -> Duration {
        let window_left = self.pace.window.saturating_sub(self.window_waited);
        let rate_left = if self.window_bytes >= self.pace.bytes_per_window() {
            // This window is paid for; the next one starts from nothing.
            window_left + self.pace.window
        } else {
            window_left
        };
        rate_left.min(self.pace.window)
    }

    /// Accounts for a frame that took `waited` to come: its data, the
    /// end of the body, or an error; `Ok(None)` for a frame without data.
    fn take(
        &mut self,
        frame: Option<Result<hyper::body::Frame<Bytes>, hyper::Error>>,
        waited: Duration,
    ) -> Result<Option<Bytes>, BodyError> {
        let bytes = match frame {
            None => {
                self.ended = true;
                return Ok(None);
            }
            Some(Err(error)) => return Err(BodyError::Broken(error.to_string())),
            Some(Ok(frame)) => frame.into_data().unwrap_or_default(),
        };
        self.read = self.read.saturating_add(bytes.len());
        if self.read > self.limit {
            return Err(BodyError::TooLarge { limit: self.limit });
        }
        self.window_waited += waited;
        self.window_bytes += bytes.len() as u64;
        while !self.pace.window.is_zero() && self.window_waited >= self.pace.window {
            if self.window_bytes < self.pace.bytes_per_window() {
                return Err(BodyError::TooSlow(self.pace));
            }
            self.window_waited -= self.pace.window;
            self.window_bytes = 0;
        }
        Ok(if bytes.is_empty() { None } else { Some(bytes) })
    }
}
