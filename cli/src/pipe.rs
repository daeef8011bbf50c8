//! A reader that stops reading ends `rulec` as it ends `cat` or `git log`:
//! `rulec sql ... | head` stops at the first write after `head` exits,
//! killed by SIGPIPE, with nothing on stderr (exit status 141 in a shell).
//!
//! Rust ignores SIGPIPE, so each writer saw the broken pipe as an error of
//! its own and said so in its own words ("cannot write the results: Broken
//! pipe", "Csv error: Broken pipe", "Io error: Broken pipe"); nothing is
//! wrong with the run, so nothing is said. Only the commands whose product
//! is what they write take the default action back: the server, the
//! language server, the cluster and the benches keep Rust's, and see a
//! closed connection as an error to handle. Sockets are written with
//! `MSG_NOSIGNAL` by the standard library (and so by tokio), so a closed
//! socket never raises the signal either way.

/// Takes back the default action of SIGPIPE: a write to a pipe nobody reads
/// ends the process (docs/decisions.md, "A closed stdout").
#[allow(unsafe_code)]
pub fn end_when_the_reader_stops() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_DFL` installs no handler of ours; it is
    // called on the main thread at start, before any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
