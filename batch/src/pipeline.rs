//! Running a job over a source on every core: a reader (the calling
//! thread) passes chunks to worker threads through a bounded queue, and a
//! writer thread takes their results in input order and writes them.
//!
//! Each chunk's results come back through a channel of their own, a few
//! pieces deep ([`PIECE_BYTES`] or so each), which the writer reads when
//! the chunk's turn comes: a worker ahead of the writer waits once its
//! chunk's channel is full. So at most a few chunks and a few pieces of
//! results per chunk are in flight, and memory stays flat whatever the
//! size of the input and of its results.
//!
//! A contract with windows sees its records in input order although
//! chunks are evaluated in parallel: each chunk enters its records into
//! the windows in its turn ([`crate::turns`]), after every chunk before
//! it, and evaluates its rules on whatever worker it is on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::job::{Evaluated, Job};
use crate::output::Writer;
use crate::progress::Progress;
use crate::source::{Chunk, Source};
use crate::turns::{Turn, Turns};

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub records: usize,
    /// Records not evaluated: invalid input, or out of time.
    pub failed: usize,
}

/// Evaluates every record of `source` with `threads` workers and writes
/// the results in input order; the first error (reading, evaluating a
/// chunk, writing) stops the run and is returned.
pub fn run(
    job: &Job,
    source: &mut dyn Source,
    writer: Writer,
    threads: usize,
    progress: &Progress,
) -> Result<Summary, String> {
    let threads = threads.max(1);
    let (chunks, queue) = sync_channel::<Work>(threads * 2);
    let (turns, order) = sync_channel::<Receiver<Piece>>(threads * 4);
    let queue = Arc::new(Mutex::new(queue));
    let stop = AtomicBool::new(false);
    let windows = Turns::default();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (queue, windows) = (queue.clone(), &windows);
            scope.spawn(move || work(job, &queue, windows));
        }
        let written = scope.spawn(|| write(order, writer, progress, &stop));
        let read = read(source, &chunks, &turns, &stop);
        drop((chunks, turns));
        let written = written.join().unwrap_or_else(|_| Err("internal: the writer thread panicked".into()));
        // A reading error comes first: what was written before it is
        // complete, but the run is not.
        read.and(written)
    })
}

/// About how large a piece of a chunk's results is.
pub const PIECE_BYTES: usize = 1 << 20;

/// Pieces of one chunk's results the worker may be ahead of the writer.
const PIECES_AHEAD: usize = 4;

/// A chunk to evaluate, its number in input order, and where its results
/// go.
type Work = (Chunk, u64, SyncSender<Piece>);

/// A piece of a chunk's results (or the error that stopped it).
type Piece = Result<Evaluated, String>;

/// Passes the source's chunks on until the end, an error or a stop; the
/// writer gets each chunk's channel of results in input order.
fn read(
    source: &mut dyn Source,
    chunks: &SyncSender<Work>,
    turns: &SyncSender<Receiver<Piece>>,
    stop: &AtomicBool,
) -> Result<(), String> {
    for number in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Some(chunk) = source.next_chunk()? else { break };
        let (results, turn) = sync_channel(PIECES_AHEAD);
        if turns.send(turn).is_err() || chunks.send((chunk, number, results)).is_err() {
            break;
        }
    }
    Ok(())
}

/// A worker: evaluates chunks until the queue closes. A chunk enters its
/// records into the contract's windows in its turn among `windows`, and
/// gives up its turn however it ends, so a failed chunk holds up none
/// after it.
fn work(job: &Job, queue: &Mutex<Receiver<Work>>, windows: &Turns) {
    loop {
        let next = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok((chunk, number, results)) = next else { return };
        let mut send = |piece: Evaluated| results.send(Ok(piece)).map_err(|_| String::from("stopped"));
        let turn = Turn { turns: windows, chunk: number };
        let evaluated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            job.evaluate_in_pieces(&chunk, PIECE_BYTES, Some(turn), &mut send)
        }))
        .unwrap_or_else(|_| Err("internal: evaluating a chunk panicked".into()));
        windows.finish(number);
        if let Err(message) = evaluated {
            // Nobody reads the results of a stopped run.
            let _ = results.send(Err(message));
        }
        match chunk {
            Chunk::Lines(bytes) => crate::buffers::give(bytes),
            Chunk::Messages(messages) => crate::buffers::give(messages.into_frames()),
            Chunk::Batch(_) => {}
        }
    }
}

/// Writes each chunk's pieces in order; after an error, keeps receiving
/// (so no worker blocks) and asks the reader to stop.
fn write(
    order: Receiver<Receiver<Piece>>,
    mut writer: Writer,
    progress: &Progress,
    stop: &AtomicBool,
) -> Result<Summary, String> {
    let mut summary = Summary::default();
    let mut failure = None;
    for turn in order {
        for piece in turn {
            if failure.is_some() {
                continue;
            }
            let written = piece.and_then(|e| {
                summary.records += e.records;
                summary.failed += e.failed;
                progress.advance(e.records);
                writer.write(e.output)
            });
            if let Err(message) = written {
                failure = Some(message);
                stop.store(true, Ordering::Relaxed);
            }
        }
    }
    match failure {
        Some(message) => Err(message),
        None => writer.finish().map(|()| summary),
    }
}
