//! Calls into format readers that may panic on damaged input (arrow-rs
//! asserts on some offsets past a buffer's end): a panic inside
//! [`contained`] becomes an error, and its message is not printed.
//!
//! The process's panic hook is wrapped once: on a thread inside
//! [`contained`] it stays silent, elsewhere it is the previous hook. So
//! concurrent callers never swap hooks under each other.

use std::cell::Cell;
use std::sync::Once;

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

/// Runs `f`; a panic inside it becomes `Err` with `what` and the panic's
/// message.
pub fn contained<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !INSIDE.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = INSIDE.with(|inside| inside.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    INSIDE.with(|inside| inside.set(outer));
    result.unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("malformed data");
        Err(format!("{what}: {reason}"))
    })
}
