//! Bounded pipes between the async side and a batch's thread: the request
//! body as a blocking [`Read`] ([`pump`] passes its chunks on as they
//! arrive, [`BodyRead`] hands them to the `batch` crate's sources), and
//! the answer as a blocking [`Write`] ([`AnswerWrite`] cuts what the
//! `batch` writer writes into frames of the response body). Both channels
//! are bounded, so a slow reader holds back the writer on the other side
//! (backpressure) and only a few frames are ever held.

use std::io::{Read, Write};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::body::{BodyError, BodyReader};

/// Chunks of the body that may wait for the batch's thread.
pub const BODY_WAITING: usize = 8;

/// Frames of the answer that may wait for the client.
pub const ANSWER_WAITING: usize = 8;

/// Bytes per frame of the answer.
const FRAME: usize = 256 * 1024;

/// Why the body stopped, once it has: set by [`pump`], read by whoever
/// sees [`BodyRead`] fail (a reader error says little about its cause).
pub type Failure = Arc<OnceLock<BodyError>>;

/// What [`linger`] reads of a body no one wants, at most.
const LINGER_BYTES: usize = 1 << 20;
const LINGER_TIME: Duration = Duration::from_secs(1);

/// Reads `body` and passes its chunks on until its end, an error (kept
/// in `failure`, then passed on as the end), or the batch's thread stops
/// reading (then the rest [`linger`]s).
pub async fn pump(mut body: BodyReader, chunks: mpsc::Sender<Result<Bytes, ()>>, failure: Failure) {
    loop {
        let next = tokio::select! {
            next = body.next_chunk() => next,
            () = chunks.closed() => return linger(body).await,
        };
        let next = match next {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => return,
            Err(error) => {
                let _ = failure.set(error);
                Err(())
            }
        };
        let failed = next.is_err();
        if chunks.send(next).await.is_err() || failed {
            return;
        }
    }
}

/// Reads and drops what is left of a body that was answered without
/// being read (an error), for a moment: the connection closes after the
/// answer, and closing a socket with unread data resets it, which can
/// make the client lose the answer (nginx's lingering close). A small
/// body is read to its end; a large one is cut after [`LINGER_BYTES`]
/// or [`LINGER_TIME`].
pub async fn linger(mut body: BodyReader) {
    let mut read = 0;
    let _ = tokio::time::timeout(LINGER_TIME, async {
        while let Ok(Some(bytes)) = body.next_chunk().await {
            read += bytes.len();
            if read > LINGER_BYTES {
                return;
            }
        }
    })
    .await;
}

/// The body's bytes, read on a blocking thread.
#[derive(Debug)]
pub struct BodyRead {
    chunks: mpsc::Receiver<Result<Bytes, ()>>,
    current: Bytes,
    failure: Failure,
}

impl BodyRead {
    pub fn new(chunks: mpsc::Receiver<Result<Bytes, ()>>, failure: Failure) -> BodyRead {
        BodyRead { chunks, current: Bytes::new(), failure }
    }
}

impl Read for BodyRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(bytes)) => self.current = bytes,
                None => return Ok(0),
                Some(Err(())) => {
                    let message =
                        self.failure.get().map_or_else(|| "the body failed".into(), |f| f.message());
                    return Err(std::io::Error::other(message));
                }
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// The answer's bytes, written on a blocking thread: kept until a frame
/// is full (or flushed), then sent, waiting while the client is behind.
#[derive(Debug)]
pub struct AnswerWrite {
    frames: mpsc::Sender<Bytes>,
    buffer: Vec<u8>,
}

impl AnswerWrite {
    pub fn new(frames: mpsc::Sender<Bytes>) -> AnswerWrite {
        AnswerWrite { frames, buffer: Vec::with_capacity(FRAME) }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let frame = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(FRAME)));
        self.frames
            .blocking_send(frame)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

impl Write for AnswerWrite {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(FRAME - self.buffer.len());
        self.buffer.extend_from_slice(&buf[..n]);
        if self.buffer.len() >= FRAME {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}
