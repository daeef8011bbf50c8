//! The evaluation pool: a fixed number of worker threads behind a bounded
//! queue.
//!
//! Evaluations never run on the async runtime's threads, so a slow one (a
//! hanging host function, a huge list) costs one worker and nothing else.
//! [`Pool::submit`] refuses at once when the queue is full (the caller
//! answers 503); a job carries its deadline, and a worker that picks up a
//! job whose caller has already given up (timed out) skips it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

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
    /// Per worker: when its job started, in microseconds since `epoch`
    /// plus one, or 0 when idle.
    started: Arc<[AtomicU64]>,
    epoch: Instant,
    workers: usize,
}

impl Pool {
    /// Starts `workers` threads sharing a queue of `capacity` jobs.
    pub fn new(workers: usize, capacity: usize) -> std::io::Result<Pool> {
        let (sender, receiver) = sync_channel::<(Instant, Job)>(capacity.max(1));
        let receiver = Arc::new(std::sync::Mutex::new(receiver));
        let depth = Arc::new(AtomicUsize::new(0));
        let busy = Arc::new(AtomicUsize::new(0));
        let started: Arc<[AtomicU64]> = (0..workers.max(1)).map(|_| AtomicU64::new(0)).collect();
        let epoch = Instant::now();
        for k in 0..workers.max(1) {
            let (receiver, depth, busy, started) =
                (receiver.clone(), depth.clone(), busy.clone(), started.clone());
            let worker = Worker { depth, busy, started, index: k, epoch };
            std::thread::Builder::new()
                .name(format!("rulec-eval-{k}"))
                .spawn(move || worker.work(&receiver))?;
        }
        Ok(Pool { sender, depth, busy, started, epoch, workers: workers.max(1) })
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

    /// Whether every worker has been running its job for longer than
    /// `limit` (evaluations stop at their deadline, so only a host function
    /// that does not return can do that).
    pub fn stuck(&self, limit: Duration) -> bool {
        let now = self.epoch.elapsed().as_micros() as u64 + 1;
        let limit = limit.as_micros() as u64;
        self.started.iter().all(|started| {
            let at = started.load(Ordering::Relaxed);
            at != 0 && now.saturating_sub(at) > limit
        })
    }
}

/// What a worker thread shares with the pool.
struct Worker {
    depth: Arc<AtomicUsize>,
    busy: Arc<AtomicUsize>,
    started: Arc<[AtomicU64]>,
    index: usize,
    epoch: Instant,
}

impl Worker {
    /// A worker's loop: take a job, run it unless its caller gave up.
    fn work(&self, receiver: &std::sync::Mutex<Receiver<(Instant, Job)>>) {
        loop {
            let next = match receiver.lock() {
                Ok(receiver) => receiver.recv(),
                Err(_) => return,
            };
            let Ok((deadline, job)) = next else { return };
            self.depth.fetch_sub(1, Ordering::Relaxed);
            if Instant::now() >= deadline {
                continue;
            }
            self.busy.fetch_add(1, Ordering::Relaxed);
            let started = self.epoch.elapsed().as_micros() as u64 + 1;
            self.started[self.index].store(started, Ordering::Relaxed);
            // A panicking job (which the engine should never produce) must
            // not take the worker with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            self.started[self.index].store(0, Ordering::Relaxed);
            self.busy.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_is_stuck_while_every_worker_runs_past_the_limit() {
        let pool = Pool::new(1, 4).expect("a pool");
        let far = Instant::now() + Duration::from_secs(60);
        assert!(!pool.stuck(Duration::from_millis(20)));
        pool.submit(far, || std::thread::sleep(Duration::from_millis(300))).expect("queued");
        std::thread::sleep(Duration::from_millis(100));
        assert!(pool.stuck(Duration::from_millis(20)), "one worker, busy for 100 ms");
        assert!(!pool.stuck(Duration::from_secs(10)), "not past a longer limit");
        std::thread::sleep(Duration::from_millis(400));
        assert!(!pool.stuck(Duration::from_millis(20)), "idle again");
    }
}
