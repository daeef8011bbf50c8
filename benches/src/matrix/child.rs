//! One measured child process: its wall time and its peak resident set,
//! so each cell's memory is its own.
//!
//! The peak is the child's `VmHWM` (`/proc/PID/status`), read every
//! [`POLL`] while it runs (the mark only rises, so the last reading is
//! the peak but for the last moments). `wait4`'s `ru_maxrss` is no
//! measure of it: Linux carries the parent's high-water mark into the
//! child through `fork`/`posix_spawn` and `exec`, so a child of a bench
//! that once held 100 MiB reports at least 100 MiB. It is the fallback
//! for a child too quick to be read.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// How often a running child's high-water mark is read.
const POLL: Duration = Duration::from_millis(2);

/// The peak resident set of the live process `pid` so far (`VmHWM`).
pub fn high_water_mark(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// What a child took.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub wall: Duration,
    pub peak_rss_bytes: u64,
}

/// Runs `command` to its end with no input, its output dropped and its
/// errors written to `errors`: what it took, or, if it failed, its exit
/// status and the last line of its errors.
pub fn run_cell(command: &mut Command, errors: &std::path::Path) -> Result<Measured, String> {
    let stderr =
        std::fs::File::create(errors).map_err(|e| format!("cannot create {}: {e}", errors.display()))?;
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(stderr);
    match run(command)? {
        (measured, status) if status.success() => Ok(measured),
        (_, status) => Err(format!("{status}: {}", super::last_line(errors))),
    }
}

/// Runs `command` to its end: what it took, and how it ended.
pub fn run(command: &mut Command) -> Result<(Measured, ExitStatus), String> {
    let started = Instant::now();
    let child = command.spawn().map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| "internal: a pid out of range".to_string())?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // `spawn` returns once the child runs its own program (std spawns with
    // `posix_spawn` or fork-exec and waits for the exec).
    let mut peak = high_water_mark(child.id());
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is
        // never waited on: it is dropped below, which does not wait);
        // `status` and `usage` are valid for writes.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        if reaped == 0 {
            peak = high_water_mark(child.id()).or(peak);
            std::thread::sleep(POLL);
            continue;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("cannot wait for {:?}: {error}", command.get_program()));
        }
    }
    let wall = started.elapsed();
    drop(child);
    // Linux gives `ru_maxrss` in KiB.
    let peak_rss_bytes = peak.unwrap_or_else(|| u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024);
    Ok((Measured { wall, peak_rss_bytes }, ExitStatus::from_raw(status)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_timed_and_its_memory_read() {
        // A shell that allocates about 64 MiB (a string doubled 26 times).
        let mut big = Command::new("sh");
        big.args(["-c", "x=a; i=0; while [ $i -lt 26 ]; do x=$x$x; i=$((i+1)); done; exit 3"]);
        let (measured, status) = run(&mut big).expect("sh runs");
        assert_eq!(status.code(), Some(3));
        assert!(measured.peak_rss_bytes > 64 << 20, "{measured:?}");
        let (small, _) = run(Command::new("sleep").arg("0.05")).expect("sleep runs");
        assert!(small.peak_rss_bytes < measured.peak_rss_bytes / 4, "{small:?} vs {measured:?}");
    }

    /// `ru_maxrss` would give the parent's 256 MiB to the child.
    #[test]
    fn a_child_does_not_get_its_parents_memory() {
        let held: Vec<u8> = vec![1; 256 << 20];
        let (measured, _) = run(Command::new("sleep").arg("0.2")).expect("sleep runs");
        assert!(measured.peak_rss_bytes < 64 << 20, "{measured:?}");
        assert_eq!(held.iter().step_by(4096).map(|b| usize::from(*b)).sum::<usize>(), (256 << 20) / 4096);
    }
}
