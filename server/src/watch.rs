//! Reload triggers: changes in the rules folder (notify) and SIGHUP. Bursts
//! of events (an editor writing a file, a `git checkout`) are coalesced:
//! after an event the folder must stay quiet for a moment, then one reload
//! runs, on a blocking thread, off the request path.

use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::rules::Rules;

/// How long the folder must stay quiet before a reload.
const QUIET: Duration = Duration::from_millis(50);

/// Keeps the folder watcher alive; reloads stop when it is dropped.
#[derive(Debug)]
pub struct Reloader {
    _watcher: Option<notify::RecommendedWatcher>,
}

/// Starts reloading `rules` on folder changes (when `watch_folder`) and on
/// SIGHUP.
pub fn start(rules: Arc<Rules>, dir: &std::path::Path, watch_folder: bool) -> Result<Reloader, String> {
    let (sender, mut receiver) = mpsc::channel::<()>(1);
    let watcher = if watch_folder {
        let events = sender.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if event.is_ok_and(|e| !e.kind.is_access()) {
                let _ = events.try_send(());
            }
        })
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        watcher
            .watch(dir, RecursiveMode::Recursive)
            .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        Some(watcher)
    } else {
        None
    };
    #[cfg(unix)]
    {
        let hangups = sender.clone();
        let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .map_err(|e| format!("cannot listen for SIGHUP: {e}"))?;
        tokio::spawn(async move {
            while signal.recv().await.is_some() {
                let _ = hangups.try_send(());
            }
        });
    }
    tokio::spawn(async move {
        while receiver.recv().await.is_some() {
            // Wait for the folder to settle, swallowing the burst.
            loop {
                match tokio::time::timeout(QUIET, receiver.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
            let rules = rules.clone();
            let outcome = tokio::task::spawn_blocking(move || rules.reload()).await;
            match outcome {
                Ok(Ok(set)) => tracing::info!(
                    target: "rulec::reload",
                    revision = %set.revision,
                    generation = set.generation,
                    "rules reloaded"
                ),
                Ok(Err(message)) => {
                    tracing::error!(target: "rulec::reload", error = %message, "reload failed; the previous rules keep serving")
                }
                Err(panic) => tracing::error!(target: "rulec::reload", error = %panic, "reload panicked"),
            }
        }
    });
    Ok(Reloader { _watcher: watcher })
}
