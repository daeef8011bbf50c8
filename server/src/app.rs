//! What every request handler shares: the server's state ([`App`]: its
//! configuration, the served rules, the evaluation pool, the metrics), what
//! the access log records of a request ([`Logged`]), and how a handler
//! runs evaluations on the pool with the request's deadline
//! ([`on_pool`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

use tokio::sync::oneshot;

use crate::config::Config;
use crate::metrics::Metrics;
use crate::pool::{Pool, Refused};
use crate::rules::Rules;

/// Everything a request handler needs.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub rules: Arc<Rules>,
    pub pool: Pool,
    pub metrics: Metrics,
    /// Set when shutdown begins: `/readyz` answers 503.
    pub draining: AtomicBool,
    /// Batches of bare records running (at most `max_batches`).
    pub batches: AtomicUsize,
}

/// What the access log records about a request.
#[derive(Debug, Default)]
pub(crate) struct Logged {
    pub(crate) contract: Option<String>,
    pub(crate) revision: Option<Arc<str>>,
    pub(crate) decision: Option<&'static str>,
}

/// Why a job gave no answer.
pub(crate) enum NoAnswer {
    Full,
    TimedOut,
}

/// How long past the deadline the caller waits for the worker: a worker's
/// evaluations stop at the deadline (`runtime::semantics::budget`, within one fuel
/// step, or after a model's bounded run), so its answer comes within this
/// unless the machine is stalled.
const ANSWER_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs `work` on the pool and waits for it (queueing included). `work`
/// is given the deadline, which its evaluations honour, so the worker is
/// free again when the caller stops waiting. Only a result finished by the
/// deadline is answered; any other is given to `unanswered` (which
/// withdraws what it entered into windows) before the caller answers 503,
/// so a client that retries at once finds no trace of it. A worker that
/// overruns the grace gives its result to `unanswered` itself: the caller
/// closes the channel and takes a result that made it in, so each result
/// is either answered or given to `unanswered`, never both or neither.
pub(crate) async fn on_pool<T: Send + 'static>(
    app: &App,
    work: impl FnOnce(Instant) -> T + Send + 'static,
    unanswered: impl Fn(T) + Copy + Send + 'static,
) -> Result<T, NoAnswer> {
    let deadline = Instant::now() + app.config.evaluation_timeout;
    let (sender, mut receiver) = oneshot::channel::<(Instant, T)>();
    let job = move || {
        let result = work(deadline);
        if let Err((_, result)) = sender.send((Instant::now(), result)) {
            unanswered(result);
        }
    };
    match app.pool.submit(deadline, job) {
        Ok(()) => {}
        Err(Refused::Full | Refused::Closed) => return Err(NoAnswer::Full),
    }
    let finished = match tokio::time::timeout_at((deadline + ANSWER_GRACE).into(), &mut receiver).await {
        Ok(Ok(finished)) => finished,
        // Dropped unrun (past its deadline).
        Ok(Err(_)) => return Err(NoAnswer::TimedOut),
        Err(_) => {
            receiver.close();
            receiver.try_recv().map_err(|_| NoAnswer::TimedOut)?
        }
    };
    match finished {
        (at, result) if at <= deadline => Ok(result),
        (_, result) => {
            unanswered(result);
            Err(NoAnswer::TimedOut)
        }
    }
}

/// Counts each `(contract, decision)` in the metrics.
pub(crate) fn count_decisions(app: &App, decisions: &[(String, &'static str)]) {
    for (contract, decision) in decisions {
        app.metrics.decision(contract, decision);
    }
}
