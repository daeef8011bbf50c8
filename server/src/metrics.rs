//! `/metrics`: counters kept with atomics on the request path and written
//! in Prometheus' text format on demand.
//!
//! - `rulec_requests_total{status}`: responses by status code;
//! - `rulec_request_duration_seconds`: a latency histogram;
//! - `rulec_decisions_total{contract,decision}`: evaluation outcomes;
//! - `rulec_reloads_total`, `rulec_reload_failures_total`;
//! - `rulec_queue_depth`, `rulec_workers_busy`: the evaluation pool now;
//! - `rulec_batch_records_total`, `rulec_batch_failed_records_total`:
//!   bare records answered by batches, and those of them not evaluated
//!   (invalid input, out of time); `rulec_batch_seconds_total`: the time
//!   batches took, start to end (records per second is the ratio of the
//!   two counters' rates); `rulec_batches_running`: batches now;
//! - `rulec_contract_engine{contract,engine}`: 1 for the engine each served
//!   contract runs on; `rulec_rule_set_info{revision}`: 1 for the
//!   revision serving (named by its content: replicas agree);
//!   `rulec_generation`: which set this process loaded (1 at start, one
//!   more per reload);
//! - `rulec_window_keys{contract}`, `rulec_window_evictions_total{contract}`:
//!   per served contract with windows, the keys its window state holds and
//!   those dropped because a window held `--max-window-keys`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0];

/// The status codes the server answers with, for fixed counters.
const STATUSES: [u16; 8] = [200, 400, 401, 404, 405, 413, 503, 500];

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    by_status: [AtomicU64; STATUSES.len()],
    other_status: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_us: AtomicU64,
    /// `(contract, decision)` to count; a lock per evaluated request is
    /// cheap next to the evaluation.
    decisions: Mutex<BTreeMap<(String, &'static str), u64>>,
    batch_records: AtomicU64,
    batch_failed: AtomicU64,
    batch_us: AtomicU64,
}

/// What the exposition needs besides the counters.
#[derive(Debug)]
pub struct Snapshot<'a> {
    /// The serving set's revision (from its content).
    pub revision: &'a str,
    /// Which set this process loaded: 1 at start, one more per reload.
    pub generation: u64,
    pub reloads: u64,
    pub failed_reloads: u64,
    pub queue_depth: usize,
    pub workers_busy: usize,
    pub batches_running: usize,
    /// `(contract, engine)`.
    pub engines: Vec<(&'a str, &'static str)>,
    /// Of each contract with windows, what its window state holds.
    pub windows: Vec<WindowGauges<'a>>,
}

/// What one contract's window state holds and has dropped or turned away.
#[derive(Debug)]
pub struct WindowGauges<'a> {
    pub contract: &'a str,
    pub keys: usize,
    /// Bytes held, as `--max-window-bytes` counts them.
    pub bytes: usize,
    /// Keys dropped past `--max-window-keys` or `--max-window-bytes`.
    pub evicted: u64,
    /// Records whose window read as `--max-key-records` or
    /// `--max-key-bytes`.
    pub full: u64,
}

impl Metrics {
    /// Counts a response and its latency.
    pub fn request(&self, status: u16, latency: Duration) {
        match STATUSES.iter().position(|s| *s == status) {
            Some(i) => self.by_status[i].fetch_add(1, Ordering::Relaxed),
            None => self.other_status.fetch_add(1, Ordering::Relaxed),
        };
        let seconds = latency.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us.fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }

    /// Counts an evaluation's decision.
    pub fn decision(&self, contract: &str, decision: &'static str) {
        if let Ok(mut decisions) = self.decisions.lock() {
            match decisions.get_mut(&(contract.to_string(), decision)) {
                Some(n) => *n += 1,
                None => {
                    decisions.insert((contract.to_string(), decision), 1);
                }
            }
        }
    }

    /// Counts a batch chunk's records, `failed` of them not evaluated.
    pub fn batch_records(&self, records: usize, failed: usize) {
        self.batch_records.fetch_add(records as u64, Ordering::Relaxed);
        self.batch_failed.fetch_add(failed as u64, Ordering::Relaxed);
    }

    /// Counts the time a batch took.
    pub fn batch_time(&self, took: Duration) {
        self.batch_us.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self, now: &Snapshot<'_>) -> String {
        let mut out = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        out.push_str("# HELP rulec_requests_total HTTP responses by status code.\n# TYPE rulec_requests_total counter\n");
        for (i, status) in STATUSES.iter().enumerate() {
            let _ = writeln!(out, "rulec_requests_total{{status=\"{status}\"}} {}", load(&self.by_status[i]));
        }
        let _ = writeln!(out, "rulec_requests_total{{status=\"other\"}} {}", load(&self.other_status));
        out.push_str(
            "# HELP rulec_request_duration_seconds Time from request to response.\n\
             # TYPE rulec_request_duration_seconds histogram\n",
        );
        let mut cumulative = 0;
        for (i, bound) in BUCKETS.iter().enumerate() {
            cumulative += load(&self.buckets[i]);
            let _ = writeln!(out, "rulec_request_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = load(&self.latency_count);
        let _ = writeln!(out, "rulec_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ =
            writeln!(out, "rulec_request_duration_seconds_sum {}", load(&self.latency_sum_us) as f64 / 1e6);
        let _ = writeln!(out, "rulec_request_duration_seconds_count {count}");
        out.push_str("# HELP rulec_decisions_total Evaluations by contract and decision.\n# TYPE rulec_decisions_total counter\n");
        if let Ok(decisions) = self.decisions.lock() {
            for ((contract, decision), n) in decisions.iter() {
                let _ = writeln!(
                    out,
                    "rulec_decisions_total{{contract=\"{}\",decision=\"{decision}\"}} {n}",
                    escape(contract)
                );
            }
        }
        let gauges: [(&str, &str, &str, u64); 8] = [
            (
                "rulec_batch_records_total",
                "counter",
                "Bare records answered by batches.",
                load(&self.batch_records),
            ),
            (
                "rulec_batch_failed_records_total",
                "counter",
                "Batch records not evaluated (invalid input, out of time).",
                load(&self.batch_failed),
            ),
            (
                "rulec_batches_running",
                "gauge",
                "Batches of bare records running now.",
                now.batches_running as u64,
            ),
            ("rulec_reloads_total", "counter", "Rule set reloads that were swapped in.", now.reloads),
            (
                "rulec_reload_failures_total",
                "counter",
                "Reloads that failed; the old set kept serving.",
                now.failed_reloads,
            ),
            ("rulec_queue_depth", "gauge", "Evaluations waiting for a worker.", now.queue_depth as u64),
            ("rulec_workers_busy", "gauge", "Workers evaluating now.", now.workers_busy as u64),
            (
                "rulec_generation",
                "gauge",
                "Which rule set this process serves: 1 at start, one more per reload.",
                now.generation,
            ),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        let _ = writeln!(
            out,
            "# HELP rulec_rule_set_info The revision of the rule set serving, from its content.\n\
             # TYPE rulec_rule_set_info gauge\nrulec_rule_set_info{{revision=\"{}\"}} 1",
            now.revision
        );
        let seconds = load(&self.batch_us) as f64 / 1e6;
        let _ = writeln!(
            out,
            "# HELP rulec_batch_seconds_total Time batches took, start to end.\n\
             # TYPE rulec_batch_seconds_total counter\nrulec_batch_seconds_total {seconds}"
        );
        out.push_str("# HELP rulec_contract_engine The engine each served contract runs on.\n# TYPE rulec_contract_engine gauge\n");
        for (contract, engine) in &now.engines {
            let _ = writeln!(
                out,
                "rulec_contract_engine{{contract=\"{}\",engine=\"{engine}\"}} 1",
                escape(contract)
            );
        }
        let windows: [WindowMetric; 4] = [
            ("rulec_window_keys", "gauge", "Keys held by a contract's windows.", |w| w.keys as u64),
            (
                "rulec_window_bytes",
                "gauge",
                "Bytes held by a contract's windows, as --max-window-bytes counts them.",
                |w| w.bytes as u64,
            ),
            (
                "rulec_window_evictions_total",
                "counter",
                "Keys dropped because a window held --max-window-keys or --max-window-bytes.",
                |w| w.evicted,
            ),
            (
                "rulec_window_full_total",
                "counter",
                "Records whose window read as an error because one key held --max-key-records or --max-key-bytes.",
                |w| w.full,
            ),
        ];
        for (name, kind, help, value) in windows {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for gauges in &now.windows {
                let _ = writeln!(out, "{name}{{contract=\"{}\"}} {}", escape(gauges.contract), value(gauges));
            }
        }
        out
    }
}

/// One metric of window state: its name, type, help and value.
type WindowMetric = (&'static str, &'static str, &'static str, fn(&WindowGauges<'_>) -> u64);

/// A label value with `\`, `"` and newlines escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
