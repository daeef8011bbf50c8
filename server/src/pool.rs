//! The evaluation pool: a fixed number of worker threads behind a bounded
//! queue.
//!
//! Evaluations never run on the async runtime's threads, so a slow one (a
//! hanging host function, a huge list) costs one worker and nothing else.
//! [`Pool::submit`] refuses at once when the queue is full (the caller
//! answers 503); a job carries its deadline, and a worker that picks up a
//! job whose caller has already given up (timed out) skips it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::Instant;

/// Work for a worker.
type Job = Box<dyn FnOnce() + Send>;

/// Why a job was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue is full.
    Full,
    /// The pool is shutting down.
    Closed,
}

/// A bounded pool of evaluation threads.
#[derive(Debug)]
pub struct Pool {
    sender: SyncSender<(Instant, Job)>,
    /// Jobs queued and not yet started.
    depth: Arc<AtomicUsize>,
    /// Workers busy with a job.
    busy: Arc<AtomicUsize>,
    workers: usize,
}

impl Pool {
    /// Starts `workers` threads sharing a queue of `capacity` jobs.
    pub fn new(workers: usize, capacity: usize) -> std::io::Result<Pool> {
        let (sender, receiver) = sync_channel::<(Instant, Job)>(capacity.max(1));
        let receiver = Arc::new(std::sync::Mutex::new(receiver));
        let depth = Arc::new(AtomicUsize::new(0));
        let busy = Arc::new(AtomicUsize::new(0));
        for k in 0..workers.max(1) {
            let (receiver, depth, busy) = (receiver.clone(), depth.clone(), busy.clone());
            std::thread::Builder::new()
                .name(format!("rulec-eval-{k}"))
                .spawn(move || work(&receiver, &depth, &busy))?;
        }
        Ok(Pool { sender, depth, busy, workers: workers.max(1) })
    }

    /// Queues `job`, to run before `deadline` (after it, the job is
    /// dropped unrun: its caller has answered already).
    pub fn submit(&self, deadline: Instant, job: impl FnOnce() + Send + 'static) -> Result<(), Refused> {
        self.depth.fetch_add(1, Ordering::Relaxed);
        match self.sender.try_send((deadline, Box::new(job))) {
            Ok(()) => Ok(()),
            Err(error) => {
                self.depth.fetch_sub(1, Ordering::Relaxed);
                Err(match error {
                    TrySendError::Full(_) => Refused::Full,
                    TrySendError::Disconnected(_) => Refused::Closed,
                })
            }
        }
    }

    /// Jobs waiting for a worker.
    pub fn queue_depth(&self) -> usize {
        self.depth.load(Ordering::Relaxed)
    }

    /// Workers running a job.
    pub fn busy(&self) -> usize {
        self.busy.load(Ordering::Relaxed)
    }

    pub fn workers(&self) -> usize {
        self.workers
    }
}

/// A worker's loop: take a job, run it unless its caller gave up.
fn work(receiver: &std::sync::Mutex<Receiver<(Instant, Job)>>, depth: &AtomicUsize, busy: &AtomicUsize) {
    loop {
        let next = match receiver.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok((deadline, job)) = next else { return };
        depth.fetch_sub(1, Ordering::Relaxed);
        if Instant::now() >= deadline {
            continue;
        }
        busy.fetch_add(1, Ordering::Relaxed);
        // A panicking job (which the engine should never produce) must not
        // take the worker with it.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        busy.fetch_sub(1, Ordering::Relaxed);
    }
}
