//! One measured child process: its wall time and its peak resident set,
//! read from the kernel when it is reaped (`wait4`'s `ru_maxrss`), so
//! each cell's memory is its own.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// What a child took.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub wall: Duration,
    pub peak_rss_bytes: u64,
    pub status: ExitStatus,
}

/// Runs `command` to its end.
pub fn run(command: &mut Command) -> Result<Measured, String> {
    let started = Instant::now();
    let child = command.spawn().map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| "internal: a pid out of range".to_string())?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is
        // never waited on: it is dropped below, which does not wait);
        // `status` and `usage` are valid for writes.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("cannot wait for {:?}: {error}", command.get_program()));
        }
    }
    let wall = started.elapsed();
    drop(child);
    // Linux gives `ru_maxrss` in KiB.
    let peak_rss_bytes = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    Ok(Measured { wall, peak_rss_bytes, status: ExitStatus::from_raw(status) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_timed_and_its_memory_read() {
        // A shell that allocates about 64 MiB (a string doubled 26 times).
        let mut big = Command::new("sh");
        big.args(["-c", "x=a; i=0; while [ $i -lt 26 ]; do x=$x$x; i=$((i+1)); done; exit 3"]);
        let measured = run(&mut big).expect("sh runs");
        assert_eq!(measured.status.code(), Some(3));
        assert!(measured.peak_rss_bytes > 64 << 20, "{measured:?}");
        let small = run(Command::new("true").arg("")).expect("true runs");
        assert!(small.peak_rss_bytes < measured.peak_rss_bytes / 4, "{small:?} vs {measured:?}");
    }
}
