//! Byte buffers a run hands around (an NDJSON chunk read, a chunk's
//! result lines) and gets back for reuse: a freed multi-megabyte buffer
//! goes back to the kernel, which hands the next one out zeroed page by
//! page, and that cost more than parsing the records in it.

use std::sync::{Mutex, OnceLock};

/// Buffers kept for reuse: enough for the chunks in flight.
const KEPT: usize = 32;

static POOL: OnceLock<Mutex<Vec<Vec<u8>>>> = OnceLock::new();

fn pool() -> &'static Mutex<Vec<Vec<u8>>> {
    POOL.get_or_init(|| Mutex::new(Vec::new()))
}

/// An empty buffer with room for `capacity` bytes: the smallest kept
/// one that has the room, else the largest kept one, grown (the kept
/// buffers are of two sizes, input blocks and pieces of results, and
/// growing one into the other's size would touch fresh pages again).
pub fn take(capacity: usize) -> Vec<u8> {
    let mut buffer =
        pool().lock().ok().and_then(|mut kept| best_fit(&mut kept, capacity)).unwrap_or_default();
    buffer.clear();
    buffer.reserve(capacity);
    buffer
}

fn best_fit(kept: &mut Vec<Vec<u8>>, capacity: usize) -> Option<Vec<u8>> {
    let roomy =
        kept.iter().enumerate().filter(|(_, b)| b.capacity() >= capacity).min_by_key(|(_, b)| b.capacity());
    let index = match roomy {
        Some((index, _)) => index,
        None => kept.iter().enumerate().max_by_key(|(_, b)| b.capacity())?.0,
    };
    Some(kept.swap_remove(index))
}

/// Gives `buffer` back for reuse.
pub fn give(buffer: Vec<u8>) {
    if buffer.capacity() == 0 {
        return;
    }
    if let Ok(mut kept) = pool().lock()
        && kept.len() < KEPT
    {
        kept.push(buffer);
    }
}
