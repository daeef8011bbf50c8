//! Running a job over a source on every core: a reader (the calling
//! thread) passes chunks to worker threads through a bounded queue, and a
//! writer thread puts their outputs back in input order and writes them.
//! At most a few chunks per worker are in flight, so memory stays flat
//! whatever the input's size.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::job::{Evaluated, Job};
use crate::output::Writer;
use crate::progress::Progress;
use crate::source::{Chunk, Source};

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
    let (chunks, queue) = sync_channel::<(usize, Chunk)>(threads * 2);
    let (results, outputs) = sync_channel::<(usize, Result<Evaluated, String>)>(threads * 2);
    let queue = Arc::new(Mutex::new(queue));
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (queue, results) = (queue.clone(), results.clone());
            scope.spawn(move || work(job, &queue, &results));
        }
        drop(results);
        let written = scope.spawn(|| write(outputs, writer, progress, &stop));
        let read = read(source, &chunks, &stop);
        drop(chunks);
        let written = written.join().unwrap_or_else(|_| Err("internal: the writer thread panicked".into()));
        // A reading error comes first: what was written before it is
        // complete, but the run is not.
        read.and(written)
    })
}

/// Passes the source's chunks on, numbered, until the end, an error or a
/// stop.
fn read(
    source: &mut dyn Source,
    chunks: &SyncSender<(usize, Chunk)>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let mut number = 0;
    while !stop.load(Ordering::Relaxed) {
        let Some(chunk) = source.next_chunk()? else { break };
        if chunks.send((number, chunk)).is_err() {
            break;
        }
        number += 1;
    }
    Ok(())
}

/// A worker: evaluates chunks until the queue closes.
fn work(
    job: &Job,
    queue: &Mutex<Receiver<(usize, Chunk)>>,
    results: &SyncSender<(usize, Result<Evaluated, String>)>,
) {
    loop {
        let next = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok((number, chunk)) = next else { return };
        let evaluated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.evaluate(&chunk)))
            .unwrap_or_else(|_| Err("internal: evaluating a chunk panicked".into()));
        match chunk {
            Chunk::Lines(bytes) => crate::buffers::give(bytes),
            Chunk::Messages(messages) => crate::buffers::give(messages.into_frames()),
            Chunk::Batch(_) => {}
        }
        if results.send((number, evaluated)).is_err() {
            return;
        }
    }
}

/// Writes outputs in chunk order; after an error, keeps receiving (so no
/// worker blocks) and asks the reader to stop.
fn write(
    outputs: Receiver<(usize, Result<Evaluated, String>)>,
    mut writer: Writer,
    progress: &Progress,
    stop: &AtomicBool,
) -> Result<Summary, String> {
    let mut waiting = BTreeMap::new();
    let mut next = 0;
    let mut summary = Summary::default();
    let mut failure = None;
    for (number, evaluated) in outputs {
        waiting.insert(number, evaluated);
        while let Some(evaluated) = waiting.remove(&next) {
            next += 1;
            if failure.is_some() {
                continue;
            }
            let written = evaluated.and_then(|e| {
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
