//! Batch evaluation: `rulec eval TARGET --input FILE [--channel C]`.
//!
//! Each line of the input is one bare input record (NDJSON), or each row
//! of an Arrow IPC file ([`crate::arrow_input`], which hands the rows on
//! as the same JSON records). Records are read in chunks, each chunk split
//! among worker threads, and results written in input order before the
//! next chunk is read: memory stays flat whatever the input size. A
//! progress bar goes to stderr when it is a terminal.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use runtime::Contract;

use crate::arrow_input::ArrowRecords;
use crate::targets::Loaded;
use crate::{Failure, Outcome};

/// Lines per chunk: enough to keep every thread busy, little memory.
const CHUNK_LINES: usize = 16 * 1024;

/// How batch input records are encoded.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum InputFormat {
    /// One JSON object per line.
    Ndjson,
    /// Apache Arrow IPC, file or stream format (`.arrow`, `.arrows`).
    Arrow,
}

pub struct Settings {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub channel: Option<String>,
    pub threads: Option<usize>,
    pub format: Option<InputFormat>,
}

pub fn run(loaded: &Loaded, settings: &Settings) -> Outcome {
    let [contract] = loaded.contracts.as_slice() else {
        return Err(Failure::Usage(format!(
            "batch mode evaluates one contract; the target holds {}",
            loaded.contracts.len()
        )));
    };
    let format = settings.format.unwrap_or(
        if settings.input.extension().is_some_and(|e| e == "arrow" || e == "arrows") {
            InputFormat::Arrow
        } else {
            InputFormat::Ndjson
        },
    );
    let channel = records_channel(contract, settings.channel.as_deref())?;
    let mut source = Source::open(&settings.input, format).map_err(Failure::Usage)?;
    let mut writer: Box<dyn Write> = match &settings.output {
        Some(path) => Box::new(BufWriter::with_capacity(
            1 << 20,
            File::create(path)
                .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))?,
        )),
        None => Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout().lock())),
    };
    let threads = settings
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let progress = source.progress_bar();
    let mut all_valid = true;
    let mut lines: Vec<String> = Vec::with_capacity(CHUNK_LINES);
    loop {
        let read = source.next_chunk(&mut lines).map_err(Failure::Usage)?;
        if lines.is_empty() {
            break;
        }
        let (output, valid) = evaluate_chunk(contract, channel, &lines, threads);
        all_valid &= valid;
        writer.write_all(&output).map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
        progress.inc(read);
    }
    writer.flush().map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
    progress.finish_and_clear();
    if all_valid { Ok(()) } else { Err(Failure::Reported) }
}

/// The channel of every record, checked before any input is read:
/// `--channel`, which may be left out only when the contract declares no
/// channels.
fn records_channel<'a>(contract: &Contract, channel: Option<&'a str>) -> Result<Option<&'a str>, Failure> {
    let declared = &contract.ir().channels;
    if channel.is_none() && !declared.is_empty() {
        return Err(Failure::Usage(format!(
            "--channel is required: the contract declares channels ({})",
            declared.join(", ")
        )));
    }
    contract.context(channel, None, None).map_err(|e| {
        let messages: Vec<String> = e.details.iter().map(|d| d.message.clone()).collect();
        Failure::Usage(format!("--channel: {}", messages.join("; ")))
    })?;
    Ok(channel)
}

/// Where batch records come from.
enum Source {
    /// NDJSON, and the file's size for the progress bar.
    Lines(BufReader<File>, u64),
    Arrow(ArrowRecords),
}

impl Source {
    fn open(path: &Path, format: InputFormat) -> Result<Source, String> {
        if format == InputFormat::Arrow {
            return ArrowRecords::open(path).map(Source::Arrow);
        }
        let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Source::Lines(BufReader::with_capacity(1 << 20, file), size))
    }

    /// Replaces `lines` with the next chunk of records (none at the end);
    /// returns the progress made: bytes of NDJSON, or Arrow rows.
    fn next_chunk(&mut self, lines: &mut Vec<String>) -> Result<u64, String> {
        match self {
            Source::Lines(reader, _) => {
                read_chunk(reader, lines).map(|n| n as u64).map_err(|e| format!("cannot read input: {e}"))
            }
            Source::Arrow(records) => {
                records.next_chunk(lines, CHUNK_LINES)?;
                Ok(lines.len() as u64)
            }
        }
    }

    /// Bytes of a file of known size, or a count of records.
    fn progress_bar(&self) -> indicatif::ProgressBar {
        let (length, template) = match self {
            Source::Lines(_, size) => (Some(*size), "{bar:40} {bytes}/{total_bytes} {per_sec} eta {eta}"),
            Source::Arrow(_) => (None, "{spinner} {human_pos} records {per_sec}"),
        };
        let progress =
            indicatif::ProgressBar::with_draw_target(length, indicatif::ProgressDrawTarget::stderr());
        progress.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        progress
    }
}

/// Reads up to a chunk of lines; returns the bytes read.
fn read_chunk(reader: &mut impl BufRead, lines: &mut Vec<String>) -> std::io::Result<usize> {
    lines.clear();
    let mut bytes = 0;
    while lines.len() < CHUNK_LINES {
        let mut line = String::new();
        let n = reader.read_line(&mut line)?;
        if n == 0 {
            break;
        }
        bytes += n;
        if !line.trim().is_empty() {
            lines.push(line);
        }
    }
    Ok(bytes)
}

/// Evaluates a chunk on `threads` threads; results in input order.
fn evaluate_chunk(
    contract: &Contract,
    channel: Option<&str>,
    lines: &[String],
    threads: usize,
) -> (Vec<u8>, bool) {
    let per_thread = lines.len().div_ceil(threads);
    let parts: Vec<(Vec<u8>, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(per_thread.max(1))
            .map(|part| scope.spawn(move || evaluate_lines(contract, channel, part)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| (Vec::new(), false))).collect()
    });
    let valid = parts.iter().all(|(_, v)| *v);
    (parts.into_iter().flat_map(|(bytes, _)| bytes).collect(), valid)
}

fn evaluate_lines(contract: &Contract, channel: Option<&str>, lines: &[String]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(lines.len() * 256);
    let mut valid = true;
    for line in lines {
        match contract.request_from_input(line.trim_end(), channel) {
            Ok(request) => match contract.evaluate(&request) {
                Ok(result) => result.write_json(&mut out),
                Err(e) => {
                    out.extend_from_slice(&e.to_json());
                    valid = false;
                }
            },
            Err(invalid) => {
                out.extend_from_slice(&invalid.to_json());
                valid = false;
            }
        }
        out.push(b'\n');
    }
    (out, valid)
}
