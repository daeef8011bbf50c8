//! The server load test behind `rulec bench --server`: a closed-loop load
//! generator on hyper's HTTP/1.1 client.
//!
//! `connections` keep-alive connections each send a request, wait for its
//! answer and send the next, round-robin over the workload's requests;
//! after a warm-up, every answer's latency (from writing the request to
//! the whole body read) is recorded for the measured seconds. The report
//! gives requests/s, p50/p99/p99.9 and the count of answers that were not
//! 2xx (503s under overload) and of transport errors.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpStream;

/// One load run's settings.
#[derive(Clone, Debug)]
pub struct LoadSettings {
    pub addr: SocketAddr,
    pub token: Option<String>,
    pub connections: usize,
    pub warmup: Duration,
    pub seconds: Duration,
    /// The request bodies, sent round-robin.
    pub bodies: Vec<Bytes>,
}

/// What one load run measured.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub label: String,
    pub connections: usize,
    pub requests: u64,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Answers with a status outside 2xx.
    pub non_2xx: u64,
    /// Of those, 503s (overload shed by the server).
    pub status_503: u64,
    /// Connections that failed (refused, reset).
    pub errors: u64,
}

/// What one connection saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    non_2xx: u64,
    status_503: u64,
    errors: u64,
}

/// Runs the load and reports it under `label`.
pub async fn run(label: &str, settings: &LoadSettings) -> LoadReport {
    let started = Instant::now();
    let measure_from = started + settings.warmup;
    let until = measure_from + settings.seconds;
    let tasks: Vec<_> = (0..settings.connections)
        .map(|k| {
            let settings = settings.clone();
            tokio::spawn(async move { connection(k, &settings, measure_from, until).await })
        })
        .collect();
    let mut total = Tally::default();
    for task in tasks {
        if let Ok(tally) = task.await {
            total.latencies_us.extend(tally.latencies_us);
            total.non_2xx += tally.non_2xx;
            total.status_503 += tally.status_503;
            total.errors += tally.errors;
        }
    }
    total.latencies_us.sort_unstable();
    let at = |p: f64| {
        let n = total.latencies_us.len();
        if n == 0 {
            return 0.0;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
        f64::from(total.latencies_us[rank.min(n) - 1])
    };
    let requests = total.latencies_us.len() as u64;
    LoadReport {
        label: label.to_string(),
        connections: settings.connections,
        requests,
        requests_per_s: requests as f64 / settings.seconds.as_secs_f64(),
        p50_us: at(50.0),
        p99_us: at(99.0),
        p999_us: at(99.9),
        non_2xx: total.non_2xx,
        status_503: total.status_503,
        errors: total.errors,
    }
}

/// One keep-alive connection's loop; reconnects after a failure.
async fn connection(k: usize, settings: &LoadSettings, measure_from: Instant, until: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut i = k;
    while Instant::now() < until {
        let Ok(stream) = TcpStream::connect(settings.addr).await else {
            tally.errors += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok((mut sender, driver)) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
        else {
            tally.errors += 1;
            continue;
        };
        tokio::spawn(driver);
        while Instant::now() < until {
            let body = settings.bodies[i % settings.bodies.len()].clone();
            i += 1;
            let mut request = Request::post("/evaluations")
                .header("host", "rulec")
                .header("content-type", "application/json");
            if let Some(token) = &settings.token {
                request = request.header("authorization", format!("Bearer {token}"));
            }
            let Ok(request) = request.body(Full::new(body)) else { break };
            let t0 = Instant::now();
            let answered = match sender.send_request(request).await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    response.into_body().collect().await.ok().map(|_| status)
                }
                Err(_) => None,
            };
            let Some(status) = answered else {
                tally.errors += 1;
                break;
            };
            if t0 >= measure_from && t0 < until {
                tally.latencies_us.push(u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX));
                if !(200..300).contains(&status) {
                    tally.non_2xx += 1;
                    if status == 503 {
                        tally.status_503 += 1;
                    }
                }
            }
        }
    }
    tally
}

/// The reports as a markdown table.
pub fn markdown(reports: &[LoadReport]) -> String {
    let mut out = String::from(
        "| run | connections | req/s | p50 | p99 | p99.9 | non-2xx (503) | errors |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let ms = |us: f64| format!("{:.2} ms", us / 1000.0);
    for r in reports {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} ({}) | {} |\n",
            r.label,
            r.connections,
            crate::harness::human(r.requests_per_s),
            ms(r.p50_us),
            ms(r.p99_us),
            ms(r.p999_us),
            r.non_2xx,
            r.status_503,
            r.errors
        ));
    }
    out
}
