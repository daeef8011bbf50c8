//! The formats of batch input and output, and how a file's name tells
//! them when no flag does (INTERFACES.md, Batch).

use std::path::Path;

/// How input records are encoded (`--input-format`; each variant's doc is
/// its help).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum InputFormat {
    /// One JSON object per line (`.ndjson`, `.jsonl`).
    Ndjson,
    /// Apache Arrow IPC, file or stream format (`.arrow`, `.arrows`).
    Arrow,
    /// Length-delimited Protobuf messages (`.pb`), of the type `--proto` and `--message` name.
    Protobuf,
    /// One JSON array of records, streamed (`.json`).
    Json,
    /// Apache Avro object container file (`.avro`).
    Avro,
    /// Apache Parquet (`.parquet`).
    Parquet,
}

impl InputFormat {
    pub const ALL: [InputFormat; 6] = [
        InputFormat::Ndjson,
        InputFormat::Json,
        InputFormat::Arrow,
        InputFormat::Avro,
        InputFormat::Protobuf,
        InputFormat::Parquet,
    ];

    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Ndjson => "ndjson",
            InputFormat::Arrow => "arrow",
            InputFormat::Protobuf => "protobuf",
            InputFormat::Json => "json",
            InputFormat::Avro => "avro",
            InputFormat::Parquet => "parquet",
        }
    }

    /// The format a file's extension names; NDJSON for any other name.
    pub fn of_path(path: &Path) -> InputFormat {
        match extension(path).as_deref() {
            Some("arrow" | "arrows") => InputFormat::Arrow,
            Some("pb") => InputFormat::Protobuf,
            Some("json") => InputFormat::Json,
            Some("avro") => InputFormat::Avro,
            Some("parquet") => InputFormat::Parquet,
            _ => InputFormat::Ndjson,
        }
    }
}

/// How results are written (`--output-format`; each variant's doc is its
/// help).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// One JSON result per line, as `rulec eval` prints.
    Ndjson,
    /// Apache Arrow IPC: the file format for a `.arrow` file, else the stream format.
    Arrow,
}

impl OutputFormat {
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Ndjson => "ndjson",
            OutputFormat::Arrow => "arrow",
        }
    }

    /// The format a file's extension names: `.arrow` and `.arrows` are
    /// Arrow, anything else NDJSON.
    pub fn of_path(path: &Path) -> OutputFormat {
        match extension(path).as_deref() {
            Some("arrow" | "arrows") => OutputFormat::Arrow,
            _ => OutputFormat::Ndjson,
        }
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase)
}
