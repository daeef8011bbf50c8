//! Batch evaluation: `rulec eval TARGET --input FILE --channel C`.
//!
//! Each line of the input is one bare input record. Lines are read in
//! chunks, each chunk split among worker threads, and results written in
//! input order before the next chunk is read: memory stays flat whatever
//! the input size. A progress bar goes to stderr when it is a terminal.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use runtime::{Contract, InvalidInput};

use crate::targets::Loaded;
use crate::{Failure, Outcome};

/// Lines per chunk: enough to keep every thread busy, little memory.
const CHUNK_LINES: usize = 16 * 1024;

/// How batch input records are encoded.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum InputFormat {
    /// One JSON object per line.
    Ndjson,
    /// Apache Arrow IPC (not supported yet).
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
    if format == InputFormat::Arrow {
        return Err(Failure::Usage(
            "Arrow IPC input is not supported yet: convert the records to NDJSON".into(),
        ));
    }
    let channel = settings.channel.as_deref();
    contract.context(channel, None, None).map_err(|e| {
        let messages: Vec<String> = e.details.iter().map(|d| d.message.clone()).collect();
        Failure::Usage(format!("--channel: {}", messages.join("; ")))
    })?;
    let file = File::open(&settings.input)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", settings.input.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = BufReader::with_capacity(1 << 20, file);
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
    let progress =
        indicatif::ProgressBar::with_draw_target(Some(size), indicatif::ProgressDrawTarget::stderr());
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut all_valid = true;
    let mut lines: Vec<String> = Vec::with_capacity(CHUNK_LINES);
    loop {
        let read = read_chunk(&mut reader, &mut lines)
            .map_err(|e| Failure::Usage(format!("cannot read input: {e}")))?;
        if lines.is_empty() {
            break;
        }
        let (output, valid) = evaluate_chunk(contract, channel, &lines, threads);
        all_valid &= valid;
        writer.write_all(&output).map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
        progress.inc(read as u64);
    }
    writer.flush().map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
    progress.finish_and_clear();
    if all_valid { Ok(()) } else { Err(Failure::Reported) }
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
                    out.extend_from_slice(&InvalidInput::one("", e.to_string()).to_json());
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
