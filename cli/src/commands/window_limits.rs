//! The window state bounds of `rulec eval` and `rulec serve` (SIGNALS.md,
//! "Windows"), one set of flags for both: each bound is a positive number,
//! its default [`WindowLimits::DEFAULT`]'s.

use runtime::window::WindowLimits;

const DEFAULT: WindowLimits = WindowLimits::DEFAULT;

/// Bounds on each window's state.
#[derive(clap::Args, Clone, Copy, Debug)]
#[command(next_help_heading = "Window state")]
pub struct WindowArgs {
    /// The most keys each window holds; past it the least recently seen key
    /// is dropped (counted in /metrics).
    #[arg(long, value_name = "N", default_value_t = default(DEFAULT.keys), value_parser = positive)]
    max_window_keys: u64,
    /// The most bytes each window's keys and records hold in all; past it
    /// the least recently seen keys are dropped (counted in /metrics).
    #[arg(long, value_name = "BYTES", default_value_t = default(DEFAULT.bytes), value_parser = positive)]
    max_window_bytes: u64,
    /// The most records one key of a window holds; a record past it does not
    /// enter, and reading its window (or one that reaches it) is an error.
    #[arg(long, value_name = "N", default_value_t = default(DEFAULT.key_records), value_parser = positive)]
    max_key_records: u64,
    /// The most bytes one key of a window takes, the key itself included; a
    /// record past it does not enter, and reading its window is an error.
    #[arg(long, value_name = "BYTES", default_value_t = default(DEFAULT.key_bytes), value_parser = positive)]
    max_key_bytes: u64,
}

impl WindowArgs {
    pub fn limits(&self) -> WindowLimits {
        let size = |n: u64| Some(usize::try_from(n).unwrap_or(usize::MAX));
        WindowLimits {
            keys: size(self.max_window_keys),
            bytes: size(self.max_window_bytes),
            key_records: size(self.max_key_records),
            key_bytes: size(self.max_key_bytes),
        }
    }
}

/// A bound: a whole number of at least 1 (0 would hold nothing, or be
/// taken as 1: neither is what anyone means).
fn positive(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("a bound must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("a bound must be a whole number of at least 1".to_string()),
    }
}

fn default(bound: Option<usize>) -> u64 {
    bound.map_or(u64::MAX, |n| n as u64)
}
