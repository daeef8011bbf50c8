//! Calls into code that may panic on damaged or hostile input (arrow-rs
//! asserts on some offsets past a buffer's end; tract's ONNX reader
//! indexes maps by names the file gives): a panic inside [`contained`]
//! becomes an error, and its message is not printed. The batch readers
//! and the model runtime share this one.
//!
//! The process's panic hook is wrapped once: on a thread inside
//! [`contained`] it stays silent, elsewhere it is the previous hook, so
//! concurrent callers never swap hooks under each other.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

static SILENCE_INSIDE: Once = Once::new();

/// Runs `f`; a panic inside it becomes `Err("{what}: {message}")`.
pub fn contained<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    SILENCE_INSIDE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !INSIDE.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = INSIDE.with(|inside| inside.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|inside| inside.set(outer));
    result.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("malformed data");
        Err(format!("{what}: {message}"))
    })
}

#[cfg(test)]
mod tests {
    use super::contained;

    #[test]
    fn a_panic_becomes_an_error_with_its_message() {
        let panicked: Result<(), String> = contained("reading", || panic!("no entry for `{}`", "y"));
        assert_eq!(panicked, Err("reading: no entry for `y`".to_string()));
        assert_eq!(contained("reading", || Ok(1)), Ok(1));
        assert_eq!(contained::<()>("reading", || Err("refused".to_string())), Err("refused".to_string()));
    }
}
