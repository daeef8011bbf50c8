//! A 64 MiB NDJSON body, sent chunked and read back as it streams, is
//! answered line for line while the server's memory stays far below the
//! body's size. Memory is measured by a counting allocator (the peak of
//! live bytes in this process, server and client together), so this file
//! holds one test: nothing else may allocate meanwhile.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{TestServer, example_requests, expected, upload};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only
// the counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const BODY_BYTES: usize = 64 << 20;

/// Each request line padded with trailing blanks to this length, so the
/// body is large in few evaluations (the results are the same).
const LINE_BYTES: usize = 16 * 1024;

#[test]
fn a_large_ndjson_body_streams_in_bounded_memory() {
    let server = TestServer::start(|config| config.max_body = 2 * BODY_BYTES);
    let requests = example_requests("shop.orders.check");
    let lines: Vec<String> = requests.iter().map(|line| format!("{line:LINE_BYTES$}\n")).collect();
    let want: Vec<String> = requests
        .iter()
        .map(|line| String::from_utf8(expected("shop.orders.check", line)).expect("UTF-8"))
        .collect();
    let count = BODY_BYTES / LINE_BYTES;
    let (mut sender, mut answer) = upload(server.addr, "/evaluations", "application/x-ndjson");
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let writer = std::thread::spawn(move || {
        // Pieces that do not fall on line ends, as a network would cut them.
        let mut piece = Vec::with_capacity(70_000);
        for k in 0..count {
            piece.extend_from_slice(lines[k % lines.len()].as_bytes());
            if piece.len() >= 65_000 {
                sender.send(&piece[..60_001]).expect("sent");
                piece.drain(..60_001);
            }
        }
        sender.send(&piece).expect("sent");
        sender.finish().expect("finished");
    });
    assert_eq!(answer.head(), 200);
    let mut answered = 0;
    while let Some(line) = answer.next_line() {
        assert_eq!(line, want[answered % want.len()], "line {answered}");
        answered += 1;
    }
    writer.join().expect("the writer");
    assert_eq!(answered, count, "one result per request line");
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert!(peak < BODY_BYTES / 8, "{peak} bytes allocated at the peak for a {BODY_BYTES}-byte body");
}
