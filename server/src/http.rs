//! Connections: the accept loop, HTTP/1.1 with keep-alive and a header
//! read timeout (a client that dribbles its headers is cut off), and
//! graceful shutdown (stop accepting, let in-flight requests finish).

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::api::handle;
use crate::app::App;

/// How long shutdown waits for in-flight requests before giving up.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// Serves connections from `listener` until `stop` turns true, then drains.
pub async fn serve(listener: TcpListener, app: Arc<App>, mut stop: watch::Receiver<bool>) {
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    // Half-close: a client may shut its write side and still await the
    // answer.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(app.config.header_timeout)
        .keep_alive(true)
        .half_close(true);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _peer)) = accepted else {
                    // Out of file descriptors and the like: back off a little.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let app = app.clone();
                let service = service_fn(move |request| handle(app.clone(), request));
                let connection = builder.serve_connection(TokioIo::new(stream), service);
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    // A client that breaks off or times out is its own problem.
                    let _ = connection.await;
                });
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN_LIMIT, graceful.shutdown()).await;
}
