//! rulec's batch engine: records from a file or a stream, evaluated on
//! every core, results written in input order, memory flat whatever the
//! input's size.
//!
//! - [`source`]: where records come from, a [`Chunk`](source::Chunk) at a
//!   time (NDJSON lines, JSON array elements as lines, Protobuf messages
//!   as JSON lines; Arrow IPC, Parquet and Avro as Arrow batches);
//! - [`columns`]: Arrow batches straight into input slots, the schema
//!   matched once; [`json_rows`]: Arrow rows as JSON records, for the
//!   error of an invalid row and for kept columns;
//! - [`job`]: one contract's evaluation of a chunk into its results;
//! - [`output`]: NDJSON lines or Arrow columns, and the writer;
//! - [`pipeline`]: the reader, the workers and the ordered writer;
//!   [`turns`]: chunks entering a contract's windows in input order.
//!
//! The CLI (`rulec eval --input`), the server and the benches use it; it
//! knows nothing of either (it depends on `runtime`, never on `cli` or
//! `server`).

#![forbid(unsafe_code)]

pub mod buffers;
pub mod columns;
pub mod format;
pub mod job;
pub mod json_rows;
pub mod output;
pub mod pipeline;
pub mod progress;
pub mod source;
pub mod turns;

pub use format::{InputFormat, OutputFormat};
pub use job::{Job, Settings};
pub use pipeline::{Summary, run};
pub use progress::Progress;

/// The parts `--fields` names (comma-separated: `decision`, `reasons`,
/// `findings`, `effects`, `errors`; the decision is always there).
pub fn result_parts(list: &str) -> Result<runtime::result::Parts, String> {
    let mut parts = runtime::result::Parts::NONE;
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let part = runtime::result::Parts::named(name).ok_or_else(|| {
            format!("unknown part `{name}` (the parts are decision, reasons, findings, effects, errors)")
        })?;
        parts = parts.with(part);
    }
    Ok(parts)
}
