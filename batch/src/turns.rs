//! Turns in input order: the part of a chunk's work that must follow the
//! chunks before it (entering its records into a contract's windows)
//! waits for its [`Turn`], while the rest (parsing, evaluating rules)
//! runs on any worker at once.
//!
//! Chunks are numbered from 0 in input order. Chunk `n`'s turn comes once
//! every chunk before it has [`Turns::finish`]ed, which each does when its
//! ordered part is done or when it stops before reaching it (an error, a
//! panic): a chunk that fails never holds up the ones after it.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The turns of one run's chunks.
#[derive(Debug, Default)]
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The chunk whose turn it is.
    next: u64,
    /// Chunks after `next` that finished already.
    finished: BTreeSet<u64>,
}

/// Chunk `chunk`'s place in its run's [`Turns`].
#[derive(Clone, Copy, Debug)]
pub struct Turn<'t> {
    pub turns: &'t Turns,
    pub chunk: u64,
}

impl Turns {
    /// Runs `ordered` once every chunk before `chunk` finished, then
    /// finishes `chunk`.
    pub fn in_turn<T>(&self, chunk: u64, ordered: impl FnOnce() -> T) -> T {
        let mut state = self.lock();
        while state.next < chunk {
            state = self.changed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        drop(state);
        let done = ordered();
        self.finish(chunk);
        done
    }

    /// Chunk `chunk` no longer needs its turn (it had it, or it stopped);
    /// finishing a chunk twice is harmless.
    pub fn finish(&self, chunk: u64) {
        {
            let mut guard = self.lock();
            if chunk < guard.next {
                return;
            }
            let state = &mut *guard;
            state.finished.insert(chunk);
            while state.finished.remove(&state.next) {
                state.next += 1;
            }
        }
        self.changed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is two numbers and a set, consistent after every
        // update: a panic elsewhere leaves nothing half-done.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Turn<'_> {
    /// Runs `ordered` in this chunk's turn.
    pub fn run<T>(self, ordered: impl FnOnce() -> T) -> T {
        self.turns.in_turn(self.chunk, ordered)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn chunks_take_their_turns_in_order_whatever_thread_runs_them() {
        let turns = Arc::new(Turns::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = (0..8u64)
            .rev()
            .map(|chunk| {
                let (turns, seen) = (turns.clone(), seen.clone());
                std::thread::spawn(move || turns.in_turn(chunk, || seen.lock().unwrap().push(chunk)))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*seen.lock().unwrap(), (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn a_chunk_that_stops_before_its_turn_lets_the_next_go() {
        let turns = Turns::default();
        turns.finish(1);
        turns.finish(0);
        turns.finish(0);
        assert_eq!(turns.in_turn(2, || "ran"), "ran");
        assert_eq!(turns.lock().next, 3);
        assert!(turns.lock().finished.is_empty());
    }
}
