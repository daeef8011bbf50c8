//! The progress line on stderr, when it is a terminal: records done and
//! records per second. Nothing is drawn otherwise.

use std::io::IsTerminal;

/// Counts records as their results are written.
#[derive(Debug)]
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// A progress line on stderr if it is a terminal and `show`.
    pub fn on_stderr(show: bool) -> Progress {
        if !show || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {human_pos} records, {per_sec}, {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        Progress { bar: Some(bar) }
    }

    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    pub fn advance(&self, records: usize) {
        if let Some(bar) = &self.bar {
            bar.inc(records as u64);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
