//! What writes an input file of the matrix: a [`FormatWriter`] per input
//! format, making a [`RecordSink`] per file (`writers` finds them by name;
//! `arrow`, `avro` and `protobuf` implement them).

use std::path::Path;

use serde_json::Value;

/// Writes records in one input format.
pub trait FormatWriter {
    /// The file name's extension, which also tells `rulec eval` the format.
    fn extension(&self) -> &'static str;

    /// A sink writing records to `path`, for inputs of `contract`.
    fn create(&self, path: &Path, contract: &ir::Contract) -> Result<Box<dyn RecordSink>, String>;

    /// More flags `rulec eval` needs to read the file at `path` (Protobuf's
    /// `--proto FILE --message NAME`, for a schema written beside it).
    fn eval_args(&self, path: &Path) -> Vec<String> {
        let _ = path;
        Vec::new()
    }
}

/// Where one file's records go, in order.
pub trait RecordSink {
    fn write(&mut self, record: &Value) -> Result<(), String>;

    /// Completes the file.
    fn finish(self: Box<Self>) -> Result<(), String>;
}
